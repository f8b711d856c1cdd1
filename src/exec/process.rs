//! One `toolreg-exec` process: started, read, written and killed from here. Its frames arrive
//! as [`Event`]s on the channel of the run it serves. Frames to it never block the run's driver
//! (a process that stops reading must not stall the clock): on Unix the driver writes what the
//! pipe takes at once and leaves the rest to a writer thread; elsewhere the writer thread
//! writes everything.

use std::collections::VecDeque;
use std::io::{BufReader, PipeReader, PipeWriter, Read, Write};
use std::path::Path;
use std::process::ExitStatus;
use std::sync::mpsc::{self, Sender};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use super::bridge::Event;
use super::protocol::{self, FrameCaps, PROTOCOL_VERSION, READY};
use super::spawn::{SandboxChild, Spawned};

/// How long a new process may take to say it is ready.
const START_TIMEOUT: Duration = Duration::from_secs(10);
/// How much of what a process writes to stderr is kept, for the error when it dies.
const STDERR_TAIL_BYTES: usize = 2048;

/// Where the reader sends the process's frames: the current run's channel and its caps.
#[derive(Default)]
struct Route {
    events: Option<Sender<Event>>,
    caps: FrameCaps,
    /// The reader has stopped: the process is gone (or broke the protocol).
    closed: bool,
}

/// Bytes on their way to the process's stdin.
struct Outgoing {
    pipe: PipeWriter,
    /// What the pipe did not take yet, in order; the writer thread drains it.
    backlog: VecDeque<u8>,
    /// The pipe broke or the sandbox was dropped: nothing more is written.
    closed: bool,
}

struct Writer {
    outgoing: Mutex<Outgoing>,
    pending: Condvar,
}

impl Writer {
    fn new(pipe: PipeWriter) -> Arc<Writer> {
        #[cfg(unix)]
        set_nonblocking(&pipe);
        Arc::new(Writer {
            outgoing: Mutex::new(Outgoing {
                pipe,
                backlog: VecDeque::new(),
                closed: false,
            }),
            pending: Condvar::new(),
        })
    }

    fn send(&self, frame: &[u8]) {
        let mut out = lock(&self.outgoing);
        if out.closed {
            return;
        }
        let mut written = 0;
        // In order: only when nothing is waiting may the frame go straight into the pipe.
        if cfg!(unix) && out.backlog.is_empty() {
            written = write_available(&mut out, frame);
        }
        if written < frame.len() && !out.closed {
            out.backlog.extend(&frame[written..]);
            self.pending.notify_one();
        }
    }

    fn close(&self) {
        lock(&self.outgoing).closed = true;
        self.pending.notify_one();
    }

    /// The writer thread: drains the backlog whenever there is one, until closed.
    fn drain(&self) {
        let mut out = lock(&self.outgoing);
        loop {
            while out.backlog.is_empty() && !out.closed {
                out = self.pending.wait(out).unwrap_or_else(|p| p.into_inner());
            }
            if out.closed {
                return;
            }
            #[cfg(unix)]
            {
                let fd = std::os::fd::AsRawFd::as_raw_fd(&out.pipe);
                drop(out);
                wait_writable(fd);
                out = lock(&self.outgoing);
            }
            let chunk: Vec<u8> = out.backlog.iter().copied().take(64 * 1024).collect();
            let written = write_available(&mut out, &chunk);
            out.backlog.drain(..written);
        }
    }
}

/// Writes what the pipe takes without blocking (on Unix; elsewhere the write blocks, on the
/// writer thread only). A broken pipe closes the writer: the reader reports the process gone.
fn write_available(out: &mut Outgoing, bytes: &[u8]) -> usize {
    let mut written = 0;
    while written < bytes.len() {
        match out.pipe.write(&bytes[written..]) {
            Ok(0) => break,
            Ok(n) => written += n,
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => break,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => {
                out.closed = true;
                break;
            }
        }
    }
    written
}

#[cfg(unix)]
fn set_nonblocking(pipe: &PipeWriter) {
    let fd = std::os::fd::AsRawFd::as_raw_fd(pipe);
    // SAFETY: fcntl on a descriptor this process owns.
    unsafe {
        let flags = libc::fcntl(fd, libc::F_GETFL);
        libc::fcntl(fd, libc::F_SETFL, flags | libc::O_NONBLOCK);
    }
}

/// Waits until the pipe takes bytes again, or a second has passed (so a close is noticed even
/// if the process never reads again).
#[cfg(unix)]
fn wait_writable(fd: std::os::fd::RawFd) {
    let mut poll = libc::pollfd {
        fd,
        events: libc::POLLOUT,
        revents: 0,
    };
    // SAFETY: one valid pollfd.
    unsafe { libc::poll(&mut poll, 1, 1000) };
}

pub(crate) struct Sandbox {
    child: SandboxChild,
    writer: Arc<Writer>,
    route: Arc<Mutex<Route>>,
    stderr_tail: Arc<Mutex<Vec<u8>>>,
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|p| p.into_inner())
}

impl Sandbox {
    /// Starts a process and waits for its `READY`.
    pub(crate) fn start(helper: &Path) -> Result<Sandbox, String> {
        let Spawned {
            child,
            stdin,
            stdout,
            stderr,
        } = super::spawn::spawn(helper, &std::env::temp_dir()).map_err(|e| {
            format!(
                "cannot start the tool_exec sandbox process {}: {e}",
                helper.display()
            )
        })?;

        let writer = Writer::new(stdin);
        let draining = writer.clone();
        std::thread::Builder::new()
            .name("toolreg-exec-writer".to_owned())
            .spawn(move || draining.drain())
            .map_err(|e| e.to_string())?;

        let stderr_tail = Arc::new(Mutex::new(Vec::new()));
        let tail = stderr_tail.clone();
        std::thread::Builder::new()
            .name("toolreg-exec-stderr".to_owned())
            .spawn(move || keep_tail(stderr, &tail))
            .map_err(|e| e.to_string())?;

        let (ready_tx, ready) = mpsc::channel();
        let route = Arc::new(Mutex::new(Route {
            events: Some(ready_tx),
            ..Route::default()
        }));
        let reader_route = route.clone();
        std::thread::Builder::new()
            .name("toolreg-exec-reader".to_owned())
            .spawn(move || read_frames(stdout, &reader_route))
            .map_err(|e| e.to_string())?;

        let mut sandbox = Sandbox {
            child,
            writer,
            route,
            stderr_tail,
        };
        let answer = ready.recv_timeout(START_TIMEOUT);
        lock(&sandbox.route).events = None;
        let version = match answer {
            Ok(Event::Frame {
                kind: READY,
                payload,
            }) if payload.len() == 4 => u32::from_le_bytes(payload[..].try_into().unwrap()),
            Ok(_) => {
                sandbox.kill();
                return Err(format!(
                    "the tool_exec sandbox process {} did not start{}",
                    helper.display(),
                    sandbox.printed()
                ));
            }
            Err(_) => {
                sandbox.kill();
                return Err(format!(
                    "the tool_exec sandbox process {} did not answer within {} s",
                    helper.display(),
                    START_TIMEOUT.as_secs()
                ));
            }
        };
        if version != PROTOCOL_VERSION {
            sandbox.kill();
            return Err(format!(
                "the tool_exec sandbox process {} speaks protocol {version}, this addon {PROTOCOL_VERSION}: reinstall toolreg so both come from one build",
                helper.display()
            ));
        }
        Ok(sandbox)
    }

    /// Sends this process's frames to `events` from now on, within `caps`. A process that died
    /// while idle is reported at once.
    pub(crate) fn route_to(&self, events: Sender<Event>, caps: FrameCaps) {
        let mut route = lock(&self.route);
        if route.closed {
            let _ = events.send(Event::Gone);
        }
        route.events = Some(events);
        route.caps = caps;
    }

    /// False once the process is known to be gone.
    pub(crate) fn alive(&self) -> bool {
        !lock(&self.route).closed
    }

    /// Stops routing frames (the run is over; late ones are dropped).
    pub(crate) fn unroute(&self) {
        lock(&self.route).events = None;
    }

    pub(crate) fn send(&self, kind: u8, parts: &[&[u8]]) {
        let mut frame = Vec::new();
        // Writing into a Vec cannot fail.
        let _ = protocol::write_frame(&mut frame, kind, parts);
        self.writer.send(&frame);
    }

    pub(crate) fn kill(&mut self) {
        self.child.kill();
    }

    #[cfg(all(test, windows))]
    pub(crate) fn process_handle(&self) -> windows_sys::Win32::Foundation::HANDLE {
        self.child.handle()
    }

    /// The exit status of a process whose stdout closed: it is gone or about to be; one that
    /// closed stdout and lingers is killed.
    pub(crate) fn exit_status(&mut self) -> Option<ExitStatus> {
        let until = Instant::now() + Duration::from_millis(100);
        loop {
            match self.child.try_wait() {
                Ok(Some(status)) => return Some(status),
                Ok(None) if Instant::now() < until => std::thread::sleep(Duration::from_millis(1)),
                Ok(None) => {
                    self.kill();
                    return self.child.wait().ok();
                }
                Err(_) => return None,
            }
        }
    }

    /// Waits for a killed process, so it leaves no zombie behind.
    pub(crate) fn reap(mut self) {
        self.kill();
        let _ = self.child.wait();
    }

    /// What the process printed to stderr, for an error message (empty when nothing).
    pub(crate) fn printed(&self) -> String {
        // Give the stderr thread a moment to read what a dying process wrote last.
        std::thread::sleep(Duration::from_millis(5));
        let tail = lock(&self.stderr_tail);
        let text = String::from_utf8_lossy(&tail);
        let text = text.trim();
        if text.is_empty() {
            String::new()
        } else {
            format!("; it printed: {text}")
        }
    }
}

impl Drop for Sandbox {
    /// Closing stdin ends the process (it exits at the end of its input, even mid-run).
    fn drop(&mut self) {
        self.writer.close();
    }
}

fn keep_tail(mut stderr: impl Read, tail: &Mutex<Vec<u8>>) {
    let mut buffer = [0u8; 1024];
    while let Ok(n) = stderr.read(&mut buffer) {
        if n == 0 {
            break;
        }
        let mut tail = lock(tail);
        tail.extend_from_slice(&buffer[..n]);
        let excess = tail.len().saturating_sub(STDERR_TAIL_BYTES);
        tail.drain(..excess);
    }
}

/// Reads frames until the process closes stdout or passes a cap; either ends the reading.
fn read_frames(stdout: PipeReader, route: &Mutex<Route>) {
    let mut input = BufReader::new(stdout);
    loop {
        let header = protocol::read_header(&mut input);
        let (kind, len) = match header {
            Ok(Some(header)) => header,
            Ok(None) | Err(_) => break,
        };
        let cap = lock(route).caps.of(kind);
        if u64::from(len) > cap {
            let mut route = lock(route);
            route.closed = true;
            if let Some(events) = &route.events {
                let _ = events.send(Event::Oversize { kind, len });
            }
            return;
        }
        let Ok(payload) = protocol::read_payload(&mut input, len) else {
            break;
        };
        if let Some(events) = &lock(route).events {
            let _ = events.send(Event::Frame { kind, payload });
        }
    }
    let mut route = lock(route);
    route.closed = true;
    if let Some(events) = &route.events {
        let _ = events.send(Event::Gone);
    }
}
