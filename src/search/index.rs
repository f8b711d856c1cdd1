//! The incremental inverted index behind [`SearchIndex`](super::SearchIndex).
//!
//! Registries change one tool at a time (an MCP resync registers or evicts a few entries), so
//! `upsert`/`remove` touch only that tool's postings instead of rebuilding: every document
//! remembers where each of its postings sits, a removal `swap_remove`s them and patches the one
//! posting that moved. Posting lists therefore hold live documents only, document frequencies
//! are exact, and freed slots are reused. Field lengths and their totals are kept the same way,
//! so BM25 averages are always current.
//!
//! Next to the per-tool postings the index keeps one pseudo-document per namespace (the union of
//! its tools' terms). A query such as "track my parcel" often names what a *server* does while
//! the matching tool is called `get_status`; the namespace pool lets sibling evidence lift it.

use std::collections::BTreeMap;
use std::sync::Arc;

use super::SearchDoc;
use super::hash::FastMap;
use super::tokenize::{Analyzer, PHRASE_MARK, TermKind, exact_key, phrase_key_into};

/// Number of indexed fields.
pub(crate) const NF: usize = 6;

/// Field slots in a posting's term-frequency array.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(usize)]
pub(crate) enum Field {
    /// Identifier parts of the tool name (`read_file` → read, file).
    Name = 0,
    /// The whole folded name as a single term (exact-name queries rank first).
    Exact = 1,
    /// Namespace label words (`mcp:Gmail` → mcp, gmail).
    Label = 2,
    Desc = 3,
    ParamName = 4,
    ParamDesc = 5,
}

/// Fields whose terms feed the namespace pool. The label is the same for every tool of a
/// namespace (so it would only add a constant) and the exact-name key is per tool by design.
const POOLED: [bool; NF] = [true, false, false, true, true, true];

/// One document's occurrences of one term, per field (saturating at 255: BM25 saturates long
/// before that), and where the document lists this posting (`back`), so a removal that moves
/// this posting can update the document in O(1). 16 bytes.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Posting {
    pub doc: u32,
    back: u32,
    pub tf: [u8; NF],
}

/// One namespace's share of one term: how many of its tools contain it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct NsPosting {
    pub ns: u32,
    pub tf: u32,
}

#[derive(Clone)]
pub(crate) struct Doc {
    pub name: String,
    pub namespace: String,
    pub label: String,
    pub description: String,
    pub ns: u32,
}

#[derive(Clone)]
pub(crate) struct Namespace {
    pub key: String,
    /// Live tools in this namespace.
    pub docs: u32,
    /// term id → index of this namespace's entry in `ns_postings[term]`.
    terms: FastMap<u32, u32>,
}

/// Term dictionary, postings and per-document data. Fields are `pub(crate)` for the scorer.
#[derive(Clone, Default)]
pub(crate) struct Store {
    pub docs: Vec<Option<Doc>>,
    free: Vec<u32>,
    pub by_name: FastMap<String, u32>,
    /// Per-slot field lengths, kept apart from `docs` so scoring reads a dense array.
    pub doc_lens: Vec<[f32; NF]>,
    /// Per slot: `(term id, index of the doc's posting in that term's list)`.
    doc_terms: Vec<Vec<(u32, u32)>>,
    pub terms: Dictionary,
    /// Per term id: is it a phrase term (kept out of the namespace pool)?
    phrase_term: Vec<bool>,
    /// Per term id: scratch for [`DocBuilder`] (always 0 between upserts).
    mark: Vec<u32>,
    /// [`DocBuilder`]'s buffers, kept between documents.
    scratch: Scratch,
    pub postings: Vec<Vec<Posting>>,
    pub ns_postings: Vec<Vec<NsPosting>>,
    pub field_totals: [u64; NF],
    pub live: usize,
    pub namespaces: Vec<Option<Namespace>>,
    ns_free: Vec<u32>,
    ns_by_key: FastMap<String, u32>,
    pub ns_live: usize,
    pub ns_len_total: u64,
    /// Pseudo-document length per namespace id (sum of its `NsPosting::tf`), a dense array
    /// because scoring reads it once per namespace posting.
    pub ns_len: Vec<u64>,
}

/// The term dictionary: a hash map for the hot lookups (indexing, query words), an ordered
/// copy of the same keys for prefix expansion, and the reverse map so a term whose last tool
/// is removed can be dropped and its id reused (a long-running registry sees tools come and
/// go; the vocabulary must not grow forever). Keys are shared `Arc<str>`, stored once.
#[derive(Clone, Default)]
pub(crate) struct Dictionary {
    ids: FastMap<Arc<str>, u32>,
    sorted: BTreeMap<Arc<str>, u32>,
    by_id: Vec<Option<Arc<str>>>,
    free: Vec<u32>,
}

impl Dictionary {
    pub fn get(&self, term: &str) -> Option<u32> {
        self.ids.get(term).copied()
    }

    /// Id of `term`; `Some(id)` in the second place when the term is new (the id may be a
    /// reused one, or `by_id.len() - 1` for a fresh one).
    fn intern(&mut self, term: &str) -> (u32, bool) {
        if let Some(&id) = self.ids.get(term) {
            return (id, false);
        }
        let key: Arc<str> = term.into();
        let id = match self.free.pop() {
            Some(id) => {
                self.by_id[id as usize] = Some(key.clone());
                id
            }
            None => {
                self.by_id.push(Some(key.clone()));
                (self.by_id.len() - 1) as u32
            }
        };
        if prefix_eligible(term) {
            self.sorted.insert(key.clone(), id);
        }
        self.ids.insert(key, id);
        (id, true)
    }

    /// Forgets a term no tool contains any more; its id will be reused.
    fn release(&mut self, id: u32) {
        if let Some(key) = self.by_id[id as usize].take() {
            self.ids.remove(&*key);
            if prefix_eligible(&key) {
                self.sorted.remove(&*key);
            }
            self.free.push(id);
        }
    }

    /// Number of distinct live terms.
    pub fn len(&self) -> usize {
        self.ids.len()
    }

    /// All terms with their ids (tests).
    #[cfg(test)]
    pub fn iter(&self) -> impl Iterator<Item = (&str, u32)> {
        self.ids.iter().map(|(k, &v)| (&**k, v))
    }
}

/// Only plain words can be reached by prefix expansion (a query word is ASCII alphanumeric);
/// phrase, exact-name and CJK terms stay out of the ordered copy, which halves its size and
/// the cost of keeping it.
fn prefix_eligible(term: &str) -> bool {
    term.as_bytes()
        .first()
        .is_some_and(u8::is_ascii_alphanumeric)
}

/// Phrases are taken from the first words of a name or description only: what a tool does is
/// said up front, and a long manual-like description would otherwise double its term count
/// (and its indexing time) for pairs nobody types.
const MAX_PHRASES_PER_FIELD: usize = 48;

/// Buffers one document's indexing needs; a registry indexes thousands of tools in a row,
/// and allocating these per tool was a measurable part of it.
#[derive(Clone, Default)]
struct Scratch {
    tf: Vec<(u32, [u8; NF])>,
    analyzer: Analyzer,
    phrase: String,
    prev: String,
}

/// Builds one document's term frequencies, interning terms as they are met so no string is
/// allocated for a term the dictionary already knows.
///
/// Name and description also get phrase terms (adjacent word pairs); those do not count
/// toward field lengths, which measure words.
struct DocBuilder<'s> {
    store: &'s mut Store,
    /// Distinct terms of this document with their per-field counts; `store.mark[tid]` is the
    /// index of `tid`'s entry plus one while the document is being built (0: not seen yet).
    tf: Vec<(u32, [u8; NF])>,
    lens: [f32; NF],
    analyzer: Analyzer,
    phrase: String,
    prev: String,
}

impl DocBuilder<'_> {
    fn bump(&mut self, f: usize, term: &str) {
        let id = self.store.intern(term);
        let mark = &mut self.store.mark[id as usize];
        let at = if *mark == 0 {
            self.tf.push((id, [0; NF]));
            *mark = self.tf.len() as u32;
            self.tf.len() - 1
        } else {
            *mark as usize - 1
        };
        let tf = &mut self.tf[at].1;
        tf[f] = tf[f].saturating_add(1);
    }

    fn add(&mut self, field: Field, text: &str) {
        let f = field as usize;
        let mut phrases = if matches!(field, Field::Name | Field::Desc) {
            MAX_PHRASES_PER_FIELD
        } else {
            0
        };
        self.prev.clear();
        let mut analyzer = std::mem::take(&mut self.analyzer);
        analyzer.run(text, |t, kind| {
            self.lens[f] += 1.0;
            self.bump(f, t);
            if phrases > 0 && kind == TermKind::Word {
                phrases -= 1;
                if !self.prev.is_empty() {
                    let mut key = std::mem::take(&mut self.phrase);
                    key.clear();
                    phrase_key_into(&self.prev, t, &mut key);
                    self.bump(f, &key);
                    self.phrase = key;
                }
                self.prev.clear();
                self.prev.push_str(t);
            }
        });
        self.analyzer = analyzer;
    }
}

impl Store {
    pub fn term_id(&self, term: &str) -> Option<u32> {
        self.terms.get(term)
    }

    /// Terms that start with `prefix` (excluding `prefix` itself), in order. Every dictionary
    /// term belongs to at least one live tool (unused terms are released).
    pub fn terms_with_prefix<'a>(
        &'a self,
        prefix: &'a str,
    ) -> impl Iterator<Item = (&'a str, u32)> + 'a {
        use std::ops::Bound;
        self.terms
            .sorted
            .range::<str, _>((Bound::Excluded(prefix), Bound::Unbounded))
            .take_while(move |(k, _)| k.starts_with(prefix))
            .map(|(k, &id)| (&**k, id))
    }

    fn intern(&mut self, term: &str) -> u32 {
        let (id, new) = self.terms.intern(term);
        if new {
            let phrase = term.starts_with(PHRASE_MARK);
            if id as usize == self.postings.len() {
                self.postings.push(Vec::new());
                self.ns_postings.push(Vec::new());
                self.phrase_term.push(phrase);
                self.mark.push(0);
            } else {
                // A released id: its lists are empty already.
                self.phrase_term[id as usize] = phrase;
            }
        }
        id
    }

    fn namespace_slot(&mut self, key: &str) -> u32 {
        if let Some(&id) = self.ns_by_key.get(key) {
            return id;
        }
        let ns = Namespace {
            key: key.to_owned(),
            docs: 0,
            terms: FastMap::default(),
        };
        let id = match self.ns_free.pop() {
            Some(id) => {
                self.namespaces[id as usize] = Some(ns);
                self.ns_len[id as usize] = 0;
                id
            }
            None => {
                self.namespaces.push(Some(ns));
                self.ns_len.push(0);
                (self.namespaces.len() - 1) as u32
            }
        };
        self.ns_by_key.insert(key.to_owned(), id);
        self.ns_live += 1;
        id
    }

    pub fn upsert(&mut self, doc: &SearchDoc) {
        self.remove(doc.name);
        let Scratch {
            tf,
            analyzer,
            phrase,
            prev,
        } = std::mem::take(&mut self.scratch);
        let mut b = DocBuilder {
            store: self,
            tf,
            lens: [0.0; NF],
            analyzer,
            phrase,
            prev,
        };
        b.add(Field::Name, doc.name);
        b.add(Field::Label, doc.namespace_label);
        b.add(Field::Desc, doc.description);
        for (pname, pdesc) in doc.params {
            b.add(Field::ParamName, pname);
            b.add(Field::ParamDesc, pdesc);
        }
        let key = exact_key(doc.name);
        if key.len() > 1 {
            b.lens[Field::Exact as usize] = 1.0;
            b.bump(Field::Exact as usize, &key);
        }
        let DocBuilder {
            tf: mut terms,
            lens,
            analyzer,
            phrase,
            prev,
            ..
        } = b;
        for &(tid, _) in &terms {
            self.mark[tid as usize] = 0;
        }

        let slot = match self.free.pop() {
            Some(s) => s,
            None => {
                self.docs.push(None);
                self.doc_lens.push([0.0; NF]);
                self.doc_terms.push(Vec::new());
                (self.docs.len() - 1) as u32
            }
        };
        let ns = self.namespace_slot(doc.namespace);
        let mut doc_terms = std::mem::take(&mut self.doc_terms[slot as usize]);
        doc_terms.clear();
        doc_terms.reserve(terms.len());
        for &(tid, tf) in &terms {
            let list = &mut self.postings[tid as usize];
            let back = doc_terms.len() as u32;
            doc_terms.push((tid, list.len() as u32));
            list.push(Posting {
                doc: slot,
                back,
                tf,
            });
            // Phrase terms would double-count their words in the namespace pool.
            if !self.phrase_term[tid as usize] && POOLED.iter().zip(tf).any(|(&p, n)| p && n > 0) {
                self.pool_add(ns, tid);
            }
        }
        self.doc_terms[slot as usize] = doc_terms;
        terms.clear();
        self.scratch = Scratch {
            tf: terms,
            analyzer,
            phrase,
            prev,
        };
        for (total, &l) in self.field_totals.iter_mut().zip(&lens) {
            *total += l as u64;
        }
        self.doc_lens[slot as usize] = lens;
        self.docs[slot as usize] = Some(Doc {
            name: doc.name.to_owned(),
            namespace: doc.namespace.to_owned(),
            label: doc.namespace_label.to_owned(),
            description: doc.description.to_owned(),
            ns,
        });
        if let Some(n) = self.namespaces[ns as usize].as_mut() {
            n.docs += 1;
        }
        self.by_name.insert(doc.name.to_owned(), slot);
        self.live += 1;
    }

    pub fn remove(&mut self, name: &str) -> bool {
        let Some(slot) = self.by_name.remove(name) else {
            return false;
        };
        let Some(doc) = self.docs[slot as usize].take() else {
            return false;
        };
        let doc_terms = std::mem::take(&mut self.doc_terms[slot as usize]);
        for &(tid, pos) in &doc_terms {
            let list = &mut self.postings[tid as usize];
            let removed = list.swap_remove(pos as usize);
            if let Some(moved) = list.get(pos as usize) {
                self.doc_terms[moved.doc as usize][moved.back as usize].1 = pos;
            }
            if !self.phrase_term[tid as usize]
                && POOLED.iter().zip(removed.tf).any(|(&p, n)| p && n > 0)
            {
                self.pool_remove(doc.ns, tid);
            }
            if self.postings[tid as usize].is_empty() {
                // The namespace pool only holds terms some tool still has, so it is empty too.
                self.terms.release(tid);
            }
        }
        // Keep the allocation for the slot's next tool.
        self.doc_terms[slot as usize] = doc_terms;
        self.doc_terms[slot as usize].clear();
        let lens = std::mem::take(&mut self.doc_lens[slot as usize]);
        for (total, &l) in self.field_totals.iter_mut().zip(&lens) {
            *total -= l as u64;
        }
        let ns_empty = match self.namespaces[doc.ns as usize].as_mut() {
            Some(n) => {
                n.docs -= 1;
                n.docs == 0
            }
            None => false,
        };
        if ns_empty && let Some(n) = self.namespaces[doc.ns as usize].take() {
            self.ns_by_key.remove(&n.key);
            self.ns_free.push(doc.ns);
            self.ns_live -= 1;
        }
        self.free.push(slot);
        self.live -= 1;
        true
    }

    fn pool_add(&mut self, ns: u32, tid: u32) {
        let Some(n) = self.namespaces[ns as usize].as_mut() else {
            return;
        };
        let list = &mut self.ns_postings[tid as usize];
        // A namespace's tools usually arrive together, so its entry is most often the last
        // one and the map lookup can be skipped.
        let pos = match list.last() {
            Some(last) if last.ns == ns => Some(list.len() - 1),
            _ => n.terms.get(&tid).map(|&pos| pos as usize),
        };
        match pos {
            Some(pos) => list[pos].tf += 1,
            None => {
                n.terms.insert(tid, list.len() as u32);
                list.push(NsPosting { ns, tf: 1 });
            }
        }
        self.ns_len[ns as usize] += 1;
        self.ns_len_total += 1;
    }

    fn pool_remove(&mut self, ns: u32, tid: u32) {
        let Some(n) = self.namespaces[ns as usize].as_mut() else {
            return;
        };
        let Some(&pos) = n.terms.get(&tid) else {
            return;
        };
        self.ns_len[ns as usize] -= 1;
        self.ns_len_total -= 1;
        let list = &mut self.ns_postings[tid as usize];
        list[pos as usize].tf -= 1;
        if list[pos as usize].tf > 0 {
            return;
        }
        n.terms.remove(&tid);
        list.swap_remove(pos as usize);
        if let Some(moved) = list.get(pos as usize) {
            let moved_ns = moved.ns as usize;
            if let Some(m) = self.namespaces[moved_ns].as_mut() {
                m.terms.insert(tid, pos);
            }
        }
    }

    /// Live documents, in slot order.
    pub fn live_docs(&self) -> impl Iterator<Item = (u32, &Doc)> {
        self.docs
            .iter()
            .enumerate()
            .filter_map(|(i, d)| d.as_ref().map(|d| (i as u32, d)))
    }

    /// Checks every bookkeeping invariant (tests only): postings point back at their docs,
    /// lengths and namespace pools add up.
    #[cfg(test)]
    pub fn check_invariants(&self) {
        let mut totals = [0u64; NF];
        let mut live = 0;
        for (slot, doc) in self.live_docs() {
            live += 1;
            for (back, &(tid, pos)) in self.doc_terms[slot as usize].iter().enumerate() {
                let p = self.postings[tid as usize][pos as usize];
                assert_eq!((p.doc, p.back), (slot, back as u32));
            }
            for (t, l) in totals.iter_mut().zip(self.doc_lens[slot as usize]) {
                *t += l as u64;
            }
            assert_eq!(self.by_name.get(&doc.name), Some(&slot));
        }
        assert_eq!(live, self.live);
        assert_eq!(totals, self.field_totals);
        // Every dictionary term is used, every used id is in the dictionary.
        for (term, id) in self.terms.iter() {
            assert!(!self.postings[id as usize].is_empty(), "dead term {term:?}");
            assert_eq!(self.phrase_term[id as usize], term.starts_with(PHRASE_MARK));
        }
        let used = self.postings.iter().filter(|l| !l.is_empty()).count();
        assert_eq!(used, self.terms.len());
        let posting_count: usize = self.postings.iter().map(Vec::len).sum();
        let doc_term_count: usize = self.doc_terms.iter().map(Vec::len).sum();
        assert_eq!(posting_count, doc_term_count);
        let mut ns_len = vec![0u64; self.namespaces.len()];
        for (tid, list) in self.ns_postings.iter().enumerate() {
            for (pos, p) in list.iter().enumerate() {
                let n = self.namespaces[p.ns as usize]
                    .as_ref()
                    .expect("live namespace");
                assert_eq!(n.terms.get(&(tid as u32)), Some(&(pos as u32)));
                ns_len[p.ns as usize] += p.tf as u64;
            }
        }
        for (id, n) in self.namespaces.iter().enumerate() {
            if n.is_some() {
                assert_eq!(ns_len[id], self.ns_len[id]);
            }
        }
        assert_eq!(ns_len.iter().sum::<u64>(), self.ns_len_total);
        assert!(self.mark.iter().all(|&m| m == 0));
        let live_ns = self.namespaces.iter().filter(|n| n.is_some()).count();
        assert_eq!(live_ns, self.ns_live);
    }
}
