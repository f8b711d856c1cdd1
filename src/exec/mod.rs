//! `tool_exec`: model-written JavaScript run in QuickJS (rquickjs) inside `toolreg-exec`
//! sandbox processes that the addon keeps warm.
//!
//! The code is the body of an async function. It sees `tools.<name>(params)`,
//! `tools.invoke(name, params)`, `parallel(...)`, `settle(...)` and a captured `console`, and
//! nothing else of the host: no `require`, `process`, modules, timers, `eval` or `Function`.
//! Tool calls leave the sandbox only as frames that [`run`] checks before a [`Bridge`] sees
//! them. Each run gets a fresh runtime, so no global, prototype or byte of memory carries over.
//!
//! The process boundary is what makes the limits hold for any code: a run that does not stop
//! when asked is killed (no built-in can outlast that), the memory and stack caps end the
//! process instead of throwing, and an engine bug stays in a process that holds nothing of the
//! host. The helper executable is `src/bin/toolreg-exec`.

mod bridge;
mod error;
mod limits;
mod pool;
mod process;
pub mod protocol;
mod run;
mod spawn;

pub use bridge::{ApprovalWait, Bridge, BridgeError, BridgeRequest, Responder};
pub use error::{ExecError, Thrown};
pub use limits::{
    ExecLimits, Limit, MAX_RESULT_DEPTH, MAX_STACK_SIZE_BYTES, MIN_MEMORY_LIMIT_BYTES,
};
pub use pool::{ExecPool, RunHandle};
pub use run::{ExecJob, ExecOutcome, LogLevel, LogLine, STOP_GRACE};

#[cfg(test)]
mod tests;
