//! The defer gates for JS; the JS layer sums the (cached) costs and passes totals.

use napi_derive::napi;

use crate::defer::{self, DeferPolicy, ModelCapability, Pools};

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
