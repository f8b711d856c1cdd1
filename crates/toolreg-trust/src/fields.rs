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
pub(crate) struct TextField<'a, 's> {
    /// The path from the tool's root (`inputSchema`, `properties`, `q`, `description`); the
    /// pointer is written out only when asked for, since most texts produce no finding.
    pub segments: &'s [Segment<'a>],
    pub text: &'a str,
    pub role: Role,
    /// For texts inside an input property: that property's name (the innermost one).
    pub property: Option<&'a str>,
}

/// One step of a [`TextField`]'s path.
#[derive(Clone, Copy)]
pub(crate) enum Segment<'a> {
    Key(&'a str),
    Index(usize),
}

impl TextField<'_, '_> {
    /// RFC 6901 pointer from the tool's root, e.g. `/inputSchema/properties/q/description`.
    pub fn pointer(&self) -> String {
        let mut pointer = String::with_capacity(64);
        for segment in self.segments {
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

    /// The field as findings name it: the pointer's segments, unescaped, joined by `/`.
    pub fn path(&self) -> String {
        self.pointer()[1..].replace("~1", "/").replace("~0", "~")
    }

    /// Whether this is the `description` of something (not a property named "description").
    pub fn is_description(&self) -> bool {
        self.role == Role::Prose
            && matches!(self.segments.last(), Some(Segment::Key("description")))
    }
}

/// What a key of a schema object holds, as far as texts are concerned.
enum SchemaKey {
    /// `description`, `title`: prose when the value is a string.
    Prose,
    /// A keyword whose value maps names to subschemas (the keys there are property names, not
    /// keywords): `properties`, `patternProperties`, `$defs`, `definitions`, `dependentSchemas`.
    NamedSubschemas,
    /// A keyword holding data rather than subschemas: `default`, `examples`, `enum`, `const`.
    Data,
    Other,
}

impl SchemaKey {
    /// A `match` rather than lists of names: this runs for every key of every schema, and
    /// compiles to a switch on the length and a few word compares.
    fn of(key: &str) -> Self {
        match key {
            "description" | "title" => SchemaKey::Prose,
            "properties" | "patternProperties" | "$defs" | "definitions" | "dependentSchemas" => {
                SchemaKey::NamedSubschemas
            }
            "default" | "examples" | "enum" | "const" => SchemaKey::Data,
            _ => SchemaKey::Other,
        }
    }
}

/// Calls `visit` with every text of `tool` that the model sees: name, title, description, and
/// inside `inputSchema`/`outputSchema` every `title`/`description`, property name and data
/// string, in that order.
pub(crate) fn for_each_text_field<'a>(tool: &'a Value, mut visit: impl FnMut(&TextField<'a, '_>)) {
    let Value::Object(map) = tool else {
        return;
    };
    // One pass over the tool's keys instead of a lookup per field.
    let mut top: [Option<&'a Value>; 5] = [None; 5];
    for (key, value) in map {
        let slot = match key.as_str() {
            "name" => 0,
            "title" => 1,
            "description" => 2,
            "inputSchema" => 3,
            "outputSchema" => 4,
            _ => continue,
        };
        top[slot] = Some(value);
    }
    let [name, title, description, input, output] = top;
    let mut walk = SchemaWalk {
        segments: Vec::with_capacity(16),
        visit: &mut visit,
    };
    for (key, role, value) in [
        ("name", Role::Name, name),
        ("title", Role::Prose, title),
        ("description", Role::Prose, description),
    ] {
        if let Some(Value::String(text)) = value {
            walk.segments.push(Segment::Key(key));
            walk.push(text, role, None);
            walk.segments.pop();
        }
    }
    for (key, schema) in [("inputSchema", input), ("outputSchema", output)] {
        if let Some(schema) = schema {
            walk.segments.push(Segment::Key(key));
            walk.schema(schema, None);
            walk.segments.pop();
        }
    }
}

struct SchemaWalk<'a, 'v, V> {
    /// The path of the current location.
    segments: Vec<Segment<'a>>,
    visit: &'v mut V,
}

impl<'a, V: FnMut(&TextField<'a, '_>)> SchemaWalk<'a, '_, V> {
    fn push(&mut self, text: &'a str, role: Role, property: Option<&'a str>) {
        // Names are scanned for hidden characters only, which are never ASCII.
        if role == Role::Name && text.is_ascii() {
            return;
        }
        (self.visit)(&TextField {
            segments: &self.segments,
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
                    match (SchemaKey::of(key), value) {
                        (SchemaKey::Prose, Value::String(text)) => {
                            self.push(text, Role::Prose, property);
                        }
                        (SchemaKey::NamedSubschemas, Value::Object(named)) => {
                            for (name, subschema) in named {
                                self.segments.push(Segment::Key(name));
                                self.push(name, Role::Name, Some(name));
                                self.schema(subschema, Some(name));
                                self.segments.pop();
                            }
                        }
                        (SchemaKey::Data, _) => self.data(value, property),
                        // Scalars hold no text to scan; skip the call.
                        (_, Value::Object(_) | Value::Array(_)) => self.schema(value, property),
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
    for_each_text_field(tool, |field| {
        if field.role != Role::Prose {
            return;
        }
        let stripped = strip_hidden(field.text);
        if stripped.removed.is_empty() {
            return;
        }
        let path = field.path();
        removed.extend(stripped.removed.into_iter().map(|run| (path.clone(), run)));
        replacements.push((field.pointer(), stripped.text));
    });
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
        let mut described: Vec<(String, Option<&str>, Role)> = Vec::new();
        for_each_text_field(&tool, |f| described.push((f.path(), f.property, f.role)));
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
