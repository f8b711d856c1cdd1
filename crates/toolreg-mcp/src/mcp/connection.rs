//! One live MCP connection: opening it over the configured transport (handshake included),
//! watching it until it ends, and tearing it down so that no child process survives.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures::FutureExt;
use futures::future::{BoxFuture, Shared, WeakShared};
// Logging is deprecated for the 2026 protocol (SEP-2577); servers of 2025-06-18 and 2025-11-25,
// the ones in use, still send it.
#[allow(deprecated)]
use rmcp::model::LoggingMessageNotificationParam;
// Sampling too is deprecated for the 2026 protocol (SEP-2577); servers still ask for it.
use rmcp::model::{
    ClientCapabilities, ClientConfig, ClientJsonRpcMessage, ClientRequest, ElicitRequestParams,
    ElicitResult, ElicitationCapability, Implementation, InputRequest, InputRequiredResult,
    InputResponses, ProgressNotificationParam, ProtocolVersion, RequestId,
    ResourceUpdatedNotificationParam, ServerJsonRpcMessage, ServerResult, Tool,
};
#[allow(deprecated)]
use rmcp::model::{CreateMessageRequestParams, CreateMessageResult};
// Roots too (SEP-2577); servers still ask for them.
#[allow(deprecated)]
use rmcp::model::ListRootsResult;
use rmcp::service::{
    ClientLifecycleMode, NotificationContext, RequestContext, RunningService,
    serve_client_with_lifecycle_and_ct,
};
use rmcp::transport::async_rw::AsyncRwTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::{IntoTransport, StreamableHttpClientTransport, Transport};
use rmcp::{ClientHandler, Peer, RoleClient, ServiceError};
use serde_json::Value;
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use super::ask::{AskHostHandle, apply_defaults};
use super::auth::ServerAuth;
use super::config::header_map;
use super::events::{HubEventsHandle, LogTaps, Notices, ProgressRoutes, ServerList};
use super::http::{HubHttp, StandaloneStream};
use super::listen::Listener;
use super::process::{self, ChildProcess, NOISE_GRACE, StderrTail, StdoutNoise, describe_exit};
use super::sse::LegacySseTransport;
use super::{Failure, McpError, ServerConfig};

/// Everything needed to open a connection; cloned into the connect task.
#[derive(Clone)]
pub(crate) struct ConnectParams {
    pub config: ServerConfig,
    pub client_name: String,
    pub client_version: String,
    pub max_message_bytes: usize,
    pub shutdown_grace: Duration,
    pub elicitor: Option<AskHostHandle>,
    pub sampler: Option<AskHostHandle>,
    pub roots: Option<AskHostHandle>,
    pub events: Option<HubEventsHandle>,
    pub stderr: Arc<StderrTail>,
    pub stdout_noise: Arc<StdoutNoise>,
    pub log_taps: Arc<LogTaps>,
    pub http: Result<reqwest::Client, String>,
    /// OAuth of a remote server that has no configured `Authorization` header.
    pub auth: Option<Arc<ServerAuth>>,
    /// The revision this server spoke on its last connection, if that one succeeded: the next
    /// connect speaks it at once instead of probing again.
    pub remembered: Option<ProtocolVersion>,
}

impl ConnectParams {
    /// How to open the MCP lifecycle: the pinned or remembered revision as it is (the
    /// `initialize` handshake up to 2025-11-25, `server/discover` from 2026-07-28 on);
    /// otherwise probe with `server/discover` at the current revision and fall back to the
    /// handshake when the server answers as an older one. The legacy SSE transport predates
    /// the probe.
    fn lifecycle(&self) -> (ClientLifecycleMode, ProtocolVersion) {
        let fixed = self
            .config
            .pinned_protocol_version()
            .or_else(|| self.remembered.clone());
        match (&self.config, fixed) {
            (ServerConfig::Sse { .. }, _) => (
                ClientLifecycleMode::Initialize,
                ProtocolVersion::V_2024_11_05,
            ),
            (_, Some(version)) if version.has_initialize() => {
                (ClientLifecycleMode::Initialize, version)
            }
            (_, Some(version)) => (
                ClientLifecycleMode::Discover {
                    preferred_versions: vec![version],
                },
                ProtocolVersion::LATEST_WITH_INITIALIZE,
            ),
            (_, None) => (
                ClientLifecycleMode::Auto {
                    // Newest first. The older ones matter only for a server that knows
                    // `server/discover` but was restricted to an older revision: it answers the
                    // probe with the versions it has, and rmcp asks again with one of them
                    // instead of giving up.
                    preferred_versions: ProtocolVersion::KNOWN_VERSIONS
                        .iter()
                        .rev()
                        .cloned()
                        .collect(),
                    legacy_version: Some(ProtocolVersion::LATEST_WITH_INITIALIZE),
                },
                ProtocolVersion::LATEST_WITH_INITIALIZE,
            ),
        }
    }
}

/// How long a connect waits for a 2026-07-28 server to acknowledge the hub's
/// `subscriptions/listen` stream: a server that never does still serves calls.
const FIRST_LISTEN_PATIENCE: Duration = Duration::from_secs(5);

/// Why a connect attempt did not produce a connection. `Clone`: one attempt is shared.
#[derive(Debug, Clone)]
pub(crate) enum ConnectFailure {
    Timeout(Duration),
    /// The attempt was abandoned (server removed, hub closed).
    Cancelled,
    Failed(Failure),
    /// The server needs authorization that could not be obtained.
    Auth(McpError),
}

impl ConnectFailure {
    pub(crate) fn failure(&self) -> Failure {
        match self {
            ConnectFailure::Timeout(d) => format!(
                "the MCP handshake did not finish within {} ms",
                d.as_millis()
            )
            .into(),
            ConnectFailure::Cancelled => "the connection attempt was cancelled".into(),
            ConnectFailure::Failed(f) => f.clone(),
            ConnectFailure::Auth(e) => e.to_string().into(),
        }
    }
}

/// A server's tools (all pages), and how long it said they stay fresh: `ttlMs` of MCP
/// 2026-07-28 (the shortest of the pages'); `None`, as older servers say nothing, until it
/// sends `list_changed`.
#[derive(Clone)]
pub(crate) struct ToolList {
    pub tools: Arc<Vec<Tool>>,
    pub ttl: Option<Duration>,
}

/// The outcome of a `tools/list`; the error is shared by every caller that joined.
type ListResult = Result<ToolList, Arc<ServiceError>>;
type ListFuture = BoxFuture<'static, ListResult>;

/// A `tools/list` in flight.
pub(crate) type Listing = Shared<ListFuture>;

/// What a caller of `tools/list` finds: the cached list, or a listing to await and the cache
/// epoch it belongs to.
pub(crate) enum Listed {
    Cached(Arc<Vec<Tool>>),
    Pending { epoch: u64, listing: Listing },
}

/// The tools/list cache of one connection. The epoch makes a list that raced with a
/// `list_changed` notification not overwrite the invalidation. Callers that find the cache
/// empty share one listing per epoch; it is held weakly, so when every caller has given up it
/// is dropped (which cancels the request) and the next caller starts afresh.
#[derive(Default)]
pub(crate) struct ToolCache {
    inner: Mutex<CacheState>,
}

#[derive(Default)]
struct CacheState {
    epoch: u64,
    /// The list, and when it stops being fresh (`None`: when the server says it changed).
    tools: Option<(Arc<Vec<Tool>>, Option<Instant>)>,
    listing: Option<(u64, WeakShared<ListFuture>)>,
}

impl ToolCache {
    fn state(&self) -> std::sync::MutexGuard<'_, CacheState> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub(crate) fn get(&self) -> Option<Arc<Vec<Tool>>> {
        self.state().tools.as_ref().map(|(tools, _)| tools.clone())
    }

    /// The cached list while it is fresh, else the listing of this epoch, joined or started
    /// with `start`.
    pub(crate) fn cached_or_listing(&self, start: impl FnOnce() -> ListFuture) -> Listed {
        let mut st = self.state();
        if let Some((tools, fresh_until)) = &st.tools
            && fresh_until.is_none_or(|until| Instant::now() < until)
        {
            return Listed::Cached(tools.clone());
        }
        let epoch = st.epoch;
        if let Some((at, weak)) = &st.listing
            && *at == epoch
            && let Some(listing) = weak.upgrade()
        {
            return Listed::Pending { epoch, listing };
        }
        let listing = start().shared();
        st.listing = listing.downgrade().map(|weak| (epoch, weak));
        Listed::Pending { epoch, listing }
    }

    /// Keeps a finished listing unless a `list_changed` came in meanwhile, and returns the list
    /// to hand out: a list read again after its ttl that did not change is the one already
    /// held, so the host sees the same list (`Arc::ptr_eq`) and parses nothing again.
    pub(crate) fn store_if_current(&self, epoch: u64, list: ToolList) -> Arc<Vec<Tool>> {
        let mut st = self.state();
        let tools = match &st.tools {
            Some((held, _)) if **held == *list.tools => held.clone(),
            _ => list.tools,
        };
        if st.epoch == epoch {
            let fresh_until = list.ttl.and_then(|ttl| Instant::now().checked_add(ttl));
            st.tools = Some((tools.clone(), fresh_until));
        }
        tools
    }

    pub(crate) fn invalidate(&self) {
        let mut st = self.state();
        st.epoch += 1;
        st.tools = None;
        st.listing = None;
    }
}

/// The rmcp client handler: it reacts to `notifications/tools/list_changed`, and hands a
/// server's `elicitation/create` and `sampling/createMessage` to the host, if it answers them.
pub(crate) struct HubClient {
    info: ClientConfig,
    notices: Notices,
    asker: Arc<Asker>,
    events: Option<HubEventsHandle>,
    log_taps: Arc<LogTaps>,
    progress: Arc<ProgressRoutes>,
}

/// Hands what a server asks of the client to the host: the same answers whether the server
/// sent a request of its own (`elicitation/create`, 2025-11-25) or returned it in an
/// `input_required` result (2026-07-28).
pub(crate) struct Asker {
    server_id: String,
    elicitor: Option<AskHostHandle>,
    sampler: Option<AskHostHandle>,
    roots: Option<AskHostHandle>,
}

impl ClientHandler for HubClient {
    fn get_info(&self) -> ClientConfig {
        self.info.clone()
    }

    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.notices.tools_changed();
    }

    async fn on_prompt_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.notices.list_changed(ServerList::Prompts);
    }

    async fn on_resource_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.notices.list_changed(ServerList::Resources);
    }

    async fn on_resource_updated(
        &self,
        params: ResourceUpdatedNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        self.notices.resource_updated(&params.uri);
    }

    async fn on_progress(
        &self,
        notification: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        self.progress.deliver(notification);
    }

    #[allow(deprecated)]
    async fn on_logging_message(
        &self,
        notification: LoggingMessageNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        let Ok(message) = serde_json::to_value(&notification) else {
            return;
        };
        self.log_taps.deliver(&message);
        if let Some(events) = &self.events {
            events.0.log(&self.notices.server_id, message);
        }
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, rmcp::ErrorData> {
        self.asker.elicit(request).await
    }

    #[allow(deprecated)] // sampling: see the imports
    async fn create_message(
        &self,
        request: CreateMessageRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<CreateMessageResult, rmcp::ErrorData> {
        self.asker.sample(request).await
    }

    #[allow(deprecated)] // roots: see the imports
    async fn list_roots(
        &self,
        _context: RequestContext<RoleClient>,
    ) -> Result<ListRootsResult, rmcp::ErrorData> {
        self.asker.list_roots().await
    }
}

impl Asker {
    /// A form for the user, with the schema's defaults filled in where the host left a field
    /// out (SEP-1034).
    pub(crate) async fn elicit(
        &self,
        request: ElicitRequestParams,
    ) -> Result<ElicitResult, rmcp::ErrorData> {
        let schema = serde_json::to_value(&request)
            .ok()
            .and_then(|r| r.get("requestedSchema").cloned());
        let mut answer = self.ask(&self.elicitor, "elicitation", request).await?;
        if let Some(schema) = schema {
            apply_defaults(&mut answer, &schema);
        }
        parse_answer(answer, "elicitation")
    }

    #[allow(deprecated)] // sampling: see the imports
    pub(crate) async fn sample(
        &self,
        request: CreateMessageRequestParams,
    ) -> Result<CreateMessageResult, rmcp::ErrorData> {
        let answer = self.ask(&self.sampler, "sampling", request).await?;
        parse_answer(answer, "sampling")
    }

    /// The host's roots (`roots/list` has no params: the host is handed only `serverId`).
    #[allow(deprecated)] // roots: see the imports
    pub(crate) async fn list_roots(&self) -> Result<ListRootsResult, rmcp::ErrorData> {
        let answer = self
            .ask(&self.roots, "roots", Value::Object(Default::default()))
            .await?;
        parse_answer(answer, "roots")
    }

    /// Answers an `input_required` result (2026-07-28): every input request through the host,
    /// as if the server had sent it as a request of its own, and the values to retry with
    /// (`inputResponses`, and `requestState` echoed untouched). A result that asks nothing
    /// but carries state is polled again after a short pause that grows with each such round.
    pub(crate) async fn answer(
        &self,
        input: InputRequiredResult,
        state_only_rounds: &mut u32,
    ) -> Result<(Option<InputResponses>, Option<String>), ServiceError> {
        let requests = input.input_requests.unwrap_or_default();
        if requests.is_empty() {
            if input.request_state.is_none() {
                // Nothing to answer and nothing to echo: retrying would loop forever.
                return Err(ServiceError::UnexpectedResponse);
            }
            let pause = (50u64 << (*state_only_rounds).min(3)).min(250);
            *state_only_rounds += 1;
            tokio::time::sleep(Duration::from_millis(pause)).await;
            return Ok((None, input.request_state));
        }
        *state_only_rounds = 0;
        let answers = futures::future::try_join_all(requests.into_iter().map(|(key, request)| {
            async move {
                let answer = match request {
                    InputRequest::Elicitation(r) => to_json(self.elicit(r.params).await?),
                    #[allow(deprecated)]
                    InputRequest::CreateMessage(r) => to_json(self.sample(r.params).await?),
                    InputRequest::ListRoots(_) => to_json(self.list_roots().await?),
                    // A kind of input a later revision adds, which this client never declared.
                    _ => Err(rmcp::ErrorData::new(
                        rmcp::model::ErrorCode::METHOD_NOT_FOUND,
                        "this client does not support this kind of input request",
                        None,
                    )),
                }?;
                Ok::<_, rmcp::ErrorData>((key, answer))
            }
        }))
        .await
        .map_err(ServiceError::McpError)?;
        Ok((Some(answers.into_iter().collect()), input.request_state))
    }

    /// Hands a server's request to the host as JSON with `serverId` added.
    async fn ask(
        &self,
        host: &Option<AskHostHandle>,
        kind: &str,
        request: impl serde::Serialize,
    ) -> Result<Value, rmcp::ErrorData> {
        // Without a host to ask, the capability was not declared: the request is one this
        // client does not handle, not a user's refusal.
        let Some(host) = host else {
            return Err(rmcp::ErrorData::new(
                rmcp::model::ErrorCode::METHOD_NOT_FOUND,
                format!("this client does not support {kind}"),
                None,
            ));
        };
        let mut request = serde_json::to_value(&request)
            .map_err(|e| rmcp::ErrorData::internal_error(e.to_string(), None))?;
        if let Some(params) = request.as_object_mut() {
            params.insert("serverId".to_owned(), Value::String(self.server_id.clone()));
        }
        host.0
            .ask(request)
            .await
            .map_err(|e| rmcp::ErrorData::internal_error(e, None))
    }
}

fn to_json(answer: impl serde::Serialize) -> Result<Value, rmcp::ErrorData> {
    serde_json::to_value(answer).map_err(|e| rmcp::ErrorData::internal_error(e.to_string(), None))
}

fn parse_answer<T: serde::de::DeserializeOwned>(
    answer: Value,
    kind: &str,
) -> Result<T, rmcp::ErrorData> {
    serde_json::from_value(answer).map_err(|e| {
        rmcp::ErrorData::internal_error(format!("the host's {kind} answer is not valid: {e}"), None)
    })
}

pub(crate) type Running = RunningService<RoleClient, HubClient>;

pub(crate) struct Connection {
    pub peer: Peer<RoleClient>,
    pub tools: Arc<ToolCache>,
    /// Answers the `input_required` results of this connection's requests.
    pub asker: Arc<Asker>,
    /// Where the progress of this connection's calls goes.
    pub progress: Arc<ProgressRoutes>,
    /// The revision the server speaks on this connection (from `initialize` or
    /// `server/discover`).
    pub protocol_version: Option<ProtocolVersion>,
    /// The `subscriptions/listen` stream of a 2026-07-28 server, which has no session to carry
    /// notifications; `None` for a server of the handshake lifecycle.
    pub listener: Option<Listener>,
    child: Option<ChildProcess>,
    /// Stops rmcp's service loop (which then closes the transport).
    ct: CancellationToken,
    closing: AtomicBool,
    shutdown_grace: Duration,
    end_reason: Mutex<Option<String>>,
    done: watch::Sender<bool>,
}

impl Connection {
    pub(crate) fn pid(&self) -> Option<u32> {
        self.child.as_ref().and_then(|c| c.pid())
    }

    /// Whether the server declared the `tools` capability in `initialize`.
    pub(crate) fn declares_tools(&self) -> bool {
        self.peer
            .peer_info()
            .is_some_and(|info| info.capabilities.tools.is_some())
    }

    pub(crate) fn is_alive(&self) -> bool {
        !*self.done.borrow()
            && !self.peer.is_transport_closed()
            && self
                .child
                .as_ref()
                .is_none_or(|c| c.exit_status().is_none())
    }

    /// Why the connection ended, waiting up to `max` for the teardown to know (exit status).
    pub(crate) async fn end_reason(&self, max: Duration) -> String {
        tokio::time::timeout(max, self.ended())
            .await
            .unwrap_or_else(|_| self.end_reason_now())
    }

    /// Resolves once the connection is torn down, with the reason.
    pub(crate) async fn ended(&self) -> String {
        let mut rx = self.done.subscribe();
        let _ = rx.wait_for(|d| *d).await;
        self.end_reason_now()
    }

    pub(crate) fn end_reason_now(&self) -> String {
        if let Some(r) = self
            .end_reason
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
        {
            return r;
        }
        self.describe_end()
    }

    fn describe_end(&self) -> String {
        if self.was_closed_by_us() {
            return "the host closed the connection (close() or remove_server())".to_owned();
        }
        match self.child.as_ref().and_then(|c| c.exit_status()) {
            Some(s) => format!("the server process {}", describe_exit(s)),
            None => "the server closed the connection".to_owned(),
        }
    }

    pub(crate) fn was_closed_by_us(&self) -> bool {
        self.closing.load(Ordering::SeqCst)
    }

    /// Owns the rmcp service until it ends (server gone, transport error, or `shutdown`), then
    /// reaps the child. Returns the reason, for `last_error`.
    pub(crate) async fn run(self: Arc<Self>, running: Running) -> String {
        let _ = running.waiting().await;
        // rmcp closed the transport, i.e. the child's stdin: the polite stdio shutdown.
        if let Some(child) = &self.child {
            child.shutdown(self.shutdown_grace).await;
        }
        let reason = self.describe_end();
        *self.end_reason.lock().unwrap_or_else(|e| e.into_inner()) = Some(reason.clone());
        self.done.send_replace(true);
        reason
    }

    /// Closes the connection and waits until it is torn down (child reaped).
    pub(crate) async fn shutdown(&self) {
        self.closing.store(true, Ordering::SeqCst);
        self.ct.cancel();
        let mut rx = self.done.subscribe();
        // rmcp drains for up to 2 s, then the child gets 2 x grace before SIGKILL.
        let budget = Duration::from_secs(5) + self.shutdown_grace * 3;
        if tokio::time::timeout(budget, rx.wait_for(|d| *d))
            .await
            .is_err()
            && let Some(child) = &self.child
        {
            child.kill_and_reap().await;
        }
    }

    /// Synchronous best effort for `Drop`: stop the loop and SIGKILL the child.
    pub(crate) fn kill_now(&self) {
        self.closing.store(true, Ordering::SeqCst);
        self.ct.cancel();
        if let Some(child) = &self.child {
            child.kill_now();
        }
    }
}

/// Opens a connection and completes the MCP handshake, within `timeout` and until `cancel`.
/// On failure nothing is left behind: a spawned child is killed and reaped before returning.
pub(crate) async fn connect(
    p: &ConnectParams,
    cancel: &CancellationToken,
    timeout: Duration,
) -> Result<(Arc<Connection>, Running), ConnectFailure> {
    let tools = Arc::new(ToolCache::default());
    let notices = Notices {
        server_id: p.config.id().to_owned(),
        tools: tools.clone(),
        events: p.events.clone(),
    };
    let progress = Arc::new(ProgressRoutes::default());
    let mut capabilities = ClientCapabilities::default();
    if p.elicitor.is_some() {
        // Form mode only: the host answers with field values, it opens no URLs.
        let mut elicitation = ElicitationCapability::new();
        elicitation.form = Some(Default::default());
        capabilities.elicitation = Some(elicitation);
    }
    if p.sampler.is_some() {
        capabilities.sampling = Some(Default::default());
    }
    if p.roots.is_some() {
        // The host's roots are read when a server asks: the hub sends no list changes.
        capabilities.roots = Some(Default::default());
    }
    let (lifecycle, handshake_version) = p.lifecycle();
    let asker = Arc::new(Asker {
        server_id: p.config.id().to_owned(),
        elicitor: p.elicitor.clone(),
        sampler: p.sampler.clone(),
        roots: p.roots.clone(),
    });
    let handler = HubClient {
        info: ClientConfig::new(
            capabilities,
            Implementation::new(p.client_name.clone(), p.client_version.clone()),
        )
        // The version offered in `initialize` (the newest that still has the handshake, unless
        // pinned); older servers answer with their own version (e.g. 2024-11-05) and rmcp
        // accepts it.
        .with_protocol_version(handshake_version),
        notices: notices.clone(),
        asker: asker.clone(),
        events: p.events.clone(),
        log_taps: p.log_taps.clone(),
        progress: progress.clone(),
    };
    let ct = CancellationToken::new();
    let serve_ct = ct.clone();

    let mut child = None;
    let outcome: Result<Result<Running, Failure>, ConnectFailure> = match &p.config {
        ServerConfig::Stdio {
            command,
            args,
            env,
            cwd,
            ..
        } => {
            let spawned = process::spawn(
                command,
                args,
                env,
                cwd.as_deref(),
                p.stderr.clone(),
                p.stdout_noise.clone(),
            )
            .map_err(|e| {
                ConnectFailure::Failed(format!("could not start {command:?}: {e}").into())
            })?;
            child = Some(spawned.process);
            let transport =
                AsyncRwTransport::<RoleClient, _, _>::new(spawned.stdout, spawned.stdin)
                    .with_max_line_length(p.max_message_bytes);
            // A server that writes what is not JSON-RPC on stdout and no handshake soon after
            // is given up then, not at the end of the whole timeout (the child is killed below,
            // as for any failed connect).
            let open = bounded(
                handshake(handler, transport, lifecycle, serve_ct),
                cancel,
                timeout,
                p,
            );
            tokio::select! {
                opened = open => opened,
                () = p.stdout_noise.grace_over(NOISE_GRACE) => {
                    let reason = p.stdout_noise.gave_up(NOISE_GRACE).into();
                    Err(ConnectFailure::Failed(describe_stdio_failure(reason, None, &p.stderr)))
                }
            }
        }
        ServerConfig::StreamableHttp {
            id, url, headers, ..
        } => {
            let client = http_client(p)?;
            let headers = header_map(id, headers)
                .map_err(|e| ConnectFailure::Failed(e.to_string().into()))?
                .into_iter()
                .filter_map(|(k, v)| Some((k?, v)))
                .collect();
            let config = StreamableHttpClientTransportConfig::with_uri(url.trim())
                .custom_headers(headers)
                .max_json_response_size(p.max_message_bytes)
                .max_sse_event_size(p.max_message_bytes);
            let stream = Arc::new(StandaloneStream::default());
            let client = HubHttp {
                inner: client,
                auth: p.auth.clone(),
                stream: stream.clone(),
            };
            let transport = StreamableHttpClientTransport::with_client(client, config);
            let open = async move {
                let running = handshake(handler, transport, lifecycle, serve_ct).await?;
                // Only a session of the handshake era has a standalone GET stream: from
                // 2026-07-28 on there is none, even when a server hands out a session id.
                let session_era = running
                    .peer()
                    .peer_info()
                    .is_none_or(|info| info.protocol_version.has_initialize());
                if session_era {
                    stream.opened().await;
                }
                Ok(running)
            };
            bounded(open, cancel, timeout, p).await
        }
        ServerConfig::Sse {
            id, url, headers, ..
        } => {
            let client = http_client(p)?;
            let headers = header_map(id, headers)
                .map_err(|e| ConnectFailure::Failed(e.to_string().into()))?;
            let max = p.max_message_bytes;
            let url = url.trim().to_owned();
            let auth = p.auth.clone();
            let open = async move {
                let transport = LegacySseTransport::connect(client, &url, headers, max, auth)
                    .await
                    .map_err(|e| {
                        let failure = Failure::of(&e);
                        Failure {
                            message: format!("could not open the SSE stream: {}", failure.message),
                            ..failure
                        }
                    })?;
                handshake(handler, transport, lifecycle, serve_ct).await
            };
            bounded(open, cancel, timeout, p).await
        }
    };

    // An authorization that gave up says why better than the transport error it caused.
    let outcome = match (outcome, p.auth.as_ref().and_then(|a| a.take_failure())) {
        (Ok(Err(_)), Some(auth_failure)) => return Err(ConnectFailure::Auth(auth_failure)),
        (outcome, _) => outcome,
    };
    let running = match outcome {
        Ok(Ok(running)) => running,
        Ok(Err(reason)) => {
            let reason = match &child {
                Some(c) => {
                    // A process that is exiting gets a moment so that its real status is known.
                    let exited = c.wait_exit(Duration::from_millis(300)).await;
                    c.kill_and_reap().await;
                    describe_stdio_failure(reason, exited, &p.stderr)
                }
                None => reason,
            };
            return Err(ConnectFailure::Failed(reason));
        }
        Err(failure) => {
            if let Some(c) = &child {
                c.kill_and_reap().await;
            }
            // A server that only wrote garbage on stdout did not time out: it never spoke MCP.
            if let ConnectFailure::Timeout(after) = failure
                && let Some(reason) = p.stdout_noise.connect_failure(after)
            {
                return Err(ConnectFailure::Failed(reason.into()));
            }
            return Err(failure);
        }
    };
    let protocol_version = running
        .peer()
        .peer_info()
        .map(|info| info.protocol_version.clone());
    let listener = protocol_version
        .as_ref()
        .is_some_and(|v| !v.has_initialize())
        .then(|| Listener::start(running.peer().clone(), notices, ct.clone()));
    if let Some(listener) = &listener {
        listener.opened(FIRST_LISTEN_PATIENCE).await;
    }
    let conn = Arc::new(Connection {
        peer: running.peer().clone(),
        tools,
        asker,
        progress,
        protocol_version,
        listener,
        child,
        ct,
        closing: AtomicBool::new(false),
        shutdown_grace: p.shutdown_grace,
        end_reason: Mutex::new(None),
        done: watch::Sender::new(false),
    });
    Ok((conn, running))
}

/// Opens the MCP lifecycle over any transport: `server/discover`, the `initialize` handshake,
/// or the one after the other (see [`ConnectParams::lifecycle`]).
async fn handshake<T, E, A>(
    handler: HubClient,
    transport: T,
    lifecycle: ClientLifecycleMode,
    ct: CancellationToken,
) -> Result<Running, Failure>
where
    T: IntoTransport<RoleClient, E, A>,
    E: std::error::Error + Send + Sync + 'static,
{
    let transport = DiscoverProbe {
        inner: transport.into_transport(),
        pending: None,
        abandoned: false,
    };
    serve_client_with_lifecycle_and_ct(handler, transport, lifecycle, ct)
        .await
        .map_err(|e| Failure::of(&e))
}

/// The transport during the whole connection, watching the `server/discover` probe: an older
/// server may answer a method it does not know with a result (some answer every method with
/// `{}`) instead of an error. A reply to the probe that is not a discover result is turned into
/// the "method not found" the server meant, so that rmcp falls back to the `initialize`
/// handshake on the same transport, as it does for an older server that says so.
///
/// rmcp also gives up on a probe left unanswered for 10 s and sends `initialize`; a server that
/// was merely slow to start then answers the probe late, and that answer is dropped here so
/// that it is not taken for the answer to `initialize`.
struct DiscoverProbe<T> {
    inner: T,
    /// The id of the probe awaiting its answer.
    pending: Option<RequestId>,
    /// rmcp went on to `initialize`: a late answer to the probe is stale.
    abandoned: bool,
}

impl<T: Transport<RoleClient>> Transport<RoleClient> for DiscoverProbe<T> {
    type Error = T::Error;

    fn send(
        &mut self,
        item: ClientJsonRpcMessage,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        if let ClientJsonRpcMessage::Request(request) = &item
            && matches!(request.request, ClientRequest::DiscoverRequest(_))
        {
            self.pending = Some(request.id.clone());
        }
        if let ClientJsonRpcMessage::Request(request) = &item
            && matches!(request.request, ClientRequest::InitializeRequest(_))
        {
            self.abandoned = self.pending.is_some();
        }
        self.inner.send(item)
    }

    async fn receive(&mut self) -> Option<ServerJsonRpcMessage> {
        let message = loop {
            let message = self.inner.receive().await?;
            let answers_probe = match &message {
                ServerJsonRpcMessage::Response(r) => self.pending.as_ref() == Some(&r.id),
                ServerJsonRpcMessage::Error(e) => {
                    e.id.is_some() && self.pending.as_ref() == e.id.as_ref()
                }
                _ => false,
            };
            if answers_probe && self.abandoned {
                self.pending = None;
                continue;
            }
            break message;
        };
        let ServerJsonRpcMessage::Response(response) = message else {
            return Some(message);
        };
        if self.pending.as_ref() != Some(&response.id) {
            return Some(ServerJsonRpcMessage::Response(response));
        }
        self.pending = None;
        if matches!(response.result, ServerResult::DiscoverResult(_)) {
            return Some(ServerJsonRpcMessage::Response(response));
        }
        Some(ServerJsonRpcMessage::error(
            rmcp::ErrorData::new(
                rmcp::model::ErrorCode::METHOD_NOT_FOUND,
                "the server answered server/discover with something else",
                None,
            ),
            Some(response.id),
        ))
    }

    fn close(&mut self) -> impl Future<Output = Result<(), Self::Error>> + Send {
        self.inner.close()
    }
}

/// The time the user spends signing in does not count against `timeout`.
async fn bounded<T>(
    fut: impl Future<Output = T>,
    cancel: &CancellationToken,
    timeout: Duration,
    p: &ConnectParams,
) -> Result<T, ConnectFailure> {
    let deadline = tokio::time::Instant::now() + timeout;
    let expired = async {
        match &p.auth {
            Some(auth) => auth.user_wait.sleep_until(deadline).await,
            None => tokio::time::sleep_until(deadline).await,
        }
    };
    tokio::select! {
        r = fut => Ok(r),
        _ = expired => Err(ConnectFailure::Timeout(timeout)),
        _ = cancel.cancelled() => Err(ConnectFailure::Cancelled),
    }
}

fn http_client(p: &ConnectParams) -> Result<reqwest::Client, ConnectFailure> {
    p.http.clone().map_err(|e| ConnectFailure::Failed(e.into()))
}

/// A handshake failure of a stdio server, with what the user needs to fix it: whether the
/// process died and the end of its stderr.
fn describe_stdio_failure(
    reason: Failure,
    exited: Option<std::process::ExitStatus>,
    stderr: &StderrTail,
) -> Failure {
    let mut failure = match exited {
        Some(status) => Failure {
            message: format!(
                "the server process {} before completing the MCP handshake",
                describe_exit(status)
            ),
            details: reason.details.or(Some(reason.message)),
        },
        _ => reason,
    };
    let tail = stderr.last_chars(400);
    if !tail.is_empty() {
        failure.message.push_str("; stderr: ");
        failure.message.push_str(&tail);
    }
    failure
}
