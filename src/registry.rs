//! The Rust half of the tool registry: what each entry says about itself, indexed for search,
//! with its input schema compiled for validation.
//!
//! The AI SDK `Tool` objects (with their `execute` functions) stay in JS; this side holds only
//! plain data, so it can be searched and validated without touching the JS thread's objects.

use std::collections::HashMap;
use std::str::FromStr;
use std::sync::OnceLock;

use serde_json::Value;

use crate::error::{Result, ToolregError};
use crate::schema::{self, CompiledSchema};
use crate::search::{SearchDoc, SearchError, SearchHit, SearchIndex, SearchOptions, VectorStats};

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

/// An entry's input schema as the JSON text it was registered with. It is parsed on first
/// use (`describe`, `signature`, `check_input`) and compiled on first validation: most
/// deferred tools are never inspected or called, and a catalog of parsed schemas would cost
/// registration time and tens of megabytes for nothing.
#[derive(Debug)]
struct StoredSchema {
    text: Box<str>,
    json: OnceLock<Value>,
    compiled: OnceLock<std::result::Result<CompiledSchema, String>>,
}

impl StoredSchema {
    fn new(text: String) -> Self {
        StoredSchema {
            text: text.into_boxed_str(),
            json: OnceLock::new(),
            compiled: OnceLock::new(),
        }
    }

    fn json(&self) -> &Value {
        // The text went through the same parser at registration ([`schema::outline`]), so
        // this cannot fail; an empty schema would be the safe reading if it ever did.
        self.json
            .get_or_init(|| serde_json::from_str(&self.text).unwrap_or_else(|_| empty_schema()))
    }
}

fn empty_schema() -> Value {
    Value::Object(Default::default())
}

/// An entry checked and read for indexing, not yet in the registry.
struct Checked {
    spec: EntrySpec,
    schema: Option<StoredSchema>,
    params: Vec<(String, String)>,
}

impl Checked {
    fn search_doc(&self) -> SearchDoc<'_> {
        SearchDoc {
            name: &self.spec.name,
            namespace: &self.spec.namespace,
            namespace_label: self.spec.label(),
            description: &self.spec.description,
            params: &self.params,
        }
    }
}

/// Below this many entries per thread, `register_many` checks them on the calling thread.
const MIN_ENTRIES_PER_THREAD: usize = 1024;

#[derive(Debug)]
struct Record {
    spec: EntrySpec,
    schema: Option<StoredSchema>,
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

    /// Adds or replaces an entry, its schema given as a parsed value (Rust callers; the addon
    /// passes JSON text to [`Self::register_json`]). Returns the spec it replaced, so callers
    /// can tell a resync (same namespace) from a clash between two owners of one name.
    pub fn register(
        &mut self,
        spec: EntrySpec,
        schema: Option<Value>,
    ) -> Result<Option<EntrySpec>> {
        self.register_json(spec, schema.map(|s| s.to_string()))
    }

    /// Adds or replaces an entry whose schema (if known yet) is JSON text. Bad input (name,
    /// namespace, JSON, a non-object schema) leaves the registry unchanged.
    pub fn register_json(
        &mut self,
        spec: EntrySpec,
        schema_json: Option<String>,
    ) -> Result<Option<EntrySpec>> {
        let checked = check_entry(spec, schema_json)?;
        Ok(self.insert(checked))
    }

    /// Registers many entries at once (a whole MCP server, a catalog at startup). All entries
    /// are checked first, so a bad one leaves the registry as it was. Returns, per entry, the
    /// spec it replaced.
    pub fn register_many(
        &mut self,
        entries: Vec<(EntrySpec, Option<String>)>,
    ) -> Result<Vec<Option<EntrySpec>>> {
        // Mostly schema parsing, independent per entry. The first bad entry (in order) is
        // the one reported, as when checking one by one.
        let chunks = crate::parallel::map_chunks(entries, MIN_ENTRIES_PER_THREAD, |chunk| {
            chunk
                .into_iter()
                .map(|(spec, schema)| check_entry(spec, schema))
                .collect::<Result<Vec<_>>>()
        });
        let mut checked = Vec::new();
        for chunk in chunks {
            checked.extend(chunk?);
        }
        self.reserve(checked.len());
        let docs: Vec<SearchDoc> = checked.iter().map(Checked::search_doc).collect();
        self.index.upsert_many(&docs);
        drop(docs);
        Ok(checked
            .into_iter()
            .map(|c| self.keep_record(c.spec, c.schema))
            .collect())
    }

    /// Attaches a schema (JSON text) that JS resolved after registration (AI SDK schemas may
    /// be lazy).
    pub fn set_schema(&mut self, name: &str, schema_json: String) -> Result<()> {
        let spec = self
            .get(name)
            .ok_or_else(|| ToolregError::UnknownTool { name: name.into() })?
            .clone();
        self.insert(check_entry(spec, Some(schema_json))?);
        Ok(())
    }

    fn insert(&mut self, entry: Checked) -> Option<EntrySpec> {
        self.index.upsert(&entry.search_doc());
        self.keep_record(entry.spec, entry.schema)
    }

    /// Stores an indexed entry's record; returns the spec it replaced.
    fn keep_record(&mut self, spec: EntrySpec, schema: Option<StoredSchema>) -> Option<EntrySpec> {
        let previous = self
            .records
            .insert(spec.name.clone(), Record { spec, schema });
        previous.map(|r| r.spec)
    }

    pub fn deregister(&mut self, name: &str) -> bool {
        if self.records.remove(name).is_some() {
            self.index.remove(name);
            true
        } else {
            false
        }
    }

    /// Word search (no embeddings, whatever the index keeps).
    pub fn search(&self, query: &str, opts: &SearchOptions) -> Result<Vec<SearchHit>> {
        self.index.search(query, opts).map_err(query_error)
    }

    /// [`Self::search`], fused with a dense ranking when `query_vector` (the query's
    /// embedding) is given or the built-in table can embed the query; see
    /// [`SearchIndex::search_hybrid`].
    pub fn search_hybrid(
        &self,
        query: &str,
        query_vector: Option<&[f32]>,
        opts: &SearchOptions,
    ) -> Result<Vec<SearchHit>> {
        self.index
            .search_hybrid(query, query_vector, opts)
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

    /// Keeps vectors from the built-in static table, computed by the caller; see
    /// [`SearchIndex::enable_builtin_vectors`].
    pub fn enable_builtin_vectors(&mut self) {
        self.index.enable_builtin_vectors();
    }

    /// See [`SearchIndex::set_language_bridge`]. The tools described in Chinese are indexed
    /// again, so their glosses follow the dictionary (a handful in most catalogs; their
    /// parameters are read from the stored schema again).
    pub fn set_language_bridge(
        &mut self,
        bridge: Option<std::sync::Arc<crate::search::bridge::LanguageBridge>>,
    ) {
        self.index.set_language_bridge(bridge);
        let chinese: Vec<(&EntrySpec, Vec<(String, String)>)> = (self.records.values())
            .filter(|record| crate::search::needs_glosses(&record.spec.description))
            .map(|record| {
                let params = (record.schema.as_ref())
                    .and_then(|s| schema::outline(&s.text).ok())
                    .map(|outline| outline.params)
                    .unwrap_or_default();
                (&record.spec, params)
            })
            .collect();
        let docs: Vec<SearchDoc> = (chinese.iter())
            .map(|(spec, params)| SearchDoc {
                name: &spec.name,
                namespace: &spec.namespace,
                namespace_label: spec.label(),
                description: &spec.description,
                params,
            })
            .collect();
        self.index.upsert_many(&docs);
    }

    /// Embeds every entry with the built-in static table as it is registered; see
    /// [`SearchIndex::use_builtin_embeddings`].
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

    fn schema_of(&self, name: &str) -> Result<Option<&StoredSchema>> {
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
        let empty = empty_schema();
        let schema = self.schema_of(name)?.map_or(&empty, StoredSchema::json);
        Ok(schema::describe_tool(name, &spec.description, schema))
    }

    /// [`Registry::describe`] for a model of `provider`: the exact-schema part is the form that
    /// provider accepts (a raw `$ref` schema in a tool result has made Gemini answer 400).
    pub fn describe_for(&self, name: &str, provider: schema::Provider) -> Result<String> {
        let spec = self
            .get(name)
            .ok_or_else(|| ToolregError::UnknownTool { name: name.into() })?;
        let empty = empty_schema();
        let schema = self.schema_of(name)?.map_or(&empty, StoredSchema::json);
        Ok(schema::describe_tool_showing(
            name,
            &spec.description,
            schema,
            |s| schema::provider_schema(s, provider).map_or_else(|_| s.clone(), |p| p.schema),
        ))
    }

    /// The JSDoc signature alone (for error messages, where the exact schema would be noise).
    pub fn signature(&self, name: &str) -> Result<String> {
        self.signature_as(name, name)
    }

    /// The signature of `name` under the name a client calls it by (`toolreg serve` lists
    /// server tools under their own names).
    pub fn signature_as(&self, name: &str, shown: &str) -> Result<String> {
        let spec = self
            .get(name)
            .ok_or_else(|| ToolregError::UnknownTool { name: name.into() })?;
        let empty = empty_schema();
        let schema = self.schema_of(name)?.map_or(&empty, StoredSchema::json);
        Ok(schema::schema_to_jsdoc(shown, &spec.description, schema))
    }

    pub fn check_input(&self, name: &str, input: Value) -> Result<InputCheck> {
        let Some(stored) = self.schema_of(name)? else {
            return Ok(InputCheck::Unchecked {
                reason: format!("{name:?} has no input schema yet"),
            });
        };
        let compiled = stored
            .compiled
            .get_or_init(|| CompiledSchema::compile(stored.json()).map_err(|e| e.to_string()));
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

/// Checks an entry and reads its schema's JSON text for indexing, without building the
/// schema's tree.
fn check_entry(spec: EntrySpec, schema_json: Option<String>) -> Result<Checked> {
    check_tool_name(&spec.name)?;
    if spec.namespace.is_empty() {
        return Err(ToolregError::invalid(
            "namespace",
            format!("must not be empty (tool {:?})", spec.name),
        ));
    }
    let Some(text) = schema_json else {
        return Ok(Checked {
            spec,
            schema: None,
            params: Vec::new(),
        });
    };
    let outline = schema::outline(&text).map_err(|e| {
        ToolregError::invalid(
            "inputSchema",
            format!("not valid JSON: {e} (tool {:?})", spec.name),
        )
    })?;
    check_schema_shape(&spec.name, &outline, &text)?;
    Ok(Checked {
        spec,
        schema: Some(StoredSchema::new(text)),
        params: outline.params,
    })
}

/// Providers require an object schema at the top of a tool's input; anything else would be
/// rejected at request time, far from where it was registered.
fn check_schema_shape(name: &str, outline: &schema::Outline, text: &str) -> Result<()> {
    let reason = if !outline.object {
        // Rare, so the text is parsed again just to name what it is.
        let found =
            serde_json::from_str(text).map_or("invalid JSON", |v| schema::json_type_name(&v));
        format!("expected a JSON Schema object, got {found}")
    } else {
        match &outline.root_type {
            None => return Ok(()),
            Some(Value::String(t)) if t == "object" => return Ok(()),
            Some(other) => format!("the top-level type must be \"object\", not {other}"),
        }
    };
    Err(ToolregError::InvalidSchema {
        name: name.into(),
        reason,
    })
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
            .search(query, &SearchOptions::default())
            .unwrap()
            .into_iter()
            .map(|h| h.name)
            .collect()
    }

    /// A dictionary installed after registration (the host loads it lazily) reaches the tools
    /// already registered: those described in Chinese are indexed again with their glosses,
    /// parameters included, and lose them when it is removed.
    #[test]
    fn a_late_dictionary_glosses_the_chinese_tools_already_registered() {
        let mut registry = Registry::new();
        registry
            .register_json(
                spec("getChineseCalendar", "bazi", "获取指定日期的黄历信息"),
                Some(
                    r#"{"type":"object","properties":{"solarDatetime":{"type":"string"}}}"#.into(),
                ),
            )
            .unwrap();
        registry
            .register_json(spec("get_weather", "weather", "Weather for a city"), None)
            .unwrap();
        assert!(search_names(&registry, "almanac").is_empty());
        let bridge = crate::search::bridge::LanguageBridge::parse("黄历\talmanac\n").unwrap();
        registry.set_language_bridge(Some(std::sync::Arc::new(bridge)));
        assert_eq!(search_names(&registry, "almanac"), ["getChineseCalendar"]);
        assert_eq!(
            search_names(&registry, "almanac solar datetime"),
            ["getChineseCalendar"]
        );
        assert_eq!(search_names(&registry, "weather"), ["get_weather"]);
        registry.set_language_bridge(None);
        assert!(search_names(&registry, "almanac").is_empty());
        assert_eq!(
            search_names(&registry, "solar datetime"),
            ["getChineseCalendar"]
        );
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
                json!({"type": "object", "properties": {"recipient": {"type": "string", "description": "Address to deliver to"}}}).to_string(),
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
    fn nested_parameters_are_searchable() {
        let mut registry = Registry::new();
        let schema = r#"{"type": "object", "properties": {
            "repo": {"type": "object", "description": "Target\nmore", "properties": {"owner": {"type": "string"}}},
            "labels": {"type": "array", "items": {"type": "object", "properties": {"colour": {"type": "string"}}}}
        }}"#;
        registry
            .register_json(spec("tag", "web", "x"), Some(schema.into()))
            .unwrap();
        for query in ["target", "owner", "colour"] {
            assert_eq!(search_names(&registry, query), ["tag"], "{query}");
        }
        assert!(search_names(&registry, "more").is_empty());
    }

    #[test]
    fn schema_json_is_checked_at_registration_and_parsed_on_use() {
        let mut registry = Registry::new();
        let err = registry
            .register_json(spec("t", "web", "x"), Some("{\"type\": ".into()))
            .unwrap_err();
        assert!(err.to_string().contains("not valid JSON"), "{err}");
        let err = registry
            .register_json(spec("t", "web", "x"), Some("[1]".into()))
            .unwrap_err();
        assert!(err.to_string().contains("got an array"), "{err}");
        assert!(registry.is_empty());
        let schema =
            r#"{"type":"object","properties":{"q":{"type":"string","description":"Query"}}}"#;
        registry
            .register_many(vec![(spec("t", "web", "x"), Some(schema.into()))])
            .unwrap();
        assert!(registry.signature("t").unwrap().contains("params.q"));
        registry
            .set_schema("t", r#"{"properties":{"z":{}}}"#.into())
            .unwrap();
        assert!(registry.signature("t").unwrap().contains("params.z"));
        assert_eq!(search_names(&registry, "query"), Vec::<String>::new());
    }

    /// Large batches are checked on several threads: the error must still be the first bad
    /// entry's, nothing may be added, and a good batch must land whole with its replacements.
    #[test]
    fn bulk_registration_reports_the_first_bad_entry_and_adds_nothing() {
        let schema = r#"{"type":"object","properties":{"city":{"type":"string"}}}"#;
        let batch = |bad: &[usize]| -> Vec<(EntrySpec, Option<String>)> {
            (0..5000)
                .map(|i| {
                    let name = if bad.contains(&i) {
                        format!("bad name {i}")
                    } else {
                        format!("tool_{i}")
                    };
                    (spec(&name, "web", "weather in a city"), Some(schema.into()))
                })
                .collect()
        };
        let mut registry = Registry::new();
        registry
            .register(spec("tool_7", "old", "kept until replaced"), None)
            .unwrap();
        let err = registry.register_many(batch(&[3100, 4900])).unwrap_err();
        assert!(err.to_string().contains("bad name 3100"), "{err}");
        assert_eq!(registry.len(), 1);
        assert_eq!(search_names(&registry, "weather"), Vec::<String>::new());

        let previous = registry.register_many(batch(&[])).unwrap();
        assert_eq!(registry.len(), 5000);
        assert_eq!(
            previous[7].as_ref().map(|p| p.namespace.as_str()),
            Some("old")
        );
        assert!(
            previous
                .iter()
                .enumerate()
                .all(|(i, p)| (i == 7) == p.is_some())
        );
        assert!(
            registry
                .signature("tool_4999")
                .unwrap()
                .contains("params.city")
        );
        assert_eq!(
            search_names(&registry, "kept until replaced"),
            Vec::<String>::new()
        );
    }
}
