//! The Node-API surface: converts between JS values and the core's types, nothing more.
//!
//! Errors cross as `[CODE] message`; the JS layer (`js/errors.js`) turns that prefix into the
//! error's `code` and picks the error class, so every code path reports errors the same way.

mod callback;
mod defer;
mod exec;
mod gateway;
mod local_model;
mod mcp;
mod pins;
mod provider;
mod registry;
mod repair;
mod search;
mod tokens;
mod trust;

use napi::bindgen_prelude::*;

use crate::error::ToolregError;

pub(crate) fn js_error(err: ToolregError) -> napi::Error {
    napi::Error::new(Status::GenericFailure, format!("[{}] {}", err.code(), err))
}

pub(crate) fn parse_json(field: &str, text: &str) -> Result<serde_json::Value> {
    serde_json::from_str(text)
        .map_err(|e| js_error(ToolregError::invalid(field, format!("not valid JSON: {e}"))))
}

/// Reads (or builds and caches in `cache_dir`) the default encoding's tables on another thread,
/// so the first count on the JS thread does not wait for them. The JS layer calls it once, as
/// the addon loads, with the per-user cache folder.
#[napi_derive::napi]
pub fn warm_up_tokenizer(cache_dir: Option<String>) {
    if let Some(dir) = cache_dir {
        crate::tokens::set_cache_dir(dir.into());
    }
    std::thread::spawn(crate::tokens::warm_up);
}
