//! Parsing a word query into weighted index terms.
//!
//! A query word becomes up to four kinds of term, each weighted differently: the analysed word
//! itself; the phrase it forms with the previous word (word order shared with a name or
//! description is strong evidence); the whole chunk as an exact-name key (`read_file` typed
//! verbatim); and the indexed words it is a prefix of (`crypto` → `cryptocurrency`), because
//! tool text is full of compounds that no stemmer splits.

use super::hash::FastMap;
use super::index::Store;
use super::index::gloss_term;
use super::rank::idf;
use super::tokenize::{TermKind, analyze_tagged, exact_key, is_request_word, phrase_key_into};
use super::{CjkIdfCap, PhraseIdf, Tuning};

/// One distinct query term, resolved against the dictionary.
#[derive(Clone, Debug)]
pub(crate) struct QueryTerm {
    pub tid: u32,
    pub weight: f64,
    /// Upper bound of the term's inverse document frequency (`f64::INFINITY`: none).
    pub max_idf: f64,
    /// Bit in the required mask, when the term came from a `+word`.
    pub required: Option<u32>,
}

/// What the word ranker is asked: the request as typed, and the English glosses of its Chinese
/// terms when a bilingual dictionary is installed (`bridge`), which count less than typed words.
#[derive(Clone, Copy, Debug)]
pub(crate) struct WordQuery<'q> {
    pub typed: &'q str,
    pub glosses: &'q str,
}

impl<'q> From<&'q str> for WordQuery<'q> {
    fn from(typed: &'q str) -> Self {
        WordQuery { typed, glosses: "" }
    }
}

/// A parsed query: its terms and the mask of required bits every hit must carry.
pub(crate) struct ParsedQuery {
    pub terms: Vec<QueryTerm>,
    pub required_mask: u64,
}

/// How a query term came about; decides its weight.
#[derive(Clone, Copy, PartialEq)]
enum Origin {
    Word,
    Exact,
    /// Two adjacent query words.
    Phrase,
    /// A word's unstemmed form; `request` when the word is request phrasing.
    Surface {
        request: bool,
    },
    /// An English gloss of a Chinese term of the request (`bridge`): a dictionary's guess at
    /// what was meant, one of several senses, so it weighs less than a word the user typed.
    Gloss,
}

/// At most this many indexed words are added per query word by prefix expansion, so a short
/// common prefix cannot turn one word into hundreds of posting lists.
const MAX_PREFIX_EXPANSIONS: usize = 6;

/// Parses `query`, or returns `None` when it cannot match anything (a required word that no
/// tool contains).
pub(crate) fn parse(store: &Store, word_query: WordQuery, tuning: &Tuning) -> Option<ParsedQuery> {
    let query = word_query.typed;
    let live = store.live as f64;
    let df = |term: &str| {
        store
            .term_id(term)
            .map_or(0, |t| store.postings[t as usize].len())
    };
    // Distinct terms in first-seen order: (term, repeat count, required, origin, IDF cap).
    let mut index: FastMap<String, usize> = FastMap::default();
    let mut order: Vec<(String, u32, bool, Origin, f64)> = Vec::new();
    let mut add = |term: &str, required: bool, origin: Origin, max_idf: f64| match index.get(term) {
        Some(&i) => {
            order[i].1 += 1;
            order[i].2 |= required;
        }
        None => {
            index.insert(term.to_owned(), order.len());
            order.push((term.to_owned(), 1, required, origin, max_idf));
        }
    };
    // Buffers reused across words: a query is parsed on every search, and per-term strings
    // were a measurable share of a 20-word query's time.
    let mut prev = String::new();
    let mut phrase = String::new();
    let mut arena = String::new();
    let mut spans: Vec<(std::ops::Range<usize>, TermKind)> = Vec::new();
    for chunk in query.split_whitespace() {
        // `+word` requires the word; `+1234567` (a phone number) or a lone `+` does not.
        let (required, body) = match chunk.strip_prefix('+') {
            Some(b) if b.chars().next().is_some_and(char::is_alphabetic) => (true, b),
            _ => (false, chunk),
        };
        arena.clear();
        spans.clear();
        analyze_tagged(body, |t, kind| {
            let at = arena.len();
            arena.push_str(t);
            spans.push((at..arena.len(), kind));
        });
        // A split identifier's one-character parts (`KsuxdqnB` → `ksuxdqn`, `b`) say nothing
        // on their own: in a query such a chunk is mostly an opaque id, and its stray letter
        // would match every tool name with that letter as a part (`getB2BMarketingData`).
        // The whole chunk still counts, as the compound term and the exact key.
        let split = spans.iter().any(|(_, k)| *k == TermKind::Compound);
        // Whether the word a surface form follows is request phrasing.
        let mut request = false;
        for (range, kind) in &spans {
            let t = &arena[range.clone()];
            match kind {
                TermKind::Word if split && tuning.drop_split_letters && t.len() == 1 => {}
                TermKind::Word => {
                    request = is_request_word(t);
                    add(t, required, Origin::Word, f64::INFINITY);
                    if tuning.phrase_weight > 0.0 && !prev.is_empty() {
                        // A phrase is evidence that two query words sit together in the
                        // tool's text, not a rarer word: word pairs are rare almost by
                        // construction, so the pair's own IDF would let two common adjacent
                        // words ("audio file") outweigh the one rare word that decides the
                        // tool ("Japanese"). The default caps it at its rarer word's IDF:
                        // capping at the more common word's cost StableToolBench 0.012 R@5
                        // when judged leave-one-set-out (docs/search-ranking.md).
                        let max_idf = match tuning.phrase_idf {
                            PhraseIdf::Own => f64::INFINITY,
                            PhraseIdf::CommonerWord => idf(live, df(&prev).max(df(t)) as f64),
                            PhraseIdf::RarerWord => idf(live, df(&prev).min(df(t)) as f64),
                        };
                        phrase.clear();
                        phrase_key_into(&prev, t, &mut phrase);
                        add(&phrase, false, Origin::Phrase, max_idf);
                    }
                    prev.clear();
                    prev.push_str(t);
                }
                TermKind::Surface => {
                    if tuning.surface_weight > 0.0 {
                        add(t, false, Origin::Surface { request }, f64::INFINITY);
                    }
                }
                TermKind::Compound => {
                    request = is_request_word(t);
                    add(t, required, Origin::Word, f64::INFINITY)
                }
                TermKind::Cjk => {
                    request = false;
                    add(
                        t,
                        required,
                        Origin::Word,
                        meaning_idf(store, tuning, t, &df),
                    )
                }
            }
        }
        let key = exact_key(body);
        if key.len() > 1 {
            add(&key, false, Origin::Exact, f64::INFINITY);
        }
    }
    // Glosses are words only: no phrases (two glosses side by side are two senses of one term
    // as often as two terms) and no exact keys.
    for chunk in word_query.glosses.split_whitespace() {
        analyze_tagged(chunk, |t, kind| {
            if kind == TermKind::Word {
                add(t, false, Origin::Gloss, f64::INFINITY);
            }
        });
    }
    // A tool name with spaces typed as the whole query.
    if query.split_whitespace().nth(1).is_some() {
        let whole = exact_key(query);
        if whole.len() > 1 {
            add(&whole, false, Origin::Exact, f64::INFINITY);
        }
    }

    let mut terms: Vec<QueryTerm> = Vec::with_capacity(order.len());
    let mut gloss_key = String::new();
    let mut required_mask = 0u64;
    for (term, count, required, origin, max_idf) in order {
        let tid = store
            .term_id(&term)
            .filter(|&t| !store.postings[t as usize].is_empty());
        if required && tid.is_none() {
            return None;
        }
        // Up to 63 requirements are enforced (bit 63 is the scorer's); more is not a real query.
        let bit = (required && tid.is_some() && required_mask.count_ones() < 63).then(|| {
            let b = required_mask.count_ones();
            required_mask |= 1 << b;
            b
        });
        // A word's weight: damped repeats, request phrasing down; its surface form is the
        // same word, weighed the same way, then scaled.
        let word_weight = |request: bool| {
            let w = (count as f64).powf(tuning.query_tf_exponent);
            if request {
                w * tuning.request_word_weight
            } else {
                w
            }
        };
        let weight = match origin {
            Origin::Word => word_weight(is_request_word(&term)),
            Origin::Exact => 1.0,
            Origin::Phrase => tuning.phrase_weight,
            Origin::Surface { request } => tuning.surface_weight * word_weight(request),
            Origin::Gloss => tuning.gloss_weight * word_weight(false),
        };
        if origin == Origin::Word
            && tuning.prefix_weight > 0.0
            && term.len() >= tuning.prefix_min_len
            && term.bytes().all(|b| b.is_ascii_alphanumeric())
        {
            for (longer, id) in store.terms_with_prefix(&term).take(MAX_PREFIX_EXPANSIONS) {
                // The more of the indexed word the query word covers, the more it counts.
                let coverage = term.len() as f64 / longer.len() as f64;
                terms.push(QueryTerm {
                    tid: id,
                    weight: weight * tuning.prefix_weight * coverage,
                    max_idf: f64::INFINITY,
                    required: None,
                });
            }
        }
        if let Some(tid) = tid {
            terms.push(QueryTerm {
                tid,
                weight,
                max_idf,
                required: bit,
            });
        }
        // A typed word also matches the glosses of tools described in Chinese, which are
        // terms of their own (see `gloss_term`); a gloss of the request does not (the request
        // reads the Chinese text itself, and a gloss matching a gloss is two guesses agreeing).
        if origin == Origin::Word {
            gloss_key.clear();
            gloss_term(&term, &mut gloss_key);
            if let Some(tid) = store.term_id(&gloss_key) {
                terms.push(QueryTerm {
                    tid,
                    weight,
                    max_idf,
                    required: None,
                });
            }
        }
    }
    dedupe(&mut terms);
    Some(ParsedQuery {
        terms,
        required_mask,
    })
}

/// A word may be both typed and reached by prefix from a shorter query word: keep one entry
/// per term, with the larger weight and any requirement.
fn dedupe(terms: &mut Vec<QueryTerm>) {
    let mut out: Vec<QueryTerm> = Vec::with_capacity(terms.len());
    for t in terms.drain(..) {
        match out.iter_mut().find(|o| o.tid == t.tid) {
            Some(o) => {
                o.weight = o.weight.max(t.weight);
                o.required = o.required.or(t.required);
            }
            None => out.push(t),
        }
    }
    *terms = out;
}

/// The highest IDF a Chinese term of a request may count with: that of its meaning, when a
/// bilingual dictionary knows it. In a catalog described mostly in English a Chinese word is
/// rare whatever it means, so `获取` ("get") would count as much as `勋章` ("badge") and lift
/// the few tools described in Chinese for every request that says it; its English glosses'
/// rarity says how much it tells apart: the term's cap is the IDF of its commonest gloss word
/// (its commonest sense) in the tools' own words. Not as a gloss of their Chinese text: a
/// Chinese catalog's glosses hold every sense of every term, where the Chinese term's own
/// frequency already says how common it is. No dictionary, no gloss, or a gloss no tool holds:
/// no cap.
fn meaning_idf(store: &Store, tuning: &Tuning, term: &str, df: &impl Fn(&str) -> usize) -> f64 {
    if tuning.cjk_idf_cap == CjkIdfCap::Off {
        return f64::INFINITY;
    }
    let Some(glosses) = store.bridge.as_deref().and_then(|b| b.term_glosses(term)) else {
        return f64::INFINITY;
    };
    let live = store.live as f64;
    let mut idfs: Vec<f64> = Vec::new();
    for word in glosses.split_whitespace() {
        analyze_tagged(word, |t, kind| {
            if kind == TermKind::Word {
                let n = df(t);
                if n > 0 {
                    idfs.push(idf(live, n as f64));
                }
            }
        });
    }
    if idfs.is_empty() {
        return f64::INFINITY;
    }
    match tuning.cjk_idf_cap {
        CjkIdfCap::Off => f64::INFINITY,
        CjkIdfCap::CommonestSense => idfs.iter().copied().fold(f64::INFINITY, f64::min),
        CjkIdfCap::MeanSense => idfs.iter().sum::<f64>() / idfs.len() as f64,
        CjkIdfCap::RarestSense => idfs.iter().copied().fold(0.0, f64::max),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::search::SearchDoc;
    use std::collections::HashMap;

    fn store(names: &[&str]) -> Store {
        let mut s = Store::default();
        for n in names {
            s.upsert(&SearchDoc {
                name: n,
                namespace: "ns",
                namespace_label: "ns",
                description: "cryptocurrency prices",
                params: &[],
            });
        }
        s
    }

    fn term_names(s: &Store, q: &ParsedQuery) -> Vec<String> {
        let by_id: HashMap<u32, &str> = s.terms.iter().map(|(k, v)| (v, k)).collect();
        q.terms
            .iter()
            .map(|t| by_id[&t.tid].replace('\u{1}', "=").replace('\u{2}', "~"))
            .collect()
    }

    #[test]
    fn words_phrases_exact_keys_and_prefixes() {
        let s = store(&["get_prices"]);
        let q = parse(&s, "crypto prices get_prices".into(), &Tuning::default()).unwrap();
        let names = term_names(&s, &q);
        assert!(names.contains(&"cryptocurrency".to_string()), "{names:?}");
        assert!(names.contains(&"pric".to_string()));
        assert!(names.contains(&"=get_prices".to_string()));
        assert!(names.contains(&"~get pric".to_string()));
        // The prefix expansion weighs less than a typed word.
        let w = |n: &str| q.terms[names.iter().position(|x| x == n).unwrap()].weight;
        assert!(w("cryptocurrency") < w("pric"));
    }

    #[test]
    fn required_words_set_mask_bits() {
        let s = store(&["get_prices"]);
        let q = parse(&s, "+prices +cryptocurrency get".into(), &Tuning::default()).unwrap();
        assert_eq!(q.required_mask, 0b11);
        assert!(parse(&s, "+nothing prices".into(), &Tuning::default()).is_none());
        assert_eq!(
            parse(&s, "+12345 prices".into(), &Tuning::default())
                .unwrap()
                .required_mask,
            0
        );
    }

    #[test]
    fn request_words_weigh_less() {
        let s = store(&["help_prices"]);
        let q = parse(&s, "help prices".into(), &Tuning::default()).unwrap();
        let names = term_names(&s, &q);
        let w = |n: &str| q.terms[names.iter().position(|x| x == n).unwrap()].weight;
        assert!(w("help") < w("pric"));
    }
}
