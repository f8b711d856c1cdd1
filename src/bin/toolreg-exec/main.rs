//! `toolreg-exec`: the process that `tool_exec` code runs in.
//!
//! The addon keeps a few of these warm and talks to each over its stdin and stdout (frames in
//! `src/exec/protocol.rs`). One run at a time: the main thread reads frames and hands them to
//! the engine thread, which runs the code in a fresh QuickJS context and writes back tool
//! calls, console lines and the outcome.
//!
//! Why a process: a native thread cannot be pre-empted, and some QuickJS built-ins run for
//! minutes without checking in, so the only time limit that holds for any code is the addon
//! killing the process. The same boundary keeps an engine bug away from the host, and it lets
//! the memory and stack caps end the process outright instead of throwing something the code
//! could catch. The process holds nothing of the host (no environment, no handles but its
//! three pipes) and, on Linux, can make no system call beyond what serving runs needs.

#[path = "../../exec/protocol.rs"]
#[allow(dead_code)]
mod protocol;

mod alloc;
mod guard;
mod sandbox;
mod seccomp;

use std::io::{self, BufReader, BufWriter, Stdout};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Sender};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use protocol::{ANSWER, Fields, PROTOCOL_VERSION, READY, RUN, RunRequest, STOP};

#[global_allocator]
static ALLOCATOR: alloc::Counting = alloc::Counting;

/// Set as soon as the addon says stop; the engine's interrupt handler polls it.
static STOP_REQUESTED: AtomicBool = AtomicBool::new(false);

/// Frames to the addon. Only the engine thread writes while a run is on; the lock only makes
/// the hand-over between engine threads safe.
type Outbox = Arc<Mutex<BufWriter<Stdout>>>;

/// What the main thread hands the engine thread.
pub enum Inbound {
    Run(RunRequest),
    /// A tool call's answer: its output as JSON, or an error's code and message.
    Answer {
        call: u32,
        result: Result<String, (String, String)>,
    },
    Stop,
}

/// The engine thread, sized for one `maxStackSizeBytes`.
struct Engine {
    max_stack: u64,
    inbox: Sender<Inbound>,
    thread: JoinHandle<()>,
}

impl Engine {
    fn start(max_stack: u64, outbox: Outbox) -> Engine {
        let (inbox, receiver) = mpsc::channel();
        let thread = std::thread::Builder::new()
            .name("toolreg-exec-engine".to_owned())
            .stack_size(guard::thread_stack_size(max_stack))
            .spawn(move || {
                let _guard = match guard::StackGuard::install(max_stack) {
                    Ok(guard) => guard,
                    Err(e) => fail(&format!("cannot guard the engine's stack: {e}")),
                };
                sandbox::serve(&receiver, &outbox, max_stack);
            })
            .unwrap_or_else(|e| fail(&format!("cannot start the engine thread: {e}")));
        Engine {
            max_stack,
            inbox,
            thread,
        }
    }

    /// Ends the thread between runs (its stack guard is lifted on the way out).
    fn retire(self) {
        drop(self.inbox);
        let _ = self.thread.join();
    }
}

fn fail(message: &str) -> ! {
    let line = format!("toolreg-exec: {message}\n");
    guard::exit_now(2, line.as_bytes())
}

fn main() {
    guard::install_handler();
    // Before the first byte from the addon: no run ever executes in an unrestricted process.
    if let Err(e) = seccomp::restrict()
        && !refused_by_qemu_user(&e)
    {
        fail(&format!("cannot restrict the process's system calls: {e}"));
    }
    let outbox: Outbox = Arc::new(Mutex::new(BufWriter::new(io::stdout())));
    {
        let mut out = outbox.lock().unwrap_or_else(|p| p.into_inner());
        if protocol::write_frame(&mut *out, READY, &[&PROTOCOL_VERSION.to_le_bytes()]).is_err() {
            return;
        }
    }
    let mut input = BufReader::new(io::stdin());
    let mut engine: Option<Engine> = None;
    // The addon closing the pipe (or dying) ends the process, even mid-run.
    while let Ok(Some((kind, len))) = protocol::read_header(&mut input) {
        let Ok(payload) = protocol::read_payload(&mut input, len) else {
            break;
        };
        let inbound = match kind {
            RUN => {
                let request: RunRequest = serde_json::from_slice(&payload)
                    .unwrap_or_else(|e| fail(&format!("bad run request: {e}")));
                // The addon sends a run only when the last one is over, so no stop is meant for it.
                STOP_REQUESTED.store(false, Ordering::SeqCst);
                if let Some(stale) = engine.take_if(|e| e.max_stack != request.max_stack_size_bytes)
                {
                    stale.retire();
                }
                let max_stack = request.max_stack_size_bytes;
                engine.get_or_insert_with(|| Engine::start(max_stack, outbox.clone()));
                Inbound::Run(request)
            }
            ANSWER => {
                decode_answer(&payload).unwrap_or_else(|e| fail(&format!("bad answer: {}", e.0)))
            }
            STOP => {
                STOP_REQUESTED.store(true, Ordering::SeqCst);
                Inbound::Stop
            }
            other => fail(&format!("unknown frame kind {other}")),
        };
        if let Some(engine) = &engine {
            let _ = engine.inbox.send(inbound);
        }
    }
    guard::exit_now(0, b"")
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

/// `ANSWER`: `[call u32][1][output JSON]` or `[call u32][0][code text][message]`.
fn decode_answer(payload: &[u8]) -> Result<Inbound, protocol::Malformed> {
    let mut fields = Fields::new(payload);
    let call = fields.u32()?;
    let result = if fields.u8()? == 1 {
        Ok(fields.rest()?.to_owned())
    } else {
        let code = fields.text()?.to_owned();
        Err((code, fields.rest()?.to_owned()))
    };
    Ok(Inbound::Answer { call, result })
}
