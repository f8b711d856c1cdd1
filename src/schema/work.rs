//! An upper bound on how much checking one validation will take, computed before validating.
//!
//! The validator has no memo: under a recursive union (`anyOf` of several branches that each
//! `$ref` back) every level of the instance tries every branch, so the work grows as
//! branches^depth. Fuzzing found a three-branch schema where 12 nested arrays took 7 s — on the
//! JS thread, where `tool_invoke` checks arguments. An MCP server chooses the schema and a model
//! the arguments, so neither is trusted: validation refuses an instance whose bound exceeds an
//! allowance linear in the instance's size, which no ordinary schema and argument come near.

use std::collections::HashMap;

use serde_json::Value;

use super::resolve_local_ref;

/// Checks any validation may take, however small the instance.
const BASE_STEPS: usize = 100_000;
/// Further checks allowed per value in the instance: a value is checked against its
/// `properties`/`items` schema and the branches of a few unions around it, not dozens.
const STEPS_PER_VALUE: usize = 32;

/// The allowance for `instance`: `BASE_STEPS` plus `STEPS_PER_VALUE` per value in it.
pub(super) fn step_allowance(instance: &Value) -> usize {
    let mut values = 0usize;
    let mut stack = vec![instance];
    while let Some(node) = stack.pop() {
        values += 1;
        match node {
            Value::Object(map) => stack.extend(map.values()),
            Value::Array(items) => stack.extend(items),
            _ => {}
        }
    }
    BASE_STEPS.saturating_add(values.saturating_mul(STEPS_PER_VALUE))
}

/// True when validating `instance` against `root` could take more than `allowance`
/// (schema, value) checks. Over-counts (every `patternProperties` schema applies to every
/// property, every `if`/`then`/`else` is taken), never under-counts for references it can
/// resolve: local pointers, `$anchor`/`$dynamicAnchor` names and embedded `$id`s.
pub(super) fn exceeds(root: &Value, instance: &Value, allowance: usize) -> bool {
    let targets = RefTargets::collect(root);
    let mut steps = 0usize;
    let mut stack = vec![(root, instance)];
    while let Some((schema, value)) = stack.pop() {
        steps += 1;
        if steps > allowance {
            return true;
        }
        let Value::Object(keywords) = schema else {
            continue;
        };
        for key in ["$ref", "$dynamicRef", "$recursiveRef"] {
            if let Some(target) = keywords
                .get(key)
                .and_then(Value::as_str)
                .and_then(|r| targets.resolve(root, r))
            {
                stack.push((target, value));
            }
        }
        for key in ["allOf", "anyOf", "oneOf"] {
            if let Some(Value::Array(branches)) = keywords.get(key) {
                stack.extend(branches.iter().map(|b| (b, value)));
            }
        }
        for key in ["not", "if", "then", "else"] {
            if let Some(sub) = keywords.get(key) {
                stack.push((sub, value));
            }
        }
        for key in ["dependentSchemas", "dependencies"] {
            if let Some(Value::Object(subs)) = keywords.get(key) {
                stack.extend(subs.values().map(|s| (s, value)));
            }
        }
        match value {
            Value::Array(items) => {
                for (i, item) in items.iter().enumerate() {
                    match keywords.get("items") {
                        // Draft 4-7 tuples: one schema per position.
                        Some(Value::Array(tuple)) => stack.extend(tuple.get(i).map(|s| (s, item))),
                        Some(sub) => stack.push((sub, item)),
                        None => {}
                    }
                    if let Some(Value::Array(prefix)) = keywords.get("prefixItems") {
                        stack.extend(prefix.get(i).map(|s| (s, item)));
                    }
                    for key in ["additionalItems", "unevaluatedItems", "contains"] {
                        if let Some(sub) = keywords.get(key) {
                            stack.push((sub, item));
                        }
                    }
                }
            }
            Value::Object(members) => {
                let properties = keywords.get("properties");
                for (name, member) in members {
                    if let Some(sub) = properties.and_then(|p| p.get(name)) {
                        stack.push((sub, member));
                    }
                    if let Some(Value::Object(patterns)) = keywords.get("patternProperties") {
                        stack.extend(patterns.values().map(|s| (s, member)));
                    }
                    for key in ["additionalProperties", "unevaluatedProperties"] {
                        if let Some(sub) = keywords.get(key) {
                            stack.push((sub, member));
                        }
                    }
                    if let Some(sub) = keywords.get("propertyNames") {
                        stack.push((sub, &Value::Null));
                    }
                }
            }
            _ => {}
        }
    }
    false
}

/// Where non-pointer references land: anchors by name, embedded resources by `$id`.
struct RefTargets<'a> {
    anchors: HashMap<&'a str, &'a Value>,
    ids: Vec<(&'a str, &'a Value)>,
}

impl<'a> RefTargets<'a> {
    fn collect(root: &'a Value) -> Self {
        let mut targets = RefTargets {
            anchors: HashMap::new(),
            ids: Vec::new(),
        };
        let mut stack = vec![root];
        while let Some(node) = stack.pop() {
            match node {
                Value::Object(map) => {
                    for key in ["$anchor", "$dynamicAnchor", "$recursiveAnchor"] {
                        if let Some(name) = map.get(key).and_then(Value::as_str) {
                            targets.anchors.insert(name, node);
                        }
                    }
                    if let Some(id) = map.get("$id").and_then(Value::as_str) {
                        targets.ids.push((id.trim_end_matches('#'), node));
                    }
                    stack.extend(map.values());
                }
                Value::Array(items) => stack.extend(items),
                _ => {}
            }
        }
        targets
    }

    fn resolve(&self, root: &'a Value, reference: &str) -> Option<&'a Value> {
        let (base, fragment) = reference.split_once('#').unwrap_or((reference, ""));
        let document = if base.is_empty() {
            root
        } else {
            // Relative or absolute: match the embedded resource by its `$id`, either way round.
            self.ids
                .iter()
                .find(|(id, _)| *id == base || id.ends_with(&format!("/{base}")))
                .map(|(_, node)| *node)?
        };
        if fragment.is_empty() || fragment.starts_with('/') {
            resolve_local_ref(document, &format!("#{fragment}"))
        } else {
            self.anchors.get(fragment).copied()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn nested_arrays(depth: usize) -> Value {
        (0..depth).fold(json!("leaf"), |v, _| json!([v]))
    }

    /// Three branches that each recurse: the shape fuzzing found.
    fn recursive_union() -> Value {
        json!({"$defs": {"n": {"anyOf": [
            {"type": "array", "items": {"$ref": "#/$defs/n"}},
            {"type": "array", "items": {"$ref": "#/$defs/n"}, "minItems": 1},
            {"type": "array", "items": {"$ref": "#/$defs/n"}, "maxItems": 3}
        ]}}, "$ref": "#/$defs/n"})
    }

    #[test]
    fn a_recursive_union_over_deep_values_is_over_the_allowance() {
        let schema = recursive_union();
        let shallow = nested_arrays(4);
        assert!(!exceeds(&schema, &shallow, step_allowance(&shallow)));
        let deep = nested_arrays(14);
        assert!(exceeds(&schema, &deep, step_allowance(&deep)));
    }

    #[test]
    fn anchors_and_embedded_ids_are_followed() {
        for schema in [
            json!({"$defs": {"n": {"$anchor": "node", "anyOf": [
                {"items": {"$ref": "#node"}}, {"items": {"$ref": "#node"}}, {"items": {"$ref": "#node"}}
            ]}}, "$ref": "#node"}),
            json!({"$defs": {"n": {"$id": "https://example.com/node.json", "anyOf": [
                {"items": {"$ref": "node.json"}}, {"items": {"$ref": "node.json"}}, {"items": {"$ref": "https://example.com/node.json#"}}
            ]}}, "$ref": "https://example.com/node.json"}),
        ] {
            let deep = nested_arrays(14);
            assert!(exceeds(&schema, &deep, step_allowance(&deep)), "{schema}");
        }
    }

    #[test]
    fn large_ordinary_arguments_are_within_the_allowance() {
        let schema = json!({"type": "object", "properties": {
            "rows": {"type": "array", "items": {"anyOf": [
                {"type": "object", "properties": {"id": {"type": "integer"}, "tags": {"type": "array", "items": {"type": "string"}}}},
                {"type": "null"}
            ]}}
        }});
        let rows: Vec<Value> = (0..20_000)
            .map(|i| json!({"id": i, "tags": ["a", "b", "c"]}))
            .collect();
        let instance = json!({ "rows": rows });
        assert!(!exceeds(&schema, &instance, step_allowance(&instance)));
    }
}
