//! `toolreg serve`'s MCP server for JS: the JS host answers `list` and `call` (and hears
//! `cancel`) through one JSON callback; see `cli/serve.mjs`.

use std::sync::Arc;

use futures::future::BoxFuture;
use napi::bindgen_prelude::*;
use napi_derive::napi;
use rmcp::model::{CallToolResult, Tool};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::callback::JsCallback;
use super::mcp::NativeMcpHub;
use super::registry::{NativeRegistry, read};
use crate::gateway::{
    ArgumentCheck, ClientRequest, DEFAULT_CALL_TIMEOUT, DirectRoute, Gateway, GatewayCall,
    GatewayHost, GatewayInfo, HostAnswer, HttpOptions, StateKey, serve_http,
};
use crate::mcp::{McpError, ServerList};
use crate::registry::{InputCheck, Registry};

struct JsHost(JsCallback);

impl GatewayHost for JsHost {
    fn list_tools(&self) -> BoxFuture<'static, std::result::Result<Vec<Tool>, String>> {
        let call = self.0.call(json!({ "op": "list" }), "list");
        Box::pin(async move {
            serde_json::from_value(call.await?)
                .map_err(|e| format!("the gateway's tool list is not valid: {e}"))
        })
    }

    fn call_tool(
        &self,
        call: GatewayCall,
    ) -> BoxFuture<'static, std::result::Result<HostAnswer, String>> {
        let request = json!({ "op": "call", "id": call.id, "name": call.name, "arguments": call.arguments,
            "progress": call.wants_progress,
        });
        let call = self.0.call(request, "call");
        Box::pin(async move {
            match call.await? {
                // `{ error }`: a call that cannot be made (unknown tool).
                Value::Object(o) if o.contains_key("error") && !o.contains_key("content") => {
                    Err(o["error"].as_str().unwrap_or("the call failed").to_owned())
                }
                // `{ forward: { serverId, tool } }`: a server's own tool, called from here.
                Value::Object(o) if o.contains_key("forward") => {
                    let target = &o["forward"];
                    match (target["serverId"].as_str(), target["tool"].as_str()) {
                        (Some(server_id), Some(tool)) => Ok(HostAnswer::Forward {
                            server_id: server_id.to_owned(),
                            tool: tool.to_owned(),
                        }),
                        _ => Err("the host's forward names no serverId and tool".into()),
                    }
                }
                result => serde_json::from_value::<CallToolResult>(result)
                    .map(HostAnswer::Done)
                    .map_err(|e| format!("the tool result is not a valid MCP result: {e}")),
            }
        })
    }

    fn cancel(&self, id: u64) {
        // The host aborts the call's signal.
        self.0.notify(json!({ "op": "cancel", "id": id }));
    }

    fn warn(&self, message: String) {
        self.0.notify(json!({ "op": "warn", "message": message }));
    }

    fn server_failed(&self, server_id: &str, error: &McpError) {
        self.0.notify(
            json!({ "op": "failed", "serverId": server_id, "message": error.to_string(),
                "code": error.code(), "details": error.details(),
            }),
        );
    }

    fn forwarded(&self, name: &str) {
        self.0.notify(json!({ "op": "forwarded", "name": name }));
    }
}

/// One entry of `setDirectRoutes`.
#[derive(serde::Deserialize)]
#[serde(rename_all = "camelCase")]
struct DirectRouteJson {
    server_id: String,
    tool: String,
    #[serde(default)]
    notify: bool,
    /// The tool's name in the registry, whose schema checks the call's arguments.
    check_as: Option<String>,
}

/// Checks a forwarded call's arguments as `tool_invoke` checks the calls it runs: the
/// registry's compiled schema, defaults filled in; a refusal names the issues and the
/// signature. A tool the registry no longer has, or whose schema it cannot check, passes as
/// it is (the server still checks its own input).
fn registry_check(
    registry: Arc<std::sync::RwLock<Registry>>,
    name: String,
    shown: String,
) -> ArgumentCheck {
    ArgumentCheck::new(move |arguments| {
        let registry = read(&registry);
        match registry.check_input(&name, Value::Object(arguments.clone())) {
            Ok(InputCheck::Valid(Value::Object(checked))) => Ok(checked),
            Ok(InputCheck::Invalid(problems)) => {
                let signature = registry.signature_as(&name, &shown).unwrap_or_default();
                Err(format!(
                    "Invalid params for \"{shown}\":\n{problems}\nExpected signature:\n{signature}"
                ))
            }
            _ => Ok(arguments),
        }
    })
}

#[napi]
pub struct NativeGateway {
    gateway: Gateway,
    ct: CancellationToken,
}

#[napi]
impl NativeGateway {
    /// `host(requestJson) → Promise<answerJson>`: `{ op: "list" }` → an array of MCP tools;
    /// `{ op: "call", id, name, arguments, progress }` → a `CallToolResult`, `{ error }`, or
    /// `{ forward: { serverId, tool } }` to call that tool of `hub` from here;
    /// `{ op: "cancel", id }`; `{ op: "warn", message }`; `{ op: "failed", serverId, message,
    /// code, details }` when a server did not start for a prompts or resources request (the
    /// host holds it, see `McpHub.hold`). Prompts, resources and completions go to `hub`'s
    /// servers without the host.
    /// `call_timeout_ms`: how long a request forwarded to a server may take (default 60 s).
    /// `state_key`: the secret (32 bytes or more) that signs the request state handed to
    /// 2026-07-28 clients, the same on every replica; without it, one drawn for this process.
    #[napi(constructor)]
    pub fn new(
        name: String,
        version: String,
        instructions: Option<String>,
        host: Function<'_, String, Promise<String>>,
        hub: Option<&NativeMcpHub>,
        call_timeout_ms: Option<u32>,
        state_key: Option<String>,
    ) -> Result<Self> {
        let host = Arc::new(JsHost(JsCallback::new(host)?));
        let state_key = match state_key {
            Some(secret) => StateKey::from_secret(secret.as_bytes()),
            None => StateKey::random(),
        }
        .map_err(|e| Error::new(Status::InvalidArg, e.to_string()))?;
        Ok(NativeGateway {
            gateway: Gateway::new(
                host,
                GatewayInfo {
                    name,
                    version,
                    instructions,
                    call_timeout: call_timeout_ms.map_or(DEFAULT_CALL_TIMEOUT, |ms| {
                        std::time::Duration::from_millis(u64::from(ms))
                    }),
                },
                hub.map(NativeMcpHub::handle),
                state_key,
            ),
            ct: CancellationToken::new(),
        })
    }

    /// Serves one client over this process's stdin/stdout; resolves when it disconnects.
    #[napi]
    pub async fn serve_stdio(&self) -> Result<()> {
        self.gateway
            .serve_stdio(self.ct.child_token())
            .await
            .map_err(|e| Error::new(Status::GenericFailure, e))
    }

    /// Listens on `host:port` (0: a free port) and serves `/mcp` until `close()`; resolves to
    /// the bound port once listening. Without `token` every request is served.
    #[napi]
    pub async fn serve_http(&self, host: String, port: u32, token: Option<String>) -> Result<u32> {
        let port = u16::try_from(port)
            .map_err(|_| Error::new(Status::InvalidArg, format!("{port} is not a TCP port")))?;
        let options = HttpOptions { host, port, token };
        serve_http(self.gateway.clone(), options, self.ct.clone())
            .await
            .map(u32::from)
            .map_err(|e| Error::new(Status::GenericFailure, e))
    }

    /// A server's log message (`notifications/message` params) for the clients.
    #[napi]
    pub async fn log(&self, message_json: String) {
        if let Ok(message) = serde_json::from_str(&message_json) {
            self.gateway.log(message).await;
        }
    }

    /// A server's `elicitation/create` (`kind` "elicitation"), `sampling/createMessage`
    /// ("sampling") or `roots/list` ("roots"), params with `serverId`, passed on to the client whose call it serves; the
    /// client's answer as JSON.
    #[napi]
    pub async fn ask_client(&self, kind: String, request_json: String) -> Result<String> {
        let kind = match kind.as_str() {
            "elicitation" => ClientRequest::Elicitation,
            "sampling" => ClientRequest::Sampling,
            "roots" => ClientRequest::Roots,
            other => {
                return Err(Error::new(
                    Status::InvalidArg,
                    format!("unknown client request kind {other:?}"),
                ));
            }
        };
        let request = serde_json::from_str(&request_json)
            .map_err(|e| Error::new(Status::InvalidArg, e.to_string()))?;
        let answer = self
            .gateway
            .ask_client(kind, request)
            .await
            .map_err(|e| Error::new(Status::GenericFailure, e))?;
        Ok(answer.to_string())
    }

    /// `{ [name]: { serverId, tool, notify, checkAs } }`: the listed tools that are a server's
    /// own, called through `hub` without asking the host; with `notify` the host hears
    /// `{ op: "forwarded", name }` of each call, not waited for; with `checkAs` and `registry`,
    /// the arguments are checked against that registry tool's schema first (defaults filled
    /// in; invalid ones are refused with an error result). Replaces the previous table; a tool
    /// not in it is the host's `call`.
    #[napi]
    pub fn set_direct_routes(
        &self,
        routes_json: String,
        registry: Option<&NativeRegistry>,
    ) -> Result<()> {
        let routes: std::collections::HashMap<String, DirectRouteJson> =
            serde_json::from_str(&routes_json).map_err(|e| {
                Error::new(
                    Status::InvalidArg,
                    format!("the direct routes are not valid: {e}"),
                )
            })?;
        let routes = routes
            .into_iter()
            .map(|(name, r)| {
                let check = match (registry, r.check_as) {
                    (Some(registry), Some(check_as)) => {
                        Some(registry_check(registry.shared(), check_as, name.clone()))
                    }
                    _ => None,
                };
                let route = DirectRoute {
                    server_id: r.server_id,
                    tool: r.tool,
                    notify: r.notify,
                    check,
                };
                (name, route)
            })
            .collect();
        self.gateway.set_direct_routes(routes);
        Ok(())
    }

    #[napi]
    pub fn set_instructions(&self, instructions: Option<String>) {
        self.gateway.set_instructions(instructions);
    }

    #[napi]
    pub async fn notify_tools_changed(&self) {
        self.gateway.notify_tools_changed().await;
    }

    /// A server's `notifications/prompts/list_changed` (`list` "prompts") or
    /// `notifications/resources/list_changed` ("resources"), for the clients.
    #[napi]
    pub async fn list_changed(&self, list: String) -> Result<()> {
        let list = match list.as_str() {
            "prompts" => ServerList::Prompts,
            "resources" => ServerList::Resources,
            other => {
                return Err(Error::new(
                    Status::InvalidArg,
                    format!("unknown list {other:?} (expected prompts or resources)"),
                ));
            }
        };
        self.gateway.list_changed(list).await;
        Ok(())
    }

    /// Server `serverId` started after clients may have listed prompts or resources without
    /// it: those lists are made anew, and the clients told, if it offers them.
    #[napi]
    pub async fn server_joined(&self, server_id: String) {
        self.gateway.server_joined(&server_id).await;
    }

    /// A server's `notifications/resources/updated`, for the clients subscribed to `uri`.
    #[napi]
    pub async fn resource_updated(&self, server_id: String, uri: String) {
        self.gateway.resource_updated(&server_id, &uri).await;
    }

    /// The call `id` the host is running called a tool of server `serverId`: what that server
    /// asks its client may then go to this call's client.
    #[napi]
    pub fn call_reaches(&self, id: u32, server_id: String) {
        self.gateway.call_reaches(u64::from(id), &server_id);
    }

    /// Progress of the call `id` the host is running; sent to its client in order, before
    /// the call's answer.
    #[napi]
    pub fn progress(&self, id: u32, progress: f64, total: Option<f64>, message: Option<String>) {
        self.gateway
            .progress(u64::from(id), progress, total, message);
    }

    /// Stops serving: open sessions end, the HTTP listener closes.
    #[napi]
    pub fn close(&self) {
        self.ct.cancel();
    }
}
