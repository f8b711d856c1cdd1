//! Hybrid ranking: the word ranking (BM25F) and the dense ranking (cosine similarity of
//! embeddings) fused by weighted reciprocal rank fusion.
//!
//! Rank fusion rather than score mixing: BM25F scores are unbounded and depend on the query's
//! length, cosine similarities live in a narrow band that depends on the model, so no fixed
//! mix of the two scores means the same thing across queries; ranks do.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use super::filter::passes;
use super::hash::FastMap;
use super::index::Store;
use super::vector::{Vectors, dot};
use super::{SearchHit, SearchOptions, Tuning, rank};

/// A dense candidate in the top-k heap; the heap's maximum is the worst candidate.
struct Near {
    sim: f32,
    slot: u32,
}

impl Ord for Near {
    fn cmp(&self, other: &Self) -> Ordering {
        other
            .sim
            .total_cmp(&self.sim)
            .then_with(|| self.slot.cmp(&other.slot))
    }
}

impl PartialOrd for Near {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl PartialEq for Near {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for Near {}

/// The `k` tools most similar to `qv` that pass the filters and reach the similarity floor,
/// best first. Brute force: a 10k-tool catalog of 384-dimensional vectors is ~4M
/// multiply-adds, well under a millisecond, and far cheaper than embedding the query.
pub(crate) fn dense_top(
    store: &Store,
    vectors: &Vectors,
    qv: &[f32],
    min_sim: f32,
    k: usize,
    opts: &SearchOptions,
) -> Vec<(u32, f32)> {
    let norm = qv.iter().map(|x| x * x).sum::<f32>().sqrt();
    if k == 0 || norm == 0.0 || !norm.is_finite() {
        return Vec::new();
    }
    let floor = min_sim * norm;
    let mut heap: BinaryHeap<Near> = BinaryHeap::with_capacity(k + 1);
    for (slot, v) in vectors.vec.iter().enumerate() {
        let Some(v) = v else { continue };
        let sim = dot(v, qv);
        if sim < floor {
            continue;
        }
        let cand = Near {
            sim,
            slot: slot as u32,
        };
        if heap.len() == k && heap.peek().is_some_and(|worst| cand >= *worst) {
            continue;
        }
        let Some(doc) = store.docs[slot].as_ref() else {
            continue;
        };
        if passes(doc, opts) {
            heap.push(cand);
            if heap.len() > k {
                heap.pop();
            }
        }
    }
    heap.into_sorted_vec()
        .into_iter()
        .map(|n| (n.slot, n.sim / norm))
        .collect()
}

pub(crate) fn hybrid(
    store: &Store,
    vectors: &Vectors,
    t: &Tuning,
    query: &str,
    qv: &[f32],
    opts: &SearchOptions,
) -> Vec<SearchHit> {
    if opts.limit == 0 {
        return Vec::new();
    }
    let depth = t.fusion_depth.max(opts.limit);
    let lexical = rank::search(
        store,
        t,
        query,
        &SearchOptions {
            limit: depth,
            ..*opts
        },
    );
    let dense = dense_top(
        store,
        vectors,
        qv,
        t.dense_min_similarity as f32,
        depth,
        opts,
    );
    let mut fused: FastMap<&str, f64> = FastMap::default();
    if t.score_fusion > 0.0 {
        // Convex mix of the two scores, each divided by its best in this query.
        let a = t.score_fusion.min(1.0);
        let lex_max = lexical.first().map_or(0.0, |h| h.score);
        let dense_max = dense.first().map_or(0.0, |&(_, s)| s as f64);
        if lex_max > 0.0 {
            for hit in &lexical {
                *fused.entry(hit.name.as_str()).or_default() += (1.0 - a) * hit.score / lex_max;
            }
        }
        if dense_max > 0.0 {
            for &(slot, sim) in &dense {
                if let Some(doc) = store.docs[slot as usize].as_ref() {
                    *fused.entry(doc.name.as_str()).or_default() += a * sim as f64 / dense_max;
                }
            }
        }
        return finish(fused, opts.limit);
    }
    for (rank, hit) in lexical.iter().enumerate() {
        *fused.entry(hit.name.as_str()).or_default() += 1.0 / (t.rrf_k + rank as f64 + 1.0);
    }
    for (rank, &(slot, _)) in dense.iter().enumerate() {
        if let Some(doc) = store.docs[slot as usize].as_ref() {
            *fused.entry(doc.name.as_str()).or_default() +=
                t.dense_weight / (t.rrf_k + rank as f64 + 1.0);
        }
    }
    finish(fused, opts.limit)
}

fn finish(fused: FastMap<&str, f64>, limit: usize) -> Vec<SearchHit> {
    let opts_limit = limit;
    let mut hits: Vec<(&str, f64)> = fused.into_iter().collect();
    hits.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(b.0)));
    hits.truncate(opts_limit);
    hits.into_iter()
        .map(|(name, score)| SearchHit {
            name: name.to_owned(),
            score,
        })
        .collect()
}
