//! The native half of `ToolRegistry`: entries, search, signatures and input validation.

use std::collections::HashSet;
use std::sync::{Arc, RwLock};

use napi::bindgen_prelude::*;
use napi_derive::napi;

use super::{js_error, parse_json};
use crate::error::ToolregError;
use crate::registry::{EntrySpec, InputCheck, Registry};
use crate::schema::Provider;
use crate::search::{SearchHit, SearchMode, SearchOptions};

/// A fixed set of tool names (a request's allow-list), built once and reused by every search
/// of that request instead of crossing the boundary with the whole list each time.
#[napi]
pub struct NameSet {
    // Shared with searches running on the worker pool.
    names: Arc<HashSet<String>>,
}

#[napi]
impl NameSet {
    #[napi(constructor)]
    pub fn new(names: Vec<String>) -> Self {
        NameSet {
            names: Arc::new(names.into_iter().collect()),
        }
    }

    #[napi]
    pub fn has(&self, name: String) -> bool {
        self.names.contains(&name)
    }

    #[napi(getter)]
    pub fn size(&self) -> u32 {
        self.names.len() as u32
    }
}

#[napi(object)]
pub struct NativeSearchOptions {
    pub namespace: Option<String>,
    pub limit: Option<u32>,
    pub mode: Option<String>,
}

/// A tool whose embedding is missing: the text to embed for it.
#[napi(object)]
pub struct NativeEmbedJob {
    pub name: String,
    pub text: String,
}

#[napi(object)]
pub struct NativeEmbeddingStats {
    pub enabled: bool,
    /// Tools with a vector.
    pub ready: u32,
    /// Tools waiting for one (not counting those being embedded right now).
    pub pending: u32,
    /// Vector length (0 before the first vector).
    pub dimensions: u32,
}

#[napi(object)]
pub struct NativeHit {
    pub name: String,
    pub score: f64,
}

#[napi(object)]
pub struct NativeInputCheck {
    /// `valid`, `invalid` or `unchecked`.
    pub status: String,
    /// The validated input with schema defaults filled in, as JSON (when `valid`).
    pub value_json: Option<String>,
    /// Readable problems (when `invalid`) or why validation was skipped (when `unchecked`).
    pub message: Option<String>,
}

#[napi]
pub struct NativeRegistry {
    // Shared with searches running on the worker pool.
    inner: Arc<RwLock<Registry>>,
}

pub(super) fn read(registry: &RwLock<Registry>) -> std::sync::RwLockReadGuard<'_, Registry> {
    // A panic while holding the lock cannot leave the registry half-written (every mutation is
    // a single map operation), so a poisoned lock is still safe to use.
    registry.read().unwrap_or_else(|p| p.into_inner())
}

impl NativeRegistry {
    fn read(&self) -> std::sync::RwLockReadGuard<'_, Registry> {
        read(&self.inner)
    }

    fn write(&self) -> std::sync::RwLockWriteGuard<'_, Registry> {
        self.inner.write().unwrap_or_else(|p| p.into_inner())
    }

    /// The registry itself, for work that checks inputs off the JS thread (`tool_exec`).
    pub(super) fn shared(&self) -> Arc<RwLock<Registry>> {
        self.inner.clone()
    }
}

#[napi]
impl NativeRegistry {
    #[napi(constructor)]
    pub fn new() -> Self {
        NativeRegistry {
            inner: Arc::new(RwLock::new(Registry::new())),
        }
    }

    /// Adds or replaces an entry; returns the namespace of the entry it replaced, if any.
    /// The fields come as separate arguments: reading them off an object costs a property
    /// lookup each, a measurable share of a registration.
    #[napi]
    pub fn register(
        &self,
        name: String,
        namespace: String,
        namespace_label: Option<String>,
        description: String,
        defer: String,
        schema_json: Option<String>,
    ) -> Result<Option<String>> {
        let spec = EntrySpec {
            defer: defer.parse().map_err(js_error)?,
            name,
            namespace,
            namespace_label,
            description,
        };
        let previous = self
            .write()
            .register_json(spec, schema_json)
            .map_err(js_error)?;
        Ok(previous.map(|p| p.namespace))
    }

    /// Registers many entries in one call: parallel arrays, one element per entry. An empty
    /// `namespaceLabels` element means no label; an empty `schemaJsons` element means the
    /// schema comes later (`setSchema`). All entries are checked before any is added.
    /// Returns, per entry, the namespace of the entry it replaced (or null).
    #[napi]
    pub fn register_many(
        &self,
        names: Vec<String>,
        namespaces: Vec<String>,
        namespace_labels: Vec<String>,
        descriptions: Vec<String>,
        defers: Vec<String>,
        schema_jsons: Vec<String>,
    ) -> Result<Vec<Option<String>>> {
        let n = names.len();
        if [
            namespaces.len(),
            namespace_labels.len(),
            descriptions.len(),
            defers.len(),
            schema_jsons.len(),
        ]
        .iter()
        .any(|&l| l != n)
        {
            return Err(js_error(ToolregError::invalid(
                "entries",
                "the parallel arrays differ in length",
            )));
        }
        let mut entries = Vec::with_capacity(n);
        let rows = names
            .into_iter()
            .zip(namespaces)
            .zip(namespace_labels)
            .zip(descriptions)
            .zip(defers)
            .zip(schema_jsons);
        for (((((name, namespace), label), description), defer), schema) in rows {
            let spec = EntrySpec {
                defer: defer.parse().map_err(js_error)?,
                name,
                namespace,
                namespace_label: (!label.is_empty()).then_some(label),
                description,
            };
            entries.push((spec, (!schema.is_empty()).then_some(schema)));
        }
        let previous = self.write().register_many(entries).map_err(js_error)?;
        Ok(previous
            .into_iter()
            .map(|p| p.map(|p| p.namespace))
            .collect())
    }

    /// Word queries are glossed with this dictionary from now on (`null`: no longer), and the
    /// tools described in Chinese are indexed again with their glosses: on the worker pool,
    /// as it takes ~0.1 s per thousand such tools (a search meanwhile waits for it).
    #[napi(ts_return_type = "Promise<void>")]
    pub fn set_language_bridge(
        &self,
        bridge: Option<&crate::binding::search::NativeLanguageBridge>,
    ) -> AsyncTask<SetBridgeTask> {
        AsyncTask::new(SetBridgeTask {
            registry: self.inner.clone(),
            bridge: bridge.map(|b| b.inner.clone()),
        })
    }

    /// Starts keeping embeddings for hybrid search; already registered tools are queued.
    #[napi]
    pub fn enable_embeddings(&self) {
        self.write().enable_vectors();
    }

    /// Starts keeping vectors from the built-in static table (`embedBuiltin` computes them);
    /// already registered tools are queued.
    #[napi]
    pub fn enable_builtin_embeddings(&self) {
        self.write().enable_builtin_vectors();
    }

    /// Up to `max` tools waiting for an embedding; they leave the queue until
    /// `setEmbeddings` stores their vectors or `requeueEmbeddings` puts them back.
    #[napi]
    pub fn take_pending_embeddings(&self, max: u32) -> Vec<NativeEmbedJob> {
        self.write()
            .take_pending_vectors(max as usize)
            .into_iter()
            .map(|(name, text)| NativeEmbedJob { name, text })
            .collect()
    }

    #[napi]
    pub fn requeue_embeddings(&self, names: Vec<String>) {
        self.write()
            .requeue_vectors(names.iter().map(String::as_str));
    }

    /// Stores `names.length` vectors, row after row in `vectors`, each computed from the
    /// matching element of `texts`. Returns how many were stored (a tool that changed or left
    /// meanwhile keeps waiting for its new text).
    #[napi]
    pub fn set_embeddings(
        &self,
        names: Vec<String>,
        texts: Vec<String>,
        vectors: Float32Array,
    ) -> Result<u32> {
        let n = names.len();
        if texts.len() != n || (n > 0 && !vectors.len().is_multiple_of(n)) {
            return Err(js_error(ToolregError::invalid(
                "embeddings",
                format!(
                    "{} names, {} texts and {} numbers do not make whole vectors",
                    n,
                    texts.len(),
                    vectors.len()
                ),
            )));
        }
        if n == 0 {
            return Ok(0);
        }
        let dim = vectors.len() / n;
        let mut registry = self.write();
        let mut stored = 0;
        for (i, (name, text)) in names.iter().zip(&texts).enumerate() {
            if registry
                .set_vector(name, text, &vectors[i * dim..(i + 1) * dim])
                .map_err(js_error)?
            {
                stored += 1;
            }
        }
        Ok(stored)
    }

    #[napi(getter)]
    pub fn embedding_stats(&self) -> NativeEmbeddingStats {
        let s = self.read().vector_stats();
        NativeEmbeddingStats {
            enabled: s.enabled,
            ready: s.ready as u32,
            pending: s.pending as u32,
            dimensions: s.dim as u32,
        }
    }

    #[napi]
    pub fn set_schema(&self, name: String, schema_json: String) -> Result<()> {
        self.write()
            .set_schema(&name, schema_json)
            .map_err(js_error)
    }

    #[napi]
    pub fn deregister(&self, name: String) -> bool {
        self.write().deregister(&name)
    }

    #[napi(getter)]
    pub fn size(&self) -> u32 {
        self.read().len() as u32
    }

    #[napi]
    pub fn search(
        &self,
        query: String,
        options: NativeSearchOptions,
        allowed: Option<&NameSet>,
        query_vector: Option<Float32Array>,
    ) -> Result<Vec<NativeHit>> {
        let mut task = SearchTask::new(&self.inner, query, options, allowed, query_vector)?;
        // Hybrid only when the caller brings the query's vectors: embedding the query with the
        // built-in table and scoring every tool's vector is for the worker pool (`searchAsync`).
        task.hybrid = task.query_vector.is_some();
        task.compute().map(native_hits)
    }

    /// Hybrid search on the worker pool (scoring every tool's vector should not hold the JS
    /// thread): with `queryVector`, or with the built-in table embedding the query.
    #[napi(ts_return_type = "Promise<NativeHit[]>")]
    pub fn search_async(
        &self,
        query: String,
        options: NativeSearchOptions,
        allowed: Option<&NameSet>,
        query_vector: Option<Float32Array>,
    ) -> Result<AsyncTask<SearchTask>> {
        SearchTask::new(&self.inner, query, options, allowed, query_vector).map(AsyncTask::new)
    }

    /// With `provider` (an AI SDK model's provider string), the exact-schema part is the form
    /// that provider accepts.
    #[napi]
    pub fn describe(
        &self,
        name: String,
        provider: Option<String>,
        strict: Option<bool>,
    ) -> Result<String> {
        let registry = self.read();
        match provider {
            Some(provider) => {
                let provider = Provider::for_model(&provider, strict.unwrap_or(false));
                registry.describe_for(&name, provider).map_err(js_error)
            }
            None => registry.describe(&name).map_err(js_error),
        }
    }

    /// The JSDoc signature of `name`, written under `shown` when the caller knows the tool by
    /// another name.
    #[napi]
    pub fn signature(&self, name: String, shown: Option<String>) -> Result<String> {
        let shown = shown.as_deref().unwrap_or(&name);
        self.read().signature_as(&name, shown).map_err(js_error)
    }

    #[napi]
    pub fn check_input(&self, name: String, input_json: String) -> Result<NativeInputCheck> {
        let input = parse_json("params", &input_json)?;
        let check = self.read().check_input(&name, input).map_err(js_error)?;
        Ok(match check {
            InputCheck::Valid(value) => NativeInputCheck {
                status: "valid".into(),
                value_json: Some(value.to_string()),
                message: None,
            },
            InputCheck::Invalid(message) => NativeInputCheck {
                status: "invalid".into(),
                value_json: None,
                message: Some(message),
            },
            InputCheck::Unchecked { reason } => NativeInputCheck {
                status: "unchecked".into(),
                value_json: None,
                message: Some(reason),
            },
        })
    }
}

impl Default for NativeRegistry {
    fn default() -> Self {
        Self::new()
    }
}

/// The JSDoc signature of a tool from its name, description and JSON Schema.
#[napi(js_name = "schemaToJsdoc")]
pub fn schema_to_jsdoc(name: String, description: String, schema_json: String) -> Result<String> {
    let schema = parse_json("schema", &schema_json)?;
    Ok(crate::schema::schema_to_jsdoc(&name, &description, &schema))
}

/// One search, with everything it needs owned, so it can run on any thread.
pub struct SearchTask {
    registry: Arc<RwLock<Registry>>,
    query: String,
    namespace: Option<String>,
    limit: usize,
    allowed: Option<Arc<HashSet<String>>>,
    mode: SearchMode,
    query_vector: Option<Vec<f32>>,
    hybrid: bool,
}

impl SearchTask {
    fn new(
        registry: &Arc<RwLock<Registry>>,
        query: String,
        options: NativeSearchOptions,
        allowed: Option<&NameSet>,
        query_vector: Option<Float32Array>,
    ) -> Result<Self> {
        let mode = match options.mode.as_deref() {
            None | Some("bm25") => SearchMode::Bm25,
            Some("regex") => SearchMode::Regex,
            Some(other) => {
                return Err(js_error(ToolregError::invalid(
                    "mode",
                    format!("{other:?} is not 'bm25' or 'regex'"),
                )));
            }
        };
        Ok(SearchTask {
            registry: Arc::clone(registry),
            query,
            namespace: options.namespace,
            limit: options.limit.unwrap_or(5) as usize,
            allowed: allowed.map(|a| Arc::clone(&a.names)),
            mode,
            query_vector: query_vector.map(|v| v.to_vec()),
            hybrid: true,
        })
    }
}

impl Task for SearchTask {
    type Output = Vec<SearchHit>;
    type JsValue = Vec<NativeHit>;

    fn compute(&mut self) -> Result<Self::Output> {
        let registry = read(&self.registry);
        let opts = SearchOptions {
            namespace: self.namespace.as_deref(),
            limit: self.limit,
            allowed: self.allowed.as_deref(),
            mode: self.mode,
        };
        let hits = if self.hybrid {
            registry.search_hybrid(&self.query, self.query_vector.as_deref(), &opts)
        } else {
            registry.search(&self.query, &opts)
        };
        hits.map_err(js_error)
    }

    fn resolve(&mut self, _env: Env, output: Self::Output) -> Result<Self::JsValue> {
        Ok(native_hits(output))
    }
}

fn native_hits(hits: Vec<SearchHit>) -> Vec<NativeHit> {
    hits.into_iter()
        .map(|h| NativeHit {
            name: h.name,
            score: h.score,
        })
        .collect()
}

pub struct SetBridgeTask {
    registry: Arc<RwLock<Registry>>,
    bridge: Option<Arc<crate::search::bridge::LanguageBridge>>,
}

impl Task for SetBridgeTask {
    type Output = ();
    type JsValue = ();

    fn compute(&mut self) -> Result<Self::Output> {
        let mut registry = self.registry.write().unwrap_or_else(|p| p.into_inner());
        registry.set_language_bridge(self.bridge.take());
        Ok(())
    }

    fn resolve(&mut self, _env: Env, _output: Self::Output) -> Result<Self::JsValue> {
        Ok(())
    }
}
