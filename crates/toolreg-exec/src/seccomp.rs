//! The third wall (Linux, x86-64 and arm64). The engine runs in WebAssembly and reaches nothing
//! but its memory and four host functions; a bug in wasmtime itself would run with the rights
//! of this process. So before any guest code runs, the process drops the system calls it never
//! needs: from then on it can only read its stdin, write its stdout and stderr, manage memory
//! and threads, handle the engine's traps, read clocks and random bytes, and exit. Opening a
//! file, a socket or a program fails with `EPERM`, whatever code asks; the filter cannot be
//! lifted, and children would inherit it.

#[cfg(all(
    target_os = "linux",
    any(target_arch = "x86_64", target_arch = "aarch64")
))]
pub use linux::restrict;

/// Elsewhere there is no such filter; the process boundary still holds.
#[cfg(not(all(
    target_os = "linux",
    any(target_arch = "x86_64", target_arch = "aarch64")
)))]
pub fn restrict() -> std::io::Result<()> {
    Ok(())
}

#[cfg(all(
    target_os = "linux",
    any(target_arch = "x86_64", target_arch = "aarch64")
))]
mod linux {
    use std::io;

    use libc::{c_long, sock_filter, sock_fprog};

    // Classic BPF, as the kernel's seccomp filters take it.
    const LD_W_ABS: u16 = 0x20; // BPF_LD | BPF_W | BPF_ABS
    const JEQ_K: u16 = 0x15; // BPF_JMP | BPF_JEQ | BPF_K
    const RET_K: u16 = 0x06; // BPF_RET | BPF_K

    // Offsets in `struct seccomp_data`: the call's number, the ABI, the first argument's low word.
    const NR: u32 = 0;
    const ARCH: u32 = 4;
    const ARG0: u32 = 16;

    #[cfg(target_arch = "x86_64")]
    const AUDIT_ARCH: u32 = 0xC000_003E;
    #[cfg(target_arch = "aarch64")]
    const AUDIT_ARCH: u32 = 0xC000_00B7;

    const ALLOW: u32 = libc::SECCOMP_RET_ALLOW;
    const DENY: u32 = libc::SECCOMP_RET_ERRNO | (libc::EPERM as u32 & libc::SECCOMP_RET_DATA);
    const KILL: u32 = libc::SECCOMP_RET_KILL_PROCESS;

    /// Calls allowed whatever their arguments. Memory and threads: the allocator, thread stacks,
    /// the stack guard, the fault handler's stack. Time and randomness: `Date`, `Math.random`,
    /// hash seeds. The rest: waiting on locks, exiting.
    const ALWAYS: &[c_long] = &[
        libc::SYS_mmap,
        libc::SYS_munmap,
        libc::SYS_mremap,
        libc::SYS_mprotect,
        libc::SYS_madvise,
        libc::SYS_brk,
        libc::SYS_clone,
        libc::SYS_clone3,
        libc::SYS_set_robust_list,
        libc::SYS_rseq,
        libc::SYS_sigaltstack,
        libc::SYS_rt_sigprocmask,
        libc::SYS_rt_sigreturn,
        libc::SYS_futex,
        libc::SYS_sched_yield,
        libc::SYS_gettid,
        libc::SYS_getpid,
        libc::SYS_clock_gettime,
        libc::SYS_clock_nanosleep,
        libc::SYS_gettimeofday,
        libc::SYS_getrandom,
        libc::SYS_exit,
        libc::SYS_exit_group,
    ];

    fn statement(code: u16, jt: u8, jf: u8, k: u32) -> sock_filter {
        sock_filter { code, jt, jf, k }
    }

    /// Allows `nr` when its first argument is one of `values`; another call skips to the
    /// reload of the number at the end.
    fn with_first_argument(program: &mut Vec<sock_filter>, nr: c_long, values: &[u32]) {
        // Over the load, the value tests, and the deny and allow returns.
        let skip = u8::try_from(values.len() + 3).expect("few values");
        program.push(statement(JEQ_K, 0, skip, nr as u32));
        program.push(statement(LD_W_ABS, 0, 0, ARG0));
        for (i, value) in values.iter().enumerate() {
            let to_allow = u8::try_from(values.len() - i).expect("few values");
            program.push(statement(JEQ_K, to_allow, 0, *value));
        }
        program.push(statement(RET_K, 0, 0, DENY));
        program.push(statement(RET_K, 0, 0, ALLOW));
        // Back to the call's number for the next test.
        program.push(statement(LD_W_ABS, 0, 0, NR));
    }

    fn program() -> Vec<sock_filter> {
        let mut program = vec![
            statement(LD_W_ABS, 0, 0, ARCH),
            statement(JEQ_K, 1, 0, AUDIT_ARCH),
            // Another ABI (32-bit calls on x86-64) could name other calls by these numbers.
            statement(RET_K, 0, 0, KILL),
            statement(LD_W_ABS, 0, 0, NR),
        ];
        // Frames in on stdin, out on stdout, the last words of a fault on stderr.
        with_first_argument(&mut program, libc::SYS_read, &[0]);
        with_first_argument(&mut program, libc::SYS_write, &[1, 2]);
        // Threads name themselves.
        with_first_argument(&mut program, libc::SYS_prctl, &[libc::PR_SET_NAME as u32]);
        for nr in ALWAYS {
            program.push(statement(JEQ_K, 0, 1, *nr as u32));
            program.push(statement(RET_K, 0, 0, ALLOW));
        }
        program.push(statement(RET_K, 0, 0, DENY));
        program
    }

    /// Installs the filter on this process for good (threads started later inherit it).
    pub fn restrict() -> io::Result<()> {
        let program = program();
        let fprog = sock_fprog {
            len: u16::try_from(program.len()).expect("a short program"),
            filter: program.as_ptr().cast_mut(),
        };
        // SAFETY: plain prctl calls; the kernel copies the program before returning.
        unsafe {
            if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 {
                return Err(io::Error::last_os_error());
            }
            if libc::prctl(
                libc::PR_SET_SECCOMP,
                libc::SECCOMP_MODE_FILTER,
                &fprog as *const sock_fprog,
            ) != 0
            {
                return Err(io::Error::last_os_error());
            }
        }
        Ok(())
    }

    #[cfg(test)]
    mod tests {
        use std::process::Command;

        const PROBE: &str = "TOOLREG_EXEC_SECCOMP_PROBE";

        /// Runs in a child process (the same test binary): restricted, a file, a socket and a
        /// program are out of reach, while threads, memory, time and stdout still work.
        #[test]
        fn probe_in_a_child() {
            if std::env::var_os(PROBE).is_none() {
                return;
            }
            super::restrict().unwrap();
            let denied = |result: std::io::Result<()>| matches!(result, Err(e) if e.raw_os_error() == Some(libc::EPERM));
            let file = std::fs::File::open("/proc/self/status").map(drop);
            let socket = std::net::TcpListener::bind("127.0.0.1:0").map(drop);
            let program = Command::new("/bin/true").status().map(drop);
            let thread = std::thread::spawn(|| vec![7u8; 1 << 20].len())
                .join()
                .unwrap();
            let now = std::time::SystemTime::now();
            println!(
                "probe: file {} socket {} program {} thread {thread} time {}",
                denied(file),
                denied(socket),
                denied(program),
                now.elapsed().is_ok()
            );
        }

        #[test]
        fn the_filter_denies_files_sockets_and_programs_and_keeps_the_rest() {
            let exe = std::env::current_exe().unwrap();
            let output = Command::new(exe)
                .args([
                    "--exact",
                    "seccomp::linux::tests::probe_in_a_child",
                    "--nocapture",
                    "--test-threads=1",
                ])
                .env(PROBE, "1")
                .output()
                .unwrap();
            let stdout = String::from_utf8_lossy(&output.stdout);
            assert!(
                stdout
                    .contains("probe: file true socket true program true thread 1048576 time true"),
                "{stdout}\n{}",
                String::from_utf8_lossy(&output.stderr)
            );
        }
    }
}
