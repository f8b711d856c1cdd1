//! One run in a fresh QuickJS runtime and context, driven until the code's promise settles.
//! The instance is dropped after the run, so nothing leaks into the next one. Tool calls,
//! console lines and the outcome leave as frames; the addon decides on every limit that guards
//! the host, so this side only reports what the code did. Stops never reach this code: the
//! host traps the instance wherever it is.

use std::cell::RefCell;
use std::collections::{BTreeMap, HashSet};
use std::rc::Rc;

use rquickjs::context::EvalOptions;
use rquickjs::context::intrinsic::{
    Date, Eval, Json, MapSet, Promise as PromiseIntrinsic, Proxy, RegExp, RegExpCompiler,
    TypedArrays,
};
use rquickjs::allocator::{Allocator, RustAllocator};
use rquickjs::function::{Opt, Rest};
use rquickjs::promise::PromiseState;
use rquickjs::{Context, Ctx, Exception, Function, Persistent, Promise, Runtime, Value, qjs};

use crate::protocol::{self, CALL, Fields, LOG, RunEnd, RunRequest};
use crate::{send, wait_answer};

/// Pending calls named in a `PendingCalls` end; the count covers the rest.
const PENDING_NAMES_SHOWN: usize = 10;

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

/// QuickJS's allocator: Rust's (which grows the linear memory, whose size is the run's cap),
/// except that an allocation it cannot make ends the run at its memory limit instead of
/// returning null. QuickJS turns null into an exception the code can catch, and requests near
/// or above 2 GiB fail before the memory grows at all (no layout that large exists here), so
/// only this makes every failed allocation the end of the run, whatever its size or cause.
struct RunEndingAllocator;

// SAFETY: every call is passed to `RustAllocator`, which meets the trait's contract; a null it
// returns for a non-empty request never reaches QuickJS (the run ends instead).
unsafe impl Allocator for RunEndingAllocator {
    fn alloc(&mut self, size: usize) -> *mut u8 {
        let block = RustAllocator.alloc(size);
        if block.is_null() && size > 0 {
            crate::out_of_memory();
        }
        block
    }

    fn calloc(&mut self, count: usize, size: usize) -> *mut u8 {
        // `RustAllocator` panics on an overflowing product: that request fails like any other.
        let Some(total) = count.checked_mul(size) else {
            crate::out_of_memory();
        };
        let block = RustAllocator.calloc(count, size);
        if block.is_null() && total > 0 {
            crate::out_of_memory();
        }
        block
    }

    unsafe fn dealloc(&mut self, ptr: *mut u8) {
        // SAFETY: `ptr` came from this allocator, so from `RustAllocator`.
        unsafe { RustAllocator.dealloc(ptr) }
    }

    unsafe fn realloc(&mut self, ptr: *mut u8, new_size: usize) -> *mut u8 {
        // SAFETY: `ptr` came from this allocator, so from `RustAllocator`.
        let block = unsafe { RustAllocator.realloc(ptr, new_size) };
        if block.is_null() && new_size > 0 {
            crate::out_of_memory();
        }
        block
    }

    unsafe fn usable_size(ptr: *mut u8) -> usize {
        // SAFETY: `ptr` came from this allocator, so from `RustAllocator`.
        unsafe { RustAllocator::usable_size(ptr) }
    }
}

/// A QuickJS runtime with its one context; each run gets one no code has touched.
pub struct Engine {
    // Field order is drop order: the prelude, then the context, then its runtime.
    /// The prelude, compiled while the engine is prepared (compiling it was half of a short
    /// run's time); each run calls it once.
    prelude: Persistent<Function<'static>>,
    context: Context,
    _runtime: Runtime,
}

impl Engine {
    pub fn new() -> rquickjs::Result<Self> {
        let runtime = Runtime::new_with_alloc(RunEndingAllocator)?;
        // No stack check of the engine's own: it throws what the code can catch. Overflowing
        // the linear memory's stack region traps instead (the host sets its size per run).
        runtime.set_max_stack_size(0);
        let context = Context::custom::<Intrinsics>(&runtime)?;
        let prelude = context.with(|ctx| {
            let prelude: Function = ctx.eval(PRELUDE)?;
            rquickjs::Result::Ok(Persistent::save(&ctx, prelude))
        })?;
        Ok(Engine {
            prelude,
            context,
            _runtime: runtime,
        })
    }
}

struct OutgoingCall {
    call: u32,
    tool_name: String,
    /// The params as JSON, whole; `None` when they have more UTF-16 units than the limit has
    /// bytes, so are surely over it (they are not copied out then).
    input_json: Option<String>,
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

pub fn run(engine: &Engine, request: RunRequest) -> RunEnd {
    let state: SharedState = Rc::new(RefCell::new(RunState {
        allowed: request.tool_names.iter().cloned().collect(),
        request,
        calls_made: 0,
        pending: BTreeMap::new(),
        outgoing: Vec::new(),
        serializing: false,
        clip: None,
    }));
    engine.context.with(|ctx| {
        let end = drive(&ctx, &state, &engine.prelude);
        // Persistent handles must be released before the runtime is freed.
        let mut state = state.borrow_mut();
        state.pending.clear();
        state.clip = None;
        end
    })
}

fn drive<'js>(
    ctx: &Ctx<'js>,
    state: &SharedState,
    prelude: &Persistent<Function<'static>>,
) -> RunEnd {
    if let Err(e) = prelude
        .clone()
        .restore(ctx)
        .and_then(|prelude| install_globals(ctx, state, prelude))
    {
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
        while ctx.execute_pending_job() {}
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
        for call in std::mem::take(&mut state.borrow_mut().outgoing) {
            let (flag, json) = match &call.input_json {
                Some(json) => (0u8, json.as_bytes()),
                None => (1u8, &b""[..]),
            };
            send(
                CALL,
                &[
                    &call.call.to_le_bytes(),
                    &[flag],
                    &protocol::len_prefix(&call.tool_name),
                    call.tool_name.as_bytes(),
                    json,
                ],
            );
        }
        // Only here does the code wait: the process reports it idle while `wait` blocks.
        let answer = wait_answer();
        let Ok((call, result)) = decode_answer(&answer) else {
            return RunEnd::Engine {
                message: "the host sent an answer that cannot be read".to_owned(),
            };
        };
        if let Err(e) = settle(ctx, state, call, result) {
            return failure(ctx, state, e, false);
        }
    }
}

type Answer = (u32, Result<String, (String, String)>);

/// `ANSWER`: `[call u32][1][output JSON]` or `[call u32][0][code text][message]`.
fn decode_answer(payload: &[u8]) -> Result<Answer, protocol::Malformed> {
    let mut fields = Fields::new(payload);
    let call = fields.u32()?;
    let result = if fields.u8()? == 1 {
        Ok(fields.rest()?.to_owned())
    } else {
        let code = fields.text()?.to_owned();
        Err((code, fields.rest()?.to_owned()))
    };
    Ok((call, result))
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
                // Whole or not at all: the addon checks the size on the bytes it gets, and a
                // cut JSON text never leaves as a result.
                match whole_within(ctx, state, json.into_value(), max) {
                    Ok(Some(text)) => Some(text),
                    Ok(None) => {
                        return RunEnd::ResultTooLarge {
                            bytes: max.saturating_add(1),
                        };
                    }
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
    let state = state.borrow();
    if !state.pending.is_empty() {
        // However many calls were left, the end stays small: a few names and the count.
        let count = state.pending.len();
        let mut names: Vec<&str> = state
            .pending
            .values()
            .take(PENDING_NAMES_SHOWN)
            .map(|c| c.tool_name.as_str())
            .collect();
        let more = count.saturating_sub(names.len());
        let more = format!("and {more} more");
        if count > PENDING_NAMES_SHOWN {
            names.push(&more);
        }
        let mut names = names.join(", ");
        let max = state.request.max_error_bytes;
        if names.len() as u64 > max {
            truncate_on_char(&mut names, max);
            names.push_str(" …(cut)");
        }
        return RunEnd::PendingCalls { count, names };
    }
    RunEnd::Returned { json }
}

/// Turns an engine error into the run's end: what the code threw.
fn failure(ctx: &Ctx<'_>, state: &SharedState, error: rquickjs::Error, compiling: bool) -> RunEnd {
    let exception = error.is_exception().then(|| ctx.catch());
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

/// `value` as text of at most `max` bytes, for messages (cut texts are marked by the caller).
fn clipped<'js>(
    ctx: &Ctx<'js>,
    state: &SharedState,
    value: Value<'js>,
    max: u64,
) -> rquickjs::Result<String> {
    let mut out = clip_units(ctx, state, value, max)?;
    truncate_on_char(&mut out, max);
    Ok(out)
}

/// `value` as text, whole, when it has at most `max` UTF-16 units; `None` when it has more
/// (it is then surely more than `max` bytes, and is not copied out).
fn whole_within<'js>(
    ctx: &Ctx<'js>,
    state: &SharedState,
    value: Value<'js>,
    max: u64,
) -> rquickjs::Result<Option<String>> {
    let text = clip_units(ctx, state, value, max.saturating_add(1))?;
    Ok((text.encode_utf16().count() as u64 <= max).then_some(text))
}

/// `value` as text of at most `units` UTF-16 units: cut inside the engine first (so a huge
/// string is never copied out whole), with lone surrogates replaced by U+FFFD (the prelude's
/// `clip`), so each unit of the cut text stays one unit here.
fn clip_units<'js>(
    ctx: &Ctx<'js>,
    state: &SharedState,
    value: Value<'js>,
    units: u64,
) -> rquickjs::Result<String> {
    let clip = state.borrow().clip.clone();
    let units = u32::try_from(units).unwrap_or(u32::MAX);
    let text: Value = match clip {
        Some(clip) => clip.restore(ctx)?.call((value, units))?,
        None => value,
    };
    let Some(text) = text.as_string() else {
        return Ok(String::new());
    };
    Ok(lossy(ctx, text))
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
fn install_globals<'js>(
    ctx: &Ctx<'js>,
    state: &SharedState,
    prelude: Function<'js>,
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
    let clip: Function = prelude.call((call, log, names, aliases, crate::seed().to_vec()))?;
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
        None => Some("{}".to_owned()),
        Some(value) if value.is_undefined() => Some("{}".to_owned()),
        Some(value) => match ctx.json_stringify(value)? {
            Some(json) => {
                let max = state.borrow().request.max_tool_input_bytes;
                // Whole, or marked as over: the addon checks the size on the bytes it gets.
                whole_within(ctx, state, json.into_value(), max)?
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

/// `console.<level>(...args)`: strings as they are, other values as JSON. A line that would
/// take more than the run's whole allowance is cut and marked so: the addon then names the
/// limit whatever the bytes it got.
fn write_log<'js>(
    ctx: &Ctx<'js>,
    state: &SharedState,
    level: &str,
    args: Vec<Value<'js>>,
) -> rquickjs::Result<()> {
    let max = state.borrow().request.max_log_bytes;
    let mut message = String::new();
    let mut cut = false;
    for (i, value) in args.into_iter().enumerate() {
        if i > 0 {
            message.push(' ');
        }
        match format_value(ctx, state, value, max)? {
            Some(part) => message.push_str(&part),
            None => cut = true,
        }
        if cut || message.len() as u64 > max {
            cut = true;
            truncate_on_char(&mut message, max);
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
    send(LOG, &[&[level, u8::from(cut)], message.as_bytes()]);
    Ok(())
}

/// One `console` argument as text; `None` when it is longer than `max`.
fn format_value<'js>(
    ctx: &Ctx<'js>,
    state: &SharedState,
    value: Value<'js>,
    max: u64,
) -> rquickjs::Result<Option<String>> {
    if value.is_string() {
        return whole_within(ctx, state, value, max);
    }
    if value.is_undefined() {
        return Ok(Some("undefined".to_owned()));
    }
    if value.is_error() {
        let (name, message, _) = describe(ctx, state, value);
        return Ok(Some(format!("{name}: {message}")));
    }
    match ctx.json_stringify(value) {
        Ok(Some(json)) => whole_within(ctx, state, json.into_value(), max),
        Ok(None) => Ok(Some("[not JSON]".to_owned())),
        // A cycle or a BigInt just prints.
        Err(_) => {
            ctx.catch();
            Ok(Some("[not JSON]".to_owned()))
        }
    }
}
