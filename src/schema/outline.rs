//! What registration needs from a tool's input schema, read from its JSON text in one pass.
//!
//! Registering a catalog of thousands of MCP tools must validate every schema's JSON and index
//! its parameters, but almost none of those schemas is ever inspected or validated against.
//! Building a full `serde_json::Value` for each cost more than indexing the rest of the tool,
//! and kept tens of megabytes alive. This pass runs serde_json's own parser over the text (so
//! exactly the same documents are accepted or refused, with the same errors) but keeps only
//! the root's `type` and the few `properties`/`description`/`items` members search reads;
//! everything else is checked and dropped without allocating.

use std::borrow::Cow;
use std::fmt;

use serde::de::{self, DeserializeSeed, MapAccess, SeqAccess, Visitor};
use serde_json::Value;

/// The parts of a schema that registration looks at.
#[derive(Debug, Default, PartialEq)]
pub struct Outline {
    /// Whether the root is an object (a schema for a tool's input must be).
    pub object: bool,
    /// The root's `type` member, if any.
    pub root_type: Option<Value>,
    /// Parameter paths and the first line of their descriptions, two levels deep: top-level
    /// properties, then their own properties and their array items' properties (`repo.owner`,
    /// `labels.name`). In `serde_json::Map` order (sorted by key, a repeated key's last value
    /// wins), so the indexed text is what a walk over the parsed `Value` would give.
    pub params: Vec<(String, String)>,
}

/// Reads `text` as JSON; fails exactly when `serde_json::from_str::<Value>(text)` does.
pub fn outline(text: &str) -> Result<Outline, serde_json::Error> {
    let mut de = serde_json::Deserializer::from_str(text);
    let root = NodeSeed(Level::Root).deserialize(&mut de)?;
    de.end()?;
    let mut params = Vec::new();
    for (key, param) in sorted(root.properties.unwrap_or_default()) {
        params.push((key.to_string(), first_line(param.description.as_deref())));
        let nested = param.properties.into_iter();
        let items = param.items.and_then(|items| items.properties).into_iter();
        for props in nested.chain(items) {
            for (child, node) in sorted(props) {
                params.push((
                    format!("{key}.{child}"),
                    first_line(node.description.as_deref()),
                ));
            }
        }
    }
    Ok(Outline {
        object: root.object,
        root_type: root.root_type,
        params,
    })
}

/// Which members a node keeps, by where it sits in the schema.
#[derive(Clone, Copy, PartialEq)]
enum Level {
    /// The schema itself: `type` and `properties`.
    Root,
    /// A top-level property: `description`, `properties` and `items`.
    Param,
    /// A top-level property's `items`: `properties`.
    Items,
    /// A property of a property or of items: `description`.
    Nested,
}

impl Level {
    /// The level of the schemas under this node's `properties`.
    fn child(self) -> Level {
        match self {
            Level::Root => Level::Param,
            _ => Level::Nested,
        }
    }
}

type Properties<'a> = Vec<(Cow<'a, str>, Node<'a>)>;

#[derive(Default)]
struct Node<'a> {
    object: bool,
    root_type: Option<Value>,
    description: Option<Cow<'a, str>>,
    /// `None` when absent or not an object (then it names no parameters).
    properties: Option<Properties<'a>>,
    items: Option<Box<Node<'a>>>,
}

/// Properties in `serde_json::Map` order: sorted by key, the last of repeated keys kept.
fn sorted(mut props: Properties<'_>) -> Properties<'_> {
    props.reverse();
    props.sort_by(|a, b| a.0.cmp(&b.0));
    props.dedup_by(|later, first| later.0 == first.0);
    props
}

/// First line of a description, as `str::lines` cuts it; empty when there is none.
fn first_line(description: Option<&str>) -> String {
    description
        .and_then(|d| d.lines().next())
        .unwrap_or_default()
        .to_owned()
}

/// Visitor methods for the JSON kinds a visitor does not keep: they are still parsed (arrays
/// element by element), then read as `$none`.
macro_rules! not_kept {
    ($none:expr) => {
        fn visit_bool<E>(self, _: bool) -> Result<Self::Value, E> {
            Ok($none)
        }

        fn visit_i64<E>(self, _: i64) -> Result<Self::Value, E> {
            Ok($none)
        }

        fn visit_u64<E>(self, _: u64) -> Result<Self::Value, E> {
            Ok($none)
        }

        fn visit_f64<E>(self, _: f64) -> Result<Self::Value, E> {
            Ok($none)
        }

        fn visit_unit<E>(self) -> Result<Self::Value, E> {
            Ok($none)
        }

        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
            while seq.next_element::<Skip>()?.is_some() {}
            Ok($none)
        }
    };
}

/// Any JSON value, parsed and validated like `Value` but not kept.
struct Skip;

impl<'de> de::Deserialize<'de> for Skip {
    fn deserialize<D: de::Deserializer<'de>>(de: D) -> Result<Self, D::Error> {
        de.deserialize_any(SkipVisitor)
    }
}

struct SkipVisitor;

impl<'de> Visitor<'de> for SkipVisitor {
    type Value = Skip;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }

    not_kept!(Skip);

    fn visit_str<E>(self, _: &str) -> Result<Skip, E> {
        Ok(Skip)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Skip, A::Error> {
        while map.next_entry::<Skip, Skip>()?.is_some() {}
        Ok(Skip)
    }
}

/// A string, borrowed from the text when it has no escapes.
struct Text<'a>(Cow<'a, str>);

impl<'de> de::Deserialize<'de> for Text<'de> {
    fn deserialize<D: de::Deserializer<'de>>(de: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Text<'de>;

            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a string")
            }

            fn visit_borrowed_str<E>(self, s: &'de str) -> Result<Text<'de>, E> {
                Ok(Text(Cow::Borrowed(s)))
            }

            fn visit_str<E>(self, s: &str) -> Result<Text<'de>, E> {
                Ok(Text(Cow::Owned(s.to_owned())))
            }
        }
        de.deserialize_str(V)
    }
}

/// A schema node at a given [`Level`]; a non-object value is an empty node.
struct NodeSeed(Level);

impl<'de> DeserializeSeed<'de> for NodeSeed {
    type Value = Node<'de>;

    fn deserialize<D: de::Deserializer<'de>>(self, de: D) -> Result<Node<'de>, D::Error> {
        de.deserialize_any(NodeVisitor(self.0))
    }
}

struct NodeVisitor(Level);

impl<'de> Visitor<'de> for NodeVisitor {
    type Value = Node<'de>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON Schema")
    }

    not_kept!(Node::default());

    fn visit_str<E>(self, _: &str) -> Result<Node<'de>, E> {
        Ok(Node::default())
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Node<'de>, A::Error> {
        let level = self.0;
        let mut node = Node {
            object: true,
            ..Node::default()
        };
        while let Some(Text(key)) = map.next_key::<Text>()? {
            match (level, &*key) {
                (Level::Root, "type") => node.root_type = Some(map.next_value()?),
                (Level::Root | Level::Param | Level::Items, "properties") => {
                    node.properties = map.next_value_seed(PropertiesSeed(level.child()))?;
                }
                (Level::Param | Level::Nested, "description") => {
                    node.description = map.next_value_seed(OptionalText)?;
                }
                (Level::Param, "items") => {
                    node.items = Some(Box::new(map.next_value_seed(NodeSeed(Level::Items))?));
                }
                _ => {
                    map.next_value::<Skip>()?;
                }
            }
        }
        Ok(node)
    }
}

/// A `properties` member: its schemas at the given level, or `None` when it is not an object.
struct PropertiesSeed(Level);

impl<'de> DeserializeSeed<'de> for PropertiesSeed {
    type Value = Option<Properties<'de>>;

    fn deserialize<D: de::Deserializer<'de>>(self, de: D) -> Result<Self::Value, D::Error> {
        de.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for PropertiesSeed {
    type Value = Option<Properties<'de>>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a properties object")
    }

    not_kept!(None);

    fn visit_str<E>(self, _: &str) -> Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut props = Vec::new();
        while let Some(Text(key)) = map.next_key::<Text>()? {
            props.push((key, map.next_value_seed(NodeSeed(self.0))?));
        }
        Ok(Some(props))
    }
}

/// A `description` member: its text, or `None` when it is not a string.
struct OptionalText;

impl<'de> DeserializeSeed<'de> for OptionalText {
    type Value = Option<Cow<'de, str>>;

    fn deserialize<D: de::Deserializer<'de>>(self, de: D) -> Result<Self::Value, D::Error> {
        de.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for OptionalText {
    type Value = Option<Cow<'de, str>>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a description")
    }

    fn visit_borrowed_str<E>(self, s: &'de str) -> Result<Self::Value, E> {
        Ok(Some(Cow::Borrowed(s)))
    }

    fn visit_str<E>(self, s: &str) -> Result<Self::Value, E> {
        Ok(Some(Cow::Owned(s.to_owned())))
    }

    not_kept!(None);

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        while map.next_entry::<Skip, Skip>()?.is_some() {}
        Ok(None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// The walk over a parsed `Value` that the outline replaces: the reference it must match.
    fn params_of_value(schema: &Value) -> Vec<(String, String)> {
        fn walk(schema: &Value, prefix: &str, depth: usize, out: &mut Vec<(String, String)>) {
            let Some(props) = schema.get("properties").and_then(Value::as_object) else {
                return;
            };
            for (key, prop) in props {
                let path = if prefix.is_empty() {
                    key.clone()
                } else {
                    format!("{prefix}.{key}")
                };
                let description = prop
                    .get("description")
                    .and_then(Value::as_str)
                    .and_then(|d| d.lines().next())
                    .unwrap_or_default();
                out.push((path.clone(), description.to_owned()));
                if depth < 2 {
                    walk(prop, &path, depth + 1, out);
                    if let Some(items) = prop.get("items") {
                        walk(items, &path, depth + 1, out);
                    }
                }
            }
        }
        let mut out = Vec::new();
        walk(schema, "", 1, &mut out);
        out
    }

    fn same_as_value(text: &str) {
        let value: Value = serde_json::from_str(text).unwrap();
        assert_eq!(
            outline(text).unwrap().params,
            params_of_value(&value),
            "{text}"
        );
    }

    #[test]
    fn params_match_a_walk_over_the_parsed_value() {
        for text in [
            r#"{"type":"object","properties":{"repo":{"type":"object","description":"Target\r\nmore","properties":{"owner":{"type":"string","description":"Who"},"deep":{"properties":{"x":{}}}}},"labels":{"type":"array","items":{"type":"object","properties":{"name":{"description":"Label"}}}}}}"#,
            r#"{"properties":{"b":{"description":"second"},"a":{"description":"first"},"b":{"description":"last b wins"}}}"#,
            r#"{"properties":{"a":{"properties":{"x":{}}},"a":{"description":"no children now"}}}"#,
            r#"{"properties":{"a":{"description":"one"}},"properties":"not an object"}"#,
            r#"{"properties":{"tuple":{"items":[{"properties":{"x":{}}}]},"bool":true,"num":1,"nul":null}}"#,
            r#"{"properties":{"esc\"aped\u00e9":{"description":"caf\u00e9\nsecond line"},"n":{"description":7}}}"#,
            r#"{"properties":{"e":{"description":""},"items":{"items":{"properties":{"z":{"description":"zed"}}},"properties":{"y":{}}}}}"#,
            r#"{"description":"root descriptions are not parameters","items":{"properties":{"x":{}}}}"#,
            r#"{}"#,
        ] {
            same_as_value(text);
        }
        let value = json!({"properties": {"ä": {}, "a": {}, "B": {}, "_": {}, "10": {}, "9": {}}});
        same_as_value(&value.to_string());
    }

    #[test]
    fn refuses_exactly_what_value_parsing_refuses() {
        for text in [
            "",
            "{",
            r#"{"a":1}x"#,
            r#"{"a":1e400}"#,
            r#"{"a":"\ud800"}"#,
            r#"{"a":[1,]}"#,
            r#"{"a":tru}"#,
            r#"{"properties":{"p":{"description":"\q"}}}"#,
            &format!("{}{}", "[".repeat(200), "]".repeat(200)),
            &format!(
                r#"{{"properties":{{"p":{}1{}}}}}"#,
                "[".repeat(130),
                "]".repeat(130)
            ),
        ] {
            let expected = serde_json::from_str::<Value>(text)
                .map(|_| ())
                .map_err(|e| e.to_string());
            let got = outline(text).map(|_| ()).map_err(|e| e.to_string());
            assert_eq!(got, expected, "{text}");
        }
    }

    #[test]
    fn reports_the_root_shape() {
        for text in ["[1, {}]", r#""s""#, "null", "1.5", "true"] {
            assert!(!outline(text).unwrap().object, "{text}");
        }
        let o = outline(r#"{"type":"string","type":["object","null"]}"#).unwrap();
        assert!(o.object);
        assert_eq!(o.root_type, Some(json!(["object", "null"])));
    }
}
