//! Provider-safe input schemas: one MCP tool with a `$ref` must not fail a whole Gemini request.
//!
//! [`provider_schema`] rewrites a tool's JSON Schema into the subset a model provider accepts,
//! keeping the meaning wherever the provider can express it and moving what it cannot into the
//! `description`, so the model still reads it. Validation keeps using the original schema.
//!
//! Rules and their sources (each row is one rewrite; "SDK" = the AI SDK provider package that
//! sends the schema, read from its published source, not copied):
//!
//! | provider | rewrite | source |
//! |---|---|---|
//! | Gemini, OpenAI | local `$ref` inlined, `$defs`/`definitions`/`$schema`/`$id` dropped | ai.google.dev/api/caching#Schema (no `$ref`/`$defs` fields); SDK `@ai-sdk/google` `convert-json-schema-to-openapi-schema.ts` drops `$ref` |
//! | Gemini, OpenAI | `$ref` cycle cut after [`MAX_REF_REPEATS`] expansions, note in description | choice: providers need a finite tree |
//! | all rewritten | non-local `$ref` → permissive schema with a note, never fetched | toolreg security rule |
//! | Gemini, OpenAI | `allOf` merged when the branches do not conflict | Gemini Schema has no `allOf`; platform.openai.com/docs/guides/structured-outputs#supported-schemas ("allOf not supported") |
//! | Gemini | `type: [T, "null"]`, `anyOf`/`oneOf` of `T` and `null` → `nullable: true` | ai.google.dev/api/caching#Schema (`nullable`, single `type`); SDK google converter does the same |
//! | Gemini | `const` → one-value `enum` (strings only: Gemini `enum` is `string[]`) | ai.google.dev/api/caching#Schema (`enum[]`: string); SDK google converter maps `const` to `enum` |
//! | Gemini | `anyOf` anywhere under `items` flattened into one item schema, note lists the shapes | google-gemini/gemini-cli#13326, promptfoo#6902 (400 on `anyOf` in `items`) |
//! | Gemini | `additionalProperties` removed (schema-valued: note) | ai.google.dev/api/caching#Schema (no such field); gemini-cli#13326 |
//! | Gemini | `default`, `minimum`, `maximum`, `pattern`, `maxLength`, `minItems`, `maxItems`, `minProperties`, `maxProperties` → description | SDK google converter forwards only type/format/title/description/nullable/enum/properties/required/items/anyOf/minLength, so the rest never reach the model; gemini-cli#13326 (`default` rejected) |
//! | Gemini | `format` kept only where documented (string: `enum`, `date-time`; number: `float`, `double`; integer: `int32`, `int64`), else named in the description | ai.google.dev/api/caching#Schema (`format`) |
//! | OpenAI strict | `additionalProperties: false` on every object, every property in `required`, optional ones nullable | platform.openai.com/docs/guides/structured-outputs#all-fields-must-be-required, #additionalproperties-false-must-always-be-set-in-objects; SDK `@ai-sdk/openai` sends `strict: true` for tools with `strict` |
//! | OpenAI strict | bare `{}` → JSON scalar types, missing `properties` → `{}` | structured-outputs#supported-schemas (types must be listed); vercel/ai#6704, sttp-ai#521 |
//! | OpenAI strict | `oneOf` → `anyOf`; `format` outside the documented list, `minLength`/`maxLength`, `patternProperties`, `uniqueItems`, ... → description | structured-outputs#supported-properties |
//! | Anthropic | root gets `type: "object"` when it has none; everything else passes | docs.anthropic.com/en/docs/agents-and-tools/tool-use (`input_schema` is a JSON Schema object) |
//! | others | pass-through | — |

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Map, Value, json};

use super::{json_type_name, resolve_local_ref};

/// A local `$ref` is expanded at most this many times along one path; the next occurrence is
/// cut to a typed, permissive schema whose description says so (one level of recursion shown).
pub const MAX_REF_REPEATS: usize = 2;
/// Bound on schema nodes produced by inlining, against `$ref`s that fan out exponentially.
const MAX_INLINED_NODES: usize = 20_000;
/// Bound on any recursion over the schema.
const MAX_DEPTH: usize = 64;

/// The provider family a schema is rewritten for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Provider {
    /// Gemini API and Vertex AI (`google.generative-ai`, `google.vertex.*`): an OpenAPI 3.0 subset.
    Gemini,
    /// OpenAI function tools with `strict: true` (structured outputs).
    OpenAiStrict,
    /// Anthropic Messages (`anthropic.*`).
    Anthropic,
    /// Any other provider: the schema is sent as is.
    PassThrough,
}

impl Provider {
    /// The family for an AI SDK model's `provider` string; `strict` selects OpenAI strict mode.
    pub fn for_model(provider: &str, strict: bool) -> Provider {
        if provider == "google.generative-ai" || provider.starts_with("google.vertex") {
            Provider::Gemini
        } else if provider.starts_with("openai.") && strict {
            Provider::OpenAiStrict
        } else if provider.starts_with("anthropic.") {
            Provider::Anthropic
        } else {
            Provider::PassThrough
        }
    }

    /// A short stable name (`gemini`, `openai-strict`, `anthropic`, `pass-through`).
    pub fn name(self) -> &'static str {
        match self {
            Provider::Gemini => "gemini",
            Provider::OpenAiStrict => "openai-strict",
            Provider::Anthropic => "anthropic",
            Provider::PassThrough => "pass-through",
        }
    }
}

/// How a rewrite changes which instances the schema accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Effect {
    /// Same instances (annotations moved, equivalent spelling).
    Exact,
    /// Accepts a subset of what the original accepted.
    Narrows,
    /// Accepts a superset (a constraint became a description note).
    Widens,
    /// Neither: the provider cannot express the construct.
    Changes,
}

/// One kind of rewrite, counted in [`ProviderSchema::rewrites`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Rewrite {
    RefInlined,
    RefCycleCut,
    RefRemote,
    RefBroken,
    DefsDropped,
    MetaKeywordDropped,
    AllOfMerged,
    AllOfConflict,
    TupleItems,
    NullableFromUnion,
    NullableFromTypeArray,
    TypeArraySplit,
    OneOfToAnyOf,
    OneOfOverlapping,
    ConstToEnum,
    EnumDescribed,
    NullType,
    ItemsUnionFlattened,
    AdditionalPropertiesRemoved,
    AdditionalPropertiesSchemaDescribed,
    DefaultDescribed,
    FormatDescribed,
    KeywordDescribed,
    AnnotationDropped,
    FalseSchema,
    ObjectClosed,
    PropertiesAdded,
    OptionalMadeNullable,
    OptionalInUnionMadeNullable,
    AnySchemaTyped,
    RootTyped,
}

impl Rewrite {
    /// A stable kebab-case name for reports.
    pub fn name(self) -> &'static str {
        match self {
            Rewrite::RefInlined => "ref-inlined",
            Rewrite::RefCycleCut => "ref-cycle-cut",
            Rewrite::RefRemote => "ref-remote",
            Rewrite::RefBroken => "ref-broken",
            Rewrite::DefsDropped => "defs-dropped",
            Rewrite::MetaKeywordDropped => "meta-keyword-dropped",
            Rewrite::AllOfMerged => "allof-merged",
            Rewrite::AllOfConflict => "allof-conflict",
            Rewrite::TupleItems => "tuple-items",
            Rewrite::NullableFromUnion => "nullable-from-union",
            Rewrite::NullableFromTypeArray => "nullable-from-type-array",
            Rewrite::TypeArraySplit => "type-array-split",
            Rewrite::OneOfToAnyOf => "oneof-to-anyof",
            Rewrite::OneOfOverlapping => "oneof-overlapping",
            Rewrite::ConstToEnum => "const-to-enum",
            Rewrite::EnumDescribed => "enum-described",
            Rewrite::NullType => "null-type",
            Rewrite::ItemsUnionFlattened => "items-union-flattened",
            Rewrite::AdditionalPropertiesRemoved => "additional-properties-removed",
            Rewrite::AdditionalPropertiesSchemaDescribed => {
                "additional-properties-schema-described"
            }
            Rewrite::DefaultDescribed => "default-described",
            Rewrite::FormatDescribed => "format-described",
            Rewrite::KeywordDescribed => "keyword-described",
            Rewrite::AnnotationDropped => "annotation-dropped",
            Rewrite::FalseSchema => "false-schema",
            Rewrite::ObjectClosed => "object-closed",
            Rewrite::PropertiesAdded => "properties-added",
            Rewrite::OptionalMadeNullable => "optional-made-nullable",
            Rewrite::OptionalInUnionMadeNullable => "optional-in-union-made-nullable",
            Rewrite::AnySchemaTyped => "any-schema-typed",
            Rewrite::RootTyped => "root-typed",
        }
    }

    /// What the rewrite does to the accepted instances. `OptionalMadeNullable` is exact under
    /// the strict-mode mapping "absent ⇔ null" that [`strip_strict_nulls`] undoes.
    pub fn effect(self) -> Effect {
        match self {
            Rewrite::RefInlined
            | Rewrite::DefsDropped
            | Rewrite::MetaKeywordDropped
            | Rewrite::AllOfMerged
            | Rewrite::NullableFromUnion
            | Rewrite::NullableFromTypeArray
            | Rewrite::TypeArraySplit
            | Rewrite::OneOfToAnyOf
            | Rewrite::ConstToEnum
            | Rewrite::DefaultDescribed
            | Rewrite::FormatDescribed
            | Rewrite::AnnotationDropped
            | Rewrite::PropertiesAdded
            | Rewrite::OptionalMadeNullable => Effect::Exact,
            Rewrite::ObjectClosed | Rewrite::AnySchemaTyped | Rewrite::RootTyped => Effect::Narrows,
            Rewrite::RefCycleCut
            | Rewrite::RefRemote
            | Rewrite::RefBroken
            | Rewrite::AdditionalPropertiesRemoved
            | Rewrite::AdditionalPropertiesSchemaDescribed
            | Rewrite::KeywordDescribed
            | Rewrite::EnumDescribed
            | Rewrite::OneOfOverlapping => Effect::Widens,
            Rewrite::AllOfConflict
            | Rewrite::TupleItems
            | Rewrite::NullType
            | Rewrite::ItemsUnionFlattened
            | Rewrite::FalseSchema
            | Rewrite::OptionalInUnionMadeNullable => Effect::Changes,
        }
    }
}

/// A rewritten schema and what was done to it.
#[derive(Debug, Clone, PartialEq)]
pub struct ProviderSchema {
    pub schema: Value,
    /// How often each rewrite was applied (empty: the schema was already acceptable).
    pub rewrites: BTreeMap<Rewrite, usize>,
}

impl ProviderSchema {
    /// The combined effect of all rewrites: `Exact` when none changed the accepted instances.
    pub fn effect(&self) -> Effect {
        let effects: BTreeSet<u8> = self
            .rewrites
            .keys()
            .map(|r| match r.effect() {
                Effect::Exact => 0,
                Effect::Narrows => 1,
                Effect::Widens => 2,
                Effect::Changes => 3,
            })
            .filter(|&e| e > 0)
            .collect();
        match (effects.len(), effects.first()) {
            (0, _) => Effect::Exact,
            (1, Some(1)) => Effect::Narrows,
            (1, Some(2)) => Effect::Widens,
            _ => Effect::Changes,
        }
    }
}

/// Why a schema could not be rewritten.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum ProviderSchemaError {
    /// The input is not a JSON Schema (object or boolean).
    #[error("a JSON Schema must be an object or a boolean, got {found}")]
    NotASchema { found: &'static str },
}

/// Rewrites `schema` into what `provider` accepts. Never fetches anything: a non-local `$ref`
/// becomes a permissive schema with a description note.
pub fn provider_schema(
    schema: &Value,
    provider: Provider,
) -> Result<ProviderSchema, ProviderSchemaError> {
    if !schema.is_object() && !schema.is_boolean() {
        return Err(ProviderSchemaError::NotASchema {
            found: json_type_name(schema),
        });
    }
    let mut rewriter = Rewriter {
        root: schema,
        rewrites: BTreeMap::new(),
        ref_stack: Vec::new(),
        nodes: 0,
    };
    let schema = match provider {
        Provider::PassThrough => schema.clone(),
        Provider::Anthropic => rewriter.anthropic_root(schema),
        Provider::Gemini => {
            let inlined = rewriter.inline(schema, 0);
            rewriter.gemini(inlined, false)
        }
        Provider::OpenAiStrict => {
            let inlined = rewriter.inline(schema, 0);
            let root = rewriter.openai_root(inlined);
            rewriter.openai(root, false)
        }
    };
    Ok(ProviderSchema {
        schema,
        rewrites: rewriter.rewrites,
    })
}

/// Undoes OpenAI strict mode's "optional ⇒ required but nullable" on a model's input: removes
/// `null` properties that the original schema does not require and does not accept as `null`,
/// so the input validates against the original schema again.
pub fn strip_strict_nulls(original: &Value, input: &mut Value) {
    strip_nulls_at(original, original, input, 0);
}

fn strip_nulls_at(root: &Value, schema: &Value, input: &mut Value, depth: usize) {
    if depth > MAX_DEPTH {
        return;
    }
    let (schema, _) = super::deref(root, schema);
    match input {
        Value::Object(fields) => {
            let Some(properties) = schema.get("properties").and_then(Value::as_object) else {
                return;
            };
            let required = required_names(schema);
            fields.retain(|name, value| {
                !(value.is_null()
                    && !required.contains(name.as_str())
                    && properties.get(name).is_some_and(|p| !accepts_null(root, p)))
            });
            for (name, value) in fields.iter_mut() {
                if let Some(property) = properties.get(name) {
                    strip_nulls_at(root, property, value, depth + 1);
                }
            }
        }
        Value::Array(items) => {
            if let Some(item_schema) = schema.get("items").filter(|i| !i.is_array()) {
                for item in items {
                    strip_nulls_at(root, item_schema, item, depth + 1);
                }
            }
        }
        _ => {}
    }
}

fn required_names(schema: &Value) -> BTreeSet<&str> {
    schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default()
}

/// Whether `schema` visibly admits `null` (type, enum, const or a union branch).
fn accepts_null(root: &Value, schema: &Value) -> bool {
    let (schema, _) = super::deref(root, schema);
    match schema {
        Value::Bool(b) => *b,
        Value::Object(map) => {
            if map.is_empty() {
                return true;
            }
            let by_type = match map.get("type") {
                Some(Value::String(t)) => t == "null",
                Some(Value::Array(types)) => types.iter().any(|t| t == "null"),
                _ => false,
            };
            let by_enum = map
                .get("enum")
                .and_then(Value::as_array)
                .is_some_and(|e| e.iter().any(Value::is_null));
            let by_const = map.get("const").is_some_and(Value::is_null);
            let by_union = ["anyOf", "oneOf"].iter().any(|k| {
                map.get(*k)
                    .and_then(Value::as_array)
                    .is_some_and(|b| b.iter().any(|s| accepts_null(root, s)))
            });
            by_type || by_enum || by_const || by_union
        }
        _ => false,
    }
}

/// JSON Schema's type names.
const JSON_TYPES: [&str; 7] = [
    "string", "number", "integer", "boolean", "object", "array", "null",
];
/// Keywords whose values are one subschema.
const SUBSCHEMA_KEYWORDS: [&str; 10] = [
    "additionalProperties",
    "items",
    "additionalItems",
    "contains",
    "not",
    "if",
    "then",
    "else",
    "propertyNames",
    "unevaluatedProperties",
];
/// Keywords whose values are arrays of subschemas.
const SUBSCHEMA_LIST_KEYWORDS: [&str; 4] = ["anyOf", "oneOf", "allOf", "prefixItems"];
/// Keywords whose values are maps of name → subschema.
const SUBSCHEMA_MAP_KEYWORDS: [&str; 3] = ["properties", "patternProperties", "dependentSchemas"];
/// Identity and meta keywords that mean nothing once `$ref`s are inlined.
const META_KEYWORDS: [&str; 6] = [
    "$schema",
    "$id",
    "$comment",
    "$anchor",
    "$dynamicAnchor",
    "$vocabulary",
];
/// Annotations that carry no constraint; dropped where a provider does not document them.
const ANNOTATIONS: [&str; 7] = [
    "title",
    "examples",
    "readOnly",
    "writeOnly",
    "deprecated",
    "contentMediaType",
    "contentEncoding",
];

/// Gemini `Schema` fields the AI SDK's Google converter forwards (ai.google.dev/api/caching#Schema
/// ∩ `@ai-sdk/google` `convertJSONSchemaToOpenAPISchema`). Everything else is described or dropped.
const GEMINI_KEPT: [&str; 10] = [
    "type",
    "format",
    "title",
    "description",
    "nullable",
    "enum",
    "properties",
    "required",
    "items",
    "anyOf",
];
/// `format` values Gemini documents, per type (ai.google.dev/api/caching#Schema).
const GEMINI_FORMATS: [(&str, &[&str]); 3] = [
    ("string", &["enum", "date-time"]),
    ("number", &["float", "double"]),
    ("integer", &["int32", "int64"]),
];
/// Keywords OpenAI strict mode supports (platform.openai.com/docs/guides/structured-outputs#supported-properties).
const OPENAI_KEPT: [&str; 18] = [
    "type",
    "description",
    "properties",
    "required",
    "additionalProperties",
    "items",
    "enum",
    "const",
    "anyOf",
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
/// String formats OpenAI strict mode supports (structured-outputs#supported-properties).
pub const OPENAI_FORMATS: [&str; 9] = [
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

struct Rewriter<'a> {
    root: &'a Value,
    rewrites: BTreeMap<Rewrite, usize>,
    ref_stack: Vec<String>,
    nodes: usize,
}

impl Rewriter<'_> {
    fn count(&mut self, rewrite: Rewrite) {
        *self.rewrites.entry(rewrite).or_insert(0) += 1;
    }

    // ---- phase 1: one finite, `$ref`-free, `allOf`-free tree (Gemini and OpenAI) ----

    fn inline(&mut self, node: &Value, depth: usize) -> Value {
        self.nodes += 1;
        let Value::Object(map) = node else {
            return node.clone();
        };
        if depth > MAX_DEPTH {
            self.count(Rewrite::RefCycleCut);
            return note_only("Nested too deeply; not expanded further.");
        }
        if let Some(reference) = map.get("$ref").and_then(Value::as_str) {
            return self.inline_ref(map, reference, depth);
        }
        let mut out = Map::new();
        for (key, value) in map {
            match key.as_str() {
                "$defs" | "definitions" => self.count(Rewrite::DefsDropped),
                k if META_KEYWORDS.contains(&k) => self.count(Rewrite::MetaKeywordDropped),
                k if SUBSCHEMA_MAP_KEYWORDS.contains(&k) && value.is_object() => {
                    let children = value.as_object().into_iter().flatten();
                    let inlined = children
                        .map(|(name, child)| (name.clone(), self.inline(child, depth + 1)))
                        .collect();
                    out.insert(key.clone(), Value::Object(inlined));
                }
                k if SUBSCHEMA_LIST_KEYWORDS.contains(&k) || (k == "items" && value.is_array()) => {
                    let list = value.as_array().into_iter().flatten();
                    let inlined = list.map(|child| self.inline(child, depth + 1)).collect();
                    out.insert(key.clone(), Value::Array(inlined));
                }
                k if SUBSCHEMA_KEYWORDS.contains(&k) => {
                    out.insert(key.clone(), self.inline(value, depth + 1));
                }
                _ => {
                    out.insert(key.clone(), value.clone());
                }
            }
        }
        draft4_exclusive_bounds(&mut out);
        self.unknown_types(&mut out);
        self.tuple_items(&mut out);
        if out.contains_key("allOf") {
            out = self.merge_all_of(out);
        }
        Value::Object(out)
    }

    fn inline_ref(&mut self, map: &Map<String, Value>, reference: &str, depth: usize) -> Value {
        let siblings: Map<String, Value> = map
            .iter()
            .filter(|(k, _)| *k != "$ref")
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        let Some(target) = resolve_local_ref(self.root, reference) else {
            let local = reference.starts_with('#');
            self.count(if local {
                Rewrite::RefBroken
            } else {
                Rewrite::RefRemote
            });
            let why = if local {
                "cannot be resolved"
            } else {
                "is outside this schema and was not fetched"
            };
            let mut cut = self.inline(&Value::Object(siblings), depth + 1);
            append_note(&mut cut, &format!("Schema {reference} {why}; any value."));
            return cut;
        };
        let repeats = self.ref_stack.iter().filter(|r| *r == reference).count();
        if repeats >= MAX_REF_REPEATS || self.nodes > MAX_INLINED_NODES {
            self.count(Rewrite::RefCycleCut);
            let mut cut = Map::new();
            if let Some(t) = target.get("type").filter(|t| t.is_string()) {
                cut.insert("type".into(), t.clone());
            }
            let mut cut = Value::Object(cut);
            let name = reference.rsplit('/').next().unwrap_or(reference);
            append_note(
                &mut cut,
                &format!("Recursive: same shape as {name} above (not expanded further)."),
            );
            return cut;
        }
        self.count(Rewrite::RefInlined);
        self.ref_stack.push(reference.to_owned());
        let inlined = self.inline(target, depth + 1);
        self.ref_stack.pop();
        if siblings.is_empty() {
            return inlined;
        }
        let siblings = self.inline(&Value::Object(siblings), depth + 1);
        let annotations_only = siblings
            .as_object()
            .is_some_and(|s| s.keys().all(|k| is_annotation(k)));
        match (inlined, siblings) {
            (Value::Object(mut target), Value::Object(siblings)) if annotations_only => {
                target.extend(siblings);
                Value::Object(target)
            }
            (target, siblings) => {
                let mut both = Map::new();
                both.insert("allOf".into(), json!([target, siblings]));
                Value::Object(self.merge_all_of(both))
            }
        }
    }

    /// `type` names outside JSON Schema's seven (`"any"`, `"map"`, ...) leave `type` for a note.
    fn unknown_types(&mut self, out: &mut Map<String, Value>) {
        let Some(types) = out.get("type") else {
            return;
        };
        let known = |t: &Value| t.as_str().is_some_and(|t| JSON_TYPES.contains(&t));
        let all_known = match types {
            Value::Array(list) => !list.is_empty() && list.iter().all(known),
            single => known(single),
        };
        if !all_known {
            let types = compact(types);
            out.remove("type");
            self.count(Rewrite::KeywordDescribed);
            append_note_map(out, &format!("type: {types}."));
        }
    }

    /// Tuple `items: [...]` / `prefixItems`: no provider here has tuples; items become a union.
    fn tuple_items(&mut self, out: &mut Map<String, Value>) {
        let tuple = match out.remove("prefixItems") {
            Some(list) => Some(list),
            None if out.get("items").is_some_and(Value::is_array) => out.remove("items"),
            None => None,
        };
        let Some(Value::Array(positions)) = tuple else {
            return;
        };
        self.count(Rewrite::TupleItems);
        out.remove("additionalItems");
        let shapes: Vec<String> = positions.iter().map(compact).collect();
        append_note_map(
            out,
            &format!("Tuple: items in order {}.", shapes.join(", ")),
        );
        let items = match positions.len() {
            0 => return,
            1 => positions.into_iter().next().unwrap_or(Value::Bool(true)),
            _ => json!({ "anyOf": positions }),
        };
        out.insert("items".into(), items);
    }

    /// Merges `allOf` branches into their parent. Disjoint keywords, equal values, `properties`
    /// (per name, recursively) and `required` (union) merge exactly; any other clash keeps the
    /// first value and names the rest in the description.
    fn merge_all_of(&mut self, mut node: Map<String, Value>) -> Map<String, Value> {
        let Some(Value::Array(branches)) = node.remove("allOf") else {
            return node;
        };
        let mut conflict = false;
        for branch in branches {
            match branch {
                Value::Object(branch) => conflict |= merge_into(&mut node, branch),
                Value::Bool(true) => {}
                other => {
                    conflict = true;
                    append_note_map(&mut node, &format!("Also must match {}.", compact(&other)));
                }
            }
        }
        self.count(if conflict {
            Rewrite::AllOfConflict
        } else {
            Rewrite::AllOfMerged
        });
        node
    }

    // ---- Gemini ----

    fn gemini(&mut self, node: Value, under_items: bool) -> Value {
        let mut map = match node {
            Value::Object(map) => map,
            Value::Bool(true) => Map::new(),
            _ => {
                self.count(Rewrite::FalseSchema);
                return note_only("No value is valid here.");
            }
        };
        let mut notes = Vec::new();
        self.gemini_nullable(&mut map);
        if under_items && map.contains_key("anyOf") {
            map = self.flatten_union(map, &mut notes);
        }
        if let Some(value) = map.remove("const") {
            if value.is_string() {
                self.count(Rewrite::ConstToEnum);
                map.insert("enum".into(), json!([value]));
            } else {
                self.count(Rewrite::EnumDescribed);
                notes.push(format!("Must be {}.", compact(&value)));
            }
        }
        self.gemini_enum(&mut map, &mut notes);
        if map.get("type").and_then(Value::as_str) == Some("null") {
            self.count(Rewrite::NullType);
            map.remove("type");
            map.insert("nullable".into(), Value::Bool(true));
            notes.push("Must be null.".into());
        }
        let mut out = Map::new();
        for (key, value) in map {
            match key.as_str() {
                "properties" => {
                    let props = value.as_object().cloned().unwrap_or_default();
                    let props = props
                        .into_iter()
                        .map(|(name, child)| (name, self.gemini(child, under_items)))
                        .collect();
                    out.insert(key, Value::Object(props));
                }
                "items" => {
                    out.insert(key, self.gemini(value, true));
                }
                "anyOf" => {
                    let branches = value.as_array().cloned().unwrap_or_default();
                    let branches = branches
                        .into_iter()
                        .map(|b| self.gemini(b, under_items))
                        .collect();
                    out.insert(key, Value::Array(branches));
                }
                "format" => self.gemini_format(&mut out, value, &mut notes),
                "additionalProperties" => {
                    if value.is_object() {
                        self.count(Rewrite::AdditionalPropertiesSchemaDescribed);
                        notes.push(format!("Extra properties: {}.", compact(&value)));
                    } else if value == Value::Bool(false) {
                        self.count(Rewrite::AdditionalPropertiesRemoved);
                        notes.push("No other properties.".into());
                    } else {
                        self.count(Rewrite::AnnotationDropped);
                    }
                }
                "nullable" | "required" | "type" | "title" | "description" | "enum" => {
                    out.insert(key, value);
                }
                _ => self.describe_keyword(&key, &value, &mut notes),
            }
        }
        debug_assert!(out.keys().all(|k| GEMINI_KEPT.contains(&k.as_str())));
        let mut out = Value::Object(out);
        for note in notes {
            append_note(&mut out, &note);
        }
        out
    }

    /// `type: [T, "null"]` and `anyOf`/`oneOf` with a `null` branch → `nullable`; other type
    /// lists become `anyOf`; `oneOf` becomes `anyOf`.
    fn gemini_nullable(&mut self, map: &mut Map<String, Value>) {
        if let Some(Value::Array(types)) = map.get("type").cloned() {
            let non_null: Vec<Value> = types.iter().filter(|t| *t != "null").cloned().collect();
            if non_null.len() < types.len() {
                self.count(Rewrite::NullableFromTypeArray);
                map.insert("nullable".into(), Value::Bool(true));
            }
            match non_null.len() {
                0 => {
                    map.insert("type".into(), json!("null"));
                }
                1 => {
                    map.insert("type".into(), non_null[0].clone());
                }
                _ => {
                    self.count(Rewrite::TypeArraySplit);
                    map.remove("type");
                    let branches = non_null.into_iter().map(|t| json!({ "type": t })).collect();
                    add_union(map, branches);
                }
            }
        }
        self.one_of_to_any_of(map);
        let Some(Value::Array(branches)) = map.get("anyOf").cloned() else {
            return;
        };
        let is_null = |b: &Value| {
            b.get("type") == Some(&json!("null"))
                && b.as_object()
                    .is_some_and(|m| m.keys().all(|k| k == "type" || is_annotation(k)))
        };
        let rest: Vec<Value> = branches.iter().filter(|b| !is_null(b)).cloned().collect();
        if rest.len() == branches.len() || rest.is_empty() {
            return;
        }
        self.count(Rewrite::NullableFromUnion);
        map.insert("nullable".into(), Value::Bool(true));
        if rest.len() == 1 {
            map.remove("anyOf");
            if let Value::Object(only) = rest.into_iter().next().unwrap_or_default() {
                merge_into(map, only);
            }
        } else {
            map.insert("anyOf".into(), Value::Array(rest));
        }
    }

    fn one_of_to_any_of(&mut self, map: &mut Map<String, Value>) {
        let Some(Value::Array(branches)) = map.remove("oneOf") else {
            return;
        };
        let types: Vec<Option<&Value>> = branches.iter().map(|b| b.get("type")).collect();
        let distinct: BTreeSet<String> = types.iter().flatten().map(|t| t.to_string()).collect();
        let disjoint = types.iter().all(|t| t.is_some_and(Value::is_string))
            && distinct.len() == branches.len();
        self.count(if disjoint {
            Rewrite::OneOfToAnyOf
        } else {
            Rewrite::OneOfOverlapping
        });
        if !disjoint {
            append_note_map(map, "Exactly one of the alternatives must match.");
        }
        add_union(map, branches);
    }

    /// Gemini's `enum` is a list of strings on a string schema; other enums become a note.
    fn gemini_enum(&mut self, map: &mut Map<String, Value>, notes: &mut Vec<String>) {
        let Some(Value::Array(values)) = map.get("enum").cloned() else {
            return;
        };
        let strings: Vec<Value> = values.iter().filter(|v| v.is_string()).cloned().collect();
        let has_null = values.iter().any(Value::is_null);
        let string_typed = matches!(
            map.get("type").and_then(Value::as_str),
            None | Some("string")
        );
        if string_typed
            && !strings.is_empty()
            && strings.len() + usize::from(has_null) == values.len()
        {
            map.insert("type".into(), json!("string"));
            map.insert("enum".into(), Value::Array(strings));
            if has_null {
                self.count(Rewrite::NullableFromUnion);
                map.insert("nullable".into(), Value::Bool(true));
            }
            return;
        }
        map.remove("enum");
        self.count(Rewrite::EnumDescribed);
        let listed: Vec<String> = values.iter().map(compact).collect();
        notes.push(format!("One of: {}.", listed.join(", ")));
    }

    fn gemini_format(
        &mut self,
        out: &mut Map<String, Value>,
        value: Value,
        notes: &mut Vec<String>,
    ) {
        let type_name = out.get("type").and_then(Value::as_str);
        let documented = GEMINI_FORMATS.iter().any(|(t, formats)| {
            (type_name == Some(*t) || type_name.is_none())
                && value.as_str().is_some_and(|f| formats.contains(&f))
        });
        if documented {
            out.insert("format".into(), value);
        } else {
            self.count(Rewrite::FormatDescribed);
            notes.push(format!(
                "Format: {}.",
                value
                    .as_str()
                    .map_or_else(|| compact(&value), str::to_owned)
            ));
        }
    }

    /// An item union Gemini cannot take: object branches merge (properties of all, `required`
    /// of all), same-type branches keep that type, mixed types keep none; the note lists them.
    fn flatten_union(
        &mut self,
        mut map: Map<String, Value>,
        notes: &mut Vec<String>,
    ) -> Map<String, Value> {
        let Some(Value::Array(branches)) = map.remove("anyOf") else {
            return map;
        };
        self.count(Rewrite::ItemsUnionFlattened);
        let shapes: Vec<String> = branches.iter().map(shape).collect();
        notes.push(format!("Each one of: {}.", shapes.join(" | ")));
        let type_of = |b: &Value| -> Option<String> {
            match b.get("type").and_then(Value::as_str) {
                Some(t) => Some(t.to_owned()),
                None if b.get("properties").is_some() => Some("object".into()),
                None => None,
            }
        };
        let types: BTreeSet<Option<String>> = branches.iter().map(type_of).collect();
        let single = if types.len() == 1 {
            types.into_iter().next().flatten()
        } else {
            None
        };
        match single.as_deref() {
            Some("object") => {
                let mut properties = Map::new();
                let mut required: Option<BTreeSet<String>> = None;
                for branch in &branches {
                    for (name, schema) in branch
                        .get("properties")
                        .and_then(Value::as_object)
                        .into_iter()
                        .flatten()
                    {
                        properties
                            .entry(name.clone())
                            .or_insert_with(|| schema.clone());
                    }
                    let names: BTreeSet<String> = required_names(branch)
                        .into_iter()
                        .map(str::to_owned)
                        .collect();
                    required = Some(match required {
                        None => names,
                        Some(so_far) => so_far.intersection(&names).cloned().collect(),
                    });
                }
                map.insert("type".into(), json!("object"));
                map.insert("properties".into(), Value::Object(properties));
                if let Some(required) = required.filter(|r| !r.is_empty()) {
                    map.insert("required".into(), json!(required));
                }
            }
            Some(t) => {
                map.insert("type".into(), json!(t));
                let enums: Option<Vec<Value>> = branches
                    .iter()
                    .map(|b| b.get("enum").and_then(Value::as_array).cloned())
                    .collect::<Option<Vec<_>>>()
                    .map(|lists| lists.into_iter().flatten().collect());
                if let Some(values) = enums {
                    map.insert("enum".into(), Value::Array(values));
                }
            }
            None => {}
        }
        map
    }

    /// A keyword the provider does not take: annotations are dropped, `default` and
    /// constraints become a note so the model still reads them.
    fn describe_keyword(&mut self, key: &str, value: &Value, notes: &mut Vec<String>) {
        if ANNOTATIONS.contains(&key) || key.starts_with("x-") {
            self.count(Rewrite::AnnotationDropped);
        } else if key == "default" {
            self.count(Rewrite::DefaultDescribed);
            notes.push(format!("Default: {}.", compact(value)));
        } else {
            self.count(Rewrite::KeywordDescribed);
            notes.push(format!("{key}: {}.", compact(value)));
        }
    }

    // ---- OpenAI strict ----

    /// The root must be an object schema, not a union.
    fn openai_root(&mut self, root: Value) -> Value {
        let mut map = match root {
            Value::Object(map) => map,
            _ => Map::new(),
        };
        let mut notes = Vec::new();
        if map.contains_key("anyOf") || map.contains_key("oneOf") {
            self.one_of_to_any_of(&mut map);
            map = self.flatten_union(map, &mut notes);
        }
        if map.get("type") != Some(&json!("object")) {
            self.count(Rewrite::RootTyped);
            map.insert("type".into(), json!("object"));
        }
        let mut root = Value::Object(map);
        for note in notes {
            append_note(&mut root, &note);
        }
        root
    }

    fn openai(&mut self, node: Value, in_union: bool) -> Value {
        let mut map = match node {
            Value::Object(map) => map,
            Value::Bool(true) => Map::new(),
            _ => {
                self.count(Rewrite::FalseSchema);
                return json!({ "type": "null", "description": "No value is valid here." });
            }
        };
        let mut notes = Vec::new();
        self.one_of_to_any_of(&mut map);
        let typed = ["type", "anyOf", "enum", "const"]
            .iter()
            .any(|k| map.contains_key(*k));
        if !typed && map.contains_key("items") {
            self.count(Rewrite::AnySchemaTyped);
            map.insert("type".into(), json!("array"));
        } else if !typed && map.contains_key("properties") {
            self.count(Rewrite::AnySchemaTyped);
            map.insert("type".into(), json!("object"));
        } else if !typed && !map.contains_key("properties") {
            self.count(Rewrite::AnySchemaTyped);
            map.insert(
                "type".into(),
                json!(["string", "number", "boolean", "null"]),
            );
            notes.push("Any JSON value; send objects and arrays as JSON text.".into());
        }
        let is_object = has_type(&map, "object") || map.contains_key("properties");
        let mut out = Map::new();
        for (key, value) in std::mem::take(&mut map) {
            match key.as_str() {
                "properties" | "required" | "additionalProperties" if is_object => {
                    map.insert(key, value);
                }
                "items" => {
                    out.insert(key, self.openai(value, in_union));
                }
                "anyOf" => {
                    let branches = value.as_array().cloned().unwrap_or_default();
                    let branches = branches.into_iter().map(|b| self.openai(b, true)).collect();
                    out.insert(key, Value::Array(branches));
                }
                "format" if value.as_str().is_some_and(|f| OPENAI_FORMATS.contains(&f)) => {
                    out.insert(key, value);
                }
                "format" => {
                    self.count(Rewrite::FormatDescribed);
                    notes.push(format!(
                        "Format: {}.",
                        value
                            .as_str()
                            .map_or_else(|| compact(&value), str::to_owned)
                    ));
                }
                k if OPENAI_KEPT.contains(&k) => {
                    out.insert(key, value);
                }
                _ => self.describe_keyword(&key, &value, &mut notes),
            }
        }
        if is_object {
            self.openai_object(&mut out, map, in_union, &mut notes);
        }
        let mut out = Value::Object(out);
        for note in notes {
            append_note(&mut out, &note);
        }
        out
    }

    /// Strict objects: `properties` present, every property required (optional ones nullable),
    /// `additionalProperties: false`.
    fn openai_object(
        &mut self,
        out: &mut Map<String, Value>,
        mut parts: Map<String, Value>,
        in_union: bool,
        notes: &mut Vec<String>,
    ) {
        let mut properties = match parts.remove("properties") {
            Some(Value::Object(p)) => p,
            _ => {
                self.count(Rewrite::PropertiesAdded);
                Map::new()
            }
        };
        let required: BTreeSet<String> = parts
            .get("required")
            .and_then(Value::as_array)
            .map(|r| {
                r.iter()
                    .filter_map(Value::as_str)
                    .map(str::to_owned)
                    .collect()
            })
            .unwrap_or_default();
        // A required name without a schema still has to be listed, with any value.
        for name in &required {
            properties.entry(name.clone()).or_insert(Value::Bool(true));
        }
        match parts.remove("additionalProperties") {
            Some(Value::Bool(false)) => {}
            Some(schema @ Value::Object(_)) => {
                self.count(Rewrite::ObjectClosed);
                notes.push(format!(
                    "Extra properties: {} (not accepted in strict mode).",
                    compact(&schema)
                ));
            }
            _ => self.count(Rewrite::ObjectClosed),
        }
        let mut names = Vec::with_capacity(properties.len());
        let mut converted = Map::new();
        for (name, child) in properties {
            let mut child = self.openai(child, in_union);
            if !required.contains(&name) {
                self.count(if in_union {
                    Rewrite::OptionalInUnionMadeNullable
                } else {
                    Rewrite::OptionalMadeNullable
                });
                child = make_nullable(child);
            }
            names.push(Value::String(name.clone()));
            converted.insert(name, child);
        }
        out.entry("type").or_insert_with(|| json!("object"));
        out.insert("properties".into(), Value::Object(converted));
        out.insert("required".into(), Value::Array(names));
        out.insert("additionalProperties".into(), Value::Bool(false));
    }

    // ---- Anthropic ----

    fn anthropic_root(&mut self, root: &Value) -> Value {
        let mut out = match root {
            Value::Object(map) => map.clone(),
            _ => Map::new(),
        };
        if !out.contains_key("type") {
            self.count(Rewrite::RootTyped);
            out.insert("type".into(), json!("object"));
        }
        Value::Object(out)
    }
}

/// Strict mode's optional property: its schema also admits `null` (type list, enum, or a union).
fn make_nullable(schema: Value) -> Value {
    let Value::Object(mut map) = schema else {
        return schema;
    };
    if let Some(Value::Array(values)) = map.get_mut("enum")
        && !values.contains(&Value::Null)
    {
        values.push(Value::Null);
    }
    let typed_only = !map.contains_key("anyOf") && !map.contains_key("const");
    match map.get_mut("type") {
        Some(Value::String(t)) if typed_only => {
            if t != "null" {
                let t = std::mem::take(t);
                map.insert("type".into(), json!([t, "null"]));
            }
            Value::Object(map)
        }
        Some(Value::Array(types)) if typed_only => {
            if !types.contains(&json!("null")) {
                types.push(json!("null"));
            }
            Value::Object(map)
        }
        _ => {
            let description = map.remove("description");
            let mut outer = Map::new();
            if let Some(d) = description {
                outer.insert("description".into(), d);
            }
            outer.insert(
                "anyOf".into(),
                json!([Value::Object(map), { "type": "null" }]),
            );
            Value::Object(outer)
        }
    }
}

fn has_type(map: &Map<String, Value>, name: &str) -> bool {
    match map.get("type") {
        Some(Value::String(t)) => t == name,
        Some(Value::Array(types)) => types.iter().any(|t| t == name),
        _ => false,
    }
}

fn is_annotation(key: &str) -> bool {
    matches!(key, "description" | "title" | "default" | "$comment") || ANNOTATIONS.contains(&key)
}

/// Adds `branches` as an `anyOf` of `map`, nesting under `allOf`-free conjunction when an
/// `anyOf` is already there (both must hold).
fn add_union(map: &mut Map<String, Value>, branches: Vec<Value>) {
    match map.remove("anyOf") {
        None => {
            map.insert("anyOf".into(), Value::Array(branches));
        }
        Some(Value::Array(existing)) => {
            let mut product = Vec::new();
            for a in &existing {
                for b in &branches {
                    let mut both = a.as_object().cloned().unwrap_or_default();
                    merge_into(&mut both, b.as_object().cloned().unwrap_or_default());
                    product.push(Value::Object(both));
                }
            }
            map.insert("anyOf".into(), Value::Array(product));
        }
        Some(other) => {
            map.insert("anyOf".into(), other);
        }
    }
}

/// Merges `branch` into `node` as a conjunction. Returns true when a clash could not be merged
/// exactly (the first value stays; the other is named in the description).
fn merge_into(node: &mut Map<String, Value>, branch: Map<String, Value>) -> bool {
    let mut conflict = false;
    for (key, value) in branch {
        match (key.as_str(), node.get_mut(&key)) {
            (_, None) => {
                node.insert(key, value);
            }
            (_, Some(existing)) if *existing == value => {}
            ("description" | "title", Some(Value::String(existing))) => {
                if let Some(more) = value.as_str() {
                    existing.push(' ');
                    existing.push_str(more);
                }
            }
            ("default" | "examples", Some(_)) => {}
            ("required", Some(Value::Array(existing))) => {
                for name in value.as_array().into_iter().flatten() {
                    if !existing.contains(name) {
                        existing.push(name.clone());
                    }
                }
            }
            ("properties", Some(Value::Object(existing))) => {
                for (name, schema) in value.as_object().cloned().unwrap_or_default() {
                    match (existing.get_mut(&name), schema) {
                        (None, schema) => {
                            existing.insert(name, schema);
                        }
                        (Some(Value::Object(a)), Value::Object(b)) => conflict |= merge_into(a, b),
                        (Some(a), b) if *a == b => {}
                        (Some(_), _) => conflict = true,
                    }
                }
            }
            ("type", Some(existing)) => {
                let mine = type_set(existing);
                let theirs = type_set(&value);
                let both: Vec<&String> = mine.intersection(&theirs).collect();
                *existing = match both.as_slice() {
                    [one] => json!(one),
                    many => json!(many),
                };
            }
            (_, Some(_)) => {
                conflict = true;
                append_note_map(node, &format!("Also {key}: {}.", compact(&value)));
            }
        }
    }
    conflict
}

fn type_set(value: &Value) -> BTreeSet<String> {
    match value {
        Value::String(t) => [t.clone()].into(),
        Value::Array(types) => types
            .iter()
            .filter_map(Value::as_str)
            .map(str::to_owned)
            .collect(),
        _ => BTreeSet::new(),
    }
}

/// Draft-04 `exclusiveMinimum: true` + `minimum: n` → draft 2020's `exclusiveMinimum: n`.
fn draft4_exclusive_bounds(map: &mut Map<String, Value>) {
    for (flag, bound) in [
        ("exclusiveMinimum", "minimum"),
        ("exclusiveMaximum", "maximum"),
    ] {
        match map.get(flag) {
            Some(Value::Bool(true)) => {
                if let Some(n) = map.remove(bound) {
                    map.insert(flag.into(), n);
                } else {
                    map.remove(flag);
                }
            }
            Some(Value::Bool(false)) => {
                map.remove(flag);
            }
            _ => {}
        }
    }
}

fn note_only(note: &str) -> Value {
    json!({ "description": note })
}

fn append_note(schema: &mut Value, note: &str) {
    if let Value::Object(map) = schema {
        append_note_map(map, note);
    }
}

fn append_note_map(map: &mut Map<String, Value>, note: &str) {
    let text = match map.get("description").and_then(Value::as_str) {
        Some(d) if !d.trim().is_empty() => format!("{} {note}", d.trim_end()),
        _ => note.to_owned(),
    };
    map.insert("description".into(), Value::String(text));
}

/// An object branch as `{a, b, c?}` (optional names marked), anything else as compact JSON.
fn shape(branch: &Value) -> String {
    let Some(properties) = branch.get("properties").and_then(Value::as_object) else {
        return compact(branch);
    };
    let required = required_names(branch);
    let names: Vec<String> = properties
        .keys()
        .map(|name| match required.contains(name.as_str()) {
            true => name.clone(),
            false => format!("{name}?"),
        })
        .collect();
    format!("{{{}}}", names.join(", "))
}

/// A short JSON rendering for description notes.
fn compact(value: &Value) -> String {
    const MAX_NOTE_CHARS: usize = 200;
    let text = value.to_string();
    if text.chars().count() <= MAX_NOTE_CHARS {
        return text;
    }
    let cut: String = text.chars().take(MAX_NOTE_CHARS).collect();
    format!("{cut}…")
}

#[cfg(test)]
#[path = "provider_tests.rs"]
mod tests;
