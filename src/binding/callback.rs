//! Host callbacks that take and give JSON: the hub's elicitor and auth, the gateway's host.

use std::sync::Arc;

use futures::future::BoxFuture;
use napi::bindgen_prelude::*;
use napi::threadsafe_function::{ThreadsafeFunction, ThreadsafeFunctionCallMode};
use serde_json::Value;

/// A host callback: a request as JSON in, a promise of the answer's JSON out. Weak, so an idle
/// hub never keeps Node alive.
type JsonFn = ThreadsafeFunction<String, Promise<String>, String, Status, false, true>;

#[derive(Clone)]
pub(super) struct JsCallback(Arc<JsonFn>);

impl JsCallback {
    pub(super) fn new(function: Function<'_, String, Promise<String>>) -> Result<Self> {
        let function = function
            .build_threadsafe_function()
            .weak::<true>()
            .callee_handled::<false>()
            .build()?;
        Ok(JsCallback(Arc::new(function)))
    }

    /// `name` is what the host calls the function, for error messages.
    pub(super) fn call(
        &self,
        request: Value,
        name: &'static str,
    ) -> BoxFuture<'static, std::result::Result<Value, String>> {
        let function = self.0.clone();
        Box::pin(async move {
            let answer = function
                .call_async(request.to_string())
                .await
                .map_err(|e| format!("the host's {name} could not be called: {e}"))?
                .await
                .map_err(|e| format!("the host's {name} failed: {e}"))?;
            serde_json::from_str(&answer)
                .map_err(|e| format!("the host's {name} answer is not JSON: {e}"))
        })
    }

    /// Tells the host something without waiting for (or reading) its answer.
    pub(super) fn notify(&self, message: Value) {
        let _ = self
            .0
            .call(message.to_string(), ThreadsafeFunctionCallMode::NonBlocking);
    }
}
