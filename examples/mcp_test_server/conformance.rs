//! `--conformance`: the tools the MCP conformance suite's server scenarios call, so the suite can
//! test `toolreg serve` with this server behind it. Written from the scenarios' own descriptions
//! (`conformance list`, each scenario's "Server Implementation Requirements"); the texts the
//! suite compares are the ones those descriptions give. The prompts, resources and completions
//! of the `prompts-*`, `resources-*` and `completion-complete` scenarios too.

use std::time::Duration;

use base64::Engine;
// Sampling is deprecated for the 2026 protocol (SEP-2577); the scenarios still call it.
#[allow(deprecated)]
use rmcp::model::CreateMessageRequestParams;
use rmcp::model::{
    CallToolResponse, CallToolResult, CompleteRequestParams, CompleteResult, ContentBlock,
    ElicitRequestParams, GetPromptRequestParams, GetPromptResult, JsonObject,
    ProgressNotificationParam, Prompt, ReadResourceResult, Resource, ResourceTemplate, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer};
use serde_json::{Value, json};

use crate::{PNG_1X1, obj_schema, schema, text};

const NO_ARGUMENTS: &[(&str, &str)] = &[
    ("test_simple_text", "Returns a simple text response"),
    ("test_image_content", "Returns a 1x1 PNG image"),
    ("test_audio_content", "Returns a short WAV sound"),
    (
        "test_embedded_resource",
        "Returns an embedded text resource",
    ),
    (
        "test_multiple_content_types",
        "Returns text, an image and an embedded resource",
    ),
    (
        "test_tool_with_logging",
        "Sends three info log messages while it runs",
    ),
    ("test_error_handling", "Always fails with an error result"),
    (
        "test_tool_with_progress",
        "Reports progress 0, 50 and 100 of 100 while it runs",
    ),
    (
        "test_elicitation_sep1034_defaults",
        "Asks the user for fields of every primitive type, each with a default",
    ),
    (
        "test_elicitation_sep1330_enums",
        "Asks the user to choose among the five kinds of enum",
    ),
    (
        "test_reconnection",
        "Answers after a pause long enough for a client to reconnect",
    ),
    // The diagnostic tools of the 2026-07-28 `server-stateless` scenario.
    (
        "test_missing_capability",
        "Asks the client's model, so it needs the sampling capability",
    ),
    (
        "test_streaming_elicitation",
        "Asks the user for a name while the call runs",
    ),
    (
        "test_logging_tool",
        "Sends three info log messages while it runs",
    ),
];

pub fn tools() -> Vec<Tool> {
    let mut tools: Vec<Tool> = NO_ARGUMENTS
        .iter()
        .map(|(name, description)| Tool::new(*name, *description, obj_schema(json!({}), &[])))
        .collect();
    tools.push(Tool::new(
        "test_sampling",
        "Asks the client's model to answer prompt",
        obj_schema(json!({"prompt": {"type": "string"}}), &["prompt"]),
    ));
    tools.push(Tool::new(
        "test_elicitation",
        "Asks the user for a username and an email, showing message",
        obj_schema(json!({"message": {"type": "string"}}), &["message"]),
    ));
    tools.push(Tool::new(
        "json_schema_2020_12_tool",
        "Tool with JSON Schema 2020-12 features",
        schema(json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "type": "object",
            "$defs": {
                "address": {
                    "type": "object",
                    "properties": { "street": { "type": "string" }, "city": { "type": "string" } }
                }
            },
            "properties": {
                "name": { "type": "string" },
                "address": { "$ref": "#/$defs/address" }
            },
            "additionalProperties": false
        })),
    ));
    tools
}

/// A tenth of a second of silence: a WAV header over 800 zero samples (8 kHz, 8-bit mono).
fn silent_wav() -> String {
    let samples = 800u32;
    let mut wav = Vec::with_capacity(44 + samples as usize);
    wav.extend_from_slice(b"RIFF");
    wav.extend_from_slice(&(36 + samples).to_le_bytes());
    wav.extend_from_slice(b"WAVEfmt ");
    wav.extend_from_slice(&16u32.to_le_bytes()); // fmt chunk size
    wav.extend_from_slice(&1u16.to_le_bytes()); // PCM
    wav.extend_from_slice(&1u16.to_le_bytes()); // mono
    wav.extend_from_slice(&8000u32.to_le_bytes()); // sample rate
    wav.extend_from_slice(&8000u32.to_le_bytes()); // bytes per second
    wav.extend_from_slice(&1u16.to_le_bytes()); // block align
    wav.extend_from_slice(&8u16.to_le_bytes()); // bits per sample
    wav.extend_from_slice(b"data");
    wav.extend_from_slice(&samples.to_le_bytes());
    wav.resize(44 + samples as usize, 0x80); // 8-bit PCM's silence is the middle value
    base64::engine::general_purpose::STANDARD.encode(wav)
}

fn resource(uri: &str, mime_type: &str, text: &str) -> ContentBlock {
    serde_json::from_value(json!({
        "type": "resource",
        "resource": { "uri": uri, "mimeType": mime_type, "text": text }
    }))
    .expect("an embedded text resource")
}

fn complete(content: Vec<ContentBlock>) -> Result<CallToolResponse, ErrorData> {
    Ok(CallToolResponse::Complete(CallToolResult::success(content)))
}

#[allow(deprecated)] // logging is still what 2025-11-25 clients read
async fn log_info(context: &RequestContext<RoleServer>, message: &str) {
    let param = rmcp::model::LoggingMessageNotificationParam::new(
        rmcp::model::LoggingLevel::Info,
        json!(message),
    );
    let _ = context.peer.notify_logging_message(param).await;
}

/// Asks the client's model to answer `prompt`; its answer, or the failure, as the tool's result.
#[allow(deprecated)] // sampling: see the imports
async fn sample(
    context: &RequestContext<RoleServer>,
    prompt: &str,
) -> Result<CallToolResponse, ErrorData> {
    let params: CreateMessageRequestParams = serde_json::from_value(json!({
        "messages": [{ "role": "user", "content": { "type": "text", "text": prompt } }],
        "maxTokens": 100
    }))
    .expect("a sampling request");
    match context.peer.create_message(params).await {
        Ok(answer) => {
            let answer = serde_json::to_value(&answer).unwrap_or_default();
            let said = answer["content"]["text"].as_str().unwrap_or_default();
            Ok(text(format!("LLM response: {said}")))
        }
        Err(e) => Ok(CallToolResponse::Complete(CallToolResult::error(vec![
            ContentBlock::text(format!("sampling failed: {e}")),
        ]))),
    }
}

async fn elicit(
    context: &RequestContext<RoleServer>,
    message: &str,
    requested_schema: Value,
) -> Result<CallToolResponse, ErrorData> {
    let params: ElicitRequestParams = serde_json::from_value(json!({
        "mode": "form",
        "message": message,
        "requestedSchema": requested_schema,
    }))
    .map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
    match context.peer.create_elicitation(params).await {
        Ok(answer) => {
            let answer = serde_json::to_value(&answer).unwrap_or_default();
            Ok(text(format!(
                "Elicitation completed: action={}, content={}",
                answer["action"].as_str().unwrap_or("unknown"),
                answer.get("content").cloned().unwrap_or(json!({}))
            )))
        }
        Err(e) => Ok(CallToolResponse::Complete(CallToolResult::error(vec![
            ContentBlock::text(format!("elicitation failed: {e}")),
        ]))),
    }
}

/// Runs conformance tool `name`, or `None` when it is not one of them.
pub async fn call(
    name: &str,
    args: &JsonObject,
    context: &RequestContext<RoleServer>,
) -> Option<Result<CallToolResponse, ErrorData>> {
    let arg = |key: &str| args.get(key).and_then(Value::as_str).unwrap_or_default();
    Some(match name {
        "test_simple_text" => complete(vec![ContentBlock::text(
            "This is a simple text response for testing.",
        )]),
        "test_image_content" => complete(vec![ContentBlock::image(PNG_1X1, "image/png")]),
        "test_audio_content" => complete(vec![
            serde_json::from_value(
                json!({ "type": "audio", "data": silent_wav(), "mimeType": "audio/wav" }),
            )
            .expect("an audio block"),
        ]),
        "test_embedded_resource" => complete(vec![resource(
            "test://embedded-resource",
            "text/plain",
            "This is an embedded resource content.",
        )]),
        "test_multiple_content_types" => complete(vec![
            ContentBlock::text("Multiple content types test:"),
            ContentBlock::image(PNG_1X1, "image/png"),
            resource(
                "test://mixed-content-resource",
                "application/json",
                r#"{"test":"data","value":123}"#,
            ),
        ]),
        "test_tool_with_logging" | "test_logging_tool" => {
            log_info(context, "Tool execution started").await;
            tokio::time::sleep(Duration::from_millis(50)).await;
            log_info(context, "Tool processing data").await;
            tokio::time::sleep(Duration::from_millis(50)).await;
            log_info(context, "Tool execution completed").await;
            Ok(text("Tool with logging executed successfully"))
        }
        "test_error_handling" => Ok(CallToolResponse::Complete(CallToolResult::error(vec![
            ContentBlock::text("This tool intentionally returns an error for testing"),
        ]))),
        "test_tool_with_progress" => {
            let token = context.meta.get_progress_token();
            for (i, progress) in [0.0, 50.0, 100.0].into_iter().enumerate() {
                if i > 0 {
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
                if let Some(token) = &token {
                    let mut param = ProgressNotificationParam::new(token.clone(), progress);
                    param.total = Some(100.0);
                    let _ = context.peer.notify_progress(param).await;
                }
            }
            Ok(text("Tool with progress executed successfully"))
        }
        "test_sampling" => sample(context, arg("prompt")).await,
        "test_missing_capability" => sample(context, "Say hello").await,
        "test_streaming_elicitation" => {
            let requested = json!({
                "type": "object",
                "properties": { "name": { "type": "string" } },
                "required": ["name"]
            });
            elicit(context, "Please provide your name", requested).await
        }
        "test_elicitation" => {
            let requested = json!({
                "type": "object",
                "properties": {
                    "username": { "type": "string", "description": "User's response" },
                    "email": { "type": "string", "description": "User's email address" }
                },
                "required": ["username", "email"]
            });
            match elicit(context, arg("message"), requested).await {
                Ok(CallToolResponse::Complete(mut result)) if result.is_error != Some(true) => {
                    // This scenario words its answer differently from the SEP ones.
                    if let Some(block) = result.content.first_mut()
                        && let Some(said) = block.as_text().map(|t| t.text.clone())
                    {
                        *block = ContentBlock::text(said.replacen(
                            "Elicitation completed: ",
                            "User response: ",
                            1,
                        ));
                    }
                    Ok(CallToolResponse::Complete(result))
                }
                other => other,
            }
        }
        "test_elicitation_sep1034_defaults" => {
            let requested = json!({
                "type": "object",
                "properties": {
                    "name": { "type": "string", "default": "John Doe" },
                    "age": { "type": "integer", "default": 30 },
                    "score": { "type": "number", "default": 95.5 },
                    "status": { "type": "string", "enum": ["active", "inactive", "pending"], "default": "active" },
                    "verified": { "type": "boolean", "default": true }
                }
            });
            elicit(context, "Please review your profile", requested).await
        }
        "test_elicitation_sep1330_enums" => {
            let requested = json!({
                "type": "object",
                "properties": {
                    "untitledSingle": { "type": "string", "enum": ["option1", "option2", "option3"] },
                    "titledSingle": { "type": "string", "oneOf": [
                        { "const": "value1", "title": "First Option" },
                        { "const": "value2", "title": "Second Option" },
                        { "const": "value3", "title": "Third Option" }
                    ] },
                    "legacyEnum": { "type": "string", "enum": ["opt1", "opt2", "opt3"],
                        "enumNames": ["Option One", "Option Two", "Option Three"] },
                    "untitledMulti": { "type": "array", "items": { "type": "string", "enum": ["option1", "option2", "option3"] } },
                    "titledMulti": { "type": "array", "items": { "anyOf": [
                        { "const": "value1", "title": "First Choice" },
                        { "const": "value2", "title": "Second Choice" },
                        { "const": "value3", "title": "Third Choice" }
                    ] } }
                }
            });
            elicit(context, "Choose your options", requested).await
        }
        "test_reconnection" => {
            tokio::time::sleep(Duration::from_millis(500)).await;
            Ok(text("Reconnection test completed"))
        }
        _ => return None,
    })
}

/// An rmcp model value from the JSON a scenario's description gives.
fn from_json<T: serde::de::DeserializeOwned>(value: Value) -> T {
    serde_json::from_value(value).expect("a valid MCP value")
}

/// The prompts of the `prompts-*` scenarios.
pub fn prompts() -> Vec<Prompt> {
    let argument = |name: &str, description: &str| json!({ "name": name, "description": description, "required": true });
    from_json(json!([
        { "name": "test_simple_prompt", "description": "A prompt without arguments" },
        {
            "name": "test_prompt_with_arguments",
            "description": "A prompt with two required arguments",
            "arguments": [argument("arg1", "First test argument"), argument("arg2", "Second test argument")],
        },
        {
            "name": "test_prompt_with_embedded_resource",
            "description": "A prompt that embeds the resource it is given",
            "arguments": [argument("resourceUri", "URI of the resource to embed")],
        },
        { "name": "test_prompt_with_image", "description": "A prompt with an image" },
    ]))
}

pub fn get_prompt(request: &GetPromptRequestParams) -> Result<GetPromptResult, ErrorData> {
    let arg = |key: &str| {
        request
            .arguments
            .as_ref()
            .and_then(|a| a.get(key))
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned()
    };
    let user = |content: Value| json!({ "role": "user", "content": content });
    let text = |text: String| user(json!({ "type": "text", "text": text }));
    let messages = match request.name.as_str() {
        "test_simple_prompt" => json!([text("This is a simple prompt for testing.".into())]),
        "test_prompt_with_arguments" => json!([text(format!(
            "Prompt with arguments: arg1='{}', arg2='{}'",
            arg("arg1"),
            arg("arg2")
        ))]),
        "test_prompt_with_embedded_resource" => json!([
            user(json!({ "type": "resource", "resource": {
                "uri": arg("resourceUri"), "mimeType": "text/plain",
                "text": "Embedded resource content for testing.",
            }})),
            text("Please process the embedded resource above.".into()),
        ]),
        "test_prompt_with_image" => json!([
            user(json!({ "type": "image", "data": PNG_1X1, "mimeType": "image/png" })),
            text("Please analyze the image above.".into()),
        ]),
        other => {
            return Err(ErrorData::invalid_params(
                format!("prompt not found: {other}"),
                None,
            ));
        }
    };
    Ok(from_json(json!({ "messages": messages })))
}

/// The resources of the `resources-*` scenarios (the watched one is the subscription's).
pub fn resources() -> Vec<Resource> {
    from_json(json!([
        { "uri": "test://static-text", "name": "static-text", "description": "A static text resource", "mimeType": "text/plain" },
        { "uri": "test://static-binary", "name": "static-binary", "description": "A 1x1 PNG image", "mimeType": "image/png" },
        { "uri": "test://watched-resource", "name": "watched-resource", "description": "A resource to subscribe to; it changes once after each subscription", "mimeType": "text/plain" },
    ]))
}

pub fn resource_templates() -> Vec<ResourceTemplate> {
    from_json(json!([{
        "uriTemplate": "test://template/{id}/data", "name": "template-data",
        "description": "Data for an id", "mimeType": "application/json",
    }]))
}

pub fn read_resource(uri: &str) -> Result<ReadResourceResult, ErrorData> {
    let content = match uri {
        "test://static-text" => json!({ "uri": uri, "mimeType": "text/plain",
            "text": "This is the content of the static text resource." }),
        "test://static-binary" => json!({ "uri": uri, "mimeType": "image/png", "blob": PNG_1X1 }),
        "test://watched-resource" => json!({ "uri": uri, "mimeType": "text/plain",
            "text": "The watched resource." }),
        _ => match uri
            .strip_prefix("test://template/")
            .and_then(|rest| rest.strip_suffix("/data"))
            .filter(|id| !id.is_empty() && !id.contains('/'))
        {
            Some(id) => json!({ "uri": uri, "mimeType": "application/json",
                "text": json!({ "id": id, "templateTest": true, "data": format!("Data for ID: {id}") }).to_string() }),
            None => {
                return Err(ErrorData::resource_not_found(
                    format!("resource not found: {uri}"),
                    None,
                ));
            }
        },
    };
    Ok(from_json(json!({ "contents": [content] })))
}

/// Completes an argument from a small word list by its prefix (`completion-complete`).
pub fn complete_argument(request: &CompleteRequestParams) -> CompleteResult {
    const WORDS: [&str; 5] = ["paris", "park", "party", "test", "testing"];
    let prefix = request.argument.value.to_lowercase();
    let values: Vec<&str> = WORDS
        .iter()
        .copied()
        .filter(|w| w.starts_with(&prefix))
        .collect();
    from_json(
        json!({ "completion": { "values": values, "total": values.len(), "hasMore": false } }),
    )
}
