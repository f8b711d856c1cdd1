//! The MCP server of `toolreg serve`: rmcp's server side (handshake, protocol versions, stdio and
//! Streamable HTTP) in front of a [`GatewayHost`] that decides which tools the client sees and
//! runs its calls. The host is the JS layer, where the registry, the defer decision and the
//! meta-tools live; this module only speaks the protocol: it lists what the host lists,
//! forwards calls with their progress and cancellation, passes a server's elicitation, sampling
//! and roots requests on to the client whose call it serves (as requests in a session, or as
//! `input_required` results to a 2026-07-28 client), and re-announces list changes. The
//! servers' prompts, resources and completions pass through without the host.
//!
//! One concern per file: this one the handler and its shared state, `features` the prompts,
//! resources and completions, `http` the Streamable HTTP listener with its bearer token and
//! DNS-rebinding checks, `stdio` the standard streams on the IO reactor, `input_required` the
//! input-required rounds of 2026-07-28 clients, `parked` the calls held for them while a server
//! of the handshake lifecycle waits for an answer, `state` the signed request state those rounds
//! carry.

mod features;
mod http;
mod input_required;
mod parked;
mod state;
mod stdio;

use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::future::BoxFuture;
// Logging is deprecated for the 2026 protocol (SEP-2577); clients of 2025-06-18 and 2025-11-25,
// the ones in use, still set levels and read messages. So are sampling and roots, which servers
// still ask for.
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ClientCapabilities,
    CompleteRequestParams, CompleteResult, ContentBlock, ErrorData, GetPromptRequestParams,
    GetPromptResponse, Implementation, InitializeResult, ListPromptsResult,
    ListResourceTemplatesResult, ListResourcesResult, ListToolsResult, PaginatedRequestParams,
    ProgressNotificationParam, ProgressToken, ProtocolVersion, ReadResourceRequestParams,
    ReadResourceResponse, ResultType, ServerCapabilities, ServerNotification,
    SubscribeRequestParams, SubscriptionFilter, Tool, UnsubscribeRequestParams,
};
#[allow(deprecated)]
use rmcp::model::{LoggingLevel, LoggingMessageNotificationParam, SetLevelRequestParams};
use rmcp::service::{NotificationContext, RequestContext, SubscriptionContext, SubscriptionSink};
use rmcp::{Peer, RoleServer, ServerHandler, ServiceExt};
use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

pub use http::{HttpOptions, serve_http};
pub use state::{StateKey, StateKeyError};

use crate::mcp::{LogSink, McpError, McpHub, ProgressSink};

/// How long a forwarded request may take unless the host says otherwise, as for any MCP call
/// of the library.
pub const DEFAULT_CALL_TIMEOUT: Duration = Duration::from_secs(60);

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
    /// Something the user should know that fails no request (a server left out of a list).
    fn warn(&self, message: String);
    /// A server did not start when a request of the gateway's own (prompts, resources) needed
    /// it ([`McpError::is_start_failure`]): the host tells the user once, may remember it, and
    /// holds it in the hub so that no later request waits on it. By default, a warning.
    fn server_failed(&self, server_id: &str, error: &McpError) {
        self.warn(format!("{server_id} is left out: {error}"));
    }
    /// The gateway forwarded a call of `name` by a [`DirectRoute`] that asked for it, without
    /// asking the host: the host hears of it (to record the use) and is not waited for.
    fn forwarded(&self, name: &str);
}

/// A listed tool that is a server's own, forwarded as it is: the gateway calls it through the
/// hub without the host's round trip (the host decided the route when it built the list, see
/// [`Gateway::set_direct_routes`]). Deferred tools and meta-tools have none: their calls go to
/// the host, which applies approval.
#[derive(Debug, Clone)]
pub struct DirectRoute {
    pub server_id: String,
    pub tool: String,
    /// Tell the host of each call ([`GatewayHost::forwarded`]).
    pub notify: bool,
    /// Checks the arguments before they go to the server, as the host checks the calls it runs.
    pub check: Option<ArgumentCheck>,
}

/// A call's arguments, checked against the tool's schema: those to send (defaults filled in),
/// or the sentence the client gets as the call's error result.
type CheckArguments =
    dyn Fn(Map<String, Value>) -> Result<Map<String, Value>, String> + Send + Sync;

/// The check of a [`DirectRoute`]'s arguments.
#[derive(Clone)]
pub struct ArgumentCheck(Arc<CheckArguments>);

impl ArgumentCheck {
    pub fn new(
        check: impl Fn(Map<String, Value>) -> Result<Map<String, Value>, String> + Send + Sync + 'static,
    ) -> Self {
        ArgumentCheck(Arc::new(check))
    }
}

impl fmt::Debug for ArgumentCheck {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ArgumentCheck")
    }
}

/// Name, version and instructions sent in `initialize`.
#[derive(Debug, Clone)]
pub struct GatewayInfo {
    pub name: String,
    pub version: String,
    /// The deferred-tools section, when tools are deferred.
    pub instructions: Option<String>,
    /// How long a request forwarded to a server (a tool call, a prompt, a resource) may take.
    pub call_timeout: Duration,
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
    /// Calls the host runs whose client asked for progress, by call id: where the host's
    /// progress goes ([`Gateway::progress`]), a channel that is drained before the call's answer
    /// is sent, so the client hears it in order and first.
    progress: Mutex<HashMap<u64, ProgressSink>>,
    /// Forwarded calls in flight, by call id (so in the order they started): where that
    /// server's requests to its client go.
    forwarded: Mutex<BTreeMap<u64, Forwarded>>,
    /// Open `subscriptions/listen` streams (2026-07-28 clients), told about list changes as
    /// the sessions of older clients are; each under a serial of its own, as request ids
    /// repeat across clients.
    listeners: Mutex<Vec<(u64, SubscriptionSink)>>,
    /// Which server each prompt and resource belongs to, and the clients' subscriptions.
    routes: Mutex<features::Routes>,
    /// Changes of a resource's subscription at its server, taking turns per URI.
    subscription_turns: features::SubscriptionTurns,
    /// Signs the request state of the input-required results relayed to 2026-07-28 clients.
    state_key: StateKey,
    /// Calls of 2026-07-28 clients whose server waits for the answer to its request, by call id.
    parked: Mutex<HashMap<u64, parked::Parked>>,
    /// This process among the replicas that share the state key: the states of parked calls
    /// name it.
    instance: String,
    /// Listed server tools by the name the client calls, forwarded without the host.
    direct: Mutex<Arc<HashMap<String, DirectRoute>>>,
}

/// A call in flight whose servers may ask its client something: one the gateway forwards, or
/// one the host runs (a meta-tool, a deferred tool), which reaches servers through the hub.
struct Forwarded {
    /// The servers it reached: the one a forwarded call went to; those a call the host runs
    /// called so far ([`Gateway::call_reaches`]), none yet when it starts.
    servers: Vec<String>,
    /// How the client it serves is asked what the server asks.
    client: AskedClient,
    /// A request of the server this call's client did not declare the capability for: the
    /// call then fails with MissingRequiredClientCapabilityError instead of a result.
    missing: Option<ClientRequest>,
    /// Requests of the server still waiting for the client's answer: a call whose server waits
    /// is not the one that asks next.
    waiting: usize,
    /// A call the host runs for a 2026-07-28 request: the log messages of the servers it
    /// reaches, for the request waiting on it.
    logs: Option<parked::CallLogs>,
}

/// How a server's request reaches the client of the call it belongs to.
enum AskedClient {
    /// A client of the handshake lifecycle: as a request in its session.
    Session(Peer<RoleServer>),
    /// A 2026-07-28 request: as an `input_required` result, through the request waiting on the
    /// call (`parked`), if the capabilities the request declared in its `_meta` cover it.
    Stateless {
        capabilities: ClientCapabilities,
        relay: tokio::sync::mpsc::UnboundedSender<parked::CallEvent>,
    },
}

/// Whether the request came in at 2026-07-28 or later: stateless, its capabilities in `_meta`.
fn stateless(context: &RequestContext<RoleServer>) -> bool {
    // ISO dates compare lexically as they do in time, as rmcp compares them.
    context
        .protocol_version()
        .is_some_and(|v| v.as_str() >= ProtocolVersion::V_2026_07_28.as_str())
}

/// Marks a result as complete (`resultType`, which 2026-07-28 requires). A server behind the
/// gateway speaks an older revision and sends none; rmcp strips it again for older clients.
fn complete_type(result_type: &mut Option<ResultType>) {
    result_type.get_or_insert(ResultType::COMPLETE);
}

/// A request a server behind the gateway sends its client, passed on to a client of the gateway.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClientRequest {
    /// `elicitation/create`: ask the user.
    Elicitation,
    /// `sampling/createMessage`: ask the client's model.
    Sampling,
    /// `roots/list`: the client's directories.
    Roots,
}

impl fmt::Display for ClientRequest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ClientRequest::Elicitation => "elicitation",
            ClientRequest::Sampling => "sampling",
            ClientRequest::Roots => "roots",
        })
    }
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
    pub fn new(
        host: Arc<dyn GatewayHost>,
        info: GatewayInfo,
        hub: Option<McpHub>,
        state_key: StateKey,
    ) -> Self {
        Gateway {
            shared: Arc::new(Shared {
                host,
                hub,
                info: Mutex::new(info),
                peers: Mutex::default(),
                next_call: AtomicU64::new(1),
                log_level: Mutex::new(LoggingLevel::Info),
                progress: Mutex::default(),
                forwarded: Mutex::default(),
                listeners: Mutex::default(),
                routes: Mutex::default(),
                subscription_turns: features::SubscriptionTurns::default(),
                state_key,
                parked: Mutex::default(),
                instance: instance_id(),
                direct: Mutex::default(),
            }),
        }
    }

    /// A fresh id for a call (or a `subscriptions/listen` stream).
    fn next_id(&self) -> u64 {
        self.shared.next_call.fetch_add(1, Ordering::Relaxed)
    }

    fn call_timeout(&self) -> Duration {
        lock(&self.shared.info).call_timeout
    }

    /// Instructions for sessions that start from now on (a session keeps the ones it got).
    pub fn set_instructions(&self, instructions: Option<String>) {
        lock(&self.shared.info).instructions = instructions;
    }

    /// The listed tools that are a server's own, by the name the client calls them: their calls
    /// skip the host (a hop to its thread and back, most of what a forwarded call cost). The
    /// host replaces the table whenever it rebuilds the list; a name not in it goes to the host.
    pub fn set_direct_routes(&self, routes: HashMap<String, DirectRoute>) {
        *lock(&self.shared.direct) = Arc::new(routes);
    }

    /// Tells every connected client that the tool list changed.
    pub async fn notify_tools_changed(&self) {
        for peer in self.live_peers() {
            // A client that went away meanwhile is simply not told.
            let _ = peer.notify_tool_list_changed().await;
        }
        self.notify_listeners(ServerNotification::ToolListChangedNotification(
            Default::default(),
        ))
        .await;
    }

    /// Sends a list change to the open `subscriptions/listen` streams that asked for it.
    async fn notify_listeners(&self, notification: ServerNotification) {
        let listeners = lock(&self.shared.listeners).clone();
        for (_, sink) in listeners {
            // The sink drops what its stream did not ask for, and a closed stream is gone.
            let _ = sink.send(notification.clone()).await;
        }
    }

    /// A server's log message (`notifications/message` params), passed to the sessions when its
    /// level is at least the one they set (`logging/setLevel`). A 2026-07-28 call hears its
    /// server's messages on its own stream instead (`log_forwarder`).
    #[allow(deprecated)]
    pub async fn log(&self, message: Value) {
        let Ok(message) = serde_json::from_value::<LoggingMessageNotificationParam>(message) else {
            return;
        };
        if !at_least(message.level, *lock(&self.shared.log_level)) {
            return;
        }
        for peer in self.live_peers() {
            let _ = peer.notify_logging_message(message.clone()).await;
        }
    }

    /// Passes a server's request (its params as JSON, with the hub's `serverId`) to the client
    /// of the call it belongs to (see [`asking_call`]), or, outside any call, to the client that
    /// connected last; a client without the capability gets no request, the server an error. A
    /// 2026-07-28 client is asked through an `input_required` result (`parked`): this waits
    /// for its retry, within the call's time.
    pub async fn ask_client(
        &self,
        kind: ClientRequest,
        mut request: Value,
    ) -> Result<Value, String> {
        let server_id = request
            .as_object_mut()
            .and_then(|params| params.remove("serverId"));
        let server_id = server_id.as_ref().and_then(Value::as_str);
        let (peer, _waiting) = match self.asked_call(kind, server_id)? {
            Some((AskedTarget::Session(peer), waiting)) => (peer, Some(waiting)),
            Some((AskedTarget::Relay(relay), _waiting)) => {
                let (answer, answered) = tokio::sync::oneshot::channel();
                let asked = parked::CallEvent::Asked {
                    kind,
                    params: request,
                    answer,
                };
                relay.send(asked).map_err(|_| {
                    format!("the call ended before its client could be asked for {kind}")
                })?;
                return answered.await.map_err(|_| {
                    format!("the client did not answer the {kind} request before the call ended (it went away, or the call's time ran out)")
                });
            }
            None => (
                self.live_peers()
                    .pop()
                    .ok_or("no client is connected to the gateway")?,
                None,
            ),
        };
        if !peer
            .peer_info()
            .is_some_and(|info| declares(&info.capabilities, kind))
        {
            return Err(format!(
                "the client connected to the gateway does not support {kind}"
            ));
        }
        let invalid =
            |e: serde_json::Error| format!("the server's {kind} request is not valid: {e}");
        let failed = |e: rmcp::ServiceError| format!("the client's {kind} failed: {e}");
        let answer = match kind {
            ClientRequest::Elicitation => serde_json::to_value(
                peer.create_elicitation(serde_json::from_value(request).map_err(invalid)?)
                    .await
                    .map_err(failed)?,
            ),
            #[allow(deprecated)] // sampling: see the imports
            ClientRequest::Sampling => serde_json::to_value(
                peer.create_message(serde_json::from_value(request).map_err(invalid)?)
                    .await
                    .map_err(failed)?,
            ),
            // `roots/list` has no params: the request carried only the server's id.
            #[allow(deprecated)] // roots: see the imports
            ClientRequest::Roots => serde_json::to_value(peer.list_roots().await.map_err(failed)?),
        };
        answer.map_err(|e| e.to_string())
    }

    /// The call `id` the host is running called a tool of `server`: a request that server
    /// sends may be this call's to ask its client. A call that ended is left alone.
    pub fn call_reaches(&self, id: u64, server: &str) {
        let mut forwarded = lock(&self.shared.forwarded);
        let Some(call) = forwarded.get_mut(&id) else {
            return;
        };
        if !call.servers.iter().any(|s| s == server) {
            call.servers.push(server.to_owned());
        }
        if let (Some(logs), Some(hub)) = (&mut call.logs, &self.shared.hub) {
            logs.reach(hub, server);
        }
    }

    /// The call a server's request belongs to, and how its client is asked; marked as waiting
    /// for the answer until the returned guard drops. `None`: no call to ask through.
    fn asked_call(
        &self,
        kind: ClientRequest,
        server_id: Option<&str>,
    ) -> Result<Option<(AskedTarget, Waiting<'_>)>, String> {
        let mut forwarded = lock(&self.shared.forwarded);
        let calls = forwarded.iter().map(|(id, call)| CallSeen {
            id: *id,
            servers: &call.servers,
            waiting: call.waiting > 0,
            stateless: matches!(call.client, AskedClient::Stateless { .. }),
        });
        let id = match asking_call(calls, server_id) {
            Ok(Some(id)) => id,
            Ok(None) => return Ok(None),
            Err(running) => {
                // The host hears of it outside the lock.
                drop(forwarded);
                let server = server_id.unwrap_or("a server");
                let message = format!(
                    "{server} asked for {kind} while {running} of its calls were running, one of them for a client of 2026-07-28; MCP 2025-11-25 does not say which call a server's request belongs to, and the gateway asks a 2026-07-28 client only when it can tell, so the server's request was refused"
                );
                self.shared.host.warn(message.clone());
                return Err(message);
            }
        };
        let Some(call) = forwarded.get_mut(&id) else {
            return Ok(None);
        };
        let target = match &call.client {
            AskedClient::Session(peer) => AskedTarget::Session(peer.clone()),
            AskedClient::Stateless { capabilities, .. } if !declares(capabilities, kind) => {
                // The call fails as 2026-07-28 says: the client must declare it first.
                call.missing = Some(kind);
                return Err(format!("the client did not declare the {kind} capability"));
            }
            AskedClient::Stateless { relay, .. } => AskedTarget::Relay(relay.clone()),
        };
        call.waiting += 1;
        let waiting = Waiting {
            forwarded: &self.shared.forwarded,
            id,
        };
        Ok(Some((target, waiting)))
    }

    fn live_peers(&self) -> Vec<Peer<RoleServer>> {
        let mut peers = lock(&self.shared.peers);
        peers.retain(|p| !p.is_transport_closed());
        peers.clone()
    }

    /// Progress of call `id` the host runs, sent to its client when it asked for progress: to
    /// the request waiting on the call now (a 2026-07-28 call's retry after a round), none while
    /// the call is parked.
    pub fn progress(&self, id: u64, progress: f64, total: Option<f64>, message: Option<String>) {
        let sink = lock(&self.shared.progress).get(&id).cloned();
        if let Some(sink) = sink {
            sink(progress, total, message);
        }
    }

    /// Serves one client on this process's stdin/stdout until it disconnects or `ct` fires. A
    /// client that goes away before its handshake (a launcher probing the command, a cancelled
    /// start) ends the session like any other disconnect.
    pub async fn serve_stdio(&self, ct: CancellationToken) -> Result<(), String> {
        let running = match self.clone().serve_with_ct(stdio::transport(), ct).await {
            Ok(running) => running,
            Err(rmcp::service::ServerInitializeError::ConnectionClosed(_)) => return Ok(()),
            Err(e) => return Err(format!("the MCP handshake on stdio failed: {e}")),
        };
        running
            .waiting()
            .await
            .map(drop)
            .map_err(|e| format!("the stdio session ended with an error: {e}"))
    }
}

/// Whether these capabilities cover a server's request of this kind.
fn declares(capabilities: &ClientCapabilities, kind: ClientRequest) -> bool {
    match kind {
        ClientRequest::Elicitation => capabilities.elicitation.is_some(),
        #[allow(deprecated)] // sampling: see the imports
        ClientRequest::Sampling => capabilities.sampling.is_some(),
        #[allow(deprecated)] // roots: see the imports
        ClientRequest::Roots => capabilities.roots.is_some(),
    }
}

/// Where a server's request goes.
enum AskedTarget {
    Session(Peer<RoleServer>),
    Relay(tokio::sync::mpsc::UnboundedSender<parked::CallEvent>),
}

/// Marks a call as waiting for its client's answer while it lives.
struct Waiting<'a> {
    forwarded: &'a Mutex<BTreeMap<u64, Forwarded>>,
    id: u64,
}

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        if let Some(call) = lock(self.forwarded).get_mut(&self.id) {
            call.waiting -= 1;
        }
    }
}

/// A forwarded call as [`asking_call`] sees it.
#[derive(Debug, Clone, Copy)]
struct CallSeen<'a> {
    id: u64,
    servers: &'a [String],
    /// Its server waits for an answer already.
    waiting: bool,
    /// Its client is a 2026-07-28 request.
    stateless: bool,
}

/// Which call, of those in flight (in the order they started), a request of `server` belongs
/// to. MCP 2025-11-25 does not say; a server waits for the answer to its request, so it is
/// the server's one call that is not waiting already (or its one call). When several could be,
/// the most recent one is taken for clients with a session, as before; but a 2026-07-28 client
/// is never handed a question that may be another client's: `Err(candidates)`. A server with no
/// call in flight asks through the latest call of a session client, if any (`Ok(None)`: none).
fn asking_call<'a>(
    calls: impl Iterator<Item = CallSeen<'a>>,
    server: Option<&str>,
) -> Result<Option<u64>, usize> {
    let calls: Vec<CallSeen<'a>> = calls.collect();
    let of_server: Vec<&CallSeen<'a>> = calls
        .iter()
        .filter(|call| call.servers.iter().any(|s| Some(s.as_str()) == server))
        .collect();
    if of_server.is_empty() {
        return Ok(calls
            .iter()
            .rev()
            .find(|call| !call.stateless)
            .map(|call| call.id));
    }
    let idle: Vec<&CallSeen<'a>> = of_server
        .iter()
        .copied()
        .filter(|call| !call.waiting)
        .collect();
    let candidates = if idle.is_empty() { of_server } else { idle };
    match candidates.as_slice() {
        [only] => Ok(Some(only.id)),
        several if several.iter().any(|call| call.stateless) => Err(several.len()),
        several => Ok(several.last().map(|call| call.id)),
    }
}

/// A random id for this process (see `Shared::instance`); the process id and the time when no
/// randomness can be had, which still differ between replicas.
fn instance_id() -> String {
    let mut bytes = [0u8; 8];
    if getrandom::fill(&mut bytes).is_err() {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|t| t.subsec_nanos())
            .unwrap_or_default();
        bytes[..4].copy_from_slice(&std::process::id().to_le_bytes());
        bytes[4..].copy_from_slice(&nanos.to_le_bytes());
    }
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The capability a MissingRequiredClientCapabilityError names, as a ClientCapabilities object.
fn required_capability(kind: ClientRequest) -> ClientCapabilities {
    let key = match kind {
        ClientRequest::Elicitation => "elicitation",
        ClientRequest::Sampling => "sampling",
        ClientRequest::Roots => "roots",
    };
    serde_json::from_value(serde_json::json!({ key: {} })).unwrap_or_default()
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
        lock(&self.shared.forwarded).remove(&self.id);
        if !self.done {
            self.shared.host.cancel(self.id);
        }
    }
}

/// Whether a message at `level` is heard by a client that asked for `lowest` and above.
#[allow(deprecated)] // the logging level, see the imports
fn at_least(level: LoggingLevel, lowest: LoggingLevel) -> bool {
    // The levels are declared from least to most severe.
    level as u8 >= lowest as u8
}

/// A sink for a 2026-07-28 call's server log messages and the task that sends them in order to
/// the request `target` names at the time, at the level it asked for and above (a relayed
/// call's request changes with its rounds); the task ends once the sink is dropped and what it
/// holds is sent.
#[allow(deprecated)] // the logging level, see the imports
fn log_forwarder(target: parked::LogTarget) -> (LogSink, tokio::task::JoinHandle<()>) {
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let sink: LogSink = Arc::new(move |message: &Value| {
        if let Ok(message) =
            serde_json::from_value::<LoggingMessageNotificationParam>(message.clone())
        {
            let _ = tx.send(message);
        }
    });
    let forwarder = tokio::spawn(async move {
        while let Some(message) = rx.recv().await {
            let Some((peer, lowest)) = lock(&target).clone() else {
                continue;
            };
            if at_least(message.level, lowest) {
                let _ = peer.notify_logging_message(message).await;
            }
        }
    });
    (sink, forwarder)
}

/// A sink for a forwarded call's progress and the task that passes it on to the client
/// `target` names at the time (a relayed call's changes with its rounds), in order; the task
/// ends once the sink is dropped and what it holds is sent.
fn progress_forwarder(
    target: Option<parked::ProgressTarget>,
) -> (Option<ProgressSink>, Option<tokio::task::JoinHandle<()>>) {
    let Some(target) = target else {
        return (None, None);
    };
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let sink: ProgressSink = Arc::new(move |progress, total, message| {
        let _ = tx.send((progress, total, message));
    });
    let forwarder = tokio::spawn(async move {
        while let Some((progress, total, message)) = rx.recv().await {
            let Some((peer, token)) = lock(&target).clone() else {
                continue;
            };
            let mut param = ProgressNotificationParam::new(token, progress);
            param.total = total;
            param.message = message;
            let _ = peer.notify_progress(param).await;
        }
    });
    (Some(sink), Some(forwarder))
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
        let target = progress.map(|target| Arc::new(Mutex::new(Some(target))));
        let (sink, forwarder) = progress_forwarder(target);
        let result = hub
            .call_tool_result(
                server_id,
                tool,
                arguments,
                self.call_timeout(),
                Some(cancel),
                sink,
            )
            .await;
        // The call is over and its sink dropped: the forwarder ends once it has sent the rest.
        if let Some(forwarder) = forwarder {
            let _ = forwarder.await;
        }
        Ok(result.unwrap_or_else(failed_call))
    }
}

/// A server's failure as this call's failure, as text the client shows.
fn failed_call(error: McpError) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(error.to_string())])
}

impl ServerHandler for Gateway {
    fn get_info(&self) -> InitializeResult {
        let info = lock(&self.shared.info).clone();
        #[allow(deprecated)]
        let capabilities = if self.shared.hub.is_some() {
            ServerCapabilities::builder()
                .enable_completions()
                .enable_logging()
                .enable_prompts()
                .enable_prompts_list_changed()
                .enable_resources()
                .enable_resources_list_changed()
                .enable_resources_subscribe()
                .enable_tools()
                .enable_tool_list_changed()
                .build()
        } else {
            ServerCapabilities::builder()
                .enable_logging()
                .enable_tools()
                .enable_tool_list_changed()
                .build()
        };
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
        let id = self.next_id();
        let progress = context
            .meta
            .get_progress_token()
            .map(|token| (context.peer.clone(), token));
        let wants_progress = progress.is_some();
        let mut in_flight = InFlight {
            shared: &self.shared,
            id,
            done: false,
        };
        let mut arguments = request.arguments.unwrap_or_default();
        let retry = stateless(&context).then(|| input_required::Retry {
            input_responses: request.input_responses,
            request_state: request.request_state,
            capabilities: context.client_capabilities().unwrap_or_default(),
            log: context
                .meta
                .log_level()
                .map(|lowest| (context.peer.clone(), lowest)),
        });
        let direct = lock(&self.shared.direct)
            .get(request.name.as_ref())
            .cloned();
        let answer = match direct {
            Some(DirectRoute {
                server_id,
                tool,
                notify,
                check,
            }) => {
                if let Some(ArgumentCheck(check)) = check {
                    match check(arguments) {
                        Ok(checked) => arguments = checked,
                        Err(sentence) => {
                            // Refused before any server saw it: nothing to cancel.
                            in_flight.done = true;
                            let mut refused =
                                CallToolResult::error(vec![ContentBlock::text(sentence)]);
                            complete_type(&mut refused.result_type);
                            return Ok(CallToolResponse::Complete(refused));
                        }
                    }
                }
                if notify {
                    self.shared.host.forwarded(&request.name);
                }
                Ok(HostAnswer::Forward { server_id, tool })
            }
            None => {
                if let Some(retry) = retry {
                    // A 2026-07-28 client is asked in rounds: the host's run outlives them.
                    in_flight.done = true;
                    return self
                        .host_round(
                            &request.name,
                            arguments,
                            wants_progress,
                            retry,
                            progress,
                            &context.ct,
                        )
                        .await;
                }
                // The host runs it: a server it reaches may ask this call's client
                // (`call_reaches`); until then it is nobody's.
                let asked = Forwarded {
                    servers: Vec::new(),
                    client: AskedClient::Session(context.peer.clone()),
                    missing: None,
                    waiting: 0,
                    logs: None,
                };
                lock(&self.shared.forwarded).insert(id, asked);
                let call = GatewayCall {
                    id,
                    name: request.name.to_string(),
                    arguments: arguments.clone(),
                    wants_progress,
                };
                let target = progress.clone().map(|to| Arc::new(Mutex::new(Some(to))));
                let (sink, forwarder) = progress_forwarder(target);
                if let Some(sink) = sink {
                    lock(&self.shared.progress).insert(id, sink);
                }
                let answer = tokio::select! {
                    answer = self.shared.host.call_tool(call) => answer,
                    // Dropping `in_flight` tells the host to stop the call.
                    _ = context.ct.cancelled() => return Err(ErrorData::internal_error("the call was cancelled", None)),
                };
                // The last sink gone, the forwarder ends once it has sent the rest.
                lock(&self.shared.progress).remove(&id);
                if let Some(forwarder) = forwarder {
                    let _ = forwarder.await;
                }
                answer
            }
        };
        in_flight.done = true;
        let mut result = match answer {
            Ok(HostAnswer::Done(result)) => result,
            Ok(HostAnswer::Forward { server_id, tool }) => {
                match retry {
                    // A 2026-07-28 client: the server's input-required results, and the
                    // requests it sends during the call, reach it as input-required results.
                    Some(retry) => {
                        return self
                            .forward_round(
                                &server_id,
                                &request.name,
                                &tool,
                                arguments,
                                retry,
                                progress,
                                &context.ct,
                            )
                            .await;
                    }
                    None => {
                        let call = Forwarded {
                            servers: vec![server_id.clone()],
                            client: AskedClient::Session(context.peer.clone()),
                            missing: None,
                            waiting: 0,
                            logs: None,
                        };
                        lock(&self.shared.forwarded).insert(id, call);
                        self.forward(&server_id, &tool, arguments, progress, context.ct.clone())
                            .await?
                    }
                }
            }
            Err(message) => return Err(ErrorData::invalid_params(message, None)),
        };
        complete_type(&mut result.result_type);
        Ok(CallToolResponse::Complete(result))
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        Ok(ListPromptsResult::with_all_items(
            self.list_prompts().await?,
        ))
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        if stateless(&context) {
            let retry = input_required::Retry {
                input_responses: request.input_responses.clone(),
                request_state: request.request_state.clone(),
                capabilities: context.client_capabilities().unwrap_or_default(),
                // The log messages of a server's prompt are not passed on.
                log: None,
            };
            return self.get_prompt_round(request, retry, &context.ct).await;
        }
        let mut result = self.get_prompt(request, context.ct.clone()).await?;
        complete_type(&mut result.result_type);
        Ok(GetPromptResponse::Complete(result))
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        Ok(ListResourcesResult::with_all_items(
            self.list_resources().await?,
        ))
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        let templates = self.list_resource_templates().await?;
        Ok(ListResourceTemplatesResult::with_all_items(templates))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let mut result = self.read_resource(request, context.ct.clone()).await?;
        complete_type(&mut result.result_type);
        Ok(ReadResourceResponse::Complete(result))
    }

    #[allow(deprecated)] // the 2025 subscription requests, which clients in use send
    async fn subscribe(
        &self,
        request: SubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let session = features::Subscriber::Session(context.peer);
        self.subscribe(request.uri, session).await
    }

    #[allow(deprecated)] // see `subscribe`
    async fn unsubscribe(
        &self,
        request: UnsubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.unsubscribe(request.uri, &context.peer).await
    }

    async fn complete(
        &self,
        request: CompleteRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CompleteResult, ErrorData> {
        let mut result = self.complete(request).await?;
        complete_type(&mut result.result_type);
        Ok(result)
    }

    /// `subscriptions/listen` (2026-07-28): the list changes the gateway re-announces, and the
    /// resources of the filter it may subscribe to ([`Gateway::may_subscribe`]). A URI no server
    /// is known to have is left out of the acknowledgment, as the revision has it for what a
    /// server does not honour.
    fn accepted_subscription_filter(
        &self,
        requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        let mut accepted = requested.clone();
        accepted.resource_subscriptions = requested.resource_subscriptions.as_ref().map(|uris| {
            uris.iter()
                .filter(|uri| self.may_subscribe(uri))
                .cloned()
                .collect()
        });
        Some(accepted)
    }

    /// Serves one stream until the client cancels it: its resources subscribed at their servers
    /// (shared with sessions and other streams) while it lasts, released when it ends. A
    /// resource its server refuses ends the stream with that error, since the acknowledgment
    /// already promised it.
    async fn listen(&self, subscription: SubscriptionContext) -> Result<(), ErrorData> {
        let serial = self.next_id();
        let sink = subscription.sink().clone();
        lock(&self.shared.listeners).push((serial, sink.clone()));
        let uris = subscription
            .accepted()
            .resource_subscriptions
            .clone()
            .unwrap_or_default();
        let mut subscribed = Vec::new();
        let mut refused = None;
        for uri in uris {
            let listener = features::Subscriber::Listener(serial, sink.clone());
            match self.subscribe(uri.clone(), listener).await {
                Ok(()) => subscribed.push(uri),
                Err(e) => {
                    refused = Some(e);
                    break;
                }
            }
        }
        if refused.is_none() {
            subscription.cancelled().await;
        }
        lock(&self.shared.listeners).retain(|(open, _)| *open != serial);
        let this_stream = |s: &features::Subscriber| matches!(s, features::Subscriber::Listener(open, _) if *open == serial);
        for uri in subscribed {
            if let Err(e) = self.release(uri.clone(), this_stream).await {
                self.shared.host.warn(format!(
                    "the resource {uri} could not be unsubscribed: {}",
                    e.message
                ));
            }
        }
        refused.map_or(Ok(()), Err)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_capability_is_named_as_a_client_capabilities_object() {
        // The 2026-07-28 schema: `requiredCapabilities` is a ClientCapabilities object keyed by
        // the missing capability, not a list of names.
        let error = ErrorData::missing_required_client_capability(required_capability(
            ClientRequest::Sampling,
        ));
        assert_eq!(error.code.0, -32021);
        assert_eq!(
            error.data,
            Some(serde_json::json!({ "requiredCapabilities": { "sampling": {} } }))
        );
        let elicitation = serde_json::to_value(required_capability(ClientRequest::Elicitation))
            .expect("capabilities serialize");
        assert_eq!(elicitation, serde_json::json!({ "elicitation": {} }));
    }

    #[test]
    fn declared_capabilities_cover_their_own_requests_only() {
        let sampling = required_capability(ClientRequest::Sampling);
        assert!(declares(&sampling, ClientRequest::Sampling));
        assert!(!declares(&sampling, ClientRequest::Elicitation));
        assert!(!declares(
            &ClientCapabilities::default(),
            ClientRequest::Sampling
        ));
    }

    /// A call that reached these servers (leaked: a test's few names outlive its calls).
    fn reached(id: u64, servers: &[&str], waiting: bool, stateless: bool) -> CallSeen<'static> {
        let servers: Vec<String> = servers.iter().map(|s| s.to_string()).collect();
        CallSeen {
            id,
            servers: Vec::leak(servers),
            waiting,
            stateless,
        }
    }

    fn seen(id: u64, server: &str, waiting: bool, stateless: bool) -> CallSeen<'static> {
        reached(id, &[server], waiting, stateless)
    }

    #[test]
    fn a_call_the_host_runs_belongs_to_each_server_it_reached_and_to_none_before() {
        // Client 1's tool_exec called files and mail; client 2 connected later and is calling
        // a tool_search, which reached no server.
        let calls = [
            reached(1, &["files", "mail"], false, false),
            reached(2, &[], false, false),
        ];
        assert_eq!(asking_call(calls.into_iter(), Some("mail")), Ok(Some(1)));
        assert_eq!(asking_call(calls.into_iter(), Some("files")), Ok(Some(1)));
        // A 2026-07-28 client's call that reached the server is a candidate too, so a session's
        // call beside it is not handed the question.
        let calls = [
            reached(1, &["files"], false, true),
            seen(2, "files", false, false),
        ];
        assert_eq!(asking_call(calls.into_iter(), Some("files")), Err(2));
    }

    #[test]
    fn a_servers_request_belongs_to_its_one_call_that_is_not_waiting_already() {
        let calls = [
            seen(1, "files", true, true),
            seen(2, "mail", false, true),
            seen(3, "files", false, true),
        ];
        assert_eq!(asking_call(calls.into_iter(), Some("files")), Ok(Some(3)));
        // Every call of the server waits: its one call asks again.
        let calls = [seen(1, "files", true, true), seen(2, "mail", false, false)];
        assert_eq!(asking_call(calls.into_iter(), Some("files")), Ok(Some(1)));
    }

    #[test]
    fn a_2026_client_is_never_handed_a_question_that_may_be_another_clients() {
        let calls = [
            seen(1, "files", false, true),
            seen(2, "files", false, false),
        ];
        assert_eq!(asking_call(calls.into_iter(), Some("files")), Err(2));
        // Sessions only: the most recent call, as before.
        let calls = [
            seen(1, "files", false, false),
            seen(2, "files", false, false),
        ];
        assert_eq!(asking_call(calls.into_iter(), Some("files")), Ok(Some(2)));
    }

    #[test]
    fn a_request_outside_any_call_of_its_server_goes_to_a_session_only() {
        let calls = [seen(1, "files", false, false), seen(2, "mail", false, true)];
        assert_eq!(asking_call(calls.into_iter(), Some("web")), Ok(Some(1)));
        let stateless_only = [seen(2, "mail", false, true)];
        assert_eq!(asking_call(stateless_only.into_iter(), None), Ok(None));
    }

    #[test]
    fn a_result_without_a_type_becomes_complete_and_another_type_is_kept() {
        let mut absent = None;
        complete_type(&mut absent);
        assert_eq!(absent, Some(ResultType::COMPLETE));
        let mut input_required = Some(ResultType::INPUT_REQUIRED);
        complete_type(&mut input_required);
        assert_eq!(input_required, Some(ResultType::INPUT_REQUIRED));
    }
}
