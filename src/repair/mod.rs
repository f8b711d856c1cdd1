//! Tool-call repair without a model: a call with an unknown tool name or arguments that do not
//! match the tool's schema is fixed locally when the fix is plain, and refused otherwise.
//!
//! The pass, in order: resolve the tool name against the tools of this call ([`names`]); read
//! the arguments leniently ([`lenient`]); unwrap double-encoded JSON and a lone envelope
//! (`{"arguments": {...}}`, `{"name": ..., "arguments": {...}}`); coerce values towards the
//! schema ([`coerce`]). The result is returned only if it validates against the tool's compiled
//! schema; every way of giving up is a typed [`GiveUp`].

pub mod coerce;
pub mod lenient;
pub mod names;

use std::fmt;
use std::sync::OnceLock;

use serde_json::Value;

use crate::schema::{CompiledSchema, ValidationIssue, format_issues};
use coerce::Coercion;
use lenient::{Leniency, LenientError, read_lenient};
use names::{NameCandidate, NameError, NameKeys, NameRule, resolve_tool_name, resolve_with_keys};

/// Keys a model wraps the arguments in; unwrapped when the schema has no such property.
const ENVELOPE_KEYS: [&str; 5] = ["arguments", "parameters", "input", "args", "params"];
/// Keys that carry the tool's name beside an envelope (`{"name": "x", "arguments": {...}}`).
const NAME_KEYS: [&str; 3] = ["name", "tool", "tool_name"];
/// How many layers of string encoding or envelopes are peeled off.
const MAX_UNWRAP: usize = 3;
/// Arguments nested deeper than this are refused before validation: real tool arguments are
/// shallow, and validating a deep value against a recursive `anyOf` schema (an MCP server's
/// schema is untrusted) takes time and memory exponential in the depth.
pub const MAX_INPUT_DEPTH: usize = 16;

/// One tool of this call: its name, whether it needs approval, and its input schema.
#[derive(Debug)]
pub struct RepairTool {
    name: String,
    needs_approval: bool,
    schema: Value,
    compiled: OnceLock<Result<CompiledSchema, String>>,
}

impl RepairTool {
    /// A tool; its schema is compiled on first use.
    pub fn new(name: impl Into<String>, schema: Value, needs_approval: bool) -> Self {
        RepairTool {
            name: name.into(),
            needs_approval,
            schema,
            compiled: OnceLock::new(),
        }
    }

    /// The tool's wire name.
    pub fn name(&self) -> &str {
        &self.name
    }

    fn compiled(&self) -> Result<&CompiledSchema, GiveUp> {
        self.compiled
            .get_or_init(|| CompiledSchema::compile(&self.schema).map_err(|e| e.to_string()))
            .as_ref()
            .map_err(|reason| GiveUp::SchemaUnusable {
                tool: self.name.clone(),
                reason: reason.clone(),
            })
    }

    /// Checks `input` against the tool's schema (no defaults filled in).
    pub fn validate(&self, input: &Value) -> Result<(), GiveUp> {
        check_depth(input)?;
        self.compiled()?
            .validate(input)
            .map_err(|issues| self.still_invalid(&issues))
    }

    fn still_invalid(&self, issues: &[ValidationIssue]) -> GiveUp {
        GiveUp::StillInvalid {
            tool: self.name.clone(),
            issues: format_issues(issues),
        }
    }

    fn has_property(&self, key: &str) -> bool {
        let (root, _) = crate::schema::deref(&self.schema, &self.schema);
        root.get("properties")
            .and_then(Value::as_object)
            .is_some_and(|p| p.contains_key(key))
    }
}

/// What the local pass did, step by step.
#[derive(Debug, Clone, PartialEq)]
pub enum RepairStep {
    /// The tool name was resolved to another tool of this call.
    Name {
        from: String,
        to: String,
        rule: NameRule,
    },
    /// The JSON reader forgave this.
    Json(Leniency),
    /// The arguments were a JSON string holding the JSON.
    DoubleEncoded,
    /// The arguments sat in an envelope under this key.
    Envelope { key: String },
    /// A value was coerced towards the schema.
    Coerced(Coercion),
}

impl fmt::Display for RepairStep {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RepairStep::Name { from, to, rule } => write!(f, "name:{rule} {from} -> {to}"),
            RepairStep::Json(leniency) => write!(f, "json:{leniency}"),
            RepairStep::DoubleEncoded => f.write_str("unwrap:double-encoded"),
            RepairStep::Envelope { key } => write!(f, "unwrap:envelope {key}"),
            RepairStep::Coerced(coercion) => write!(f, "coerce:{coercion}"),
        }
    }
}

/// A repaired call: the tool to run, its validated input, and the steps that got there.
#[derive(Debug, Clone, PartialEq)]
pub struct Repaired {
    pub tool_name: String,
    pub input: Value,
    pub steps: Vec<RepairStep>,
}

/// Why the local pass gave up.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum GiveUp {
    #[error(transparent)]
    Name(#[from] NameError),
    #[error("the arguments cannot be read as JSON: {0}")]
    Unreadable(#[from] LenientError),
    #[error("the schema of {tool:?} cannot check a repair: {reason}")]
    SchemaUnusable { tool: String, reason: String },
    #[error(
        "the arguments for {tool:?} still do not match its schema after local repair:\n{issues}"
    )]
    StillInvalid { tool: String, issues: String },
    #[error("the arguments for {tool:?} already match its schema; there is nothing to repair")]
    NothingToRepair { tool: String },
    #[error("the arguments nest deeper than {limit} levels")]
    TooDeep { limit: usize },
}

impl GiveUp {
    /// Stable kebab-case name, used in repair reports.
    pub fn code(&self) -> &'static str {
        match self {
            GiveUp::Name(NameError::NotFound { .. }) => "unknown-tool",
            GiveUp::Name(NameError::Ambiguous { .. }) => "ambiguous-tool",
            GiveUp::Name(NameError::ApprovalGated { .. }) => "approval-gated",
            GiveUp::Unreadable(_) => "unreadable",
            GiveUp::SchemaUnusable { .. } => "schema-unusable",
            GiveUp::StillInvalid { .. } => "still-invalid",
            GiveUp::NothingToRepair { .. } => "nothing-to-repair",
            GiveUp::TooDeep { .. } => "too-deep",
        }
    }
}

/// A failed local repair: why, and the tool the name resolved to (if it did), so a model
/// repair can take over with the right schema.
#[derive(Debug, Clone, PartialEq)]
pub struct RepairFailure {
    pub resolved_tool: Option<String>,
    /// What was tried before giving up (the name resolution among it).
    pub steps: Vec<RepairStep>,
    pub reason: GiveUp,
}

impl fmt::Display for RepairFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.reason.fmt(f)
    }
}

/// The tools of one call, ready to repair calls against.
#[derive(Debug, Default)]
pub struct RepairToolset {
    tools: Vec<RepairTool>,
    keys: NameKeys,
}

impl RepairToolset {
    pub fn new(tools: Vec<RepairTool>) -> Self {
        let mut set = RepairToolset {
            tools,
            keys: NameKeys::default(),
        };
        set.keys = NameKeys::new(&set.candidates());
        set
    }

    fn candidates(&self) -> Vec<NameCandidate<'_>> {
        self.tools
            .iter()
            .map(|t| NameCandidate {
                name: &t.name,
                needs_approval: t.needs_approval,
            })
            .collect()
    }

    /// The tool `requested` resolves to, and how.
    pub fn resolve(&self, requested: &str) -> Result<(&RepairTool, NameRule), NameError> {
        resolve_with_keys(requested, &self.candidates(), &self.keys)
            .map(|(i, rule)| (&self.tools[i], rule))
    }

    /// Repairs a call to `tool_name` with the raw argument text `input`.
    pub fn repair(&self, tool_name: &str, input: &str) -> Result<Repaired, RepairFailure> {
        let (tool, rule) = self.resolve(tool_name).map_err(|e| RepairFailure {
            resolved_tool: None,
            steps: Vec::new(),
            reason: e.into(),
        })?;
        let mut steps = Vec::new();
        if rule != NameRule::Exact {
            steps.push(RepairStep::Name {
                from: tool_name.to_owned(),
                to: tool.name.clone(),
                rule,
            });
        }
        let resolved_tool = Some(tool.name.clone());
        let input = match repair_input(tool, input, &mut steps) {
            Ok(input) if !steps.is_empty() => input,
            Ok(_) => {
                return Err(RepairFailure {
                    resolved_tool,
                    steps,
                    reason: GiveUp::NothingToRepair {
                        tool: tool.name.clone(),
                    },
                });
            }
            Err(reason) => {
                return Err(RepairFailure {
                    resolved_tool,
                    steps,
                    reason,
                });
            }
        };
        Ok(Repaired {
            tool_name: tool.name.clone(),
            input,
            steps,
        })
    }
}

/// Reads, unwraps and coerces `text` for `tool`, and validates the result.
fn repair_input(
    tool: &RepairTool,
    text: &str,
    steps: &mut Vec<RepairStep>,
) -> Result<Value, GiveUp> {
    let compiled = tool.compiled()?;
    // The AI SDK reads empty arguments as `{}`.
    let mut value = if text.trim().is_empty() {
        Value::Object(Default::default())
    } else {
        let read = read_lenient(text)?;
        steps.extend(read.fixes.into_iter().map(RepairStep::Json));
        read.value
    };
    check_depth(&value)?;
    if compiled.validate(&value).is_ok() {
        return Ok(value);
    }
    for _ in 0..MAX_UNWRAP {
        if !unwrap_once(tool, &mut value, steps) {
            break;
        }
    }
    check_depth(&value)?;
    if compiled.validate(&value).is_ok() {
        return Ok(value);
    }
    steps.extend(
        coerce::coerce(&tool.schema, &mut value)
            .into_iter()
            .map(RepairStep::Coerced),
    );
    check_depth(&value)?;
    compiled
        .validate(&value)
        .map_err(|issues| tool.still_invalid(&issues))?;
    Ok(value)
}

fn check_depth(value: &Value) -> Result<(), GiveUp> {
    fn deeper_than(value: &Value, limit: usize) -> bool {
        match value {
            Value::Array(items) => limit == 0 || items.iter().any(|v| deeper_than(v, limit - 1)),
            Value::Object(members) => {
                limit == 0 || members.values().any(|v| deeper_than(v, limit - 1))
            }
            _ => false,
        }
    }
    if deeper_than(value, MAX_INPUT_DEPTH) {
        return Err(GiveUp::TooDeep {
            limit: MAX_INPUT_DEPTH,
        });
    }
    Ok(())
}

/// Peels one layer: a JSON string holding an object or array, or an envelope around the
/// arguments. Returns whether it did.
fn unwrap_once(tool: &RepairTool, value: &mut Value, steps: &mut Vec<RepairStep>) -> bool {
    match value {
        Value::String(text) => {
            let Ok(read) = read_lenient(text) else {
                return false;
            };
            if !(read.value.is_object() || read.value.is_array()) {
                return false;
            }
            steps.push(RepairStep::DoubleEncoded);
            steps.extend(read.fixes.into_iter().map(RepairStep::Json));
            *value = read.value;
            true
        }
        Value::Object(members) => {
            let envelope = members.keys().find(|k| ENVELOPE_KEYS.contains(&k.as_str()));
            let Some(key) = envelope.cloned() else {
                return false;
            };
            let others_name_this_tool = members.iter().filter(|(k, _)| **k != key).all(|(k, v)| {
                NAME_KEYS.contains(&k.as_str()) && v.as_str().is_some_and(|n| names_tool(tool, n))
            });
            let inner_is_arguments = matches!(members[&key], Value::Object(_) | Value::String(_));
            if !others_name_this_tool || !inner_is_arguments || tool.has_property(&key) {
                return false;
            }
            if let Value::String(text) = &members[&key] {
                match read_lenient(text) {
                    Ok(read) if read.value.is_object() => {}
                    _ => return false,
                }
            }
            *value = members.remove(&key).expect("key found above");
            steps.push(RepairStep::Envelope { key });
            true
        }
        _ => false,
    }
}

/// `name` names `tool`, exactly or up to case, separators and prefixes.
fn names_tool(tool: &RepairTool, name: &str) -> bool {
    let candidate = [NameCandidate {
        name: &tool.name,
        needs_approval: false,
    }];
    matches!(
        resolve_tool_name(name, &candidate),
        Ok((
            _,
            NameRule::Exact | NameRule::CaseOrSeparator | NameRule::Prefix
        ))
    )
}

#[cfg(test)]
mod tests;
