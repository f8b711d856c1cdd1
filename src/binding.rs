//! The Node-API surface: converts between JS values and the core's types, nothing more.
//!
//! Errors cross as `[CODE] message`; the JS layer (`js/errors.js`) turns that prefix into the
//! error's `code` and picks the error class, so every code path reports errors the same way.

use std::collections::HashSet;
use std::sync::RwLock;

use napi::bindgen_prelude::*;
use napi_derive::napi;

use crate::defer::{self, DeferPolicy, ModelCapability, Pools};
use crate::error::ToolregError;
use crate::registry::{EntrySpec, InputCheck, Registry};
use crate::search::SearchMode;
use crate::tokens::{self, Encoding};

fn js_error(err: ToolregError) -> napi::Error {
    napi::Error::new(Status::GenericFailure, format!("[{}] {}", err.code(), err))
}

fn parse_json(field: &str, text: &str) -> Result<serde_json::Value> {
    serde_json::from_str(text)
        .map_err(|e| js_error(ToolregError::invalid(field, format!("not valid JSON: {e}"))))
}

fn encoding_of(name: Option<String>) -> Result<Encoding> {
    name.map_or(Ok(Encoding::default()), |n| n.parse().map_err(js_error))
}

#[napi_derive::module_init]
fn init() {
    // Building the BPE tables takes ~0.1 s; do it before the first count needs them.
    std::thread::spawn(tokens::warm_up);
}

/// Exact token count of one string (synchronous: meant for short texts).
#[napi]
pub fn count_tokens(text: String, encoding: Option<String>) -> Result<u32> {
    Ok(tokens::count(&text, encoding_of(encoding)?) as u32)
}

pub struct CountTokensTask {
    texts: Vec<String>,
    encoding: Encoding,
}

impl Task for CountTokensTask {
    type Output = Vec<usize>;
    type JsValue = Vec<u32>;

    fn compute(&mut self) -> Result<Self::Output> {
        Ok(tokens::count_many(&self.texts, self.encoding))
    }

    fn resolve(&mut self, _env: Env, output: Self::Output) -> Result<Self::JsValue> {
        Ok(output.into_iter().map(|n| n as u32).collect())
    }
}

/// Counts many strings off the JS thread, on all cores.
#[napi(ts_return_type = "Promise<number[]>")]
pub fn count_tokens_batch(
    texts: Vec<String>,
    encoding: Option<String>,
) -> Result<AsyncTask<CountTokensTask>> {
    Ok(AsyncTask::new(CountTokensTask {
        texts,
        encoding: encoding_of(encoding)?,
    }))
}

#[napi(object)]
pub struct DeferDefaults {
    pub defer_threshold_pct: f64,
    pub fallback_context_window: f64,
    pub min_auto_defer_count: u32,
}

#[napi]
pub fn defer_defaults() -> DeferDefaults {
    DeferDefaults {
        defer_threshold_pct: defer::DEFER_THRESHOLD_PCT,
        fallback_context_window: defer::FALLBACK_CONTEXT_WINDOW as f64,
        min_auto_defer_count: defer::MIN_AUTO_DEFER_COUNT as u32,
    }
}

#[napi(object)]
pub struct DeferInput {
    pub auto_count: u32,
    pub auto_tokens: f64,
    pub always_count: u32,
    pub always_tokens: f64,
    pub context_window: Option<f64>,
    pub function_calling: bool,
    pub prompt_tool_use: bool,
    pub overhead_tokens: f64,
    pub threshold_pct: Option<f64>,
    pub fallback_context_window: Option<f64>,
    pub min_auto_defer_count: Option<u32>,
}

#[napi(object)]
pub struct DeferDecision {
    pub defer_auto: bool,
    pub defer_always: bool,
    pub threshold: f64,
    pub auto_tokens: f64,
    pub overhead_tokens: f64,
    pub saved_tokens: f64,
    pub reason_code: String,
    pub reason: String,
}

#[napi]
pub fn decide_defer(input: DeferInput) -> DeferDecision {
    let mut policy = DeferPolicy::with_overhead(input.overhead_tokens.max(0.0) as u64);
    if let Some(pct) = input.threshold_pct {
        policy.threshold_pct = pct;
    }
    if let Some(window) = input.fallback_context_window {
        policy.fallback_context_window = window.max(1.0) as u64;
    }
    if let Some(count) = input.min_auto_defer_count {
        policy.min_auto_defer_count = count as usize;
    }
    let pools = Pools {
        auto_count: input.auto_count as usize,
        auto_tokens: input.auto_tokens.max(0.0) as u64,
        always_count: input.always_count as usize,
        always_tokens: input.always_tokens.max(0.0) as u64,
    };
    let model = ModelCapability {
        function_calling: input.function_calling,
        prompt_tool_use: input.prompt_tool_use,
    };
    let d = defer::decide(pools, input.context_window, model, &policy);
    DeferDecision {
        defer_auto: d.defer_auto,
        defer_always: d.defer_always,
        threshold: d.threshold as f64,
        auto_tokens: d.auto_tokens as f64,
        overhead_tokens: d.overhead_tokens as f64,
        saved_tokens: d.saved_tokens as f64,
        reason_code: d.reason_code.as_str().to_owned(),
        reason: d.reason,
    }
}

/// A fixed set of tool names (a request's allow-list), built once and reused by every search
/// of that request instead of crossing the boundary with the whole list each time.
#[napi]
pub struct NameSet {
    names: HashSet<String>,
}

#[napi]
impl NameSet {
    #[napi(constructor)]
    pub fn new(names: Vec<String>) -> Self {
        NameSet {
            names: names.into_iter().collect(),
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
pub struct NativeEntry {
    pub name: String,
    pub namespace: String,
    pub namespace_label: Option<String>,
    pub description: String,
    pub defer: String,
}

#[napi(object)]
pub struct NativeSearchOptions {
    pub namespace: Option<String>,
    pub limit: Option<u32>,
    pub mode: Option<String>,
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
    inner: RwLock<Registry>,
}

impl NativeRegistry {
    fn read(&self) -> std::sync::RwLockReadGuard<'_, Registry> {
        // A panic while holding the lock cannot leave the registry half-written (every
        // mutation is a single map operation), so a poisoned lock is still safe to use.
        self.inner.read().unwrap_or_else(|p| p.into_inner())
    }

    fn write(&self) -> std::sync::RwLockWriteGuard<'_, Registry> {
        self.inner.write().unwrap_or_else(|p| p.into_inner())
    }
}

#[napi]
impl NativeRegistry {
    #[napi(constructor)]
    pub fn new() -> Self {
        NativeRegistry {
            inner: RwLock::new(Registry::new()),
        }
    }

    /// Adds or replaces an entry; returns the namespace of the entry it replaced, if any.
    #[napi]
    pub fn register(
        &self,
        entry: NativeEntry,
        schema_json: Option<String>,
    ) -> Result<Option<String>> {
        let spec = EntrySpec {
            defer: entry.defer.parse().map_err(js_error)?,
            name: entry.name,
            namespace: entry.namespace,
            namespace_label: entry.namespace_label,
            description: entry.description,
        };
        let schema = schema_json
            .map(|s| parse_json("inputSchema", &s))
            .transpose()?;
        let previous = self.write().register(spec, schema).map_err(js_error)?;
        Ok(previous.map(|p| p.namespace))
    }

    #[napi]
    pub fn set_schema(&self, name: String, schema_json: String) -> Result<()> {
        let schema = parse_json("inputSchema", &schema_json)?;
        self.write().set_schema(&name, schema).map_err(js_error)
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
    ) -> Result<Vec<NativeHit>> {
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
        let hits = self
            .read()
            .search(
                &query,
                options.namespace.as_deref(),
                options.limit.unwrap_or(5) as usize,
                allowed.map(|a| &a.names),
                mode,
            )
            .map_err(js_error)?;
        Ok(hits
            .into_iter()
            .map(|h| NativeHit {
                name: h.name,
                score: h.score,
            })
            .collect())
    }

    #[napi]
    pub fn describe(&self, name: String) -> Result<String> {
        self.read().describe(&name).map_err(js_error)
    }

    #[napi]
    pub fn signature(&self, name: String) -> Result<String> {
        self.read().signature(&name).map_err(js_error)
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
