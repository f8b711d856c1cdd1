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
// Logging is deprecated for the 2026 protocol (SEP-2577); clients of 2025-06-18 and 2025-11-25,
// the ones in use, still set levels and read messages.
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ErrorData, Implementation,
    InitializeResult, ListToolsResult, PaginatedRequestParams, ProgressNotificationParam,
    ProgressToken, ServerCapabilities, Tool,
};
#[allow(deprecated)]
use rmcp::model::{LoggingLevel, LoggingMessageNotificationParam, SetLevelRequestParams};
use rmcp::service::{NotificationContext, RequestContext};
use rmcp::{Peer, RoleServer, ServerHandler, ServiceExt};
use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

pub use http::{HttpOptions, serve_http};

use crate::mcp::{McpHub, ProgressSink};

/// How long a forwarded call may take, as for any MCP call of the library.
const FORWARDED_CALL_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(60);

/// A tool call the host runs. `id` names it in [`GatewayHost::cancel`] and
/// [`Gateway::progress`].
#[derive(Debug, Clone)]
pub struct GatewayCall {
    pub id: u64,
    pub name: String,
    pub arguments: Map<String, Value>,
    /// The client asked for progress: the host passes the servers' progress on.
    pub wants_progress: bool,
}

/// How the host answers a call.
#[derive(Debug)]
pub enum HostAnswer {
    /// The host ran it (a meta-tool): its result.
    Done(CallToolResult),
    /// A server's own tool, forwarded as it is by the gateway through the hub, so its progress
    /// reaches the client in order and before the answer.
    Forward { server_id: String, tool: String },
}

/// What the gateway asks of its host.
pub trait GatewayHost: Send + Sync {
    /// The tools the client sees, in the order it sees them.
    fn list_tools(&self) -> BoxFuture<'static, Result<Vec<Tool>, String>>;
    /// Runs or routes a call; a failed tool is a result with `isError: true`. `Err` is a call
    /// that cannot be made at all (an unknown tool).
    fn call_tool(&self, call: GatewayCall) -> BoxFuture<'static, Result<HostAnswer, String>>;
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

#[allow(deprecated)] // the logging level, see the imports
struct Shared {
    host: Arc<dyn GatewayHost>,
    /// Where forwarded calls go.
    hub: Option<McpHub>,
    info: Mutex<GatewayInfo>,
    /// Clients that finished `initialize`, to tell about list changes.
    peers: Mutex<Vec<Peer<RoleServer>>>,
    next_call: AtomicU64,
    /// The lowest level of log messages the clients asked for (`logging/setLevel`).
    log_level: Mutex<LoggingLevel>,
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
    #[allow(deprecated)] // the logging level, see the imports
    pub fn new(host: Arc<dyn GatewayHost>, info: GatewayInfo, hub: Option<McpHub>) -> Self {
        Gateway {
            shared: Arc::new(Shared {
                host,
                hub,
                info: Mutex::new(info),
                peers: Mutex::default(),
                next_call: AtomicU64::new(1),
                log_level: Mutex::new(LoggingLevel::Info),
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
        for peer in self.live_peers() {
            // A client that went away meanwhile is simply not told.
            let _ = peer.notify_tool_list_changed().await;
        }
    }

    /// A server's log message (`notifications/message` params), passed to the clients when
    /// its level is at least the one they set.
    #[allow(deprecated)]
    pub async fn log(&self, message: Value) {
        let Ok(message) = serde_json::from_value::<LoggingMessageNotificationParam>(message) else {
            return;
        };
        // The levels are declared from least to most severe.
        if (message.level as u8) < (*lock(&self.shared.log_level) as u8) {
            return;
        }
        for peer in self.live_peers() {
            let _ = peer.notify_logging_message(message.clone()).await;
        }
    }

    fn live_peers(&self) -> Vec<Peer<RoleServer>> {
        let mut peers = lock(&self.shared.peers);
        peers.retain(|p| !p.is_transport_closed());
        peers.clone()
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

impl Gateway {
    /// Calls a server's tool through the hub. Its progress goes to the client through a channel
    /// that is drained before the answer is returned, so the client hears it in order and first.
    async fn forward(
        &self,
        server_id: &str,
        tool: &str,
        arguments: Map<String, Value>,
        progress: Option<(Peer<RoleServer>, ProgressToken)>,
        cancel: CancellationToken,
    ) -> Result<CallToolResult, ErrorData> {
        let Some(hub) = &self.shared.hub else {
            return Err(ErrorData::internal_error(
                "this gateway has no MCP hub to forward calls to",
                None,
            ));
        };
        let (sink, forwarder) = match progress {
            Some((peer, token)) => {
                let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
                let sink: ProgressSink = Arc::new(move |progress, total, message| {
                    let _ = tx.send((progress, total, message));
                });
                let forwarder = tokio::spawn(async move {
                    while let Some((progress, total, message)) = rx.recv().await {
                        let mut param = ProgressNotificationParam::new(token.clone(), progress);
                        param.total = total;
                        param.message = message;
                        let _ = peer.notify_progress(param).await;
                    }
                });
                (Some(sink), Some(forwarder))
            }
            None => (None, None),
        };
        let result = hub
            .call_tool_with_progress(
                server_id,
                tool,
                arguments,
                FORWARDED_CALL_TIMEOUT,
                Some(cancel),
                sink,
            )
            .await;
        // The call is over and its sink dropped: the forwarder ends once it has sent the rest.
        if let Some(forwarder) = forwarder {
            let _ = forwarder.await;
        }
        Ok(match result {
            Ok(json) => serde_json::from_value(json).map_err(|e| {
                ErrorData::internal_error(format!("the server's result is not valid: {e}"), None)
            })?,
            // The server's failure is this call's failure, as text the client shows.
            Err(error) => {
                CallToolResult::error(vec![rmcp::model::ContentBlock::text(error.to_string())])
            }
        })
    }
}

impl ServerHandler for Gateway {
    fn get_info(&self) -> InitializeResult {
        let info = lock(&self.shared.info).clone();
        #[allow(deprecated)]
        let capabilities = ServerCapabilities::builder()
            .enable_logging()
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

    #[allow(deprecated)]
    async fn set_level(
        &self,
        request: SetLevelRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        *lock(&self.shared.log_level) = request.level;
        Ok(())
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
        let progress_token = context.meta.get_progress_token();
        let wants_progress = progress_token.is_some();
        if let Some(token) = progress_token {
            lock(&self.shared.progress).insert(id, (context.peer.clone(), token));
        }
        let mut in_flight = InFlight {
            shared: &self.shared,
            id,
            done: false,
        };
        let arguments = request.arguments.unwrap_or_default();
        let call = GatewayCall {
            id,
            name: request.name.to_string(),
            arguments: arguments.clone(),
            wants_progress,
        };
        let answer = tokio::select! {
            answer = self.shared.host.call_tool(call) => answer,
            // Dropping `in_flight` tells the host to stop the call.
            _ = context.ct.cancelled() => return Err(ErrorData::internal_error("the call was cancelled", None)),
        };
        in_flight.done = true;
        match answer {
            Ok(HostAnswer::Done(result)) => Ok(CallToolResponse::Complete(result)),
            Ok(HostAnswer::Forward { server_id, tool }) => {
                let progress = lock(&self.shared.progress).get(&id).cloned();
                self.forward(&server_id, &tool, arguments, progress, context.ct.clone())
                    .await
                    .map(CallToolResponse::Complete)
            }
            Err(message) => Err(ErrorData::invalid_params(message, None)),
        }
    }
}
