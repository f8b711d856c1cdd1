//! `--conformance-mrtr`: the tools and the prompt of the suite's `input-required-result-*`
//! server scenarios (SEP-2322), written from the scenarios' descriptions (the keys, messages and
//! schemas they give). Each asks its client for input in steps: from 2026-07-28 on by returning
//! an `input_required` result and reading the answers (and its own `requestState`) from the
//! retry; in a session of the handshake lifecycle by sending the same requests itself
//! (`elicitation/create`, `sampling/createMessage`, `roots/list`) during the call. One function
//! decides each step for both, so the two lifecycles ask the same questions.
//!
//! This server's states are plain text, not signed: it checks that a state is one it issues, and
//! the gateway in front of it signs what it hands to clients.

#[allow(deprecated)] // sampling: deprecated for 2026-07-28 (SEP-2577), still asked for
use rmcp::model::CreateMessageRequestParams;
use rmcp::model::{
    CallToolResponse, ClientCapabilities, ElicitRequestParams, GetPromptResponse, GetPromptResult,
    InputRequests, InputRequiredResult, InputResponses, Prompt, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer};
use serde_json::{Value, json};

use crate::{obj_schema, text};

const TOOLS: &[(&str, &str)] = &[
    (
        "test_input_required_result_elicitation",
        "Asks the user's name, then greets them",
    ),
    (
        "test_input_required_result_sampling",
        "Asks the client's model for the capital of France",
    ),
    (
        "test_input_required_result_list_roots",
        "Asks the client for its roots",
    ),
    (
        "test_input_required_result_request_state",
        "Asks for a confirmation, with a request state to echo",
    ),
    (
        "test_input_required_result_multiple_inputs",
        "Asks for a name, a greeting from the model and the roots at once",
    ),
    (
        "test_input_required_result_multi_round",
        "Asks for a name, then for a favourite colour",
    ),
    (
        "test_input_required_result_tampered_state",
        "Asks for a confirmation; refuses a request state it did not issue",
    ),
    (
        "test_input_required_result_capabilities",
        "Asks only for the kinds of input the client declared",
    ),
];

const PROMPT: &str = "test_input_required_result_prompt";

pub fn tools() -> Vec<Tool> {
    TOOLS
        .iter()
        .map(|(name, description)| Tool::new(*name, *description, obj_schema(json!({}), &[])))
        .collect()
}

pub fn prompts() -> Vec<Prompt> {
    serde_json::from_value(json!([{
        "name": PROMPT,
        "description": "A prompt that asks the user for its context first"
    }]))
    .expect("a prompt")
}

/// What a request does next, given the answers it has and the state it was handed.
enum Step<T> {
    /// Asks these `(key, { method, params })`, with this state to come back.
    Ask(Vec<(&'static str, Value)>, Option<String>),
    Done(T),
}

fn elicitation(message: &str, field: &str, kind: &str) -> Value {
    json!({ "method": "elicitation/create", "params": {
        "message": message,
        "requestedSchema": {
            "type": "object",
            "properties": { field: { "type": kind } },
            "required": [field]
        }
    }})
}

fn sampling(prompt: &str, max_tokens: u32) -> Value {
    json!({ "method": "sampling/createMessage", "params": {
        "messages": [{ "role": "user", "content": { "type": "text", "text": prompt } }],
        "maxTokens": max_tokens
    }})
}

fn roots() -> Value {
    json!({ "method": "roots/list", "params": {} })
}

/// A field of an accepted elicitation's content, as text.
fn field(answers: &InputResponses, key: &str, name: &str) -> Option<String> {
    let value = answers.get(key)?.get("content")?.get(name)?;
    Some(
        value
            .as_str()
            .map_or_else(|| value.to_string(), str::to_owned),
    )
}

fn sampled(answers: &InputResponses, key: &str) -> Option<String> {
    let content = answers.get(key)?.get("content")?;
    Some(content.get("text")?.as_str()?.to_owned())
}

fn root_uris(answers: &InputResponses, key: &str) -> Option<String> {
    let roots = answers.get(key)?.get("roots")?.as_array()?;
    let uris: Vec<&str> = roots
        .iter()
        .filter_map(|r| r.get("uri").and_then(Value::as_str))
        .collect();
    Some(uris.join(", "))
}

fn declares(capabilities: &ClientCapabilities, name: &str) -> bool {
    serde_json::to_value(capabilities)
        .ok()
        .and_then(|c| c.get(name).cloned())
        .is_some_and(|c| !c.is_null())
}

/// A state this server did not issue for this step.
fn foreign(state: &str) -> ErrorData {
    ErrorData::invalid_params(
        format!("request state {state:?} is not one this server issued"),
        None,
    )
}

/// The next step of tool `name`.
fn tool_step(
    name: &str,
    answers: &InputResponses,
    state: Option<&str>,
    capabilities: &ClientCapabilities,
) -> Result<Step<String>, ErrorData> {
    const CONFIRM: &str = "confirm-asked";
    const ALL_ASKED: &str = "all-asked";
    Ok(match name {
        "test_input_required_result_elicitation" => match field(answers, "user_name", "name") {
            Some(name) => Step::Done(format!("Hello, {name}!")),
            None => Step::Ask(
                vec![(
                    "user_name",
                    elicitation("What is your name?", "name", "string"),
                )],
                None,
            ),
        },
        "test_input_required_result_sampling" => match sampled(answers, "capital_question") {
            Some(said) => Step::Done(format!("The model says: {said}")),
            None => Step::Ask(
                vec![(
                    "capital_question",
                    sampling("What is the capital of France?", 100),
                )],
                None,
            ),
        },
        "test_input_required_result_list_roots" => match root_uris(answers, "client_roots") {
            Some(uris) => Step::Done(format!("The client's roots: {uris}")),
            None => Step::Ask(vec![("client_roots", roots())], None),
        },
        "test_input_required_result_request_state"
        | "test_input_required_result_tampered_state" => {
            match (state, answers.contains_key("confirm")) {
                (Some(CONFIRM), true) => Step::Done("state-ok: confirmed".into()),
                (Some(other), _) if other != CONFIRM => return Err(foreign(other)),
                _ => Step::Ask(
                    vec![("confirm", elicitation("Please confirm", "ok", "boolean"))],
                    Some(CONFIRM.into()),
                ),
            }
        }
        "test_input_required_result_multiple_inputs" => {
            let all = (
                field(answers, "user_name", "name"),
                sampled(answers, "greeting"),
                root_uris(answers, "client_roots"),
            );
            match (state, all) {
                (Some(ALL_ASKED), (Some(name), Some(greeting), Some(uris))) => {
                    Step::Done(format!("{greeting} {name}, your roots are: {uris}"))
                }
                (Some(other), _) if other != ALL_ASKED => return Err(foreign(other)),
                _ => Step::Ask(
                    vec![
                        (
                            "user_name",
                            elicitation("What is your name?", "name", "string"),
                        ),
                        ("greeting", sampling("Generate a greeting", 50)),
                        ("client_roots", roots()),
                    ],
                    Some(ALL_ASKED.into()),
                ),
            }
        }
        "test_input_required_result_multi_round" => {
            // The name from round 1 travels in the state: round 3's retry carries only step 2.
            let step1 = || {
                Step::Ask(
                    vec![(
                        "step1",
                        elicitation("Step 1: What is your name?", "name", "string"),
                    )],
                    Some("round-1".into()),
                )
            };
            match state {
                None => step1(),
                Some("round-1") => match field(answers, "step1", "name") {
                    Some(name) => Step::Ask(
                        vec![(
                            "step2",
                            elicitation("Step 2: What is your favorite color?", "color", "string"),
                        )],
                        Some(format!("round-2:{name}")),
                    ),
                    None => step1(),
                },
                Some(other) => match other.strip_prefix("round-2:") {
                    Some(name) => match field(answers, "step2", "color") {
                        Some(color) => Step::Done(format!("{name}'s favorite color is {color}")),
                        None => Step::Ask(
                            vec![(
                                "step2",
                                elicitation(
                                    "Step 2: What is your favorite color?",
                                    "color",
                                    "string",
                                ),
                            )],
                            Some(other.to_owned()),
                        ),
                    },
                    None => return Err(foreign(other)),
                },
            }
        }
        "test_input_required_result_capabilities" => {
            let mut asks = Vec::new();
            if declares(capabilities, "elicitation") {
                asks.push((
                    "user_name",
                    elicitation("What is your name?", "name", "string"),
                ));
            }
            if declares(capabilities, "sampling") {
                asks.push(("greeting", sampling("Generate a greeting", 50)));
            }
            if asks.is_empty() || asks.iter().any(|(key, _)| answers.contains_key(*key)) {
                Step::Done(format!(
                    "answered: {}",
                    answers.keys().cloned().collect::<Vec<_>>().join(", ")
                ))
            } else {
                Step::Ask(asks, None)
            }
        }
        other => {
            return Err(ErrorData::invalid_params(
                format!("tool not found: {other}"),
                None,
            ));
        }
    })
}

fn prompt_step(answers: &InputResponses) -> Step<GetPromptResult> {
    match field(answers, "user_context", "context") {
        Some(context) => Step::Done(
            serde_json::from_value(json!({ "messages": [{ "role": "user", "content": {
                "type": "text", "text": format!("Answer within this context: {context}")
            }}]}))
            .expect("a prompt result"),
        ),
        None => Step::Ask(
            vec![(
                "user_context",
                elicitation("What context should the prompt use?", "context", "string"),
            )],
            None,
        ),
    }
}

fn input_required(asks: Vec<(&'static str, Value)>, state: Option<String>) -> InputRequiredResult {
    let requests: InputRequests = asks
        .into_iter()
        .map(|(key, request)| {
            let request = serde_json::from_value(request).expect("an input request");
            (key.to_owned(), request)
        })
        .collect();
    InputRequiredResult::new(Some(requests), state)
}

/// Sends one of the step's requests to the client itself (the handshake lifecycle).
#[allow(deprecated)] // sampling: see the imports
async fn ask_peer(
    context: &RequestContext<RoleServer>,
    request: Value,
) -> Result<Value, ErrorData> {
    let failed = |e: rmcp::ServiceError| ErrorData::internal_error(e.to_string(), None);
    let params = request["params"].clone();
    let answer = match request["method"].as_str() {
        Some("elicitation/create") => {
            let params: ElicitRequestParams = serde_json::from_value(params)
                .map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
            serde_json::to_value(
                context
                    .peer
                    .create_elicitation(params)
                    .await
                    .map_err(failed)?,
            )
        }
        Some("sampling/createMessage") => {
            let params: CreateMessageRequestParams = serde_json::from_value(params)
                .map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
            serde_json::to_value(context.peer.create_message(params).await.map_err(failed)?)
        }
        _ => serde_json::to_value(context.peer.list_roots().await.map_err(failed)?),
    };
    answer.map_err(|e| ErrorData::internal_error(e.to_string(), None))
}

/// Runs `step` to its end: at 2026-07-28 one step per request (the client retries), in a
/// handshake session every step within this request, asking the client directly.
async fn run<T>(
    context: &RequestContext<RoleServer>,
    answers: Option<InputResponses>,
    state: Option<String>,
    step: impl Fn(&InputResponses, Option<&str>) -> Result<Step<T>, ErrorData>,
) -> Result<Result<T, InputRequiredResult>, ErrorData> {
    let mut answers = answers.unwrap_or_default();
    let mut state = state;
    let stateless = context
        .protocol_version()
        .is_some_and(|v| !v.has_initialize());
    loop {
        match step(&answers, state.as_deref())? {
            Step::Done(done) => return Ok(Ok(done)),
            Step::Ask(asks, next) if stateless => return Ok(Err(input_required(asks, next))),
            Step::Ask(asks, next) => {
                for (key, request) in asks {
                    answers.insert(key.to_owned(), ask_peer(context, request).await?);
                }
                state = next;
            }
        }
    }
}

/// Runs tool `name`, or `None` when it is not one of these.
pub async fn call(
    name: &str,
    answers: Option<InputResponses>,
    state: Option<String>,
    context: &RequestContext<RoleServer>,
) -> Option<Result<CallToolResponse, ErrorData>> {
    if !TOOLS.iter().any(|(tool, _)| *tool == name) {
        return None;
    }
    let capabilities = context.client_capabilities().unwrap_or_default();
    let outcome = run(context, answers, state, |answers, state| {
        tool_step(name, answers, state, &capabilities)
    })
    .await;
    Some(outcome.map(|outcome| match outcome {
        Ok(said) => text(said),
        Err(input) => CallToolResponse::InputRequired(input),
    }))
}

pub async fn get_prompt(
    name: &str,
    answers: Option<InputResponses>,
    state: Option<String>,
    context: &RequestContext<RoleServer>,
) -> Result<GetPromptResponse, ErrorData> {
    if name != PROMPT {
        return Err(ErrorData::invalid_params(
            format!("prompt not found: {name}"),
            None,
        ));
    }
    let outcome = run(context, answers, state, |answers, _| {
        Ok(prompt_step(answers))
    })
    .await?;
    Ok(match outcome {
        Ok(result) => GetPromptResponse::Complete(result),
        Err(input) => GetPromptResponse::InputRequired(input),
    })
}
