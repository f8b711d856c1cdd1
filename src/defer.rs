//! The defer decision: which tools stay inline and which hide behind the meta-tools.
//!
//! The `auto` pool is deferred all together or not at all. Deferring only its biggest
//! members would make the tool list flap between requests and break prompt caching, and a
//! model that has to search for some tools anyway gains little from seeing the rest inline.

/// Percentage of the context window the `auto` pool may fill before it is deferred.
pub const DEFER_THRESHOLD_PCT: f64 = 10.0;
/// Context window assumed when the caller does not know the model's.
pub const FALLBACK_CONTEXT_WINDOW: u64 = 32_000;
/// Below this many tools, searching costs the model more round-trips than it saves tokens.
pub const MIN_AUTO_DEFER_COUNT: usize = 5;

/// The knobs of the decision; each can be overridden per call.
#[derive(Clone, Debug, PartialEq)]
pub struct DeferPolicy {
    pub threshold_pct: f64,
    pub fallback_context_window: u64,
    pub min_auto_defer_count: usize,
    /// What the meta-tools plus the `<deferred-tools>` section cost when they are added.
    pub overhead_tokens: u64,
}

impl DeferPolicy {
    pub fn with_overhead(overhead_tokens: u64) -> Self {
        DeferPolicy {
            threshold_pct: DEFER_THRESHOLD_PCT,
            fallback_context_window: FALLBACK_CONTEXT_WINDOW,
            min_auto_defer_count: MIN_AUTO_DEFER_COUNT,
            overhead_tokens,
        }
    }
}

/// What the model can do with tools. A model without native function calling can still use
/// tools when the host describes them in the prompt ("prompt tool use").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ModelCapability {
    pub function_calling: bool,
    pub prompt_tool_use: bool,
}

impl Default for ModelCapability {
    fn default() -> Self {
        ModelCapability {
            function_calling: true,
            prompt_tool_use: false,
        }
    }
}

/// Token totals of the request's deferrable entries (approval-gated ones already removed).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Pools {
    pub auto_count: usize,
    pub auto_tokens: u64,
    pub always_count: usize,
    pub always_tokens: u64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReasonCode {
    ModelCannotUseTools,
    NothingDeferrable,
    AutoPoolDeferred,
    AlwaysOnly,
    BelowThreshold,
    TooFewAutoTools,
    SavingBelowOverhead,
}

impl ReasonCode {
    pub fn as_str(self) -> &'static str {
        match self {
            ReasonCode::ModelCannotUseTools => "model_cannot_use_tools",
            ReasonCode::NothingDeferrable => "nothing_deferrable",
            ReasonCode::AutoPoolDeferred => "auto_pool_deferred",
            ReasonCode::AlwaysOnly => "always_only",
            ReasonCode::BelowThreshold => "below_threshold",
            ReasonCode::TooFewAutoTools => "too_few_auto_tools",
            ReasonCode::SavingBelowOverhead => "saving_below_overhead",
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct DeferDecision {
    /// Whether the `auto` pool is deferred (the `always` entries follow `defer_always`).
    pub defer_auto: bool,
    pub defer_always: bool,
    pub threshold: u64,
    pub auto_tokens: u64,
    pub overhead_tokens: u64,
    /// Inline tokens removed minus what the meta-tools add; 0 when nothing is deferred.
    pub saved_tokens: i64,
    pub reason_code: ReasonCode,
    pub reason: String,
}

/// Resolves the context window the way the reference registry does: unknown, 0 or negative
/// windows fall back to a conservative default.
pub fn effective_context_window(context_window: Option<f64>, policy: &DeferPolicy) -> u64 {
    match context_window {
        Some(w) if w.is_finite() && w >= 1.0 => w as u64,
        _ => policy.fallback_context_window,
    }
}

pub fn decide(
    pools: Pools,
    context_window: Option<f64>,
    model: ModelCapability,
    policy: &DeferPolicy,
) -> DeferDecision {
    let window = effective_context_window(context_window, policy);
    let threshold = (window as f64 * policy.threshold_pct / 100.0).floor() as u64;
    let overhead = policy.overhead_tokens;
    let mut decision = DeferDecision {
        defer_auto: false,
        defer_always: false,
        threshold,
        auto_tokens: pools.auto_tokens,
        overhead_tokens: overhead,
        saved_tokens: 0,
        reason_code: ReasonCode::NothingDeferrable,
        reason: String::new(),
    };

    if !model.function_calling && !model.prompt_tool_use {
        decision.reason_code = ReasonCode::ModelCannotUseTools;
        decision.reason = "the model has no function calling and is not in prompt-tool-use mode, so it gets no meta-tools".into();
        return decision;
    }

    let auto_gate = if pools.auto_count == 0 {
        Err((
            ReasonCode::NothingDeferrable,
            "no entry is deferrable ('auto')".to_owned(),
        ))
    } else if pools.auto_tokens <= threshold {
        Err((
            ReasonCode::BelowThreshold,
            format!(
                "the {} auto tools cost {} tokens, not above the threshold of {threshold} ({}% of a {window}-token window)",
                pools.auto_count, pools.auto_tokens, policy.threshold_pct
            ),
        ))
    } else if pools.auto_count < policy.min_auto_defer_count {
        Err((
            ReasonCode::TooFewAutoTools,
            format!(
                "only {} auto tools; deferring pays from {} on",
                pools.auto_count, policy.min_auto_defer_count
            ),
        ))
    } else if pools.auto_tokens <= overhead {
        Err((
            ReasonCode::SavingBelowOverhead,
            format!(
                "deferring would save {} tokens but the meta-tools cost {overhead}",
                pools.auto_tokens
            ),
        ))
    } else {
        Ok(())
    };

    decision.defer_always = pools.always_count > 0;
    decision.defer_auto = auto_gate.is_ok();
    let deferred_tokens = pools.always_tokens * u64::from(decision.defer_always)
        + pools.auto_tokens * u64::from(decision.defer_auto);
    if decision.defer_always || decision.defer_auto {
        decision.saved_tokens = deferred_tokens as i64 - overhead as i64;
    }

    match auto_gate {
        Ok(()) => {
            decision.reason_code = ReasonCode::AutoPoolDeferred;
            decision.reason = format!(
                "the {} auto tools cost {} tokens, above the threshold of {threshold}; deferring them saves {} tokens net",
                pools.auto_count, pools.auto_tokens, decision.saved_tokens
            );
        }
        Err((_, why)) if decision.defer_always => {
            decision.reason_code = ReasonCode::AlwaysOnly;
            decision.reason = format!(
                "{} 'always' tools deferred; auto pool stays inline: {why}",
                pools.always_count
            );
        }
        Err((code, why)) => {
            decision.reason_code = code;
            decision.reason = why;
        }
    }
    decision
}

#[cfg(test)]
mod tests {
    use super::*;

    const OVERHEAD: u64 = 600;

    fn policy() -> DeferPolicy {
        DeferPolicy::with_overhead(OVERHEAD)
    }

    fn auto(count: usize, tokens: u64) -> Pools {
        Pools {
            auto_count: count,
            auto_tokens: tokens,
            ..Pools::default()
        }
    }

    #[test]
    fn threshold_is_ten_percent_of_the_window() {
        let d = decide(
            auto(5, 100),
            Some(128_000.0),
            ModelCapability::default(),
            &policy(),
        );
        assert_eq!(d.threshold, 12_800);
    }

    #[test]
    fn missing_zero_or_negative_window_falls_back_to_32k() {
        for window in [None, Some(0.0), Some(-5.0), Some(f64::NAN)] {
            let d = decide(auto(5, 100), window, ModelCapability::default(), &policy());
            assert_eq!(d.threshold, 3_200, "{window:?}");
        }
    }

    #[test]
    fn big_pool_of_five_is_deferred_with_net_saving() {
        let d = decide(auto(5, 10_000), None, ModelCapability::default(), &policy());
        assert!(d.defer_auto);
        assert_eq!(d.reason_code, ReasonCode::AutoPoolDeferred);
        assert_eq!(d.saved_tokens, 10_000 - OVERHEAD as i64);
    }

    #[test]
    fn one_huge_entry_stays_inline() {
        let d = decide(auto(1, 50_000), None, ModelCapability::default(), &policy());
        assert!(!d.defer_auto);
        assert_eq!(d.reason_code, ReasonCode::TooFewAutoTools);
        assert_eq!(d.saved_tokens, 0);
    }

    #[test]
    fn pool_at_threshold_is_not_deferred() {
        let d = decide(auto(9, 3_200), None, ModelCapability::default(), &policy());
        assert!(!d.defer_auto);
        assert_eq!(d.reason_code, ReasonCode::BelowThreshold);
        let d = decide(auto(9, 3_201), None, ModelCapability::default(), &policy());
        assert!(d.defer_auto);
    }

    #[test]
    fn small_window_saving_must_beat_overhead() {
        // 4k window: threshold 400; 450 tokens clears it but not the 600-token overhead.
        let d = decide(
            auto(5, 450),
            Some(4_000.0),
            ModelCapability::default(),
            &policy(),
        );
        assert_eq!(d.threshold, 400);
        assert!(!d.defer_auto);
        assert_eq!(d.reason_code, ReasonCode::SavingBelowOverhead);
    }

    #[test]
    fn always_entries_defer_without_gates() {
        let pools = Pools {
            always_count: 1,
            always_tokens: 20,
            ..Pools::default()
        };
        let d = decide(pools, None, ModelCapability::default(), &policy());
        assert!(d.defer_always && !d.defer_auto);
        assert_eq!(d.reason_code, ReasonCode::AlwaysOnly);
    }

    #[test]
    fn model_without_tool_use_gets_no_defer_path() {
        let pools = Pools {
            auto_count: 50,
            auto_tokens: 90_000,
            always_count: 3,
            always_tokens: 900,
        };
        let none = ModelCapability {
            function_calling: false,
            prompt_tool_use: false,
        };
        let d = decide(pools, None, none, &policy());
        assert!(!d.defer_auto && !d.defer_always);
        assert_eq!(d.reason_code, ReasonCode::ModelCannotUseTools);
        let prompt = ModelCapability {
            function_calling: false,
            prompt_tool_use: true,
        };
        assert!(decide(pools, None, prompt, &policy()).defer_auto);
    }

    #[test]
    fn overrides_change_each_gate() {
        let custom = DeferPolicy {
            threshold_pct: 1.0,
            fallback_context_window: 100_000,
            min_auto_defer_count: 2,
            overhead_tokens: 10,
        };
        let d = decide(auto(2, 1_001), None, ModelCapability::default(), &custom);
        assert_eq!(d.threshold, 1_000);
        assert!(d.defer_auto);
    }
}
