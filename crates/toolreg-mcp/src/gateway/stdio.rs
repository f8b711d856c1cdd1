//! The gateway's stdin/stdout, read and written on the IO reactor when they are pipes or
//! sockets (the way MCP clients start a stdio server) instead of through Tokio's blocking
//! `stdin()`/`stdout()`, which hand every read and write to a thread of the blocking pool: two
//! thread hops per forwarded call that the reactor does without.

use std::pin::Pin;

use tokio::io::{AsyncRead, AsyncWrite};

/// Either half of the transport, as a trait object: the three ways to reach the streams differ
/// in type only.
pub(super) type Reader = Pin<Box<dyn AsyncRead + Send>>;
pub(super) type Writer = Pin<Box<dyn AsyncWrite + Send>>;

/// This process's stdin and stdout for one MCP session.
pub(super) fn transport() -> (Reader, Writer) {
    #[cfg(unix)]
    if let Some(pair) = sockets() {
        return pair;
    }
    // FIFOs (Python's and most other clients' pipes) through rmcp's own non-blocking pipes,
    // reopened so that O_NONBLOCK stays private to them; anything else (a file, a terminal,
    // another platform) falls back to the blocking handles there.
    let (read, write) = rmcp::transport::stdio_pipes();
    (Box::pin(read), Box::pin(write))
}

/// Node clients (libuv) start a server with a socket pair per stream. A socket cannot be
/// reopened on a description of its own, so the descriptors are duplicated and made
/// non-blocking, which the process's fd 0 and 1 then share: nothing else in `toolreg serve`
/// reads stdin or writes stdout (the session owns them; logs go to stderr), and the servers it
/// starts get pipes of their own, not these.
#[cfg(unix)]
fn sockets() -> Option<(Reader, Writer)> {
    use std::os::fd::{AsFd, BorrowedFd};
    use std::os::unix::fs::FileTypeExt;

    fn socket(fd: BorrowedFd<'_>) -> Option<std::os::unix::net::UnixStream> {
        let file = std::fs::File::from(fd.try_clone_to_owned().ok()?);
        let is_socket = file.metadata().ok()?.file_type().is_socket();
        is_socket.then(|| std::os::unix::net::UnixStream::from(std::os::fd::OwnedFd::from(file)))
    }
    fn nonblocking(stream: std::os::unix::net::UnixStream) -> Option<tokio::net::UnixStream> {
        stream.set_nonblocking(true).ok()?;
        tokio::net::UnixStream::from_std(stream).ok()
    }
    // Both are checked before either is made non-blocking: a blocking handle must not be left
    // on a descriptor that now fails its reads with EAGAIN.
    let read = socket(std::io::stdin().as_fd())?;
    let write = socket(std::io::stdout().as_fd())?;
    Some((Box::pin(nonblocking(read)?), Box::pin(nonblocking(write)?)))
}
