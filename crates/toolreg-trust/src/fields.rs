//! The texts of a tool definition that reach the model, and stripping them of hidden characters.

use crate::hidden::{HiddenRun, strip_hidden};
use serde_json::Value;
use std::fmt::Write;

/// How a text field is treated.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Role {
    /// A `description` or `title`: prose the model reads. Stripped and scanned.
    Prose,
    /// A tool or property name: scanned for hidden characters only, so only non-ASCII names
    /// are listed (hidden characters are never ASCII).
    Name,
    /// A string inside `default`, `examples`, `enum` or `const`: the model sees it too, so it is
    /// scanned, but it is data and is not rewritten.
    Value,
}

/// One text of a tool, with its location.
pub(crate) struct TextField<'a> {
    /// RFC 6901 pointer from the tool's root, e.g. `/inputSchema/properties/q/description`.
    pub pointer: String,
    pub text: &'a str,
    pub role: Role,
    /// For texts inside an input property: that property's name (the innermost one).
    pub property: Option<&'a str>,
}

impl TextField<'_> {
    /// The field as findings name it: the pointer's segments, unescaped, joined by `/`.
    pub fn path(&self) -> String {
        self.pointer[1..].replace("~1", "/").replace("~0", "~")
    }

    /// Whether this is the `description` of something (not a property named "description").
    pub fn is_description(&self) -> bool {
        self.role == Role::Prose && self.pointer.ends_with("/description")
    }
}

/// JSON-Schema keywords whose value maps names to subschemas (the keys there are property
/// names, not keywords).
const NAMED_SUBSCHEMAS: [&str; 5] = [
    "properties",
    "patternProperties",
    "$defs",
    "definitions",
    "dependentSchemas",
];

/// JSON-Schema keywords holding data rather than subschemas.
const DATA_KEYWORDS: [&str; 4] = ["default", "examples", "enum", "const"];

/// Every text of `tool` that the model sees: name, title, description, and inside
/// `inputSchema`/`outputSchema` every `title`/`description`, property name and data string.
pub(crate) fn text_fields(tool: &Value) -> Vec<TextField<'_>> {
    let mut fields = Vec::new();
    for (key, role) in [
        ("name", Role::Name),
        ("title", Role::Prose),
        ("description", Role::Prose),
    ] {
        if let Some(text) = tool.get(key).and_then(Value::as_str) {
            if role == Role::Name && text.is_ascii() {
                continue;
            }
            fields.push(TextField {
                pointer: format!("/{key}"),
                text,
                role,
                property: None,
            });
        }
    }
    for key in ["inputSchema", "outputSchema"] {
        if let Some(schema) = tool.get(key) {
            let mut walk = SchemaWalk {
                root: key,
                segments: Vec::with_capacity(16),
                fields: &mut fields,
            };
            walk.schema(schema, None);
        }
    }
    fields
}

struct SchemaWalk<'a, 'f> {
    /// The pointer of the current location: `root` then `segments`, written out only when a
    /// field is recorded (most keys of a schema lead to no text).
    root: &'static str,
    segments: Vec<Segment<'a>>,
    fields: &'f mut Vec<TextField<'a>>,
}

#[derive(Clone, Copy)]
enum Segment<'a> {
    Key(&'a str),
    Index(usize),
}

impl<'a> SchemaWalk<'a, '_> {
    fn pointer(&self) -> String {
        let mut pointer = String::with_capacity(64);
        pointer.push('/');
        pointer.push_str(self.root);
        for segment in &self.segments {
            pointer.push('/');
            match segment {
                Segment::Key(key) if key.contains(['~', '/']) => {
                    pointer.push_str(&key.replace('~', "~0").replace('/', "~1"));
                }
                Segment::Key(key) => pointer.push_str(key),
                Segment::Index(index) => {
                    let _ = write!(pointer, "{index}");
                }
            }
        }
        pointer
    }

    fn push(&mut self, text: &'a str, role: Role, property: Option<&'a str>) {
        if role == Role::Name && text.is_ascii() {
            return;
        }
        let pointer = self.pointer();
        self.fields.push(TextField {
            pointer,
            text,
            role,
            property,
        });
    }

    fn schema(&mut self, schema: &'a Value, property: Option<&'a str>) {
        match schema {
            Value::Object(map) => {
                for (key, value) in map {
                    self.segments.push(Segment::Key(key));
                    match value {
                        Value::String(text) if key == "description" || key == "title" => {
                            self.push(text, Role::Prose, property);
                        }
                        Value::Object(named) if NAMED_SUBSCHEMAS.contains(&key.as_str()) => {
                            for (name, subschema) in named {
                                self.segments.push(Segment::Key(name));
                                self.push(name, Role::Name, Some(name));
                                self.schema(subschema, Some(name));
                                self.segments.pop();
                            }
                        }
                        _ if DATA_KEYWORDS.contains(&key.as_str()) => self.data(value, property),
                        // Scalars hold no text to scan; skip the call.
                        Value::Object(_) | Value::Array(_) => self.schema(value, property),
                        _ => {}
                    }
                    self.segments.pop();
                }
            }
            Value::Array(items) => {
                for (index, item) in items.iter().enumerate() {
                    self.segments.push(Segment::Index(index));
                    self.schema(item, property);
                    self.segments.pop();
                }
            }
            _ => {}
        }
    }

    fn data(&mut self, value: &'a Value, property: Option<&'a str>) {
        match value {
            Value::String(text) => self.push(text, Role::Value, property),
            Value::Array(items) => {
                for (index, item) in items.iter().enumerate() {
                    self.segments.push(Segment::Index(index));
                    self.data(item, property);
                    self.segments.pop();
                }
            }
            Value::Object(map) => {
                for (key, item) in map {
                    self.segments.push(Segment::Key(key));
                    self.data(item, property);
                    self.segments.pop();
                }
            }
            _ => {}
        }
    }
}

/// A tool with hidden characters removed from its prose, and what was removed where.
#[derive(Debug, Clone, PartialEq)]
pub struct StrippedTool {
    /// The tool as the model should see it.
    pub tool: Value,
    /// `(field, run)` for every removed run; fields are named like `inputSchema/properties/q/description`.
    pub removed: Vec<(String, HiddenRun)>,
}

/// Removes hidden characters (see [`strip_hidden`]) from every `description` and `title` of a
/// tool: its own, and every one inside `inputSchema` and `outputSchema`, recursively.
pub fn strip_tool(tool: &Value) -> StrippedTool {
    let mut replacements = Vec::new();
    let mut removed = Vec::new();
    for field in text_fields(tool) {
        if field.role != Role::Prose {
            continue;
        }
        let stripped = strip_hidden(field.text);
        if stripped.removed.is_empty() {
            continue;
        }
        let path = field.path();
        removed.extend(stripped.removed.into_iter().map(|run| (path.clone(), run)));
        replacements.push((field.pointer, stripped.text));
    }
    let mut stripped_tool = tool.clone();
    for (pointer, text) in replacements {
        if let Some(slot) = stripped_tool.pointer_mut(&pointer) {
            *slot = Value::String(text);
        }
    }
    StrippedTool {
        tool: stripped_tool,
        removed,
    }
}

/// RFC 6901 pointer of path segments (`~` → `~0`, `/` → `~1`).
pub(crate) fn json_pointer<S: AsRef<str>>(segments: &[S]) -> String {
    let mut pointer = String::new();
    for segment in segments {
        pointer.push('/');
        pointer.push_str(&segment.as_ref().replace('~', "~0").replace('/', "~1"));
    }
    pointer
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn strips_every_description_and_title_but_not_property_names_or_data() {
        let tool = json!({
            "name": "t",
            "title": "T\u{200B}",
            "description": "Adds\u{E0041}",
            "inputSchema": {
                "type": "object",
                "properties": {
                    "title": {"type": "string", "description": "The title\u{200B}", "default": "x\u{200B}"},
                    "nested": {"type": "array", "items": {"anyOf": [{"title": "A\u{2060}"}]}}
                }
            },
            "outputSchema": {"$defs": {"r/x": {"description": "R\u{202E}"}}}
        });
        let stripped = strip_tool(&tool);
        assert_eq!(stripped.tool["title"], "T");
        assert_eq!(stripped.tool["description"], "Adds");
        let title = &stripped.tool["inputSchema"]["properties"]["title"];
        assert_eq!(title["description"], "The title");
        assert_eq!(title["default"], "x\u{200B}");
        assert_eq!(
            stripped.tool["inputSchema"]["properties"]["nested"]["items"]["anyOf"][0]["title"],
            "A"
        );
        assert_eq!(
            stripped.tool["outputSchema"]["$defs"]["r/x"]["description"],
            "R"
        );
        // Sorted: serde_json's map order depends on its `preserve_order` feature.
        let mut fields: Vec<&str> = stripped.removed.iter().map(|(f, _)| f.as_str()).collect();
        fields.sort_unstable();
        assert_eq!(
            fields,
            [
                "description",
                "inputSchema/properties/nested/items/anyOf/0/title",
                "inputSchema/properties/title/description",
                "outputSchema/$defs/r/x/description",
                "title"
            ]
        );
    }

    #[test]
    fn text_fields_know_their_property() {
        let tool = json!({"name": "t", "inputSchema": {"properties": {
            "sidenote": {"description": "d"},
            "no\u{200B}te": {"type": "string"}
        }}});
        let mut described: Vec<(String, Option<&str>, Role)> = text_fields(&tool)
            .iter()
            .map(|f| (f.path(), f.property, f.role))
            .collect();
        described.sort_by(|a, b| a.0.cmp(&b.0));
        // ASCII names cannot hide characters and are not listed.
        assert_eq!(
            described,
            [
                (
                    "inputSchema/properties/no\u{200B}te".to_owned(),
                    Some("no\u{200B}te"),
                    Role::Name
                ),
                (
                    "inputSchema/properties/sidenote/description".to_owned(),
                    Some("sidenote"),
                    Role::Prose
                ),
            ]
        );
    }
}
