//! Errors of the MCP hub. Messages are written for the end user of the host app (they often end
//! up in a chat UI); `code()` is the stable identifier that JS callers switch on.

use std::time::Duration;

use thiserror::Error;

pub use super::failure::Failure;

/// `Clone` because one connect attempt is shared by every caller waiting on it.
#[derive(Debug, Clone, Error)]
pub enum McpError {
    /// A server config cannot be used (empty command, bad URL, duplicate id, ...).
    #[error("invalid MCP server config: {0}")]
    InvalidConfig(String),

    #[error("no MCP server with id {0:?} is configured")]
    UnknownServer(String),

    /// The server could not be started or did not complete the MCP handshake.
    #[error("could not connect to MCP server {server:?}: {reason}")]
    Connect { server: String, reason: Failure },

    /// `operation` is e.g. `the MCP handshake`, `tools/list`, `tools/call "echo"`.
    #[error("MCP server {server:?}: {operation} timed out after {} ms", after.as_millis())]
    Timeout {
        server: String,
        operation: String,
        after: Duration,
    },

    /// The caller aborted the request (its cancellation token fired).
    #[error("{operation} on MCP server {server:?} was cancelled")]
    Cancelled { server: String, operation: String },

    /// The server answered with a JSON-RPC error (unknown tool, invalid params, ...).
    #[error("MCP server {server:?} rejected {operation}: {message}")]
    Call {
        server: String,
        operation: String,
        message: String,
        /// The JSON-RPC error code when the server sent one (e.g. -32602).
        rpc_code: Option<i32>,
    },

    /// The server needs a sign-in that this hub could not get: no way to ask the user, the user
    /// did not finish, or the stored token was revoked and cannot be refreshed.
    #[error("MCP server {server:?} needs you to sign in: {reason}")]
    AuthRequired { server: String, reason: String },

    /// The OAuth flow itself failed (discovery, registration, token exchange, a server that
    /// keeps refusing the scopes it was granted).
    #[error("authorization with MCP server {server:?} failed: {reason}")]
    Auth { server: String, reason: String },

    /// The connection ended (process exited, stream closed, server removed, hub closed).
    #[error("connection to MCP server {server:?} closed: {reason}")]
    Closed { server: String, reason: Failure },
}

impl McpError {
    /// Stable identifier, part of the public API (`error.code` in JS).
    pub fn code(&self) -> &'static str {
        match self {
            McpError::InvalidConfig(_) => "TOOLREG_MCP_INVALID_CONFIG",
            McpError::UnknownServer(_) => "TOOLREG_MCP_UNKNOWN_SERVER",
            McpError::Connect { .. } => "TOOLREG_MCP_CONNECT",
            McpError::Timeout { .. } => "TOOLREG_MCP_TIMEOUT",
            McpError::Cancelled { .. } => "TOOLREG_MCP_CANCELLED",
            McpError::Call { .. } => "TOOLREG_MCP_CALL",
            McpError::Closed { .. } => "TOOLREG_MCP_CLOSED",
            McpError::AuthRequired { .. } => "TOOLREG_MCP_AUTH_REQUIRED",
            McpError::Auth { .. } => "TOOLREG_MCP_AUTH",
        }
    }

    /// The transport's own error text behind the message, when it says more (for `--verbose`).
    pub fn details(&self) -> Option<&str> {
        match self {
            McpError::Connect { reason, .. } | McpError::Closed { reason, .. } => {
                reason.details.as_deref()
            }
            _ => None,
        }
    }

    /// The server did not start: it could not be spawned or reached, it did not complete the
    /// MCP handshake, or it ran out of time before it did. A host may remember this and hold
    /// the server ([`McpHub::hold`](super::McpHub::hold)); a failure of a running server's
    /// request is not one.
    pub fn is_start_failure(&self) -> bool {
        match self {
            McpError::Connect { .. } => true,
            McpError::Timeout { operation, .. } => {
                operation == "the MCP handshake" || operation.ends_with("(while connecting)")
            }
            _ => false,
        }
    }

    /// The server id the error is about, when there is one.
    pub fn server_id(&self) -> Option<&str> {
        match self {
            McpError::InvalidConfig(_) => None,
            McpError::UnknownServer(s) => Some(s),
            McpError::Connect { server, .. }
            | McpError::Timeout { server, .. }
            | McpError::Cancelled { server, .. }
            | McpError::Call { server, .. }
            | McpError::Closed { server, .. }
            | McpError::AuthRequired { server, .. }
            | McpError::Auth { server, .. } => Some(server),
        }
    }
}
