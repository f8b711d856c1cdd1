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

use std::collections::{BTreeMap, HashMap};

use super::SearchDoc;
use super::tokenize::{PHRASE_MARK, TermKind, analyze_tagged, exact_key, phrase_key};

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

/// One document's occurrences of one term, per field.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Posting {
    pub doc: u32,
    pub tf: [u16; NF],
}

/// One namespace's share of one term: how many of its tools contain it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct NsPosting {
    pub ns: u32,
    pub tf: u32,
}

#[derive(Clone, Debug)]
pub(crate) struct Doc {
    pub name: String,
    pub namespace: String,
    pub label: String,
    pub description: String,
    pub ns: u32,
    /// `(term id, index of this doc's posting in that term's list)`, sorted by term id so a
    /// moved posting can be found by binary search.
    terms: Vec<(u32, u32)>,
}

#[derive(Clone, Debug)]
pub(crate) struct Namespace {
    pub key: String,
    /// Live tools in this namespace.
    pub docs: u32,
    /// Pseudo-document length: sum of its `NsPosting::tf`.
    pub len: u64,
    /// term id → index of this namespace's entry in `ns_postings[term]`.
    terms: HashMap<u32, u32>,
}

/// Term dictionary, postings and per-document data. Fields are `pub(crate)` for the scorer.
#[derive(Clone, Debug, Default)]
pub(crate) struct Store {
    pub docs: Vec<Option<Doc>>,
    free: Vec<u32>,
    pub by_name: HashMap<String, u32>,
    /// Per-slot field lengths, kept apart from `docs` so scoring reads a dense array.
    pub doc_lens: Vec<[f32; NF]>,
    /// Ordered so query words can be expanded to the indexed words they prefix.
    pub terms: BTreeMap<Box<str>, u32>,
    pub postings: Vec<Vec<Posting>>,
    pub ns_postings: Vec<Vec<NsPosting>>,
    pub field_totals: [u64; NF],
    pub live: usize,
    pub namespaces: Vec<Option<Namespace>>,
    ns_free: Vec<u32>,
    ns_by_key: HashMap<String, u32>,
    pub ns_live: usize,
    pub ns_len_total: u64,
}

/// Term frequencies of one document being indexed, before term ids are assigned.
///
/// Name and description also get phrase terms (adjacent word pairs); those do not count
/// toward field lengths, which measure words.
fn collect_terms(doc: &SearchDoc) -> (Vec<(String, [u16; NF])>, [f32; NF]) {
    let mut map: HashMap<String, [u16; NF]> = HashMap::new();
    let mut lens = [0f32; NF];
    fn bump(map: &mut HashMap<String, [u16; NF]>, f: usize, t: &str) {
        match map.get_mut(t) {
            Some(tf) => tf[f] = tf[f].saturating_add(1),
            None => {
                let mut tf = [0u16; NF];
                tf[f] = 1;
                map.insert(t.to_owned(), tf);
            }
        }
    }
    let mut add = |map: &mut HashMap<String, [u16; NF]>, field: Field, text: &str| {
        let f = field as usize;
        let phrases = matches!(field, Field::Name | Field::Desc);
        let mut prev: Option<String> = None;
        analyze_tagged(text, |t, kind| {
            lens[f] += 1.0;
            bump(map, f, t);
            if phrases && kind == TermKind::Word {
                if let Some(p) = &prev {
                    bump(map, f, &phrase_key(p, t));
                }
                prev = Some(t.to_owned());
            }
        });
    };
    add(&mut map, Field::Name, doc.name);
    add(&mut map, Field::Label, doc.namespace_label);
    add(&mut map, Field::Desc, doc.description);
    for (pname, pdesc) in doc.params {
        add(&mut map, Field::ParamName, pname);
        add(&mut map, Field::ParamDesc, pdesc);
    }
    let key = exact_key(doc.name);
    if key.len() > 1 {
        lens[Field::Exact as usize] = 1.0;
        map.entry(key).or_insert([0; NF])[Field::Exact as usize] = 1;
    }
    (map.into_iter().collect(), lens)
}

impl Store {
    pub fn term_id(&self, term: &str) -> Option<u32> {
        self.terms.get(term).copied()
    }

    /// Live terms that start with `prefix` (excluding `prefix` itself), in order.
    pub fn terms_with_prefix<'a>(&'a self, prefix: &'a str) -> impl Iterator<Item = (&'a str, u32)> + 'a {
        use std::ops::Bound;
        self.terms
            .range::<str, _>((Bound::Excluded(prefix), Bound::Unbounded))
            .take_while(move |(k, _)| k.starts_with(prefix))
            .filter(|&(_, &id)| !self.postings[id as usize].is_empty())
            .map(|(k, &id)| (&**k, id))
    }

    fn intern(&mut self, term: String) -> u32 {
        if let Some(&id) = self.terms.get(term.as_str()) {
            return id;
        }
        let id = self.postings.len() as u32;
        self.terms.insert(term.into_boxed_str(), id);
        self.postings.push(Vec::new());
        self.ns_postings.push(Vec::new());
        id
    }

    fn namespace_slot(&mut self, key: &str) -> u32 {
        if let Some(&id) = self.ns_by_key.get(key) {
            return id;
        }
        let ns = Namespace {
            key: key.to_owned(),
            docs: 0,
            len: 0,
            terms: HashMap::new(),
        };
        let id = match self.ns_free.pop() {
            Some(id) => {
                self.namespaces[id as usize] = Some(ns);
                id
            }
            None => {
                self.namespaces.push(Some(ns));
                (self.namespaces.len() - 1) as u32
            }
        };
        self.ns_by_key.insert(key.to_owned(), id);
        self.ns_live += 1;
        id
    }

    pub fn upsert(&mut self, doc: &SearchDoc) {
        self.remove(doc.name);
        let (terms, lens) = collect_terms(doc);
        let slot = match self.free.pop() {
            Some(s) => s,
            None => {
                self.docs.push(None);
                self.doc_lens.push([0.0; NF]);
                (self.docs.len() - 1) as u32
            }
        };
        let ns = self.namespace_slot(doc.namespace);
        let mut doc_terms = Vec::with_capacity(terms.len());
        for (term, tf) in terms {
            // Phrase terms would double-count their words in the namespace pool.
            let pooled = !term.starts_with(PHRASE_MARK)
                && POOLED.iter().zip(tf).any(|(&p, n)| p && n > 0);
            let tid = self.intern(term);
            let list = &mut self.postings[tid as usize];
            doc_terms.push((tid, list.len() as u32));
            list.push(Posting { doc: slot, tf });
            if pooled {
                self.pool_add(ns, tid);
            }
        }
        doc_terms.sort_unstable_by_key(|&(t, _)| t);
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
            terms: doc_terms,
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
        for &(tid, pos) in &doc.terms {
            let list = &mut self.postings[tid as usize];
            let removed = list.swap_remove(pos as usize);
            if let Some(moved) = list.get(pos as usize) {
                let moved_doc = moved.doc as usize;
                if let Some(d) = self.docs[moved_doc].as_mut()
                    && let Ok(i) = d.terms.binary_search_by_key(&tid, |&(t, _)| t)
                {
                    d.terms[i].1 = pos;
                }
            }
            // `pool_remove` ignores terms the namespace never pooled (phrases).
            if POOLED.iter().zip(removed.tf).any(|(&p, n)| p && n > 0) {
                self.pool_remove(doc.ns, tid);
            }
        }
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
        match n.terms.get(&tid) {
            Some(&pos) => list[pos as usize].tf += 1,
            None => {
                n.terms.insert(tid, list.len() as u32);
                list.push(NsPosting { ns, tf: 1 });
            }
        }
        n.len += 1;
        self.ns_len_total += 1;
    }

    fn pool_remove(&mut self, ns: u32, tid: u32) {
        let Some(n) = self.namespaces[ns as usize].as_mut() else {
            return;
        };
        let Some(&pos) = n.terms.get(&tid) else {
            return;
        };
        n.len -= 1;
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
            for &(tid, pos) in &doc.terms {
                assert_eq!(self.postings[tid as usize][pos as usize].doc, slot);
            }
            for (t, l) in totals.iter_mut().zip(self.doc_lens[slot as usize]) {
                *t += l as u64;
            }
            assert_eq!(self.by_name.get(&doc.name), Some(&slot));
        }
        assert_eq!(live, self.live);
        assert_eq!(totals, self.field_totals);
        let posting_count: usize = self.postings.iter().map(Vec::len).sum();
        let doc_term_count: usize = self.live_docs().map(|(_, d)| d.terms.len()).sum();
        assert_eq!(posting_count, doc_term_count);
        let mut ns_len = 0u64;
        for (tid, list) in self.ns_postings.iter().enumerate() {
            for (pos, p) in list.iter().enumerate() {
                let n = self.namespaces[p.ns as usize].as_ref().expect("live namespace");
                assert_eq!(n.terms.get(&(tid as u32)), Some(&(pos as u32)));
                ns_len += p.tf as u64;
            }
        }
        assert_eq!(ns_len, self.ns_len_total);
    }
}
