//! BM25F scoring of word queries, plus the namespace pool.
//!
//! BM25F rather than BM25 per field: field term frequencies are weighted and length-normalised
//! first, then saturated once, so a word found in both the name and the description is not
//! counted as two independent words (which would let long descriptions outrank names).
//!
//! The namespace pool adds to every tool a share of its namespace's BM25 score, computed over
//! the namespace's pseudo-document (the union of its tools' words): requests often describe
//! what a *server* does ("track my parcel") while the tool that does it is called `latest`.

use std::cell::RefCell;

use super::filter::passes;
use super::index::{NF, Store};
use super::query::{QueryTerm, parse};
use super::{SearchHit, SearchOptions, Tuning};

/// Per-thread buffers reused across queries, so scoring allocates nothing per posting and does
/// not zero a 10k-entry array per query: only the touched entries are reset afterwards.
#[derive(Default)]
struct Scratch {
    acc: Vec<f64>,
    mask: Vec<u64>,
    seen: Vec<bool>,
    touched: Vec<u32>,
    ns_acc: Vec<f64>,
    ns_touched: Vec<u32>,
}

thread_local! {
    static SCRATCH: RefCell<Scratch> = RefCell::new(Scratch::default());
}

/// BM25 inverse document frequency (the non-negative "+1" form).
fn idf(n: f64, df: f64) -> f64 {
    (1.0 + (n - df + 0.5) / (df + 0.5)).ln()
}

pub(crate) fn search(
    store: &Store,
    tuning: &Tuning,
    query: &str,
    opts: &SearchOptions,
) -> Vec<SearchHit> {
    if opts.limit == 0 || store.live == 0 {
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
        s.ensure(store);
        accumulate(store, tuning, &parsed.terms, s);
        let hits = candidates(store, tuning, parsed.required_mask, opts, s);
        s.reset();
        top(store, tuning, hits, opts.limit)
    })
}

impl Scratch {
    fn ensure(&mut self, store: &Store) {
        let slots = store.docs.len();
        if self.acc.len() < slots {
            self.acc.resize(slots, 0.0);
            self.mask.resize(slots, 0);
            self.seen.resize(slots, false);
        }
        if self.ns_acc.len() < store.namespaces.len() {
            self.ns_acc.resize(store.namespaces.len(), 0.0);
        }
    }

    fn reset(&mut self) {
        for &d in &self.touched {
            self.acc[d as usize] = 0.0;
            self.mask[d as usize] = 0;
            self.seen[d as usize] = false;
        }
        self.touched.clear();
        for &n in &self.ns_touched {
            self.ns_acc[n as usize] = 0.0;
        }
        self.ns_touched.clear();
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
        let w = qt.weight * idf(n, list.len() as f64) * (k1 + 1.0);
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
            if !s.seen[d] {
                s.seen[d] = true;
                s.touched.push(p.doc);
            }
            s.acc[d] += w * tfw / (k1 + tfw);
            s.mask[d] |= bit;
        }
    }
    if t.namespace_pool > 0.0 && store.ns_live > 0 {
        pool_namespaces(store, t, terms, s);
    }
}

/// Scores each namespace's pseudo-document (all its tools' words) with plain BM25.
fn pool_namespaces(store: &Store, t: &Tuning, terms: &[QueryTerm], s: &mut Scratch) {
    let n = store.ns_live as f64;
    let avg = (store.ns_len_total as f64 / n).max(1e-9);
    let (k1, b) = (t.namespace_k1, t.namespace_b);
    for qt in terms {
        let list = &store.ns_postings[qt.tid as usize];
        if list.is_empty() {
            continue;
        }
        let w = qt.weight * idf(n, list.len() as f64) * (k1 + 1.0);
        for p in list {
            let Some(ns) = store.namespaces[p.ns as usize].as_ref() else {
                continue;
            };
            let tf = p.tf as f64;
            let norm = 1.0 - b + b * ns.len as f64 / avg;
            if s.ns_acc[p.ns as usize] == 0.0 {
                s.ns_touched.push(p.ns);
            }
            s.ns_acc[p.ns as usize] += w * tf / (tf + k1 * norm);
        }
    }
}

/// The touched documents that carry every required word and pass the filters, with their
/// final scores (own score plus the namespace pool share).
fn candidates(
    store: &Store,
    t: &Tuning,
    required_mask: u64,
    opts: &SearchOptions,
    s: &Scratch,
) -> Vec<(f64, u32)> {
    let mut hits: Vec<(f64, u32)> = Vec::with_capacity(s.touched.len().min(1024));
    for &d in &s.touched {
        if s.mask[d as usize] & required_mask != required_mask {
            continue;
        }
        let Some(doc) = store.docs[d as usize].as_ref() else {
            continue;
        };
        let pool = s.ns_acc.get(doc.ns as usize).copied().unwrap_or(0.0);
        let score = s.acc[d as usize] + t.namespace_pool * pool;
        if score > 0.0 && passes(doc, opts) {
            hits.push((score, d));
        }
    }
    hits
}

/// Drops hits below the relative floor, then returns the best `limit` by score, then name.
fn top(store: &Store, t: &Tuning, mut hits: Vec<(f64, u32)>, limit: usize) -> Vec<SearchHit> {
    let best = hits.iter().map(|h| h.0).fold(0.0, f64::max);
    let floor = best * t.min_relative_score;
    hits.retain(|h| h.0 >= floor);
    let name = |d: u32| store.docs[d as usize].as_ref().map_or("", |x| x.name.as_str());
    let order = |a: &(f64, u32), b: &(f64, u32)| {
        b.0.total_cmp(&a.0).then_with(|| name(a.1).cmp(name(b.1)))
    };
    if hits.len() > limit {
        hits.select_nth_unstable_by(limit - 1, order);
        hits.truncate(limit);
    }
    hits.sort_unstable_by(order);
    hits.into_iter()
        .map(|(score, d)| SearchHit {
            name: name(d).to_owned(),
            score,
        })
        .collect()
}
