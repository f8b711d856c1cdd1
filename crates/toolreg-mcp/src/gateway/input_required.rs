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
//! A 2025-11-25 client never sees an input-required result: the hub answers those of its
//! servers through the host's elicitation and sampling callbacks, which the gateway passes to
//! the client as requests within its session (`Gateway::ask_client`).

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, ClientCapabilities, ErrorData, GetPromptRequestParams,
    GetPromptResponse, InputRequest, InputRequests, InputRequiredResult, InputResponses,
    ProgressToken,
};
use rmcp::{Peer, RoleServer};
use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

use super::features::forwarded_error;
use super::state::{Continuation, RequestBinding};
use super::{Gateway, complete_type};
use crate::mcp::Round;
use crate::mcp::hub::NOTIFICATION_GRACE;

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

impl Gateway {
    /// The server's own state for this retry, from the signed state the client echoed; `None`
    /// on a first request. A state that fails its check is the client's error (-32602).
    fn continue_from(
        &self,
        server_id: &str,
        request_state: Option<&str>,
        binding: &RequestBinding,
    ) -> Result<Option<String>, ErrorData> {
        let Some(sealed) = request_state else {
            return Ok(None);
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
        Ok(continuation.backend_state)
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
        };
        let state = self.shared.state_key.seal(&continuation, binding);
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
        cancel: CancellationToken,
    ) -> Result<CallToolResponse, ErrorData> {
        let hub = self.hub()?;
        let binding = RequestBinding::new("tools/call", name, &arguments);
        let backend_state =
            self.continue_from(server_id, retry.request_state.as_deref(), &binding)?;
        let mut params = CallToolRequestParams::new(tool.to_owned()).with_arguments(arguments);
        params.input_responses = retry.input_responses;
        params.request_state = backend_state;
        let (sink, forwarder) = super::progress_forwarder(progress);
        let log = match retry.log {
            Some((peer, lowest)) => {
                let (log_sink, log_forwarder) = super::log_forwarder(peer, lowest);
                Some((
                    hub.tap_logs(server_id, log_sink).map_err(forwarded_error)?,
                    log_forwarder,
                ))
            }
            None => None,
        };
        let round = hub
            .call_tool_round(server_id, params, self.call_timeout(), Some(cancel), sink)
            .await;
        if let Some(forwarder) = forwarder {
            let _ = forwarder.await;
        }
        if let Some((tap, log_forwarder)) = log {
            // Messages sent just before the answer may still be on their way to the tap.
            tokio::time::sleep(NOTIFICATION_GRACE).await;
            drop(tap);
            let _ = log_forwarder.await;
        }
        let mut result = match round {
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
        cancel: CancellationToken,
    ) -> Result<GetPromptResponse, ErrorData> {
        let (server, own) = self.prompt_route(&params.name).await?;
        let arguments: Map<String, Value> = params
            .arguments
            .clone()
            .map(|a| a.into_iter().collect())
            .unwrap_or_default();
        let binding = RequestBinding::new("prompts/get", &params.name, &arguments);
        params.request_state =
            self.continue_from(&server, retry.request_state.as_deref(), &binding)?;
        params.input_responses = retry.input_responses;
        params.name = own;
        let round = self
            .hub()?
            .get_prompt_round(&server, params, self.call_timeout(), Some(cancel))
            .await
            .map_err(forwarded_error)?;
        match round {
            Round::Complete(mut result) => {
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
