//! One error type for the core; each variant has a stable code that JS callers can switch on.

use thiserror::Error;

#[derive(Debug, Error)]
pub enum ToolregError {
    /// The caller passed a value the API cannot use; surfaces in JS as a `TypeError`.
    #[error("invalid {field}: {reason}")]
    InvalidArgument { field: String, reason: String },

    #[error("no tool named {name:?} is registered")]
    UnknownTool { name: String },

    #[error("the input schema of {name:?} cannot be used: {reason}")]
    InvalidSchema { name: String, reason: String },

    #[error("invalid search query: {0}")]
    InvalidQuery(String),

    #[error("{feature} is not available yet: {reason}")]
    NotAvailable { feature: String, reason: String },

    /// A file of the local embedding model is missing (the optional package not installed, a
    /// wrong `path`).
    #[error("the local embedding model is missing: {0}")]
    LocalModelMissing(String),

    /// The local model's files are there but are not a model this encoder can run.
    #[error("the local embedding model cannot be loaded: {0}")]
    LocalModelInvalid(String),

    /// The host's usage store (pins learned from use) holds a line that is not a use record.
    #[error("the usage store is unreadable: {0}")]
    UsageStoreInvalid(String),
}

impl ToolregError {
    /// Stable identifier, part of the public API (`error.code` in JS).
    pub fn code(&self) -> &'static str {
        match self {
            ToolregError::InvalidArgument { .. } => "TOOLREG_INVALID_ARGUMENT",
            ToolregError::UnknownTool { .. } => "TOOLREG_UNKNOWN_TOOL",
            ToolregError::InvalidSchema { .. } => "TOOLREG_INVALID_SCHEMA",
            ToolregError::InvalidQuery(_) => "TOOLREG_INVALID_QUERY",
            ToolregError::NotAvailable { .. } => "TOOLREG_NOT_AVAILABLE",
            ToolregError::LocalModelMissing(_) => "TOOLREG_LOCAL_MODEL_MISSING",
            ToolregError::LocalModelInvalid(_) => "TOOLREG_LOCAL_MODEL_INVALID",
            ToolregError::UsageStoreInvalid(_) => "TOOLREG_USAGE_STORE_INVALID",
        }
    }

    pub fn invalid(field: &str, reason: impl Into<String>) -> Self {
        ToolregError::InvalidArgument {
            field: field.to_owned(),
            reason: reason.into(),
        }
    }
}

pub type Result<T, E = ToolregError> = std::result::Result<T, E>;
