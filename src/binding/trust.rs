//! Tool trust for JS (`js/trust.js`): one call reviews a server's listing against its pins —
//! each tool's digest and pinned form, the form the model may see (hidden Unicode stripped),
//! the scanner's findings, and what changed since the pins.

use std::collections::BTreeMap;

use napi::bindgen_prelude::*;
use napi_derive::napi;
use serde::Deserialize;
use serde_json::{Value, json};
use toolreg_trust::{
    Change, Finding, Level, PinnedServer, ScanContext, compare, digest, instructions_digest,
    pinned_form, scan_instructions, scan_tool, strip_hidden, strip_tool, worst_level,
};

use super::js_error;
use crate::error::ToolregError;

/// `trustReview`'s request.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ReviewRequest {
    /// The `tools/list` entries, one per name.
    tools: Vec<Value>,
    /// The server's pins (tool name → pinned form), absent the first time it is seen.
    pins: Option<BTreeMap<String, Value>>,
    /// The server's `instructions` as it sent them, if any.
    #[serde(default)]
    instructions: Option<String>,
    /// The pinned instructions, when the pins have an entry for them (`null`: pinned as none).
    #[serde(default)]
    pinned_instructions: Option<Option<String>>,
    /// The server's id, for the scanner's findings.
    server: String,
    /// `[server, tool]` of the other servers, for references to their tools.
    #[serde(default)]
    other_tools: Vec<(String, String)>,
}

/// Reviews one listing off the JS thread (a large server's review takes milliseconds), on the
/// runtime's thread pool: reviews of several servers run side by side there. A listing is not
/// split over fresh threads: each would start with cold rule automata (a split of the 11,790
/// catalog tools over two new threads, each with its own scan context, took 2.7× as long as
/// one warm thread).
pub struct ReviewTask {
    request_json: String,
}

impl Task for ReviewTask {
    type Output = String;
    type JsValue = String;

    fn compute(&mut self) -> Result<Self::Output> {
        review(&self.request_json)
    }

    fn resolve(&mut self, _env: Env, output: Self::Output) -> Result<Self::JsValue> {
        Ok(output)
    }
}

/// Resolves to `{ tools: [{ name, digest, form, shown, hidden, findings, level }],
/// instructions?: { digest, shown, hidden, findings, level }, unchanged?, changes? }` for a
/// request `{ tools, pins?, instructions?, pinnedInstructions?, server, otherTools? }` (JSON both
/// ways); `unchanged` and `changes` only with pins.
#[napi(ts_return_type = "Promise<string>")]
pub fn trust_review(request_json: String) -> AsyncTask<ReviewTask> {
    AsyncTask::new(ReviewTask { request_json })
}

fn review(request_json: &str) -> Result<String> {
    let request: ReviewRequest = serde_json::from_str(request_json).map_err(|e| {
        js_error(ToolregError::invalid(
            "trust review",
            format!("not a review request: {e}"),
        ))
    })?;
    let context = ScanContext::new(request.server, request.other_tools);
    let tools: Vec<Value> = request
        .tools
        .iter()
        .map(|tool| reviewed_tool(tool, &context))
        .collect();
    let mut answer = json!({ "tools": tools });
    if let Some(text) = &request.instructions {
        let stripped = strip_hidden(text);
        let findings = scan_instructions(text, &context);
        answer["instructions"] = json!({
            "digest": instructions_digest(text),
            "shown": stripped.text,
            "hidden": stripped.removed.len(),
            "level": worst_level(&findings).map(level_name),
            "findings": findings.iter().map(finding_json).collect::<Vec<_>>(),
        });
    }
    if let Some(pins) = request.pins {
        // Instructions never pinned (a store from before they were, or a server first seen
        // without pins for them) are compared with themselves: no change.
        let pinned_instructions = match request.pinned_instructions {
            Some(pinned) => pinned,
            None => request.instructions.clone(),
        };
        let pinned = PinnedServer {
            tools: pins,
            instructions: pinned_instructions,
        };
        let comparison = compare(&pinned, &request.tools, request.instructions.as_deref())
            .map_err(|e| {
                js_error(ToolregError::invalid(
                    "the server's tool list",
                    e.to_string(),
                ))
            })?;
        answer["unchanged"] = json!(comparison.unchanged);
        answer["changes"] = comparison.changes.iter().map(change_json).collect();
    }
    Ok(answer.to_string())
}

/// One tool's review: digest and pinned form, the form the model may see, the findings.
fn reviewed_tool(tool: &Value, context: &ScanContext) -> Value {
    let stripped = strip_tool(tool);
    let findings = scan_tool(tool, context);
    json!({
        "name": tool.get("name"),
        "digest": digest(tool),
        "form": pinned_form(tool),
        "shown": stripped.tool,
        "hidden": stripped.removed.len(),
        "level": worst_level(&findings).map(level_name),
        "findings": findings.iter().map(finding_json).collect::<Vec<_>>(),
    })
}

fn level_name(level: Level) -> &'static str {
    match level {
        Level::Block => "block",
        Level::Warn => "warn",
    }
}

fn finding_json(finding: &Finding) -> Value {
    json!({
        "level": level_name(finding.level),
        "rule": finding.rule,
        "field": finding.field,
        "excerpt": finding.excerpt,
        "explanation": finding.explanation,
    })
}

fn change_json(change: &Change) -> Value {
    let sentence = change.describe();
    match change {
        Change::Added { name } => json!({ "kind": "added", "name": name, "sentence": sentence }),
        Change::Removed { name } => {
            json!({ "kind": "removed", "name": name, "sentence": sentence })
        }
        Change::Renamed { from, to } => {
            json!({ "kind": "renamed", "name": to, "from": from, "sentence": sentence })
        }
        Change::Changed { name, fields } => json!({
            "kind": "changed",
            "name": name,
            "sentence": sentence,
            "fields": fields.iter().map(|f| json!({ "pointer": f.pointer, "before": f.before, "after": f.after })).collect::<Vec<_>>(),
        }),
        Change::InstructionsChanged { .. } => {
            json!({ "kind": "instructions", "sentence": sentence })
        }
    }
}
