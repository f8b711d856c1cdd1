//! Calls parked for 2026-07-28 clients while a server of the handshake lifecycle waits for an
//! answer.
//!
//! A server of 2025-11-25 (or older) asks during a call by sending a request of its own
//! (`elicitation/create`, `sampling/createMessage`, `roots/list`) and waits for the answer. A
//! 2026-07-28 client takes no requests: it is asked with an `input_required` result, and answers
//! by sending its request again. So every call forwarded for such a client runs in a task of its
//! own ([`Gateway::start_relayed`]), which outlives the client's request. When the server asks,
//! the request waiting on the call is answered with an `input_required` result that carries the
//! server's request under the key `elicitation`, `sampling` or `roots`, and a signed state
//! naming this process and the call; the call is parked here, its server still waiting. The
//! retry with the answer and that state resumes the call ([`Gateway::resume`]): the answer goes
//! to the server, and the retry waits for the call's next event, its result or the server's next
//! request (another round).
//!
//! A parked call lives in this process only: a retry that reaches another replica is refused in
//! words. It lives as long as the call may take (the call timeout, counted from its first
//! request), and its state expires then: a call never resumed is freed and its server's call
//! cancelled at that deadline. A call that ends while parked (its server failed or exited) keeps
//! its outcome for the retry until then.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::future::BoxFuture;
use rmcp::model::{
    ClientCapabilities, ElicitResult, ErrorData, InputRequest, InputRequiredResult, InputResponses,
    ProgressToken,
};
// Sampling, roots and the logging level are deprecated for 2026-07-28 (SEP-2577); servers still
// use them.
#[allow(deprecated)]
use rmcp::model::{CreateMessageResult, ListRootsResult, LoggingLevel};
use rmcp::{Peer, RoleServer};
use serde_json::Value;
use tokio::sync::{mpsc, oneshot};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::input_required::Retry;
use super::state::{Continuation, ParkedCallRef, RequestBinding};
use super::{AskedClient, ClientRequest, Forwarded, Gateway, lock};
use crate::mcp::hub::NOTIFICATION_GRACE;
use crate::mcp::{LogSink, LogTap, McpError, McpHub, ProgressSink, Round};

/// Where a call's progress goes: the client request waiting on it, none while it is parked.
pub(super) type ProgressTarget = Arc<Mutex<Option<(Peer<RoleServer>, ProgressToken)>>>;

/// Where a call's server log messages go: the client request waiting on it and the lowest level
/// it asked for (`io.modelcontextprotocol/logLevel`), none while it is parked or unasked.
#[allow(deprecated)] // the logging level, which 2026-07-28 names per request
pub(super) type LogTarget = Arc<Mutex<Option<(Peer<RoleServer>, LoggingLevel)>>>;

/// The log messages of a 2026-07-28 request's call: each server the call reaches is tapped from
/// then on, and what it logs goes to the request waiting on the call. A forwarded call's one
/// server is tapped for each round; a call the host runs is tapped at the servers it reaches
/// ([`Gateway::call_reaches`]) for its whole run, as a retry may ask for messages the first
/// request did not.
pub(super) struct CallLogs {
    target: LogTarget,
    sink: LogSink,
    taps: Vec<(String, LogTap)>,
    forwarder: tokio::task::JoinHandle<()>,
}

impl CallLogs {
    #[allow(deprecated)] // the logging level, see `LogTarget`
    pub(super) fn new(log: Option<(Peer<RoleServer>, LoggingLevel)>) -> Self {
        let target = Arc::new(Mutex::new(log));
        let (sink, forwarder) = super::log_forwarder(target.clone());
        Self {
            target,
            sink,
            taps: Vec::new(),
            forwarder,
        }
    }

    pub(super) fn reach(&mut self, hub: &McpHub, server: &str) {
        if self.taps.iter().any(|(tapped, _)| tapped == server) {
            return;
        }
        // A server the hub does not know has no messages to tap.
        if let Ok(tap) = hub.tap_logs(server, self.sink.clone()) {
            self.taps.push((server.to_owned(), tap));
        }
    }

    /// Ends the taps once what they caught is sent.
    pub(super) async fn end(self) {
        // Messages sent just before the answer may still be on their way to the taps.
        if !self.taps.is_empty() && lock(&self.target).is_some() {
            tokio::time::sleep(NOTIFICATION_GRACE).await;
        }
        drop((self.taps, self.sink));
        let _ = self.forwarder.await;
    }
}

/// The server's call as a task runs it: its outcome, complete or `input_required` (a server of
/// 2026-07-28), the complete result as JSON.
pub(super) type ServerCall = BoxFuture<'static, Result<Round<Value>, McpError>>;

/// What a relayed call tells the request waiting on it.
pub(super) enum CallEvent {
    /// The server asked its client; the client's answer goes to `answer`.
    Asked {
        kind: ClientRequest,
        params: Value,
        answer: oneshot::Sender<Value>,
    },
    /// The call is over. `missing`: the server asked for what the waiting request had not
    /// declared (the request then fails with MissingRequiredClientCapabilityError).
    Ended {
        outcome: Result<Round<Value>, McpError>,
        missing: Option<ClientRequest>,
    },
}

/// A call forwarded for a 2026-07-28 client, running in a task of its own.
pub(super) struct RelayedCall {
    id: u64,
    server: String,
    events: mpsc::UnboundedReceiver<CallEvent>,
    /// Stops the server's call.
    cancel: CancellationToken,
    progress: Option<ProgressTarget>,
    /// The end of the call's time: its call timeout after its first request.
    deadline: Instant,
}

/// A relayed call whose server waits for its client's answer.
pub(super) struct Parked {
    call: RelayedCall,
    kind: ClientRequest,
    answer: oneshot::Sender<Value>,
}

/// How a round of a relayed call ends for the request waiting on it.
pub(super) enum Relayed {
    /// The server asked: the client answers and retries.
    InputRequired(InputRequiredResult),
    /// See [`CallEvent::Ended`].
    Ended {
        outcome: Result<Round<Value>, McpError>,
        missing: Option<ClientRequest>,
    },
}

/// A retry whose state names a call another gateway process holds.
const PARKED_ELSEWHERE: &str = "the requestState belongs to a call parked in another toolreg serve process: a server that asks during a call keeps that call in the process it asked in, and this retry reached another replica; send the retries of such a call to the replica that answered its first request (e.g. route by client address), or send the request again without requestState to start over";

/// A retry whose call is no longer parked here.
const NOT_PARKED: &str = "the call this requestState continues is no longer waiting for an answer: another retry resumed it already, or its time ran out; send the request again without requestState to start over";

impl Gateway {
    /// Starts the server's call for a 2026-07-28 request in a task of its own: `start` gets the
    /// call's id, its cancellation, its progress sink and its timeout. A request the server
    /// sends its client meanwhile comes to the request waiting on the call
    /// ([`Gateway::next_event`]). `server` is the server's id, or [`super::input_required::HOST_CALL`]
    /// for a call the host runs, whose servers are added as it reaches them.
    pub(super) fn start_relayed(
        &self,
        server: &str,
        capabilities: ClientCapabilities,
        progress: Option<(Peer<RoleServer>, ProgressToken)>,
        logs: Option<CallLogs>,
        start: impl FnOnce(u64, CancellationToken, Option<ProgressSink>, Duration) -> ServerCall,
    ) -> RelayedCall {
        let id = self.next_id();
        let timeout = self.call_timeout();
        let deadline = Instant::now() + timeout;
        let (events_tx, events) = mpsc::unbounded_channel();
        let call = Forwarded {
            servers: vec![server.to_owned()],
            client: AskedClient::Stateless {
                capabilities,
                relay: events_tx.clone(),
            },
            missing: None,
            waiting: 0,
            logs,
        };
        lock(&self.shared.forwarded).insert(id, call);
        let progress = progress.map(|target| Arc::new(Mutex::new(Some(target))));
        let (sink, forwarder) = super::progress_forwarder(progress.clone());
        let cancel = CancellationToken::new();
        let running = start(id, cancel.clone(), sink, timeout);
        let shared = self.shared.clone();
        tokio::spawn(async move {
            let outcome = running.await;
            // The call's sink is dropped with it: the forwarder ends once it has sent the rest.
            if let Some(forwarder) = forwarder {
                let _ = forwarder.await;
            }
            let (missing, logs) = lock(&shared.forwarded)
                .remove(&id)
                .map(|call| (call.missing, call.logs))
                .unwrap_or_default();
            if let Some(logs) = logs {
                logs.end().await;
            }
            let _ = events_tx.send(CallEvent::Ended { outcome, missing });
        });
        RelayedCall {
            id,
            server: server.to_owned(),
            events,
            cancel,
            progress,
            deadline,
        }
    }

    /// Waits for the call's next event on behalf of the request `ct` belongs to. The server's
    /// request parks the call and comes back as an `input_required` result whose state, bound to
    /// `binding`, names the call. A request that is cancelled or dropped while it waits takes the
    /// call down with it: nobody is left to hear of it.
    pub(super) async fn next_event(
        &self,
        mut call: RelayedCall,
        binding: &RequestBinding,
        ct: &CancellationToken,
    ) -> Result<Relayed, ErrorData> {
        let abandoned = call.cancel.clone().drop_guard();
        let event = tokio::select! {
            event = call.events.recv() => event,
            _ = ct.cancelled() => return Err(ErrorData::internal_error("the call was cancelled", None)),
        };
        abandoned.disarm();
        match event {
            Some(CallEvent::Ended { outcome, missing }) => Ok(Relayed::Ended { outcome, missing }),
            Some(CallEvent::Asked {
                kind,
                params,
                answer,
            }) => self.park(call, kind, params, answer, binding),
            // The task sends `Ended` before it ends; only a panic there gets here.
            None => Err(ErrorData::internal_error(
                "the forwarded call ended without an outcome",
                None,
            )),
        }
    }

    fn park(
        &self,
        call: RelayedCall,
        kind: ClientRequest,
        params: Value,
        answer: oneshot::Sender<Value>,
        binding: &RequestBinding,
    ) -> Result<Relayed, ErrorData> {
        let request = match input_request(kind, params) {
            Ok(request) => request,
            Err(e) => {
                call.cancel.cancel();
                return Err(ErrorData::internal_error(
                    format!("the server's {kind} request cannot be passed on: {e}"),
                    None,
                ));
            }
        };
        let continuation = Continuation {
            server: call.server.clone(),
            backend_state: None,
            parked: Some(ParkedCallRef {
                instance: self.shared.instance.clone(),
                call: call.id,
            }),
        };
        // Expires with the call: a retry after it is told the state expired.
        let left = call
            .deadline
            .saturating_duration_since(Instant::now())
            .max(Duration::from_millis(1));
        let state = self.shared.state_key.seal(&continuation, binding, left);
        if let Some(target) = &call.progress {
            *lock(target) = None;
        }
        if let Some(logs) = lock(&self.shared.forwarded)
            .get(&call.id)
            .and_then(|c| c.logs.as_ref())
        {
            *lock(&logs.target) = None;
        }
        let (id, deadline) = (call.id, call.deadline);
        lock(&self.shared.parked).insert(id, Parked { call, kind, answer });
        // Not resumed in time: freed, and the server's call stopped (the hub's own deadline for
        // it is the same; this does not rely on it). Dropping the answer tells the server's
        // pending request that no answer comes.
        let shared = Arc::downgrade(&self.shared);
        tokio::spawn(async move {
            tokio::time::sleep_until(deadline).await;
            let expired = shared.upgrade().and_then(|s| lock(&s.parked).remove(&id));
            if let Some(parked) = expired {
                parked.call.cancel.cancel();
            }
        });
        let requests = [(kind.to_string(), request)].into();
        Ok(Relayed::InputRequired(InputRequiredResult::new(
            Some(requests),
            Some(state),
        )))
    }

    /// Resumes the parked call `parked` names with the retry's answer, and waits for its next
    /// event as [`Gateway::next_event`] does.
    pub(super) async fn resume(
        &self,
        parked: &ParkedCallRef,
        retry: &Retry,
        progress: Option<(Peer<RoleServer>, ProgressToken)>,
        binding: &RequestBinding,
        ct: &CancellationToken,
    ) -> Result<Relayed, ErrorData> {
        if parked.instance != self.shared.instance {
            return Err(ErrorData::invalid_params(PARKED_ELSEWHERE, None));
        }
        let Some(Parked { call, kind, answer }) = lock(&self.shared.parked).remove(&parked.call)
        else {
            return Err(ErrorData::invalid_params(NOT_PARKED, None));
        };
        let reply = match answer_of(kind, retry.input_responses.as_ref()) {
            Ok(reply) => reply,
            Err(message) => {
                // Still parked: a retry with a proper answer may follow.
                let id = call.id;
                let waiting = Parked { call, kind, answer };
                lock(&self.shared.parked).insert(id, waiting);
                return Err(ErrorData::invalid_params(message, None));
            }
        };
        // The retry is the request waiting on the call now: its capabilities and its progress
        // token are the ones that count.
        if let Some(Forwarded {
            client: AskedClient::Stateless { capabilities, .. },
            logs,
            ..
        }) = lock(&self.shared.forwarded).get_mut(&call.id)
        {
            *capabilities = retry.capabilities.clone();
            if let Some(logs) = logs {
                *lock(&logs.target) = retry.log.clone();
            }
        }
        if let Some(target) = &call.progress {
            *lock(target) = progress;
        }
        // A call that ended while parked no longer listens; its outcome is the next event.
        let _ = answer.send(reply);
        self.next_event(call, binding, ct).await
    }
}

/// The server's request as a 2026-07-28 input request.
fn input_request(kind: ClientRequest, params: Value) -> Result<InputRequest, serde_json::Error> {
    let method = match kind {
        ClientRequest::Elicitation => "elicitation/create",
        ClientRequest::Sampling => "sampling/createMessage",
        ClientRequest::Roots => "roots/list",
    };
    serde_json::from_value(serde_json::json!({ "method": method, "params": params }))
}

/// The retry's answer to the server's request of `kind`, under the key it was asked with, once
/// it has the shape of that request's result.
#[allow(deprecated)] // sampling and roots: see the imports
fn answer_of(kind: ClientRequest, responses: Option<&InputResponses>) -> Result<Value, String> {
    let key = kind.to_string();
    let answer = responses.and_then(|r| r.get(&key)).ok_or_else(|| {
        format!("the retry carries no answer to the server's {kind} request: send it in inputResponses under {key:?}")
    })?;
    let checked = match kind {
        ClientRequest::Elicitation => {
            serde_json::from_value::<ElicitResult>(answer.clone()).map(drop)
        }
        ClientRequest::Sampling => {
            serde_json::from_value::<CreateMessageResult>(answer.clone()).map(drop)
        }
        ClientRequest::Roots => serde_json::from_value::<ListRootsResult>(answer.clone()).map(drop),
    };
    checked.map_err(|e| {
        format!("the answer under inputResponses.{key} is not the result of a {kind} request: {e}")
    })?;
    Ok(answer.clone())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn responses(value: Value) -> InputResponses {
        serde_json::from_value(value).expect("input responses")
    }

    #[test]
    fn a_servers_request_becomes_the_input_request_of_its_kind() {
        let form = json!({ "mode": "form", "message": "Who?", "requestedSchema": { "type": "object", "properties": {} } });
        let request = input_request(ClientRequest::Elicitation, form).expect("an elicitation");
        assert!(matches!(request, InputRequest::Elicitation(_)));
        let wire = serde_json::to_value(&request).expect("serializes");
        assert_eq!(wire["method"], "elicitation/create");
        assert_eq!(wire["params"]["message"], "Who?");
        let roots = input_request(ClientRequest::Roots, json!({})).expect("a roots request");
        assert!(matches!(roots, InputRequest::ListRoots(_)));
    }

    #[test]
    fn an_answer_is_taken_under_its_kind_and_only_in_its_shape() {
        let declined = responses(json!({ "elicitation": { "action": "decline" } }));
        assert_eq!(
            answer_of(ClientRequest::Elicitation, Some(&declined)).expect("a decline passes"),
            json!({ "action": "decline" })
        );
        let missing = answer_of(ClientRequest::Sampling, Some(&declined)).unwrap_err();
        assert!(missing.contains("under \"sampling\""), "{missing}");
        assert!(answer_of(ClientRequest::Roots, None).is_err());
        let wrong = responses(json!({ "roots": { "action": "accept" } }));
        let error = answer_of(ClientRequest::Roots, Some(&wrong)).unwrap_err();
        assert!(
            error.contains("not the result of a roots request"),
            "{error}"
        );
    }
}
