//! Input-required results (MRTR, 2026-07-28) relayed to a client of that revision.
//!
//! A server of 2026-07-28 behind the gateway asks for input by returning `input_required`:
//! its `inputRequests` (elicitation, sampling, roots) go to the client as they are, under the
//! server's own keys, with only the kinds the client declared; its `requestState` goes inside
//! the gateway's own signed state ([`super::state`]), which names the server too. The
//! client's retry carries its `inputResponses` and that state: the gateway checks the
//! signature and the request it is bound to, and sends the retry to the server with the
//! server's state. Nothing is kept in memory between the rounds, so the retry may reach any
//! replica that shares the key.
//!
//! A server of the handshake lifecycle asks during the call instead, with a request of its own:
//! the call is parked in this process until the retry brings the answer (`super::parked`).
//!
//! A 2025-11-25 client never sees an input-required result: the hub answers those of its
//! servers through the host's elicitation and sampling callbacks, which the gateway passes to
//! the client as requests within its session (`Gateway::ask_client`).

use std::sync::{Arc, Mutex};

use futures::FutureExt;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ClientCapabilities, ErrorData,
    GetPromptRequestParams, GetPromptResponse, GetPromptResult, InputRequest, InputRequests,
    InputRequiredResult, InputResponses, ProgressToken,
};
use rmcp::{Peer, RoleServer};
use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

use super::parked::{CallLogs, Relayed};
use super::state::{Continuation, ParkedCallRef, RequestBinding, STATE_TTL};
use super::{ClientRequest, Gateway, GatewayCall, HostAnswer, complete_type, required_capability};
use crate::mcp::{McpError, Round};

/// What a 2026-07-28 request brings to a round: its answers, the state it echoes, and the
/// capabilities it declared.
pub(super) struct Retry {
    pub input_responses: Option<InputResponses>,
    pub request_state: Option<String>,
    pub capabilities: ClientCapabilities,
    /// The call's stream and the lowest log level its `_meta` asked for
    /// (`io.modelcontextprotocol/logLevel`): the server's log messages during the call go there.
    #[allow(deprecated)] // the logging level, which 2026-07-28 names per request
    pub log: Option<(Peer<RoleServer>, rmcp::model::LoggingLevel)>,
}

/// The capability a client declares to be sent this input request.
fn capability_of(request: &InputRequest) -> &'static str {
    match request {
        InputRequest::Elicitation(_) => "elicitation",
        InputRequest::CreateMessage(_) => "sampling",
        InputRequest::ListRoots(_) => "roots",
        // A kind a later rmcp adds: named by nothing a client can declare, so never sent.
        _ => "unknown",
    }
}

fn declared(capabilities: &ClientCapabilities, capability: &str) -> bool {
    serde_json::to_value(capabilities)
        .ok()
        .and_then(|caps| caps.get(capability).cloned())
        .is_some_and(|c| !c.is_null())
}

/// The requests the client declared the capabilities for; when the server asked only for
/// others, the error 2026-07-28 prescribes, naming the first one missing.
fn for_client(
    requests: InputRequests,
    capabilities: &ClientCapabilities,
) -> Result<InputRequests, ErrorData> {
    let mut missing = None;
    let kept: InputRequests = requests
        .into_iter()
        .filter(|(_, request)| {
            let capability = capability_of(request);
            let ok = declared(capabilities, capability);
            if !ok && missing.is_none() {
                missing = Some(capability);
            }
            ok
        })
        .collect();
    match missing {
        Some(capability) if kept.is_empty() => Err(ErrorData::missing_required_client_capability(
            serde_json::from_value(serde_json::json!({ capability: {} })).unwrap_or_default(),
        )),
        _ => Ok(kept),
    }
}

/// What the state of a call the host runs names where a forwarded call's names its server: no
/// configured server has an empty id.
pub(super) const HOST_CALL: &str = "";

/// What the host answered a call it was asked to run, when not its result.
enum HostDecision {
    /// A server's own tool, forwarded as a direct route's call is.
    Forward { server_id: String, tool: String },
    /// A call that cannot be made at all (an unknown tool).
    Refused(String),
}

/// Where a 2026-07-28 request picks up, from the state it echoed.
enum Continued {
    /// Sent to the server, with its own state when this is a retry of its `input_required`
    /// round (`None`: a first request).
    Fresh(Option<String>),
    /// The call parked while its server waits for this retry's answer.
    Parked(ParkedCallRef),
}

/// How a relayed call's end answers the request: the error of a capability the request did not
/// declare, else the server's outcome.
fn ended(
    outcome: Result<Round<Value>, McpError>,
    missing: Option<ClientRequest>,
) -> Result<Result<Round<Value>, McpError>, ErrorData> {
    match missing {
        Some(kind) => Err(ErrorData::missing_required_client_capability(
            required_capability(kind),
        )),
        None => Ok(outcome),
    }
}

impl Gateway {
    /// Where this request picks up, from the signed state the client echoed. A state that
    /// fails its check is the client's error (-32602).
    fn continue_from(
        &self,
        server_id: &str,
        request_state: Option<&str>,
        binding: &RequestBinding,
    ) -> Result<Continued, ErrorData> {
        let Some(sealed) = request_state else {
            return Ok(Continued::Fresh(None));
        };
        let continuation = self
            .shared
            .state_key
            .open(sealed, binding)
            .map_err(|e| ErrorData::invalid_params(e.to_string(), None))?;
        if continuation.server != server_id {
            // The tool moved to another server since (a config change): its state means
            // nothing there.
            return Err(ErrorData::invalid_params(
                "the requestState belongs to a server that no longer serves this request; send the request again without it",
                None,
            ));
        }
        Ok(match continuation.parked {
            Some(parked) => Continued::Parked(parked),
            None => Continued::Fresh(continuation.backend_state),
        })
    }

    /// The server's input-required result as this gateway's: the requests the client can
    /// answer, and the server's state signed with the server's name and the request.
    fn relay(
        &self,
        server_id: &str,
        input: InputRequiredResult,
        binding: &RequestBinding,
        capabilities: &ClientCapabilities,
    ) -> Result<InputRequiredResult, ErrorData> {
        let requests = match input.input_requests {
            Some(requests) => Some(for_client(requests, capabilities)?),
            None => None,
        };
        let continuation = Continuation {
            server: server_id.to_owned(),
            backend_state: input.request_state,
            parked: None,
        };
        let state = self
            .shared
            .state_key
            .seal(&continuation, binding, STATE_TTL);
        let mut relayed = InputRequiredResult::new(requests, Some(state));
        relayed.meta = input.meta;
        Ok(relayed)
    }

    /// One round of a forwarded tool call for a 2026-07-28 client. `name` is the tool's name
    /// as the client called it, which the state is bound to.
    #[allow(clippy::too_many_arguments)] // one call's parts, all of them needed
    pub(super) async fn forward_round(
        &self,
        server_id: &str,
        name: &str,
        tool: &str,
        arguments: Map<String, Value>,
        retry: Retry,
        progress: Option<(Peer<RoleServer>, ProgressToken)>,
        ct: &CancellationToken,
    ) -> Result<CallToolResponse, ErrorData> {
        let hub = self.hub()?;
        let binding = RequestBinding::new("tools/call", name, &arguments);
        // The server's log messages while this request waits ride its stream, when asked.
        let logs = retry.log.clone().map(|log| {
            let mut logs = CallLogs::new(Some(log));
            logs.reach(&hub, server_id);
            logs
        });
        let relayed =
            match self.continue_from(server_id, retry.request_state.as_deref(), &binding)? {
                Continued::Parked(parked) => {
                    self.resume(&parked, &retry, progress, &binding, ct).await?
                }
                Continued::Fresh(backend_state) => {
                    let mut params =
                        CallToolRequestParams::new(tool.to_owned()).with_arguments(arguments);
                    params.input_responses = retry.input_responses.clone();
                    params.request_state = backend_state;
                    let server = server_id.to_owned();
                    let capabilities = retry.capabilities.clone();
                    let call = self.start_relayed(
                        server_id,
                        capabilities,
                        progress,
                        None,
                        |_, cancel, sink, timeout| {
                            async move {
                                hub.call_tool_round(&server, params, timeout, Some(cancel), sink)
                                    .await
                            }
                            .boxed()
                        },
                    );
                    self.next_event(call, &binding, ct).await?
                }
            };
        if let Some(logs) = logs {
            logs.end().await;
        }
        let (outcome, missing) = match relayed {
            Relayed::InputRequired(input) => return Ok(CallToolResponse::InputRequired(input)),
            Relayed::Ended { outcome, missing } => (outcome, missing),
        };
        let mut result: CallToolResult = match ended(outcome, missing)? {
            Ok(Round::InputRequired(input)) => {
                let input = self.relay(server_id, input, &binding, &retry.capabilities)?;
                return Ok(CallToolResponse::InputRequired(input));
            }
            Ok(Round::Complete(json)) => serde_json::from_value(json).map_err(|e| {
                ErrorData::internal_error(format!("the server's result is not valid: {e}"), None)
            })?,
            Err(error) => super::failed_call(error),
        };
        complete_type(&mut result.result_type);
        Ok(CallToolResponse::Complete(result))
    }

    /// One round of a `prompts/get` for a 2026-07-28 client; `params.name` is the name as the
    /// client asked for it.
    pub(super) async fn get_prompt_round(
        &self,
        mut params: GetPromptRequestParams,
        retry: Retry,
        ct: &CancellationToken,
    ) -> Result<GetPromptResponse, ErrorData> {
        let (server, own) = self.prompt_route(&params.name).await?;
        let arguments: Map<String, Value> = params
            .arguments
            .clone()
            .map(|a| a.into_iter().collect())
            .unwrap_or_default();
        let binding = RequestBinding::new("prompts/get", &params.name, &arguments);
        let relayed = match self.continue_from(&server, retry.request_state.as_deref(), &binding)? {
            Continued::Parked(parked) => self.resume(&parked, &retry, None, &binding, ct).await?,
            Continued::Fresh(backend_state) => {
                params.request_state = backend_state;
                params.input_responses = retry.input_responses.clone();
                params.name = own;
                let hub = self.hub()?;
                let target = server.clone();
                let capabilities = retry.capabilities.clone();
                let call = self.start_relayed(
                    &server,
                    capabilities,
                    None,
                    None,
                    |_, cancel, _, timeout| {
                        async move {
                            let round = hub
                                .get_prompt_round(&target, params, timeout, Some(cancel))
                                .await?;
                            // One outcome type for every relayed call: the prompt as JSON, read
                            // back below.
                            Ok(match round {
                                Round::Complete(prompt) => Round::Complete(
                                    serde_json::to_value(prompt).unwrap_or_default(),
                                ),
                                Round::InputRequired(input) => Round::InputRequired(input),
                            })
                        }
                        .boxed()
                    },
                );
                self.next_event(call, &binding, ct).await?
            }
        };
        let (outcome, missing) = match relayed {
            Relayed::InputRequired(input) => return Ok(GetPromptResponse::InputRequired(input)),
            Relayed::Ended { outcome, missing } => (outcome, missing),
        };
        match ended(outcome, missing)?.map_err(super::features::forwarded_error)? {
            Round::Complete(json) => {
                let mut result: GetPromptResult = serde_json::from_value(json).map_err(|e| {
                    ErrorData::internal_error(
                        format!("the server's prompt is not valid: {e}"),
                        None,
                    )
                })?;
                complete_type(&mut result.result_type);
                Ok(GetPromptResponse::Complete(result))
            }
            Round::InputRequired(input) => Ok(GetPromptResponse::InputRequired(self.relay(
                &server,
                input,
                &binding,
                &retry.capabilities,
            )?)),
        }
    }

    /// One round of a call the host runs (a meta-tool, a deferred tool) for a 2026-07-28
    /// client. The host's call runs in a relayed task like a forwarded one: what a server it
    /// reaches asks meanwhile parks it and comes back as an `input_required` round, and the
    /// retry resumes that same run (the host is not asked again). A host that forwards the call
    /// instead, or refuses it, is answered as the forwarded path answers.
    #[allow(clippy::too_many_arguments)] // one call's parts, all of them needed
    pub(super) async fn host_round(
        &self,
        name: &str,
        arguments: Map<String, Value>,
        wants_progress: bool,
        retry: Retry,
        progress: Option<(Peer<RoleServer>, ProgressToken)>,
        ct: &CancellationToken,
    ) -> Result<CallToolResponse, ErrorData> {
        let binding = RequestBinding::new("tools/call", name, &arguments);
        // What the host answered besides a result: it can only come in the first round, as the
        // host decides it before running anything that could ask.
        let decided: Arc<Mutex<Option<HostDecision>>> = Arc::default();
        let relayed =
            match self.continue_from(HOST_CALL, retry.request_state.as_deref(), &binding)? {
                Continued::Parked(parked) => {
                    self.resume(&parked, &retry, progress.clone(), &binding, ct)
                        .await?
                }
                Continued::Fresh(_) => {
                    let shared = self.shared.clone();
                    let decision = decided.clone();
                    let (name, arguments) = (name.to_owned(), arguments.clone());
                    let call = self.start_relayed(
                        HOST_CALL,
                        retry.capabilities.clone(),
                        progress.clone(),
                        Some(CallLogs::new(retry.log.clone())),
                        move |id, cancel, sink, _| {
                            async move {
                                // The host reports progress by call id (`Gateway::progress`);
                                // the sink follows the call from round to round.
                                if let Some(sink) = sink {
                                    super::lock(&shared.progress).insert(id, sink);
                                }
                                let call = GatewayCall {
                                    id,
                                    name: name.clone(),
                                    arguments,
                                    wants_progress,
                                };
                                let answer = tokio::select! {
                                    answer = shared.host.call_tool(call) => Some(answer),
                                    _ = cancel.cancelled() => None,
                                };
                                super::lock(&shared.progress).remove(&id);
                                match answer {
                                    Some(Ok(HostAnswer::Done(result))) => Ok(Round::Complete(
                                        serde_json::to_value(result).unwrap_or_default(),
                                    )),
                                    Some(Ok(HostAnswer::Forward { server_id, tool })) => {
                                        *super::lock(&decision) =
                                            Some(HostDecision::Forward { server_id, tool });
                                        Ok(Round::Complete(Value::Null))
                                    }
                                    Some(Err(message)) => {
                                        *super::lock(&decision) =
                                            Some(HostDecision::Refused(message));
                                        Ok(Round::Complete(Value::Null))
                                    }
                                    None => {
                                        shared.host.cancel(id);
                                        Err(McpError::Cancelled {
                                            server: "toolreg".into(),
                                            operation: format!("tools/call {name:?}"),
                                        })
                                    }
                                }
                            }
                            .boxed()
                        },
                    );
                    self.next_event(call, &binding, ct).await?
                }
            };
        let (outcome, missing) = match relayed {
            Relayed::InputRequired(input) => return Ok(CallToolResponse::InputRequired(input)),
            Relayed::Ended { outcome, missing } => (outcome, missing),
        };
        let decision = super::lock(&decided).take();
        match decision {
            Some(HostDecision::Forward { server_id, tool }) => {
                return self
                    .forward_round(&server_id, name, &tool, arguments, retry, progress, ct)
                    .await;
            }
            Some(HostDecision::Refused(message)) => {
                return Err(ErrorData::invalid_params(message, None));
            }
            None => {}
        }
        let mut result: CallToolResult = match ended(outcome, missing)? {
            Ok(Round::Complete(json)) => serde_json::from_value(json).map_err(|e| {
                ErrorData::internal_error(format!("the host's result is not valid: {e}"), None)
            })?,
            Ok(Round::InputRequired(_)) => {
                return Err(ErrorData::internal_error(
                    "the host answered with an input-required round, which only servers send",
                    None,
                ));
            }
            Err(error) => super::failed_call(error),
        };
        complete_type(&mut result.result_type);
        Ok(CallToolResponse::Complete(result))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn requests() -> InputRequests {
        serde_json::from_value(json!({
            "who": { "method": "elicitation/create", "params": {
                "message": "Name?", "requestedSchema": { "type": "object", "properties": {} } } },
            "what": { "method": "sampling/createMessage", "params": {
                "messages": [{ "role": "user", "content": { "type": "text", "text": "Hi" } }],
                "maxTokens": 5 } },
            "where": { "method": "roots/list", "params": {} }
        }))
        .expect("valid input requests")
    }

    fn caps(value: Value) -> ClientCapabilities {
        serde_json::from_value(value).expect("capabilities")
    }

    #[test]
    fn only_the_requests_the_client_declared_reach_it() {
        let kept = for_client(requests(), &caps(json!({ "sampling": {} }))).expect("one kept");
        assert_eq!(kept.keys().collect::<Vec<_>>(), ["what"]);
        let all = for_client(
            requests(),
            &caps(json!({ "sampling": {}, "elicitation": {}, "roots": {} })),
        )
        .expect("all kept");
        assert_eq!(all.len(), 3);
    }

    #[test]
    fn a_client_that_can_answer_none_gets_the_missing_capability_error() {
        let only_roots: InputRequests = requests()
            .into_iter()
            .filter(|(key, _)| key == "where")
            .collect();
        let error = for_client(only_roots, &caps(json!({ "sampling": {} }))).unwrap_err();
        assert_eq!(error.code.0, -32021);
        assert_eq!(
            error.data,
            Some(json!({ "requiredCapabilities": { "roots": {} } }))
        );
    }
}
