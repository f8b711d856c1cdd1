//! `tool_exec` runs for JS: the pool, one handle per run, and the bridge that hands tool
//! calls to a JS function (through a weak thread-safe function, so a run never keeps Node
//! alive) and takes its answers back.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};

use napi::bindgen_prelude::*;
use napi::threadsafe_function::{ThreadsafeFunction, ThreadsafeFunctionCallMode};
use napi_derive::napi;
use tokio::sync::oneshot;

use crate::exec::{
    AbortHandle, ApprovalWait, Bridge, BridgeError, BridgeRequest, ExecError, ExecJob, ExecLimits,
    ExecOutcome, ExecPool, Responder,
};

fn exec_error(err: ExecError) -> napi::Error {
    napi::Error::new(Status::GenericFailure, format!("[{}] {}", err.code(), err))
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    // Every critical section is a single map operation, so a poisoned lock holds no torn state.
    mutex.lock().unwrap_or_else(|p| p.into_inner())
}

type CallToolArgs = FnArgs<(u32, String, String)>;
type CallToolFn = ThreadsafeFunction<CallToolArgs, (), CallToolArgs, Status, false, true>;

/// Calls awaiting the JS host's answer, by call number.
#[derive(Default)]
struct Calls {
    responders: Mutex<HashMap<u32, Responder>>,
    approval_waits: Mutex<HashMap<u32, ApprovalWait>>,
}

struct JsBridge {
    call_tool: CallToolFn,
    calls: Arc<Calls>,
}

impl Bridge for JsBridge {
    fn call(&self, request: BridgeRequest, responder: Responder) {
        let call_number = request.call_number;
        lock(&self.calls.responders).insert(call_number, responder);
        let status = self.call_tool.call(
            FnArgs::from((call_number, request.tool_name, request.input_json)),
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

/// A pool of threads running `tool_exec` code.
#[napi]
pub struct NativeExecPool {
    pool: Arc<ExecPool>,
}

#[napi]
impl NativeExecPool {
    /// `size` threads; 0 or absent means one per core.
    #[napi(constructor)]
    pub fn new(size: Option<u32>) -> Self {
        NativeExecPool {
            pool: Arc::new(ExecPool::new(size.unwrap_or(0) as usize)),
        }
    }

    #[napi(getter)]
    pub fn size(&self) -> u32 {
        u32::try_from(self.pool.size()).unwrap_or(u32::MAX)
    }

    /// Starts a run. `call_tool(callNumber, toolName, inputJson)` is called on the JS thread for
    /// each tool call and must not throw; answer it with `run.respond`.
    #[napi]
    pub fn start(
        &self,
        code: String,
        tool_names: Vec<String>,
        limits_json: String,
        call_tool: Function<'_, CallToolArgs, ()>,
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
            limits,
            bridge: Arc::new(JsBridge {
                call_tool,
                calls: calls.clone(),
            }),
        };
        let (done, outcome) = oneshot::channel();
        let abort = self
            .pool
            .spawn(job, move |outcome| {
                let _ = done.send(outcome);
            })
            .map_err(exec_error)?;
        Ok(NativeExecRun {
            abort,
            calls,
            outcome: Mutex::new(Some(outcome)),
        })
    }
}

#[napi(object)]
pub struct ExecLogLine {
    pub level: String,
    pub message: String,
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
    abort: AbortHandle,
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

    /// Ends the run at once; its pending tool calls are answered by nobody.
    #[napi]
    pub fn abort(&self) {
        self.abort.abort();
    }
}

/// The limits with defaults filled in, as JSON; fails on unknown keys or unusable values.
#[napi]
pub fn exec_limits(limits_json: String) -> Result<String> {
    let limits = ExecLimits::from_json(&limits_json).map_err(exec_error)?;
    serde_json::to_string(&limits).map_err(|e| Error::from_reason(e.to_string()))
}
