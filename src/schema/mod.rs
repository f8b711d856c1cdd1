//! Tool input schemas: the JSDoc signature `tool_inspect` shows the model, and the compiled
//! validator `tool_invoke` runs before `execute`.
//!
//! Pure Rust on `serde_json::Value`: the napi layer converts at the boundary. Tool schemas are
//! untrusted input, so nothing here fetches a remote `$ref`, and every walk over a schema is
//! depth- and cycle-bounded.

mod jsdoc;
mod outline;
mod provider;
mod provider_subset;
#[cfg(test)]
mod samples;
mod validate;
mod work;

pub use jsdoc::{
    MAX_NESTING_DEPTH, describe_tool, describe_tool_showing, needs_exact_schema, schema_to_jsdoc,
};
pub use outline::{Outline, outline};
pub use provider::{
    Effect, MAX_REF_REPEATS, Provider, ProviderSchema, ProviderSchemaError, Rewrite,
    provider_schema, strip_strict_nulls,
};
pub use provider_subset::{SubsetViolation, outside_subset};
pub(crate) use validate::json_type_name;
pub use validate::{
    CompiledSchema, MAX_LISTED_ISSUES, SchemaError, ValidationIssue, format_issues,
};

use serde_json::Value;

/// How many `$ref` hops one lookup may take before we give up (a `$ref` chain that long is
/// either a cycle or hostile).
const MAX_REF_HOPS: usize = 32;

/// Resolves a document-local `$ref` (`#`, `#/$defs/x`, `#/definitions/x`, any `#/json/pointer`)
/// against `root`. Remote, relative and anchor (`#name`) references return `None`: they are
/// never fetched, and JSDoc rendering / default filling treat them as opaque.
pub(crate) fn resolve_local_ref<'a>(root: &'a Value, reference: &str) -> Option<&'a Value> {
    let fragment = reference.strip_prefix('#')?;
    if fragment.is_empty() {
        return Some(root);
    }
    if !fragment.starts_with('/') {
        return None;
    }
    // JSON pointers inside URI fragments may be percent-encoded (`%24defs`, `%20`).
    let decoded = percent_decode(fragment)?;
    root.pointer(&decoded)
}

/// Follows `$ref` from `schema` until it reaches a schema without one (or an unresolvable ref).
/// Returns the final schema and the last reference that was followed, if any.
pub(crate) fn deref<'a>(root: &'a Value, schema: &'a Value) -> (&'a Value, Option<&'a str>) {
    let mut current = schema;
    let mut last = None;
    for _ in 0..MAX_REF_HOPS {
        let Some(reference) = current.get("$ref").and_then(Value::as_str) else {
            return (current, last);
        };
        match resolve_local_ref(root, reference) {
            Some(target) => {
                last = Some(reference);
                current = target;
            }
            None => return (current, last),
        }
    }
    (current, last)
}

/// True for names that read as a JS identifier (`limit`, `_x`, `$id`), so paths can use `.name`
/// and everything else gets `["quoted"]`.
pub(crate) fn is_identifier(s: &str) -> bool {
    let mut chars = s.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_' || c == '$')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '$')
}

fn percent_decode(s: &str) -> Option<String> {
    if !s.contains('%') {
        return Some(s.to_owned());
    }
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = s.get(i + 1..i + 3)?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn resolves_local_refs_only() {
        let root = json!({
            "$defs": {"a": {"type": "string"}, "b c": {"type": "number"}},
            "definitions": {"d": {"$ref": "#/$defs/a"}}
        });
        assert_eq!(resolve_local_ref(&root, "#"), Some(&root));
        assert_eq!(
            resolve_local_ref(&root, "#/$defs/a"),
            Some(&json!({"type": "string"}))
        );
        assert_eq!(
            resolve_local_ref(&root, "#/%24defs/b%20c"),
            Some(&json!({"type": "number"}))
        );
        assert_eq!(resolve_local_ref(&root, "#/$defs/missing"), None);
        assert_eq!(resolve_local_ref(&root, "https://example.com/s.json"), None);
        assert_eq!(resolve_local_ref(&root, "other.json#/a"), None);
        assert_eq!(resolve_local_ref(&root, "#anchor"), None);
        let (target, via) = deref(&root, &root["definitions"]["d"]);
        assert_eq!(target, &json!({"type": "string"}));
        assert_eq!(via, Some("#/$defs/a"));
    }

    #[test]
    fn deref_stops_on_cycles() {
        let root = json!({"$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"$ref": "#/$defs/a"}}});
        let (target, _) = deref(&root, &root["$defs"]["a"]);
        assert!(target.get("$ref").is_some());
    }
}
