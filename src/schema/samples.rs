//! Deterministic instances generated from a schema, for tests that compare two schemas'
//! verdicts: values that should pass (each property's first shape) and near misses (a property
//! removed, nulled, of the wrong type, out of range, an extra property). Which of them are valid
//! is left to the validator; the generator only aims to land on both sides of the boundary.

use serde_json::{Map, Value, json};

use super::deref;

/// Most instances per schema.
const MAX_SAMPLES: usize = 48;
/// Alternatives kept per nested value.
const MAX_ALTERNATIVES: usize = 4;
/// Deeper values are `null`.
const MAX_DEPTH: usize = 6;
/// Near misses are made for at most this many properties of an object.
const MAX_VARIED_PROPERTIES: usize = 6;

/// Candidate instances for `schema` (resolving its local `$ref`s).
pub(crate) fn samples(schema: &Value) -> Vec<Value> {
    let mut out = Generator { root: schema }.values(schema, 0, MAX_SAMPLES);
    out.dedup();
    out.truncate(MAX_SAMPLES);
    out
}

struct Generator<'a> {
    root: &'a Value,
}

impl<'a> Generator<'a> {
    fn values(&self, schema: &'a Value, depth: usize, limit: usize) -> Vec<Value> {
        if depth > MAX_DEPTH {
            return vec![Value::Null];
        }
        let (schema, _) = deref(self.root, schema);
        let Some(map) = schema.as_object() else {
            return vec![json!(1), Value::Null];
        };
        if let Some(value) = map.get("const") {
            return vec![value.clone(), json!("zz-other")];
        }
        if let Some(values) = map.get("enum").and_then(Value::as_array) {
            let mut out: Vec<Value> = values.iter().take(2).cloned().collect();
            out.extend(values.last().cloned());
            out.push(json!("zz-not-listed"));
            return out;
        }
        for union in ["anyOf", "oneOf"] {
            if let Some(branches) = map.get(union).and_then(Value::as_array) {
                let mut out: Vec<Value> = branches
                    .iter()
                    .filter_map(|b| self.values(b, depth + 1, 2).into_iter().next())
                    .collect();
                out.push(json!({ "zz_unmatched": true }));
                return out;
            }
        }
        if let Some(branches) = map.get("allOf").and_then(Value::as_array) {
            let mut merged = Map::new();
            for branch in branches {
                if let Some(Value::Object(fields)) =
                    self.values(branch, depth + 1, 1).into_iter().next()
                {
                    merged.extend(fields);
                }
            }
            if !merged.is_empty() {
                return vec![Value::Object(merged), json!({})];
            }
        }
        let types: Vec<&str> = match map.get("type") {
            Some(Value::String(t)) => vec![t.as_str()],
            Some(Value::Array(list)) => list.iter().filter_map(Value::as_str).collect(),
            _ if map.contains_key("properties") => vec!["object"],
            _ if map.contains_key("items") => vec!["array"],
            _ => return vec![json!(1), json!("x"), Value::Null, json!({})],
        };
        let mut out = Vec::new();
        for t in types {
            out.extend(self.typed(map, t, depth, limit));
        }
        out
    }

    fn typed(
        &self,
        map: &'a Map<String, Value>,
        type_name: &str,
        depth: usize,
        limit: usize,
    ) -> Vec<Value> {
        let number = |key: &str| map.get(key).and_then(Value::as_f64);
        match type_name {
            "string" => {
                let min = map.get("minLength").and_then(Value::as_u64).unwrap_or(0) as usize;
                let sample = match map.get("format").and_then(Value::as_str) {
                    Some("date-time") => "2024-05-06T07:08:09Z".to_owned(),
                    Some("date") => "2024-05-06".to_owned(),
                    Some("email") => "a@example.com".to_owned(),
                    Some("uri" | "url") => "https://example.com/x".to_owned(),
                    Some("uuid") => "123e4567-e89b-12d3-a456-426614174000".to_owned(),
                    _ => "a".repeat(min.max(3)),
                };
                vec![json!(sample), json!(""), json!(7)]
            }
            "integer" | "number" => {
                let low = number("minimum").or(number("exclusiveMinimum").map(|m| m + 1.0));
                let high = number("maximum");
                let base = low.unwrap_or(1.0).ceil();
                let mut out = vec![json!(base as i64)];
                if let Some(h) = high {
                    out.push(json!(h as i64 + 1));
                }
                if let Some(l) = low {
                    out.push(json!(l as i64 - 1));
                }
                out.push(if type_name == "integer" {
                    json!(base + 0.5)
                } else {
                    json!("1")
                });
                out
            }
            "boolean" => vec![json!(true), json!("true")],
            "null" => vec![Value::Null, json!(0)],
            "array" => {
                let items = map.get("items").filter(|i| !i.is_array());
                let item_values = items
                    .map(|i| self.values(i, depth + 1, 2))
                    .unwrap_or_else(|| vec![json!(1)]);
                let first = item_values.first().cloned().unwrap_or(Value::Null);
                let mut out = vec![json!([first.clone()]), json!([])];
                if let Some(second) = item_values.get(1) {
                    out.push(json!([first, second.clone()]));
                }
                out.push(json!({}));
                out
            }
            "object" => self.objects(map, depth, limit),
            _ => vec![Value::Null],
        }
    }

    /// The object with every property, with only the required ones, and near misses of both.
    fn objects(&self, map: &'a Map<String, Value>, depth: usize, limit: usize) -> Vec<Value> {
        let empty = Map::new();
        let properties = map
            .get("properties")
            .and_then(Value::as_object)
            .unwrap_or(&empty);
        let required: Vec<&str> = map
            .get("required")
            .and_then(Value::as_array)
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let alternatives: Vec<(&String, Vec<Value>)> = properties
            .iter()
            .map(|(name, schema)| {
                let mut values = self.values(schema, depth + 1, MAX_ALTERNATIVES);
                values.truncate(MAX_ALTERNATIVES);
                (name, values)
            })
            .collect();
        let full: Map<String, Value> = alternatives
            .iter()
            .map(|(name, values)| {
                (
                    (*name).clone(),
                    values.first().cloned().unwrap_or(Value::Null),
                )
            })
            .collect();
        let minimal: Map<String, Value> = full
            .iter()
            .filter(|(name, _)| required.contains(&name.as_str()))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        let mut extra = full.clone();
        extra.insert("zz_extra".into(), json!("x"));
        let mut out = vec![
            Value::Object(full.clone()),
            Value::Object(minimal),
            Value::Object(extra),
            json!("not an object"),
        ];
        for (name, values) in alternatives.iter().take(MAX_VARIED_PROPERTIES) {
            let mut without = full.clone();
            without.remove(name.as_str());
            out.push(Value::Object(without));
            let mut nulled = full.clone();
            nulled.insert((*name).clone(), Value::Null);
            out.push(Value::Object(nulled));
            for alternative in values.iter().skip(1) {
                let mut varied = full.clone();
                varied.insert((*name).clone(), alternative.clone());
                out.push(Value::Object(varied));
            }
            if out.len() >= limit {
                break;
            }
        }
        out.truncate(limit.max(2));
        out
    }
}
