//! The Rust half of the tool registry: what each entry says about itself, indexed for search,
//! with its input schema compiled for validation.
//!
//! The AI SDK `Tool` objects (with their `execute` functions) stay in JS; this side holds only
//! plain data, so it can be searched and validated without touching the JS thread's objects.

use std::collections::{HashMap, HashSet};
use std::str::FromStr;
use std::sync::{Arc, OnceLock};

use serde_json::Value;

use crate::error::{Result, ToolregError};
use crate::schema::{self, CompiledSchema};
use crate::search::{
    SearchDoc, SearchError, SearchHit, SearchIndex, SearchMode, SearchOptions, VectorStats,
};

/// Longest name any provider accepts (Anthropic: 128; OpenAI stops at 64).
pub const MAX_NAME_LEN: usize = 128;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Defer {
    Never,
    Always,
    Auto,
}

impl FromStr for Defer {
    type Err = ToolregError;

    fn from_str(value: &str) -> Result<Self> {
        match value {
            "never" => Ok(Defer::Never),
            "always" => Ok(Defer::Always),
            "auto" => Ok(Defer::Auto),
            other => Err(ToolregError::invalid(
                "defer",
                format!("{other:?} is not one of 'never', 'always', 'auto'"),
            )),
        }
    }
}

/// What an entry says about itself, minus the JS `Tool`.
#[derive(Clone, Debug, PartialEq)]
pub struct EntrySpec {
    pub name: String,
    pub namespace: String,
    pub namespace_label: Option<String>,
    pub description: String,
    pub defer: Defer,
}

impl EntrySpec {
    /// What the model sees as the namespace.
    pub fn label(&self) -> &str {
        self.namespace_label.as_deref().unwrap_or(&self.namespace)
    }
}

/// Checks that at least one provider accepts `name` as a tool name: 1–128 characters of
/// `[A-Za-z0-9_.-]` (dots only pass Gemini; the rest pass OpenAI and Anthropic).
pub fn check_tool_name(name: &str) -> Result<()> {
    if name.is_empty() {
        return Err(ToolregError::invalid("name", "must not be empty"));
    }
    if name.len() > MAX_NAME_LEN {
        return Err(ToolregError::invalid(
            "name",
            format!(
                "{name:?} is {} characters long; providers accept at most {MAX_NAME_LEN}",
                name.len()
            ),
        ));
    }
    if let Some(bad) = name
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.')))
    {
        return Err(ToolregError::invalid(
            "name",
            format!(
                "{name:?} contains {bad:?}; providers accept only letters, digits, '_', '-' and '.'"
            ),
        ));
    }
    Ok(())
}

/// An entry's input schema, compiled on first validation (most deferred tools are never
/// called, so compiling eagerly would waste registration time).
#[derive(Debug)]
struct StoredSchema {
    json: Value,
    compiled: OnceLock<std::result::Result<CompiledSchema, String>>,
}

#[derive(Debug)]
struct Record {
    spec: EntrySpec,
    schema: Option<Arc<StoredSchema>>,
}

/// The outcome of checking a tool call's input against the tool's schema.
#[derive(Debug, PartialEq)]
pub enum InputCheck {
    /// Valid; the value has the schema's defaults filled in.
    Valid(Value),
    /// Invalid; one readable line per problem, with its JSON path.
    Invalid(String),
    /// The schema could not be compiled (e.g. an unresolvable `$ref`), so the input is passed
    /// through unchecked rather than blocking every call to the tool.
    Unchecked { reason: String },
}

#[derive(Debug, Default)]
pub struct Registry {
    records: HashMap<String, Record>,
    index: SearchIndex,
}

impl Registry {
    pub fn new() -> Self {
        Registry::default()
    }

    pub fn len(&self) -> usize {
        self.records.len()
    }

    pub fn is_empty(&self) -> bool {
        self.records.is_empty()
    }

    pub fn get(&self, name: &str) -> Option<&EntrySpec> {
        self.records.get(name).map(|r| &r.spec)
    }

    /// Adds or replaces an entry. Returns the spec it replaced, so callers can tell a resync
    /// (same namespace) from a clash between two owners of one name.
    pub fn register(
        &mut self,
        spec: EntrySpec,
        schema: Option<Value>,
    ) -> Result<Option<EntrySpec>> {
        check_tool_name(&spec.name)?;
        if spec.namespace.is_empty() {
            return Err(ToolregError::invalid("namespace", "must not be empty"));
        }
        if let Some(schema) = &schema {
            check_schema_shape(&spec.name, schema)?;
        }
        let schema = schema.map(|json| {
            Arc::new(StoredSchema {
                json,
                compiled: OnceLock::new(),
            })
        });
        self.reindex(&spec, schema.as_deref());
        let previous = self
            .records
            .insert(spec.name.clone(), Record { spec, schema });
        Ok(previous.map(|r| r.spec))
    }

    /// Registers many entries at once (a whole MCP server, a catalog at startup). All entries
    /// are checked first, so a bad one leaves the registry as it was. Returns, per entry, the
    /// spec it replaced.
    pub fn register_many(
        &mut self,
        entries: Vec<(EntrySpec, Option<Value>)>,
    ) -> Result<Vec<Option<EntrySpec>>> {
        for (spec, schema) in &entries {
            check_tool_name(&spec.name)?;
            if spec.namespace.is_empty() {
                return Err(ToolregError::invalid(
                    "namespace",
                    format!("must not be empty (tool {:?})", spec.name),
                ));
            }
            if let Some(schema) = schema {
                check_schema_shape(&spec.name, schema)?;
            }
        }
        self.reserve(entries.len());
        entries
            .into_iter()
            .map(|(spec, schema)| self.register(spec, schema))
            .collect()
    }

    /// Attaches a schema that JS resolved after registration (AI SDK schemas may be lazy).
    pub fn set_schema(&mut self, name: &str, schema: Value) -> Result<()> {
        check_schema_shape(name, &schema)?;
        let record = self
            .records
            .get_mut(name)
            .ok_or_else(|| ToolregError::UnknownTool { name: name.into() })?;
        let stored = Arc::new(StoredSchema {
            json: schema,
            compiled: OnceLock::new(),
        });
        record.schema = Some(stored.clone());
        let spec = record.spec.clone();
        self.reindex(&spec, Some(&stored));
        Ok(())
    }

    pub fn deregister(&mut self, name: &str) -> bool {
        if self.records.remove(name).is_some() {
            self.index.remove(name);
            true
        } else {
            false
        }
    }

    fn reindex(&mut self, spec: &EntrySpec, schema: Option<&StoredSchema>) {
        let params = schema
            .map(|s| searchable_params(&s.json))
            .unwrap_or_default();
        self.index.upsert(&SearchDoc {
            name: &spec.name,
            namespace: &spec.namespace,
            namespace_label: spec.label(),
            description: &spec.description,
            params: &params,
        });
    }

    pub fn search(
        &self,
        query: &str,
        namespace: Option<&str>,
        limit: usize,
        allowed: Option<&HashSet<String>>,
        mode: SearchMode,
    ) -> Result<Vec<SearchHit>> {
        self.search_hybrid(query, None, namespace, limit, allowed, mode)
    }

    /// [`Self::search`], fused with a dense ranking when `query_vector` (the query's
    /// embedding) is given; see [`SearchIndex::search_hybrid`].
    pub fn search_hybrid(
        &self,
        query: &str,
        query_vector: Option<&[f32]>,
        namespace: Option<&str>,
        limit: usize,
        allowed: Option<&HashSet<String>>,
        mode: SearchMode,
    ) -> Result<Vec<SearchHit>> {
        self.index
            .search_hybrid(
                query,
                query_vector,
                &SearchOptions {
                    namespace,
                    limit,
                    allowed,
                    mode,
                },
            )
            .map_err(query_error)
    }

    /// Makes room for `additional` more entries (bulk registration).
    pub fn reserve(&mut self, additional: usize) {
        self.records.reserve(additional);
        self.index.reserve(additional);
    }

    /// Starts keeping embedding vectors for hybrid search (the host has an embedder).
    pub fn enable_vectors(&mut self) {
        self.index.enable_vectors();
    }

    /// Embeds every entry with the built-in static table (hybrid search with no host
    /// embedder); see [`SearchIndex::use_builtin_embeddings`].
    pub fn use_builtin_embeddings(&mut self) {
        self.index.use_builtin_embeddings();
    }

    /// Up to `max` `(name, text)` pairs waiting for an embedding; see
    /// [`SearchIndex::take_pending_vectors`].
    pub fn take_pending_vectors(&mut self, max: usize) -> Vec<(String, String)> {
        self.index.take_pending_vectors(max)
    }

    pub fn requeue_vectors<'a>(&mut self, names: impl IntoIterator<Item = &'a str>) {
        self.index.requeue_vectors(names);
    }

    /// Stores one embedding; `Ok(false)` when the tool is gone or changed meanwhile.
    pub fn set_vector(&mut self, name: &str, text: &str, vector: &[f32]) -> Result<bool> {
        self.index
            .set_vector(name, text, vector)
            .map_err(query_error)
    }

    pub fn vector_stats(&self) -> VectorStats {
        self.index.vector_stats()
    }

    fn schema_of(&self, name: &str) -> Result<Option<&Arc<StoredSchema>>> {
        self.records
            .get(name)
            .map(|r| r.schema.as_ref())
            .ok_or_else(|| ToolregError::UnknownTool { name: name.into() })
    }

    /// The tool's signature as JSDoc, plus the exact JSON Schema when JSDoc cannot show it.
    pub fn describe(&self, name: &str) -> Result<String> {
        let spec = self
            .get(name)
            .ok_or_else(|| ToolregError::UnknownTool { name: name.into() })?;
        let empty = Value::Object(Default::default());
        let schema = self.schema_of(name)?.map_or(&empty, |s| &s.json);
        Ok(schema::describe_tool(name, &spec.description, schema))
    }

    /// The JSDoc signature alone (for error messages, where the exact schema would be noise).
    pub fn signature(&self, name: &str) -> Result<String> {
        let spec = self
            .get(name)
            .ok_or_else(|| ToolregError::UnknownTool { name: name.into() })?;
        let empty = Value::Object(Default::default());
        let schema = self.schema_of(name)?.map_or(&empty, |s| &s.json);
        Ok(schema::schema_to_jsdoc(name, &spec.description, schema))
    }

    pub fn check_input(&self, name: &str, input: Value) -> Result<InputCheck> {
        let Some(stored) = self.schema_of(name)? else {
            return Ok(InputCheck::Unchecked {
                reason: format!("{name:?} has no input schema yet"),
            });
        };
        let compiled = stored
            .compiled
            .get_or_init(|| CompiledSchema::compile(&stored.json).map_err(|e| e.to_string()));
        let compiled = match compiled {
            Ok(c) => c,
            Err(reason) => {
                return Ok(InputCheck::Unchecked {
                    reason: reason.clone(),
                });
            }
        };
        // Defaults first, as ajv's useDefaults and Zod do: a required field with a default
        // may be omitted.
        match compiled.parse(&input) {
            Ok(value) => Ok(InputCheck::Valid(value)),
            Err(issues) => Ok(InputCheck::Invalid(schema::format_issues(&issues))),
        }
    }
}

fn query_error(e: SearchError) -> ToolregError {
    match e {
        SearchError::VectorDim { .. } | SearchError::QueryVectorLength { .. } => {
            ToolregError::invalid("embedding", e.to_string())
        }
        other => ToolregError::InvalidQuery(other.to_string()),
    }
}

/// Providers require an object schema at the top of a tool's input; anything else would be
/// rejected at request time, far from where it was registered.
fn check_schema_shape(name: &str, schema: &Value) -> Result<()> {
    match schema {
        Value::Object(map) => match map.get("type") {
            None => Ok(()),
            Some(Value::String(t)) if t == "object" => Ok(()),
            Some(other) => Err(ToolregError::InvalidSchema {
                name: name.into(),
                reason: format!("the top-level type must be \"object\", not {other}"),
            }),
        },
        other => Err(ToolregError::InvalidSchema {
            name: name.into(),
            reason: format!(
                "expected a JSON Schema object, got {}",
                schema::json_type_name(other)
            ),
        }),
    }
}

/// Parameter names and the first line of their descriptions, two levels deep: enough for
/// search to match "owner"/"repo" without indexing every nested corner of large schemas.
fn searchable_params(schema: &Value) -> Vec<(String, String)> {
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
                .unwrap_or_default()
                .to_owned();
            out.push((path.clone(), description));
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn spec(name: &str, namespace: &str, description: &str) -> EntrySpec {
        EntrySpec {
            name: name.into(),
            namespace: namespace.into(),
            namespace_label: None,
            description: description.into(),
            defer: Defer::Auto,
        }
    }

    fn search_names(registry: &Registry, query: &str) -> Vec<String> {
        registry
            .search(query, None, 5, None, SearchMode::Bm25)
            .unwrap()
            .into_iter()
            .map(|h| h.name)
            .collect()
    }

    #[test]
    fn rejects_names_no_provider_accepts() {
        assert!(check_tool_name("github_create-issue.v2").is_ok());
        for bad in ["", "has space", "slash/name", "名字", &"x".repeat(129)] {
            let err = check_tool_name(bad).unwrap_err();
            assert_eq!(err.code(), "TOOLREG_INVALID_ARGUMENT", "{bad}");
            assert!(err.to_string().starts_with("invalid name"), "{err}");
        }
    }

    #[test]
    fn bad_entries_leave_the_registry_unchanged() {
        let mut registry = Registry::new();
        registry.register(spec("ok", "web", "fine"), None).unwrap();
        assert!(
            registry
                .register(spec("bad name", "web", "x"), None)
                .is_err()
        );
        assert!(registry.register(spec("empty_ns", "", "x"), None).is_err());
        assert!(
            registry
                .register(spec("scalar", "web", "x"), Some(json!({"type": "string"})))
                .is_err()
        );
        assert_eq!(registry.len(), 1);
        assert_eq!(search_names(&registry, "bad"), Vec::<String>::new());
    }

    #[test]
    fn register_overwrites_and_reports_previous() {
        let mut registry = Registry::new();
        assert!(
            registry
                .register(spec("t", "mcp:a", "first"), None)
                .unwrap()
                .is_none()
        );
        let previous = registry
            .register(spec("t", "mcp:b", "second"), None)
            .unwrap()
            .unwrap();
        assert_eq!(previous.namespace, "mcp:a");
        assert_eq!(registry.len(), 1);
        assert_eq!(registry.get("t").unwrap().description, "second");
    }

    #[test]
    fn search_follows_register_schema_and_deregister() {
        let mut registry = Registry::new();
        registry
            .register(
                spec("get_weather", "web", "Current weather for a city"),
                None,
            )
            .unwrap();
        registry
            .register(spec("send_mail", "mcp:gmail", "Send an email"), None)
            .unwrap();
        assert_eq!(search_names(&registry, "weather"), ["get_weather"]);
        registry
            .set_schema(
                "send_mail",
                json!({"type": "object", "properties": {"recipient": {"type": "string", "description": "Address to deliver to"}}}),
            )
            .unwrap();
        assert_eq!(search_names(&registry, "recipient"), ["send_mail"]);
        assert!(registry.deregister("get_weather"));
        assert!(!registry.deregister("get_weather"));
        assert!(search_names(&registry, "weather").is_empty());
    }

    #[test]
    fn check_input_validates_and_fills_defaults() {
        let mut registry = Registry::new();
        let schema = json!({
            "type": "object",
            "properties": {"query": {"type": "string"}, "limit": {"type": "integer", "default": 10}},
            "required": ["query"]
        });
        registry
            .register(spec("web_search", "web", "Search the web"), Some(schema))
            .unwrap();
        assert_eq!(
            registry
                .check_input("web_search", json!({"query": "rust"}))
                .unwrap(),
            InputCheck::Valid(json!({"query": "rust", "limit": 10}))
        );
        match registry
            .check_input("web_search", json!({"limit": "3"}))
            .unwrap()
        {
            InputCheck::Invalid(message) => {
                assert!(message.contains("query"), "{message}");
                assert!(message.contains("limit"), "{message}");
            }
            other => panic!("expected invalid, got {other:?}"),
        }
        assert!(matches!(
            registry.check_input("nope", json!({})),
            Err(ToolregError::UnknownTool { .. })
        ));
    }

    #[test]
    fn uncompilable_schema_passes_input_unchecked() {
        let mut registry = Registry::new();
        let schema = json!({"type": "object", "properties": {"x": {"$ref": "https://example.com/remote.json"}}});
        registry
            .register(spec("remote_ref", "web", "x"), Some(schema))
            .unwrap();
        assert!(matches!(
            registry.check_input("remote_ref", json!({"x": 1})).unwrap(),
            InputCheck::Unchecked { .. }
        ));
    }

    #[test]
    fn describe_renders_jsdoc() {
        let mut registry = Registry::new();
        let schema = json!({"type": "object", "properties": {"query": {"type": "string", "description": "What to find"}}, "required": ["query"]});
        registry
            .register(spec("mcp__s1__t", "mcp:s1", "Finds things"), Some(schema))
            .unwrap();
        let doc = registry.describe("mcp__s1__t").unwrap();
        assert!(doc.contains("function mcp__s1__t(params)"), "{doc}");
        assert!(doc.contains("@param {string} params.query"), "{doc}");
    }

    #[test]
    fn searchable_params_walks_nested_objects_and_items() {
        let schema = json!({"type": "object", "properties": {
            "repo": {"type": "object", "description": "Target\nmore", "properties": {"owner": {"type": "string"}}},
            "labels": {"type": "array", "items": {"type": "object", "properties": {"name": {"type": "string"}}}}
        }});
        let params = searchable_params(&schema);
        assert!(params.contains(&("repo".into(), "Target".into())));
        assert!(params.iter().any(|(p, _)| p == "repo.owner"));
        assert!(params.iter().any(|(p, _)| p == "labels.name"));
    }
}
