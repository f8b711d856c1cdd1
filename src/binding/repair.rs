//! The native half of tool-call repair: the tools of one call, and the local repair pass over
//! them. Calls take microseconds (schemas compile once per toolset), so they run on the JS
//! thread.

use napi::bindgen_prelude::*;
use napi_derive::napi;

use super::{js_error, parse_json};
use crate::error::ToolregError;
use crate::repair::{RepairTool, RepairToolset};

/// One tool of the call, as the JS layer reads it from the AI SDK `ToolSet`.
#[napi(object)]
pub struct NativeRepairTool {
    pub name: String,
    /// The tool's JSON Schema (`asSchema(tool.inputSchema).jsonSchema`), as JSON text.
    pub schema_json: String,
    /// The tool has `needsApproval` set: only its exact name reaches it.
    pub needs_approval: bool,
}

/// What the local pass made of a call.
#[napi(object)]
pub struct NativeRepairOutcome {
    /// The tool the name resolved to (also set when the arguments could not be repaired).
    pub tool_name: Option<String>,
    /// The repaired arguments as JSON text; absent when the pass gave up.
    pub input_json: Option<String>,
    /// What was done (or tried, when it gave up), e.g. `name:prefix edit_file -> mcp__fs__edit_file`, `json:trailing-comma`.
    pub steps: Vec<String>,
    /// Why it gave up: `unknown-tool`, `ambiguous-tool`, `approval-gated`, `unreadable`,
    /// `schema-unusable`, `still-invalid`, `nothing-to-repair` or `too-deep`.
    pub reason: Option<String>,
    /// The reason in words (with the remaining validation issues for `still-invalid`).
    pub message: Option<String>,
}

#[napi]
pub struct NativeRepairToolset {
    inner: RepairToolset,
}

#[napi]
impl NativeRepairToolset {
    #[napi(constructor)]
    pub fn new(tools: Vec<NativeRepairTool>) -> Result<Self> {
        let tools = tools
            .into_iter()
            .map(|t| {
                let schema = parse_json("inputSchema", &t.schema_json)?;
                Ok(RepairTool::new(t.name, schema, t.needs_approval))
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(NativeRepairToolset {
            inner: RepairToolset::new(tools),
        })
    }

    /// Runs the local pass over a call to `tool_name` with raw argument text `input`.
    #[napi]
    pub fn repair(&self, tool_name: String, input: String) -> NativeRepairOutcome {
        match self.inner.repair(&tool_name, &input) {
            Ok(repaired) => NativeRepairOutcome {
                tool_name: Some(repaired.tool_name),
                input_json: Some(repaired.input.to_string()),
                steps: repaired.steps.iter().map(ToString::to_string).collect(),
                reason: None,
                message: None,
            },
            Err(failure) => NativeRepairOutcome {
                tool_name: failure.resolved_tool,
                input_json: None,
                steps: failure.steps.iter().map(ToString::to_string).collect(),
                reason: Some(failure.reason.code().to_owned()),
                message: Some(failure.reason.to_string()),
            },
        }
    }

    /// Checks `input_json` against the schema of the tool named exactly `tool_name`: `null`
    /// when it matches, else the issues in words.
    #[napi]
    pub fn validate(&self, tool_name: String, input_json: String) -> Result<Option<String>> {
        let (tool, _) = self
            .inner
            .resolve(&tool_name)
            .ok()
            .filter(|(tool, _)| tool.name() == tool_name)
            .ok_or_else(|| js_error(ToolregError::UnknownTool { name: tool_name }))?;
        let input = parse_json("input", &input_json)?;
        Ok(tool.validate(&input).err().map(|e| e.to_string()))
    }
}
