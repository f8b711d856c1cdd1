//! What each provider documents it accepts, as a checker: lists the constructs of a schema that
//! fall outside that subset. Written from the providers' documentation (and reported rejections),
//! independently of the rewriter in `provider.rs`, so tests can hold one against the other.
//!
//! - Gemini: ai.google.dev/api/caching#Schema (fields, `Type`, `format` per type, `enum` of
//!   strings), plus rejections reported by users: `default` and `anyOf` under `items`
//!   (google-gemini/gemini-cli#13326, promptfoo/promptfoo#6902).
//! - OpenAI strict: platform.openai.com/docs/guides/structured-outputs#supported-schemas (types,
//!   supported properties, formats, required/`additionalProperties: false`, root object, limits).
//! - Anthropic: docs.anthropic.com tool use (`input_schema` is an object schema).

use serde_json::Value;

use super::provider::Provider;

/// One construct outside a provider's subset.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SubsetViolation {
    /// JSON pointer into the checked schema.
    pub path: String,
    /// What is wrong there, e.g. `keyword $ref`.
    pub construct: String,
}

/// Every construct of `schema` outside what `provider` documents accepting.
pub fn outside_subset(schema: &Value, provider: Provider) -> Vec<SubsetViolation> {
    let mut check = Check {
        provider,
        found: Vec::new(),
    };
    match provider {
        Provider::PassThrough => {}
        Provider::Anthropic => check.anthropic_root(schema),
        Provider::Gemini => check.gemini(schema, "", false),
        Provider::OpenAiStrict => {
            if schema.get("type") != Some(&Value::from("object")) {
                check.flag("", "root is not type object");
            }
            if schema.get("anyOf").is_some() {
                check.flag("", "root anyOf");
            }
            let mut properties = 0;
            check.openai(schema, "", 0, &mut properties);
            if properties > OPENAI_MAX_PROPERTIES {
                check.flag(
                    "",
                    &format!("{properties} properties (limit {OPENAI_MAX_PROPERTIES})"),
                );
            }
        }
    }
    check.found
}

/// Fields of Gemini's `Schema` object.
const GEMINI_FIELDS: [&str; 21] = [
    "type",
    "format",
    "title",
    "description",
    "nullable",
    "enum",
    "maxItems",
    "minItems",
    "properties",
    "required",
    "minProperties",
    "maxProperties",
    "minLength",
    "maxLength",
    "pattern",
    "example",
    "anyOf",
    "propertyOrdering",
    "items",
    "minimum",
    "maximum",
];
/// Gemini's `Type` values (the AI SDK sends them lower-case).
const GEMINI_TYPES: [&str; 6] = ["string", "number", "integer", "boolean", "array", "object"];

/// OpenAI strict: supported keywords.
const OPENAI_FIELDS: [&str; 20] = [
    "type",
    "description",
    "properties",
    "required",
    "additionalProperties",
    "items",
    "enum",
    "const",
    "anyOf",
    "$ref",
    "$defs",
    "pattern",
    "format",
    "multipleOf",
    "maximum",
    "exclusiveMaximum",
    "minimum",
    "exclusiveMinimum",
    "minItems",
    "maxItems",
];
const OPENAI_TYPES: [&str; 7] = [
    "string", "number", "integer", "boolean", "object", "array", "null",
];
const OPENAI_STRING_FORMATS: [&str; 9] = [
    "date-time",
    "time",
    "date",
    "duration",
    "email",
    "hostname",
    "ipv4",
    "ipv6",
    "uuid",
];
/// "A schema may have up to 5000 object properties total, with up to 10 levels of nesting."
const OPENAI_MAX_PROPERTIES: usize = 5000;
const OPENAI_MAX_NESTING: usize = 10;
/// "A schema may have up to 1000 enum values across all enum properties."
const OPENAI_MAX_ENUM_VALUES: usize = 1000;

struct Check {
    provider: Provider,
    found: Vec<SubsetViolation>,
}

impl Check {
    fn flag(&mut self, path: &str, construct: &str) {
        self.found.push(SubsetViolation {
            path: if path.is_empty() {
                "/".into()
            } else {
                path.to_owned()
            },
            construct: construct.to_owned(),
        });
    }

    fn gemini(&mut self, schema: &Value, path: &str, under_items: bool) {
        let Some(map) = schema.as_object() else {
            self.flag(path, "boolean schema");
            return;
        };
        for key in map.keys() {
            if !GEMINI_FIELDS.contains(&key.as_str()) {
                self.flag(path, &format!("keyword {key}"));
            }
        }
        if under_items && map.contains_key("anyOf") {
            self.flag(path, "anyOf under items");
        }
        let type_name = map.get("type").map(|t| t.as_str());
        match type_name {
            Some(Some(t)) if GEMINI_TYPES.contains(&t) => {}
            Some(_) => self.flag(path, "type is not a single Gemini Type"),
            None => {}
        }
        let type_name = type_name.flatten();
        if let Some(format) = map.get("format") {
            let allowed: &[&str] = match type_name {
                Some("string") => &["enum", "date-time"],
                Some("number") => &["float", "double"],
                Some("integer") => &["int32", "int64"],
                _ => &[],
            };
            if !format.as_str().is_some_and(|f| allowed.contains(&f)) {
                self.flag(path, &format!("format {format} on {type_name:?}"));
            }
        }
        if let Some(values) = map.get("enum") {
            let strings = values
                .as_array()
                .is_some_and(|v| v.iter().all(Value::is_string));
            if !strings || type_name != Some("string") {
                self.flag(path, "enum that is not a string enum");
            }
        }
        if map.get("nullable").is_some_and(|n| !n.is_boolean()) {
            self.flag(path, "nullable is not a boolean");
        }
        self.string_list(map.get("required"), path, "required");
        for (name, child) in map
            .get("properties")
            .and_then(Value::as_object)
            .into_iter()
            .flatten()
        {
            self.gemini(
                child,
                &format!("{path}/properties/{}", escape(name)),
                under_items,
            );
        }
        if let Some(items) = map.get("items") {
            self.gemini(items, &format!("{path}/items"), true);
        }
        for (i, branch) in map
            .get("anyOf")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .enumerate()
        {
            self.gemini(branch, &format!("{path}/anyOf/{i}"), under_items);
        }
    }

    fn openai(&mut self, schema: &Value, path: &str, depth: usize, properties: &mut usize) {
        let Some(map) = schema.as_object() else {
            self.flag(path, "boolean schema");
            return;
        };
        if depth > OPENAI_MAX_NESTING {
            self.flag(path, &format!("nesting deeper than {OPENAI_MAX_NESTING}"));
        }
        for key in map.keys() {
            if !OPENAI_FIELDS.contains(&key.as_str()) {
                self.flag(path, &format!("keyword {key}"));
            }
        }
        let types: Vec<&str> = match map.get("type") {
            Some(Value::String(t)) => vec![t.as_str()],
            Some(Value::Array(list)) => list.iter().filter_map(Value::as_str).collect(),
            Some(_) => {
                self.flag(path, "type is neither a name nor a list of names");
                Vec::new()
            }
            None => Vec::new(),
        };
        if types.iter().any(|t| !OPENAI_TYPES.contains(t)) {
            self.flag(path, "unknown type");
        }
        if !["type", "anyOf", "enum", "const", "$ref"]
            .iter()
            .any(|k| map.contains_key(*k))
        {
            self.flag(path, "schema without type (bare {})");
        }
        if let Some(format) = map.get("format")
            && !format
                .as_str()
                .is_some_and(|f| OPENAI_STRING_FORMATS.contains(&f))
        {
            self.flag(path, &format!("format {format}"));
        }
        if map
            .get("enum")
            .and_then(Value::as_array)
            .is_some_and(|e| e.len() > OPENAI_MAX_ENUM_VALUES)
        {
            self.flag(path, "enum with more than 1000 values");
        }
        if types.contains(&"object") || map.contains_key("properties") {
            self.openai_object(map, path);
        }
        self.string_list(map.get("required"), path, "required");
        for (name, child) in map
            .get("properties")
            .and_then(Value::as_object)
            .into_iter()
            .flatten()
        {
            *properties += 1;
            self.openai(
                child,
                &format!("{path}/properties/{}", escape(name)),
                depth + 1,
                properties,
            );
        }
        if let Some(items) = map.get("items") {
            self.openai(items, &format!("{path}/items"), depth + 1, properties);
        }
        for (i, branch) in map
            .get("anyOf")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .enumerate()
        {
            self.openai(branch, &format!("{path}/anyOf/{i}"), depth, properties);
        }
    }

    fn openai_object(&mut self, map: &serde_json::Map<String, Value>, path: &str) {
        if map.get("additionalProperties") != Some(&Value::Bool(false)) {
            self.flag(path, "object without additionalProperties: false");
        }
        let Some(properties) = map.get("properties").and_then(Value::as_object) else {
            self.flag(path, "object without properties");
            return;
        };
        let required: Vec<&str> = map
            .get("required")
            .and_then(Value::as_array)
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        for name in properties.keys() {
            if !required.contains(&name.as_str()) {
                self.flag(path, &format!("property {name} not in required"));
            }
        }
    }

    fn anthropic_root(&mut self, schema: &Value) {
        if schema.get("type") != Some(&Value::from("object")) {
            self.flag("", "input_schema root is not type object");
        }
    }

    fn string_list(&mut self, value: Option<&Value>, path: &str, keyword: &str) {
        if value.is_some_and(|v| !v.as_array().is_some_and(|l| l.iter().all(Value::is_string))) {
            self.flag(
                path,
                &format!(
                    "{keyword} is not a list of names ({})",
                    self.provider.name()
                ),
            );
        }
    }
}

fn escape(name: &str) -> String {
    name.replace('~', "~0").replace('/', "~1")
}
