//! `tool_exec` runs for JS: the pool, one handle per run, and the bridge that hands tool
//! calls to a JS function (through a weak thread-safe function, so a run never keeps Node
//! alive) and takes its answers back. Calls to MCP tools of an `McpHub` that need no approval
//! go from the pool thread straight to the hub, without waiting for the JS thread.

use std::collections::HashMap;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::{Arc, Mutex, MutexGuard, RwLock};
use std::time::Duration;

use napi::bindgen_prelude::*;
use napi::threadsafe_function::{ThreadsafeFunction, ThreadsafeFunctionCallMode};
use napi_derive::napi;
use serde_json::{Map, Value};
use tokio::sync::oneshot;

use super::mcp::NativeMcpHub;
use super::registry::{NativeRegistry, read};
use crate::exec::{
    ApprovalWait, Bridge, BridgeError, BridgeRequest, ExecError, ExecJob, ExecLimits, ExecOutcome,
    ExecPool, Responder, RunHandle,
};
use crate::mcp::{CancellationToken, McpHub};
use crate::registry::{InputCheck, Registry};

fn exec_error(err: ExecError) -> napi::Error {
    napi::Error::new(Status::GenericFailure, format!("[{}] {}", err.code(), err))
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    // Every critical section is a single map operation, so a poisoned lock holds no torn state.
    mutex.lock().unwrap_or_else(|p| p.into_inner())
}

/// `(callNumber, toolName, inputJson, mcpResultJson?)`: the last is set when the hub already
/// answered a direct call whose result JS shapes (a tool error, images, files).
type CallToolArgs = FnArgs<(u32, String, String, Option<String>)>;
type CallToolFn = ThreadsafeFunction<CallToolArgs, (), CallToolArgs, Status, false, true>;

/// Calls awaiting the JS host's answer, by call number.
#[derive(Default)]
struct Calls {
    responders: Mutex<HashMap<u32, Responder>>,
    approval_waits: Mutex<HashMap<u32, ApprovalWait>>,
}

/// The JS side of a run: its `callTool` function and the calls it has yet to answer.
struct JsHost {
    call_tool: CallToolFn,
    calls: Arc<Calls>,
}

impl JsHost {
    fn hand_over(&self, request: BridgeRequest, mcp_result: Option<String>, responder: Responder) {
        let call_number = request.call_number;
        lock(&self.calls.responders).insert(call_number, responder);
        let status = self.call_tool.call(
            FnArgs::from((
                call_number,
                request.tool_name,
                request.input_json,
                mcp_result,
            )),
            ThreadsafeFunctionCallMode::NonBlocking,
        );
        if status != Status::Ok
            && let Some(responder) = lock(&self.calls.responders).remove(&call_number)
        {
            responder.respond(Err(BridgeError::new(
                "TOOLREG_EXEC_HOST_GONE",
                format!("the host could not take the call ({status})"),
            )));
        }
    }
}

/// Where one MCP tool's calls go.
#[derive(Clone)]
struct McpRoute {
    hub: McpHub,
    server_id: String,
    tool_name: String,
    timeout: Duration,
}

/// MCP tools whose calls skip the JS thread, and the registry that validates their params.
struct DirectCalls {
    registry: Arc<RwLock<Registry>>,
    routes: Arc<HashMap<String, McpRoute>>,
    /// Calls at the hub, so that a run that ends cancels them (`notifications/cancelled`).
    in_flight: Mutex<HashMap<u32, CancellationToken>>,
}

impl DirectCalls {
    /// The validated params of a call this path takes. Anything else (no route, params that
    /// do not validate or cannot be checked here) goes to JS, which gives the readable error.
    fn admit(&self, request: &BridgeRequest) -> Option<(McpRoute, Map<String, Value>)> {
        let route = self.routes.get(&request.tool_name)?;
        let input = serde_json::from_str(&request.input_json).ok()?;
        match read(&self.registry).check_input(&request.tool_name, input) {
            Ok(InputCheck::Valid(Value::Object(params))) => Some((route.clone(), params)),
            _ => None,
        }
    }
}

/// A result the code can take as it is: not a tool error, and text only.
fn is_plain_result(result: &Value) -> bool {
    result.get("isError").and_then(Value::as_bool) != Some(true)
        && result
            .get("content")
            .and_then(Value::as_array)
            .is_some_and(|blocks| {
                blocks
                    .iter()
                    .all(|b| b.get("type").and_then(Value::as_str) == Some("text"))
            })
}

struct JsBridge {
    js: Arc<JsHost>,
    direct: Option<Arc<DirectCalls>>,
}

impl JsBridge {
    fn call_hub(
        &self,
        direct: &Arc<DirectCalls>,
        request: BridgeRequest,
        (route, params): (McpRoute, Map<String, Value>),
        responder: Responder,
    ) {
        let token = CancellationToken::new();
        lock(&direct.in_flight).insert(request.call_number, token.clone());
        let direct = direct.clone();
        let js = self.js.clone();
        let call = async move {
            let result = route
                .hub
                .call_tool(
                    &route.server_id,
                    &route.tool_name,
                    params,
                    route.timeout,
                    Some(token),
                )
                .await;
            lock(&direct.in_flight).remove(&request.call_number);
            match result {
                Ok(result) if is_plain_result(&result) => responder.respond(Ok(result.to_string())),
                Ok(result) => js.hand_over(request, Some(result.to_string()), responder),
                Err(e) => responder.respond(Err(BridgeError::new(e.code(), e.to_string()))),
            }
        };
        // Without a runtime (Node is shutting down) the dropped responder fails the call.
        let _ = catch_unwind(AssertUnwindSafe(|| napi::bindgen_prelude::spawn(call)));
    }
}

impl Bridge for JsBridge {
    fn call(&self, request: BridgeRequest, responder: Responder) {
        if let Some(direct) = &self.direct
            && let Some(admitted) = direct.admit(&request)
        {
            return self.call_hub(direct, request, admitted, responder);
        }
        self.js.hand_over(request, None, responder);
    }

    fn cancel(&self, call_number: u32) {
        if let Some(direct) = &self.direct
            && let Some(token) = lock(&direct.in_flight).remove(&call_number)
        {
            token.cancel();
        }
    }
}

/// The MCP tools a `tool_exec` tool may call directly through their hub: each needs no
/// approval and keeps the hub's own `execute` (the JS layer decides which).
#[napi]
pub struct NativeExecRoutes {
    registry: Arc<RwLock<Registry>>,
    routes: Arc<HashMap<String, McpRoute>>,
}

#[napi]
impl NativeExecRoutes {
    #[napi(constructor)]
    pub fn new(registry: &NativeRegistry) -> Self {
        NativeExecRoutes {
            registry: registry.shared(),
            routes: Arc::default(),
        }
    }

    /// Routes calls of the registry tool `name` to `tool_name` on the hub's server `server_id`.
    #[napi]
    pub fn add_mcp(
        &mut self,
        name: String,
        hub: &NativeMcpHub,
        server_id: String,
        tool_name: String,
        timeout_ms: u32,
    ) {
        let route = McpRoute {
            hub: hub.handle(),
            server_id,
            tool_name,
            timeout: Duration::from_millis(u64::from(timeout_ms)),
        };
        Arc::make_mut(&mut self.routes).insert(name, route);
    }
}

/// A pool of sandbox processes running `tool_exec` code.
#[napi]
pub struct NativeExecPool {
    pool: Arc<ExecPool>,
}

#[napi]
impl NativeExecPool {
    /// `size` processes (0 means one per core) of the `toolreg-exec` executable at `helper`.
    #[napi(constructor)]
    pub fn new(size: u32, helper: String) -> Self {
        NativeExecPool {
            pool: Arc::new(ExecPool::new(size as usize, helper.into())),
        }
    }

    #[napi(getter)]
    pub fn size(&self) -> u32 {
        u32::try_from(self.pool.size()).unwrap_or(u32::MAX)
    }

    /// Starts a run. `tool_aliases` lists other names the code may use, as alias, name, alias,
    /// name, …. `call_tool(callNumber, toolName, inputJson, mcpResultJson?)` is called on the JS
    /// thread for each tool call that `routes` does not take and must not throw; answer it with
    /// `run.respond`.
    #[napi]
    pub fn start(
        &self,
        code: String,
        tool_names: Vec<String>,
        tool_aliases: Vec<String>,
        limits_json: String,
        call_tool: Function<'_, CallToolArgs, ()>,
        routes: Option<&NativeExecRoutes>,
    ) -> Result<NativeExecRun> {
        let limits = ExecLimits::from_json(&limits_json).map_err(exec_error)?;
        let call_tool = call_tool
            .build_threadsafe_function()
            .weak::<true>()
            .callee_handled::<false>()
            .build()?;
        let calls = Arc::new(Calls::default());
        let job = ExecJob {
            code,
            tool_names,
            tool_aliases: tool_aliases
                .chunks_exact(2)
                .map(|pair| (pair[0].clone(), pair[1].clone()))
                .collect(),
            limits,
            bridge: Arc::new(JsBridge {
                js: Arc::new(JsHost {
                    call_tool,
                    calls: calls.clone(),
                }),
                direct: routes.filter(|r| !r.routes.is_empty()).map(|r| {
                    Arc::new(DirectCalls {
                        registry: r.registry.clone(),
                        routes: r.routes.clone(),
                        in_flight: Mutex::default(),
                    })
                }),
            }),
        };
        let (done, outcome) = oneshot::channel();
        let handle = self
            .pool
            .spawn(job, move |outcome| {
                let _ = done.send(outcome);
            })
            .map_err(exec_error)?;
        Ok(NativeExecRun {
            handle,
            calls,
            outcome: Mutex::new(Some(outcome)),
        })
    }
}

#[napi(object)]
pub struct ExecLogLine {
    pub level: String,
    pub message: String,
    /// The line as the run's `logs` show it (`[level] ` before all but `console.log`'s).
    pub entry: String,
}

#[napi(object)]
pub struct ExecRunOutcome {
    /// The returned value as JSON; absent for `undefined` or on failure.
    pub result_json: Option<String>,
    pub logs: Vec<ExecLogLine>,
    pub tool_calls: u32,
    pub error_code: Option<String>,
    pub error_message: Option<String>,
}

impl From<ExecOutcome> for ExecRunOutcome {
    fn from(outcome: ExecOutcome) -> Self {
        let logs = outcome
            .logs
            .into_iter()
            .map(|line| ExecLogLine {
                level: line.level.name().to_owned(),
                entry: line.entry(),
                message: line.message,
            })
            .collect();
        let (result_json, error_code, error_message) = match outcome.result {
            Ok(json) => (json, None, None),
            Err(error) => (None, Some(error.code().to_owned()), Some(error.to_string())),
        };
        ExecRunOutcome {
            result_json,
            logs,
            tool_calls: outcome.tool_calls,
            error_code,
            error_message,
        }
    }
}

/// One run in progress.
#[napi]
pub struct NativeExecRun {
    handle: RunHandle,
    calls: Arc<Calls>,
    outcome: Mutex<Option<oneshot::Receiver<ExecOutcome>>>,
}

#[napi]
impl NativeExecRun {
    /// Resolves when the run ends; may be awaited once.
    #[napi]
    pub async fn outcome(&self) -> Result<ExecRunOutcome> {
        let receiver = lock(&self.outcome)
            .take()
            .ok_or_else(|| Error::new(Status::GenericFailure, "the outcome was already taken"))?;
        let outcome = receiver.await.unwrap_or_else(|_| ExecOutcome {
            result: Err(ExecError::Engine("the pool dropped the run".to_owned())),
            logs: Vec::new(),
            tool_calls: 0,
        });
        lock(&self.calls.approval_waits).clear();
        Ok(outcome.into())
    }

    /// Answers a tool call: `ok` with the output as JSON, else `payload` is the error message
    /// and `code` its code. Answers to unknown or answered calls are ignored.
    #[napi]
    pub fn respond(&self, call_number: u32, ok: bool, payload: String, code: Option<String>) {
        lock(&self.calls.approval_waits).remove(&call_number);
        if let Some(responder) = lock(&self.calls.responders).remove(&call_number) {
            responder.respond(if ok {
                Ok(payload)
            } else {
                Err(BridgeError::new(
                    code.unwrap_or_else(|| "TOOLREG_TOOL_ERROR".to_owned()),
                    payload,
                ))
            });
        }
    }

    /// Marks a call as waiting for the user's approval (`waiting`) or done waiting: while any
    /// call waits and the code has nothing else to do, the run's clock stands still.
    #[napi]
    pub fn approval_wait(&self, call_number: u32, waiting: bool) {
        let mut waits = lock(&self.calls.approval_waits);
        if !waiting {
            waits.remove(&call_number);
            return;
        }
        if let Some(responder) = lock(&self.calls.responders).get(&call_number) {
            waits.insert(call_number, responder.approval_wait());
        }
    }

    /// Ends the run (within the stop grace); its pending tool calls are answered by nobody.
    #[napi]
    pub fn abort(&self) {
        self.handle.abort();
    }

    /// False once the run has ended, been aborted or timed out: a tool call of it must then
    /// neither start nor ask for approval (checked before asking and again before executing).
    #[napi]
    pub fn is_open(&self) -> bool {
        self.handle.is_open()
    }
}

/// The limits with defaults filled in, as JSON; fails on unknown keys or unusable values.
#[napi]
pub fn exec_limits(limits_json: String) -> Result<String> {
    let limits = ExecLimits::from_json(&limits_json).map_err(exec_error)?;
    serde_json::to_string(&limits).map_err(|e| Error::from_reason(e.to_string()))
}
