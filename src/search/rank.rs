//! BM25F scoring of word queries.
//!
//! BM25F rather than BM25 per field: field term frequencies are weighted and length-normalised
//! first, then saturated once, so a word found in both the name and the description is not
//! counted as two independent words (which would let long descriptions outrank names).
//!
//! A tool is scored on its own text only: no evidence is pooled from the other tools of its
//! namespace, so how a host groups tools does not move the ranking (issue #13: a pooled
//! namespace score lost to plain BM25 when a group was large or mixed, normalised or capped
//! alike; docs/search-ranking.md).

use std::cell::RefCell;
use std::cmp::Ordering;
use std::collections::BinaryHeap;

use super::filter::passes;
use super::index::{Doc, NF, Store};
use super::query::{QueryTerm, WordQuery, parse};
use super::{SearchHit, SearchOptions, Tuning};

/// Per-thread buffers reused across queries, so scoring allocates nothing per posting and does
/// not zero a 10k-entry array per query: only the touched entries are reset afterwards.
#[derive(Default)]
struct Scratch {
    /// Per document slot: score so far and required-word bits (bit 63 = touched). One array
    /// so a posting costs one random access here.
    cells: Vec<Cell>,
    touched: Vec<u32>,
}

#[derive(Clone, Copy, Default)]
struct Cell {
    score: f64,
    mask: u64,
}

const TOUCHED: u64 = 1 << 63;

thread_local! {
    static SCRATCH: RefCell<Scratch> = RefCell::new(Scratch::default());
}

/// BM25 inverse document frequency (the non-negative "+1" form).
pub(crate) fn idf(n: f64, df: f64) -> f64 {
    (1.0 + (n - df + 0.5) / (df + 0.5)).ln()
}

pub(crate) fn search(
    store: &Store,
    tuning: &Tuning,
    query: WordQuery,
    opts: &SearchOptions,
) -> Vec<SearchHit> {
    if opts.limit == 0 {
        return Vec::new();
    }
    scored(store, tuning, query, |mask, s| {
        top(store, tuning, mask, opts, s)
    })
    .into_iter()
    .filter_map(|(slot, score)| {
        let doc = store.docs[slot as usize].as_ref()?;
        Some(SearchHit {
            name: doc.name.clone(),
            score,
        })
    })
    .collect()
}

/// Every document that matches the word query (required words, filters, relative floor) as
/// `(slot, score)`, in no particular order: the word side of hybrid search.
pub(crate) fn all_matches(
    store: &Store,
    tuning: &Tuning,
    query: WordQuery,
    opts: &SearchOptions,
) -> Vec<(u32, f64)> {
    scored(store, tuning, query, |mask, s| {
        let mut hits: Vec<(u32, f64)> = s
            .touched
            .iter()
            .filter_map(|&d| {
                let (score, doc) = final_score(store, mask, s, d)?;
                passes(doc, opts).then_some((d, score))
            })
            .collect();
        let best = hits.iter().map(|&(_, score)| score).fold(0.0, f64::max);
        hits.retain(|&(_, score)| score >= best * tuning.min_relative_score);
        hits
    })
}

/// Scores the query's words into the per-thread scratch and hands `pick` the required-word
/// mask and the scores.
fn scored(
    store: &Store,
    tuning: &Tuning,
    query: WordQuery,
    pick: impl FnOnce(u64, &Scratch) -> Vec<(u32, f64)>,
) -> Vec<(u32, f64)> {
    if store.live == 0 {
        return Vec::new();
    }
    let Some(parsed) = parse(store, query, tuning) else {
        return Vec::new();
    };
    if parsed.terms.is_empty() {
        return Vec::new();
    }
    SCRATCH.with(|cell| {
        let mut guard = cell.borrow_mut();
        let s = &mut *guard;
        // Clean already unless a previous query on this thread unwound mid-way.
        s.reset();
        s.ensure(store);
        accumulate(store, tuning, &parsed.terms, s);
        let hits = pick(parsed.required_mask, s);
        s.reset();
        hits
    })
}

/// A touched document's final score, when it carries every required word and scores above
/// zero.
fn final_score<'a>(
    store: &'a Store,
    required_mask: u64,
    s: &Scratch,
    d: u32,
) -> Option<(f64, &'a Doc)> {
    let cell = s.cells[d as usize];
    if cell.mask & required_mask != required_mask {
        return None;
    }
    let doc = store.docs[d as usize].as_ref()?;
    (cell.score > 0.0).then_some((cell.score, doc))
}

impl Scratch {
    fn ensure(&mut self, store: &Store) {
        let slots = store.docs.len();
        if self.cells.len() < slots {
            self.cells.resize(slots, Cell::default());
        }
    }

    fn reset(&mut self) {
        for &d in &self.touched {
            self.cells[d as usize] = Cell::default();
        }
        self.touched.clear();
    }
}

/// Adds every query term's BM25F contribution to the documents that contain it.
fn accumulate(store: &Store, t: &Tuning, terms: &[QueryTerm], s: &mut Scratch) {
    let n = store.live as f64;
    // Per-field length normalisation (1 - b + b·len/avg) = c0 + c1·len, computed once.
    let mut c0 = [0f64; NF];
    let mut c1 = [0f64; NF];
    for f in 0..NF {
        let avg = (store.field_totals[f] as f64 / n).max(1e-9);
        c0[f] = 1.0 - t.b[f];
        c1[f] = t.b[f] / avg;
    }
    let k1 = t.k1;
    for qt in terms {
        let list = &store.postings[qt.tid as usize];
        let w = qt.weight * idf(n, list.len() as f64).min(qt.max_idf) * (k1 + 1.0);
        let bit = qt.required.map_or(0, |b| 1u64 << b);
        for p in list {
            let d = p.doc as usize;
            let lens = &store.doc_lens[d];
            let mut tfw = 0.0;
            for f in 0..NF {
                if p.tf[f] != 0 {
                    tfw += t.weights[f] * p.tf[f] as f64 / (c0[f] + c1[f] * lens[f] as f64);
                }
            }
            let cell = &mut s.cells[d];
            if cell.mask & TOUCHED == 0 {
                cell.mask |= TOUCHED;
                s.touched.push(p.doc);
            }
            cell.score += w * tfw / (k1 + tfw);
            cell.mask |= bit;
        }
    }
}

/// A hit in the top-k heap. Ordered so that the heap's maximum is the *worst* hit: lower
/// score, then (on equal scores) the later name.
struct Ranked<'a> {
    score: f64,
    name: &'a str,
    slot: u32,
}

impl Ord for Ranked<'_> {
    fn cmp(&self, other: &Self) -> Ordering {
        other
            .score
            .total_cmp(&self.score)
            .then_with(|| self.name.cmp(other.name))
    }
}

impl PartialOrd for Ranked<'_> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl PartialEq for Ranked<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for Ranked<'_> {}

/// The best `limit` touched documents that carry every required word and pass the filters,
/// by final score, then name.
///
/// A bounded heap: a candidate that cannot enter the current top `limit` is dropped before
/// the filters run, so an allow-list check (a string hash) is paid only by the few documents
/// that could make the cut, not by every document sharing a word with the query.
fn top(
    store: &Store,
    t: &Tuning,
    required_mask: u64,
    opts: &SearchOptions,
    s: &Scratch,
) -> Vec<(u32, f64)> {
    let mut heap: BinaryHeap<Ranked> = BinaryHeap::with_capacity(opts.limit + 1);
    for &d in &s.touched {
        let Some((score, doc)) = final_score(store, required_mask, s, d) else {
            continue;
        };
        let hit = Ranked {
            score,
            name: &doc.name,
            slot: d,
        };
        if heap.len() == opts.limit && heap.peek().is_some_and(|worst| hit >= *worst) {
            continue;
        }
        if passes(doc, opts) {
            heap.push(hit);
            if heap.len() > opts.limit {
                heap.pop();
            }
        }
    }
    let mut hits = heap.into_sorted_vec();
    // Relative floor: drop hits far below the best (matches on one stray frequent word).
    let floor = hits.first().map_or(0.0, |h| h.score) * t.min_relative_score;
    hits.retain(|h| h.score >= floor);
    hits.into_iter().map(|h| (h.slot, h.score)).collect()
}
