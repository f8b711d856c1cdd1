//! `tool_exec`: model-written JavaScript run in QuickJS (rquickjs) on a pool of threads.
//!
//! The code is the body of an async function. It sees `tools.<name>(params)`,
//! `tools.invoke(name, params)`, `parallel(...)`, `settle(...)` and a captured `console`, and
//! nothing else of the host: no `require`, `process`, modules, timers, `eval` or `Function`.
//! Tool calls leave the sandbox only through a [`Bridge`], as JSON. Each run gets a fresh
//! runtime, so no global, prototype or byte of memory carries over to the next one.
//!
//! QuickJS is an in-process interpreter, not an OS sandbox: the limits bound what the code can
//! take, and a run never takes the host down, but an engine bug would be in-process.

mod bridge;
mod error;
mod limits;
mod pool;
mod sandbox;

pub use bridge::{ApprovalWait, Bridge, BridgeError, BridgeRequest, Responder};
pub use error::{ExecError, Thrown};
pub use limits::{ExecLimits, Limit, MAX_STACK_SIZE_BYTES, MIN_MEMORY_LIMIT_BYTES};
pub use pool::{AbortHandle, ExecPool};
pub use sandbox::{ExecJob, ExecOutcome, LogLevel, LogLine};

#[cfg(test)]
mod tests;
