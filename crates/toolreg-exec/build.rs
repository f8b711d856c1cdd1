//! Builds the guest (crates/exec-guest: QuickJS and the run driver) for wasm32-unknown-unknown
//! and compiles it ahead of time, with Cranelift, to native code for the target this process
//! is built for. The result is embedded in the executable, so a user's machine needs no
//! compiler and the sandbox starts without compiling anything.
//!
//! Needs: the wasm32-unknown-unknown Rust target, and clang and llvm-ar that target WebAssembly
//! (QuickJS is C). `node scripts/exec-toolchain.mjs` installs them; TOOLREG_WASM_CC and
//! TOOLREG_WASM_AR name others.

use std::env;
use std::path::{Path, PathBuf};
use std::process::Command;

#[path = "src/engine_config.rs"]
mod engine_config;

const GUEST_TARGET: &str = "wasm32-unknown-unknown";

fn main() {
    let manifest = PathBuf::from(env::var("CARGO_MANIFEST_DIR").unwrap());
    let root = manifest.join("../..");
    let guest = root.join("crates/exec-guest");
    for input in [
        "crates/exec-guest/src",
        "crates/exec-guest/Cargo.toml",
        "crates/exec-guest/Cargo.lock",
        "crates/exec-guest/.cargo/config.toml",
        "src/exec/protocol.rs",
    ] {
        println!("cargo:rerun-if-changed={}", root.join(input).display());
    }
    println!("cargo:rerun-if-env-changed=TOOLREG_WASM_CC");
    println!("cargo:rerun-if-env-changed=TOOLREG_WASM_AR");

    let wasm = build_guest(&guest, &root.join("target/exec-guest"));
    let target = env::var("TARGET").unwrap();
    let mut config = engine_config::config();
    config
        .target(&target)
        .unwrap_or_else(|e| panic!("wasmtime cannot compile for {target}: {e}"));
    config.cranelift_opt_level(wasmtime::OptLevel::Speed);
    let engine = wasmtime::Engine::new(&config).expect("a wasmtime engine for the target");
    let compiled = engine
        .precompile_module(&std::fs::read(&wasm).expect("the guest module"))
        .expect("the guest module compiles");
    let out = PathBuf::from(env::var("OUT_DIR").unwrap()).join("guest.cwasm");
    std::fs::write(&out, compiled).expect("write the compiled guest");
}

/// Runs cargo for the guest in a target folder of its own (so the outer build's lock is not
/// needed) with an environment cleared of the outer build's settings.
fn build_guest(guest: &Path, target_dir: &Path) -> PathBuf {
    let cargo = env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    let cc = tool(
        "TOOLREG_WASM_CC",
        &["clang-19", "clang-20", "clang-18", "clang"],
    );
    let ar = tool(
        "TOOLREG_WASM_AR",
        &["llvm-ar-19", "llvm-ar-20", "llvm-ar-18", "llvm-ar"],
    );
    let mut command = Command::new(cargo);
    command
        .current_dir(guest)
        .args(["build", "--release", "--locked", "--target", GUEST_TARGET])
        .arg("--target-dir")
        .arg(target_dir)
        .env("CC_wasm32_unknown_unknown", cc)
        .env("AR_wasm32_unknown_unknown", ar);
    // The outer build's settings (its target, profile, flags, wrappers) are not the guest's;
    // the rest of the environment (PATH, the system's variables on Windows) stays.
    for (key, _) in env::vars_os() {
        let Some(key) = key.to_str() else { continue };
        let cargo_own = key.starts_with("CARGO_")
            && !(key == "CARGO_HOME"
                || key.starts_with("CARGO_REGISTRIES_")
                || key.starts_with("CARGO_NET_")
                || key.starts_with("CARGO_HTTP_"));
        let build_setting = matches!(
            key,
            "RUSTFLAGS"
                | "RUSTDOCFLAGS"
                | "RUSTC"
                | "RUSTDOC"
                | "RUSTC_WRAPPER"
                | "RUSTC_WORKSPACE_WRAPPER"
                | "RUSTC_LINKER"
                | "TARGET"
                | "HOST"
                | "OUT_DIR"
                | "PROFILE"
                | "OPT_LEVEL"
                | "DEBUG"
                | "NUM_JOBS"
                | "CC"
                | "AR"
                | "CFLAGS"
                | "CXXFLAGS"
        );
        if cargo_own || build_setting || key.starts_with("DEP_") {
            command.env_remove(key);
        }
    }
    let status = command
        .status()
        .unwrap_or_else(|e| panic!("cannot run cargo for the tool_exec guest: {e}"));
    assert!(
        status.success(),
        "building the tool_exec guest (crates/exec-guest) for {GUEST_TARGET} failed; run `node scripts/exec-toolchain.mjs` to install its toolchain"
    );
    target_dir.join(format!("{GUEST_TARGET}/release/toolreg_exec_guest.wasm"))
}

/// The first program of `names` on the PATH, or what `variable` names.
fn tool(variable: &str, names: &[&str]) -> String {
    if let Ok(explicit) = env::var(variable) {
        return explicit;
    }
    let path = env::var_os("PATH").unwrap_or_default();
    names
        .iter()
        .find(|name| env::split_paths(&path).any(|dir| dir.join(name).is_file()))
        .map(|name| (*name).to_owned())
        .unwrap_or_else(|| {
            panic!(
                "no {} for the tool_exec guest; run `node scripts/exec-toolchain.mjs` (or set {variable})",
                names.join(" or ")
            )
        })
}
