//! Hybrid ranking: the word ranking (BM25F) and the dense ranking (cosine similarity of
//! embeddings) fused as a weighted sum of standard scores.
//!
//! Standard scores (z-scores over the tools that pass the filters) rather than raw scores or
//! ranks: BM25F scores are unbounded and grow with the query's length, cosine similarities live
//! in a narrow band that depends on the model, but on both sides "how far this tool stands out
//! from the catalog for this query" means the same thing. Reciprocal rank fusion was measured
//! first and dropped: it let a weak dense ranking push strong word matches out of the top 5
//! (StableToolBench Recall@5 0.767 → 0.693; README, "Hybrid search").
//!
//! Requests often ask for several things at once ("find a song … Also tell me a joke"). The
//! host embeds the whole query and each of its sentences ([`query_sentences`]); a tool's
//! similarity is its best over those vectors, so one vector averaging several requests does
//! not hide the tool each of them needs.

use super::filter::passes;
use super::index::Store;
use super::query::WordQuery;
use super::tokenize::{mostly_cjk, word_count};
use super::vector::{Vectors, dot};
use super::{SearchHit, SearchOptions, Tuning, rank};

/// Most sentences of one query that get their own embedding (bounds the host's embedding
/// work per search).
pub const MAX_QUERY_SENTENCES: usize = 8;

/// The sentences of a multi-sentence query, to embed beside the whole query; empty for a
/// single sentence (the whole query's vector says it all). Sentences end at `.`, `!` or `?`
/// followed by white space, at a line break, or at Chinese and Japanese sentence-final
/// punctuation (`。！？；`, half-width `｡`), which no space follows; fragments of fewer than
/// two words ([`word_count`]) are dropped.
pub fn query_sentences(query: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut prev: Option<char> = None;
    for (i, c) in query.char_indices() {
        if c == '\n' || (c.is_whitespace() && matches!(prev, Some('.' | '!' | '?'))) {
            push_sentence(&mut out, &query[start..i]);
            start = i + c.len_utf8();
        } else if matches!(c, '。' | '｡' | '！' | '？' | '；') {
            // The mark stays with its sentence, as an ASCII full stop does.
            let end = i + c.len_utf8();
            push_sentence(&mut out, &query[start..end]);
            start = end;
        }
        prev = Some(c);
    }
    push_sentence(&mut out, &query[start..]);
    if out.len() < 2 {
        out.clear();
    }
    out.truncate(MAX_QUERY_SENTENCES);
    out
}

/// The whole query's vector derived from its sentences' (`vectors[i]` embeds `sentences[i]`):
/// their mean weighted by each sentence's word count, at unit length. The local model uses it
/// instead of a pass over the whole query, so each token goes through the encoder once, not
/// twice; docs/search-ranking.md has what that costs in recall.
pub fn whole_query_vector(sentences: &[&str], vectors: &[Vec<f32>]) -> Vec<f32> {
    let dim = vectors.first().map_or(0, Vec::len);
    let mut sum = vec![0f32; dim];
    for (sentence, v) in sentences.iter().zip(vectors) {
        let words = word_count(sentence).max(1) as f32;
        sum.iter_mut().zip(v).for_each(|(s, x)| *s += words * x);
    }
    let norm = sum.iter().map(|x| x * x).sum::<f32>().sqrt();
    if norm > 0.0 && norm.is_finite() {
        sum.iter_mut().for_each(|x| *x /= norm);
    }
    sum
}

fn push_sentence<'a>(out: &mut Vec<&'a str>, piece: &'a str) {
    let piece = piece.trim();
    if word_count(piece) >= 2 {
        out.push(piece);
    }
}

/// Mean and standard deviation of a score over a population, as `z = (x - mean) * scale`.
/// A population with no spread gives every member z = 0 (that side says nothing).
struct Standard {
    mean: f64,
    scale: f64,
}

impl Standard {
    /// `sum` and `sum_sq` over the population's `n` members (absent members count as 0).
    fn new(sum: f64, sum_sq: f64, n: usize) -> Self {
        if n == 0 {
            return Standard {
                mean: 0.0,
                scale: 0.0,
            };
        }
        let mean = sum / n as f64;
        let var = (sum_sq / n as f64 - mean * mean).max(0.0);
        let sd = var.sqrt();
        Standard {
            mean,
            scale: if sd > 1e-12 { 1.0 / sd } else { 0.0 },
        }
    }

    fn z(&self, x: f64) -> f64 {
        (x - self.mean) * self.scale
    }
}

/// Unit-length copies of the query vectors (`dim` floats each), concatenated; zero or
/// non-finite ones are dropped.
fn unit_queries(query_vectors: &[f32], dim: usize) -> Vec<f32> {
    let mut out = Vec::with_capacity(query_vectors.len());
    for v in query_vectors.chunks_exact(dim) {
        let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
        if norm > 0.0 && norm.is_finite() {
            out.extend(v.iter().map(|x| x / norm));
        }
    }
    out
}

/// Each tool's best similarity to the query vectors, for the tools that pass the filters.
struct Similarities {
    /// Per slot; `None` for tools without a vector or filtered out.
    best: Vec<Option<f32>>,
    /// How many tools pass the filters (the population of both sides' standard scores).
    population: usize,
    standard: Standard,
}

fn similarities(
    store: &Store,
    vectors: &Vectors,
    query_vectors: &[f32],
    opts: &SearchOptions,
) -> Similarities {
    let dim = vectors.dim.max(1);
    let queries = unit_queries(query_vectors, dim);
    let mut best = vec![None; store.docs.len()];
    let (mut population, mut with_vector) = (0usize, 0usize);
    let (mut sum, mut sum_sq) = (0f64, 0f64);
    for (slot, doc) in store.docs.iter().enumerate() {
        let Some(doc) = doc else { continue };
        if !passes(doc, opts) {
            continue;
        }
        population += 1;
        let Some(v) = vectors.row(slot) else {
            continue;
        };
        // Every query vector against this tool's vector while it is in cache: the catalog's
        // vectors are read once per search, not once per query vector.
        let Some(sim) = queries
            .chunks_exact(dim)
            .map(|q| dot(v, q))
            .reduce(f32::max)
        else {
            continue;
        };
        best[slot] = Some(sim);
        with_vector += 1;
        sum += sim as f64;
        sum_sq += (sim as f64) * (sim as f64);
    }
    Similarities {
        best,
        population,
        standard: Standard::new(sum, sum_sq, with_vector),
    }
}

/// The dense side's share of the fused score.
pub(crate) struct DenseWeight {
    /// For a request mostly in CJK scripts over a catalog mostly described in them.
    pub cjk: f64,
    /// For every other request and catalog.
    pub other: f64,
}

/// Fuses the word ranking of `query` (weight `1 − dense_weight`) with the similarity of each
/// tool's vector to the query vectors (`query_vectors`: the whole query's embedding, then
/// optionally its sentences', each `vectors.dim` floats). Candidates are the word hits and the
/// tools at least `dense_min_similarity` similar; a query that fits nothing in words or meaning
/// gets nothing.
pub(crate) fn hybrid(
    store: &Store,
    vectors: &Vectors,
    t: &Tuning,
    dense_weight: DenseWeight,
    query: WordQuery,
    query_vectors: &[f32],
    opts: &SearchOptions,
) -> Vec<SearchHit> {
    if opts.limit == 0 {
        return Vec::new();
    }
    let Similarities {
        best: sims,
        population,
        standard: dense,
    } = similarities(store, vectors, query_vectors, opts);
    let word_tuning = Tuning {
        phrase_idf: t.hybrid_phrase_idf,
        surface_weight: t.hybrid_surface_weight,
        ..t.clone()
    };
    let lexical = rank::all_matches(store, &word_tuning, query, opts);
    let words = Standard::new(
        lexical.iter().map(|&(_, s)| s).sum(),
        lexical.iter().map(|&(_, s)| s * s).sum(),
        population,
    );
    let mut word_score = vec![0f64; store.docs.len()];
    for &(slot, s) in &lexical {
        word_score[slot as usize] = s;
    }
    // One weight for the whole ranking: a Chinese request's similarities run higher for any
    // Chinese text than for English text, so a weight per tool language lifted the few Chinese
    // tools of an English catalog for every Chinese request (docs/search-ranking.md).
    let cjk = mostly_cjk(query.typed) && store.live_cjk * 2 > store.live;
    let a = if cjk {
        dense_weight.cjk
    } else {
        dense_weight.other
    }
    .clamp(0.0, 1.0);
    let floor = t.dense_min_similarity as f32;
    let mut hits: Vec<(f64, &str)> = store
        .docs
        .iter()
        .enumerate()
        .filter_map(|(slot, doc)| {
            let doc = doc.as_ref()?;
            let sim = sims[slot];
            if word_score[slot] <= 0.0 && !sim.is_some_and(|s| s >= floor) {
                return None;
            }
            let zd = sim.map_or(0.0, |s| dense.z(s as f64));
            let score = (1.0 - a) * words.z(word_score[slot]) + a * zd;
            Some((score, doc.name.as_str()))
        })
        .collect();
    let best_first =
        |x: &(f64, &str), y: &(f64, &str)| y.0.total_cmp(&x.0).then_with(|| x.1.cmp(y.1));
    if hits.len() > opts.limit {
        hits.select_nth_unstable_by(opts.limit, best_first);
        hits.truncate(opts.limit);
    }
    hits.sort_by(best_first);
    hits.into_iter()
        .map(|(score, name)| SearchHit {
            name: name.to_owned(),
            score,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_whole_query_vector_weighs_each_sentence_by_its_words() {
        let v = whole_query_vector(
            &["find me a song now", "tell jokes"],
            &[vec![1.0, 0.0], vec![0.0, 1.0]],
        );
        // 5 words against 2: (5, 2) at unit length.
        let expected = [5.0 / 29f32.sqrt(), 2.0 / 29f32.sqrt()];
        assert!(
            v.iter().zip(expected).all(|(a, b)| (a - b).abs() < 1e-6),
            "{v:?}"
        );
        // Opposite sentences of one length cancel out: a zero vector, not NaN.
        let zero = whole_query_vector(&["a b", "c d"], &[vec![1.0, 0.0], vec![-1.0, 0.0]]);
        assert_eq!(zero, vec![0.0, 0.0]);
    }

    #[test]
    fn sentences_of_a_multi_request_query() {
        assert_eq!(
            query_sentences("Find me a song. Also, tell me a joke!\nAnd the weather?"),
            [
                "Find me a song.",
                "Also, tell me a joke!",
                "And the weather?"
            ]
        );
        // One sentence; a decimal point is not a sentence end.
        assert!(query_sentences("Convert 3.5 USD to EUR.").is_empty());
        // One-word fragments are dropped; what remains is a single sentence.
        assert!(query_sentences("Hi. What is the weather in Paris?").is_empty());
        let many = "Do it now. ".repeat(20);
        assert_eq!(query_sentences(&many).len(), MAX_QUERY_SENTENCES);
    }

    #[test]
    fn chinese_sentences_end_at_full_width_marks_without_a_space() {
        // BFCL's live_simple: one request, two asks, no space after either mark.
        assert_eq!(
            query_sentences(
                "我想知道上海目前的天气状况，可以帮我查询吗？顺便使用摄氏度来显示温度。"
            ),
            [
                "我想知道上海目前的天气状况，可以帮我查询吗？",
                "顺便使用摄氏度来显示温度。"
            ]
        );
        assert_eq!(
            query_sentences("查一下明天北京的天气；再订一张去上海的火车票！"),
            ["查一下明天北京的天气；", "再订一张去上海的火车票！"]
        );
        // `你好` is one word, like `Hi`: what remains is a single sentence.
        assert!(query_sentences("你好。北京明天的天气怎么样？").is_empty());
        // A Chinese sentence among English ones counts its own words.
        assert_eq!(
            query_sentences("Book a train ticket. 然后查一下上海的天气。"),
            ["Book a train ticket.", "然后查一下上海的天气。"]
        );
    }

    #[test]
    fn chinese_text_counts_a_word_per_two_characters() {
        assert_eq!(word_count("查天气"), 2);
        assert_eq!(word_count("Book 北京 tickets"), 3);
        assert_eq!(word_count("iPhone价格"), 2);
        // A sentence's weight in the derived whole-query vector follows the same count.
        let v = whole_query_vector(&["查一下天气", "订票"], &[vec![1.0, 0.0], vec![0.0, 1.0]]);
        assert!((v[0] / v[1] - 3.0).abs() < 1e-6, "{v:?}");
    }

    #[test]
    fn standard_scores_handle_flat_and_empty_populations() {
        let s = Standard::new(6.0, 20.0, 3); // 0, 2, 4 → mean 2, sd √(8/3)
        assert!((s.z(4.0) - 2.0 / (8.0f64 / 3.0).sqrt()).abs() < 1e-9);
        assert_eq!(Standard::new(3.0, 3.0, 3).z(1.0), 0.0);
        assert_eq!(Standard::new(0.0, 0.0, 0).z(5.0), 0.0);
    }
}
