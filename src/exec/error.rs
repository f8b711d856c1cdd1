//! Why a run failed. Each variant has a stable code that JS callers can switch on.

use thiserror::Error;

use super::Limit;

/// An exception the code threw and did not catch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Thrown {
    /// `Error`, `TypeError`, … or empty when a non-Error value was thrown.
    pub name: String,
    pub message: String,
    /// The `code` property of the thrown error, when it has one (tool errors do).
    pub code: Option<String>,
}

impl std::fmt::Display for Thrown {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match (self.name.is_empty(), &self.code) {
            (true, _) => write!(f, "{}", self.message),
            (false, Some(code)) => write!(f, "{} [{code}]: {}", self.name, self.message),
            (false, None) => write!(f, "{}: {}", self.name, self.message),
        }
    }
}

#[derive(Debug, Clone, Error, PartialEq, Eq)]
pub enum ExecError {
    /// A limit was hit; the message names the limit and its value.
    #[error("{limit} exceeded ({value}): {detail}")]
    LimitExceeded {
        limit: Limit,
        value: u64,
        detail: String,
    },

    #[error("the run was aborted")]
    Aborted,

    #[error("the code does not parse: {0}")]
    Syntax(String),

    #[error("uncaught {0}")]
    Uncaught(Thrown),

    #[error(
        "the code finished while {count} tool call(s) were still pending ({names}); await every tool call before returning"
    )]
    PendingToolCalls { count: usize, names: String },

    #[error(
        "the code is waiting on a promise that can never settle (no tool call is pending); do not await promises nothing resolves"
    )]
    Unsettled,

    #[error("the result is not JSON-serialisable: {0}")]
    ResultNotJson(String),

    /// The caller's limits are unusable; surfaces in JS as a `TypeError`.
    #[error("invalid limits: {0}")]
    InvalidLimits(String),

    /// The engine itself failed (could not allocate a runtime, a worker panicked).
    #[error("sandbox failure: {0}")]
    Engine(String),
}

impl ExecError {
    /// Stable identifier, part of the public API (`error.code` in JS).
    pub fn code(&self) -> &'static str {
        match self {
            ExecError::LimitExceeded { .. } => "TOOLREG_EXEC_LIMIT",
            ExecError::Aborted => "TOOLREG_EXEC_ABORTED",
            ExecError::Syntax(_) => "TOOLREG_EXEC_SYNTAX",
            ExecError::Uncaught(_) => "TOOLREG_EXEC_UNCAUGHT",
            ExecError::PendingToolCalls { .. } => "TOOLREG_EXEC_PENDING_CALLS",
            ExecError::Unsettled => "TOOLREG_EXEC_UNSETTLED",
            ExecError::ResultNotJson(_) => "TOOLREG_EXEC_RESULT_NOT_JSON",
            ExecError::InvalidLimits(_) => "TOOLREG_INVALID_ARGUMENT",
            ExecError::Engine(_) => "TOOLREG_EXEC_ENGINE",
        }
    }

    /// The limit this error reports, if it is a limit error.
    pub fn limit(&self) -> Option<Limit> {
        match self {
            ExecError::LimitExceeded { limit, .. } => Some(*limit),
            _ => None,
        }
    }
}
