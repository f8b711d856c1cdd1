//! Token counting for JS: a synchronous count and a batch counted off the JS thread.

use napi::bindgen_prelude::*;
use napi_derive::napi;

use super::js_error;
use crate::tokens::{self, Encoding};

fn encoding_of(name: Option<String>) -> Result<Encoding> {
    name.map_or(Ok(Encoding::default()), |n| n.parse().map_err(js_error))
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
