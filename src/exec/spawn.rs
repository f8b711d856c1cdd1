//! Starting a `toolreg-exec` process that gets nothing of the host but its three pipes: no
//! environment (API keys, tokens), the temp folder as working folder, and no descriptor or
//! handle the host left open.
//!
//! - Unix: `std::process::Command`; the process itself closes every descriptor above stderr
//!   before it does anything else (`close_inherited_descriptors` in `toolreg-exec`), so one the
//!   host opened without close-on-exec never reaches guest code.
//! - Windows: `CreateProcessW` with `PROC_THREAD_ATTRIBUTE_HANDLE_LIST` naming the three pipe
//!   ends, so the process inherits exactly those, whatever the host made inheritable (Rust's
//!   `Command` passes every inheritable handle of the host). `CREATE_NO_WINDOW`: a console
//!   program started by a windowless Electron main process would otherwise open a console.

use std::io::{PipeReader, PipeWriter};
use std::path::Path;
use std::process::ExitStatus;

/// A started process and our ends of its pipes.
pub(crate) struct Spawned {
    pub child: SandboxChild,
    pub stdin: PipeWriter,
    pub stdout: PipeReader,
    pub stderr: PipeReader,
}

#[cfg(not(windows))]
pub(crate) use unix::{SandboxChild, spawn};
#[cfg(windows)]
pub(crate) use windows::{SandboxChild, spawn};

#[cfg(not(windows))]
mod unix {
    use super::*;
    use std::os::fd::OwnedFd;
    use std::process::{Child, Command, Stdio};

    pub(crate) struct SandboxChild(Child);

    pub(crate) fn spawn(helper: &Path, working_dir: &Path) -> std::io::Result<Spawned> {
        let mut child = Command::new(helper)
            .env_clear()
            .current_dir(working_dir)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()?;
        let stdin = OwnedFd::from(child.stdin.take().expect("piped stdin"));
        let stdout = OwnedFd::from(child.stdout.take().expect("piped stdout"));
        let stderr = OwnedFd::from(child.stderr.take().expect("piped stderr"));
        Ok(Spawned {
            child: SandboxChild(child),
            stdin: stdin.into(),
            stdout: stdout.into(),
            stderr: stderr.into(),
        })
    }

    impl SandboxChild {
        pub(crate) fn kill(&mut self) {
            let _ = self.0.kill();
        }

        pub(crate) fn try_wait(&mut self) -> std::io::Result<Option<ExitStatus>> {
            self.0.try_wait()
        }

        pub(crate) fn wait(&mut self) -> std::io::Result<ExitStatus> {
            self.0.wait()
        }
    }
}

#[cfg(windows)]
mod windows {
    use super::*;
    use std::ffi::OsStr;
    use std::io;
    use std::os::windows::ffi::OsStrExt;
    use std::os::windows::io::{AsRawHandle, FromRawHandle, OwnedHandle};
    use std::os::windows::process::ExitStatusExt;
    use windows_sys::Win32::Foundation::{
        HANDLE, HANDLE_FLAG_INHERIT, SetHandleInformation, WAIT_OBJECT_0, WAIT_TIMEOUT,
    };
    use windows_sys::Win32::System::Pipes::CreatePipe;
    use windows_sys::Win32::System::Threading::{
        CREATE_NO_WINDOW, CREATE_UNICODE_ENVIRONMENT, CreateProcessW,
        DeleteProcThreadAttributeList, EXTENDED_STARTUPINFO_PRESENT, GetExitCodeProcess, INFINITE,
        InitializeProcThreadAttributeList, LPPROC_THREAD_ATTRIBUTE_LIST,
        PROC_THREAD_ATTRIBUTE_HANDLE_LIST, PROCESS_INFORMATION, STARTF_USESTDHANDLES,
        STARTUPINFOEXW, TerminateProcess, UpdateProcThreadAttribute, WaitForSingleObject,
    };

    pub(crate) struct SandboxChild {
        process: OwnedHandle,
    }

    impl SandboxChild {
        /// The process's handle, for tests that look into it.
        #[cfg(test)]
        pub(crate) fn handle(&self) -> HANDLE {
            self.process.as_raw_handle()
        }

        pub(crate) fn kill(&mut self) {
            // SAFETY: a process handle we own; terminating an exited process is harmless.
            unsafe { TerminateProcess(self.process.as_raw_handle(), 1) };
        }

        pub(crate) fn try_wait(&mut self) -> io::Result<Option<ExitStatus>> {
            self.wait_for(0)
        }

        pub(crate) fn wait(&mut self) -> io::Result<ExitStatus> {
            Ok(self
                .wait_for(INFINITE)?
                .expect("an infinite wait ends with the process"))
        }

        fn wait_for(&mut self, millis: u32) -> io::Result<Option<ExitStatus>> {
            let handle = self.process.as_raw_handle();
            // SAFETY: a process handle we own.
            match unsafe { WaitForSingleObject(handle, millis) } {
                WAIT_OBJECT_0 => {
                    let mut code = 0u32;
                    // SAFETY: as above; `code` is a valid out pointer.
                    if unsafe { GetExitCodeProcess(handle, &mut code) } == 0 {
                        return Err(io::Error::last_os_error());
                    }
                    Ok(Some(ExitStatus::from_raw(code)))
                }
                WAIT_TIMEOUT => Ok(None),
                _ => Err(io::Error::last_os_error()),
            }
        }
    }

    /// An anonymous pipe, both ends not inheritable: (read end, write end).
    fn pipe() -> io::Result<(OwnedHandle, OwnedHandle)> {
        let mut read: HANDLE = std::ptr::null_mut();
        let mut write: HANDLE = std::ptr::null_mut();
        // SAFETY: valid out pointers; no security attributes, so neither end is inheritable.
        if unsafe { CreatePipe(&mut read, &mut write, std::ptr::null(), 0) } == 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: CreatePipe succeeded; each handle is ours alone.
        Ok(unsafe {
            (
                OwnedHandle::from_raw_handle(read),
                OwnedHandle::from_raw_handle(write),
            )
        })
    }

    fn wide(text: &OsStr) -> Vec<u16> {
        text.encode_wide().chain(Some(0)).collect()
    }

    /// A process-thread attribute list holding one handle list; deleted when dropped.
    struct HandleList {
        /// `usize`s, so the list is pointer-aligned as Windows expects.
        buffer: Vec<usize>,
    }

    impl HandleList {
        fn new(handles: &[HANDLE]) -> io::Result<HandleList> {
            let mut bytes = 0usize;
            // SAFETY: the documented size query: a null list and a valid out pointer.
            unsafe { InitializeProcThreadAttributeList(std::ptr::null_mut(), 1, 0, &mut bytes) };
            let mut list = HandleList {
                buffer: vec![0; bytes.div_ceil(size_of::<usize>())],
            };
            // SAFETY: the buffer has the size Windows asked for.
            if unsafe { InitializeProcThreadAttributeList(list.raw(), 1, 0, &mut bytes) } == 0 {
                // Nothing was initialised: forget the buffer without deleting a list.
                std::mem::forget(list);
                return Err(io::Error::last_os_error());
            }
            // SAFETY: `handles` outlives the list's use (CreateProcessW runs while the caller
            // holds both); the size is the slice's in bytes.
            let updated = unsafe {
                UpdateProcThreadAttribute(
                    list.raw(),
                    0,
                    PROC_THREAD_ATTRIBUTE_HANDLE_LIST as usize,
                    handles.as_ptr().cast(),
                    size_of_val(handles),
                    std::ptr::null_mut(),
                    std::ptr::null(),
                )
            };
            if updated == 0 {
                return Err(io::Error::last_os_error());
            }
            Ok(list)
        }

        fn raw(&mut self) -> LPPROC_THREAD_ATTRIBUTE_LIST {
            self.buffer.as_mut_ptr().cast()
        }
    }

    impl Drop for HandleList {
        fn drop(&mut self) {
            // SAFETY: initialised in `new` (a failed initialisation is forgotten, not dropped).
            unsafe { DeleteProcThreadAttributeList(self.raw()) };
        }
    }

    fn make_inheritable(handle: &OwnedHandle) -> io::Result<()> {
        // SAFETY: a handle we own.
        let set = unsafe {
            SetHandleInformation(
                handle.as_raw_handle(),
                HANDLE_FLAG_INHERIT,
                HANDLE_FLAG_INHERIT,
            )
        };
        if set == 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }

    pub(crate) fn spawn(helper: &Path, working_dir: &Path) -> io::Result<Spawned> {
        let (child_stdin, stdin) = pipe()?;
        let (stdout, child_stdout) = pipe()?;
        let (stderr, child_stderr) = pipe()?;
        // A handle list may name only inheritable handles. The child's ends are made so just
        // before the start and closed right after it: another thread of the host starting a
        // program in between, with inheritance and without a list, could take a copy (that
        // program would hold a pipe end open, nothing more).
        let child_ends = [&child_stdin, &child_stdout, &child_stderr];
        for end in child_ends {
            make_inheritable(end)?;
        }
        let handles = child_ends.map(|h| h.as_raw_handle());
        let mut list = HandleList::new(&handles)?;

        // SAFETY: STARTUPINFOEXW is plain data; zero is its documented starting state.
        let mut startup: STARTUPINFOEXW = unsafe { std::mem::zeroed() };
        startup.StartupInfo.cb = size_of::<STARTUPINFOEXW>() as u32;
        startup.StartupInfo.dwFlags = STARTF_USESTDHANDLES;
        startup.StartupInfo.hStdInput = handles[0];
        startup.StartupInfo.hStdOutput = handles[1];
        startup.StartupInfo.hStdError = handles[2];
        startup.lpAttributeList = list.raw();

        let application = wide(helper.as_os_str());
        // The command line is the quoted program name alone (Windows paths hold no quotes).
        let mut command_line = wide(&{
            let mut line = std::ffi::OsString::from("\"");
            line.push(helper.as_os_str());
            line.push("\"");
            line
        });
        // An empty environment block: two terminating zeros.
        let environment = [0u16; 2];
        let directory = wide(working_dir.as_os_str());
        // SAFETY: PROCESS_INFORMATION is plain data, filled by CreateProcessW.
        let mut info: PROCESS_INFORMATION = unsafe { std::mem::zeroed() };
        // SAFETY: every pointer is to a live, NUL-terminated buffer or struct above; the handle
        // list names open handles held until after the call.
        let started = unsafe {
            CreateProcessW(
                application.as_ptr(),
                command_line.as_mut_ptr(),
                std::ptr::null(),
                std::ptr::null(),
                1,
                EXTENDED_STARTUPINFO_PRESENT | CREATE_UNICODE_ENVIRONMENT | CREATE_NO_WINDOW,
                environment.as_ptr().cast(),
                directory.as_ptr(),
                &startup.StartupInfo,
                &mut info,
            )
        };
        let error = io::Error::last_os_error();
        drop(list);
        drop((child_stdin, child_stdout, child_stderr));
        if started == 0 {
            return Err(error);
        }
        // SAFETY: CreateProcessW returned these handles to us; the thread's is not needed.
        let (process, _thread) = unsafe {
            (
                OwnedHandle::from_raw_handle(info.hProcess),
                OwnedHandle::from_raw_handle(info.hThread),
            )
        };
        Ok(Spawned {
            child: SandboxChild { process },
            stdin: stdin.into(),
            stdout: stdout.into(),
            stderr: stderr.into(),
        })
    }
}
