//! The wasmtime settings the guest module is compiled with (build.rs) and run with (main.rs).
//! One function for both: a module compiled under other settings would not load.

/// The guest's stack region, the first bytes of its linear memory. Equal to the
/// `-zstack-size` in crates/exec-guest/.cargo/config.toml, and to the largest
/// `maxStackSizeBytes` a run may ask for.
#[allow(dead_code)]
pub const STACK_REGION_BYTES: u64 = 8 * 1024 * 1024;

/// The native stack compiled guest code may use, whatever the run's `maxStackSizeBytes` (which
/// bounds the guest's own stack region, where QuickJS keeps each call's values). Recursion in
/// the engine's C code (JSON, the parser, regular expressions) is bounded by this; deeper also
/// means slower there (JSON.stringify checks each level against all those above it), so it is
/// no larger than what the old native engine had.
pub const NATIVE_STACK_BYTES: usize = 4 * 1024 * 1024;

/// The native stack of a thread that runs guest code: the guest's allowance plus room for the
/// host's own frames (wasmtime, the calls into this process).
#[allow(dead_code)]
pub const ENGINE_THREAD_STACK_BYTES: usize = NATIVE_STACK_BYTES + (4 << 20);

pub fn config() -> wasmtime::Config {
    let mut config = wasmtime::Config::new();
    // A stop from the addon bumps the engine's epoch; compiled code checks it at every loop
    // head and function entry, QuickJS's C built-ins included.
    config.epoch_interruption(true);
    config.max_wasm_stack(NATIVE_STACK_BYTES);
    // Never used (no async calls), but wasmtime requires it to hold the wasm stack.
    config.async_stack_size(NATIVE_STACK_BYTES + (1 << 20));
    config.signals_based_traps(true);
    // Copy-on-write memory images need a memfd per instance, a system call the sandbox's filter
    // denies (and the guest's static data is small enough to copy).
    config.memory_init_cow(false);
    // Traps are reported by kind only; walking a deep stack for a backtrace took seconds.
    config.wasm_backtrace_max_frames(None);
    config
}
