//! What is pinned of a tool, its digest, and a server's pins.

use crate::canonical::{canonical_json, write_object};
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;

/// The fields of an MCP `tools/list` entry that reach the model or change what a call does.
/// Anything else a server sends (`_meta`, `icons`, vendor extensions) is not pinned, so it can
/// change without a review.
pub const PINNED_FIELDS: [&str; 7] = [
    "name",
    "title",
    "description",
    "inputSchema",
    "outputSchema",
    "annotations",
    "execution",
];

/// A listing that cannot be pinned or compared.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ListingError {
    /// A `tools/list` entry that is not a JSON object with a string `name`.
    #[error("tool #{index} of the listing has no string `name`")]
    MissingName {
        /// Position of the entry in the listing.
        index: usize,
    },
    /// Two entries with one name: which one a call reaches would be ambiguous.
    #[error("the listing has two tools named `{name}`")]
    DuplicateName {
        /// The repeated name.
        name: String,
    },
}

/// The pinned form of a tool: exactly the [`PINNED_FIELDS`] it has (absent fields stay absent).
pub fn pinned_form(tool: &Value) -> Value {
    let mut form = Map::new();
    for field in PINNED_FIELDS {
        if let Some(value) = tool.get(field) {
            form.insert(field.to_owned(), value.clone());
        }
    }
    Value::Object(form)
}

/// [`PINNED_FIELDS`] in canonical (UTF-16) key order.
const PINNED_FIELDS_CANONICAL_ORDER: [&str; 7] = [
    "annotations",
    "description",
    "execution",
    "inputSchema",
    "name",
    "outputSchema",
    "title",
];

/// Lower-case hex SHA-256 of the canonical text (RFC 8785) of the tool's pinned form.
pub fn digest(tool: &Value) -> String {
    // The canonical text of `pinned_form(tool)`, written without cloning the tool.
    let mut text = String::with_capacity(1024);
    if let Value::Object(map) = tool {
        let entries = PINNED_FIELDS_CANONICAL_ORDER
            .iter()
            .filter_map(|field| map.get_key_value(*field));
        write_object(&mut text, entries);
    } else {
        text.push_str("{}");
    }
    sha256_hex(text.as_bytes())
}

/// Lower-case hex SHA-256 of the canonical text of the server's `instructions` (a JSON string).
pub fn instructions_digest(instructions: &str) -> String {
    sha256_hex(canonical_json(&Value::String(instructions.to_owned())).as_bytes())
}

fn sha256_hex(bytes: &[u8]) -> String {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    Sha256::digest(bytes)
        .iter()
        .flat_map(|byte| [HEX[usize::from(byte >> 4)], HEX[usize::from(byte & 15)]])
        .map(char::from)
        .collect()
}

/// What a human approved of one server: each tool's pinned form by name, and the server's
/// `instructions` as their own entry.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PinnedServer {
    /// Tool name → pinned form (see [`pinned_form`]).
    pub tools: BTreeMap<String, Value>,
    /// The server's `instructions` from `initialize`, if it sent any.
    pub instructions: Option<String>,
}

impl PinnedServer {
    /// Pins a whole listing (`tools/list` entries) and the server's instructions.
    pub fn pin(tools: &[Value], instructions: Option<&str>) -> Result<Self, ListingError> {
        let mut pinned = BTreeMap::new();
        for (index, tool) in tools.iter().enumerate() {
            let name = tool_name(tool, index)?;
            if pinned.insert(name.to_owned(), pinned_form(tool)).is_some() {
                return Err(ListingError::DuplicateName {
                    name: name.to_owned(),
                });
            }
        }
        Ok(Self {
            tools: pinned,
            instructions: instructions.map(str::to_owned),
        })
    }
}

/// The `name` of the listing's entry number `index`.
pub(crate) fn tool_name(tool: &Value, index: usize) -> Result<&str, ListingError> {
    tool.get("name")
        .and_then(Value::as_str)
        .ok_or(ListingError::MissingName { index })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn pinned_form_keeps_exactly_the_pinned_fields() {
        let tool = json!({
            "name": "add", "description": "Adds", "inputSchema": {"type": "object"},
            "_meta": {"x": 1}, "icons": [], "annotations": {"readOnlyHint": true}
        });
        assert_eq!(
            pinned_form(&tool),
            json!({"name": "add", "description": "Adds", "inputSchema": {"type": "object"},
                   "annotations": {"readOnlyHint": true}})
        );
    }

    #[test]
    fn digest_ignores_unpinned_fields_spelling_and_order() {
        let a: Value = serde_json::from_str(
            r#"{"name":"t","inputSchema":{"type":"object","maximum":10},"_meta":{"v":1}}"#,
        )
        .unwrap();
        let b: Value = serde_json::from_str(
            r#"{ "inputSchema" : { "maximum" : 10.0, "type" : "object" }, "name" : "t" }"#,
        )
        .unwrap();
        assert_eq!(digest(&a), digest(&b));
        assert_eq!(digest(&a).len(), 64);
        let c = json!({"name": "t", "inputSchema": {"type": "object", "maximum": 11}});
        assert_ne!(digest(&a), digest(&c));
    }

    #[test]
    fn digest_is_sha256_of_the_canonical_text() {
        // Expected values computed independently: printf '%s' '<canonical text>' | sha256sum
        assert_eq!(
            digest(&json!({"name": "a"})),
            "d9d719b27480b55cd4918020e7473e716ed3569c8adafe926cf9b10b4f8ef064"
        );
        assert_eq!(
            digest(&json!({"name": "add", "description": "Adds \"x\"", "icons": []})),
            "1e0b1debcf97547cf8e7632441ead62d39945a7cb62c96faf8b29543391e9799"
        );
    }

    #[test]
    fn digest_hashes_exactly_the_canonical_pinned_form() {
        let tool = json!({"title": "T", "name": "n", "outputSchema": {}, "inputSchema": {},
            "execution": {}, "description": "d", "annotations": {}, "extra": 1});
        assert_eq!(
            digest(&tool),
            sha256_hex(canonical_json(&pinned_form(&tool)).as_bytes())
        );
    }

    #[test]
    fn pin_rejects_nameless_and_duplicate_tools() {
        assert_eq!(
            PinnedServer::pin(&[json!({"name": "a"}), json!({"description": "x"})], None),
            Err(ListingError::MissingName { index: 1 })
        );
        assert_eq!(
            PinnedServer::pin(&[json!({"name": "a"}), json!({"name": "a"})], None),
            Err(ListingError::DuplicateName { name: "a".into() })
        );
        let pins = PinnedServer::pin(&[json!({"name": "a", "x": 1})], Some("Be nice")).unwrap();
        assert_eq!(pins.tools["a"], json!({"name": "a"}));
        assert_eq!(pins.instructions.as_deref(), Some("Be nice"));
        assert_ne!(
            instructions_digest("Be nice"),
            instructions_digest("Be nice.")
        );
    }
}
