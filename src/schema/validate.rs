//! Compiled JSON Schema validators for `tool_invoke`, with errors a model can act on.
//!
//! Built on `jsonschema` without default features (no HTTP client, no file access) and with a
//! retriever that refuses everything, so a hostile `$ref` can neither reach the network nor the
//! disk: it fails compilation with [`SchemaError::ExternalRef`] and the caller decides whether to
//! run the tool unvalidated.

use std::collections::HashSet;
use std::fmt;

use jsonschema::error::ValidationErrorKind;
use jsonschema::{Draft, ReferencingError, ValidationError};
use serde_json::Value;

use super::{deref, is_identifier, resolve_local_ref, work};

/// `format_issues` lists at most this many issues; the model fixes the first few and retries.
pub const MAX_LISTED_ISSUES: usize = 10;
/// Deeper schemas are refused: real tool schemas are shallow, and compiling is recursive.
const MAX_SCHEMA_DEPTH: usize = 128;
/// Bound on `apply_defaults` recursion (instance depth plus `$ref`/`allOf` hops).
const MAX_DEFAULTS_DEPTH: usize = 64;
/// One issue's message is capped so a huge argument cannot flood the model's context.
const MAX_MESSAGE_CHARS: usize = 300;
/// An offending value longer than this is shortened inside the message.
const MAX_INSTANCE_CHARS: usize = 80;

/// A tool's input schema, compiled once (at registration) and reused for every call.
#[derive(Debug)]
pub struct CompiledSchema {
    validator: jsonschema::Validator,
    /// Kept for `apply_defaults`, which walks `properties`/`default` itself.
    schema: Value,
    draft: Draft,
}

/// Why a tool schema could not be compiled. The message names the part of the schema at fault,
/// for the developer who registered the tool.
#[derive(Debug, thiserror::Error)]
pub enum SchemaError {
    /// The schema is not an object or boolean (e.g. a string or array).
    #[error("a JSON Schema must be an object or a boolean, got {found}")]
    NotASchema { found: &'static str },
    /// The schema nests deeper than we are willing to compile.
    #[error("the schema nests deeper than {limit} levels")]
    TooDeep { limit: usize },
    /// The schema breaks its draft's meta-schema, e.g. `{"type": 12}` or a bad `pattern`.
    /// `location` is a JSON pointer into the schema (`/properties/limit/type`), or `(root)`.
    #[error("invalid schema at {location}: {message}")]
    Invalid { location: String, message: String },
    /// A `$ref` leaves the document (remote, file or relative URI). Never fetched.
    #[error(
        "$ref \"{reference}\" points outside this schema; remote and relative references are never \
         fetched, so inline the referenced schema under $defs and use \"#/$defs/...\""
    )]
    ExternalRef { reference: String },
    /// A local `$ref` points at nothing (missing `$defs` entry, unknown anchor, bad pointer).
    #[error("$ref \"{reference}\" cannot be resolved: {message}")]
    BrokenRef { reference: String, message: String },
    /// Anything else the compiler reported.
    #[error("the schema could not be compiled: {0}")]
    Other(String),
}

/// One reason an instance failed validation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ValidationIssue {
    /// JSON pointer into the instance: `/items/0/id`, or `""` for the root.
    pub path: String,
    /// What is wrong there, e.g. `"3" is not of type "integer"`.
    pub message: String,
}

impl ValidationIssue {
    /// The path as the model reads it: `$`, `$.limit`, `$.items[0].id`, `$["odd key"]`.
    ///
    /// All-digit segments render as indices; a pointer cannot tell them from an object key
    /// named "0", and for a hint to the model that ambiguity is harmless.
    pub fn display_path(&self) -> String {
        let mut out = String::from("$");
        if self.path.is_empty() {
            return out;
        }
        for raw in self.path.split('/').skip(1) {
            let segment = raw.replace("~1", "/").replace("~0", "~");
            if !segment.is_empty() && segment.bytes().all(|b| b.is_ascii_digit()) {
                out.push('[');
                out.push_str(&segment);
                out.push(']');
            } else if is_identifier(&segment) {
                out.push('.');
                out.push_str(&segment);
            } else {
                out.push('[');
                out.push_str(&Value::String(segment).to_string());
                out.push(']');
            }
        }
        out
    }
}

impl fmt::Display for ValidationIssue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "at {}: {}", self.display_path(), self.message)
    }
}

/// Renders issues one per line (`- at $.limit: "3" is not of type "integer"`), at most
/// [`MAX_LISTED_ISSUES`] of them followed by `(+N more)`.
pub fn format_issues(issues: &[ValidationIssue]) -> String {
    let mut lines: Vec<String> = issues
        .iter()
        .take(MAX_LISTED_ISSUES)
        .map(|issue| format!("- {issue}"))
        .collect();
    if issues.len() > MAX_LISTED_ISSUES {
        lines.push(format!("(+{} more)", issues.len() - MAX_LISTED_ISSUES));
    }
    lines.join("\n")
}

impl CompiledSchema {
    /// Compiles `schema`. The draft comes from `$schema`: 2020-12 when absent (draft-04 if the
    /// schema is only valid as draft-04); an unrecognised meta-schema URI falls back to the
    /// draft its URI names, else 2020-12, rather than failing.
    /// `format` is treated as an annotation under every draft, so validation does not depend on
    /// which draft a converter happened to emit; the tool still checks its own input.
    pub fn compile(schema: &Value) -> Result<Self, SchemaError> {
        match schema {
            Value::Object(_) | Value::Bool(_) => {}
            other => {
                return Err(SchemaError::NotASchema {
                    found: json_type_name(other),
                });
            }
        }
        if nesting_depth_exceeds(schema, MAX_SCHEMA_DEPTH) {
            return Err(SchemaError::TooDeep {
                limit: MAX_SCHEMA_DEPTH,
            });
        }
        let draft = pick_draft(schema);
        let validator = match build(schema, draft) {
            Ok(validator) => validator,
            // No `$schema` and not valid 2020-12: many servers still emit draft-04 idioms
            // (`"exclusiveMinimum": true`). Validating under draft-04 beats not validating.
            Err(err @ SchemaError::Invalid { .. }) if schema.get("$schema").is_none() => {
                match build(schema, Draft::Draft4) {
                    Ok(validator) => {
                        return Ok(Self {
                            validator,
                            schema: schema.clone(),
                            draft: Draft::Draft4,
                        });
                    }
                    Err(_) => return Err(err),
                }
            }
            Err(err) => return Err(err),
        };
        Ok(Self {
            validator,
            schema: schema.clone(),
            draft,
        })
    }

    /// The draft the schema was compiled under: `"2020-12"`, `"2019-09"`, `"draft-07"`, ...
    pub fn draft_name(&self) -> &'static str {
        match self.draft {
            Draft::Draft4 => "draft-04",
            Draft::Draft6 => "draft-06",
            Draft::Draft7 => "draft-07",
            Draft::Draft201909 => "2019-09",
            _ => "2020-12",
        }
    }

    /// Checks `instance`, returning every issue (deduplicated, in the validator's order).
    /// An instance whose check could take more than its allowance (see [`work`]) is refused
    /// with one issue saying so, before the validator starts.
    pub fn validate(&self, instance: &Value) -> Result<(), Vec<ValidationIssue>> {
        let allowance = work::step_allowance(instance);
        if work::exceeds(&self.schema, instance, allowance) {
            return Err(vec![ValidationIssue {
                path: String::new(),
                message: format!(
                    "the arguments nest too deeply for this tool's schema to be checked (over \
                     {allowance} schema checks: its unions try every branch at every level); \
                     send flatter arguments"
                ),
            }]);
        }
        if self.validator.is_valid(instance) {
            return Ok(());
        }
        let mut issues: Vec<ValidationIssue> = Vec::new();
        for error in self.validator.iter_errors(instance) {
            let issue = ValidationIssue {
                path: error.instance_path().as_str().to_owned(),
                message: describe_error(&error),
            };
            if !issues.contains(&issue) {
                issues.push(issue);
            }
        }
        if issues.is_empty() {
            return Ok(());
        }
        Err(issues)
    }

    /// Fills the `default` of every missing property, recursing into objects and array items
    /// that are present (and into defaults it just inserted, as ajv's `useDefaults` does).
    /// Given values are never overwritten. `allOf` branches all contribute; for `anyOf`/`oneOf`
    /// only the single branch whose `type`/`const`/`enum` admits the value does (so a nullable
    /// object gets its defaults, an ambiguous union gets none). This gives `jsonSchema()` tools
    /// the "parsed" params a Zod schema would produce.
    pub fn apply_defaults(&self, instance: &mut Value) {
        fill_defaults(&self.schema, &self.schema, instance, 0, &mut HashSet::new());
    }

    /// Convenience for `tool_invoke`: a copy of `instance` with defaults applied, if that copy
    /// validates. Defaults go in first so a required property with a default is satisfied.
    pub fn parse(&self, instance: &Value) -> Result<Value, Vec<ValidationIssue>> {
        let mut value = instance.clone();
        self.apply_defaults(&mut value);
        self.validate(&value)?;
        Ok(value)
    }
}

fn build(schema: &Value, draft: Draft) -> Result<jsonschema::Validator, SchemaError> {
    jsonschema::options()
        .with_draft(draft)
        .with_retriever(RefuseRetrieval)
        .should_validate_formats(false)
        .build(schema)
        .map_err(|err| schema_error(&err))
}

/// Refuses every retrieval: local `$ref`s never reach the retriever, so anything that does is
/// remote, relative or a file, and tool schemas are untrusted.
struct RefuseRetrieval;

impl jsonschema::Retrieve for RefuseRetrieval {
    fn retrieve(
        &self,
        uri: &jsonschema::Uri<String>,
    ) -> Result<Value, Box<dyn std::error::Error + Send + Sync>> {
        Err(format!("refusing to fetch {uri}: tool schemas must be self-contained").into())
    }
}

/// Draft from `$schema`; unknown URIs fall back instead of failing (compiling against a custom
/// meta-schema would need it fetched, which we never do).
fn pick_draft(schema: &Value) -> Draft {
    let Some(uri) = schema.get("$schema").and_then(Value::as_str) else {
        return Draft::Draft202012;
    };
    match Draft::default().detect(schema) {
        Draft::Unknown => {
            if uri.contains("draft-04") {
                Draft::Draft4
            } else if uri.contains("draft-06") {
                Draft::Draft6
            } else if uri.contains("draft-07") {
                Draft::Draft7
            } else if uri.contains("2019-09") {
                Draft::Draft201909
            } else {
                Draft::Draft202012
            }
        }
        known => known,
    }
}

fn schema_error(err: &ValidationError<'_>) -> SchemaError {
    if let ValidationErrorKind::Referencing(reference_error) = err.kind() {
        return match reference_error {
            ReferencingError::Unretrievable { uri, .. } => SchemaError::ExternalRef {
                reference: uri.clone(),
            },
            ReferencingError::PointerToNowhere { pointer } => SchemaError::BrokenRef {
                reference: format!("#{pointer}"),
                message: "nothing exists at that location in the schema".into(),
            },
            ReferencingError::NoSuchAnchor { anchor }
            | ReferencingError::InvalidAnchor { anchor } => SchemaError::BrokenRef {
                reference: format!("#{anchor}"),
                message: "no subschema declares this $anchor".into(),
            },
            ReferencingError::InvalidPercentEncoding { pointer, .. }
            | ReferencingError::InvalidArrayIndex { pointer, .. } => SchemaError::BrokenRef {
                reference: format!("#{pointer}"),
                message: reference_error.to_string(),
            },
            other => SchemaError::Other(other.to_string()),
        };
    }
    let location = match err.instance_path().as_str() {
        "" => "(root)".to_owned(),
        pointer => pointer.to_owned(),
    };
    let message = match err.kind() {
        ValidationErrorKind::Format { format } if format == "regex" => format!(
            "{} is not a valid regular expression",
            shorten(&err.instance().to_string(), MAX_INSTANCE_CHARS)
        ),
        _ => describe_error(err),
    };
    SchemaError::Invalid { location, message }
}

/// The library's message, with long values shortened and `anyOf`/`oneOf` failures explained
/// per branch (its bare "not valid under any of the schemas" gives the model nothing to fix).
fn describe_error(err: &ValidationError<'_>) -> String {
    let mut message = err.to_string();
    let instance = err.instance().to_string();
    if instance.chars().count() > MAX_INSTANCE_CHARS {
        message = message.replacen(&instance, &shorten(&instance, MAX_INSTANCE_CHARS), 1);
    }
    let branches = match err.kind() {
        ValidationErrorKind::AnyOf { context } | ValidationErrorKind::OneOfNotValid { context } => {
            Some(context)
        }
        _ => None,
    };
    if let Some(branches) = branches.filter(|b| !b.is_empty()) {
        let parent = err.instance_path().as_str();
        let mut parts: Vec<String> = branches
            .iter()
            .take(3)
            .enumerate()
            .filter_map(|(i, errors)| {
                let first = errors.first()?;
                let at = first.instance_path().as_str();
                let mut part = format!("option {}: ", i + 1);
                if at != parent {
                    let issue = ValidationIssue {
                        path: at.to_owned(),
                        message: String::new(),
                    };
                    part.push_str(&format!("at {}: ", issue.display_path()));
                }
                part.push_str(&shorten(&first.to_string(), 120));
                Some(part)
            })
            .collect();
        if branches.len() > 3 {
            parts.push(format!("{} more options", branches.len() - 3));
        }
        message = format!("{message} ({})", parts.join("; "));
    }
    shorten(&message, MAX_MESSAGE_CHARS)
}

fn shorten(text: &str, max_chars: usize) -> String {
    if text.chars().count() <= max_chars {
        return text.to_owned();
    }
    let mut out: String = text.chars().take(max_chars.saturating_sub(1)).collect();
    out.push('…');
    out
}

/// "a string", "an object", ...: for messages about a value of the wrong kind.
pub(crate) fn json_type_name(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// Iterative, so a hostile document cannot overflow the stack before we refuse it.
fn nesting_depth_exceeds(value: &Value, limit: usize) -> bool {
    let mut stack = vec![(value, 0usize)];
    while let Some((node, depth)) = stack.pop() {
        if depth > limit {
            return true;
        }
        match node {
            Value::Object(map) => stack.extend(map.values().map(|v| (v, depth + 1))),
            Value::Array(items) => stack.extend(items.iter().map(|v| (v, depth + 1))),
            _ => {}
        }
    }
    false
}

/// `applied` holds the schemas already applied to this instance node: applying one twice is a
/// no-op, and skipping repeats keeps `$ref`/`allOf` loops linear instead of exponential.
fn fill_defaults(
    root: &Value,
    schema: &Value,
    instance: &mut Value,
    depth: usize,
    applied: &mut HashSet<*const Value>,
) {
    if depth > MAX_DEFAULTS_DEPTH || !applied.insert(schema as *const Value) {
        return;
    }
    let Value::Object(keywords) = schema else {
        return;
    };
    // `$ref` target first, then the site's own keywords (2019-09+ allows siblings).
    if let Some(target) = keywords
        .get("$ref")
        .and_then(Value::as_str)
        .and_then(|r| resolve_local_ref(root, r))
    {
        fill_defaults(root, target, instance, depth + 1, applied);
    }
    if let Some(Value::Array(branches)) = keywords.get("allOf") {
        for branch in branches {
            fill_defaults(root, branch, instance, depth + 1, applied);
        }
    }
    for union in ["anyOf", "oneOf"] {
        if let Some(Value::Array(branches)) = keywords.get(union) {
            let mut admitting = branches.iter().filter(|b| admits(root, b, instance));
            if let (Some(only), None) = (admitting.next(), admitting.next()) {
                fill_defaults(root, only, instance, depth + 1, applied);
            }
        }
    }
    match instance {
        Value::Object(object) => {
            let Some(Value::Object(properties)) = keywords.get("properties") else {
                return;
            };
            for (name, property) in properties {
                if !object.contains_key(name)
                    && let Some(default) = default_of(root, property)
                {
                    object.insert(name.clone(), default.clone());
                }
                if let Some(child) = object.get_mut(name) {
                    fill_defaults(root, property, child, depth + 1, &mut HashSet::new());
                }
            }
        }
        Value::Array(items) => {
            // 2020-12 `prefixItems` + `items`; drafts up to 2019-09 use an `items` array.
            let (positional, rest) = match (keywords.get("prefixItems"), keywords.get("items")) {
                (Some(Value::Array(prefix)), rest) => (prefix.as_slice(), rest),
                (None, Some(Value::Array(tuple))) => (tuple.as_slice(), None),
                (_, rest) => (&[][..], rest),
            };
            for (index, item) in items.iter_mut().enumerate() {
                let item_schema = positional.get(index).or(rest.filter(|s| !s.is_array()));
                if let Some(item_schema) = item_schema {
                    fill_defaults(root, item_schema, item, depth + 1, &mut HashSet::new());
                }
            }
        }
        _ => {}
    }
}

/// The `default` at a property site, else at its (local) `$ref` target.
fn default_of<'a>(root: &'a Value, property: &'a Value) -> Option<&'a Value> {
    property
        .get("default")
        .or_else(|| deref(root, property).0.get("default"))
}

/// Cheap pre-check used to pick a union branch for defaults: does the branch's `type`, `const`
/// or `enum` admit `instance`? Branches that say nothing admit everything.
fn admits(root: &Value, branch: &Value, instance: &Value) -> bool {
    let (branch, _) = deref(root, branch);
    let Value::Object(keywords) = branch else {
        return branch.as_bool().unwrap_or(true);
    };
    if let Some(expected) = keywords.get("const") {
        return expected == instance;
    }
    if let Some(Value::Array(options)) = keywords.get("enum") {
        return options.contains(instance);
    }
    let type_matches = |name: &str| match name {
        "object" => instance.is_object(),
        "array" => instance.is_array(),
        "string" => instance.is_string(),
        "boolean" => instance.is_boolean(),
        "null" => instance.is_null(),
        "number" => instance.is_number(),
        "integer" => {
            instance.is_i64()
                || instance.is_u64()
                || instance.as_f64().is_some_and(|f| f.fract() == 0.0)
        }
        _ => false,
    };
    match keywords.get("type") {
        Some(Value::String(name)) => type_matches(name),
        Some(Value::Array(names)) => names.iter().filter_map(Value::as_str).any(type_matches),
        _ => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn issues(schema: Value, instance: Value) -> Vec<ValidationIssue> {
        CompiledSchema::compile(&schema)
            .expect("schema compiles")
            .validate(&instance)
            .expect_err("instance should be invalid")
    }

    fn rendered(schema: Value, instance: Value) -> String {
        format_issues(&issues(schema, instance))
    }

    #[test]
    fn deep_arguments_under_a_recursive_union_are_refused_before_validating() {
        // 3 branches ^ 16 levels: minutes of validating without the allowance.
        let schema = json!({"$defs": {"n": {"anyOf": [
            {"type": "array", "items": {"$ref": "#/$defs/n"}},
            {"type": "array", "items": {"$ref": "#/$defs/n"}, "minItems": 1},
            {"type": "array", "items": {"$ref": "#/$defs/n"}, "maxItems": 3}
        ]}}, "$ref": "#/$defs/n"});
        let deep = (0..16).fold(json!("leaf"), |v, _| json!([v]));
        let text = rendered(schema.clone(), deep);
        assert!(text.contains("nest too deeply"), "{text}");
        let shallow = (0..3).fold(json!([]), |v, _| json!([v]));
        let compiled = CompiledSchema::compile(&schema).unwrap();
        assert!(compiled.validate(&shallow).is_ok());
    }

    #[test]
    fn compiled_schema_is_send_and_sync() {
        fn assert_send_sync<T: Send + Sync>() {}
        assert_send_sync::<CompiledSchema>();
        assert_send_sync::<SchemaError>();
    }

    #[test]
    fn type_errors_carry_paths() {
        let schema = json!({
            "type": "object",
            "properties": {"limit": {"type": "integer"}, "query": {"type": "string"}}
        });
        let out = rendered(schema.clone(), json!({"limit": "3", "query": 5}));
        assert!(
            out.contains(r#"- at $.limit: "3" is not of type "integer""#),
            "{out}"
        );
        assert!(
            out.contains(r#"- at $.query: 5 is not of type "string""#),
            "{out}"
        );
        let compiled = CompiledSchema::compile(&schema).unwrap();
        assert!(
            compiled
                .validate(&json!({"limit": 3, "query": "x"}))
                .is_ok()
        );
        let found = issues(schema, json!({"limit": 1.5}));
        assert_eq!(found[0].path, "/limit");
    }

    #[test]
    fn root_type_error_renders_dollar() {
        let out = rendered(json!({"type": "object"}), json!([1, 2]));
        assert_eq!(out, r#"- at $: [1,2] is not of type "object""#);
    }

    #[test]
    fn required_missing() {
        let out = rendered(
            json!({"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]}),
            json!({}),
        );
        assert_eq!(out, r#"- at $: "query" is a required property"#);
    }

    #[test]
    fn additional_properties_false() {
        let out = rendered(
            json!({"type": "object", "properties": {"a": {}}, "additionalProperties": false}),
            json!({"a": 1, "extra": 2}),
        );
        assert!(
            out.contains("Additional properties are not allowed ('extra' was unexpected)"),
            "{out}"
        );
    }

    #[test]
    fn enum_violation() {
        let out = rendered(
            json!({"type": "object", "properties": {"mode": {"enum": ["fast", "slow"]}}}),
            json!({"mode": "medium"}),
        );
        assert!(out.starts_with("- at $.mode: \"medium\""), "{out}");
        assert!(out.contains("fast") && out.contains("slow"), "{out}");
    }

    #[test]
    fn nested_arrays_report_indexed_paths() {
        let schema = json!({
            "type": "object",
            "properties": {
                "items": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "properties": {
                            "id": {"type": "string"},
                            "tags": {"type": "array", "items": {"type": "string"}}
                        },
                        "required": ["id"]
                    }
                }
            }
        });
        let found = issues(
            schema,
            json!({"items": [{"id": "a"}, {"id": 1, "tags": ["x", 2]}, {}]}),
        );
        let paths: Vec<String> = found.iter().map(ValidationIssue::display_path).collect();
        assert!(paths.contains(&"$.items[1].id".to_owned()), "{paths:?}");
        assert!(
            paths.contains(&"$.items[1].tags[1]".to_owned()),
            "{paths:?}"
        );
        assert!(paths.contains(&"$.items[2]".to_owned()), "{paths:?}");
        assert_eq!(found.len(), 3);
    }

    #[test]
    fn display_path_quotes_odd_keys() {
        let issue = ValidationIssue {
            path: "/a b/x~1y/0/ok_1".into(),
            message: "m".into(),
        };
        assert_eq!(issue.display_path(), r#"$["a b"]["x/y"][0].ok_1"#);
        assert_eq!(issue.to_string(), r#"at $["a b"]["x/y"][0].ok_1: m"#);
    }

    #[test]
    fn unevaluated_properties_2020_12() {
        let schema = json!({
            "type": "object",
            "allOf": [{"properties": {"a": {"type": "string"}}}],
            "properties": {"b": {"type": "number"}},
            "unevaluatedProperties": false
        });
        let compiled = CompiledSchema::compile(&schema).unwrap();
        assert_eq!(compiled.draft_name(), "2020-12");
        assert!(compiled.validate(&json!({"a": "x", "b": 1})).is_ok());
        let out = format_issues(&compiled.validate(&json!({"a": "x", "c": 1})).unwrap_err());
        assert!(
            out.contains("Unevaluated properties are not allowed ('c' was unexpected)"),
            "{out}"
        );
    }

    #[test]
    fn unique_items_and_contains() {
        let schema = json!({
            "type": "object",
            "properties": {
                "ids": {"type": "array", "uniqueItems": true},
                "roles": {"type": "array", "contains": {"const": "admin"}}
            }
        });
        let out = rendered(schema, json!({"ids": [1, 2, 1], "roles": ["user"]}));
        assert!(
            out.contains("- at $.ids: [1,2,1] has non-unique elements"),
            "{out}"
        );
        assert!(
            out.contains("- at $.roles: None of [\"user\"] are valid"),
            "{out}"
        );
    }

    #[test]
    fn draft_07_via_dollar_schema() {
        // Draft-07 tuple `items` + `additionalItems`, which 2020-12 would read differently.
        let schema = json!({
            "$schema": "http://json-schema.org/draft-07/schema#",
            "type": "object",
            "properties": {
                "pair": {"type": "array", "items": [{"type": "string"}, {"type": "number"}], "additionalItems": false}
            }
        });
        let compiled = CompiledSchema::compile(&schema).unwrap();
        assert_eq!(compiled.draft_name(), "draft-07");
        assert!(compiled.validate(&json!({"pair": ["a", 1]})).is_ok());
        let out = format_issues(
            &compiled
                .validate(&json!({"pair": [1, 1, true]}))
                .unwrap_err(),
        );
        assert!(
            out.contains("- at $.pair[0]: 1 is not of type \"string\""),
            "{out}"
        );
        assert!(out.contains("Additional items are not allowed"), "{out}");
    }

    #[test]
    fn unknown_meta_schema_falls_back_instead_of_fetching() {
        let custom = json!({"$schema": "https://example.com/my-meta", "properties": {"a": {"type": "integer"}}});
        let compiled = CompiledSchema::compile(&custom).unwrap();
        assert_eq!(compiled.draft_name(), "2020-12");
        assert!(compiled.validate(&json!({"a": "x"})).is_err());
        let named = json!({"$schema": "https://example.com/draft-07/schema", "type": "object"});
        assert_eq!(
            CompiledSchema::compile(&named).unwrap().draft_name(),
            "draft-07"
        );
    }

    #[test]
    fn draft_04_idioms_without_dollar_schema_fall_back_to_draft_04() {
        let schema = json!({"properties": {"n": {"type": "number", "minimum": 0, "exclusiveMinimum": true}}});
        let compiled = CompiledSchema::compile(&schema).unwrap();
        assert_eq!(compiled.draft_name(), "draft-04");
        assert!(compiled.validate(&json!({"n": 1})).is_ok());
        let out = format_issues(&compiled.validate(&json!({"n": 0})).unwrap_err());
        assert_eq!(out, "- at $.n: 0 is less than or equal to the minimum of 0");
        // With an explicit `$schema` there is no second guess.
        let explicit = json!({"$schema": "https://json-schema.org/draft/2020-12/schema", "properties": {"n": {"exclusiveMinimum": true}}});
        assert!(matches!(
            CompiledSchema::compile(&explicit),
            Err(SchemaError::Invalid { .. })
        ));
    }

    #[test]
    fn schema_without_type_but_with_properties() {
        let schema = json!({"properties": {"n": {"type": "number"}}, "required": ["n"]});
        let compiled = CompiledSchema::compile(&schema).unwrap();
        assert!(compiled.validate(&json!({"n": 1})).is_ok());
        // Without `type`, non-objects pass `properties`/`required`: standard semantics.
        assert!(compiled.validate(&json!("text")).is_ok());
        let out = format_issues(&compiled.validate(&json!({"n": "1"})).unwrap_err());
        assert_eq!(out, r#"- at $.n: "1" is not of type "number""#);
    }

    #[test]
    fn defaults_fill_missing_nested_and_keep_given_values() {
        let schema = json!({
            "type": "object",
            "properties": {
                "limit": {"type": "integer", "default": 10},
                "query": {"type": "string"},
                "opts": {
                    "type": "object",
                    "properties": {
                        "sort": {"type": "string", "default": "asc"},
                        "deep": {"type": "object", "properties": {"x": {"default": 1}}}
                    }
                },
                "items": {
                    "type": "array",
                    "items": {"type": "object", "properties": {"w": {"type": "number", "default": 1.5}}}
                },
                "withDefaultObject": {
                    "type": "object",
                    "default": {},
                    "properties": {"inner": {"type": "boolean", "default": true}}
                },
                "nullableObj": {
                    "anyOf": [
                        {"type": "object", "properties": {"k": {"default": "v"}}},
                        {"type": "null"}
                    ]
                },
                "ref": {"$ref": "#/$defs/withDefault"}
            },
            "$defs": {"withDefault": {"type": "string", "default": "from-ref"}}
        });
        let compiled = CompiledSchema::compile(&schema).unwrap();
        let mut value = json!({
            "limit": 3,
            "query": "q",
            "opts": {"deep": {}},
            "items": [{}, {"w": 2}],
            "nullableObj": {}
        });
        compiled.apply_defaults(&mut value);
        assert_eq!(
            value,
            json!({
                "limit": 3,
                "query": "q",
                "opts": {"sort": "asc", "deep": {"x": 1}},
                "items": [{"w": 1.5}, {"w": 2}],
                "withDefaultObject": {"inner": true},
                "nullableObj": {"k": "v"},
                "ref": "from-ref"
            })
        );
        // Absent optional objects without a default stay absent.
        let mut sparse = json!({});
        compiled.apply_defaults(&mut sparse);
        assert!(sparse.get("opts").is_none());
        assert_eq!(sparse["limit"], 10);
        // Non-object instances are left alone.
        let mut scalar = json!(5);
        compiled.apply_defaults(&mut scalar);
        assert_eq!(scalar, json!(5));
    }

    #[test]
    fn defaults_follow_allof_and_draft07_tuples() {
        let schema = json!({
            "$schema": "http://json-schema.org/draft-07/schema#",
            "allOf": [{"properties": {"a": {"default": 1}}}, {"properties": {"b": {"default": 2}}}],
            "properties": {"t": {"type": "array", "items": [{"type": "object", "properties": {"z": {"default": 0}}}]}}
        });
        let compiled = CompiledSchema::compile(&schema).unwrap();
        let mut value = json!({"t": [{}, {}]});
        compiled.apply_defaults(&mut value);
        assert_eq!(value, json!({"a": 1, "b": 2, "t": [{"z": 0}, {}]}));
    }

    #[test]
    fn defaults_terminate_on_recursive_refs() {
        let schema =
            json!({"$ref": "#", "properties": {"a": {"default": 1}}, "allOf": [{"$ref": "#"}]});
        // The validator itself may reject an infinitely recursive `$ref`; the walk must still end.
        let mut value = json!({});
        fill_defaults(&schema, &schema, &mut value, 0, &mut HashSet::new());
        assert_eq!(value, json!({"a": 1}));
    }

    #[test]
    fn parse_applies_defaults_then_validates() {
        let schema = json!({
            "type": "object",
            "properties": {"limit": {"type": "integer", "default": 10}, "q": {"type": "string"}},
            "required": ["q", "limit"],
            "additionalProperties": false
        });
        let compiled = CompiledSchema::compile(&schema).unwrap();
        assert_eq!(
            compiled.parse(&json!({"q": "x"})).unwrap(),
            json!({"q": "x", "limit": 10})
        );
        let err = compiled.parse(&json!({"q": 1})).unwrap_err();
        assert_eq!(err.len(), 1);
        assert_eq!(err[0].path, "/q");
    }

    #[test]
    fn bad_schemas_give_schema_errors() {
        let err = CompiledSchema::compile(&json!({"type": 12})).unwrap_err();
        let text = err.to_string();
        assert!(matches!(err, SchemaError::Invalid { .. }), "{err:?}");
        assert!(
            text.starts_with("invalid schema at /type: 12 is not valid"),
            "{text}"
        );
        assert!(text.contains("option 1"), "{text}");

        let err = CompiledSchema::compile(
            &json!({"properties": {"q": {"type": "string", "pattern": "(open"}}}),
        )
        .unwrap_err();
        assert_eq!(
            err.to_string(),
            r#"invalid schema at /properties/q/pattern: "(open" is not a valid regular expression"#
        );

        let err = CompiledSchema::compile(&json!({"required": "q"})).unwrap_err();
        assert_eq!(
            err.to_string(),
            r#"invalid schema at /required: "q" is not of type "array""#
        );

        let err = CompiledSchema::compile(&json!("string")).unwrap_err();
        assert_eq!(
            err.to_string(),
            "a JSON Schema must be an object or a boolean, got a string"
        );

        let err =
            CompiledSchema::compile(&json!({"properties": {"a": {"$ref": "#/$defs/missing"}}}))
                .unwrap_err();
        assert!(matches!(err, SchemaError::BrokenRef { .. }), "{err:?}");
        assert_eq!(
            err.to_string(),
            "$ref \"#/$defs/missing\" cannot be resolved: nothing exists at that location in the schema"
        );
    }

    #[test]
    fn boolean_schemas_compile() {
        assert!(
            CompiledSchema::compile(&json!(true))
                .unwrap()
                .validate(&json!(1))
                .is_ok()
        );
        let out = format_issues(
            &CompiledSchema::compile(&json!(false))
                .unwrap()
                .validate(&json!({}))
                .unwrap_err(),
        );
        assert_eq!(out, "- at $: False schema does not allow {}");
    }

    #[test]
    fn too_deep_schema_is_refused() {
        let mut schema = json!({"type": "string"});
        for _ in 0..(MAX_SCHEMA_DEPTH / 2 + 1) {
            schema = json!({"properties": {"x": schema}});
        }
        let err = CompiledSchema::compile(&schema).unwrap_err();
        assert!(matches!(err, SchemaError::TooDeep { .. }), "{err:?}");
    }

    #[test]
    fn remote_ref_is_never_fetched() {
        use std::net::TcpListener;
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        let port = listener.local_addr().unwrap().port();
        for uri in [
            format!("http://127.0.0.1:{port}/schema.json"),
            format!("https://127.0.0.1:{port}/schema.json#/$defs/x"),
        ] {
            let schema = json!({"type": "object", "properties": {"a": {"$ref": uri}}});
            let err = CompiledSchema::compile(&schema).unwrap_err();
            match &err {
                SchemaError::ExternalRef { reference } => {
                    assert!(reference.contains(&port.to_string()), "{reference}")
                }
                other => panic!("expected ExternalRef, got {other:?}"),
            }
            assert!(err.to_string().contains("never fetched"), "{err}");
        }
        // `$id` makes a relative `$ref` absolute; still refused, and files are refused too.
        let relative = json!({"$id": format!("http://127.0.0.1:{port}/root.json"), "properties": {"a": {"$ref": "other.json"}}});
        assert!(matches!(
            CompiledSchema::compile(&relative),
            Err(SchemaError::ExternalRef { .. })
        ));
        let file = json!({"properties": {"a": {"$ref": "file:///etc/hostname"}}});
        assert!(matches!(
            CompiledSchema::compile(&file),
            Err(SchemaError::ExternalRef { .. })
        ));
        match listener.accept() {
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
            Ok((_, peer)) => panic!("compile opened a connection from {peer}"),
            Err(e) => panic!("unexpected listener error {e}"),
        }
    }

    #[test]
    fn local_refs_and_defs_validate() {
        let schema = json!({
            "type": "object",
            "properties": {
                "user": {"$ref": "#/$defs/user"},
                "legacy": {"$ref": "#/definitions/id"},
                "tree": {"$ref": "#/$defs/node"}
            },
            "$defs": {
                "user": {"type": "object", "properties": {"id": {"$ref": "#/definitions/id"}}, "required": ["id"]},
                "node": {"type": "object", "properties": {"children": {"type": "array", "items": {"$ref": "#/$defs/node"}}, "v": {"type": "integer"}}}
            },
            "definitions": {"id": {"type": "string", "minLength": 1}}
        });
        let compiled = CompiledSchema::compile(&schema).unwrap();
        assert!(
            compiled
                .validate(
                    &json!({"user": {"id": "u1"}, "legacy": "x", "tree": {"children": [{"v": 1}]}})
                )
                .is_ok()
        );
        let out = format_issues(
            &compiled
                .validate(&json!({"user": {"id": ""}, "tree": {"children": [{"children": [{"v": "2"}]}]}}))
                .unwrap_err(),
        );
        assert!(
            out.contains(r#"- at $.user.id: "" is shorter than 1 character"#),
            "{out}"
        );
        assert!(
            out.contains(r#"- at $.tree.children[0].children[0].v: "2" is not of type "integer""#),
            "{out}"
        );
    }

    #[test]
    fn any_of_errors_explain_each_option() {
        let schema = json!({"type": "object", "properties": {"n": {"anyOf": [{"type": "integer"}, {"type": "null"}]}}});
        let out = rendered(schema, json!({"n": "3"}));
        assert!(
            out.contains(r#"option 1: "3" is not of type "integer""#),
            "{out}"
        );
        assert!(
            out.contains(r#"option 2: "3" is not of type "null""#),
            "{out}"
        );
    }

    #[test]
    fn long_values_are_shortened_and_issues_capped() {
        let long = "x".repeat(500);
        let out = rendered(
            json!({"properties": {"a": {"type": "integer"}}}),
            json!({"a": long}),
        );
        assert!(out.len() < 200, "{out}");
        assert!(
            out.contains('…') && out.ends_with(r#"is not of type "integer""#),
            "{out}"
        );

        let props: serde_json::Map<String, Value> = (0..15)
            .map(|i| (format!("p{i:02}"), json!({"type": "string"})))
            .collect();
        let instance: serde_json::Map<String, Value> =
            (0..15).map(|i| (format!("p{i:02}"), json!(i))).collect();
        let found = issues(json!({"properties": props}), Value::Object(instance));
        assert_eq!(found.len(), 15);
        let out = format_issues(&found);
        assert_eq!(out.lines().count(), MAX_LISTED_ISSUES + 1);
        assert!(out.ends_with("(+5 more)"), "{out}");
    }

    #[test]
    fn formats_are_annotations() {
        let schema = json!({"$schema": "http://json-schema.org/draft-07/schema#", "properties": {"u": {"type": "string", "format": "uri"}}});
        assert!(
            CompiledSchema::compile(&schema)
                .unwrap()
                .validate(&json!({"u": "not a uri"}))
                .is_ok()
        );
    }

    /// Shapes `asSchema(z.object(...)).jsonSchema` produces in AI SDK 5/6 for Zod 4:
    /// `z.toJSONSchema(s, { target: "draft-7", io: "input" })` plus
    /// `addAdditionalPropertiesToJsonSchema` (every object gets `additionalProperties: false`).
    #[test]
    fn zod4_via_ai_sdk_draft07_validates() {
        let schema = json!({
            "$schema": "http://json-schema.org/draft-07/schema#",
            "type": "object",
            "properties": {
                "query": {"type": "string", "minLength": 1, "description": "Search text"},
                "limit": {"type": "integer", "minimum": -9007199254740991i64, "maximum": 9007199254740991i64, "default": 10},
                "mode": {"type": "string", "enum": ["fast", "exact"]},
                "email": {"type": "string", "format": "email",
                          "pattern": "^(?!\\.)(?!.*\\.\\.)([A-Za-z0-9_'+\\-\\.]*)[A-Za-z0-9_+-]@([A-Za-z0-9][A-Za-z0-9\\-]*\\.)+[A-Za-z]{2,}$"},
                "when": {"type": "string", "format": "date-time",
                         "pattern": "^(?:(?:\\d\\d[2468][048]|\\d\\d[13579][26]|\\d\\d0[48]|[02468][048]00|[13579][26]00)-02-29|\\d{4}-(?:(?:0[13578]|1[02])-(?:0[1-9]|[12]\\d|3[01])|(?:0[469]|11)-(?:0[1-9]|[12]\\d|30)|(?:02)-(?:0[1-9]|1\\d|2[0-8])))T(?:(?:[01]\\d|2[0-3]):[0-5]\\d(?::[0-5]\\d(?:\\.\\d+)?)?(?:Z))$"},
                "note": {"anyOf": [{"type": "string"}, {"type": "null"}]},
                "kind": {"type": "string", "const": "search"},
                "filters": {
                    "type": "object",
                    "properties": {"lang": {"type": "string"}},
                    "additionalProperties": false
                },
                "tags": {"type": "array", "items": {"type": "string"}, "maxItems": 5},
                "emoji": {"type": "string", "pattern": "^(\\p{Extended_Pictographic}|\\p{Emoji_Component})+$"}
            },
            "required": ["query", "mode", "note", "kind"],
            "additionalProperties": false
        });
        let compiled = CompiledSchema::compile(&schema).unwrap();
        assert_eq!(compiled.draft_name(), "draft-07");
        let ok = compiled
            .parse(&json!({
                "query": "rust", "mode": "fast", "note": null, "kind": "search",
                "email": "a.b@example.com", "when": "2024-02-29T10:00:00Z",
                "filters": {"lang": "en"}, "tags": ["a"], "emoji": "👍"
            }))
            .unwrap();
        assert_eq!(ok["limit"], 10);
        let found = compiled
            .validate(&json!({
                "query": "", "mode": "slow", "note": 1, "kind": "other", "limit": 2.5,
                "email": ".bad@x", "filters": {"lang": "en", "x": 1}, "extra": true
            }))
            .unwrap_err();
        let out = format_issues(&found);
        for expected in [
            "- at $.query: \"\" is shorter than 1 character",
            "- at $.mode: \"slow\"",
            "- at $.note: 1 is not valid under any of the schemas listed in the 'anyOf' keyword",
            "- at $.kind: \"search\" was expected",
            "- at $.limit: 2.5 is not of type \"integer\"",
            "- at $.email: \".bad@x\" does not match",
            "- at $.filters: Additional properties are not allowed ('x' was unexpected)",
            "- at $: Additional properties are not allowed ('extra' was unexpected)",
        ] {
            assert!(out.contains(expected), "missing {expected:?} in\n{out}");
        }
    }

    /// `z.toJSONSchema(s)` default target (2020-12), with `reused: "ref"` and recursion via `#`.
    #[test]
    fn zod4_draft_2020_12_with_refs_validates() {
        let schema = json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "type": "object",
            "properties": {
                "a": {"$ref": "#/$defs/__schema0"},
                "b": {"$ref": "#/$defs/__schema0", "description": "second"},
                "children": {"type": "array", "items": {"$ref": "#"}},
                "pair": {"type": "array", "prefixItems": [{"type": "string"}, {"type": "number"}], "items": {"type": "boolean"}},
                "rec": {"type": "object", "propertyNames": {"type": "string"}, "additionalProperties": {"type": "boolean"}}
            },
            "required": ["a"],
            "additionalProperties": false,
            "$defs": {"__schema0": {"type": "object", "properties": {"num": {"type": "number"}}, "required": ["num"], "additionalProperties": false}}
        });
        let compiled = CompiledSchema::compile(&schema).unwrap();
        assert_eq!(compiled.draft_name(), "2020-12");
        assert!(compiled
            .validate(&json!({"a": {"num": 1}, "children": [{"a": {"num": 2}}], "pair": ["x", 1, true], "rec": {"k": false}}))
            .is_ok());
        let out = format_issues(
            &compiled
                .validate(&json!({"a": {"num": "1"}, "children": [{}], "pair": ["x", 1, 3], "rec": {"k": 1}}))
                .unwrap_err(),
        );
        for expected in [
            "- at $.a.num: \"1\" is not of type \"number\"",
            "- at $.children[0]: \"a\" is a required property",
            "- at $.pair[2]: 3 is not of type \"boolean\"",
            "- at $.rec.k: 1 is not of type \"boolean\"",
        ] {
            assert!(out.contains(expected), "missing {expected:?} in\n{out}");
        }
    }
}
