//! Request filters (namespace, allow-list) and the two unranked query forms: browse and
//! `select:`. Kept apart from ranking because every query form applies the same filters.

use std::cmp::Ordering;

use super::index::{Doc, Store};
use super::{SearchHit, SearchOptions};

/// Whether `doc` may appear in this request's results.
pub(crate) fn passes(doc: &Doc, opts: &SearchOptions) -> bool {
    if let Some(ns) = opts.namespace
        && doc.namespace != ns
        && doc.label != ns
    {
        return false;
    }
    match opts.allowed {
        Some(allowed) => allowed.contains(&doc.name),
        None => true,
    }
}

/// Empty query: every tool passing the filters, grouped by namespace label then name, so a
/// model browsing the catalog sees each namespace together.
pub(crate) fn browse(store: &Store, opts: &SearchOptions) -> Vec<SearchHit> {
    if opts.limit == 0 {
        return Vec::new();
    }
    let mut docs: Vec<&Doc> = store
        .live_docs()
        .map(|(_, d)| d)
        .filter(|d| passes(d, opts))
        .collect();
    let order = |a: &&Doc, b: &&Doc| -> Ordering { (&a.label, &a.name).cmp(&(&b.label, &b.name)) };
    if docs.len() > opts.limit {
        docs.select_nth_unstable_by(opts.limit - 1, order);
        docs.truncate(opts.limit);
    }
    docs.sort_unstable_by(order);
    docs.into_iter()
        .map(|d| SearchHit {
            name: d.name.clone(),
            score: 0.0,
        })
        .collect()
}

/// `select:a,b`: the named tools in the given order (duplicates once), skipping unknown or
/// filtered-out names. Not truncated to `limit`: the caller asked for these tools by name.
pub(crate) fn select(store: &Store, list: &str, opts: &SearchOptions) -> Vec<SearchHit> {
    let mut out: Vec<SearchHit> = Vec::new();
    for name in list.split(',').map(str::trim).filter(|n| !n.is_empty()) {
        if out.iter().any(|h| h.name == name) {
            continue;
        }
        let Some(&slot) = store.by_name.get(name) else {
            continue;
        };
        if let Some(doc) = store.docs[slot as usize].as_ref()
            && passes(doc, opts)
        {
            out.push(SearchHit {
                name: doc.name.clone(),
                score: 1.0,
            });
        }
    }
    out
}
