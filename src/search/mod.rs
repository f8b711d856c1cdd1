//! Ranked tool search (`tool_search`, `ToolRegistry.search`): pure Rust, no napi types.
//!
//! One [`SearchIndex`] holds every searchable tool. It is updated one tool at a time
//! ([`SearchIndex::upsert`], [`SearchIndex::remove`]) because registries change by MCP resyncs of
//! a few entries, and it answers four kinds of query (see [`SearchIndex::search`]):
//! browse (empty query), `select:a,b`, ranked words (BM25F, the default) and regex.
//!
//! Layout: [`tokenize`] turns text into terms (identifier splitting, folding, stemming, CJK
//! bigrams); `index` keeps the incremental postings; `query` parses word queries; `rank` scores
//! them (BM25F); `pattern` runs regex queries; `filter` holds the
//! namespace/allow-list filters and browse/select; `bridge` adds the English glosses of a
//! Chinese request's terms from a bilingual dictionary the host installs.

pub mod bridge;
mod filter;
mod fuse;
pub(crate) mod hash;
mod index;
mod pattern;
mod query;
mod rank;
pub mod tokenize;
mod vector;

pub use fuse::{MAX_QUERY_SENTENCES, query_sentences, whole_query_vector};
pub use vector::embedding_text;

use std::collections::HashSet;
use std::sync::Arc;

use bridge::LanguageBridge;
use index::Store;
pub(crate) use index::needs_glosses;
use query::WordQuery;

use crate::embed::StaticEmbeddings;

/// A tool as the search index sees it. Borrowed: the index copies what it keeps.
#[derive(Clone, Copy, Debug)]
pub struct SearchDoc<'a> {
    /// Unique wire name (`mcp__github__create_issue`, `web_search`).
    pub name: &'a str,
    /// Namespace id (`web`, `mcp:<serverId>`).
    pub namespace: &'a str,
    /// What the model sees for the namespace (`mcp:GitHub`); pass `namespace` when there is none.
    pub namespace_label: &'a str,
    /// One-line (or longer) description.
    pub description: &'a str,
    /// `(parameter path or name, parameter description)` pairs, nested paths allowed
    /// (`options.timeout`).
    pub params: &'a [(String, String)],
}

/// How [`SearchIndex::search`] reads the query.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum SearchMode {
    /// Words ranked with BM25F (plus `select:` and `+required` syntax).
    #[default]
    Bm25,
    /// The query is a regular expression (Rust `regex` syntax, case-insensitive, linear time).
    Regex,
}

/// Filters and limits for one search.
#[derive(Clone, Copy, Debug)]
pub struct SearchOptions<'a> {
    /// Only tools whose namespace **or** namespace label equals this string.
    pub namespace: Option<&'a str>,
    /// Maximum number of hits (`select:` ignores it: the caller named the tools). 0 → no hits.
    pub limit: usize,
    /// Only these tool names may be returned (the per-request allow-list).
    pub allowed: Option<&'a HashSet<String>>,
    pub mode: SearchMode,
}

impl Default for SearchOptions<'_> {
    /// No filters, limit 5 (the `tool_search` default), BM25.
    fn default() -> Self {
        SearchOptions {
            namespace: None,
            limit: 5,
            allowed: None,
            mode: SearchMode::Bm25,
        }
    }
}

/// One result: the tool name and its score (0 for browse, 1 for `select:`).
#[derive(Clone, Debug, PartialEq)]
pub struct SearchHit {
    pub name: String,
    pub score: f64,
}

/// Errors a query can produce. Word queries never fail; regex queries can.
#[derive(Debug, thiserror::Error)]
pub enum SearchError {
    #[error("regex pattern is {len} characters long; the maximum is {max}")]
    RegexTooLong { len: usize, max: usize },
    #[error("invalid regex pattern: {0}")]
    InvalidRegex(String),
    #[error("regex pattern is too complex (its compiled form exceeds {limit} bytes); simplify it")]
    RegexTooComplex { limit: usize },
    #[error("embedding has {got} dimensions; this registry's embeddings have {expected}")]
    VectorDim { expected: usize, got: usize },
    #[error(
        "query embeddings have {got} values in all; expected one or more vectors of this registry's {dim} dimensions"
    )]
    QueryVectorLength { dim: usize, got: usize },
}

/// How many tools have a vector, and how many still wait for one.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct VectorStats {
    pub enabled: bool,
    pub ready: usize,
    pub pending: usize,
    pub dim: usize,
}

/// Ranking knobs. The defaults are the values measured by `examples/eval_search.rs` (see the
/// README's search section); they are public so the evaluation can switch each rule off, not
/// because callers should need to touch them.
#[derive(Clone, Debug, PartialEq)]
pub struct Tuning {
    /// BM25 term-frequency saturation.
    pub k1: f64,
    /// Field weights, in field order: name words, exact whole name, namespace label,
    /// description, parameter names, parameter descriptions, a Chinese description's English
    /// glosses.
    pub weights: [f64; index::NF],
    /// Per-field length normalisation (BM25 `b`), same order.
    pub b: [f64; index::NF],
    /// Query weight of a phrase (two adjacent query words that are adjacent in a name or a
    /// description), relative to a word; 0 turns phrases off.
    pub phrase_weight: f64,
    /// How rare a phrase counts in word search (see `query.rs`).
    pub phrase_idf: PhraseIdf,
    /// The same for the word side of hybrid search. Its own knob because the cap that helps
    /// word search did not carry over there: left out of the choice, StableToolBench lost
    /// 0.007–0.009 R@5 with it (docs/search-ranking.md).
    pub hybrid_phrase_idf: PhraseIdf,
    /// Query weight of a word's unstemmed form (`building`, not only `build`), relative to
    /// the word, in word search; 0 turns surface matching off.
    pub surface_weight: f64,
    /// The same for the word side of hybrid search, where the dense side already tells a
    /// noun from the verb it stems to (docs/search-ranking.md: judged leave-one-set-out).
    pub hybrid_surface_weight: f64,
    /// One-character parts of a split query identifier (`KsuxdqnB` → `b`) are not words.
    pub drop_split_letters: bool,
    /// Query weight of an indexed word that a query word is a prefix of (`crypto` →
    /// `cryptocurrency`), scaled by how much of it the query word covers; 0 turns it off.
    pub prefix_weight: f64,
    /// Shortest query word (after stemming) that is expanded by prefix.
    pub prefix_min_len: usize,
    /// Query weight of request-phrasing words ("provide", "information", "help").
    pub request_word_weight: f64,
    /// Query weight of an English gloss of a Chinese term (`bridge`), relative to a typed word.
    pub gloss_weight: f64,
    /// How a Chinese query term's IDF is capped by its glosses' (`query.rs`, `meaning_idf`).
    pub cjk_idf_cap: CjkIdfCap,
    /// Exponent applied to a query word's repeat count (1 = linear, 0 = ignore repeats).
    pub query_tf_exponent: f64,
    /// Hits scoring below this fraction of the best hit are dropped (matches on one stray
    /// word of a long request).
    pub min_relative_score: f64,
    /// Hybrid search: weight of the dense side in the fused score,
    /// `(1 − w)·z(word score) + w·z(similarity)` (z: standard score over the catalog).
    pub dense_weight: f64,
    /// Hybrid search with the built-in static embeddings: their dense weight (a weaker model
    /// earns less say).
    pub builtin_dense_weight: f64,
    /// Hybrid search with a host's or the local model's vectors: the dense weight for a tool
    /// described mostly in Chinese, Japanese or Korean when the request is mostly in those
    /// scripts too. Words meet there as character pairs, which match less reliably than a model
    /// that reads both texts; a Chinese request's word evidence for an English tool (its
    /// dictionary glosses) keeps `dense_weight` (docs/search-ranking.md).
    pub cjk_dense_weight: f64,
    /// Hybrid search: tools less similar than this (cosine) to the query are not dense
    /// candidates, so a query that fits nothing still returns nothing.
    pub dense_min_similarity: f64,
}

impl Default for Tuning {
    fn default() -> Self {
        Tuning {
            k1: 1.2,
            weights: [3.0, 4.0, 1.5, 1.0, 0.6, 0.6, 1.5],
            b: [0.75, 0.0, 0.5, 0.75, 0.75, 0.75, 0.75],
            phrase_weight: 1.0,
            phrase_idf: PhraseIdf::RarerWord,
            hybrid_phrase_idf: PhraseIdf::Own,
            surface_weight: 0.25,
            hybrid_surface_weight: 0.0,
            drop_split_letters: true,
            prefix_weight: 0.4,
            prefix_min_len: 4,
            request_word_weight: 0.5,
            gloss_weight: 0.5,
            cjk_idf_cap: CjkIdfCap::CommonestSense,
            query_tf_exponent: 0.5,
            min_relative_score: 0.05,
            dense_weight: 0.6,
            builtin_dense_weight: 0.4,
            cjk_dense_weight: 0.75,
            dense_min_similarity: 0.2,
        }
    }
}

/// The cap on a Chinese query term's inverse document frequency from its dictionary glosses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CjkIdfCap {
    /// None: the term's own rarity in the catalog.
    Off,
    /// Its commonest gloss word's IDF.
    CommonestSense,
    /// The mean of its gloss words' IDFs.
    MeanSense,
    /// Its rarest gloss word's IDF.
    RarestSense,
}

/// The inverse document frequency a phrase term is scored with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PhraseIdf {
    /// The word pair's own: rare almost by construction.
    Own,
    /// At most that of the pair's more common word.
    CommonerWord,
    /// At most that of the pair's rarer word.
    RarerWord,
}

/// The search index: incremental, `Send + Sync`, cheap to query from many threads at once
/// (queries take `&self`).
#[derive(Clone, Default)]
pub struct SearchIndex {
    store: Store,
    tuning: Tuning,
    vectors: vector::Vectors,
    /// Set when the vectors come from the built-in static table rather than the host's model
    /// (it picks the fusion weight, and lets a search embed its own query).
    /// (The table itself is loaded on first use, wherever that runs: ~10 ms.)
    builtin: bool,
    /// The index embeds tools itself, as they are upserted ([`Self::use_builtin_embeddings`]).
    embed_inline: bool,
    /// The bilingual dictionary word queries are glossed with ([`Self::set_language_bridge`]).
    bridge: Option<Arc<LanguageBridge>>,
}

impl std::fmt::Debug for SearchIndex {
    /// Sizes only: the postings of a 10k-tool catalog are not something to print.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SearchIndex")
            .field("tools", &self.store.live)
            .field("terms", &self.store.terms.len())
            .finish_non_exhaustive()
    }
}

/// Regex patterns longer than this (in characters) are refused, as Anthropic's regex tool
/// search does; long patterns are rarely intentional and cost compile time.
pub const MAX_REGEX_LEN: usize = 200;

impl SearchIndex {
    pub fn new() -> Self {
        Self::default()
    }

    /// An index with non-default ranking knobs (evaluation and experiments).
    pub fn with_tuning(tuning: Tuning) -> Self {
        SearchIndex {
            store: Store::default(),
            tuning,
            vectors: vector::Vectors::default(),
            builtin: false,
            embed_inline: false,
            bridge: None,
        }
    }

    pub fn tuning(&self) -> &Tuning {
        &self.tuning
    }

    /// Word queries are glossed with `bridge` from now on (`None`: no longer): a Chinese
    /// request's terms bring their English words, so tools described only in English match.
    /// Tools upserted from now on get the glosses of their Chinese descriptions too (the
    /// other direction); tools already indexed keep what they had until upserted again, which
    /// [`crate::registry::Registry::set_language_bridge`] does for its own.
    /// Shared: one parsed dictionary serves every registry of the process.
    pub fn set_language_bridge(&mut self, bridge: Option<Arc<LanguageBridge>>) {
        self.store.bridge = bridge.clone();
        self.bridge = bridge;
    }

    /// The English glosses of `query`'s Chinese terms the word ranker adds (empty: none).
    fn glosses(&self, query: &str) -> String {
        self.bridge
            .as_deref()
            .map_or_else(String::new, |b| b.glosses(query))
    }

    /// Adds a tool, or replaces the tool with the same name (its old text stops matching).
    /// Touches only this tool's postings.
    pub fn upsert(&mut self, doc: &SearchDoc) {
        if !self.vectors.enabled {
            self.store.upsert(doc);
            return;
        }
        let old = self
            .store
            .by_name
            .get(doc.name)
            .and_then(|&slot| self.vectors.take(slot));
        self.store.upsert(doc);
        let slot = self.store.by_name[doc.name];
        let text = embedding_text(doc.name, doc.namespace_label, doc.description);
        self.vectors.put(slot, text, old);
        self.embed_pending_builtin();
    }

    /// [`Self::upsert`] of many tools (a catalog at startup), analysed on several cores.
    pub fn upsert_many(&mut self, docs: &[SearchDoc]) {
        if !self.vectors.enabled {
            self.store.upsert_many(docs);
            return;
        }
        let old: Vec<_> = docs
            .iter()
            .map(|doc| {
                let slot = *self.store.by_name.get(doc.name)?;
                self.vectors.take(slot)
            })
            .collect();
        self.store.upsert_many(docs);
        for (doc, old) in docs.iter().zip(old) {
            let slot = self.store.by_name[doc.name];
            let text = embedding_text(doc.name, doc.namespace_label, doc.description);
            self.vectors.put(slot, text, old);
        }
        self.embed_pending_builtin();
    }

    /// Removes a tool; `false` when no tool has that name.
    pub fn remove(&mut self, name: &str) -> bool {
        if self.vectors.enabled
            && let Some(&slot) = self.store.by_name.get(name)
        {
            self.vectors.take(slot);
        }
        self.store.remove(name)
    }

    /// Makes room for `additional` more tools (bulk registration).
    pub fn reserve(&mut self, additional: usize) {
        self.store.by_name.reserve(additional);
    }

    /// Starts keeping embedding texts and vectors (hybrid search). Tools already indexed are
    /// queued for embedding. Idempotent.
    pub fn enable_vectors(&mut self) {
        if self.vectors.enabled {
            return;
        }
        self.vectors.enabled = true;
        let docs: Vec<(u32, String)> = self
            .store
            .live_docs()
            .map(|(slot, d)| (slot, embedding_text(&d.name, &d.label, &d.description)))
            .collect();
        for (slot, text) in docs {
            self.vectors.put(slot, text, None);
        }
    }

    /// Keeps vectors from the built-in static table ([`crate::embed`]): the caller computes
    /// them from [`Self::take_pending_vectors`] (off its main thread, say) and stores them
    /// with [`Self::set_vector`]; searches fuse them with the table's weight and, given no
    /// query vectors, embed the query themselves. Vectors from a host embedder are dropped
    /// (another model's vectors are not comparable). Idempotent.
    pub fn enable_builtin_vectors(&mut self) {
        if self.builtin {
            return;
        }
        self.builtin = true;
        self.vectors = vector::Vectors::default();
        self.enable_vectors();
    }

    /// [`Self::enable_builtin_vectors`], with the index embedding every tool itself, now and
    /// on every later upsert (~10 µs per tool): no queue to drain.
    pub fn use_builtin_embeddings(&mut self) {
        self.enable_builtin_vectors();
        self.embed_inline = true;
        self.embed_pending_builtin();
    }

    fn embed_pending_builtin(&mut self) {
        if self.embed_inline && self.builtin {
            let table = StaticEmbeddings::builtin();
            self.vectors.fill_pending(|text| table.embed(text));
        }
    }

    /// Up to `max` tools whose vector is missing, as `(name, text to embed)`, in slot order.
    /// They leave the queue (the caller is computing them); [`Self::requeue_vectors`] puts
    /// back the ones whose embedding failed.
    pub fn take_pending_vectors(&mut self, max: usize) -> Vec<(String, String)> {
        let mut out = Vec::new();
        while out.len() < max {
            let Some(slot) = self.vectors.pending.pop_first() else {
                break;
            };
            if let Some(doc) = self.store.docs[slot as usize].as_ref() {
                out.push((doc.name.clone(), self.vectors.text[slot as usize].clone()));
            }
        }
        out
    }

    /// Queues these tools again when they still have no vector (their embedding failed).
    pub fn requeue_vectors<'a>(&mut self, names: impl IntoIterator<Item = &'a str>) {
        for name in names {
            if let Some(&slot) = self.store.by_name.get(name)
                && self.vectors.missing(slot)
            {
                self.vectors.pending.insert(slot);
            }
        }
    }

    /// Stores the vector computed for `name` from `text`. `Ok(false)` when the tool is gone
    /// or its text changed meanwhile (the vector is dropped; the new text is queued already).
    pub fn set_vector(
        &mut self,
        name: &str,
        text: &str,
        vector: &[f32],
    ) -> Result<bool, SearchError> {
        if self.vectors.dim != 0 && vector.len() != self.vectors.dim {
            return Err(SearchError::VectorDim {
                expected: self.vectors.dim,
                got: vector.len(),
            });
        }
        let Some(&slot) = self.store.by_name.get(name) else {
            return Ok(false);
        };
        if vector.is_empty() {
            return Err(SearchError::VectorDim {
                expected: self.vectors.dim,
                got: 0,
            });
        }
        Ok(self.vectors.set(slot, text, vector).is_ok())
    }

    pub fn vector_stats(&self) -> VectorStats {
        VectorStats {
            enabled: self.vectors.enabled,
            ready: self.vectors.ready,
            pending: self.vectors.pending.len(),
            dim: self.vectors.dim,
        }
    }

    pub fn len(&self) -> usize {
        self.store.live
    }

    pub fn is_empty(&self) -> bool {
        self.store.live == 0
    }

    pub fn contains(&self, name: &str) -> bool {
        self.store.by_name.contains_key(name)
    }

    /// Runs one query.
    ///
    /// - empty or whitespace query: browse — every tool passing the filters, ordered by
    ///   (namespace label, name), score 0;
    /// - `select:a,b`: exactly the named tools that exist and pass the filters, in the given
    ///   order, score 1 (not truncated to `limit`);
    /// - otherwise in [`SearchMode::Bm25`]: words ranked by BM25F, `+word` marks a required
    ///   word; sorted by score descending, then name; nothing is returned when no word matches;
    /// - in [`SearchMode::Regex`]: the query is a case-insensitive regex matched against name,
    ///   namespace label and description; name matches rank first.
    pub fn search(&self, query: &str, opts: &SearchOptions) -> Result<Vec<SearchHit>, SearchError> {
        let q = query.trim();
        if q.is_empty() {
            return Ok(filter::browse(&self.store, opts));
        }
        if let Some(list) = q.strip_prefix("select:") {
            return Ok(filter::select(&self.store, list, opts));
        }
        match opts.mode {
            SearchMode::Bm25 => {
                let glosses = self.glosses(q);
                let word_query = WordQuery {
                    typed: q,
                    glosses: &glosses,
                };
                Ok(rank::search(&self.store, &self.tuning, word_query, opts))
            }
            SearchMode::Regex => pattern::search(&self.store, q, opts),
        }
    }

    /// [`Self::search`], fused with the similarity of each tool's embedding to the query's
    /// when the query is a word query and it has embeddings (see the `fuse` module): the given
    /// `query_vectors`, or with [`Self::use_builtin_embeddings`] and `None`, the built-in
    /// table's.
    ///
    /// `query_vectors` is the query's embedding, optionally followed by the embeddings of its
    /// [`query_sentences`], concatenated: a multiple of the tools' vector length. Until some
    /// tool has a vector, the result is the word ranking. Tools without a vector yet take part
    /// through their word score only.
    pub fn search_hybrid(
        &self,
        query: &str,
        query_vectors: Option<&[f32]>,
        opts: &SearchOptions,
    ) -> Result<Vec<SearchHit>, SearchError> {
        let q = query.trim();
        if q.is_empty() || q.starts_with("select:") || opts.mode != SearchMode::Bm25 {
            return self.search(query, opts);
        }
        let builtin_vectors;
        let qv = match (query_vectors, self.builtin) {
            (Some(qv), _) => qv,
            (None, true) => {
                let table = StaticEmbeddings::builtin();
                builtin_vectors = std::iter::once(q)
                    .chain(query_sentences(q))
                    .filter_map(|text| table.embed(text))
                    .flatten()
                    .collect::<Vec<f32>>();
                if builtin_vectors.is_empty() {
                    // Nothing in the query carries meaning for the table (stopwords only).
                    return self.search(query, opts);
                }
                &builtin_vectors[..]
            }
            (None, false) => return self.search(query, opts),
        };
        // The vectors' source sets the weight, whoever embedded the query. The built-in table
        // reads English only (the JS layer ranks a Chinese request by words with it).
        let dense_weight = if self.builtin {
            let w = self.tuning.builtin_dense_weight;
            fuse::DenseWeight { other: w, cjk: w }
        } else {
            fuse::DenseWeight {
                other: self.tuning.dense_weight,
                cjk: self.tuning.cjk_dense_weight,
            }
        };
        let dim = self.vectors.dim;
        if dim == 0 || self.vectors.ready == 0 {
            return self.search(query, opts);
        }
        if qv.is_empty() || !qv.len().is_multiple_of(dim) {
            return Err(SearchError::QueryVectorLength { dim, got: qv.len() });
        }
        Ok(fuse::hybrid(
            &self.store,
            &self.vectors,
            &self.tuning,
            dense_weight,
            WordQuery {
                typed: q,
                glosses: &self.glosses(q),
            },
            qv,
            opts,
        ))
    }
}

#[cfg(test)]
mod tests;
