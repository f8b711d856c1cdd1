//! Pins learned from use, for JS: the store's text in, scored tools out; the budget fill over
//! the costs the JS layer counted.

use napi::bindgen_prelude::*;
use napi_derive::napi;

use super::js_error;
use crate::pins::{self, ScoreOptions};

#[napi(object)]
pub struct PinDefaults {
    pub half_life_ms: f64,
    pub budget_tokens: u32,
    pub min_score: f64,
}

#[napi]
pub fn pin_defaults() -> PinDefaults {
    PinDefaults {
        half_life_ms: pins::DEFAULT_HALF_LIFE_MS,
        budget_tokens: pins::DEFAULT_BUDGET_TOKENS,
        min_score: pins::DEFAULT_MIN_SCORE,
    }
}

#[napi(object)]
pub struct PinScoreOptions {
    pub now: f64,
    pub half_life_ms: f64,
    pub user_id: Option<String>,
    pub assistant_id: Option<String>,
}

#[napi(object)]
pub struct ScoredTool {
    pub name: String,
    pub namespace: String,
    pub score: f64,
    pub uses: u32,
    pub last_used: f64,
    pub scope: String,
}

/// Every tool the store (JSON Lines) records, scored for this user and assistant, best first.
#[napi]
pub fn score_pins(store_text: String, opts: PinScoreOptions) -> Result<Vec<ScoredTool>> {
    let uses = pins::parse_store(&store_text).map_err(js_error)?;
    let options = ScoreOptions {
        now_ms: opts.now,
        half_life_ms: opts.half_life_ms,
        user: opts.user_id,
        assistant: opts.assistant_id,
    };
    let scored = pins::score(&uses, &options).map_err(js_error)?;
    Ok(scored
        .into_iter()
        .map(|s| ScoredTool {
            name: s.tool,
            namespace: s.namespace,
            score: s.score,
            uses: s.uses,
            last_used: s.last_used_ms,
            scope: s.scope.as_str().to_owned(),
        })
        .collect())
}

/// Indices of the candidates (best first) to pin within the budget.
#[napi]
pub fn fit_pins(
    scores: Vec<f64>,
    costs: Vec<u32>,
    budget_tokens: u32,
    max_pins: u32,
    min_score: f64,
) -> Result<Vec<u32>> {
    let chosen = pins::fit(&scores, &costs, budget_tokens, max_pins as usize, min_score)
        .map_err(js_error)?;
    Ok(chosen.into_iter().map(|i| i as u32).collect())
}
