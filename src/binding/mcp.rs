//! The MCP hub for JS. Tool lists cross as JSON with a version number, so a warm sync that
//! already holds the current list pays one small call per server and no parsing.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use napi::bindgen_prelude::*;
use napi_derive::napi;
use rmcp::model::SubscribeRequestParams;
use serde_json::{Map, Value};

use crate::mcp::{
    AskFuture, AskHost, AskHostHandle, AuthOptions, AuthorizationPrompt, Authorizer,
    CancellationToken, HubEvents, HubEventsHandle, HubOptions, McpError, McpHub, McpTool,
    ProgressSink, ServerConfig, ServerList, TokenStore, describe_stored_token, wire_id,
};
use futures::future::BoxFuture;

use super::callback::JsCallback;

/// `[CODE] sentence`, and on a line of its own `[details] raw transport error` when there is
/// one: js/errors.js puts that in `error.details`, apart from the message.
fn mcp_error(err: McpError) -> napi::Error {
    let details = err
        .details()
        .map(|d| format!("\n[details] {d}"))
        .unwrap_or_default();
    napi::Error::new(
        Status::GenericFailure,
        format!("[{}] {err}{details}", err.code()),
    )
}

fn invalid_config(reason: impl std::fmt::Display) -> napi::Error {
    mcp_error(McpError::InvalidConfig(reason.to_string()))
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    // Every critical section is a single map operation, so a poisoned lock holds no torn state.
    mutex.lock().unwrap_or_else(|p| p.into_inner())
}

#[napi(object)]
pub struct McpServerInfo {
    pub id: String,
    pub name: String,
    pub transport: String,
    /// The command line or URL the config gives (`ServerConfig::identity`): what tool trust
    /// pins definitions under.
    pub identity: String,
}

#[napi(object)]
pub struct McpToolListing {
    /// Changes whenever the server's list changes (a relist after `list_changed`, a reconnect).
    pub version: u32,
    /// The tools as JSON; absent when the caller already holds `version`.
    pub tools_json: Option<String>,
}

struct Listing {
    tools: Arc<Vec<McpTool>>,
    version: u32,
}

#[napi]
pub struct NativeMcpHub {
    hub: McpHub,
    /// The host's `onEvent`: list changes, logs, and progress of calls that ask for it.
    events: Option<JsEvents>,
    /// In-flight calls by the caller's id; an entry may be created by `cancel_call` first.
    calls: Arc<Mutex<HashMap<u32, CancellationToken>>>,
    listings: Arc<Mutex<HashMap<String, Listing>>>,
    next_version: Arc<AtomicU32>,
}

impl NativeMcpHub {
    /// A handle on the hub for calls made from Rust (`tool_exec`'s direct MCP calls).
    pub(super) fn handle(&self) -> McpHub {
        self.hub.clone()
    }
}

/// The host's `onEvent`: `{ op: "toolsChanged", serverId }`, `{ op: "listChanged", serverId,
/// list: "prompts" | "resources" }`, `{ op: "resourceUpdated", serverId, uri }`, `{ op: "log",
/// serverId, message }` and `{ op: "progress", callId, progress, total?, message? }`.
#[derive(Clone)]
struct JsEvents(JsCallback);

impl JsEvents {
    fn progress_sink(&self, call_id: u32) -> ProgressSink {
        let events = self.0.clone();
        Arc::new(move |progress, total, message| {
            events.notify(serde_json::json!({
                "op": "progress", "callId": call_id, "progress": progress, "total": total, "message": message
            }));
        })
    }
}

impl HubEvents for JsEvents {
    fn tools_changed(&self, server_id: &str) {
        self.0
            .notify(serde_json::json!({ "op": "toolsChanged", "serverId": server_id }));
    }

    fn log(&self, server_id: &str, message: Value) {
        self.0
            .notify(serde_json::json!({ "op": "log", "serverId": server_id, "message": message }));
    }

    fn list_changed(&self, server_id: &str, list: ServerList) {
        let list = match list {
            ServerList::Prompts => "prompts",
            ServerList::Resources => "resources",
        };
        self.0.notify(
            serde_json::json!({ "op": "listChanged", "serverId": server_id, "list": list }),
        );
    }

    fn resource_updated(&self, server_id: &str, uri: &str) {
        self.0.notify(
            serde_json::json!({ "op": "resourceUpdated", "serverId": server_id, "uri": uri }),
        );
    }
}

/// The host's `onElicitation`, `onSampling` or `onRoots`, named for error messages.
struct JsAsk(JsCallback, &'static str);

impl AskHost for JsAsk {
    fn ask(&self, request: Value) -> AskFuture {
        self.0.call(request, self.1)
    }
}

fn js_ask(
    function: Option<Function<'_, String, Promise<String>>>,
    name: &'static str,
) -> Result<Option<AskHostHandle>> {
    function
        .map(|f| Ok(AskHostHandle(Arc::new(JsAsk(JsCallback::new(f)?, name)))))
        .transpose()
}

/// The host's OAuth parts behind one function (`js/mcp/hub.js`): `{ op, ... }` in, where `op` is
/// `authorize` (`prompt`), `get`/`delete` (`key`) or `set` (`key`, `value`).
#[derive(Clone)]
struct JsAuth(JsCallback);

impl Authorizer for JsAuth {
    fn authorize(
        &self,
        prompt: AuthorizationPrompt,
    ) -> BoxFuture<'static, std::result::Result<String, String>> {
        let call = self.0.call(
            serde_json::json!({ "op": "authorize", "prompt": prompt }),
            "onAuthorizationUrl",
        );
        Box::pin(async move {
            match call.await? {
                Value::String(answer) if !answer.trim().is_empty() => Ok(answer),
                _ => Err("onAuthorizationUrl resolved to no callback URL or code".into()),
            }
        })
    }
}

impl TokenStore for JsAuth {
    fn get(&self, key: &str) -> BoxFuture<'static, std::result::Result<Option<String>, String>> {
        let call = self.0.call(
            serde_json::json!({ "op": "get", "key": key }),
            "tokenStore.get",
        );
        Box::pin(async move {
            match call.await? {
                Value::String(value) => Ok(Some(value)),
                Value::Null => Ok(None),
                _ => Err("tokenStore.get resolved to something other than a string".into()),
            }
        })
    }

    fn set(&self, key: &str, value: String) -> BoxFuture<'static, std::result::Result<(), String>> {
        let call = self.0.call(
            serde_json::json!({ "op": "set", "key": key, "value": value }),
            "tokenStore.set",
        );
        Box::pin(async move { call.await.map(drop) })
    }

    fn delete(&self, key: &str) -> BoxFuture<'static, std::result::Result<(), String>> {
        let call = self.0.call(
            serde_json::json!({ "op": "delete", "key": key }),
            "tokenStore.delete",
        );
        Box::pin(async move { call.await.map(drop) })
    }
}

/// The hub's `auth` options as JS passes them (functions travel separately).
#[derive(serde::Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct AuthSettings {
    #[serde(default)]
    authorize: bool,
    #[serde(default)]
    token_store: bool,
    redirect_uri: Option<String>,
    client_name: Option<String>,
    client_metadata_url: Option<String>,
    timeout_ms: Option<u64>,
}

fn auth_options(settings_json: Option<String>, auth: Option<JsAuth>) -> Result<AuthOptions> {
    let settings: AuthSettings = match settings_json {
        Some(json) => {
            serde_json::from_str(&json).map_err(|e| invalid_config(format!("auth: {e}")))?
        }
        None => AuthSettings::default(),
    };
    let mut options = AuthOptions::default();
    if settings.authorize {
        options.authorizer = auth.clone().map(|a| Arc::new(a) as Arc<dyn Authorizer>);
    }
    if settings.token_store {
        options.token_store = auth.map(|a| Arc::new(a) as Arc<dyn TokenStore>);
    }
    options.redirect_uri = settings.redirect_uri;
    options.client_metadata_url = settings.client_metadata_url;
    if let Some(name) = settings.client_name {
        options.client_name = name;
    }
    if let Some(ms) = settings.timeout_ms {
        options.user_timeout = Duration::from_millis(ms);
    }
    Ok(options)
}

/// What a stored token value says (resource, client, scopes, expiry), without its secrets;
/// `null` when the value is not one toolreg wrote.
#[napi]
pub fn describe_mcp_stored_token(value: String) -> Option<String> {
    describe_stored_token(&value).and_then(|info| serde_json::to_string(&info).ok())
}

/// The hub's time limits, in milliseconds (see `HubOptions`).
#[napi(object)]
#[derive(Default)]
pub struct HubTimings {
    pub connect_timeout_ms: Option<u32>,
    pub reconnect_backoff_ms: Option<u32>,
}

#[napi]
impl NativeMcpHub {
    /// `on_elicitation(requestJson) → Promise<answerJson>` answers servers' `elicitation/create`,
    /// `on_sampling` their `sampling/createMessage`, `on_roots` their `roots/list`; without one
    /// the hub declares no capability for it. `auth_json` and `on_auth`: OAuth for remote servers (see [`JsAuth`]).
    #[napi(constructor)]
    #[allow(clippy::too_many_arguments)] // one per host callback, as js/mcp/hub.js passes them
    pub fn new(
        servers_json: String,
        timings: Option<HubTimings>,
        on_elicitation: Option<Function<'_, String, Promise<String>>>,
        on_sampling: Option<Function<'_, String, Promise<String>>>,
        auth_json: Option<String>,
        on_auth: Option<Function<'_, String, Promise<String>>>,
        on_event: Option<Function<'_, String, Promise<String>>>,
        on_roots: Option<Function<'_, String, Promise<String>>>,
    ) -> Result<Self> {
        let servers: Vec<ServerConfig> =
            serde_json::from_str(&servers_json).map_err(invalid_config)?;
        let mut options = HubOptions::default();
        let timings = timings.unwrap_or_default();
        if let Some(ms) = timings.connect_timeout_ms {
            options.connect_timeout = Duration::from_millis(u64::from(ms));
        }
        if let Some(ms) = timings.reconnect_backoff_ms {
            options.reconnect_backoff = Duration::from_millis(u64::from(ms));
        }
        options.elicitor = js_ask(on_elicitation, "onElicitation")?;
        options.sampler = js_ask(on_sampling, "onSampling")?;
        options.roots = js_ask(on_roots, "onRoots")?;
        let on_auth = match on_auth {
            Some(function) => Some(JsAuth(JsCallback::new(function)?)),
            None => None,
        };
        options.auth = auth_options(auth_json, on_auth)?;
        let events = match on_event {
            Some(function) => Some(JsEvents(JsCallback::new(function)?)),
            None => None,
        };
        options.events = events
            .clone()
            .map(|e| HubEventsHandle(Arc::new(e) as Arc<dyn HubEvents>));
        Ok(NativeMcpHub {
            hub: McpHub::with_options(servers, options).map_err(mcp_error)?,
            events,
            calls: Arc::default(),
            listings: Arc::default(),
            next_version: Arc::new(AtomicU32::new(1)),
        })
    }

    #[napi]
    pub fn add_server(&self, config_json: String) -> Result<()> {
        let config: ServerConfig = serde_json::from_str(&config_json).map_err(invalid_config)?;
        self.hub.add_server(config).map_err(mcp_error)
    }

    #[napi]
    pub async fn remove_server(&self, id: String) -> bool {
        lock(&self.listings).remove(&id);
        self.hub.clone().remove_server(&id).await
    }

    #[napi]
    pub fn servers(&self) -> Vec<McpServerInfo> {
        self.hub
            .server_ids()
            .into_iter()
            .filter_map(|id| self.hub.config_of(&id))
            .map(|config| McpServerInfo {
                id: config.id().to_owned(),
                name: config.name().to_owned(),
                transport: config.transport().to_owned(),
                identity: config.identity(),
            })
            .collect()
    }

    #[napi]
    pub fn servers_for_wire_ids(&self, wire_ids: Vec<String>) -> Vec<String> {
        self.hub
            .servers_for_wire_ids(wire_ids.iter().map(String::as_str))
    }

    /// `probe`: list a server held as failed too (`hold`), to try it again; a success lifts
    /// the hold.
    #[napi]
    pub async fn list_tools(
        &self,
        server_id: String,
        timeout_ms: u32,
        known_version: Option<u32>,
        probe: Option<bool>,
    ) -> Result<McpToolListing> {
        let hub = self.hub.clone();
        let timeout = Duration::from_millis(u64::from(timeout_ms));
        let tools = if probe == Some(true) {
            hub.probe_tools(&server_id, timeout).await
        } else {
            hub.list_tools(&server_id, timeout).await
        }
        .map_err(mcp_error)?;
        let version = {
            let mut listings = lock(&self.listings);
            match listings.get(&server_id) {
                Some(known) if Arc::ptr_eq(&known.tools, &tools) => known.version,
                _ => {
                    let version = self.next_version.fetch_add(1, Ordering::Relaxed);
                    listings.insert(
                        server_id,
                        Listing {
                            tools: tools.clone(),
                            version,
                        },
                    );
                    version
                }
            }
        };
        let tools_json = if known_version == Some(version) {
            None
        } else {
            Some(serde_json::to_string(&*tools).map_err(|e| Error::from_reason(e.to_string()))?)
        };
        Ok(McpToolListing {
            version,
            tools_json,
        })
    }

    /// A server's prompts, resources or completions: `method` is `prompts/list`, `prompts/get`,
    /// `resources/list`, `resources/templates/list`, `resources/read`, `resources/subscribe`,
    /// `resources/unsubscribe` or `completion/complete`; `params_json` its MCP params; resolves
    /// to its MCP result as JSON (a list method's every page). `js/mcp/hub.js` checks the
    /// params' shape; rmcp's types check the rest.
    #[napi]
    pub async fn feature_request(
        &self,
        server_id: String,
        method: String,
        params_json: String,
        timeout_ms: u32,
    ) -> Result<String> {
        fn params<T: serde::de::DeserializeOwned>(method: &str, json: &str) -> Result<T> {
            serde_json::from_str(json).map_err(|e| {
                Error::new(
                    Status::InvalidArg,
                    format!("the params of {method} are not valid: {e}"),
                )
            })
        }
        fn answer<T: serde::Serialize>(result: std::result::Result<T, McpError>) -> Result<String> {
            let result = result.map_err(mcp_error)?;
            serde_json::to_string(&result).map_err(|e| Error::from_reason(e.to_string()))
        }
        let (hub, id) = (&self.hub, server_id.as_str());
        let timeout = Duration::from_millis(u64::from(timeout_ms));
        match method.as_str() {
            "prompts/list" => answer(
                hub.list_prompts(id, timeout)
                    .await
                    .map(|prompts| serde_json::json!({ "prompts": prompts })),
            ),
            "prompts/get" => answer(
                hub.get_prompt(id, params(&method, &params_json)?, timeout, None)
                    .await,
            ),
            "resources/list" => answer(
                hub.list_resources(id, timeout)
                    .await
                    .map(|resources| serde_json::json!({ "resources": resources })),
            ),
            "resources/templates/list" => answer(
                hub.list_resource_templates(id, timeout)
                    .await
                    .map(|templates| serde_json::json!({ "resourceTemplates": templates })),
            ),
            "resources/read" => answer(
                hub.read_resource(id, params(&method, &params_json)?, timeout, None)
                    .await,
            ),
            "resources/subscribe" | "resources/unsubscribe" => {
                let SubscribeRequestParams { uri, .. } = params(&method, &params_json)?;
                let subscribe = method == "resources/subscribe";
                let done = hub
                    .set_resource_subscription(id, uri, subscribe, timeout)
                    .await;
                answer(done.map(|()| serde_json::json!({})))
            }
            "completion/complete" => answer(
                hub.complete(id, params(&method, &params_json)?, timeout)
                    .await,
            ),
            other => Err(Error::new(
                Status::InvalidArg,
                format!("{other:?} is not a prompt, resource or completion method"),
            )),
        }
    }

    /// Resolves to the `CallToolResult` as JSON. `call_id` lets `cancel_call` abort it.
    #[napi]
    pub async fn call_tool(
        &self,
        server_id: String,
        name: String,
        args_json: String,
        timeout_ms: u32,
        call_id: u32,
        progress: Option<bool>,
    ) -> Result<String> {
        let args = match serde_json::from_str::<Value>(&args_json) {
            Ok(Value::Object(map)) => map,
            Ok(Value::Null) => Map::new(),
            Ok(other) => {
                return Err(mcp_error(McpError::InvalidConfig(format!(
                    "tool arguments must be a JSON object, got {other}"
                ))));
            }
            Err(e) => {
                return Err(Error::from_reason(format!(
                    "tool arguments are not JSON: {e}"
                )));
            }
        };
        let token = lock(&self.calls).entry(call_id).or_default().clone();
        let sink = match (&self.events, progress) {
            (Some(events), Some(true)) => Some(events.progress_sink(call_id)),
            _ => None,
        };
        let result = self
            .hub
            .clone()
            .call_tool_with_progress(
                &server_id,
                &name,
                args,
                Duration::from_millis(u64::from(timeout_ms)),
                Some(token),
                sink,
            )
            .await;
        lock(&self.calls).remove(&call_id);
        let value = result.map_err(mcp_error)?;
        serde_json::to_string(&value).map_err(|e| Error::from_reason(e.to_string()))
    }

    /// Cancels an in-flight call (or one about to start); the server gets `notifications/cancelled`.
    #[napi]
    pub fn cancel_call(&self, call_id: u32) {
        lock(&self.calls).entry(call_id).or_default().cancel();
    }

    /// The `instructions` the server sent when its current connection opened (unreviewed:
    /// `js/trust.js` reviews them before they may reach a model).
    /// Holds server `server_id` as failed, for `reason` (a sentence): every request to it
    /// fails at once with it instead of starting the server, until a `listTools` with `probe`
    /// connects.
    #[napi]
    pub fn hold(&self, server_id: String, reason: String) -> Result<()> {
        self.hub.hold(&server_id, reason).map_err(mcp_error)
    }

    #[napi]
    pub fn instructions(&self, server_id: String) -> Result<Option<String>> {
        self.hub.instructions(&server_id).map_err(mcp_error)
    }

    /// Every server's state as JSON (`[{ id, name, transport, state, lastError, ... }]`).
    #[napi]
    pub fn status(&self) -> Result<String> {
        serde_json::to_string(&self.hub.status()).map_err(|e| Error::from_reason(e.to_string()))
    }

    #[napi]
    pub async fn close(&self) {
        lock(&self.listings).clear();
        self.hub.clone().close().await;
    }
}

#[napi]
pub fn build_mcp_tool_wire_id(server_id: String, server_name: String, tool_name: String) -> String {
    wire_id::build_mcp_tool_wire_id(&server_id, &server_name, &tool_name)
}

#[napi]
pub fn mcp_server_segment(server_name: String) -> String {
    wire_id::server_segment(&server_name)
}

#[napi]
pub fn mcp_wire_id_server_segment(wire_id: String) -> Option<String> {
    wire_id::wire_id_server_segment(&wire_id).map(str::to_owned)
}
