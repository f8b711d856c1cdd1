//! Runs on the engine thread: one run at a time, each in a fresh QuickJS runtime and context
//! driven until the code's promise settles. Nothing outlives a run, so nothing leaks into the
//! next one. Tool calls, console lines and the outcome leave as frames; the addon decides on
//! every limit that guards the host, so this side only reports what the code did.

use std::cell::RefCell;
use std::collections::{BTreeMap, HashSet};
use std::rc::Rc;
use std::sync::atomic::Ordering;
use std::sync::mpsc::Receiver;

use rquickjs::context::EvalOptions;
use rquickjs::context::intrinsic::{
    Date, Eval, Json, MapSet, Promise as PromiseIntrinsic, Proxy, RegExp, RegExpCompiler,
    TypedArrays,
};
use rquickjs::function::{Opt, Rest};
use rquickjs::promise::PromiseState;
use rquickjs::{Context, Ctx, Exception, Function, Persistent, Promise, Runtime, Value, qjs};

use crate::protocol::{self, CALL, DONE, IDLE, LOG, RunEnd, RunRequest};
use crate::{Inbound, Outbox, STOP_REQUESTED, alloc};

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

/// A QuickJS runtime with its one context; each run gets one no code has touched.
struct Engine {
    // Field order is drop order: the context before its runtime.
    context: Context,
    _runtime: Runtime,
}

impl Engine {
    fn new() -> rquickjs::Result<Self> {
        let runtime = Runtime::new()?;
        // No stack check of the engine's own: it throws what the code can catch. The thread's
        // guard region is the limit (see guard.rs).
        runtime.set_max_stack_size(0);
        runtime.set_interrupt_handler(Some(Box::new(|| STOP_REQUESTED.load(Ordering::Relaxed))));
        let context = Context::custom::<Intrinsics>(&runtime)?;
        Ok(Engine {
            context,
            _runtime: runtime,
        })
    }
}

/// Serves runs until the main thread hangs up. The next run's engine is built while idle.
pub fn serve(inbox: &Receiver<Inbound>, outbox: &Outbox, _max_stack: u64) {
    let mut spare = Engine::new().ok();
    while let Ok(inbound) = inbox.recv() {
        // Answers and stops that arrive between runs belong to a run that is over.
        let Inbound::Run(request) = inbound else {
            continue;
        };
        let (end, used) = match spare.take().map_or_else(Engine::new, Ok) {
            Ok(engine) => {
                alloc::arm(request.memory_limit_bytes);
                (run(&engine, request, inbox, outbox), Some(engine))
            }
            Err(e) => (
                RunEnd::Engine {
                    message: e.to_string(),
                },
                None,
            ),
        };
        send(outbox, DONE, &[&protocol::encode_done(&end)]);
        alloc::disarm();
        drop(used);
        spare = Engine::new().ok();
    }
}

fn send(outbox: &Outbox, kind: u8, parts: &[&[u8]]) {
    let mut out = outbox.lock().unwrap_or_else(|p| p.into_inner());
    if protocol::write_frame(&mut *out, kind, parts).is_err() {
        // The addon is gone; nobody is left to serve.
        crate::guard::exit_now(0, b"");
    }
}

struct OutgoingCall {
    call: u32,
    tool_name: String,
    input_json: String,
}

struct PendingCall {
    tool_name: String,
    resolve: Persistent<Function<'static>>,
    reject: Persistent<Function<'static>>,
}

/// Everything the native functions inside the context share with the driver loop.
struct RunState {
    request: RunRequest,
    allowed: HashSet<String>,
    outbox: Outbox,
    calls_made: u32,
    pending: BTreeMap<u32, PendingCall>,
    /// Calls made in the current turn, sent only when the code goes on to wait (see `drive`).
    outgoing: Vec<OutgoingCall>,
    /// Set while the returned value is turned into JSON: a `toJSON` may not call tools then.
    serializing: bool,
    /// The prelude's `clip(value, max)`: a value as a string of at most `max` UTF-16 units,
    /// cut inside the engine before it is copied out.
    clip: Option<Persistent<Function<'static>>>,
}

type SharedState = Rc<RefCell<RunState>>;

fn run(engine: &Engine, request: RunRequest, inbox: &Receiver<Inbound>, outbox: &Outbox) -> RunEnd {
    let state: SharedState = Rc::new(RefCell::new(RunState {
        allowed: request.tool_names.iter().cloned().collect(),
        request,
        outbox: outbox.clone(),
        calls_made: 0,
        pending: BTreeMap::new(),
        outgoing: Vec::new(),
        serializing: false,
        clip: None,
    }));
    engine.context.with(|ctx| {
        let end = drive(&ctx, &state, inbox);
        // Persistent handles must be released before the runtime is freed.
        let mut state = state.borrow_mut();
        state.pending.clear();
        state.clip = None;
        end
    })
}

fn drive<'js>(ctx: &Ctx<'js>, state: &SharedState, inbox: &Receiver<Inbound>) -> RunEnd {
    if let Err(e) = install_globals(ctx, state) {
        return failure(ctx, state, e, false);
    }
    let mut options = EvalOptions::default();
    options.global = true;
    options.backtrace_barrier = true;
    options.filename = Some("tool_exec.js".to_owned());
    // The opening line keeps the code's line numbers in error messages.
    let wrapped = format!("(async () => {{{}\n}})()", state.borrow().request.code);
    let value: Value = match ctx.eval_with_options(wrapped, options) {
        Ok(value) => value,
        Err(e) => return failure(ctx, state, e, true),
    };
    let Some(promise) = value.as_promise().cloned() else {
        return finish(ctx, state, value);
    };
    loop {
        while ctx.execute_pending_job() {
            if stop_requested() {
                break;
            }
        }
        if stop_requested() {
            return RunEnd::Stopped;
        }
        match promise.state() {
            PromiseState::Resolved => {
                return match promise.result::<Value>() {
                    Some(Ok(value)) => finish(ctx, state, value),
                    None => finish(ctx, state, Value::new_undefined(ctx.clone())),
                    Some(Err(e)) => failure(ctx, state, e, false),
                };
            }
            PromiseState::Rejected => {
                return match promise.result::<Value>() {
                    Some(Err(e)) => failure(ctx, state, e, false),
                    _ => RunEnd::Engine {
                        message: "a rejected promise without a reason".to_owned(),
                    },
                };
            }
            PromiseState::Pending => {}
        }
        if state.borrow().pending.is_empty() {
            return RunEnd::Unsettled;
        }
        // The turn is over and the code waits: only now do its calls leave. A call made in the
        // turn that returned never reaches the host (it is reported as pending instead), so no
        // call can slip out in the moment between being made and the run ending.
        let outbox = state.borrow().outbox.clone();
        for call in std::mem::take(&mut state.borrow_mut().outgoing) {
            send(
                &outbox,
                CALL,
                &[
                    &call.call.to_le_bytes(),
                    &protocol::len_prefix(&call.tool_name),
                    call.tool_name.as_bytes(),
                    call.input_json.as_bytes(),
                ],
            );
        }
        // The addon's clock for this run stands still only while the code waits here.
        send(&outbox, IDLE, &[]);
        match inbox.recv() {
            Ok(Inbound::Answer { call, result }) => {
                if let Err(e) = settle(ctx, state, call, result) {
                    return failure(ctx, state, e, false);
                }
            }
            Ok(Inbound::Stop) | Err(_) => return RunEnd::Stopped,
            Ok(Inbound::Run(_)) => {
                return RunEnd::Engine {
                    message: "a new run arrived before this one ended".to_owned(),
                };
            }
        }
    }
}

fn stop_requested() -> bool {
    STOP_REQUESTED.load(Ordering::SeqCst)
}

/// Delivers a tool's answer to the promise the code holds.
fn settle<'js>(
    ctx: &Ctx<'js>,
    state: &SharedState,
    call: u32,
    result: Result<String, (String, String)>,
) -> rquickjs::Result<()> {
    // Answers to unknown or settled calls are ignored: only the run creates calls.
    let Some(pending) = state.borrow_mut().pending.remove(&call) else {
        return Ok(());
    };
    let (function, argument) = match result {
        Ok(json) => match ctx.json_parse(json) {
            Ok(value) => (pending.resolve, value),
            Err(_) => {
                ctx.catch();
                let message = format!("{} returned output that is not JSON", pending.tool_name);
                (
                    pending.reject,
                    tool_error(ctx, "TOOLREG_EXEC_BAD_OUTPUT", &message)?,
                )
            }
        },
        Err((code, message)) => (pending.reject, tool_error(ctx, &code, &message)?),
    };
    let function = function.restore(ctx)?;
    // Settling can run the code's own getters (a `then` on Object.prototype): no borrow held.
    function.call::<_, ()>((argument,))
}

/// An `Error` carrying the host's code, as the code will catch it.
fn tool_error<'js>(ctx: &Ctx<'js>, code: &str, message: &str) -> rquickjs::Result<Value<'js>> {
    let exception = Exception::from_message(ctx.clone(), message)?;
    exception.set("code", code)?;
    Ok(exception.into_value())
}

/// The returned value as JSON. It is serialised first, with tool calls refused meanwhile, and
/// only then are pending calls checked, so a `toJSON` cannot start a call behind the check.
fn finish<'js>(ctx: &Ctx<'js>, state: &SharedState, value: Value<'js>) -> RunEnd {
    let json = if value.is_undefined() {
        None
    } else {
        state.borrow_mut().serializing = true;
        let json = ctx.json_stringify(value);
        state.borrow_mut().serializing = false;
        match json {
            Ok(Some(json)) => {
                let max = state.borrow().request.max_result_bytes;
                match clipped(ctx, state, json.into_value(), max.saturating_add(1)) {
                    Ok(text) if text.len() as u64 > max => {
                        return RunEnd::ResultTooLarge {
                            bytes: text.len() as u64,
                        };
                    }
                    Ok(text) => Some(text),
                    Err(e) => return failure(ctx, state, e, false),
                }
            }
            Ok(None) => None,
            Err(e) => {
                return match failure(ctx, state, e, false) {
                    RunEnd::Uncaught { name, message, .. } => RunEnd::ResultNotJson {
                        message: if name.is_empty() {
                            message
                        } else {
                            format!("{name}: {message}")
                        },
                    },
                    other => other,
                };
            }
        }
    };
    if stop_requested() {
        return RunEnd::Stopped;
    }
    let state = state.borrow();
    if !state.pending.is_empty() {
        let names: Vec<&str> = state
            .pending
            .values()
            .map(|c| c.tool_name.as_str())
            .collect();
        return RunEnd::PendingCalls {
            count: names.len(),
            names: names.join(", "),
        };
    }
    RunEnd::Returned { json }
}

/// Turns an engine error into the run's end: a stop first, else what the code threw.
fn failure(ctx: &Ctx<'_>, state: &SharedState, error: rquickjs::Error, compiling: bool) -> RunEnd {
    let exception = error.is_exception().then(|| ctx.catch());
    if stop_requested() {
        return RunEnd::Stopped;
    }
    let Some(exception) = exception else {
        return RunEnd::Engine {
            message: error.to_string(),
        };
    };
    let (name, message, code) = describe(ctx, state, exception);
    if compiling && name == "SyntaxError" {
        return RunEnd::Syntax { message };
    }
    RunEnd::Uncaught {
        name,
        message,
        code,
    }
}

/// Name, message and code of a thrown value, each cut to `max_error_bytes`. Reading them may
/// run the code's getters; a getter that throws just leaves the field empty.
fn describe<'js>(
    ctx: &Ctx<'js>,
    state: &SharedState,
    value: Value<'js>,
) -> (String, String, Option<String>) {
    let max = state.borrow().request.max_error_bytes;
    // One byte past the limit tells a cut text from one that fits exactly.
    let text = |value: Value<'js>| {
        let mut text = clipped(ctx, state, value, max.saturating_add(1)).ok()?;
        if text.len() as u64 > max {
            truncate_on_char(&mut text, max);
            text.push_str(" …(cut)");
        }
        Some(text)
    };
    if value.is_error() {
        let read = |key: &str| {
            let field: Value = match value.as_object()?.get(key) {
                Ok(field) => field,
                Err(_) => {
                    ctx.catch();
                    return None;
                }
            };
            if field.is_undefined() || field.is_null() {
                return None;
            }
            text(field).or_else(|| {
                ctx.catch();
                None
            })
        };
        return (
            read("name").unwrap_or_default(),
            read("message").unwrap_or_default(),
            read("code"),
        );
    }
    let message = match ctx.json_stringify(value) {
        Ok(Some(json)) => text(json.into_value()),
        Ok(None) => Some("undefined".to_owned()),
        Err(_) => None,
    };
    let message = message.unwrap_or_else(|| {
        ctx.catch();
        "a value that cannot be shown".to_owned()
    });
    (String::new(), message, None)
}

/// `value` as text of at most `max` bytes: cut inside the engine first (so a huge string is
/// never copied out whole), with lone surrogates replaced by U+FFFD (see the prelude's `clip`).
fn clipped<'js>(
    ctx: &Ctx<'js>,
    state: &SharedState,
    value: Value<'js>,
    max: u64,
) -> rquickjs::Result<String> {
    let clip = state.borrow().clip.clone();
    let units = u32::try_from(max).unwrap_or(u32::MAX);
    let text: Value = match clip {
        Some(clip) => clip.restore(ctx)?.call((value, units))?,
        None => value,
    };
    let Some(text) = text.as_string() else {
        return Ok(String::new());
    };
    let mut out = lossy(ctx, text);
    truncate_on_char(&mut out, max);
    Ok(out)
}

/// Cuts `text` to at most `max` bytes, keeping characters whole.
fn truncate_on_char(text: &mut String, max: u64) {
    let Ok(mut end) = usize::try_from(max) else {
        return;
    };
    if text.len() <= end {
        return;
    }
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    text.truncate(end);
}

fn lossy(ctx: &Ctx<'_>, text: &rquickjs::String<'_>) -> String {
    let raw = ctx.as_raw().as_ptr();
    let mut len = 0;
    // SAFETY: the C string is read within its lifetime and freed once.
    unsafe {
        let ptr = qjs::JS_ToCStringLen(raw, &mut len, text.as_raw());
        if ptr.is_null() {
            return String::new();
        }
        let bytes = std::slice::from_raw_parts(ptr.cast::<u8>(), len);
        let out = String::from_utf8_lossy(bytes).into_owned();
        qjs::JS_FreeCString(raw, ptr);
        out
    }
}

/// Installs `tools`, `parallel`, `settle` and `console` through the prelude.
fn install_globals<'js>(ctx: &Ctx<'js>, state: &SharedState) -> rquickjs::Result<()> {
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
    let (names, aliases) = {
        let state = state.borrow();
        let aliases: Vec<String> = state
            .request
            .tool_aliases
            .iter()
            .flat_map(|(alias, name)| [alias.clone(), name.clone()])
            .collect();
        (state.request.tool_names.clone(), aliases)
    };
    let clip: Function = prelude.call((call, log, names, aliases))?;
    state.borrow_mut().clip = Some(Persistent::save(ctx, clip));
    Ok(())
}

/// `tools.<name>(params)`: queues the call for the addon and returns its promise.
fn call_tool<'js>(
    ctx: &Ctx<'js>,
    state: &SharedState,
    tool_name: String,
    params: Option<Value<'js>>,
) -> rquickjs::Result<Promise<'js>> {
    if state.borrow().serializing {
        return Err(Exception::throw_type(
            ctx,
            &format!(
                "tools.{tool_name} was called while the returned value was serialised (from a toJSON); call tools before returning"
            ),
        ));
    }
    // Serialising can run the code's toJSON: do it before borrowing the state.
    let input_json = match params {
        None => "{}".to_owned(),
        Some(value) if value.is_undefined() => "{}".to_owned(),
        Some(value) => match ctx.json_stringify(value)? {
            Some(json) => {
                let max = state.borrow().request.max_tool_input_bytes;
                // One byte over is enough for the addon to name the limit.
                clipped(ctx, state, json.into_value(), max.saturating_add(1))?
            }
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
        let error = tool_error(
            ctx,
            "TOOLREG_NOT_ALLOWED",
            &format!("Tool not available in this request: {tool_name}"),
        )?;
        reject.call::<_, ()>((error,))?;
        return Ok(promise);
    }
    guard.calls_made += 1;
    let call = guard.calls_made;
    guard.pending.insert(
        call,
        PendingCall {
            tool_name: tool_name.clone(),
            resolve: Persistent::save(ctx, resolve),
            reject: Persistent::save(ctx, reject),
        },
    );
    guard.outgoing.push(OutgoingCall {
        call,
        tool_name,
        input_json,
    });
    Ok(promise)
}

/// `console.<level>(...args)`: strings as they are, other values as JSON.
fn write_log<'js>(
    ctx: &Ctx<'js>,
    state: &SharedState,
    level: &str,
    args: Vec<Value<'js>>,
) -> rquickjs::Result<()> {
    // One byte over the whole allowance is enough for the addon to name the limit.
    let max = state.borrow().request.max_log_bytes.saturating_add(1);
    let mut message = String::new();
    for (i, value) in args.into_iter().enumerate() {
        if i > 0 {
            message.push(' ');
        }
        message.push_str(&format_value(ctx, state, value, max)?);
        if message.len() as u64 >= max {
            break;
        }
    }
    let level = match level {
        "info" => 1u8,
        "warn" => 2,
        "error" => 3,
        "debug" => 4,
        _ => 0,
    };
    let outbox = state.borrow().outbox.clone();
    send(&outbox, LOG, &[&[level], message.as_bytes()]);
    Ok(())
}

fn format_value<'js>(
    ctx: &Ctx<'js>,
    state: &SharedState,
    value: Value<'js>,
    max: u64,
) -> rquickjs::Result<String> {
    if value.is_string() {
        return clipped(ctx, state, value, max);
    }
    if value.is_undefined() {
        return Ok("undefined".to_owned());
    }
    if value.is_error() {
        let (name, message, _) = describe(ctx, state, value);
        return Ok(format!("{name}: {message}"));
    }
    match ctx.json_stringify(value) {
        Ok(Some(json)) => clipped(ctx, state, json.into_value(), max),
        Ok(None) => Ok("[not JSON]".to_owned()),
        // A stop must propagate; a cycle or a BigInt just prints.
        Err(e) if stop_requested() => Err(e),
        Err(_) => {
            ctx.catch();
            Ok("[not JSON]".to_owned())
        }
    }
}
