//! JSDoc signatures for `tool_inspect`: a compact, model-friendly view of a tool's input schema
//! in the reference format (mcphub `inspect` style), plus the exact JSON Schema whenever the
//! JSDoc would hide a constraint.

use std::collections::{BTreeMap, BTreeSet, HashSet};

use serde_json::Value;

use super::{deref, is_identifier, resolve_local_ref};

/// Deepest parameter path shown (`params.a.b.c.d.e`); deeper objects render as `Object`.
pub const MAX_NESTING_DEPTH: usize = 5;
/// Recursion bound when naming a type (`Array<Array<string|null>>`).
const MAX_TYPE_DEPTH: usize = 4;
/// Bound on any recursive walk, however the schema's `$ref`s and unions are arranged.
const MAX_WALK_DEPTH: usize = 64;
/// A schema whose `$ref`s fan out can expand exponentially; stop listing after this many lines
/// (the exact schema is then appended by `describe_tool`).
const MAX_PARAM_LINES: usize = 200;
/// Zod 4 emits these bounds for every `z.int()` / `z.float64()`; they constrain nothing a model
/// would send, so they must not force the exact-schema dump onto every Zod tool.
const IMPLICIT_BOUNDS: [f64; 4] = [
    9_007_199_254_740_991.0,
    -9_007_199_254_740_991.0,
    f64::MAX,
    -f64::MAX,
];

static ANY_SCHEMA: Value = Value::Bool(true);

/// Step allowance for one structural question (object view, item schema, type name), so wide
/// unions of `$ref`s cannot make a single question exponential.
struct Budget {
    left: usize,
    exhausted: bool,
}

impl Budget {
    fn new() -> Self {
        Budget {
            left: 256,
            exhausted: false,
        }
    }

    fn spend(&mut self) -> bool {
        if self.left == 0 {
            self.exhausted = true;
            return false;
        }
        self.left -= 1;
        true
    }
}

/// The tool's signature as JSDoc: summary, one `@param` per parameter (sorted, with type,
/// required/optional, enum values, default, format, nested objects and array items), and a
/// `function name(params) {}` line.
pub fn schema_to_jsdoc(name: &str, description: &str, schema: &Value) -> String {
    render(name, description, schema).text
}

/// True when the JSDoc cannot show the schema faithfully: composition of objects, conditionals,
/// numeric/length/pattern constraints, tuples, `$ref` cycles or unresolvable `$ref`s, schema-valued
/// `additionalProperties`, `unevaluated*`, or parameters hidden by the depth or size caps.
pub fn needs_exact_schema(schema: &Value) -> bool {
    has_inexpressible(schema) || render("t", "", schema).hidden
}

/// What `tool_inspect` returns: the JSDoc, plus `Exact JSON Schema:` and the compact schema
/// when [`needs_exact_schema`] says the JSDoc alone would mislead.
pub fn describe_tool(name: &str, description: &str, schema: &Value) -> String {
    describe_tool_showing(name, description, schema, |s| s.clone())
}

/// [`describe_tool`], with the exact part shown as `shown(schema)` makes it (e.g. the form a
/// provider accepts, since the model may copy it into a later request).
pub fn describe_tool_showing(
    name: &str,
    description: &str,
    schema: &Value,
    shown: impl FnOnce(&Value) -> Value,
) -> String {
    let rendered = render(name, description, schema);
    let mut out = rendered.text;
    if rendered.hidden || has_inexpressible(schema) {
        out.push_str("\n\nExact JSON Schema:\n");
        out.push_str(&shown(schema).to_string());
    }
    out
}

fn has_inexpressible(schema: &Value) -> bool {
    ExactWalk {
        root: schema,
        stack: Vec::new(),
        clean: HashSet::new(),
    }
    .needs(schema, 0)
}

struct Rendered {
    text: String,
    /// Something was left out (depth cap with children, `$ref` cycle, line budget).
    hidden: bool,
}

fn render(name: &str, description: &str, schema: &Value) -> Rendered {
    let mut text = String::from("/**\n");
    let summary = match description.trim() {
        "" => name,
        trimmed => trimmed,
    };
    for line in summary.lines() {
        let line = sanitize(line.trim());
        if line.is_empty() {
            text.push_str(" *\n");
        } else {
            text.push_str(&format!(" * {line}\n"));
        }
    }
    text.push_str(" *\n");
    let mut renderer = Renderer {
        root: schema,
        lines: Vec::new(),
        ref_stack: Vec::new(),
        hidden: false,
    };
    let root_type = match renderer.type_name(schema, 0, &mut Budget::new()).as_str() {
        "*" => "Object".to_owned(),
        other => other.to_owned(),
    };
    text.push_str(&format!(" * @param {{{root_type}}} params - Parameters\n"));
    renderer.children("params", schema, 1, 0);
    for line in &renderer.lines {
        text.push_str(line);
        text.push('\n');
    }
    if renderer.lines.len() > MAX_PARAM_LINES {
        text.push_str(" * … (more parameters omitted; see the exact JSON Schema)\n");
    }
    text.push_str(" */\n");
    text.push_str(&format!("function {name}(params) {{}}"));
    Rendered {
        text,
        hidden: renderer.hidden,
    }
}

struct Renderer<'a> {
    root: &'a Value,
    lines: Vec<String>,
    /// `$ref`s being expanded on the current path: a repeat is a cycle, shown without children.
    ref_stack: Vec<&'a str>,
    hidden: bool,
}

/// An object's parameters after following `$ref`, merging `allOf` branches and unwrapping a
/// nullable (`anyOf: [object, null]`) wrapper.
struct ObjectView<'a> {
    properties: BTreeMap<&'a str, &'a Value>,
    required: BTreeSet<&'a str>,
}

impl<'a> Renderer<'a> {
    /// Emits `@param` lines for the children of `site` under `prefix`. `depth` is the nesting
    /// level those children sit at; `level` counts every recursion (arrays included) as a guard.
    fn children(&mut self, prefix: &str, site: &'a Value, depth: usize, level: usize) {
        if level > MAX_WALK_DEPTH || self.lines.len() > MAX_PARAM_LINES {
            self.hidden = true;
            return;
        }
        let refs = ref_chain(self.root, site);
        let mut budget = Budget::new();
        let view = object_view(self.root, site, &mut budget);
        let items = match view {
            Some(_) => None,
            None => array_items(self.root, site, &mut budget),
        };
        self.hidden |= budget.exhausted;
        if refs.iter().any(|r| self.ref_stack.contains(r)) {
            // A recursive type: its shape is already listed above this point.
            self.hidden |= view.is_some() || items.is_some();
            return;
        }
        let pushed = refs.len();
        self.ref_stack.extend(refs);
        if let Some(view) = view {
            if depth > MAX_NESTING_DEPTH {
                self.hidden |= !view.properties.is_empty();
            } else {
                for (name, property) in &view.properties {
                    if is_never(self.root, property) {
                        continue; // forbidden property: nothing the model may send
                    }
                    if self.lines.len() > MAX_PARAM_LINES {
                        self.hidden = true;
                        break;
                    }
                    let path = child_path(prefix, name);
                    self.param_line(&path, property, view.required.contains(name));
                    self.children(&path, property, depth + 1, level + 1);
                }
            }
        } else if let Some(items) = items {
            self.children(&format!("{prefix}[]"), items, depth, level + 1);
        }
        self.ref_stack.truncate(self.ref_stack.len() - pushed);
    }

    fn param_line(&mut self, path: &str, site: &'a Value, required: bool) {
        let mut budget = Budget::new();
        let type_name = self.type_name(site, 0, &mut budget);
        self.hidden |= budget.exhausted;
        let default = annotation(self.root, site, "default");
        let mut tail: Vec<String> = Vec::new();
        if let Some(text) = annotation(self.root, site, "description").and_then(Value::as_str) {
            let first = sanitize(
                text.lines()
                    .map(str::trim)
                    .find(|l| !l.is_empty())
                    .unwrap_or(""),
            );
            if !first.is_empty() {
                tail.push(first);
            }
        }
        if let Some(format) = annotation(self.root, site, "format").and_then(Value::as_str) {
            tail.push(format!("(format: {})", sanitize(format)));
        }
        let name = if required {
            if let Some(default) = default {
                tail.push(format!("(default: {})", sanitize(&default.to_string())));
            }
            tail.push("(required)".to_owned());
            path.to_owned()
        } else if let Some(default) = default {
            format!("[{path}={}]", sanitize(&default.to_string()))
        } else {
            format!("[{path}]")
        };
        let mut line = format!(" * @param {{{type_name}}} {name}");
        if !tail.is_empty() {
            line.push_str(" - ");
            line.push_str(&tail.join(" "));
        }
        self.lines.push(line);
    }

    /// The JSDoc type: `string`, `number` (also for integer), `boolean`, `null`, `Object`,
    /// `Array<item>`, enum/const values JSON-quoted and joined with `|`, unions joined with `|`,
    /// `*` when unknown.
    fn type_name(&self, site: &Value, depth: usize, budget: &mut Budget) -> String {
        if depth > MAX_TYPE_DEPTH || !budget.spend() {
            return "*".to_owned();
        }
        let (schema, _) = deref(self.root, site);
        let Value::Object(keywords) = schema else {
            return "*".to_owned();
        };
        if keywords.contains_key("$ref") {
            return "*".to_owned(); // unresolvable or cyclic-only reference
        }
        if let Some(value) = keywords.get("const") {
            return sanitize(&value.to_string());
        }
        if let Some(Value::Array(options)) = keywords.get("enum") {
            return join_unique(options.iter().map(|v| sanitize(&v.to_string())));
        }
        match keywords.get("type") {
            Some(Value::String(name)) => return self.simple_type(name, schema, depth, budget),
            Some(Value::Array(names)) => {
                return join_unique(
                    names
                        .iter()
                        .filter_map(Value::as_str)
                        .map(|name| self.simple_type(name, schema, depth, budget)),
                );
            }
            _ => {}
        }
        for union in ["anyOf", "oneOf"] {
            if let Some(Value::Array(branches)) = keywords.get(union) {
                let names: Vec<String> = branches
                    .iter()
                    .filter(|b| !is_never(self.root, b))
                    .map(|b| self.type_name(b, depth + 1, budget))
                    .collect();
                if names.iter().any(|n| n == "*") {
                    return "*".to_owned();
                }
                return join_unique(names.into_iter().flat_map(split_union));
            }
        }
        if let Some(Value::Array(branches)) = keywords.get("allOf") {
            let names: BTreeSet<String> = branches
                .iter()
                .map(|b| self.type_name(b, depth + 1, budget))
                .filter(|n| n != "*")
                .collect();
            if names.len() == 1 {
                return names.into_iter().next().unwrap_or_default();
            }
            if names.iter().all(|n| n == "Object" || n.starts_with('{')) && !names.is_empty() {
                return "Object".to_owned();
            }
            return "*".to_owned();
        }
        if ["properties", "additionalProperties", "patternProperties"]
            .iter()
            .any(|k| keywords.contains_key(*k))
        {
            return "Object".to_owned();
        }
        if keywords.contains_key("items") || keywords.contains_key("prefixItems") {
            return self.simple_type("array", schema, depth, budget);
        }
        "*".to_owned()
    }

    fn simple_type(&self, name: &str, schema: &Value, depth: usize, budget: &mut Budget) -> String {
        match name {
            "string" => "string".to_owned(),
            "number" | "integer" => "number".to_owned(),
            "boolean" => "boolean".to_owned(),
            "null" => "null".to_owned(),
            "object" => "Object".to_owned(),
            "array" => match schema.get("items") {
                Some(items) if !items.is_array() && schema.get("prefixItems").is_none() => {
                    match self.type_name(items, depth + 1, budget).as_str() {
                        "*" => "Array".to_owned(),
                        inner => format!("Array<{inner}>"),
                    }
                }
                _ => "Array".to_owned(),
            },
            _ => "*".to_owned(),
        }
    }
}

/// Walks every reachable subschema looking for what JSDoc cannot express.
struct ExactWalk<'a> {
    root: &'a Value,
    stack: Vec<&'a str>,
    /// `$ref` targets already walked and found expressible (keeps fan-out linear).
    clean: HashSet<&'a str>,
}

impl<'a> ExactWalk<'a> {
    fn needs(&mut self, site: &'a Value, depth: usize) -> bool {
        if depth > MAX_WALK_DEPTH {
            return true;
        }
        let Value::Object(keywords) = site else {
            return false;
        };
        if let Some(reference) = keywords.get("$ref").and_then(Value::as_str) {
            let Some(target) = resolve_local_ref(self.root, reference) else {
                return true; // remote, relative or anchor: the JSDoc shows `*`
            };
            if self.stack.contains(&reference) {
                return true; // recursive type
            }
            if !self.clean.contains(reference) {
                self.stack.push(reference);
                let needs = self.needs(target, depth + 1);
                self.stack.pop();
                if needs {
                    return true;
                }
                self.clean.insert(reference);
            }
        }
        for (keyword, value) in keywords {
            let inexpressible = match keyword.as_str() {
                "$dynamicRef" | "$recursiveRef" | "if" | "then" | "else" | "patternProperties"
                | "propertyNames" | "dependentRequired" | "dependentSchemas" | "dependencies"
                | "minLength" | "maxLength" | "minItems" | "maxItems" | "minProperties"
                | "maxProperties" | "multipleOf" | "pattern" | "contains" | "minContains"
                | "maxContains" | "prefixItems" | "additionalItems" => true,
                "minimum" | "maximum" | "exclusiveMinimum" | "exclusiveMaximum" => {
                    // Draft-04 boolean `exclusive*` only matters alongside minimum/maximum.
                    match value.as_f64() {
                        Some(bound) => !IMPLICIT_BOUNDS.contains(&bound),
                        None => false,
                    }
                }
                // `{"not": {}}` is zod-to-json-schema's "undefined": never valid, nothing to show.
                "not" => !is_trivially_true(value),
                "uniqueItems" => value == &Value::Bool(true),
                "unevaluatedProperties" | "unevaluatedItems" => !is_trivially_true(value),
                "additionalProperties" => value.is_object() && !is_trivially_true(value),
                "items" => value.is_array(),
                "allOf" => value.as_array().is_some_and(|b| b.len() > 1),
                "anyOf" | "oneOf" => value.as_array().is_some_and(|branches| {
                    branches
                        .iter()
                        .filter(|b| is_structured(self.root, b, &mut Budget::new()))
                        .count()
                        > 1
                }),
                _ => false,
            };
            if inexpressible {
                return true;
            }
        }
        let mut subschemas: Vec<&'a Value> = Vec::new();
        if let Some(Value::Object(properties)) = keywords.get("properties") {
            subschemas.extend(properties.values());
        }
        for keyword in ["items", "additionalProperties"] {
            if let Some(value @ Value::Object(_)) = keywords.get(keyword) {
                subschemas.push(value);
            }
        }
        for keyword in ["allOf", "anyOf", "oneOf"] {
            if let Some(Value::Array(branches)) = keywords.get(keyword) {
                subschemas.extend(branches);
            }
        }
        subschemas.into_iter().any(|s| self.needs(s, depth + 1))
    }
}

/// `$ref`s followed from `site` to its target (local ones only).
fn ref_chain<'a>(root: &'a Value, site: &'a Value) -> Vec<&'a str> {
    let mut chain = Vec::new();
    let mut current = site;
    while let Some(reference) = current.get("$ref").and_then(Value::as_str) {
        if chain.contains(&reference) || chain.len() > 32 {
            break;
        }
        let Some(target) = resolve_local_ref(root, reference) else {
            break;
        };
        chain.push(reference);
        current = target;
    }
    chain
}

fn object_view<'a>(
    root: &'a Value,
    site: &'a Value,
    budget: &mut Budget,
) -> Option<ObjectView<'a>> {
    if !budget.spend() {
        return None;
    }
    let (schema, _) = deref(root, site);
    let keywords = schema.as_object()?;
    let mut view = ObjectView {
        properties: BTreeMap::new(),
        required: BTreeSet::new(),
    };
    let mut found = false;
    if let Some(Value::Object(properties)) = keywords.get("properties") {
        found = true;
        view.properties
            .extend(properties.iter().map(|(k, v)| (k.as_str(), v)));
    }
    if let Some(Value::Array(branches)) = keywords.get("allOf") {
        for branch in branches {
            if let Some(part) = object_view(root, branch, budget) {
                found = true;
                for (name, property) in part.properties {
                    view.properties.entry(name).or_insert(property);
                }
                view.required.extend(part.required);
            }
        }
    }
    if !found {
        for union in ["anyOf", "oneOf"] {
            if let Some(Value::Array(branches)) = keywords.get(union) {
                let structured: Vec<&Value> = branches
                    .iter()
                    .filter(|b| is_structured(root, b, budget))
                    .collect();
                if let [only] = structured.as_slice()
                    && let Some(view) = object_view(root, only, budget)
                {
                    return Some(view);
                }
            }
        }
        return None;
    }
    if let Some(Value::Array(required)) = keywords.get("required") {
        view.required
            .extend(required.iter().filter_map(Value::as_str));
    }
    // Required names without a property schema still have to be sent: list them as `*`.
    let missing: Vec<&str> = view
        .required
        .iter()
        .copied()
        .filter(|name| !view.properties.contains_key(name))
        .collect();
    for name in missing {
        view.properties.insert(name, &ANY_SCHEMA);
    }
    Some(view)
}

/// The item schema of an array (or of the single array branch of a nullable union).
fn array_items<'a>(root: &'a Value, site: &'a Value, budget: &mut Budget) -> Option<&'a Value> {
    if !budget.spend() {
        return None;
    }
    let (schema, _) = deref(root, site);
    let keywords = schema.as_object()?;
    if let Some(items @ Value::Object(_)) = keywords.get("items") {
        return Some(items);
    }
    for union in ["anyOf", "oneOf"] {
        if let Some(Value::Array(branches)) = keywords.get(union) {
            let found: Vec<&Value> = branches
                .iter()
                .filter_map(|b| array_items(root, b, budget))
                .collect();
            if let [only] = found.as_slice() {
                return Some(only);
            }
        }
    }
    None
}

/// Objects and arrays of objects: branches whose children a union would have to tell apart.
fn is_structured(root: &Value, branch: &Value, budget: &mut Budget) -> bool {
    if !budget.spend() {
        return false;
    }
    let (schema, _) = deref(root, branch);
    let Value::Object(keywords) = schema else {
        return false;
    };
    let declares_object = match keywords.get("type") {
        Some(Value::String(t)) => t == "object",
        Some(Value::Array(ts)) => ts.iter().any(|t| t == "object"),
        _ => false,
    };
    if declares_object || keywords.contains_key("properties") {
        return true;
    }
    if let Some(items @ Value::Object(_)) = keywords.get("items")
        && is_structured(root, items, budget)
    {
        return true;
    }
    ["allOf", "anyOf", "oneOf"].iter().any(|k| {
        keywords
            .get(*k)
            .and_then(Value::as_array)
            .is_some_and(|branches| branches.iter().any(|b| is_structured(root, b, budget)))
    })
}

/// An annotation at the property site, else at its `$ref` target, else at the single
/// non-null branch of a nullable union (Zod puts `.describe()` inside `.nullable()`).
fn annotation<'a>(root: &'a Value, site: &'a Value, keyword: &str) -> Option<&'a Value> {
    if let Some(value) = site.get(keyword) {
        return Some(value);
    }
    let (target, _) = deref(root, site);
    if let Some(value) = target.get(keyword) {
        return Some(value);
    }
    for union in ["anyOf", "oneOf"] {
        if let Some(Value::Array(branches)) = target.get(union) {
            let mut non_null = branches
                .iter()
                .filter(|b| deref(root, b).0.get("type") != Some(&Value::from("null")));
            if let (Some(only), None) = (non_null.next(), non_null.next()) {
                return deref(root, only).0.get(keyword);
            }
        }
    }
    None
}

/// `false` or `{"not": {}}`: accepts nothing, so it is no parameter and no union option.
fn is_never(root: &Value, schema: &Value) -> bool {
    match deref(root, schema).0 {
        Value::Bool(b) => !b,
        Value::Object(map) => map.len() == 1 && map.get("not").is_some_and(is_trivially_true),
        _ => false,
    }
}

fn is_trivially_true(schema: &Value) -> bool {
    match schema {
        Value::Bool(b) => *b,
        Value::Object(map) => map.is_empty(),
        _ => false,
    }
}

fn child_path(prefix: &str, name: &str) -> String {
    if is_identifier(name) {
        format!("{prefix}.{name}")
    } else {
        format!("{prefix}[{}]", sanitize(&Value::from(name).to_string()))
    }
}

/// Splits `a|b` so nested unions flatten (`Array<x>` parts stay whole: `|` inside `<>` is kept).
fn split_union(name: String) -> Vec<String> {
    let mut parts = Vec::new();
    let mut depth = 0i32;
    let mut current = String::new();
    for c in name.chars() {
        match c {
            '<' => depth += 1,
            '>' => depth -= 1,
            '|' if depth == 0 => {
                parts.push(std::mem::take(&mut current));
                continue;
            }
            _ => {}
        }
        current.push(c);
    }
    parts.push(current);
    parts
}

fn join_unique(names: impl Iterator<Item = String>) -> String {
    let mut seen: Vec<String> = Vec::new();
    for name in names {
        if !seen.contains(&name) {
            seen.push(name);
        }
    }
    if seen.is_empty() {
        return "*".to_owned();
    }
    seen.join("|")
}

/// Keeps schema text from closing the doc comment early.
fn sanitize(text: &str) -> String {
    text.replace("*/", "*\\/")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn params(schema: &Value) -> Vec<String> {
        schema_to_jsdoc("t", "d", schema)
            .lines()
            .filter(|l| l.starts_with(" * @param") && !l.contains(" params - Parameters"))
            .map(|l| l.trim_start_matches(" * @param ").to_owned())
            .collect()
    }

    #[test]
    fn reference_format() {
        let schema = json!({
            "type": "object",
            "properties": {
                "query": {"type": "string", "description": "Search text\nSecond line is dropped"},
                "limit": {"type": "number", "default": 10, "description": "Max results"},
                "mode": {"enum": ["a", "b"]}
            },
            "required": ["query", "mode"]
        });
        let expected = [
            "/**",
            " * Search the web",
            " *",
            " * @param {Object} params - Parameters",
            " * @param {number} [params.limit=10] - Max results",
            " * @param {\"a\"|\"b\"} params.mode - (required)",
            " * @param {string} params.query - Search text (required)",
            " */",
            "function web_search(params) {}",
        ]
        .join("\n");
        assert_eq!(
            schema_to_jsdoc("web_search", "Search the web", &schema),
            expected
        );
    }

    #[test]
    fn summary_falls_back_to_name_and_keeps_lines() {
        let doc = schema_to_jsdoc("noop", "  ", &json!({"type": "object"}));
        assert!(
            doc.starts_with("/**\n * noop\n *\n * @param {Object} params - Parameters\n */"),
            "{doc}"
        );
        let doc = schema_to_jsdoc("x", "Line one\n\nLine */ three", &json!({}));
        assert!(
            doc.starts_with("/**\n * Line one\n *\n * Line *\\/ three\n *\n"),
            "{doc}"
        );
        assert!(doc.ends_with("function x(params) {}"));
    }

    #[test]
    fn type_map() {
        let schema = json!({"properties": {
            "s": {"type": "string"}, "i": {"type": "integer"}, "n": {"type": "number"},
            "b": {"type": "boolean"}, "z": {"type": "null"}, "o": {"type": "object"},
            "a": {"type": "array"}, "as": {"type": "array", "items": {"type": "string"}},
            "ao": {"type": "array", "items": {"type": "object"}},
            "aa": {"type": "array", "items": {"type": "array", "items": {"type": "integer"}}},
            "multi": {"type": ["string", "null"]}, "ni": {"type": ["number", "integer"]},
            "u": {}, "weird": {"type": "bogus"},
            "any": {"anyOf": [{"type": "string"}, {"type": "number"}]},
            "one": {"oneOf": [{"type": "boolean"}, {"type": "null"}]},
            "c": {"const": "fixed"}, "e": {"enum": [1, "two", null]},
            "noType": {"properties": {"x": {}}}, "noTypeArr": {"items": {"type": "boolean"}},
            "anyArr": {"type": "array", "items": {"anyOf": [{"type": "string"}, {"type": "number"}]}}
        }});
        let lines = params(&schema);
        for expected in [
            "{string} [params.s]",
            "{number} [params.i]",
            "{number} [params.n]",
            "{boolean} [params.b]",
            "{null} [params.z]",
            "{Object} [params.o]",
            "{Array} [params.a]",
            "{Array<string>} [params.as]",
            "{Array<Object>} [params.ao]",
            "{Array<Array<number>>} [params.aa]",
            "{string|null} [params.multi]",
            "{number} [params.ni]",
            "{*} [params.u]",
            "{*} [params.weird]",
            "{string|number} [params.any]",
            "{boolean|null} [params.one]",
            "{\"fixed\"} [params.c]",
            "{1|\"two\"|null} [params.e]",
            "{Object} [params.noType]",
            "{Array<boolean>} [params.noTypeArr]",
            "{Array<string|number>} [params.anyArr]",
        ] {
            assert!(
                lines.iter().any(|l| l == expected),
                "missing {expected:?} in {lines:#?}"
            );
        }
    }

    #[test]
    fn properties_are_sorted_and_required_marked() {
        let schema = json!({"type": "object", "properties": {"b": {"type": "string"}, "a": {"type": "string"}, "C": {}}, "required": ["b", "ghost"]});
        assert_eq!(
            params(&schema),
            vec![
                "{*} [params.C]",
                "{string} [params.a]",
                "{string} params.b - (required)",
                "{*} params.ghost - (required)",
            ]
        );
    }

    #[test]
    fn defaults_are_json_encoded() {
        let schema = json!({"properties": {
            "s": {"type": "string", "default": "asc"},
            "o": {"type": "object", "default": {"k": [1]}},
            "f": {"type": "boolean", "default": false},
            "r": {"type": "integer", "default": 3}
        }, "required": ["r"]});
        assert_eq!(
            params(&schema),
            vec![
                "{boolean} [params.f=false]",
                "{Object} [params.o={\"k\":[1]}]",
                "{number} params.r - (default: 3) (required)",
                "{string} [params.s=\"asc\"]",
            ]
        );
    }

    #[test]
    fn format_and_first_description_line() {
        let schema = json!({"properties": {
            "url": {"type": "string", "format": "uri", "description": "\n  Where to go  \nmore"}
        }, "required": ["url"]});
        assert_eq!(
            params(&schema),
            vec!["{string} params.url - Where to go (format: uri) (required)"]
        );
    }

    #[test]
    fn nested_objects_and_array_items() {
        let schema = json!({
            "type": "object",
            "properties": {
                "opts": {
                    "type": "object",
                    "description": "Options",
                    "properties": {"depth": {"type": "integer"}, "lang": {"type": "string"}},
                    "required": ["lang"]
                },
                "items": {
                    "type": "array",
                    "items": {"type": "object", "properties": {"id": {"type": "string"}}, "required": ["id"]}
                },
                "grid": {"type": "array", "items": {"type": "array", "items": {"type": "object", "properties": {"v": {"type": "number"}}}}},
                "odd-name": {"type": "object", "properties": {"a b": {"type": "string"}}}
            },
            "required": ["opts"]
        });
        assert_eq!(
            params(&schema),
            vec![
                "{Array<Array<Object>>} [params.grid]",
                "{number} [params.grid[][].v]",
                "{Array<Object>} [params.items]",
                "{string} params.items[].id - (required)",
                "{Object} [params[\"odd-name\"]]",
                "{string} [params[\"odd-name\"][\"a b\"]]",
                "{Object} params.opts - Options (required)",
                "{number} [params.opts.depth]",
                "{string} params.opts.lang - (required)",
            ]
        );
        assert!(!needs_exact_schema(&schema));
    }

    #[test]
    fn depth_cap_shows_deeper_objects_as_object() {
        let mut schema = json!({"type": "object", "properties": {"leaf": {"type": "string"}}});
        for name in ["f", "e", "d", "c", "b", "a"] {
            schema = json!({"type": "object", "properties": {name: schema}});
        }
        let lines = params(&schema);
        assert_eq!(
            lines,
            vec![
                "{Object} [params.a]",
                "{Object} [params.a.b]",
                "{Object} [params.a.b.c]",
                "{Object} [params.a.b.c.d]",
                "{Object} [params.a.b.c.d.e]",
            ]
        );
        assert!(needs_exact_schema(&schema));
        // Exactly at the cap nothing is hidden.
        let mut shallow = json!({"type": "string"});
        for name in ["e", "d", "c", "b", "a"] {
            shallow = json!({"type": "object", "properties": {name: shallow}});
        }
        assert_eq!(params(&shallow).len(), 5);
        assert!(!needs_exact_schema(&shallow));
    }

    #[test]
    fn local_refs_are_resolved_for_display() {
        let schema = json!({
            "type": "object",
            "properties": {
                "user": {"$ref": "#/$defs/User", "description": "Who"},
                "legacy": {"$ref": "#/definitions/Id"},
                "maybe": {"anyOf": [{"$ref": "#/$defs/User"}, {"type": "null"}]}
            },
            "required": ["user"],
            "$defs": {"User": {"type": "object", "description": "A user", "properties": {"id": {"$ref": "#/definitions/Id"}}, "required": ["id"]}},
            "definitions": {"Id": {"type": "string", "description": "Identifier", "format": "uuid"}}
        });
        assert_eq!(
            params(&schema),
            vec![
                "{string} [params.legacy] - Identifier (format: uuid)",
                "{Object|null} [params.maybe] - A user",
                "{string} params.maybe.id - Identifier (format: uuid) (required)",
                "{Object} params.user - Who (required)",
                "{string} params.user.id - Identifier (format: uuid) (required)",
            ]
        );
        assert!(!needs_exact_schema(&schema));
    }

    #[test]
    fn ref_cycles_terminate_and_need_exact_schema() {
        // Zod's recursive output: `$ref: "#"`.
        let schema = json!({
            "type": "object",
            "properties": {"name": {"type": "string"}, "children": {"type": "array", "items": {"$ref": "#"}}},
            "required": ["name"]
        });
        assert_eq!(
            params(&schema),
            vec![
                "{Array<Object>} [params.children]",
                "{Array<Object>} [params.children[].children]",
                "{string} params.children[].name - (required)",
                "{string} params.name - (required)",
            ]
        );
        assert!(needs_exact_schema(&schema));

        let defs_cycle = json!({
            "properties": {"node": {"$ref": "#/$defs/Node"}},
            "$defs": {
                "Node": {"type": "object", "properties": {"next": {"$ref": "#/$defs/Node"}, "v": {"type": "number"}}},
                "A": {"$ref": "#/$defs/B"}, "B": {"anyOf": [{"$ref": "#/$defs/A"}, {"type": "null"}]}
            }
        });
        let lines = params(&defs_cycle);
        assert_eq!(
            lines,
            vec![
                "{Object} [params.node]",
                "{Object} [params.node.next]",
                "{number} [params.node.v]",
            ]
        );
        assert!(needs_exact_schema(&defs_cycle));
        // A pure `$ref` loop must not hang either.
        let pure_loop = json!({"properties": {"x": {"$ref": "#/$defs/A"}}, "$defs": {"A": {"$ref": "#/$defs/B"}, "B": {"anyOf": [{"$ref": "#/$defs/A"}, {"type": "array", "items": {"$ref": "#/$defs/B"}}]}}});
        let _ = schema_to_jsdoc("t", "", &pure_loop);
        assert!(needs_exact_schema(&pure_loop));
    }

    #[test]
    fn unresolvable_ref_shows_star_and_needs_exact() {
        let schema = json!({"properties": {"x": {"$ref": "https://example.com/s.json"}}});
        assert_eq!(params(&schema), vec!["{*} [params.x]"]);
        assert!(needs_exact_schema(&schema));
    }

    #[test]
    fn fan_out_is_bounded() {
        // Each level references the next 30 times: 30^5 paths if expanded naively.
        let mut defs = serde_json::Map::new();
        for level in 0..6 {
            let props: serde_json::Map<String, Value> = (0..30)
                .map(|i| {
                    (
                        format!("p{i}"),
                        json!({"$ref": format!("#/$defs/L{}", level + 1)}),
                    )
                })
                .collect();
            defs.insert(
                format!("L{level}"),
                json!({"type": "object", "properties": props}),
            );
        }
        defs.insert("L6".into(), json!({"type": "string"}));
        let schema = json!({"$ref": "#/$defs/L0", "$defs": defs});
        let doc = schema_to_jsdoc("t", "", &schema);
        assert!(
            doc.lines().count() < MAX_PARAM_LINES + 20,
            "{}",
            doc.lines().count()
        );
        assert!(doc.contains("more parameters omitted"));
        assert!(needs_exact_schema(&schema));
    }

    #[test]
    fn all_of_objects_are_merged_for_display() {
        let schema = json!({"allOf": [
            {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]},
            {"type": "object", "properties": {"b": {"type": "number"}}}
        ]});
        assert_eq!(
            params(&schema),
            vec!["{string} params.a - (required)", "{number} [params.b]"]
        );
        assert!(needs_exact_schema(&schema));
    }

    #[test]
    fn needs_exact_schema_true_cases() {
        let cases = [
            json!({"properties": {"x": {"anyOf": [{"type": "object", "properties": {"a": {}}}, {"type": "object", "properties": {"b": {}}}]}}}),
            json!({"properties": {"x": {"oneOf": [{"type": "object"}, {"type": "array", "items": {"type": "object"}}]}}}),
            json!({"properties": {"x": {"type": "string"}}, "if": {"properties": {"x": {"const": "a"}}}, "then": {"required": ["y"]}}),
            json!({"patternProperties": {"^x-": {"type": "string"}}}),
            json!({"properties": {"m": {"type": "object", "additionalProperties": {"type": "number"}}}}),
            json!({"dependentRequired": {"a": ["b"]}}),
            json!({"dependentSchemas": {"a": {"required": ["b"]}}}),
            json!({"dependencies": {"a": ["b"]}}),
            json!({"properties": {"x": {"not": {"type": "null"}}}}),
            json!({"properties": {"n": {"type": "number", "minimum": 1}}}),
            json!({"properties": {"n": {"type": "integer", "maximum": 2147483647}}}),
            json!({"properties": {"n": {"type": "number", "exclusiveMaximum": 0}}}),
            json!({"properties": {"n": {"type": "number", "multipleOf": 5}}}),
            json!({"properties": {"s": {"type": "string", "minLength": 1}}}),
            json!({"properties": {"s": {"type": "string", "pattern": "^a"}}}),
            json!({"properties": {"a": {"type": "array", "uniqueItems": true}}}),
            json!({"properties": {"a": {"type": "array", "contains": {"const": 1}}}}),
            json!({"properties": {"a": {"type": "array", "maxItems": 3}}}),
            json!({"properties": {"a": {"type": "array", "prefixItems": [{"type": "string"}]}}}),
            json!({"properties": {"a": {"type": "array", "items": [{"type": "string"}]}}}),
            json!({"properties": {"a": {}}, "unevaluatedProperties": false}),
            json!({"properties": {"a": {"type": "array", "unevaluatedItems": {"type": "string"}}}}),
            json!({"properties": {"r": {"type": "object", "propertyNames": {"pattern": "^a"}}}}),
            json!({"properties": {"d": {"$dynamicRef": "#meta"}}}),
            json!({"minProperties": 1}),
            json!({"allOf": [{"properties": {"a": {}}}, {"properties": {"b": {}}}]}),
        ];
        for schema in cases {
            assert!(needs_exact_schema(&schema), "expected true for {schema}");
            assert!(
                describe_tool("t", "d", &schema)
                    .contains(&format!("\n\nExact JSON Schema:\n{schema}"))
            );
        }
    }

    #[test]
    fn needs_exact_schema_false_cases() {
        let cases = [
            json!({}),
            json!({"type": "object", "properties": {}, "additionalProperties": false}),
            json!({"type": "object", "properties": {"a": {"type": "string", "enum": ["x", "y"]}}, "required": ["a"]}),
            json!({"properties": {"a": {"anyOf": [{"type": "string"}, {"type": "null"}]}}}),
            json!({"properties": {"a": {"oneOf": [{"type": "string"}, {"type": "number"}]}}}),
            // nullable object: children are shown
            json!({"properties": {"a": {"anyOf": [{"type": "object", "properties": {"b": {"type": "string"}}}, {"type": "null"}]}}}),
            json!({"properties": {"a": {"type": "array", "items": {"type": "object", "properties": {"b": {}}}}}}),
            json!({"properties": {"u": {"type": "string", "format": "uri", "default": "x"}}}),
            json!({"properties": {"i": {"type": "integer", "minimum": -9007199254740991i64, "maximum": 9007199254740991i64}}}),
            json!({"properties": {"f": {"type": "number", "minimum": -1.7976931348623157e308, "maximum": 1.7976931348623157e308}}}),
            json!({"properties": {"o": {"type": "object", "additionalProperties": {}}}}),
            json!({"properties": {"o": {"type": "object", "additionalProperties": true}}}),
            json!({"properties": {"a": {"type": "array", "uniqueItems": false}}}),
            json!({"properties": {"x": {"$ref": "#/$defs/X"}, "y": {"$ref": "#/$defs/X"}}, "$defs": {"X": {"type": "string"}, "Unused": {"type": "string", "minLength": 3}}}),
            json!({"properties": {"x": {"allOf": [{"$ref": "#/$defs/X"}], "description": "pydantic style"}}, "$defs": {"X": {"type": "string"}}}),
            json!(true),
        ];
        for schema in cases {
            assert!(!needs_exact_schema(&schema), "expected false for {schema}");
            assert!(!describe_tool("t", "d", &schema).contains("Exact JSON Schema"));
        }
    }

    #[test]
    fn describe_tool_appends_compact_schema() {
        let schema = json!({"type": "object", "properties": {"n": {"type": "integer", "minimum": 1}}, "required": ["n"]});
        // Compact JSON as serde_json prints it (key order follows its `preserve_order` setting).
        let expected = format!(
            "/**\n * Counts\n *\n * @param {{Object}} params - Parameters\n\
             \x20* @param {{number}} params.n - (required)\n */\n\
             function count(params) {{}}\n\nExact JSON Schema:\n{schema}"
        );
        assert_eq!(describe_tool("count", "Counts", &schema), expected);
        assert!(!expected.contains("\n\n\n") && expected.ends_with(&schema.to_string()));
    }

    #[test]
    fn never_branches_are_dropped() {
        // zod-to-json-schema's optional-undefined: `anyOf: [X, {"not": {}}, null]`.
        let schema = json!({"properties": {
            "bins": {"anyOf": [{"type": "number"}, {"not": {}}, {"type": "null"}], "default": null},
            "gone": {"not": {}}
        }});
        assert_eq!(params(&schema), vec!["{number|null} [params.bins=null]"]);
        assert!(!needs_exact_schema(&schema));
        assert!(needs_exact_schema(
            &json!({"properties": {"x": {"not": {"type": "null"}}}})
        ));
    }

    #[test]
    fn nullable_description_is_found_inside_the_union() {
        let schema = json!({"properties": {"note": {"anyOf": [{"type": "string", "description": "A note"}, {"type": "null"}]}}});
        assert_eq!(
            params(&schema),
            vec!["{string|null} [params.note] - A note"]
        );
    }

    #[test]
    fn non_object_root_and_false_properties() {
        let doc = schema_to_jsdoc(
            "t",
            "",
            &json!({"type": "array", "items": {"type": "object", "properties": {"a": {"type": "string"}}}}),
        );
        assert!(
            doc.contains(
                " * @param {Array<Object>} params - Parameters\n * @param {string} [params[].a]\n"
            ),
            "{doc}"
        );
        let lines = params(&json!({"properties": {"gone": false, "ok": true}}));
        assert_eq!(lines, vec!["{*} [params.ok]"]);
    }

    /// What `asSchema(z.object(...)).jsonSchema` gives in AI SDK 5/6 for Zod 4.
    #[test]
    fn zod4_ai_sdk_output_renders_cleanly() {
        let schema = json!({
            "$schema": "http://json-schema.org/draft-07/schema#",
            "type": "object",
            "properties": {
                "query": {"type": "string", "description": "Search text"},
                "limit": {"type": "integer", "minimum": -9007199254740991i64, "maximum": 9007199254740991i64, "default": 5},
                "mode": {"type": "string", "enum": ["fast", "exact"]},
                "note": {"anyOf": [{"type": "string"}, {"type": "null"}]},
                "kind": {"type": "string", "const": "search"},
                "filters": {"type": "object", "properties": {"lang": {"type": "string"}}, "additionalProperties": false},
                "loose": {"type": "object", "properties": {}, "additionalProperties": {}}
            },
            "required": ["query", "mode", "note", "kind"],
            "additionalProperties": false
        });
        assert_eq!(
            params(&schema),
            vec![
                "{Object} [params.filters]",
                "{string} [params.filters.lang]",
                "{\"search\"} params.kind - (required)",
                "{number} [params.limit=5]",
                "{Object} [params.loose]",
                "{\"fast\"|\"exact\"} params.mode - (required)",
                "{string|null} params.note - (required)",
                "{string} params.query - Search text (required)",
            ]
        );
        assert!(!needs_exact_schema(&schema));
    }
}
