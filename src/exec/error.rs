//! Why a run failed. Each variant has a stable code that JS callers can switch on.

use thiserror::Error;

use super::Limit;

/// An exception the code threw and did not catch.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Thrown {
    /// `Error`, `TypeError`, … or empty when a non-Error value was thrown.
    pub name: String,
    pub message: String,
    /// The `code` property of the thrown error, when it has one (tool errors do).
    pub code: Option<String>,
}

impl Thrown {
    /// The thrown error with its parts cut so that, written out, it takes at most `max` bytes:
    /// name and code (identifiers) get at most an eighth each, the message the rest.
    pub(super) fn within(
        name: String,
        message: String,
        code: Option<String>,
        max: usize,
    ) -> Thrown {
        let name = super::run::cut_text(name, max / 8);
        let code = code.map(|code| super::run::cut_text(code, max / 8));
        // ` [` + `]: ` around the code, `: ` after the name.
        let framing = if name.is_empty() {
            0
        } else {
            name.len() + code.as_ref().map_or(2, |c| c.len() + 5)
        };
        let message = super::run::cut_text(message, max.saturating_sub(framing));
        Thrown {
            name,
            message,
            code,
        }
    }
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
        "the code finished while {count} tool call(s) were still pending ({names}){fate}; await every tool call before returning"
    )]
    PendingToolCalls {
        count: usize,
        names: String,
        /// What became of them: `; they were aborted`, or how many had already run.
        fate: String,
    },

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

#[cfg(test)]
mod tests {
    use super::*;

    /// The error a run reports fits its budget whatever the code threw: name, message and code
    /// share it (each cut alone once let an error reach three times the limit).
    #[test]
    fn an_uncaught_error_fits_its_budget() {
        let long = |unit: &str| unit.repeat(5_000);
        for max in [0usize, 1, 7, 16, 64, 100, 1_000, 16_384] {
            for (name, message, code) in [
                (long("N"), long("m"), Some(long("C"))),
                (String::new(), long("é"), None),
                ("TypeError".to_owned(), long("€"), Some("E_TOOL".to_owned())),
                (long("名"), "short".to_owned(), None),
            ] {
                let framing = ExecError::Uncaught(Thrown::default()).to_string().len();
                let thrown = Thrown::within(name, message, code, max.saturating_sub(framing));
                let text = ExecError::Uncaught(thrown).to_string();
                assert!(
                    text.len() <= max.max(framing),
                    "{} bytes > {max}",
                    text.len()
                );
            }
        }
    }
}
