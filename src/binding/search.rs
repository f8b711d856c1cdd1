//! Search helpers that have no registry state.

use napi::bindgen_prelude::*;

use crate::embed::StaticEmbeddings;
use crate::search::bridge::LanguageBridge;

/// The sentences of a multi-sentence query that hybrid search embeds beside the whole query
/// (empty for a single sentence).
#[napi_derive::napi(js_name = "querySentences")]
pub fn query_sentences(query: String) -> Vec<String> {
    crate::search::query_sentences(&query)
        .into_iter()
        .map(str::to_owned)
        .collect()
}

pub struct EmbedBuiltinTask {
    texts: Vec<String>,
}

impl Task for EmbedBuiltinTask {
    type Output = Vec<Vec<f32>>;
    type JsValue = Vec<Float32Array>;

    fn compute(&mut self) -> Result<Self::Output> {
        let table = StaticEmbeddings::builtin();
        Ok(self
            .texts
            .iter()
            // A text without a meaningful token gets a zero vector: similar to nothing.
            .map(|t| table.embed(t).unwrap_or_else(|| vec![0.0; table.dim()]))
            .collect())
    }

    fn resolve(&mut self, _env: Env, output: Self::Output) -> Result<Self::JsValue> {
        Ok(output.into_iter().map(Float32Array::new).collect())
    }
}

/// The built-in static embeddings of `texts`, computed on the worker pool.
#[napi_derive::napi(js_name = "embedBuiltin", ts_return_type = "Promise<Float32Array[]>")]
pub fn embed_builtin(texts: Vec<String>) -> AsyncTask<EmbedBuiltinTask> {
    AsyncTask::new(EmbedBuiltinTask { texts })
}

/// Makes the four static-embedding files (read by the JS layer from the main package) the
/// built-in table; an error names what is wrong with them.
#[napi_derive::napi(js_name = "installBuiltinEmbeddings")]
pub fn install_builtin_embeddings(
    vocab: String,
    table: Buffer,
    scales: Buffer,
    weights: Buffer,
) -> Result<()> {
    StaticEmbeddings::install_builtin(&vocab, table.to_vec(), &scales, &weights)
        .map_err(|e| Error::new(Status::InvalidArg, e))
}

/// A parsed bilingual dictionary (`loadLanguageBridge`), handed to registries with
/// `setLanguageBridge`; one serves every registry of the process.
#[napi_derive::napi]
pub struct NativeLanguageBridge {
    pub(crate) inner: std::sync::Arc<LanguageBridge>,
}

#[napi_derive::napi]
impl NativeLanguageBridge {
    /// How many terms the dictionary has.
    #[napi(getter)]
    pub fn terms(&self) -> u32 {
        self.inner.len() as u32
    }
}

pub struct LoadBridgeTask {
    path: String,
}

impl Task for LoadBridgeTask {
    type Output = LanguageBridge;
    type JsValue = NativeLanguageBridge;

    fn compute(&mut self) -> Result<Self::Output> {
        let text = std::fs::read_to_string(&self.path).map_err(|e| {
            Error::new(
                Status::InvalidArg,
                format!("cannot read the dictionary {}: {e}", self.path),
            )
        })?;
        LanguageBridge::parse(&text)
            .map_err(|e| Error::new(Status::InvalidArg, format!("{}: {e}", self.path)))
    }

    fn resolve(&mut self, _env: Env, output: Self::Output) -> Result<Self::JsValue> {
        Ok(NativeLanguageBridge {
            inner: std::sync::Arc::new(output),
        })
    }
}

/// Reads and parses a bilingual dictionary file on the worker pool (a few megabytes: not on
/// the JS thread).
#[napi_derive::napi(
    js_name = "loadLanguageBridge",
    ts_return_type = "Promise<NativeLanguageBridge>"
)]
pub fn load_language_bridge(path: String) -> AsyncTask<LoadBridgeTask> {
    AsyncTask::new(LoadBridgeTask { path })
}
