//! The stack cap. QuickJS's own stack check throws a `RangeError` the code can catch, so it is
//! switched off; instead the engine thread's stack ends in a large inaccessible region, and
//! touching it ends the process with [`EXIT_STACK`]. Every path counts the same way: deep
//! recursion, deep JSON, the parser, regular expressions.
//!
//! The region is larger than any single frame the engine can push (a function with 65,535
//! locals and arguments asks for about 3 MiB at once), so no frame can step over it. On Windows
//! the compiler probes every page of a large frame and the system ends a thread that overflows
//! its stack with `STATUS_STACK_OVERFLOW`, which the addon reads the same way.

/// Inaccessible bytes below the usable stack.
#[cfg(unix)]
const GUARD_BYTES: usize = 8 << 20;
/// Thread-local storage and the thread's own frames above the engine's.
const HEADROOM: usize = 1 << 20;

/// The stack size to give an engine thread whose code may use `max_stack` bytes.
pub fn thread_stack_size(max_stack: u64) -> usize {
    let max_stack = usize::try_from(max_stack).unwrap_or(usize::MAX / 4);
    #[cfg(unix)]
    return max_stack + GUARD_BYTES + HEADROOM;
    #[cfg(not(unix))]
    return max_stack + HEADROOM;
}

/// Writes `message` to stderr and ends the process with `code`, from any thread or signal
/// handler: no allocation, no lock, no destructor.
pub fn exit_now(code: i32, message: &[u8]) -> ! {
    #[cfg(unix)]
    unsafe {
        libc::write(2, message.as_ptr().cast(), message.len());
        libc::_exit(code)
    }
    #[cfg(not(unix))]
    {
        use std::io::Write;
        let _ = std::io::stderr().write_all(message);
        std::process::exit(code)
    }
}

#[cfg(unix)]
pub use unix::{StackGuard, install_handler};

#[cfg(unix)]
mod unix {
    use std::io;
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::{GUARD_BYTES, exit_now};
    use crate::protocol::EXIT_STACK;

    /// The guarded region of the engine thread, `[GUARD_LOW, GUARD_HIGH)`; empty when none.
    static GUARD_LOW: AtomicUsize = AtomicUsize::new(0);
    static GUARD_HIGH: AtomicUsize = AtomicUsize::new(0);
    /// Room for the fault handler, which cannot run on the stack that just ran out.
    const SIGNAL_STACK_BYTES: usize = 64 * 1024;

    fn page_size() -> usize {
        usize::try_from(unsafe { libc::sysconf(libc::_SC_PAGESIZE) }).unwrap_or(4096)
    }

    /// The guard of the calling thread's stack; dropping it makes the region usable again (the
    /// C library may hand the stack to another thread later).
    pub struct StackGuard {
        low: usize,
    }

    impl StackGuard {
        /// Guards the calling thread's stack `max_stack` bytes below the caller's frame. Call it
        /// first thing on a thread spawned with [`super::thread_stack_size`].
        pub fn install(max_stack: u64) -> io::Result<StackGuard> {
            let page = page_size();
            let marker = 0u8;
            let here = std::ptr::addr_of!(marker) as usize;
            let max_stack = usize::try_from(max_stack).unwrap_or(usize::MAX);
            let high = here.saturating_sub(max_stack) & !(page - 1);
            let low = high
                .checked_sub(GUARD_BYTES)
                .ok_or_else(|| io::Error::other("the stack is too small for its guard"))?;
            if unsafe { libc::mprotect(low as *mut _, GUARD_BYTES, libc::PROT_NONE) } != 0 {
                return Err(io::Error::last_os_error());
            }
            GUARD_LOW.store(low, Ordering::SeqCst);
            GUARD_HIGH.store(high, Ordering::SeqCst);
            alternate_signal_stack()?;
            Ok(StackGuard { low })
        }
    }

    impl Drop for StackGuard {
        fn drop(&mut self) {
            GUARD_HIGH.store(0, Ordering::SeqCst);
            GUARD_LOW.store(0, Ordering::SeqCst);
            unsafe {
                libc::mprotect(
                    self.low as *mut _,
                    GUARD_BYTES,
                    libc::PROT_READ | libc::PROT_WRITE,
                )
            };
        }
    }

    fn alternate_signal_stack() -> io::Result<()> {
        // Lives as long as the thread may fault; one per engine thread, so leaking it is bounded.
        let memory: &'static mut [u8] = Box::leak(vec![0u8; SIGNAL_STACK_BYTES].into_boxed_slice());
        let stack = libc::stack_t {
            ss_sp: memory.as_mut_ptr().cast(),
            ss_flags: 0,
            ss_size: SIGNAL_STACK_BYTES,
        };
        if unsafe { libc::sigaltstack(&stack, std::ptr::null_mut()) } != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }

    #[cfg(any(target_os = "linux", target_os = "android"))]
    unsafe fn fault_address(info: *const libc::siginfo_t) -> usize {
        unsafe { (*info).si_addr() as usize }
    }

    #[cfg(not(any(target_os = "linux", target_os = "android")))]
    unsafe fn fault_address(info: *const libc::siginfo_t) -> usize {
        unsafe { (*info).si_addr as usize }
    }

    extern "C" fn on_fault(signal: libc::c_int, info: *mut libc::siginfo_t, _: *mut libc::c_void) {
        let address = unsafe { fault_address(info) };
        let low = GUARD_LOW.load(Ordering::SeqCst);
        let high = GUARD_HIGH.load(Ordering::SeqCst);
        if low <= address && address < high {
            exit_now(EXIT_STACK, b"toolreg-exec: stack limit reached\n");
        }
        // Not the guard: a real fault. Returning re-runs the access under the default action,
        // which ends the process by this signal.
        unsafe { libc::signal(signal, libc::SIG_DFL) };
    }

    /// Routes segmentation faults (and bus errors, as macOS reports some guard hits) to the
    /// guard check. Call once, before any engine thread starts.
    pub fn install_handler() {
        for signal in [libc::SIGSEGV, libc::SIGBUS] {
            unsafe {
                let mut action: libc::sigaction = std::mem::zeroed();
                action.sa_sigaction = on_fault as *const () as usize;
                action.sa_flags = libc::SA_SIGINFO | libc::SA_ONSTACK;
                libc::sigemptyset(&mut action.sa_mask);
                libc::sigaction(signal, &action, std::ptr::null_mut());
            }
        }
    }
}

/// Elsewhere the system's own guard page and stack probes end the process (see the module
/// comment), so there is nothing to install.
#[cfg(not(unix))]
pub struct StackGuard;

#[cfg(not(unix))]
impl StackGuard {
    pub fn install(_max_stack: u64) -> std::io::Result<StackGuard> {
        Ok(StackGuard)
    }
}

#[cfg(not(unix))]
pub fn install_handler() {}
