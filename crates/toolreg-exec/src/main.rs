//! `toolreg-exec`: the process that `tool_exec` code runs in.
//!
//! The addon keeps a few of these warm and talks to each over its stdin and stdout (frames in
//! `src/exec/protocol.rs`). The code runs in QuickJS compiled to WebAssembly (crates/exec-guest),
//! one fresh wasmtime instance per run. So between the model's code and the user's files stand:
//!
//! 1. the WebAssembly instance: the engine reaches its own linear memory and the five functions
//!    below, nothing else, on every OS; its memory cap is the memory's size, its stack
//!    overflows trap, and a stop pre-empts it wherever it is (epoch interruption);
//! 2. this process: an empty environment and no handles but its three pipes; the addon can
//!    kill it at any time;
//! 3. on Linux (x86-64, arm64), a seccomp filter: no file, socket or program can be opened.
//!
//! The main thread reads frames and hands them to the engine thread; only the engine thread
//! writes frames.

#[path = "../../../src/exec/protocol.rs"]
#[allow(dead_code)]
mod protocol;

mod engine_config;
mod guest;
mod seccomp;

use std::io::{self, BufReader};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;

use protocol::{ANSWER, RUN, STOP};

/// What the main thread hands the engine thread: frames' payloads.
pub enum Inbound {
    Run(Vec<u8>),
    Answer(Vec<u8>),
    Stop,
}

/// Ends the process with `code` after writing `message` to stderr.
pub(crate) fn fail(message: &str) -> ! {
    eprintln!("toolreg-exec: {message}");
    std::process::exit(2)
}

fn main() {
    close_inherited_descriptors();
    // Loading the compiled module maps code; that happens before the filter, once.
    let runner = std::sync::Arc::new(guest::Runner::load().unwrap_or_else(|e| fail(&e)));
    // Before the first byte from the addon: no guest code ever runs in an unrestricted process.
    if let Err(e) = seccomp::restrict()
        && !refused_by_qemu_user(&e)
    {
        fail(&format!("cannot restrict the process's system calls: {e}"));
    }
    let stop = Arc::new(AtomicBool::new(false));
    let (inbox_tx, inbox) = mpsc::channel();
    let engine_stop = stop.clone();
    let engine = runner.engine().clone();
    std::thread::Builder::new()
        .name("toolreg-exec-engine".to_owned())
        .stack_size(engine_config::ENGINE_THREAD_STACK_BYTES)
        .spawn(move || guest::serve(runner, inbox, &engine_stop))
        .unwrap_or_else(|e| fail(&format!("cannot start the engine thread: {e}")));

    let mut input = BufReader::new(io::stdin());
    // The addon closing the pipe (or dying) ends the process, even mid-run.
    while let Ok(Some((kind, len))) = protocol::read_header(&mut input) {
        let Ok(payload) = protocol::read_payload(&mut input, len) else {
            break;
        };
        let inbound = match kind {
            RUN => {
                // A run is sent only when the last one is over: no earlier stop is meant for it.
                stop.store(false, Ordering::SeqCst);
                Inbound::Run(payload)
            }
            ANSWER => Inbound::Answer(payload),
            STOP => {
                // The flag first: a run that sets its deadline after the bump still sees it.
                stop.store(true, Ordering::SeqCst);
                engine.increment_epoch();
                Inbound::Stop
            }
            other => fail(&format!("unknown frame kind {other}")),
        };
        if inbox_tx.send(inbound).is_err() {
            break;
        }
    }
    std::process::exit(0)
}

/// Descriptors a parent left open without close-on-exec would be this process's to use; only
/// stdin, stdout and stderr are kept. (On Windows nothing else is inherited in the first place:
/// the addon starts the process with a handle list naming its three pipes, `src/exec/spawn.rs`.)
fn close_inherited_descriptors() {
    #[cfg(target_os = "linux")]
    // SAFETY: closes descriptors this process does not use; nothing holds them yet.
    unsafe {
        if libc::syscall(libc::SYS_close_range, 3u32, u32::MAX, 0u32) != 0 {
            close_each_from(3);
        }
    }
    #[cfg(target_os = "macos")]
    if close_listed_above_stderr() {
        return;
    }
    #[cfg(all(unix, not(target_os = "linux")))]
    close_each_from(3);
}

/// macOS has no `close_range`, and a loop up to `_SC_OPEN_MAX` (the soft limit) misses a
/// descriptor opened before the limit was lowered; the kernel's own list of this process's
/// descriptors misses none. False when the list cannot be read (the loop then runs).
#[cfg(target_os = "macos")]
fn close_listed_above_stderr() -> bool {
    let entry = size_of::<libc::proc_fdinfo>();
    // SAFETY: proc_pidinfo with a null buffer returns the size the list needs; then it fills a
    // buffer of the given size; close takes any descriptor number.
    unsafe {
        let pid = libc::getpid();
        let needed = libc::proc_pidinfo(pid, libc::PROC_PIDLISTFDS, 0, std::ptr::null_mut(), 0);
        if needed <= 0 {
            return false;
        }
        let mut list: Vec<libc::proc_fdinfo> = Vec::with_capacity(needed as usize / entry + 8);
        let bytes = (list.capacity() * entry) as i32;
        let filled = libc::proc_pidinfo(
            pid,
            libc::PROC_PIDLISTFDS,
            0,
            list.as_mut_ptr().cast(),
            bytes,
        );
        if filled <= 0 {
            return false;
        }
        list.set_len(filled as usize / entry);
        for descriptor in list.iter().filter(|d| d.proc_fd > 2) {
            libc::close(descriptor.proc_fd);
        }
    }
    true
}

#[cfg(unix)]
#[cfg_attr(target_os = "linux", allow(dead_code))]
fn close_each_from(first: i32) {
    // SAFETY: sysconf and close on descriptor numbers; closing an unused number is harmless.
    unsafe {
        let max = libc::sysconf(libc::_SC_OPEN_MAX);
        let max = if max <= 0 {
            65_536
        } else {
            max.min(1 << 20) as i32
        };
        for fd in first..max {
            libc::close(fd);
        }
    }
}

/// qemu-user, which runs the linux-arm64 build on an x86-64 machine in `npm run cross`, refuses
/// every seccomp filter a guest installs (`EINVAL`: the filter would also apply to qemu's own
/// system calls). Only there does the process go on without one: the cross script's wrapper
/// passes `TOOLREG_EXEC_UNDER_QEMU_USER` to the guest, and the addon starts this process with an
/// empty environment, so no setting of the host reaches it (whoever sets that wrapper as the
/// helper chooses the program anyway). Without the variable, any refusal ends the process.
fn refused_by_qemu_user(error: &io::Error) -> bool {
    error.kind() == io::ErrorKind::InvalidInput
        && std::env::var_os("TOOLREG_EXEC_UNDER_QEMU_USER").is_some()
}
