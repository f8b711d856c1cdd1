//! The warm pool of sandbox processes. Each run takes one process (waiting its turn, for at
//! most `queueTimeoutMs`), is driven on a thread of its own (kept for later runs), and gives
//! the process back — or,
//! when the process was killed or died, frees its place and starts a replacement, so the pool
//! is whole again without waiting for the next run.

use std::collections::VecDeque;
use std::path::PathBuf;
use std::sync::mpsc::{self, Sender};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use super::bridge::Event;
use super::process::Sandbox;
use super::run::{self, ExecJob, ExecOutcome, RunControl};
use super::{ExecError, Limit};

/// A run's driver only forwards frames; it needs little stack.
const DRIVER_STACK_BYTES: usize = 256 * 1024;
/// How long a driver thread waits for another run before it ends.
const DRIVER_IDLE_LIFETIME: Duration = Duration::from_secs(60);

type Task = Box<dyn FnOnce() + Send>;

/// Threads that drive runs, kept between runs: starting a thread per run was a visible part of
/// a short run's cost. One is started whenever none is idle, so queued runs never wait for a
/// driver (they wait for a sandbox, in `acquire`).
#[derive(Default)]
struct Drivers {
    idle: Mutex<Vec<Sender<Task>>>,
}

impl Drivers {
    fn run(self: &Arc<Self>, mut task: Task) -> std::io::Result<()> {
        loop {
            let Some(driver) = self.idle.lock().unwrap_or_else(|p| p.into_inner()).pop() else {
                break;
            };
            // A driver that has ended leaves its sender behind; its send fails.
            match driver.send(task) {
                Ok(()) => return Ok(()),
                Err(mpsc::SendError(back)) => task = back,
            }
        }
        let (tx, rx) = mpsc::channel::<Task>();
        let drivers = self.clone();
        std::thread::Builder::new()
            .name("toolreg-exec-run".to_owned())
            .stack_size(DRIVER_STACK_BYTES)
            .spawn(move || {
                let mut next = Some(task);
                while let Some(task) = next.take() {
                    task();
                    drivers
                        .idle
                        .lock()
                        .unwrap_or_else(|p| p.into_inner())
                        .push(tx.clone());
                    next = rx.recv_timeout(DRIVER_IDLE_LIFETIME).ok();
                }
            })
            .map(drop)
    }
}

/// Up to `size` sandbox processes running `tool_exec` code, one run each at a time.
pub struct ExecPool {
    shared: Arc<Shared>,
}

struct Shared {
    helper: PathBuf,
    size: usize,
    slots: Mutex<Slots>,
    drivers: Arc<Drivers>,
}

#[derive(Default)]
struct Slots {
    idle: Vec<Sandbox>,
    busy: usize,
    /// Replacements being started in the background.
    starting: usize,
    /// The runs waiting, first come first served: each ticket with the condition its run
    /// waits on, so that a freed place wakes the first run only (not every queued one).
    queue: VecDeque<(u64, Arc<Condvar>)>,
    next_ticket: u64,
}

impl Slots {
    /// Wakes the first run in the queue: it may take a place now.
    fn wake_first(&self) {
        if let Some((_, turn)) = self.queue.front() {
            turn.notify_one();
        }
    }
}

fn lock(mutex: &Mutex<Slots>) -> MutexGuard<'_, Slots> {
    // Every critical section leaves the counts consistent before it can panic.
    mutex.lock().unwrap_or_else(|p| p.into_inner())
}

impl ExecPool {
    /// A pool of `size` processes of the `toolreg-exec` executable at `helper`; `0` means one
    /// per available core. Processes start on first use.
    pub fn new(size: usize, helper: PathBuf) -> Self {
        let size = if size == 0 {
            std::thread::available_parallelism().map_or(1, |n| n.get())
        } else {
            size
        };
        ExecPool {
            shared: Arc::new(Shared {
                helper,
                size,
                slots: Mutex::default(),
                drivers: Arc::default(),
            }),
        }
    }

    /// How many runs may execute at once.
    pub fn size(&self) -> usize {
        self.shared.size
    }

    /// Starts a run; `done` gets its outcome on the run's thread as soon as it is decided. The
    /// run's process goes back to the pool after that, once it has dropped the run's engine
    /// and prepared the next. Invalid limits fail here, before anything starts.
    pub fn spawn(
        &self,
        job: ExecJob,
        done: impl FnOnce(ExecOutcome) + Send + 'static,
    ) -> Result<RunHandle, ExecError> {
        job.limits.validate()?;
        let control = Arc::new(RunControl::default());
        let (events_tx, events) = mpsc::channel();
        let handle = RunHandle {
            control: control.clone(),
            events: events_tx.clone(),
            pool: self.shared.clone(),
        };
        let shared = self.shared.clone();
        self.shared
            .drivers
            .run(Box::new(move || {
                let (outcome, used) = shared.run(job, &control, &events, &events_tx);
                control.close();
                done(outcome);
                if let Some((sandbox, reusable)) = used {
                    let reusable = reusable && run::wait_ready(&sandbox, &events);
                    shared.release(Some(sandbox), reusable);
                }
            }))
            .map_err(|e| ExecError::Engine(format!("cannot start a run's thread: {e}")))?;
        Ok(handle)
    }

    /// Runs a job and waits for its outcome (for Rust callers and tests; never on the JS thread).
    pub fn run_blocking(&self, job: ExecJob) -> ExecOutcome {
        let (tx, rx) = mpsc::channel();
        if let Err(error) = self.spawn(job, move |outcome| {
            let _ = tx.send(outcome);
        }) {
            return ExecOutcome::failed(error);
        }
        rx.recv().unwrap_or_else(|_| {
            ExecOutcome::failed(ExecError::Engine("the pool dropped the run".to_owned()))
        })
    }
}

impl Shared {
    fn run(
        self: &Arc<Self>,
        job: ExecJob,
        control: &RunControl,
        events: &mpsc::Receiver<Event>,
        events_tx: &Sender<Event>,
    ) -> (ExecOutcome, Option<(Sandbox, bool)>) {
        let limits = job.limits;
        if job.code.len() as u64 > limits.max_source_bytes {
            let outcome = ExecOutcome::failed(ExecError::LimitExceeded {
                limit: Limit::Source,
                value: limits.max_source_bytes,
                detail: format!("the code is {} bytes", job.code.len()),
            });
            return (outcome, None);
        }
        let queued_until = Instant::now() + Duration::from_millis(limits.queue_timeout_ms);
        let mut sandbox = match self.acquire(control, queued_until, limits.queue_timeout_ms) {
            Ok(Some(sandbox)) => sandbox,
            Ok(None) => match Sandbox::start(&self.helper) {
                Ok(sandbox) => sandbox,
                Err(message) => {
                    self.release(None, false);
                    return (ExecOutcome::failed(ExecError::Engine(message)), None);
                }
            },
            Err(error) => return (ExecOutcome::failed(error), None),
        };
        let ended = run::drive(&mut sandbox, job, control, events, events_tx);
        (ended.outcome, Some((sandbox, ended.reusable)))
    }

    /// Waits for this run's turn and a place. `Some` is an idle process; `None` is a free place
    /// the caller starts a process for.
    fn acquire(
        &self,
        control: &RunControl,
        until: Instant,
        queue_timeout_ms: u64,
    ) -> Result<Option<Sandbox>, ExecError> {
        let mut slots = lock(&self.slots);
        let ticket = slots.next_ticket;
        slots.next_ticket += 1;
        let turn = Arc::new(Condvar::new());
        slots.queue.push_back((ticket, turn.clone()));
        let leave = |slots: &mut Slots| {
            slots.queue.retain(|(t, _)| *t != ticket);
            slots.wake_first();
        };
        loop {
            if control.aborted() {
                leave(&mut slots);
                return Err(ExecError::Aborted);
            }
            if slots.queue.front().is_some_and(|(t, _)| *t == ticket) {
                while let Some(sandbox) = slots.idle.pop() {
                    if sandbox.alive() {
                        leave(&mut slots);
                        slots.busy += 1;
                        return Ok(Some(sandbox));
                    }
                    sandbox.reap();
                }
                if slots.busy + slots.idle.len() + slots.starting < self.size {
                    leave(&mut slots);
                    slots.busy += 1;
                    return Ok(None);
                }
            }
            let now = Instant::now();
            if now >= until {
                leave(&mut slots);
                return Err(ExecError::LimitExceeded {
                    limit: Limit::QueueTimeout,
                    value: queue_timeout_ms,
                    detail: format!(
                        "no sandbox was free within {queue_timeout_ms} ms ({} runs execute at once; raise poolSize or queueTimeoutMs)",
                        self.size
                    ),
                });
            }
            slots = turn
                .wait_timeout(slots, until - now)
                .unwrap_or_else(|p| p.into_inner())
                .0;
        }
    }

    /// Gives a run's place back: its process to the idle list when it may serve again, else
    /// the process is reaped and a replacement started in the background.
    fn release(self: &Arc<Self>, sandbox: Option<Sandbox>, reusable: bool) {
        let mut slots = lock(&self.slots);
        slots.busy -= 1;
        match sandbox {
            Some(sandbox) if reusable && sandbox.alive() => slots.idle.push(sandbox),
            Some(sandbox) => {
                slots.starting += 1;
                let shared = self.clone();
                let replace = move || {
                    sandbox.reap();
                    let replacement = Sandbox::start(&shared.helper);
                    let mut slots = lock(&shared.slots);
                    slots.starting -= 1;
                    if let Ok(replacement) = replacement {
                        slots.idle.push(replacement);
                    }
                    slots.wake_first();
                };
                if std::thread::Builder::new()
                    .name("toolreg-exec-replace".to_owned())
                    .spawn(replace)
                    .is_err()
                {
                    slots.starting -= 1;
                }
            }
            None => {}
        }
        slots.wake_first();
    }
}

/// A run in progress: abort it, or ask whether it still takes tool calls.
#[derive(Clone)]
pub struct RunHandle {
    control: Arc<RunControl>,
    events: Sender<Event>,
    pool: Arc<Shared>,
}

impl RunHandle {
    /// Ends the run: a queued run at once; a running one is asked to stop and killed if it
    /// does not within the grace. Its in-flight tool calls are cancelled.
    pub fn abort(&self) {
        self.control.abort();
        let _ = self.events.send(Event::Abort);
        // Wake the runs still waiting for a place (this one among them leaves the queue); the
        // lock orders this after their check.
        for (_, turn) in &lock(&self.pool.slots).queue {
            turn.notify_one();
        }
    }

    /// False once the run has ended or been told to stop: no tool call of it may start, and
    /// no approval may be asked for it, from then on.
    pub fn is_open(&self) -> bool {
        self.control.is_open()
    }
}
