//! `tool_exec`'s engine, compiled to WebAssembly: QuickJS-NG and the loop that drives one run.
//!
//! Why WebAssembly: this module can touch nothing but its own linear memory and the functions
//! the sandbox process hands it (below), so a memory-safety bug in QuickJS stays inside that
//! memory on every OS. The process's wasmtime host pre-empts it at any instruction (epoch
//! interruption), caps its memory by the size of the linear memory, and turns a stack overflow
//! into a trap the code cannot catch. A fresh instance serves each run and is dropped after it.
//!
//! The host calls `toolreg_seed`, `toolreg_alloc` and `toolreg_run` once per run (after
//! `toolreg_prepare`, done while the process waits for work, or a copy of an instance that did). Everything the run says leaves through `send`;
//! answers to tool calls arrive through `wait` and `take`.

#[path = "../../../src/exec/protocol.rs"]
#[allow(dead_code)]
mod protocol;

mod sandbox;

use std::cell::{Cell, RefCell};

/// What the sandbox process gives this module: nothing else is reachable from here.
mod host {
    #[link(wasm_import_module = "toolreg")]
    unsafe extern "C" {
        /// Writes a frame to the addon. The process checks it before it passes it on.
        pub fn send(kind: u32, ptr: *const u8, len: usize);
        /// Blocks until the addon answers a tool call and returns the answer's length. The
        /// process tells the addon the run is idle while it blocks here; a stop traps.
        pub fn wait() -> usize;
        /// Copies the answer `wait` announced to `ptr`.
        pub fn take(ptr: *mut u8);
        /// An allocation failed: the host ends the run at its memory limit (this traps).
        pub fn out_of_memory();
    }
}

/// Ends the run at its memory limit: called by the engine's allocator on any allocation it
/// cannot make, so no failed allocation is ever an exception the code could catch.
pub(crate) fn out_of_memory() -> ! {
    // SAFETY: an import without arguments; the host traps, so it never returns.
    unsafe { host::out_of_memory() }
    unreachable!("the host ends the run when an allocation fails")
}

/// Sends a frame whose payload is `parts` joined.
pub(crate) fn send(kind: u8, parts: &[&[u8]]) {
    let payload = parts.concat();
    // SAFETY: the host reads `len` bytes at `ptr`, which this slice owns for the call.
    unsafe { host::send(u32::from(kind), payload.as_ptr(), payload.len()) }
}

/// Waits for the next answer to a tool call, as its `ANSWER` payload.
pub(crate) fn wait_answer() -> Vec<u8> {
    // SAFETY: the host writes exactly the announced length into the buffer.
    unsafe {
        let len = host::wait();
        let mut buffer = vec![0u8; len];
        host::take(buffer.as_mut_ptr());
        buffer
    }
}

thread_local! {
    static PREPARED: RefCell<Option<sandbox::Engine>> = const { RefCell::new(None) };
    static SEED: Cell<[u32; 4]> = const { Cell::new([0; 4]) };
}

/// The run's seed for `Math.random`. Prepared engines are copies of one (the process restores a
/// snapshot of a prepared instance), so the engine's own generator would repeat across runs;
/// the prelude replaces it with one seeded here, per run, by the process.
#[unsafe(no_mangle)]
pub extern "C" fn toolreg_seed(a: u32, b: u32, c: u32, d: u32) {
    SEED.with(|seed| seed.set([a, b, c, d]));
}

pub(crate) fn seed() -> [u32; 4] {
    SEED.with(Cell::get)
}

/// Builds the run's engine before the run arrives, so its cost is not part of the run.
#[unsafe(no_mangle)]
pub extern "C" fn toolreg_prepare() -> u32 {
    match sandbox::Engine::new() {
        Ok(engine) => {
            PREPARED.with(|p| *p.borrow_mut() = Some(engine));
            0
        }
        Err(_) => 1,
    }
}

/// A buffer of `len` bytes for the run request; `toolreg_run` takes it back.
#[unsafe(no_mangle)]
pub extern "C" fn toolreg_alloc(len: usize) -> *mut u8 {
    let mut buffer = std::mem::ManuallyDrop::new(vec![0u8; len]);
    buffer.as_mut_ptr()
}

/// Runs the request at `ptr` (a `RunRequest` as JSON) to its end and sends `DONE`.
///
/// # Safety
/// `ptr` and `len` come from one `toolreg_alloc`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn toolreg_run(ptr: *mut u8, len: usize) {
    // SAFETY: the caller passes back what toolreg_alloc gave it.
    let request = unsafe { Vec::from_raw_parts(ptr, len, len) };
    let end = match serde_json::from_slice::<protocol::RunRequest>(&request) {
        Ok(request) => {
            let engine = PREPARED.with(|p| p.borrow_mut().take());
            match engine.map_or_else(sandbox::Engine::new, Ok) {
                Ok(engine) => {
                    let end = sandbox::run(&engine, request);
                    // Not freed: the host drops the whole instance after the run, at no cost
                    // to this run's clock (freeing a large heap here took tens of ms).
                    std::mem::forget(engine);
                    end
                }
                Err(e) => protocol::RunEnd::Engine {
                    message: e.to_string(),
                },
            }
        }
        Err(e) => protocol::RunEnd::Engine {
            message: format!("bad run request: {e}"),
        },
    };
    send(protocol::DONE, &[&protocol::encode_done(&end)]);
}
