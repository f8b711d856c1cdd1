//! One run: a fresh QuickJS runtime and context on the calling thread, driven until the code's
//! promise settles. Nothing outlives the run, so nothing can leak into the next one.

use std::cell::RefCell;
use std::collections::{BTreeMap, HashSet};
use std::rc::Rc;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender};
use std::time::{Duration, Instant};

use rquickjs::context::EvalOptions;
use rquickjs::context::intrinsic::{
    Date, Eval, Json, MapSet, Promise as PromiseIntrinsic, Proxy, RegExp, RegExpCompiler,
    TypedArrays,
};
use rquickjs::function::{Opt, Rest};
use rquickjs::promise::PromiseState;
use rquickjs::{Context, Ctx, Exception, Function, Persistent, Promise, Runtime, Value};

use super::bridge::{Bridge, BridgeError, BridgeRequest, Event, Responder};
use super::{ExecError, ExecLimits, Limit, Thrown};

/// What the engine offers besides the base objects: no `Performance`, `WeakRef` or
/// `DOMException`; `Eval` only so the host can compile the code (the prelude removes `eval`).
type Intrinsics = (
    Date,
    Eval,
    RegExpCompiler,
    RegExp,
    Json,
    Proxy,
    MapSet,
    TypedArrays,
    PromiseIntrinsic,
);

const PRELUDE: &str = include_str!("prelude.js");

/// A run: the model's code, the tools it may call and how to reach them.
pub struct ExecJob {
    /// The body of an async function (top-level `await` and `return`).
    pub code: String,
    /// Tools the code may call; each becomes `tools.<name>`.
    pub tool_names: Vec<String>,
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
    fn parse(name: &str) -> LogLevel {
        match name {
            "info" => LogLevel::Info,
            "warn" => LogLevel::Warn,
            "error" => LogLevel::Error,
            "debug" => LogLevel::Debug,
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

/// How a run ended.
#[derive(Debug)]
pub struct ExecOutcome {
    /// The returned value as JSON (`None` for `undefined`), or why the run failed.
    pub result: Result<Option<String>, ExecError>,
    /// Console output up to the failure, if any.
    pub logs: Vec<LogLine>,
    /// Tool calls the code made.
    pub tool_calls: u32,
}

/// Flags the run shares with its abort handle and with the engine's interrupt handler.
pub(crate) struct RunSignals {
    aborted: AtomicBool,
    /// Set when a limit other than time was hit: stops the code even inside `try`.
    failed: AtomicBool,
    epoch: Instant,
    /// Nanoseconds after `epoch`; `u64::MAX` until the run starts.
    deadline_ns: AtomicU64,
}

impl RunSignals {
    pub(crate) fn new() -> Self {
        RunSignals {
            aborted: AtomicBool::new(false),
            failed: AtomicBool::new(false),
            epoch: Instant::now(),
            deadline_ns: AtomicU64::new(u64::MAX),
        }
    }

    pub(crate) fn abort(&self) {
        self.aborted.store(true, Ordering::SeqCst);
    }

    fn now_ns(&self) -> u64 {
        u64::try_from(self.epoch.elapsed().as_nanos()).unwrap_or(u64::MAX)
    }

    fn start_clock(&self, timeout: Duration) {
        let timeout = u64::try_from(timeout.as_nanos()).unwrap_or(u64::MAX);
        self.deadline_ns
            .store(self.now_ns().saturating_add(timeout), Ordering::SeqCst);
    }

    /// Moves the deadline later, for time spent idle waiting on an approval.
    fn extend_deadline(&self, by: Duration) {
        let by = u64::try_from(by.as_nanos()).unwrap_or(u64::MAX);
        let deadline = self.deadline_ns.load(Ordering::SeqCst);
        self.deadline_ns
            .store(deadline.saturating_add(by), Ordering::SeqCst);
    }

    fn remaining(&self) -> Duration {
        Duration::from_nanos(
            self.deadline_ns
                .load(Ordering::SeqCst)
                .saturating_sub(self.now_ns()),
        )
    }

    fn timed_out(&self) -> bool {
        self.now_ns() >= self.deadline_ns.load(Ordering::SeqCst)
    }

    fn should_stop(&self) -> bool {
        self.aborted.load(Ordering::Relaxed)
            || self.failed.load(Ordering::Relaxed)
            || self.timed_out()
    }
}

struct PendingCall {
    tool_name: String,
    resolve: Persistent<Function<'static>>,
    reject: Persistent<Function<'static>>,
}

/// Everything the native functions inside the context share with the driver loop.
struct RunState {
    limits: ExecLimits,
    allowed: HashSet<String>,
    bridge: Arc<dyn Bridge>,
    events: Sender<Event>,
    signals: Arc<RunSignals>,
    calls_made: u32,
    pending: BTreeMap<u32, PendingCall>,
    logs: Vec<LogLine>,
    log_bytes: u64,
    /// The first limit error; reported whatever the code did after it.
    failure: Option<ExecError>,
}

type SharedState = Rc<RefCell<RunState>>;

impl RunState {
    fn exceeded(&self, limit: Limit, detail: impl Into<String>) -> ExecError {
        ExecError::LimitExceeded {
            limit,
            value: self.limits.value(limit),
            detail: detail.into(),
        }
    }

    /// Records a limit failure, stops the code (even inside `try`) and throws at the call site.
    fn fail(&mut self, ctx: &Ctx<'_>, error: ExecError) -> rquickjs::Error {
        let message = error.to_string();
        self.failure.get_or_insert(error);
        self.signals.failed.store(true, Ordering::SeqCst);
        Exception::throw_internal(ctx, &message)
    }

    /// Why the run must stop now, if it must.
    fn stop_reason(&mut self) -> Option<ExecError> {
        if self.signals.aborted.load(Ordering::SeqCst) {
            return Some(ExecError::Aborted);
        }
        if let Some(failure) = self.failure.clone() {
            return Some(failure);
        }
        if self.signals.timed_out() {
            return Some(self.exceeded(
                Limit::Timeout,
                format!("the run took longer than {} ms", self.limits.timeout_ms),
            ));
        }
        None
    }
}

/// A QuickJS runtime with its one context. Each run gets one no code has touched, and it is
/// dropped after the run: engines are never reused.
pub(crate) struct Engine {
    // Field order is drop order: the context before its runtime.
    context: Context,
    runtime: Runtime,
}

impl Engine {
    fn new() -> rquickjs::Result<Self> {
        let runtime = Runtime::new()?;
        let context = Context::custom::<Intrinsics>(&runtime)?;
        Ok(Engine { context, runtime })
    }
}

thread_local! {
    /// The next run's engine, built while this thread was idle.
    static SPARE: RefCell<Option<Engine>> = const { RefCell::new(None) };
}

/// Builds this thread's next engine ahead of time, so its cost is off the next run's path.
pub(crate) fn prepare_spare() {
    SPARE.with(|spare| {
        let mut spare = spare.borrow_mut();
        if spare.is_none() {
            *spare = Engine::new().ok();
        }
    });
}

fn fresh_engine() -> rquickjs::Result<Engine> {
    match SPARE.with(|spare| spare.borrow_mut().take()) {
        Some(engine) => Ok(engine),
        None => Engine::new(),
    }
}

/// Runs one job on this thread; `events` carries tool answers, approval waits and aborts.
/// Also returns the used engine, for the caller to free after delivering the outcome.
pub(crate) fn run(
    job: ExecJob,
    signals: Arc<RunSignals>,
    events: Receiver<Event>,
    events_tx: Sender<Event>,
) -> (ExecOutcome, Option<Engine>) {
    let limits = job.limits;
    let failed = |error| {
        let outcome = ExecOutcome {
            result: Err(error),
            logs: Vec::new(),
            tool_calls: 0,
        };
        (outcome, None)
    };
    if job.code.len() as u64 > limits.max_source_bytes {
        return failed(ExecError::LimitExceeded {
            limit: Limit::Source,
            value: limits.max_source_bytes,
            detail: format!("the code is {} bytes", job.code.len()),
        });
    }
    if signals.aborted.load(Ordering::SeqCst) {
        return failed(ExecError::Aborted);
    }
    let engine = match fresh_engine() {
        Ok(engine) => engine,
        Err(e) => return failed(ExecError::Engine(e.to_string())),
    };
    let Engine { runtime, context } = &engine;
    runtime.set_memory_limit(usize::try_from(limits.memory_limit_bytes).unwrap_or(usize::MAX));
    runtime.set_max_stack_size(usize::try_from(limits.max_stack_size_bytes).unwrap_or(usize::MAX));
    let interrupt_signals = signals.clone();
    runtime.set_interrupt_handler(Some(Box::new(move || interrupt_signals.should_stop())));
    signals.start_clock(Duration::from_millis(limits.timeout_ms));

    let bridge = job.bridge.clone();
    let state: SharedState = Rc::new(RefCell::new(RunState {
        limits,
        allowed: job.tool_names.iter().cloned().collect(),
        bridge: job.bridge,
        events: events_tx,
        signals: signals.clone(),
        calls_made: 0,
        pending: BTreeMap::new(),
        logs: Vec::new(),
        log_bytes: 0,
        failure: None,
    }));

    let result = context.with(|ctx| {
        let result = drive(&ctx, &state, &job.code, &job.tool_names, &events);
        // Persistent handles must be released before the runtime is freed.
        let pending = std::mem::take(&mut state.borrow_mut().pending);
        for call_number in pending.keys() {
            bridge.cancel(*call_number);
        }
        drop(pending);
        result
    });
    let mut state = state.borrow_mut();
    let outcome = ExecOutcome {
        result,
        logs: std::mem::take(&mut state.logs),
        tool_calls: state.calls_made,
    };
    (outcome, Some(engine))
}

fn drive<'js>(
    ctx: &Ctx<'js>,
    state: &SharedState,
    code: &str,
    tool_names: &[String],
    events: &Receiver<Event>,
) -> Result<Option<String>, ExecError> {
    install_globals(ctx, state, tool_names).map_err(|e| failure(ctx, state, e, false))?;
    let mut options = EvalOptions::default();
    options.global = true;
    options.backtrace_barrier = true;
    options.filename = Some("tool_exec.js".to_owned());
    // The opening line keeps the code's line numbers in error messages.
    let wrapped = format!("(async () => {{{code}\n}})()");
    let value: Value = ctx
        .eval_with_options(wrapped, options)
        .map_err(|e| failure(ctx, state, e, true))?;
    let Some(promise) = value.as_promise().cloned() else {
        return finish(ctx, state, value);
    };
    let signals = state.borrow().signals.clone();
    let mut approval_waits = 0u32;
    loop {
        while ctx.execute_pending_job() {
            if signals.should_stop() {
                break;
            }
        }
        if let Some(reason) = state.borrow_mut().stop_reason() {
            return Err(reason);
        }
        match promise.state() {
            PromiseState::Resolved => {
                let value: Value = promise
                    .result()
                    .unwrap_or(Ok(Value::new_undefined(ctx.clone())))
                    .map_err(|e| failure(ctx, state, e, false))?;
                return finish(ctx, state, value);
            }
            PromiseState::Rejected => {
                let error = match promise.result::<Value>() {
                    Some(Err(e)) => failure(ctx, state, e, false),
                    _ => ExecError::Engine("a rejected promise without a reason".to_owned()),
                };
                return Err(error);
            }
            PromiseState::Pending => {}
        }
        if state.borrow().pending.is_empty() {
            return Err(ExecError::Unsettled);
        }
        match next_event(state, events, approval_waits > 0)? {
            Event::Answer {
                call_number,
                result,
            } => settle(ctx, state, call_number, result)?,
            Event::ApprovalWait { started: true } => approval_waits += 1,
            Event::ApprovalWait { started: false } => {
                approval_waits = approval_waits.saturating_sub(1)
            }
            Event::Abort => return Err(ExecError::Aborted),
        }
    }
}

/// Waits for the host. While an approval is pending the clock stands still.
fn next_event(
    state: &SharedState,
    events: &Receiver<Event>,
    awaiting_approval: bool,
) -> Result<Event, ExecError> {
    let signals = state.borrow().signals.clone();
    let disconnected = || ExecError::Engine("the run's event channel closed".to_owned());
    if awaiting_approval {
        let idle_since = Instant::now();
        let event = events.recv().map_err(|_| disconnected());
        signals.extend_deadline(idle_since.elapsed());
        return event;
    }
    match events.recv_timeout(signals.remaining()) {
        Ok(event) => Ok(event),
        Err(RecvTimeoutError::Timeout) => {
            Err(state.borrow_mut().stop_reason().unwrap_or_else(|| {
                ExecError::Engine("woke before the deadline without an event".to_owned())
            }))
        }
        Err(RecvTimeoutError::Disconnected) => Err(disconnected()),
    }
}

/// Delivers a tool's answer to the promise the code holds.
fn settle<'js>(
    ctx: &Ctx<'js>,
    state: &SharedState,
    call_number: u32,
    result: Result<String, BridgeError>,
) -> Result<(), ExecError> {
    // Answers to unknown or already settled calls are ignored: only the run creates calls.
    let Some(call) = state.borrow_mut().pending.remove(&call_number) else {
        return Ok(());
    };
    let to_error = |e| failure(ctx, state, e, false);
    let (function, argument) = match result {
        Ok(json) => {
            let max = state.borrow().limits.max_tool_output_bytes;
            if json.len() as u64 > max {
                let mut state = state.borrow_mut();
                let error = state.exceeded(
                    Limit::ToolOutput,
                    format!("{} returned {} bytes", call.tool_name, json.len()),
                );
                state.failure.get_or_insert(error.clone());
                return Err(error);
            }
            match ctx.json_parse(json) {
                Ok(value) => (call.resolve, value),
                Err(e) => {
                    failure(ctx, state, e, false);
                    let error = BridgeError::new(
                        "TOOLREG_EXEC_BAD_OUTPUT",
                        format!("{} returned output that is not JSON", call.tool_name),
                    );
                    (call.reject, tool_error(ctx, &error).map_err(to_error)?)
                }
            }
        }
        Err(error) => (call.reject, tool_error(ctx, &error).map_err(to_error)?),
    };
    let function = function.restore(ctx).map_err(to_error)?;
    // Settling can run the code's own getters (a `then` on Object.prototype): no borrow held.
    function.call::<_, ()>((argument,)).map_err(to_error)
}

/// An `Error` carrying the host's code, as the code will catch it.
fn tool_error<'js>(ctx: &Ctx<'js>, error: &BridgeError) -> rquickjs::Result<Value<'js>> {
    let exception = Exception::from_message(ctx.clone(), &error.message)?;
    exception.set("code", error.code.as_str())?;
    Ok(exception.into_value())
}

/// The returned value as JSON, once no tool call is left pending.
fn finish<'js>(
    ctx: &Ctx<'js>,
    state: &SharedState,
    value: Value<'js>,
) -> Result<Option<String>, ExecError> {
    {
        let state = state.borrow();
        if !state.pending.is_empty() {
            let names: Vec<&str> = state
                .pending
                .values()
                .map(|c| c.tool_name.as_str())
                .collect();
            return Err(ExecError::PendingToolCalls {
                count: names.len(),
                names: names.join(", "),
            });
        }
    }
    let json = if value.is_undefined() {
        None
    } else {
        match ctx.json_stringify(value) {
            Ok(json) => json
                .map(|s| s.to_string())
                .transpose()
                .map_err(|e| failure(ctx, state, e, false))?,
            Err(e) => {
                return Err(match failure(ctx, state, e, false) {
                    ExecError::Uncaught(thrown) => ExecError::ResultNotJson(thrown.to_string()),
                    other => other,
                });
            }
        }
    };
    let mut state = state.borrow_mut();
    if let Some(reason) = state.stop_reason() {
        return Err(reason);
    }
    if let Some(json) = &json
        && json.len() as u64 > state.limits.max_result_bytes
    {
        return Err(state.exceeded(
            Limit::Result,
            format!("the result is {} bytes of JSON", json.len()),
        ));
    }
    Ok(json)
}

/// Turns an engine error into the run's error: a stop reason first (abort, limit, timeout),
/// else the exception the code threw.
fn failure(
    ctx: &Ctx<'_>,
    state: &SharedState,
    error: rquickjs::Error,
    compiling: bool,
) -> ExecError {
    let exception = if error.is_exception() {
        Some(ctx.catch())
    } else {
        None
    };
    if let Some(reason) = state.borrow_mut().stop_reason() {
        return reason;
    }
    let Some(exception) = exception else {
        return match error {
            rquickjs::Error::Allocation => memory_exceeded(state),
            other => ExecError::Engine(other.to_string()),
        };
    };
    let thrown = describe(ctx, exception);
    if thrown.message == "out of memory" || (thrown.name.is_empty() && thrown.message == "null") {
        return memory_exceeded(state);
    }
    if thrown.message.contains("stack overflow") || thrown.message.contains("call stack size") {
        let state = state.borrow();
        return state.exceeded(Limit::StackSize, "the code recursed too deep");
    }
    if compiling && thrown.name == "SyntaxError" {
        return ExecError::Syntax(thrown.message);
    }
    ExecError::Uncaught(thrown)
}

fn memory_exceeded(state: &SharedState) -> ExecError {
    let state = state.borrow();
    let value = state.limits.memory_limit_bytes;
    state.exceeded(
        Limit::Memory,
        format!("the code allocated more than {value} bytes"),
    )
}

/// Name, message and code of a thrown value. Reading them may run the code's getters; a getter
/// that throws just leaves the field empty.
fn describe<'js>(ctx: &Ctx<'js>, value: Value<'js>) -> Thrown {
    let read = |key: &str| -> Option<String> {
        let object = value.as_object()?;
        match object.get::<_, Option<rquickjs::Coerced<String>>>(key) {
            Ok(field) => field.map(|s| s.0),
            Err(_) => {
                ctx.catch();
                None
            }
        }
    };
    if value.is_error() {
        return Thrown {
            name: read("name").unwrap_or_default(),
            message: read("message").unwrap_or_default(),
            code: read("code"),
        };
    }
    let message = match ctx.json_stringify(value.clone()) {
        Ok(Some(json)) => json.to_string().unwrap_or_default(),
        Ok(None) => "undefined".to_owned(),
        Err(_) => {
            ctx.catch();
            "a value that cannot be shown".to_owned()
        }
    };
    Thrown {
        name: String::new(),
        message,
        code: None,
    }
}

/// Installs `tools`, `parallel`, `settle` and `console` through the prelude.
fn install_globals<'js>(
    ctx: &Ctx<'js>,
    state: &SharedState,
    tool_names: &[String],
) -> rquickjs::Result<()> {
    let call_state = state.clone();
    let call = Function::new(
        ctx.clone(),
        move |ctx: Ctx<'js>, name: String, params: Opt<Value<'js>>| {
            call_tool(&ctx, &call_state, name, params.0)
        },
    )?;
    let log_state = state.clone();
    let log = Function::new(
        ctx.clone(),
        move |ctx: Ctx<'js>, level: String, args: Rest<Value<'js>>| {
            write_log(&ctx, &log_state, &level, args.0)
        },
    )?;
    let prelude: Function = ctx.eval(PRELUDE)?;
    prelude.call::<_, ()>((call, log, tool_names.to_vec()))
}

/// `tools.<name>(params)`: checks the limits, hands the call to the host, returns its promise.
fn call_tool<'js>(
    ctx: &Ctx<'js>,
    state: &SharedState,
    tool_name: String,
    params: Option<Value<'js>>,
) -> rquickjs::Result<Promise<'js>> {
    // Serialising can run the code's toJSON: do it before borrowing the state.
    let input_json = match params {
        None => "{}".to_owned(),
        Some(value) if value.is_undefined() => "{}".to_owned(),
        Some(value) => match ctx.json_stringify(value)? {
            Some(json) => json.to_string()?,
            None => {
                return Err(Exception::throw_type(
                    ctx,
                    &format!("params of {tool_name} must be a JSON value"),
                ));
            }
        },
    };
    let (promise, resolve, reject) = ctx.promise()?;
    let mut guard = state.borrow_mut();
    if !guard.allowed.contains(&tool_name) {
        drop(guard);
        let error = BridgeError::new(
            "TOOLREG_NOT_ALLOWED",
            format!("Tool not available in this request: {tool_name}"),
        );
        reject.call::<_, ()>((tool_error(ctx, &error)?,))?;
        return Ok(promise);
    }
    if input_json.len() as u64 > guard.limits.max_tool_input_bytes {
        let error = guard.exceeded(
            Limit::ToolInput,
            format!(
                "params of {tool_name} are {} bytes of JSON",
                input_json.len()
            ),
        );
        return Err(guard.fail(ctx, error));
    }
    if u64::from(guard.calls_made) >= guard.limits.max_bridge_requests {
        let error = guard.exceeded(Limit::BridgeRequests, "too many tool calls in one run");
        return Err(guard.fail(ctx, error));
    }
    if guard.pending.len() as u64 >= guard.limits.max_in_flight_bridge_requests {
        let error = guard.exceeded(
            Limit::InFlightBridgeRequests,
            "too many tool calls awaiting an answer at once",
        );
        return Err(guard.fail(ctx, error));
    }
    guard.calls_made += 1;
    let call_number = guard.calls_made;
    guard.pending.insert(
        call_number,
        PendingCall {
            tool_name: tool_name.clone(),
            resolve: Persistent::save(ctx, resolve),
            reject: Persistent::save(ctx, reject),
        },
    );
    let bridge = guard.bridge.clone();
    let responder = Responder::new(call_number, guard.events.clone());
    drop(guard);
    bridge.call(
        BridgeRequest {
            call_number,
            tool_name,
            input_json,
        },
        responder,
    );
    Ok(promise)
}

/// `console.<level>(...args)`: strings as they are, other values as JSON.
fn write_log<'js>(
    ctx: &Ctx<'js>,
    state: &SharedState,
    level: &str,
    args: Vec<Value<'js>>,
) -> rquickjs::Result<()> {
    let mut parts = Vec::with_capacity(args.len());
    for value in args {
        parts.push(format_value(ctx, state, value)?);
    }
    let message = parts.join(" ");
    let mut guard = state.borrow_mut();
    guard.log_bytes += message.len() as u64 + 1;
    if guard.log_bytes > guard.limits.max_console_output_bytes {
        let error = guard.exceeded(Limit::ConsoleOutput, "the code logged too much");
        return Err(guard.fail(ctx, error));
    }
    guard.logs.push(LogLine {
        level: LogLevel::parse(level),
        message,
    });
    Ok(())
}

fn format_value<'js>(
    ctx: &Ctx<'js>,
    state: &SharedState,
    value: Value<'js>,
) -> rquickjs::Result<String> {
    if let Some(text) = value.as_string() {
        return text.to_string();
    }
    if value.is_undefined() {
        return Ok("undefined".to_owned());
    }
    if value.is_error() {
        let thrown = describe(ctx, value);
        return Ok(format!("{}: {}", thrown.name, thrown.message));
    }
    match ctx.json_stringify(value) {
        Ok(Some(json)) => json.to_string(),
        Ok(None) => Ok("[not JSON]".to_owned()),
        // An interrupt (time, abort, limit) must propagate; a cycle or a BigInt just prints.
        Err(e) if state.borrow().signals.should_stop() => Err(e),
        Err(_) => {
            ctx.catch();
            Ok("[not JSON]".to_owned())
        }
    }
}
