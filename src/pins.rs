//! Pins learned from use: which deferred tools to load up front, from the host's record of
//! the tool calls its users made.
//!
//! The store is JSON Lines, one use a line: `{"tool", "namespace", "at" (ms since the epoch),
//! "user"?, "assistant"?}`; no arguments, no results. A use counts for
//! `0.5 ^ (age / half_life)` (recent beats old), times how closely it matches the request's
//! user and assistant (theirs first, then everyone's: a new user still gets what all use).
//! The pins are the best-scored tools whose definitions fit a token budget. The JS layer
//! reads the store, counts each candidate's definition tokens and freezes the pins per
//! conversation; the scoring and the budget fill live here so the gateway and the addon agree.

use std::collections::HashMap;

use serde::Deserialize;

use crate::error::{Result, ToolregError};

/// Default half-life of a use: two weeks.
pub const DEFAULT_HALF_LIFE_MS: f64 = 14.0 * 24.0 * 3600.0 * 1000.0;
/// Default budget of the pinned definitions, in tokens.
pub const DEFAULT_BUDGET_TOKENS: u32 = 2000;
/// Default minimum score: about two recent uses, so one stray call pins nothing.
pub const DEFAULT_MIN_SCORE: f64 = 1.5;

/// Weight of a use by another user and another assistant than the request's (when it names one).
const OTHERS_WEIGHT: f64 = 0.25;
/// Weight of a use matching one of the two ids the request names.
const ONE_MATCH_WEIGHT: f64 = 0.5;

/// One recorded tool call.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct Use {
    pub tool: String,
    #[serde(default)]
    pub namespace: String,
    /// Milliseconds since the Unix epoch.
    pub at: f64,
    #[serde(default)]
    pub user: Option<String>,
    #[serde(default)]
    pub assistant: Option<String>,
}

/// Reads a store's text (JSON Lines; blank lines skipped). A line that is not a use fails with
/// its line number, so the host can find it.
pub fn parse_store(text: &str) -> Result<Vec<Use>> {
    let mut uses = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        let parsed: Use = serde_json::from_str(line).map_err(|e| {
            ToolregError::UsageStoreInvalid(format!(
                "line {}: expected {{\"tool\": string, \"namespace\"?: string, \"at\": ms, \"user\"?: string, \"assistant\"?: string}} ({e})",
                i + 1
            ))
        })?;
        if parsed.tool.is_empty() || !parsed.at.is_finite() {
            return Err(ToolregError::UsageStoreInvalid(format!(
                "line {}: a use needs a tool name and a finite time",
                i + 1
            )));
        }
        uses.push(parsed);
    }
    Ok(uses)
}

/// Whose uses made a tool's score: the request's user and assistant, one of them, or everyone.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Scope {
    UserAndAssistant,
    User,
    Assistant,
    Everyone,
}

impl Scope {
    pub fn as_str(self) -> &'static str {
        match self {
            Scope::UserAndAssistant => "user+assistant",
            Scope::User => "user",
            Scope::Assistant => "assistant",
            Scope::Everyone => "everyone",
        }
    }
}

#[derive(Debug, Clone)]
pub struct ScoreOptions {
    pub now_ms: f64,
    pub half_life_ms: f64,
    pub user: Option<String>,
    pub assistant: Option<String>,
}

/// A tool's score and what it came from.
#[derive(Debug, Clone, PartialEq)]
pub struct Scored {
    pub tool: String,
    pub namespace: String,
    pub score: f64,
    pub uses: u32,
    pub last_used_ms: f64,
    /// The scope that gave most of the score.
    pub scope: Scope,
}

/// The scope a use falls in for this request and its weight.
fn scope_of(u: &Use, opts: &ScoreOptions) -> (Scope, f64) {
    let user = opts.user.as_deref().map(|id| u.user.as_deref() == Some(id));
    let assistant = opts
        .assistant
        .as_deref()
        .map(|id| u.assistant.as_deref() == Some(id));
    match (user, assistant) {
        (None, None) => (Scope::Everyone, 1.0),
        (Some(true), Some(true)) => (Scope::UserAndAssistant, 1.0),
        (Some(true), None) => (Scope::User, 1.0),
        (None, Some(true)) => (Scope::Assistant, 1.0),
        (Some(true), Some(false)) => (Scope::User, ONE_MATCH_WEIGHT),
        (Some(false), Some(true)) => (Scope::Assistant, ONE_MATCH_WEIGHT),
        _ => (Scope::Everyone, OTHERS_WEIGHT),
    }
}

/// Every used tool scored, best first (ties by name, so the order is stable).
pub fn score(uses: &[Use], opts: &ScoreOptions) -> Result<Vec<Scored>> {
    if !(opts.half_life_ms.is_finite() && opts.half_life_ms > 0.0) {
        return Err(ToolregError::invalid(
            "halfLifeMs",
            format!(
                "expected a positive number of milliseconds, got {}",
                opts.half_life_ms
            ),
        ));
    }
    if !opts.now_ms.is_finite() {
        return Err(ToolregError::invalid("now", "expected a finite time in ms"));
    }
    struct Acc {
        namespace: String,
        score: f64,
        uses: u32,
        last: f64,
        by_scope: HashMap<Scope, f64>,
    }
    let mut tools: HashMap<&str, Acc> = HashMap::new();
    for u in uses {
        let (scope, weight) = scope_of(u, opts);
        // A use stamped in the future (a clock ahead elsewhere) counts as now, not more.
        let age = (opts.now_ms - u.at).max(0.0);
        let value = weight * 0.5f64.powf(age / opts.half_life_ms);
        let acc = tools.entry(u.tool.as_str()).or_insert_with(|| Acc {
            namespace: u.namespace.clone(),
            score: 0.0,
            uses: 0,
            last: f64::NEG_INFINITY,
            by_scope: HashMap::new(),
        });
        acc.score += value;
        acc.uses += 1;
        if u.at >= acc.last {
            acc.last = u.at;
            // The latest use says which namespace the tool is in now.
            if !u.namespace.is_empty() {
                acc.namespace = u.namespace.clone();
            }
        }
        *acc.by_scope.entry(scope).or_insert(0.0) += value;
    }
    let order = [
        Scope::UserAndAssistant,
        Scope::User,
        Scope::Assistant,
        Scope::Everyone,
    ];
    let mut out: Vec<Scored> = tools
        .into_iter()
        .map(|(tool, acc)| {
            // The most specific scope wins a tie.
            let scope = order
                .iter()
                .copied()
                .filter(|s| acc.by_scope.contains_key(s))
                .fold(None::<(Scope, f64)>, |best, s| {
                    let v = acc.by_scope[&s];
                    match best {
                        Some((_, b)) if b >= v => best,
                        _ => Some((s, v)),
                    }
                })
                .map(|(s, _)| s)
                .unwrap_or(Scope::Everyone);
            Scored {
                tool: tool.to_owned(),
                namespace: acc.namespace,
                score: acc.score,
                uses: acc.uses,
                last_used_ms: acc.last,
                scope,
            }
        })
        .collect();
    out.sort_by(|a, b| {
        b.score
            .total_cmp(&a.score)
            .then_with(|| a.tool.cmp(&b.tool))
    });
    Ok(out)
}

/// Which candidates to pin: in the given (best-first) order, every one scoring at least
/// `min_score` whose definition (`costs[i]` tokens) still fits the budget, up to `max_pins`.
/// A large definition that does not fit is passed over for smaller ones after it.
pub fn fit(
    scores: &[f64],
    costs: &[u32],
    budget_tokens: u32,
    max_pins: usize,
    min_score: f64,
) -> Result<Vec<usize>> {
    if scores.len() != costs.len() {
        return Err(ToolregError::invalid(
            "costs",
            format!(
                "expected one cost per candidate ({}), got {}",
                scores.len(),
                costs.len()
            ),
        ));
    }
    let mut left = u64::from(budget_tokens);
    let mut chosen = Vec::new();
    for (i, (&score, &cost)) in scores.iter().zip(costs).enumerate() {
        if chosen.len() >= max_pins || score < min_score {
            break;
        }
        if u64::from(cost) <= left {
            left -= u64::from(cost);
            chosen.push(i);
        }
    }
    Ok(chosen)
}

#[cfg(test)]
mod tests {
    use super::*;

    const DAY: f64 = 24.0 * 3600.0 * 1000.0;

    fn used(tool: &str, at: f64, user: Option<&str>, assistant: Option<&str>) -> Use {
        Use {
            tool: tool.into(),
            namespace: "ns".into(),
            at,
            user: user.map(Into::into),
            assistant: assistant.map(Into::into),
        }
    }

    fn opts(user: Option<&str>, assistant: Option<&str>) -> ScoreOptions {
        ScoreOptions {
            now_ms: 100.0 * DAY,
            half_life_ms: 7.0 * DAY,
            user: user.map(Into::into),
            assistant: assistant.map(Into::into),
        }
    }

    #[test]
    fn a_use_one_half_life_old_counts_half() {
        let scored = score(&[used("a", 93.0 * DAY, None, None)], &opts(None, None)).unwrap();
        assert!((scored[0].score - 0.5).abs() < 1e-9, "{}", scored[0].score);
        assert_eq!(scored[0].uses, 1);
        assert_eq!(scored[0].scope, Scope::Everyone);
    }

    #[test]
    fn recent_uses_beat_many_old_ones() {
        let mut uses: Vec<Use> = (0..6)
            .map(|_| used("old", 30.0 * DAY, None, None))
            .collect();
        uses.push(used("recent", 100.0 * DAY, None, None));
        uses.push(used("recent", 99.0 * DAY, None, None));
        let scored = score(&uses, &opts(None, None)).unwrap();
        assert_eq!(scored[0].tool, "recent");
        assert_eq!(scored[1].tool, "old");
        assert_eq!(scored[1].uses, 6);
        assert_eq!(scored[0].last_used_ms, 100.0 * DAY);
    }

    #[test]
    fn the_requests_user_and_assistant_weigh_most() {
        let uses = vec![
            used("mine", 100.0 * DAY, Some("u1"), Some("a1")),
            used("theirs", 100.0 * DAY, Some("u2"), Some("a2")),
            used("theirs", 100.0 * DAY, Some("u2"), Some("a2")),
            used("my_user", 100.0 * DAY, Some("u1"), Some("a2")),
        ];
        let scored = score(&uses, &opts(Some("u1"), Some("a1"))).unwrap();
        let by: HashMap<_, _> = scored.iter().map(|s| (s.tool.as_str(), s)).collect();
        assert_eq!(by["mine"].score, 1.0);
        assert_eq!(by["mine"].scope, Scope::UserAndAssistant);
        assert_eq!(by["my_user"].score, 0.5);
        assert_eq!(by["my_user"].scope, Scope::User);
        assert_eq!(by["theirs"].score, 0.5);
        assert_eq!(by["theirs"].scope, Scope::Everyone);
        assert_eq!(scored[0].tool, "mine");
    }

    #[test]
    fn future_stamps_count_as_now_and_bad_options_are_refused() {
        let scored = score(&[used("a", 200.0 * DAY, None, None)], &opts(None, None)).unwrap();
        assert_eq!(scored[0].score, 1.0);
        let mut bad = opts(None, None);
        bad.half_life_ms = 0.0;
        assert_eq!(
            score(&[], &bad).unwrap_err().code(),
            "TOOLREG_INVALID_ARGUMENT"
        );
    }

    #[test]
    fn fit_keeps_the_budget_skips_big_ones_and_stops_at_min_score() {
        let chosen = fit(
            &[9.0, 8.0, 7.0, 6.0, 1.0],
            &[500, 1800, 600, 700, 10],
            2000,
            10,
            1.5,
        )
        .unwrap();
        // 500 + 600 + 700 = 1800 <= 2000; the 1800-token one does not fit after the first; 1.0 is under the minimum.
        assert_eq!(chosen, vec![0, 2, 3]);
        assert_eq!(fit(&[9.0, 8.0], &[1, 1], 2000, 1, 0.0).unwrap(), vec![0]);
        assert!(fit(&[1.0], &[], 10, 1, 0.0).is_err());
    }

    #[test]
    fn the_store_reads_json_lines_and_names_a_bad_line() {
        let text = "{\"tool\":\"a\",\"namespace\":\"web\",\"at\":5,\"user\":\"u\"}\n\n{\"tool\":\"b\",\"at\":6}\n";
        let uses = parse_store(text).unwrap();
        assert_eq!(uses.len(), 2);
        assert_eq!(uses[0].user.as_deref(), Some("u"));
        assert_eq!(uses[1].namespace, "");
        let err = parse_store("{\"tool\":\"a\",\"at\":1}\nnot json\n").unwrap_err();
        assert_eq!(err.code(), "TOOLREG_USAGE_STORE_INVALID");
        assert!(err.to_string().contains("line 2"), "{err}");
        assert!(parse_store("{\"tool\":\"\",\"at\":1}").is_err());
    }
}
