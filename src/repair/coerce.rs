//! Schema-guided coercion: turning values of the wrong JSON type into the type the schema asks
//! for, where the intended value is plain (`"5"` → 5, `"true"` → true, `"x"` → `["x"]`, a JSON
//! string → the object it encodes, `"ASC"` → `"asc"` of the enum). Nothing is invented: a value
//! is only reshaped, a `null` only dropped where the property is optional, and the caller
//! validates the result before trusting it.

use std::fmt;

use serde_json::{Map, Value};

use super::lenient::read_lenient;
use crate::schema::{ValidationIssue, deref};

/// Schemas and values nested deeper than this are left as they are.
const MAX_DEPTH: usize = 64;
/// At most this many (schema, value) pairs are visited per call, so a hostile schema with wide
/// `anyOf`s over a large value cannot make coercion slow.
const MAX_VISITS: usize = 20_000;

/// One kind of coercion.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum CoercionKind {
    /// `"5"` → 5, `"2.5"` → 2.5.
    StringToNumber,
    /// `"true"` → true.
    StringToBoolean,
    /// 5 → `"5"`, true → `"true"`.
    ScalarToString,
    /// `x` → `[x]` where an array is asked for.
    WrapInArray,
    /// `[x]` → `x` where a single value is asked for.
    UnwrapSingleItemArray,
    /// `"{\"a\":1}"` → `{"a":1}` where an object or array is asked for.
    ParseEmbeddedJson,
    /// A `null` for an optional property that does not allow null: the property is left out.
    DropNullOptional,
    /// `"ASC"` → `"asc"`: the enum value that differs only in case.
    EnumCase,
}

impl CoercionKind {
    /// Stable kebab-case name, used in repair reports.
    pub fn as_str(self) -> &'static str {
        match self {
            CoercionKind::StringToNumber => "string-to-number",
            CoercionKind::StringToBoolean => "string-to-boolean",
            CoercionKind::ScalarToString => "scalar-to-string",
            CoercionKind::WrapInArray => "wrap-in-array",
            CoercionKind::UnwrapSingleItemArray => "unwrap-single-item-array",
            CoercionKind::ParseEmbeddedJson => "parse-embedded-json",
            CoercionKind::DropNullOptional => "drop-null-optional",
            CoercionKind::EnumCase => "enum-case",
        }
    }
}

/// One coercion applied at one place in the value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Coercion {
    pub kind: CoercionKind,
    /// JSON pointer into the value (`/limit`, `/items/0`), `""` for the root.
    pub path: String,
}

impl fmt::Display for Coercion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let at = ValidationIssue {
            path: self.path.clone(),
            message: String::new(),
        };
        write!(f, "{} at {}", self.kind.as_str(), at.display_path())
    }
}

/// Coerces `value` in place towards `schema` (a whole tool schema; `$ref`s resolve against it)
/// and returns what was changed, in the order it was changed.
pub fn coerce(schema: &Value, value: &mut Value) -> Vec<Coercion> {
    let mut coercer = Coercer {
        root: schema,
        done: Vec::new(),
        visits: 0,
        in_wrap: false,
    };
    let mut path = String::new();
    coercer.visit(schema, value, &mut path, 0);
    coercer.done
}

struct Coercer<'a> {
    root: &'a Value,
    done: Vec<Coercion>,
    visits: usize,
    /// Inside a value this pass wrapped in an array: no second wrap below it, or a recursive
    /// schema (`items: {"$ref": "#"}`) would nest the value as deep as the depth limit, and
    /// validating such a value against a recursive union can take exponential time.
    in_wrap: bool,
}

impl<'a> Coercer<'a> {
    fn record(&mut self, kind: CoercionKind, path: &str) {
        self.done.push(Coercion {
            kind,
            path: path.to_owned(),
        });
    }

    fn visit(&mut self, schema: &'a Value, value: &mut Value, path: &mut String, depth: usize) {
        self.visits += 1;
        if depth > MAX_DEPTH || self.visits > MAX_VISITS {
            return;
        }
        let (schema, _) = deref(self.root, schema);
        let Some(object) = schema.as_object() else {
            return;
        };
        if let Some(Value::Array(branches)) = object.get("allOf") {
            for branch in branches {
                self.visit(branch, value, path, depth + 1);
            }
        }
        for union in ["anyOf", "oneOf"] {
            if let Some(Value::Array(branches)) = object.get(union) {
                self.visit_union(branches, value, path, depth);
            }
        }
        let outer = self.in_wrap;
        if let Some(types) = declared_types(schema)
            && !types.iter().any(|t| type_matches(t, value))
            && let Some((converted, kind)) = convert(value, &types, !self.in_wrap)
        {
            *value = converted;
            self.record(kind, path);
            self.in_wrap |= kind == CoercionKind::WrapInArray;
        }
        self.match_enum_case(object, value, path);
        match value {
            Value::Object(members) => self.visit_members(object, members, path, depth),
            Value::Array(items) => self.visit_items(object, items, path, depth),
            _ => {}
        }
        self.in_wrap = outer;
    }

    /// In `anyOf`/`oneOf`, coerce only towards a single branch: the one that already admits the
    /// value's type, or else the one branch some conversion fits. Two candidates: leave it.
    fn visit_union(
        &mut self,
        branches: &'a [Value],
        value: &mut Value,
        path: &mut String,
        depth: usize,
    ) {
        let admitting: Vec<&Value> = branches
            .iter()
            .filter(|b| admits(self.root, b, value))
            .collect();
        if let [branch] = admitting[..] {
            self.visit(branch, value, path, depth + 1);
            return;
        }
        if !admitting.is_empty() {
            return;
        }
        let allow_wrap = !self.in_wrap;
        let mut fits = branches.iter().filter_map(|branch| {
            let types = declared_types(deref(self.root, branch).0)?;
            convert(value, &types, allow_wrap).map(|fit| (branch, fit))
        });
        if let (Some((branch, (converted, kind))), None) = (fits.next(), fits.next()) {
            *value = converted;
            self.record(kind, path);
            let outer = self.in_wrap;
            self.in_wrap |= kind == CoercionKind::WrapInArray;
            self.visit(branch, value, path, depth + 1);
            self.in_wrap = outer;
        }
    }

    fn match_enum_case(&mut self, schema: &Map<String, Value>, value: &mut Value, path: &str) {
        let Value::String(given) = &*value else {
            return;
        };
        let allowed: Vec<&Value> = match (schema.get("enum"), schema.get("const")) {
            (Some(Value::Array(values)), _) => values.iter().collect(),
            (_, Some(constant)) => vec![constant],
            _ => return,
        };
        if allowed.iter().any(|v| v.as_str() == Some(given.as_str())) {
            return;
        }
        let mut same_case = allowed
            .iter()
            .filter_map(|v| v.as_str())
            .filter(|v| v.to_lowercase() == given.trim().to_lowercase());
        if let (Some(only), None) = (same_case.next(), same_case.next()) {
            *value = Value::String(only.to_owned());
            self.record(CoercionKind::EnumCase, path);
        }
    }

    fn visit_members(
        &mut self,
        schema: &'a Map<String, Value>,
        members: &mut Map<String, Value>,
        path: &mut String,
        depth: usize,
    ) {
        let properties = schema.get("properties").and_then(Value::as_object);
        let required = |key: &str| {
            schema
                .get("required")
                .and_then(Value::as_array)
                .is_some_and(|r| r.iter().any(|k| k.as_str() == Some(key)))
        };
        let extra = schema.get("additionalProperties").filter(|s| s.is_object());
        let keys: Vec<String> = members.keys().cloned().collect();
        for key in keys {
            let Some(sub) = properties.and_then(|p| p.get(&key)).or(extra) else {
                continue;
            };
            let len = path.len();
            push_pointer_segment(path, &key);
            let member = members.get_mut(&key).expect("key listed above");
            if member.is_null() && !required(&key) && !admits(self.root, sub, member) {
                members.remove(&key);
                self.record(CoercionKind::DropNullOptional, path);
            } else {
                self.visit(sub, member, path, depth + 1);
            }
            path.truncate(len);
        }
    }

    fn visit_items(
        &mut self,
        schema: &'a Map<String, Value>,
        items: &mut [Value],
        path: &mut String,
        depth: usize,
    ) {
        // 2020-12 `prefixItems` + `items`; draft-04..07 tuple `items` + `additionalItems`.
        let (prefix, rest) = match (schema.get("prefixItems"), schema.get("items")) {
            (Some(Value::Array(prefix)), rest) => (prefix.as_slice(), rest),
            (None, Some(Value::Array(prefix))) => {
                (prefix.as_slice(), schema.get("additionalItems"))
            }
            (_, rest) => (&[][..], rest),
        };
        for (i, item) in items.iter_mut().enumerate() {
            let Some(sub) = prefix.get(i).or(rest) else {
                continue;
            };
            let len = path.len();
            path.push('/');
            path.push_str(&i.to_string());
            self.visit(sub, item, path, depth + 1);
            path.truncate(len);
        }
    }
}

fn push_pointer_segment(path: &mut String, key: &str) {
    path.push('/');
    path.push_str(&key.replace('~', "~0").replace('/', "~1"));
}

/// The JSON types `schema` allows, from `type`, or implied by `properties`/`items`/`enum`/
/// `const`; `None` when it does not say.
fn declared_types(schema: &Value) -> Option<Vec<&str>> {
    match schema.get("type") {
        Some(Value::String(t)) => return Some(vec![t.as_str()]),
        Some(Value::Array(ts)) => return Some(ts.iter().filter_map(Value::as_str).collect()),
        _ => {}
    }
    let object = schema.as_object()?;
    if ["properties", "required", "additionalProperties"]
        .iter()
        .any(|k| object.contains_key(*k))
    {
        return Some(vec!["object"]);
    }
    if object.contains_key("items") || object.contains_key("prefixItems") {
        return Some(vec!["array"]);
    }
    let values: Vec<&Value> = match (object.get("enum"), object.get("const")) {
        (Some(Value::Array(values)), _) => values.iter().collect(),
        (_, Some(constant)) => vec![constant],
        _ => return None,
    };
    let mut types: Vec<&str> = values.iter().map(|v| type_of(v)).collect();
    types.sort_unstable();
    types.dedup();
    Some(types)
}

/// Whether `schema` admits the value's JSON type (types only: no bounds, no patterns).
fn admits(root: &Value, schema: &Value, value: &Value) -> bool {
    let (schema, _) = deref(root, schema);
    if let Some(types) = declared_types(schema) {
        return types.iter().any(|t| type_matches(t, value));
    }
    for union in ["anyOf", "oneOf"] {
        if let Some(Value::Array(branches)) = schema.get(union) {
            // Bounded: `admits` on a union only looks at branch types, not deeper unions.
            return branches.iter().any(|b| {
                declared_types(deref(root, b).0)
                    .is_none_or(|ts| ts.iter().any(|t| type_matches(t, value)))
            });
        }
    }
    !matches!(schema, Value::Bool(false))
}

fn type_of(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_f64() => "number",
        Value::Number(_) => "integer",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

fn type_matches(t: &str, value: &Value) -> bool {
    match (t, value) {
        ("integer", Value::Number(n)) => {
            n.is_i64() || n.is_u64() || n.as_f64().is_some_and(|f| f.fract() == 0.0)
        }
        ("number", Value::Number(_)) => true,
        _ => t == type_of(value) || (t == "number" && type_of(value) == "integer"),
    }
}

/// The first conversion of `value` into one of `types` that keeps its meaning.
fn convert(value: &Value, types: &[&str], allow_wrap: bool) -> Option<(Value, CoercionKind)> {
    let wants = |t: &str| types.contains(&t);
    match value {
        Value::String(text) => {
            let trimmed = text.trim();
            if (wants("object") || wants("array"))
                && trimmed.starts_with(['{', '['])
                && let Ok(read) = read_lenient(trimmed)
                && types.iter().any(|t| type_matches(t, &read.value))
            {
                return Some((read.value, CoercionKind::ParseEmbeddedJson));
            }
            if (wants("integer") || wants("number"))
                && let Some(number) = parse_number(trimmed)
                && types.iter().any(|t| type_matches(t, &number))
            {
                return Some((number, CoercionKind::StringToNumber));
            }
            if wants("boolean") {
                match trimmed.to_ascii_lowercase().as_str() {
                    "true" => return Some((Value::Bool(true), CoercionKind::StringToBoolean)),
                    "false" => return Some((Value::Bool(false), CoercionKind::StringToBoolean)),
                    _ => {}
                }
            }
        }
        Value::Number(n) if wants("string") => {
            return Some((Value::String(n.to_string()), CoercionKind::ScalarToString));
        }
        Value::Bool(b) if wants("string") => {
            return Some((Value::String(b.to_string()), CoercionKind::ScalarToString));
        }
        Value::Array(items)
            if items.len() == 1 && types.iter().any(|t| type_matches(t, &items[0])) =>
        {
            return Some((items[0].clone(), CoercionKind::UnwrapSingleItemArray));
        }
        _ => {}
    }
    if allow_wrap && wants("array") && !value.is_array() && !value.is_null() {
        return Some((Value::Array(vec![value.clone()]), CoercionKind::WrapInArray));
    }
    None
}

/// A number written as a string: JSON's number syntax after trimming, nothing looser
/// (`"12px"`, `"1,000"`, `"NaN"` and `"0x1F"` stay strings).
fn parse_number(text: &str) -> Option<Value> {
    if text.is_empty()
        || !text
            .bytes()
            .all(|b| b.is_ascii_digit() || b"+-.eE".contains(&b))
    {
        return None;
    }
    match serde_json::from_str::<Value>(text.strip_prefix('+').unwrap_or(text)) {
        Ok(number @ Value::Number(_)) => Some(number),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn run(schema: Value, mut value: Value) -> (Value, Vec<String>) {
        // Sorted: member order depends on serde_json's map features.
        let mut done: Vec<String> = coerce(&schema, &mut value)
            .iter()
            .map(ToString::to_string)
            .collect();
        done.sort();
        (value, done)
    }

    #[test]
    fn scalars_take_the_type_the_schema_asks_for() {
        let schema = json!({
            "type": "object",
            "properties": {
                "limit": {"type": "integer"},
                "ratio": {"type": "number"},
                "recursive": {"type": "boolean"},
                "id": {"type": "string"}
            }
        });
        let (value, done) = run(
            schema,
            json!({"limit": " 5 ", "ratio": "2.5", "recursive": "TRUE", "id": 1234}),
        );
        assert_eq!(
            value,
            json!({"limit": 5, "ratio": 2.5, "recursive": true, "id": "1234"})
        );
        assert_eq!(
            done,
            [
                "scalar-to-string at $.id",
                "string-to-boolean at $.recursive",
                "string-to-number at $.limit",
                "string-to-number at $.ratio"
            ]
        );
    }

    #[test]
    fn strings_that_are_not_plain_numbers_stay_strings() {
        let schema = json!({"properties": {"n": {"type": "integer"}}});
        for text in ["12px", "1,000", "NaN", "0x1F", "", "2.5", "one"] {
            let (value, done) = run(schema.clone(), json!({ "n": text }));
            assert_eq!(value, json!({ "n": text }), "{text}");
            assert!(done.is_empty());
        }
    }

    #[test]
    fn arrays_wrap_unwrap_and_parse() {
        let schema = json!({
            "type": "object",
            "properties": {
                "paths": {"type": "array", "items": {"type": "string"}},
                "ids": {"type": "array", "items": {"type": "integer"}},
                "path": {"type": "string"},
                "edits": {"type": "array", "items": {"type": "object", "properties": {"n": {"type": "integer"}}}}
            }
        });
        let (value, done) = run(
            schema,
            json!({"paths": "/tmp/a", "ids": "7", "path": ["/tmp/b"], "edits": "[{\"n\": \"1\"}]"}),
        );
        assert_eq!(
            value,
            json!({"paths": ["/tmp/a"], "ids": [7], "path": "/tmp/b", "edits": [{"n": 1}]})
        );
        assert_eq!(
            done,
            [
                "parse-embedded-json at $.edits",
                "string-to-number at $.edits[0].n",
                "string-to-number at $.ids[0]",
                "unwrap-single-item-array at $.path",
                "wrap-in-array at $.ids",
                "wrap-in-array at $.paths"
            ]
        );
    }

    #[test]
    fn nulls_enums_refs_and_unions() {
        let schema = json!({
            "type": "object",
            "required": ["mode"],
            "properties": {
                "mode": {"$ref": "#/$defs/mode"},
                "note": {"type": "string"},
                "maybe": {"type": ["string", "null"]},
                "size": {"anyOf": [{"type": "integer"}, {"type": "null"}]},
                "either": {"anyOf": [{"type": "integer"}, {"type": "boolean"}]}
            },
            "$defs": {"mode": {"enum": ["fast", "Safe", "safe "]}}
        });
        let (value, done) = run(
            schema,
            json!({"mode": "FAST", "note": null, "maybe": null, "size": "3", "either": "true"}),
        );
        assert_eq!(
            value,
            json!({"mode": "fast", "maybe": null, "size": 3, "either": true})
        );
        assert_eq!(
            done,
            [
                "drop-null-optional at $.note",
                "enum-case at $.mode",
                "string-to-boolean at $.either",
                "string-to-number at $.size"
            ]
        );
        // "safe" matches two enum values case-insensitively: left alone.
        let schema = json!({"enum": ["Safe", "SAFE"]});
        assert_eq!(run(schema, json!("safe")).1.len(), 0);
    }

    #[test]
    fn required_nulls_and_ambiguous_unions_are_left_alone() {
        let schema = json!({
            "type": "object",
            "required": ["path"],
            "properties": {
                "path": {"type": "string"},
                "v": {"oneOf": [{"type": "integer"}, {"type": "number"}]}
            }
        });
        let (value, done) = run(schema, json!({"path": null, "v": "4"}));
        assert_eq!(value, json!({"path": null, "v": "4"}));
        assert!(done.is_empty());
    }

    #[test]
    fn a_recursive_schema_wraps_once() {
        let schema = json!({"type": "array", "items": {"$ref": "#"}});
        let (value, done) = run(schema, json!(1));
        assert_eq!(value, json!([1]));
        assert_eq!(done, ["wrap-in-array at $"]);
        let schema =
            json!({"anyOf": [{"type": "array", "items": {"$ref": "#"}}, {"type": "null"}]});
        assert_eq!(run(schema, json!("x")).0, json!(["x"]));
    }

    #[test]
    fn hostile_schemas_terminate() {
        let schema = json!({"$ref": "#", "anyOf": [{"$ref": "#"}, {"$ref": "#"}]});
        let mut value = json!([[[[[[1]]]]]]);
        coerce(&schema, &mut value);
        let schema = json!({"items": {"$ref": "#"}, "type": "array"});
        let mut deep = json!(1);
        for _ in 0..200 {
            deep = json!([deep]);
        }
        coerce(&schema, &mut deep);
    }
}
