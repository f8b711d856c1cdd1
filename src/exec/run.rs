//! Drives one run on one sandbox process. This is the one checked path between the code and
//! the host: every limit that guards the host is decided here, on the frames, whatever the
//! process claims; every tool call the code makes passes here before the host sees it; and the
//! clock is kept here, where a process that never checks in can still be stopped — asked
//! first, then killed.

use std::collections::{BTreeMap, HashSet, VecDeque};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender};
use std::time::{Duration, Instant};

use serde_json::Value;

use super::bridge::{Bridge, BridgeError, BridgeRequest, Event, Responder};
use super::process::Sandbox;
use super::protocol::{self, Fields, RunEnd, RunRequest};
use super::{ExecError, ExecLimits, Limit, MAX_RESULT_DEPTH, Thrown};

/// How long a process asked to stop may take to answer before it is killed. (The engine is
/// pre-empted within microseconds; this covers a process that is not scheduled.)
pub const STOP_GRACE: Duration = Duration::from_millis(25);
/// How long a process may take, after a run, to drop its instance and prepare the next one
/// before it is replaced instead.
const READY_TIMEOUT: Duration = Duration::from_secs(2);
/// Longest error message the code's failure reports (never more than `maxResultBytes`).
const MAX_ERROR_BYTES: u64 = 16 * 1024;
/// Keys that never reach a host tool: with them, a naive deep merge in the host pollutes
/// `Object.prototype`.
const FORBIDDEN_KEYS: [&str; 3] = ["__proto__", "constructor", "prototype"];

/// A run: the model's code, the tools it may call and how to reach them.
pub struct ExecJob {
    /// The body of an async function (top-level `await` and `return`).
    pub code: String,
    /// Tools the code may call; each becomes `tools.<name>`.
    pub tool_names: Vec<String>,
    /// Other names for some of them (`server/tool`), as `(alias, name)`: the code may use
    /// either; calls reach the host under the name.
    pub tool_aliases: Vec<(String, String)>,
    pub limits: ExecLimits,
    pub bridge: Arc<dyn Bridge>,
}

/// Which `console` method wrote a line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LogLevel {
    Log,
    Info,
    Warn,
    Error,
    Debug,
}

impl LogLevel {
    fn from_wire(level: u8) -> LogLevel {
        match level {
            1 => LogLevel::Info,
            2 => LogLevel::Warn,
            3 => LogLevel::Error,
            4 => LogLevel::Debug,
            _ => LogLevel::Log,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            LogLevel::Log => "log",
            LogLevel::Info => "info",
            LogLevel::Warn => "warn",
            LogLevel::Error => "error",
            LogLevel::Debug => "debug",
        }
    }
}

/// One captured `console` call, its arguments joined by spaces.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogLine {
    pub level: LogLevel,
    pub message: String,
}

impl LogLine {
    /// The line as the host gets it: the message, after `[level] ` unless it was `console.log`.
    pub fn entry(&self) -> String {
        match self.level {
            LogLevel::Log => self.message.clone(),
            level => format!("[{}] {}", level.name(), self.message),
        }
    }

    /// What the line costs against `maxConsoleOutputBytes`: its entry written as a JSON string
    /// (quotes and escapes included) and a separator, as the logs array reaches the host, so the
    /// limit bounds what the host holds, however many empty or escaped lines the code writes.
    fn cost(&self) -> u64 {
        let json = serde_json::to_string(&self.entry()).map_or(usize::MAX, |json| json.len());
        json as u64 + 1
    }
}

/// How a run ended.
#[derive(Debug)]
pub struct ExecOutcome {
    /// The returned value as JSON (`None` for `undefined`), or why the run failed.
    pub result: Result<Option<String>, ExecError>,
    /// Console output up to the end or the failure.
    pub logs: Vec<LogLine>,
    /// Tool calls the code made.
    pub tool_calls: u32,
}

impl ExecOutcome {
    pub(crate) fn failed(error: ExecError) -> Self {
        ExecOutcome {
            result: Err(error),
            logs: Vec::new(),
            tool_calls: 0,
        }
    }
}

/// What a run shares with its handle: whether it was aborted, and whether it is closed (no
/// tool call may start or be approved once it is).
#[derive(Default)]
pub(crate) struct RunControl {
    aborted: AtomicBool,
    closed: AtomicBool,
}

impl RunControl {
    pub(crate) fn abort(&self) {
        self.aborted.store(true, Ordering::SeqCst);
    }

    pub(crate) fn aborted(&self) -> bool {
        self.aborted.load(Ordering::SeqCst)
    }

    pub(crate) fn close(&self) {
        self.closed.store(true, Ordering::SeqCst);
    }

    pub(crate) fn is_open(&self) -> bool {
        !self.closed.load(Ordering::SeqCst)
    }
}

/// A finished run, and whether its process may serve another.
pub(crate) struct Ended {
    pub outcome: ExecOutcome,
    pub reusable: bool,
}

/// The run's wall clock, kept here whatever the process says. It stands still only while the
/// run waits on a person and on nothing else: the engine has taken every answer sent to it and
/// waits (`IDLE`), and every call in flight is waiting for the user's approval.
struct Clock {
    deadline: Option<Instant>,
    remaining: Duration,
}

impl Clock {
    fn start(timeout: Duration) -> Self {
        Clock {
            deadline: Some(Instant::now() + timeout),
            remaining: timeout,
        }
    }

    fn pause(&mut self) {
        if let Some(deadline) = self.deadline.take() {
            self.remaining = deadline.saturating_duration_since(Instant::now());
        }
    }

    fn resume(&mut self) {
        if self.deadline.is_none() {
            self.deadline = Some(Instant::now() + self.remaining);
        }
    }
}

struct Driver<'a> {
    sandbox: &'a mut Sandbox,
    control: &'a RunControl,
    events_tx: &'a Sender<Event>,
    limits: ExecLimits,
    bridge: Arc<dyn Bridge>,
    allowed: HashSet<String>,
    calls_made: u32,
    /// Calls awaiting the host, by number, with their tool's name.
    in_flight: BTreeMap<u32, String>,
    logs: Vec<LogLine>,
    log_bytes: u64,
    clock: Clock,
    /// Answers sent to the process, and how many it had taken when it last said `IDLE`.
    answers_sent: u32,
    idle_after: Option<u32>,
    /// Answers the host has and the engine has not asked for yet. They wait here, not in the
    /// process: the engine takes an answer only when it waits (`IDLE`), and the process holds
    /// at most the one sent then, so code that computes while calls return cannot pile their
    /// answers up outside its memory limit.
    held: VecDeque<(u32, Result<String, BridgeError>)>,
    /// Calls in flight whose approval the user is being asked for.
    awaiting_approval: HashSet<u32>,
    /// Why the run is stopping, once decided: the first reason wins.
    stopping: Option<ExecError>,
    kill_at: Option<Instant>,
}

/// Runs `job` on `sandbox` to its end. `events` carries the process's frames (routed here for
/// the run), the host's answers and the handle's abort.
pub(crate) fn drive(
    sandbox: &mut Sandbox,
    job: ExecJob,
    control: &RunControl,
    events: &Receiver<Event>,
    events_tx: &Sender<Event>,
) -> Ended {
    let limits = job.limits;
    let request = RunRequest {
        code: without_raw_nul(job.code),
        tool_names: job.tool_names.clone(),
        tool_aliases: job.tool_aliases,
        memory_limit_bytes: limits.memory_limit_bytes,
        max_stack_size_bytes: limits.max_stack_size_bytes,
        max_result_bytes: limits.max_result_bytes,
        max_tool_input_bytes: limits.max_tool_input_bytes,
        max_log_bytes: limits.max_console_output_bytes,
        max_error_bytes: max_error_bytes(&limits),
    };
    sandbox.route_to(events_tx.clone(), request.frame_caps());
    let request = serde_json::to_vec(&request).expect("a run request serialises");
    sandbox.send(protocol::RUN, &[&request]);
    let mut driver = Driver {
        sandbox,
        control,
        events_tx,
        limits,
        bridge: job.bridge,
        allowed: job.tool_names.into_iter().collect(),
        calls_made: 0,
        in_flight: BTreeMap::new(),
        logs: Vec::new(),
        log_bytes: 0,
        clock: Clock::start(Duration::from_millis(limits.timeout_ms)),
        answers_sent: 0,
        idle_after: None,
        held: VecDeque::new(),
        awaiting_approval: HashSet::new(),
        stopping: None,
        kill_at: None,
    };
    if control.aborted() {
        driver.stop(ExecError::Aborted);
    }
    let (result, reusable) = loop {
        let wake = driver.kill_at.or(driver.clock.deadline);
        let event = match wake {
            Some(at) => match events.recv_timeout(at.saturating_duration_since(Instant::now())) {
                Ok(event) => Some(event),
                Err(RecvTimeoutError::Timeout) => None,
                Err(RecvTimeoutError::Disconnected) => unreachable!("the driver holds a sender"),
            },
            None => Some(events.recv().expect("the driver holds a sender")),
        };
        let ended = match event {
            Some(event) => driver.on_event(event),
            None => None,
        };
        if let Some(ended) = ended {
            break ended;
        }
        // After every event, not only when none is waiting: a flood of frames cannot hold
        // the deadline off.
        driver.update_clock();
        if let Some(ended) = driver.on_time() {
            break ended;
        }
    };
    driver.close();
    let tool_calls = driver.calls_made;
    Ended {
        outcome: ExecOutcome {
            result,
            logs: std::mem::take(&mut driver.logs),
            tool_calls,
        },
        reusable,
    }
}

fn max_error_bytes(limits: &ExecLimits) -> u64 {
    limits.max_result_bytes.min(MAX_ERROR_BYTES)
}

type Finish = (Result<Option<String>, ExecError>, bool);

impl Driver<'_> {
    fn exceeded(&self, limit: Limit, detail: impl Into<String>) -> ExecError {
        ExecError::LimitExceeded {
            limit,
            value: self.limits.value(limit),
            detail: detail.into(),
        }
    }

    /// Decides the run's end (the first reason wins), closes it to new calls and asks the
    /// process to stop; it is killed if it has not answered within [`STOP_GRACE`].
    fn stop(&mut self, reason: ExecError) {
        if self.stopping.is_some() {
            return;
        }
        self.control.close();
        self.stopping = Some(reason);
        self.sandbox.send(protocol::STOP, &[]);
        self.kill_at = Some(Instant::now() + STOP_GRACE);
        self.cancel_in_flight();
    }

    fn cancel_in_flight(&mut self) {
        for call_number in std::mem::take(&mut self.in_flight).into_keys() {
            self.bridge.cancel(call_number);
        }
    }

    /// The run is over: nothing is left at the host. (Frames are still routed here until the
    /// process says it is ready again; see [`wait_ready`].)
    fn close(&mut self) {
        self.control.close();
        self.cancel_in_flight();
    }

    /// Pauses the clock exactly while the run waits on a person and on nothing else.
    fn update_clock(&mut self) {
        let engine_waits = self.idle_after == Some(self.answers_sent) && self.held.is_empty();
        let only_approvals = !self.in_flight.is_empty()
            && self
                .in_flight
                .keys()
                .all(|call| self.awaiting_approval.contains(call));
        if engine_waits && only_approvals && self.stopping.is_none() {
            self.clock.pause();
        } else {
            self.clock.resume();
        }
    }

    fn on_time(&mut self) -> Option<Finish> {
        let now = Instant::now();
        if let (Some(kill_at), Some(reason)) = (self.kill_at, &self.stopping) {
            if now >= kill_at {
                let reason = reason.clone();
                self.sandbox.kill();
                return Some((Err(reason), false));
            }
            return None;
        }
        if self.clock.deadline.is_some_and(|d| now >= d) {
            let timeout = self.limits.timeout_ms;
            self.stop(self.exceeded(
                Limit::Timeout,
                format!("the run took longer than {timeout} ms"),
            ));
        }
        None
    }

    fn on_event(&mut self, event: Event) -> Option<Finish> {
        match event {
            Event::Frame { kind, payload } => return self.on_frame(kind, &payload),
            Event::Oversize { kind, len } => {
                let reason = self
                    .stopping
                    .clone()
                    .unwrap_or_else(|| self.oversize(kind, len));
                self.sandbox.kill();
                return Some((Err(reason), false));
            }
            Event::Gone => return Some((Err(self.gone()), false)),
            Event::Answer {
                call_number,
                result,
            } => self.on_answer(call_number, result),
            Event::ApprovalWait {
                call_number,
                started: true,
            } => {
                self.awaiting_approval.insert(call_number);
            }
            Event::ApprovalWait {
                call_number,
                started: false,
            } => {
                self.awaiting_approval.remove(&call_number);
            }
            Event::Abort => self.stop(ExecError::Aborted),
        }
        None
    }

    fn oversize(&self, kind: u8, len: u32) -> ExecError {
        match kind {
            protocol::LOG => self.exceeded(Limit::ConsoleOutput, "the code logged too much"),
            protocol::CALL => self.exceeded(
                Limit::ToolInput,
                format!("a tool call's params are {len} bytes of JSON"),
            ),
            protocol::DONE => {
                self.exceeded(Limit::Result, format!("the result is {len} bytes of JSON"))
            }
            other => broken(&format!("a frame of kind {other} and {len} bytes")),
        }
    }

    /// Why the run ended when its process did: a stop already decided, else a broken process
    /// (limits end the engine's instance, never the process).
    fn gone(&mut self) -> ExecError {
        let status = self.sandbox.exit_status();
        if let Some(reason) = self.stopping.clone() {
            return reason;
        }
        let status = status.map_or_else(|| "unknown status".to_owned(), |s| s.to_string());
        ExecError::Engine(format!(
            "the sandbox process ended unexpectedly ({status}){}",
            self.sandbox.printed()
        ))
    }

    fn on_frame(&mut self, kind: u8, payload: &[u8]) -> Option<Finish> {
        // After a stop only the process's end matters; its calls and lines are dropped.
        match kind {
            protocol::DONE => return Some(self.on_done(payload)),
            _ if self.stopping.is_some() => {}
            protocol::CALL => {
                if let Err(e) = self.on_call(payload) {
                    self.stop(broken(e.0));
                }
            }
            protocol::LOG => self.on_log(payload),
            protocol::IDLE => match Fields::new(payload).u32() {
                Ok(taken) if taken <= self.answers_sent => {
                    self.idle_after = Some(taken);
                    self.deliver();
                }
                _ => self.stop(broken("an idle frame that does not add up")),
            },
            protocol::OVER => self.on_over(payload),
            other => self.stop(broken(&format!("a frame of unknown kind {other}"))),
        }
        None
    }

    /// The process refused a frame of the engine's for its size: the run is over its limit.
    fn on_over(&mut self, payload: &[u8]) {
        let mut fields = Fields::new(payload);
        let Ok(kind) = fields.u8() else {
            return self.stop(broken("an empty over frame"));
        };
        let reason = match kind {
            protocol::CALL => self.exceeded(
                Limit::ToolInput,
                format!(
                    "a tool call's params are more than {} bytes of JSON",
                    self.limits.max_tool_input_bytes
                ),
            ),
            protocol::LOG => self.exceeded(Limit::ConsoleOutput, "the code logged too much"),
            protocol::DONE => self.exceeded(
                Limit::Result,
                format!(
                    "the result is more than {} bytes of JSON",
                    self.limits.max_result_bytes
                ),
            ),
            other => broken(&format!("an over frame for kind {other}")),
        };
        self.stop(reason);
    }

    fn on_log(&mut self, payload: &[u8]) {
        let [level, cut, message @ ..] = payload else {
            return self.stop(broken("a short console frame"));
        };
        let line = LogLine {
            level: LogLevel::from_wire(*level),
            message: String::from_utf8_lossy(message).into_owned(),
        };
        self.log_bytes = self.log_bytes.saturating_add(line.cost());
        if *cut != 0 || self.log_bytes > self.limits.max_console_output_bytes {
            return self.stop(self.exceeded(Limit::ConsoleOutput, "the code logged too much"));
        }
        self.logs.push(line);
    }

    fn on_call(&mut self, payload: &[u8]) -> Result<(), protocol::Malformed> {
        let mut fields = Fields::new(payload);
        let call_number = fields.u32()?;
        let over = fields.u8()? != 0;
        let tool_name = fields.text()?.to_owned();
        let input_json = fields.rest()?;
        if call_number != self.calls_made + 1 {
            return Err(protocol::Malformed("tool calls out of order"));
        }
        if over || input_json.len() as u64 > self.limits.max_tool_input_bytes {
            let error = self.exceeded(
                Limit::ToolInput,
                format!(
                    "params of {tool_name} are more than {} bytes of JSON",
                    self.limits.max_tool_input_bytes
                ),
            );
            self.stop(error);
            return Ok(());
        }
        if u64::from(self.calls_made) >= self.limits.max_bridge_requests {
            self.stop(self.exceeded(Limit::BridgeRequests, "too many tool calls in one run"));
            return Ok(());
        }
        if self.in_flight.len() as u64 >= self.limits.max_in_flight_bridge_requests {
            self.stop(self.exceeded(
                Limit::InFlightBridgeRequests,
                "too many tool calls awaiting an answer at once",
            ));
            return Ok(());
        }
        self.calls_made = call_number;
        if !self.allowed.contains(&tool_name) {
            let error = BridgeError::new(
                "TOOLREG_NOT_ALLOWED",
                format!("Tool not available in this request: {tool_name}"),
            );
            self.hold(call_number, Err(error));
            return Ok(());
        }
        // The process sends what JSON.stringify made; it can still be nested deeper than the
        // parser takes.
        let params: Value = match serde_json::from_str(input_json) {
            Ok(params) => params,
            Err(e) => {
                let error = BridgeError::new(
                    "TOOLREG_INVALID_PARAMS",
                    format!("params of {tool_name} cannot be read: {e}"),
                );
                self.hold(call_number, Err(error));
                return Ok(());
            }
        };
        if let Some(path) = forbidden_key(&params, &mut String::from("params")) {
            let error = BridgeError::new(
                "TOOLREG_EXEC_FORBIDDEN_KEY",
                format!(
                    "params of {tool_name} have a key {path}: the keys __proto__, constructor and prototype cannot be passed to host tools"
                ),
            );
            self.hold(call_number, Err(error));
            return Ok(());
        }
        self.in_flight.insert(call_number, tool_name.clone());
        let responder = Responder::new(call_number, self.events_tx.clone());
        self.bridge.call(
            BridgeRequest {
                call_number,
                tool_name,
                input_json: input_json.to_owned(),
            },
            responder,
        );
        Ok(())
    }

    fn on_answer(&mut self, call_number: u32, result: Result<String, BridgeError>) {
        if self.stopping.is_some() {
            return;
        }
        // Answers to unknown or settled calls are dropped: only the run creates calls.
        let Some(tool_name) = self.in_flight.remove(&call_number) else {
            return;
        };
        if let Ok(json) = &result
            && json.len() as u64 > self.limits.max_tool_output_bytes
        {
            let detail = format!("{tool_name} returned {} bytes", json.len());
            return self.stop(self.exceeded(Limit::ToolOutput, detail));
        }
        self.hold(call_number, result);
    }

    /// Keeps a call's answer until the engine asks for one.
    fn hold(&mut self, call_number: u32, result: Result<String, BridgeError>) {
        self.held.push_back((call_number, result));
        self.deliver();
    }

    /// Sends the oldest held answer when the engine waits for one and has taken every answer
    /// sent before; the code has work again, so the clock runs.
    fn deliver(&mut self) {
        if self.idle_after != Some(self.answers_sent) {
            return;
        }
        let Some((call_number, result)) = self.held.pop_front() else {
            return;
        };
        let number = call_number.to_le_bytes();
        match result {
            Ok(json) => self
                .sandbox
                .send(protocol::ANSWER, &[&number, &[1], json.as_bytes()]),
            Err(error) => self.sandbox.send(
                protocol::ANSWER,
                &[
                    &number,
                    &[0],
                    &protocol::len_prefix(&error.code),
                    error.code.as_bytes(),
                    error.message.as_bytes(),
                ],
            ),
        }
        self.answers_sent += 1;
    }

    fn on_done(&mut self, payload: &[u8]) -> Finish {
        if let Some(reason) = self.stopping.clone() {
            return (Err(reason), true);
        }
        let end = match protocol::decode_done(payload) {
            Ok(end) => end,
            Err(e) => return (Err(broken(e.0)), false),
        };
        let max_text = usize::try_from(max_error_bytes(&self.limits)).unwrap_or(usize::MAX);
        // The error's whole sentence fits `max_text`: the code's text gets what the sentence
        // around it leaves (measured by writing the sentence around an empty text).
        let within = |make: &dyn Fn(String) -> ExecError, text: String| {
            let framing = make(String::new()).to_string().len();
            make(cut_text(text, max_text.saturating_sub(framing)))
        };
        let result = match end {
            RunEnd::Returned { json: Some(json) }
                if json.len() as u64 > self.limits.max_result_bytes =>
            {
                let detail = format!("the result is {} bytes of JSON", json.len());
                Err(self.exceeded(Limit::Result, detail))
            }
            RunEnd::Returned { json: Some(json) } if json_depth(&json) > MAX_RESULT_DEPTH => {
                let detail = format!(
                    "the result nests more than {MAX_RESULT_DEPTH} levels deep; return flatter data"
                );
                Err(self.exceeded(Limit::ResultDepth, detail))
            }
            RunEnd::Returned { json } => Ok(json),
            RunEnd::ResultTooLarge { bytes } => Err(self.exceeded(
                Limit::Result,
                format!(
                    "the result is more than {} bytes of JSON",
                    bytes.saturating_sub(1)
                ),
            )),
            RunEnd::Syntax { message } => Err(within(&ExecError::Syntax, message)),
            RunEnd::Uncaught {
                name,
                message,
                code,
            } => {
                let framing = ExecError::Uncaught(Thrown::default()).to_string().len();
                let budget = max_text.saturating_sub(framing);
                Err(ExecError::Uncaught(Thrown::within(
                    name, message, code, budget,
                )))
            }
            RunEnd::PendingCalls { count, names } => {
                let fate = pending_fate(count, self.in_flight.len(), self.held.len());
                Err(within(
                    &|names| ExecError::PendingToolCalls {
                        count,
                        names,
                        fate: fate.clone(),
                    },
                    names,
                ))
            }
            RunEnd::Unsettled => Err(ExecError::Unsettled),
            RunEnd::ResultNotJson { message } => Err(within(&ExecError::ResultNotJson, message)),
            RunEnd::Stopped => Err(broken("it stopped without being asked")),
            RunEnd::MemoryLimit => {
                let value = self.limits.memory_limit_bytes;
                Err(self.exceeded(
                    Limit::Memory,
                    format!("the code allocated more than {value} bytes"),
                ))
            }
            RunEnd::StackLimit => {
                Err(self.exceeded(Limit::StackSize, "the code recursed too deep"))
            }
            RunEnd::Engine { message } => Err(within(&ExecError::Engine, message)),
        };
        (result, true)
    }
}

/// After a run its process drops the run's instance and prepares the next, then says `READY`;
/// only then may it serve again (so the next run's clock never pays for this one's clean-up).
/// False when it did not within [`READY_TIMEOUT`] or broke: it is replaced then.
pub(crate) fn wait_ready(sandbox: &Sandbox, events: &Receiver<Event>) -> bool {
    let until = Instant::now() + READY_TIMEOUT;
    let ready = loop {
        match events.recv_timeout(until.saturating_duration_since(Instant::now())) {
            Ok(Event::Frame {
                kind: protocol::READY,
                payload,
            }) => break payload[..] == protocol::PROTOCOL_VERSION.to_le_bytes(),
            // Late answers, approvals and aborts of the run that is over, and what its engine
            // said before it saw the stop.
            Ok(Event::Frame { .. } | Event::Answer { .. } | Event::ApprovalWait { .. }) => {}
            Ok(Event::Abort) => {}
            Ok(Event::Oversize { .. } | Event::Gone) | Err(_) => break false,
        }
    };
    sandbox.unroute();
    ready
}

/// What became of the calls a run left pending: those still running at the host are aborted as
/// the run closes; those that ran already cannot be, and their answers are dropped; those made
/// in the turn that returned never left the sandbox.
fn pending_fate(count: usize, running: usize, ran: usize) -> String {
    if running == count {
        return "; they were aborted".to_owned();
    }
    let never = count.saturating_sub(running + ran);
    let parts = [
        (running, "still running were aborted"),
        (ran, "had already run and their results were dropped"),
        (never, "never started"),
    ];
    let said: Vec<String> = parts
        .iter()
        .filter(|(n, _)| *n > 0)
        .map(|(n, what)| format!("{n} {what}"))
        .collect();
    format!("; {}", said.join(", "))
}

fn broken(what: &str) -> ExecError {
    ExecError::Engine(format!("the sandbox process broke the protocol: {what}"))
}

/// `text` cut to at most `max` bytes on a character boundary, marked when cut.
/// The code with each raw U+0000 written as the escape `\u0000`: the engine reads its source as
/// a C string, where a raw NUL would end it. Inside string, template and regular-expression
/// literals the escape means the same character (only `String.raw` sees the escape); anywhere
/// else both are a syntax error, which the run reports in words.
fn without_raw_nul(code: String) -> String {
    if code.contains('\0') {
        code.replace('\0', "\\u0000")
    } else {
        code
    }
}

/// `text` in at most `max` bytes, the marker of the cut included (whole characters only).
pub(super) fn cut_text(mut text: String, max: usize) -> String {
    if text.len() <= max {
        return text;
    }
    let marker = if max > CUT_MARKER.len() {
        CUT_MARKER
    } else {
        ""
    };
    let mut end = max - marker.len();
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    text.truncate(end);
    text.push_str(marker);
    text
}

/// What ends a cut text: says it was cut, and counts against the same budget.
const CUT_MARKER: &str = " …(cut)";

/// How deep a JSON text nests (`[]` and `{}` count one level each; brackets inside strings do
/// not), read in one pass over the bytes without building the value.
fn json_depth(json: &str) -> u64 {
    let (mut depth, mut deepest, mut in_string, mut escaped) = (0u64, 0u64, false, false);
    for byte in json.bytes() {
        if in_string {
            match byte {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match byte {
            b'"' => in_string = true,
            b'[' | b'{' => {
                depth += 1;
                deepest = deepest.max(depth);
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    deepest
}

/// The path of the first forbidden key in `value`, like `params.a[0].__proto__`.
fn forbidden_key(value: &Value, path: &mut String) -> Option<String> {
    let len = path.len();
    let found = match value {
        Value::Object(map) => map.iter().find_map(|(key, child)| {
            path.truncate(len);
            if FORBIDDEN_KEYS.contains(&key.as_str()) {
                return Some(format!("{path}.{key}"));
            }
            path.push('.');
            path.push_str(key);
            forbidden_key(child, path)
        }),
        Value::Array(items) => items.iter().enumerate().find_map(|(i, child)| {
            path.truncate(len);
            path.push_str(&format!("[{i}]"));
            forbidden_key(child, path)
        }),
        _ => None,
    };
    path.truncate(len);
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_depth_counts_brackets_outside_strings() {
        assert_eq!(json_depth("1"), 0);
        assert_eq!(json_depth(r#"{"a":[1,{"b":"[[[{{"}]}"#), 3);
        assert_eq!(json_depth(r#"["\"[", [[]]]"#), 3);
        let deep = format!("{}{}", "[".repeat(200), "]".repeat(200));
        assert_eq!(json_depth(&deep), 200);
    }

    #[test]
    fn forbidden_keys_are_found_with_their_path() {
        let find =
            |json: &str| forbidden_key(&serde_json::from_str(json).unwrap(), &mut "params".into());
        assert_eq!(find(r#"{"a":{"b":[1,{"c":2}]}}"#), None);
        assert_eq!(
            find(r#"{"__proto__":{"x":1}}"#),
            Some("params.__proto__".into())
        );
        assert_eq!(
            find(r#"{"a":[0,{"b":{"constructor":{"prototype":{}}}}]}"#),
            Some("params.a[1].b.constructor".into())
        );
        assert_eq!(
            find(r#"[{"prototype":1}]"#),
            Some("params[0].prototype".into())
        );
        assert_eq!(find(r#"{"protos":1,"proto":2}"#), None);
    }

    #[test]
    fn cut_text_keeps_characters_whole() {
        assert_eq!(cut_text("abc".into(), 3), "abc");
        assert_eq!(cut_text("aé".into(), 2), "a");
        assert_eq!(cut_text("aé".repeat(20), 12), "aé …(cut)");
        // Whatever the text and the budget, the cut text fits it.
        for max in 0..40 {
            for text in ["é".repeat(30), "x".repeat(50), "a€b".repeat(9)] {
                assert!(cut_text(text, max).len() <= max);
            }
        }
    }
}
