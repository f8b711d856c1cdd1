//! The MCP server of `toolreg serve`: rmcp's server side (handshake, protocol versions, stdio and
//! Streamable HTTP) in front of a [`GatewayHost`] that decides which tools the client sees and
//! runs its calls. The host is the JS layer, where the registry, the defer decision and the
//! meta-tools live; this module only speaks the protocol: it lists what the host lists,
//! forwards calls with their progress and cancellation, and re-announces list changes.
//!
//! One concern per file: this one the handler and its shared state, `http` the Streamable HTTP
//! listener with its bearer token and DNS-rebinding checks.

mod http;

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use futures::future::BoxFuture;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ErrorData, Implementation,
    InitializeResult, ListToolsResult, PaginatedRequestParams, ProgressNotificationParam,
    ProgressToken, ServerCapabilities, Tool,
};
use rmcp::service::{NotificationContext, RequestContext};
use rmcp::{Peer, RoleServer, ServerHandler, ServiceExt};
use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

pub use http::{HttpOptions, serve_http};

/// A tool call the host runs. `id` names it in [`GatewayHost::cancel`] and
/// [`Gateway::progress`].
#[derive(Debug, Clone)]
pub struct GatewayCall {
    pub id: u64,
    pub name: String,
    pub arguments: Map<String, Value>,
}

/// What the gateway asks of its host.
pub trait GatewayHost: Send + Sync {
    /// The tools the client sees, in the order it sees them.
    fn list_tools(&self) -> BoxFuture<'static, Result<Vec<Tool>, String>>;
    /// Runs a call; resolves to an MCP `CallToolResult` (a failed tool is `isError: true`).
    /// `Err` is a call that cannot be made at all (an unknown tool).
    fn call_tool(&self, call: GatewayCall) -> BoxFuture<'static, Result<CallToolResult, String>>;
    /// The client cancelled call `id` (or went away): the host stops it.
    fn cancel(&self, id: u64);
}

/// Name, version and instructions sent in `initialize`.
#[derive(Debug, Clone)]
pub struct GatewayInfo {
    pub name: String,
    pub version: String,
    /// The deferred-tools section, when tools are deferred.
    pub instructions: Option<String>,
}

struct Shared {
    host: Arc<dyn GatewayHost>,
    info: Mutex<GatewayInfo>,
    /// Clients that finished `initialize`, to tell about list changes.
    peers: Mutex<Vec<Peer<RoleServer>>>,
    next_call: AtomicU64,
    /// Calls in flight whose client asked for progress: where to send it.
    progress: Mutex<HashMap<u64, (Peer<RoleServer>, ProgressToken)>>,
}

/// One gateway; its handler is cloned per client session.
#[derive(Clone)]
pub struct Gateway {
    shared: Arc<Shared>,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl Gateway {
    pub fn new(host: Arc<dyn GatewayHost>, info: GatewayInfo) -> Self {
        Gateway {
            shared: Arc::new(Shared {
                host,
                info: Mutex::new(info),
                peers: Mutex::default(),
                next_call: AtomicU64::new(1),
                progress: Mutex::default(),
            }),
        }
    }

    /// Instructions for sessions that start from now on (a session keeps the ones it got).
    pub fn set_instructions(&self, instructions: Option<String>) {
        lock(&self.shared.info).instructions = instructions;
    }

    /// Tells every connected client that the tool list changed.
    pub async fn notify_tools_changed(&self) {
        let peers: Vec<_> = {
            let mut peers = lock(&self.shared.peers);
            peers.retain(|p| !p.is_transport_closed());
            peers.clone()
        };
        for peer in peers {
            // A client that went away meanwhile is simply not told.
            let _ = peer.notify_tool_list_changed().await;
        }
    }

    /// Progress of call `id`, sent to its client when it asked for progress.
    pub async fn progress(
        &self,
        id: u64,
        progress: f64,
        total: Option<f64>,
        message: Option<String>,
    ) {
        let target = lock(&self.shared.progress).get(&id).cloned();
        if let Some((peer, token)) = target {
            let mut param = ProgressNotificationParam::new(token, progress);
            param.total = total;
            param.message = message;
            let _ = peer.notify_progress(param).await;
        }
    }

    /// Serves one client on this process's stdin/stdout until it disconnects or `ct` fires.
    pub async fn serve_stdio(&self, ct: CancellationToken) -> Result<(), String> {
        let running = self
            .clone()
            .serve_with_ct(rmcp::transport::stdio(), ct)
            .await
            .map_err(|e| format!("the MCP handshake on stdio failed: {e}"))?;
        running
            .waiting()
            .await
            .map(drop)
            .map_err(|e| format!("the stdio session ended with an error: {e}"))
    }
}

/// Ends the progress registration of a call however the call ends.
struct InFlight<'a> {
    shared: &'a Shared,
    id: u64,
    done: bool,
}

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        lock(&self.shared.progress).remove(&self.id);
        if !self.done {
            self.shared.host.cancel(self.id);
        }
    }
}

impl ServerHandler for Gateway {
    fn get_info(&self) -> InitializeResult {
        let info = lock(&self.shared.info).clone();
        let capabilities = ServerCapabilities::builder()
            .enable_tools()
            .enable_tool_list_changed()
            .build();
        let result = InitializeResult::new(capabilities)
            .with_server_info(Implementation::new(info.name, info.version));
        match info.instructions {
            Some(text) => result.with_instructions(text),
            None => result,
        }
    }

    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        let mut peers = lock(&self.shared.peers);
        peers.retain(|p| !p.is_transport_closed());
        peers.push(context.peer);
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let tools = self
            .shared
            .host
            .list_tools()
            .await
            .map_err(|e| ErrorData::internal_error(e, None))?;
        Ok(ListToolsResult::with_all_items(tools))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let id = self.shared.next_call.fetch_add(1, Ordering::Relaxed);
        if let Some(token) = context.meta.get_progress_token() {
            lock(&self.shared.progress).insert(id, (context.peer.clone(), token));
        }
        let mut in_flight = InFlight {
            shared: &self.shared,
            id,
            done: false,
        };
        let call = GatewayCall {
            id,
            name: request.name.to_string(),
            arguments: request.arguments.unwrap_or_default(),
        };
        let result = tokio::select! {
            result = self.shared.host.call_tool(call) => result,
            // Dropping `in_flight` tells the host to stop the call.
            _ = context.ct.cancelled() => return Err(ErrorData::internal_error("the call was cancelled", None)),
        };
        in_flight.done = true;
        match result {
            Ok(result) => Ok(CallToolResponse::Complete(result)),
            Err(message) => Err(ErrorData::invalid_params(message, None)),
        }
    }
}
