//! The child process behind a stdio server: spawned in its own process group with every stdio
//! stream piped, reaped by a dedicated task, stderr drained into a bounded ring buffer.
//!
//! Why not rmcp's `TokioChildProcess`: it kills only the direct child (an `npx`/shell wrapper
//! leaves its grandchild running), caps stdout lines at 16 MiB with no knob, and hides the
//! `Child`, so exit status and reaping could not be observed.

use std::collections::{HashMap, VecDeque};
use std::path::Path;
use std::pin::Pin;
use std::process::{ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt, ReadBuf};
use tokio::process::{ChildStdin, ChildStdout, Command};
use tokio::sync::{mpsc, watch};
use tokio::time::Instant;

/// Bytes of stderr kept per server (the tail; older output is dropped).
pub(crate) const STDERR_TAIL_BYTES: usize = 8 * 1024;

/// A bounded tail of a server's stderr. Shared by every connection of one server, so the output
/// of a process that crashed is still there after the reconnect.
#[derive(Debug, Default)]
pub(crate) struct StderrTail {
    buf: Mutex<VecDeque<u8>>,
}

impl StderrTail {
    pub(crate) fn push(&self, bytes: &[u8]) {
        let mut buf = self.buf.lock().unwrap_or_else(|e| e.into_inner());
        let bytes = &bytes[bytes.len().saturating_sub(STDERR_TAIL_BYTES)..];
        let overflow = (buf.len() + bytes.len()).saturating_sub(STDERR_TAIL_BYTES);
        buf.drain(..overflow);
        buf.extend(bytes);
    }

    /// The tail as text; a UTF-8 sequence cut by the ring's start is skipped, not mangled.
    pub(crate) fn text(&self) -> String {
        let buf = self.buf.lock().unwrap_or_else(|e| e.into_inner());
        let bytes: Vec<u8> = buf.iter().copied().collect();
        let start = bytes
            .iter()
            .take(3)
            .take_while(|b| (**b & 0xC0) == 0x80)
            .count();
        String::from_utf8_lossy(&bytes[start..]).into_owned()
    }

    /// The last `max` chars of the tail, for error messages.
    pub(crate) fn last_chars(&self, max: usize) -> String {
        let text = self.text();
        let trimmed = text.trim_end();
        let count = trimmed.chars().count();
        trimmed.chars().skip(count.saturating_sub(max)).collect()
    }
}

/// Characters of the first non-JSON stdout line kept for the error message.
const NOISE_SAMPLE_BYTES: usize = 120;

/// How long a stdio server may go on after its first line on stdout that cannot be JSON-RPC
/// before the connect gives it up, unless its MCP handshake completes meanwhile: a server that
/// prints a banner and then answers is served, one that only prints garbage costs this much
/// instead of the whole connect timeout.
pub(crate) const NOISE_GRACE: Duration = Duration::from_secs(2);

/// Lines a stdio server wrote on stdout before its first JSON-RPC message that cannot be one
/// (they do not start with `{` or `[`). rmcp skips such lines, so a server that writes only
/// those (a banner, logs on the wrong stream) would look like one that never answers; this
/// lets the connect give it up [`NOISE_GRACE`] after the first one and say what it saw.
/// Watching stops at the first JSON line, so the messages of a working server are never
/// scanned.
#[derive(Debug)]
pub(crate) struct StdoutNoise {
    done: AtomicBool,
    state: Mutex<NoiseState>,
    /// When the current process wrote its first such line.
    first_at: watch::Sender<Option<Instant>>,
}

impl Default for StdoutNoise {
    fn default() -> Self {
        StdoutNoise {
            done: AtomicBool::new(false),
            state: Mutex::default(),
            first_at: watch::Sender::new(None),
        }
    }
}

#[derive(Debug, Default)]
struct NoiseState {
    lines: usize,
    first: Vec<u8>,
    in_noise_line: bool,
}

impl StdoutNoise {
    /// A new process starts with a clean slate (the server may have been fixed and restarted).
    fn reset(&self) {
        *self.state.lock().unwrap_or_else(|e| e.into_inner()) = NoiseState::default();
        self.done.store(false, Ordering::Relaxed);
        self.first_at.send_replace(None);
    }

    fn scan(&self, bytes: &[u8]) {
        if self.done.load(Ordering::Relaxed) {
            return;
        }
        let mut st = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let mut at_line_start = !st.in_noise_line;
        for &b in bytes {
            if b == b'\n' {
                st.in_noise_line = false;
                at_line_start = true;
            } else if st.in_noise_line {
                if st.lines == 1 && st.first.len() < NOISE_SAMPLE_BYTES {
                    st.first.push(b);
                }
            } else if at_line_start && !b.is_ascii_whitespace() {
                if b == b'{' || b == b'[' {
                    self.done.store(true, Ordering::Relaxed);
                    return;
                }
                st.lines += 1;
                st.in_noise_line = true;
                at_line_start = false;
                if st.lines == 1 {
                    st.first.push(b);
                    self.first_at.send_replace(Some(Instant::now()));
                }
            }
        }
    }

    /// Resolves `grace` after the current process wrote its first line that cannot be JSON-RPC
    /// (never, while it writes none): the connect racing it then gives the server up with
    /// [`StdoutNoise::gave_up`]'s reason.
    pub(crate) async fn grace_over(&self, grace: Duration) {
        let mut first_at = self.first_at.subscribe();
        let Ok(at) = first_at.wait_for(Option::is_some).await.map(|at| *at) else {
            return std::future::pending().await;
        };
        if let Some(at) = at {
            tokio::time::sleep_until(at + grace).await;
        }
    }

    /// Why a server that wrote such lines never completed a connect within `after`, or None
    /// when it wrote none (then it is merely slow or stuck: a timeout).
    pub(crate) fn connect_failure(&self, after: Duration) -> Option<String> {
        self.describe(&format!("no MCP handshake within {} ms", after.as_millis()))
    }

    /// Why the connect gave the server up [`NOISE_GRACE`] after its first such line.
    pub(crate) fn gave_up(&self, grace: Duration) -> String {
        self.describe(&format!(
            "no MCP handshake within {} ms of the first",
            grace.as_millis()
        ))
        .unwrap_or_else(|| "it wrote on stdout what is not JSON-RPC".to_owned())
    }

    fn describe(&self, outcome: &str) -> Option<String> {
        let st = self.state.lock().unwrap_or_else(|e| e.into_inner());
        (st.lines > 0).then(|| {
            format!(
                "it wrote {} line{} on stdout that {} not JSON-RPC (the first: {:?}), and {outcome}: a stdio server must write only JSON-RPC messages on stdout (logs go to stderr)",
                st.lines,
                if st.lines == 1 { "" } else { "s" },
                if st.lines == 1 { "is" } else { "are" },
                String::from_utf8_lossy(&st.first).trim_end(),
            )
        })
    }
}

/// The child's stdout, passed through untouched while `StdoutNoise` looks at it.
pub(crate) struct WatchedStdout {
    inner: ChildStdout,
    noise: Arc<StdoutNoise>,
}

impl AsyncRead for WatchedStdout {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let this = self.get_mut();
        let before = buf.filled().len();
        let poll = Pin::new(&mut this.inner).poll_read(cx, buf);
        if let Poll::Ready(Ok(())) = &poll {
            this.noise.scan(&buf.filled()[before..]);
        }
        poll
    }
}

/// A running (or exited) child. Dropping it kills the whole process group; use
/// [`ChildProcess::shutdown`] to also wait until the child is reaped.
pub(crate) struct ChildProcess {
    pid: Option<u32>,
    exit: watch::Receiver<Option<ExitStatus>>,
    kill_tx: mpsc::UnboundedSender<()>,
}

pub(crate) struct SpawnedChild {
    pub process: ChildProcess,
    pub stdin: ChildStdin,
    pub stdout: WatchedStdout,
}

/// Spawns a stdio server. Its stderr is drained into `stderr`; it is never inherited (it would
/// be invisible in a packaged app and could block the child once the pipe filled).
pub(crate) fn spawn(
    command: &str,
    args: &[String],
    env: &HashMap<String, String>,
    cwd: Option<&Path>,
    stderr: Arc<StderrTail>,
    noise: Arc<StdoutNoise>,
) -> std::io::Result<SpawnedChild> {
    let mut cmd = Command::new(command);
    cmd.args(args)
        .envs(env)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    if let Some(dir) = cwd {
        cmd.current_dir(dir);
    }
    // Own process group: shutdown can signal wrappers' children (npx -> node) too.
    #[cfg(unix)]
    cmd.process_group(0);
    #[cfg(windows)]
    {
        // CREATE_NO_WINDOW: no console window flashes up for each server in a GUI app.
        cmd.creation_flags(0x0800_0000);
    }

    let mut child = cmd.spawn()?;
    let pid = child.id();
    let stdin = child.stdin.take().expect("stdin is piped");
    noise.reset();
    let stdout = WatchedStdout {
        inner: child.stdout.take().expect("stdout is piped"),
        noise,
    };
    if let Some(mut err) = child.stderr.take() {
        tokio::spawn(async move {
            let mut chunk = vec![0u8; 4096];
            while let Ok(n) = err.read(&mut chunk).await {
                if n == 0 {
                    break;
                }
                stderr.push(&chunk[..n]);
            }
        });
    }

    let (exit_tx, exit) = watch::channel(None);
    let (kill_tx, mut kill_rx) = mpsc::unbounded_channel::<()>();
    // The reaper owns the Child: waiting here is what keeps exited servers from being zombies.
    tokio::spawn(async move {
        let status = tokio::select! {
            status = child.wait() => status,
            _ = kill_rx.recv() => {
                let _ = child.start_kill();
                child.wait().await
            }
        };
        let status = status.unwrap_or_else(|_| exit_status_unknown());
        let _ = exit_tx.send(Some(status));
    });
    Ok(SpawnedChild {
        process: ChildProcess { pid, exit, kill_tx },
        stdin,
        stdout,
    })
}

#[cfg(unix)]
fn exit_status_unknown() -> ExitStatus {
    use std::os::unix::process::ExitStatusExt;
    ExitStatus::from_raw(0)
}

#[cfg(not(unix))]
fn exit_status_unknown() -> ExitStatus {
    use std::os::windows::process::ExitStatusExt;
    ExitStatus::from_raw(0)
}

impl ChildProcess {
    pub(crate) fn pid(&self) -> Option<u32> {
        self.pid
    }

    /// The exit status once the child has been reaped.
    pub(crate) fn exit_status(&self) -> Option<ExitStatus> {
        *self.exit.borrow()
    }

    /// Waits up to `max` for the child to be reaped.
    pub(crate) async fn wait_exit(&self, max: Duration) -> Option<ExitStatus> {
        let mut rx = self.exit.clone();
        match tokio::time::timeout(max, rx.wait_for(|s| s.is_some())).await {
            Ok(Ok(s)) => *s,
            _ => self.exit_status(),
        }
    }

    /// Stops the child and waits until it is reaped. Call after the transport closed its stdin
    /// (the polite MCP stdio shutdown): wait `grace`, then SIGTERM the group, wait `grace`, then
    /// SIGKILL. Leftover group members (grandchildren) are killed once the leader is gone.
    pub(crate) async fn shutdown(&self, grace: Duration) {
        if self.wait_exit(grace).await.is_none() {
            self.signal_group(Signal::Term);
            if self.wait_exit(grace).await.is_none() {
                self.signal_group(Signal::Kill);
                let _ = self.kill_tx.send(());
                self.wait_exit(Duration::from_secs(5)).await;
            }
        }
        self.signal_group(Signal::Kill);
    }

    /// SIGKILL now and wait (bounded) until the child is reaped.
    pub(crate) async fn kill_and_reap(&self) {
        self.kill_now();
        self.wait_exit(Duration::from_secs(5)).await;
    }

    /// Immediate, synchronous kill (for `Drop`); the reaper task still collects the status.
    pub(crate) fn kill_now(&self) {
        self.signal_group(Signal::Kill);
        let _ = self.kill_tx.send(());
    }

    #[cfg(unix)]
    fn signal_group(&self, sig: Signal) {
        let Some(pid) = self.pid else { return };
        let sig = match sig {
            Signal::Term => libc::SIGTERM,
            Signal::Kill => libc::SIGKILL,
        };
        // The group id is the leader's pid (process_group(0)); ESRCH when it is all gone.
        // SAFETY: kill(2) has no memory-safety preconditions.
        unsafe {
            libc::kill(-(pid as libc::pid_t), sig);
        }
    }

    #[cfg(not(unix))]
    fn signal_group(&self, sig: Signal) {
        if matches!(sig, Signal::Kill) {
            let _ = self.kill_tx.send(());
        }
    }
}

impl Drop for ChildProcess {
    fn drop(&mut self) {
        self.kill_now();
    }
}

#[derive(Clone, Copy)]
enum Signal {
    Term,
    Kill,
}

/// "exited with status 3" / "was killed by signal 9", for error messages.
pub(crate) fn describe_exit(status: ExitStatus) -> String {
    if let Some(code) = status.code() {
        return format!("exited with status {code}");
    }
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        if let Some(sig) = status.signal() {
            return format!("was killed by signal {sig}");
        }
    }
    "exited".to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stderr_tail_is_bounded_and_utf8_safe() {
        let t = StderrTail::default();
        t.push(b"hello\n");
        assert_eq!(t.text(), "hello\n");
        let big = "é".repeat(STDERR_TAIL_BYTES); // 2 bytes each
        t.push(big.as_bytes());
        t.push(b"x");
        let text = t.text();
        assert!(text.len() <= STDERR_TAIL_BYTES);
        assert!(!text.contains('\u{fffd}'), "cut char must be skipped");
        assert!(text.ends_with("éx"));
        assert_eq!(t.last_chars(2), "éx");
    }
}
