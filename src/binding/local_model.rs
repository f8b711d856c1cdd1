//! The local neural embedder for JS: loading a model folder and embedding texts, both on the
//! worker pool (reading and converting ~45 MB of weights, or running the encoder, must not hold
//! the JS thread).

use std::path::PathBuf;
use std::sync::Arc;

use napi::bindgen_prelude::*;
use napi_derive::napi;

use super::js_error;
use crate::embed::bert::LoadError;
use crate::embed::local::LocalModel;
use crate::error::ToolregError;

/// A loaded model; `embed` runs it off the JS thread.
#[napi]
pub struct NativeLocalModel {
    inner: Arc<LocalModel>,
}

#[napi(object)]
pub struct NativeLocalModelInfo {
    /// SHA-256 of the model's files (hex): the disk cache's key prefix.
    pub identity: String,
    pub dimensions: u32,
    pub layers: u32,
    /// Tokens per text, [CLS] and [SEP] (`<s>`, `</s>`) included; longer texts are truncated.
    pub max_tokens: u32,
    /// `F32`, `F16` or `BF16`, as stored in the weights file; `Q4_0/Q3` for a quantised one.
    pub weights_dtype: String,
    pub weights_bytes: f64,
    /// `bert` (WordPiece: all-MiniLM-L6-v2) or `xlm-roberta` (SentencePiece: multilingual-e5-small).
    pub model_type: String,
    /// Put before requests (e5: `query: `) and before the texts searched (e5: `passage: `).
    pub query_prefix: String,
    pub passage_prefix: String,
}

#[napi(object)]
pub struct NativeLocalModelStats {
    /// Whether the encoder's weights are in memory (built on the first vector not cached).
    pub encoder_loaded: bool,
    /// Vectors computed by the model.
    pub computed: u32,
    /// Vectors served from the disk cache.
    pub cached: u32,
    /// The cache file, when there is a cache.
    pub cache_file: Option<String>,
    /// Vectors read from the cache file when it was loaded.
    pub cache_loaded: u32,
    /// Vectors appended to it by this process.
    pub cache_written: u32,
    /// Bytes of the cache file that were not whole, valid records (skipped).
    pub cache_skipped_bytes: f64,
    /// Cache reads or writes that failed (the first one was warned about).
    pub cache_errors: u32,
    /// Stale cache files of other model versions deleted from the cache folder.
    pub cache_pruned: u32,
}

#[napi]
impl NativeLocalModel {
    #[napi(getter)]
    pub fn info(&self) -> NativeLocalModelInfo {
        let info = self.inner.info();
        NativeLocalModelInfo {
            identity: info.identity.iter().map(|b| format!("{b:02x}")).collect(),
            dimensions: info.dimensions as u32,
            layers: info.layers as u32,
            max_tokens: info.max_tokens as u32,
            weights_dtype: info.weights_dtype.to_owned(),
            weights_bytes: info.weights_bytes as f64,
            model_type: info.model_type.to_owned(),
            query_prefix: info.query_prefix.clone(),
            passage_prefix: info.passage_prefix.clone(),
        }
    }

    #[napi(getter)]
    pub fn stats(&self) -> NativeLocalModelStats {
        let s = self.inner.stats();
        NativeLocalModelStats {
            encoder_loaded: self.inner.encoder_loaded(),
            computed: s.computed as u32,
            cached: s.cached as u32,
            cache_file: s.cache_file,
            cache_loaded: s.cache.loaded as u32,
            cache_written: s.cache.written as u32,
            cache_skipped_bytes: s.cache.skipped_bytes as f64,
            cache_errors: s.cache.errors as u32,
            cache_pruned: s.cache.pruned as u32,
        }
    }

    /// Unit vectors of `texts`, computed on the worker pool; with `useCache` (tool texts),
    /// through the disk cache.
    #[napi(ts_return_type = "Promise<Float32Array[]>")]
    pub fn embed(&self, texts: Vec<String>, use_cache: Option<bool>) -> AsyncTask<LocalEmbedTask> {
        AsyncTask::new(LocalEmbedTask {
            model: self.inner.clone(),
            input: EmbedInput::Texts {
                texts,
                use_cache: use_cache.unwrap_or(false),
            },
        })
    }

    /// A search query's vectors, computed on the worker pool: the whole query's, then one per
    /// sentence of `querySentences(query)` (the whole query's derived from its sentences').
    #[napi(ts_return_type = "Promise<Float32Array[]>")]
    pub fn embed_query(&self, query: String) -> AsyncTask<LocalEmbedTask> {
        AsyncTask::new(LocalEmbedTask {
            model: self.inner.clone(),
            input: EmbedInput::Query(query),
        })
    }

    /// The disk cache's warnings since the last call (a read or write that failed).
    #[napi]
    pub fn take_warnings(&self) -> Vec<String> {
        self.inner.take_warnings()
    }
}

pub struct LocalEmbedTask {
    model: Arc<LocalModel>,
    input: EmbedInput,
}

enum EmbedInput {
    Texts { texts: Vec<String>, use_cache: bool },
    Query(String),
}

impl Task for LocalEmbedTask {
    type Output = Vec<Vec<f32>>;
    type JsValue = Vec<Float32Array>;

    fn compute(&mut self) -> Result<Self::Output> {
        match &self.input {
            EmbedInput::Texts { texts, use_cache } => self.model.embed(texts, *use_cache),
            EmbedInput::Query(query) => self.model.embed_query(query),
        }
        .map_err(|e| js_error(load_error(e)))
    }

    fn resolve(&mut self, _env: Env, output: Self::Output) -> Result<Self::JsValue> {
        Ok(output.into_iter().map(Float32Array::new).collect())
    }
}

pub struct LoadLocalModelTask {
    dir: PathBuf,
    cache_dir: Option<PathBuf>,
}

impl Task for LoadLocalModelTask {
    type Output = LocalModel;
    type JsValue = NativeLocalModel;

    fn compute(&mut self) -> Result<Self::Output> {
        LocalModel::load(&self.dir, self.cache_dir.as_deref()).map_err(|e| js_error(load_error(e)))
    }

    fn resolve(&mut self, _env: Env, output: Self::Output) -> Result<Self::JsValue> {
        Ok(NativeLocalModel {
            inner: Arc::new(output),
        })
    }
}

fn load_error(e: LoadError) -> ToolregError {
    match e {
        LoadError::Missing(m) => ToolregError::LocalModelMissing(m),
        LoadError::Invalid(m) => ToolregError::LocalModelInvalid(m),
    }
}

/// Loads the model folder `dir` (config.json, vocab.txt or sentencepiece.safetensors,
/// model.safetensors) on the worker pool; with `cacheDir`, tool vectors are cached on disk there.
#[napi(
    js_name = "loadLocalModel",
    ts_return_type = "Promise<NativeLocalModel>"
)]
pub fn load_local_model(dir: String, cache_dir: Option<String>) -> AsyncTask<LoadLocalModelTask> {
    AsyncTask::new(LoadLocalModelTask {
        dir: PathBuf::from(dir),
        cache_dir: cache_dir.map(PathBuf::from),
    })
}
