//! The worker threads runs execute on. QuickJS values are bound to the thread that made them,
//! so each run lives on one pool thread from start to end, and the JS thread never waits.

use std::sync::mpsc::{self, Sender};
use std::sync::{Arc, Mutex};

use threadpool::ThreadPool;

use super::ExecError;
use super::bridge::Event;
use super::limits::MAX_STACK_SIZE_BYTES;
use super::sandbox::{self, ExecJob, ExecOutcome, RunSignals};

/// Room for the interpreter's own frames above the code's `maxStackSizeBytes`.
const THREAD_STACK_HEADROOM: usize = 4 * 1024 * 1024;

/// A fixed set of threads running sandboxed code.
pub struct ExecPool {
    threads: Mutex<ThreadPool>,
    size: usize,
}

impl ExecPool {
    /// A pool of `size` threads; `0` means one per available core.
    pub fn new(size: usize) -> Self {
        let size = if size == 0 {
            std::thread::available_parallelism().map_or(1, |n| n.get())
        } else {
            size
        };
        let threads = threadpool::Builder::new()
            .num_threads(size)
            .thread_name("toolreg-exec".to_owned())
            .thread_stack_size(MAX_STACK_SIZE_BYTES as usize + THREAD_STACK_HEADROOM)
            .build();
        ExecPool {
            threads: Mutex::new(threads),
            size,
        }
    }

    /// Number of threads.
    pub fn size(&self) -> usize {
        self.size
    }

    /// Queues a run; `done` gets its outcome on the pool thread. Invalid limits fail here,
    /// before anything is queued.
    pub fn spawn(
        &self,
        job: ExecJob,
        done: impl FnOnce(ExecOutcome) + Send + 'static,
    ) -> Result<AbortHandle, ExecError> {
        job.limits.validate()?;
        let signals = Arc::new(RunSignals::new());
        let (events_tx, events) = mpsc::channel();
        let handle = AbortHandle {
            signals: signals.clone(),
            events: events_tx.clone(),
        };
        let task = move || {
            let (outcome, used_engine) =
                std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    sandbox::run(job, signals, events, events_tx)
                }))
                .unwrap_or_else(|panic| {
                    let outcome = ExecOutcome {
                        result: Err(ExecError::Engine(panic_message(&panic))),
                        logs: Vec::new(),
                        tool_calls: 0,
                    };
                    (outcome, None)
                });
            done(outcome);
            // Freeing the used engine and building the next one happen after the answer.
            drop(used_engine);
            sandbox::prepare_spare();
        };
        self.threads
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .execute(task);
        Ok(handle)
    }

    /// Runs a job and waits for its outcome (for Rust callers and tests; never on the JS thread).
    pub fn run_blocking(&self, job: ExecJob) -> ExecOutcome {
        let (tx, rx) = mpsc::channel();
        if let Err(error) = self.spawn(job, move |outcome| {
            let _ = tx.send(outcome);
        }) {
            return ExecOutcome {
                result: Err(error),
                logs: Vec::new(),
                tool_calls: 0,
            };
        }
        rx.recv().unwrap_or_else(|_| ExecOutcome {
            result: Err(ExecError::Engine("the pool dropped the run".to_owned())),
            logs: Vec::new(),
            tool_calls: 0,
        })
    }
}

fn panic_message(panic: &Box<dyn std::any::Any + Send>) -> String {
    panic
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "the run panicked".to_owned())
}

/// Ends a run early: it stops at once, cancels its in-flight tool calls and reports `Aborted`.
#[derive(Clone)]
pub struct AbortHandle {
    signals: Arc<RunSignals>,
    events: Sender<Event>,
}

impl AbortHandle {
    pub fn abort(&self) {
        self.signals.abort();
        let _ = self.events.send(Event::Abort);
    }
}
