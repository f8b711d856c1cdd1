//! What is pinned of a tool, its digest, and a server's pins.

use crate::canonical::{Sink, write_object, write_string};
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

/// The position of a [`PINNED_FIELDS`] name in canonical (UTF-16) key order.
fn canonical_position(field: &str) -> Option<usize> {
    Some(match field {
        "annotations" => 0,
        "description" => 1,
        "execution" => 2,
        "inputSchema" => 3,
        "name" => 4,
        "outputSchema" => 5,
        "title" => 6,
        _ => return None,
    })
}

/// Lower-case hex SHA-256 of the canonical text (RFC 8785) of the tool's pinned form.
pub fn digest(tool: &Value) -> String {
    // The canonical text of `pinned_form(tool)`, hashed as it is written, without cloning the
    // tool or building the text. One pass over the tool's keys (a handful) rather than a
    // lookup per pinned field.
    let mut pinned = [None; PINNED_FIELDS.len()];
    if let Value::Object(map) = tool {
        for entry in map {
            if let Some(position) = canonical_position(entry.0) {
                pinned[position] = Some(entry);
            }
        }
    }
    let mut hash = HashSink::default();
    write_object(&mut hash, pinned.into_iter().flatten());
    hash.finish_hex()
}

/// Lower-case hex SHA-256 of the canonical text of the server's `instructions` (a JSON string).
pub fn instructions_digest(instructions: &str) -> String {
    let mut hash = HashSink::default();
    write_string(&mut hash, instructions);
    hash.finish_hex()
}

/// Canonical text fed to SHA-256 through a small buffer: the writer emits many pieces of a few
/// bytes (`"`, `:`, `,`), and handing each to the hasher separately costs more than copying it.
struct HashSink {
    hasher: Sha256,
    buffer: Vec<u8>,
}

/// Large enough that the hasher sees whole runs of blocks, small enough to stay in L1.
const HASH_BUFFER: usize = 4096;

impl Default for HashSink {
    fn default() -> Self {
        Self {
            hasher: Sha256::new(),
            buffer: Vec::with_capacity(HASH_BUFFER),
        }
    }
}

impl Sink for HashSink {
    fn push_str(&mut self, text: &str) {
        if self.buffer.len() + text.len() > HASH_BUFFER {
            self.hasher.update(&self.buffer);
            self.buffer.clear();
        }
        if text.len() >= HASH_BUFFER {
            self.hasher.update(text.as_bytes());
        } else {
            self.buffer.extend_from_slice(text.as_bytes());
        }
    }
}

impl HashSink {
    fn finish_hex(mut self) -> String {
        self.hasher.update(&self.buffer);
        sha256_hex(self.hasher.finalize().as_slice())
    }
}

/// Lower-case hex of a SHA-256 output.
fn sha256_hex(hash: &[u8]) -> String {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    hash.iter()
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
        let text = crate::canonical_json(&pinned_form(&tool));
        assert_eq!(digest(&tool), sha256_hex(&Sha256::digest(text.as_bytes())));
        // Longer than the hash buffer, with pieces on both sides of its boundary.
        let long = json!({"name": "n", "description": "x\n".repeat(3000)});
        let text = crate::canonical_json(&long);
        assert!(text.len() > 2 * HASH_BUFFER);
        assert_eq!(digest(&long), sha256_hex(&Sha256::digest(text.as_bytes())));
        assert_eq!(
            instructions_digest("Be\tnice"),
            sha256_hex(&Sha256::digest(br#""Be\tnice""#))
        );
    }

    #[test]
    fn canonical_positions_follow_the_canonical_order() {
        let mut fields = PINNED_FIELDS;
        fields.sort_unstable();
        for (position, field) in fields.iter().enumerate() {
            assert_eq!(canonical_position(field), Some(position));
        }
        assert_eq!(canonical_position("_meta"), None);
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
