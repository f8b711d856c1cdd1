//! MCP client hub: real rmcp clients over stdio, Streamable HTTP and the legacy HTTP+SSE
//! transport, behind one cloneable handle.
//!
//! Pure Rust with no Node-API types, so it can be driven and tested from Rust alone; the binding
//! layer wraps [`McpHub`] for JS. Every public future is `Send`.
//!
//! One concern per file:
//! - [`config`]: the server configuration accepted from JS (`{ type: "stdio" | ... }`).
//! - [`error`]: [`McpError`] with stable `TOOLREG_MCP_*` codes.
//! - `failure`: transport errors (rmcp, reqwest, our SSE client) as sentences, raw text apart.
//! - [`ask`]: a server asking the user (elicitation) or the host's model (sampling), answered by
//!   the host.
//! - [`events`]: list changes, log messages and progress, passed on to the host.
//! - [`auth`]: OAuth 2.1 for remote servers (rmcp's flows; the host's browser step and store).
//! - [`hub`]: lazy connect, reconnect, tool-list cache, timeouts, cancellation, status, close.
//! - `connection`: opening one connection per transport and tearing it down.
//! - `http`: the Streamable HTTP client given to rmcp (OAuth, standalone stream ordering).
//! - `listen`: the `subscriptions/listen` stream of a 2026-07-28 server (list changes, resource
//!   subscriptions).
//! - `process`: the stdio child (process group, reaping, stderr ring buffer).
//! - `sse`: the MCP 2024-11-05 HTTP+SSE client transport that rmcp no longer ships.
//! - [`wire_id`]: provider-safe tool names (`mcp__<server>__<tool>_<digest>`).

pub mod ask;
pub mod auth;
pub mod config;
mod connection;
pub mod error;
pub mod events;
mod failure;
mod http;
pub mod hub;
mod listen;
mod process;
mod sse;
pub mod wire_id;

pub use ask::{AskFuture, AskHost, AskHostHandle};
pub use auth::{
    AuthOptions, AuthorizationPrompt, Authorizer, OAuthSettings, StoredTokenInfo, TokenStore,
    describe_stored_token,
};
pub use config::ServerConfig;
pub use error::{Failure, McpError};
pub use events::{HubEvents, HubEventsHandle, LogSink, LogTap, ProgressSink, ServerList};
pub use hub::{ConnectionState, HubOptions, McpHub, Round, ServerStatus};
/// The tool descriptor returned by [`McpHub::list_tools`]; serialises to the MCP wire shape
/// (`name`, `title`, `description`, `inputSchema`, `outputSchema`, `annotations`, ...).
pub use rmcp::model::Tool as McpTool;
pub use tokio_util::sync::CancellationToken;
pub use wire_id::{build_mcp_tool_wire_id, server_segment, wire_id_server_segment};
