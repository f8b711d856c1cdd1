//! Regex mode. The `regex` crate matches in time linear in the input (no backtracking), so a
//! model-written pattern such as `(a+)+$` cannot hang the host; the length cap and the compiled
//! size limits bound the compile step as well.

use regex::{Regex, RegexBuilder};

use super::filter::passes;
use super::index::Store;
use super::{MAX_REGEX_LEN, SearchError, SearchHit, SearchOptions};

/// Upper bound for the compiled program and for the lazy DFA cache, in bytes.
const REGEX_SIZE_LIMIT: usize = 1 << 20;

/// Score parts: a name match outranks a description match, which outranks a label match, and
/// a tool matching in several places ranks above one matching in only one of them.
const NAME_SCORE: f64 = 4.0;
const DESC_SCORE: f64 = 2.0;
const LABEL_SCORE: f64 = 1.0;

pub(crate) fn compile(pattern: &str) -> Result<Regex, SearchError> {
    let len = pattern.chars().count();
    if len > MAX_REGEX_LEN {
        return Err(SearchError::RegexTooLong {
            len,
            max: MAX_REGEX_LEN,
        });
    }
    RegexBuilder::new(pattern)
        .case_insensitive(true)
        .size_limit(REGEX_SIZE_LIMIT)
        .dfa_size_limit(REGEX_SIZE_LIMIT)
        .build()
        .map_err(|e| match e {
            regex::Error::CompiledTooBig(limit) => SearchError::RegexTooComplex { limit },
            other => SearchError::InvalidRegex(other.to_string()),
        })
}

pub(crate) fn search(
    store: &Store,
    pattern: &str,
    opts: &SearchOptions,
) -> Result<Vec<SearchHit>, SearchError> {
    let re = compile(pattern)?;
    if opts.limit == 0 {
        return Ok(Vec::new());
    }
    let mut hits: Vec<(f64, &str)> = store
        .live_docs()
        .filter(|(_, d)| passes(d, opts))
        .filter_map(|(_, d)| {
            let mut score = 0.0;
            if re.is_match(&d.name) {
                score += NAME_SCORE;
            }
            if re.is_match(&d.description) {
                score += DESC_SCORE;
            }
            if re.is_match(&d.label) {
                score += LABEL_SCORE;
            }
            (score > 0.0).then_some((score, d.name.as_str()))
        })
        .collect();
    hits.sort_unstable_by(|a, b| b.0.total_cmp(&a.0).then_with(|| a.1.cmp(b.1)));
    hits.truncate(opts.limit);
    Ok(hits
        .into_iter()
        .map(|(score, name)| SearchHit {
            name: name.to_owned(),
            score,
        })
        .collect())
}
