//! The incremental inverted index behind [`SearchIndex`](super::SearchIndex).
//!
//! Registries change one tool at a time (an MCP resync registers or evicts a few entries), so
//! `upsert`/`remove` touch only that tool's postings instead of rebuilding: every document
//! remembers where each of its postings sits, a removal `swap_remove`s them and patches the one
//! posting that moved. Posting lists therefore hold live documents only, document frequencies
//! are exact, and freed slots are reused. Field lengths and their totals are kept the same way,
//! so BM25 averages are always current.

use std::collections::BTreeMap;
use std::sync::Arc;

use smallvec::SmallVec;

use super::SearchDoc;
use super::bridge::LanguageBridge;
use super::hash::FastMap;
use super::tokenize::{Analyzer, TermKind, exact_key, mostly_cjk, phrase_key_into};

/// Number of indexed fields.
pub(crate) const NF: usize = 7;

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
    /// The English glosses of a Chinese description's terms, when a bilingual dictionary is
    /// installed (`bridge`): an English request finds a tool described only in Chinese. A
    /// field of its own so a dictionary's guesses weigh less than words the tool's author
    /// wrote, holding terms of their own ([`gloss_term`]).
    Gloss = 6,
}

/// One document's occurrences of one term, per field (saturating at 255: BM25 saturates long
/// before that), and where the document lists this posting (`back`), so a removal that moves
/// this posting can update the document in O(1). 16 bytes.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Posting {
    pub doc: u32,
    back: u32,
    pub tf: [u8; NF],
}

/// One term's postings. Most terms (phrases, exact names) occur in a single tool, whose
/// posting then lives inline instead of in a heap block of its own.
pub(crate) type PostingList = SmallVec<[Posting; 1]>;

#[derive(Clone)]
pub(crate) struct Doc {
    pub name: String,
    pub namespace: String,
    pub label: String,
    pub description: String,
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
    /// Per term id: scratch for [`DocBuilder`] (always 0 between upserts).
    mark: Vec<u32>,
    /// [`DocBuilder`]'s buffers, kept between documents.
    scratch: Scratch,
    tf_scratch: TermCounts,
    /// The dictionary Chinese descriptions are glossed with as they are indexed.
    pub bridge: Option<Arc<LanguageBridge>>,
    pub postings: Vec<PostingList>,
    pub field_totals: [u64; NF],
    pub live: usize,
    /// How many of the live documents are described mostly in CJK scripts (hybrid search
    /// weighs a CJK request's words apart in a mostly CJK catalog: `Tuning::cjk_dense_weight`).
    pub live_cjk: usize,
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
    fn intern(&mut self, term: &str, key: impl FnOnce() -> Arc<str>) -> (u32, bool) {
        if let Some(&id) = self.ids.get(term) {
            return (id, false);
        }
        let key = key();
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

/// Buffers one document's analysis needs; a registry indexes thousands of tools in a row,
/// and allocating these per tool was a measurable part of it.
#[derive(Clone, Default)]
struct Scratch {
    analyzer: Analyzer,
    phrase: String,
    prev: String,
}

/// One document's distinct terms with their per-field counts.
type TermCounts = Vec<(u32, [u8; NF])>;

/// Where an analysed document's terms get their ids: the index itself (one tool at a time), or
/// a worker's private dictionary during a bulk build ([`Store::upsert_many`]).
trait TermIds {
    fn id(&mut self, term: &str) -> u32;
    /// Scratch slot of term `id`, 0 between documents (see [`DocBuilder::tf`]).
    fn mark(&mut self, id: u32) -> &mut u32;
}

impl TermIds for Store {
    fn id(&mut self, term: &str) -> u32 {
        self.intern(term)
    }

    fn mark(&mut self, id: u32) -> &mut u32 {
        &mut self.mark[id as usize]
    }
}

/// A bulk-build worker's dictionary. Ids follow first occurrence, so mapping them to the
/// index's ids in order interns terms in the order a one-by-one build would.
/// Its strings are allocated as the index will keep them, so the merge only counts references.
#[derive(Default)]
struct LocalTerms {
    ids: FastMap<Arc<str>, u32>,
    terms: Vec<Arc<str>>,
    mark: Vec<u32>,
}

impl TermIds for LocalTerms {
    fn id(&mut self, term: &str) -> u32 {
        if let Some(&id) = self.ids.get(term) {
            return id;
        }
        let id = self.terms.len() as u32;
        let key: Arc<str> = term.into();
        self.terms.push(key.clone());
        self.ids.insert(key, id);
        self.mark.push(0);
        id
    }

    fn mark(&mut self, id: u32) -> &mut u32 {
        &mut self.mark[id as usize]
    }
}

/// One bulk-build chunk, analysed against its own dictionary: every document's term counts
/// back to back in `tf`, with its range and field lengths in `docs`.
struct AnalysedChunk {
    terms: LocalTerms,
    tf: TermCounts,
    docs: Vec<(std::ops::Range<usize>, [f32; NF])>,
}

/// Below this many tools per thread, a bulk build stays on the calling thread.
const MIN_TOOLS_PER_THREAD: usize = 1024;

/// Builds one document's term frequencies, interning terms as they are met so no string is
/// allocated for a term the dictionary already knows.
///
/// Name and description also get phrase terms (adjacent word pairs); those and surface terms
/// do not count toward field lengths, which measure words.
struct DocBuilder<'s, I> {
    ids: &'s mut I,
    /// Distinct terms of this document with their per-field counts, appended to whatever the
    /// buffer already holds; `ids.mark(tid)` is the index of `tid`'s entry plus one while the
    /// document is being built (0: not seen yet).
    tf: &'s mut TermCounts,
    lens: [f32; NF],
    scratch: &'s mut Scratch,
}

impl<I: TermIds> DocBuilder<'_, I> {
    fn bump(&mut self, f: usize, term: &str) {
        let id = self.ids.id(term);
        let mark = self.ids.mark(id);
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
        self.scratch.prev.clear();
        let mut analyzer = std::mem::take(&mut self.scratch.analyzer);
        analyzer.run(text, |t, kind| {
            self.bump(f, t);
            if kind == TermKind::Surface {
                return;
            }
            self.lens[f] += 1.0;
            if phrases > 0 && kind == TermKind::Word {
                phrases -= 1;
                if !self.scratch.prev.is_empty() {
                    let mut key = std::mem::take(&mut self.scratch.phrase);
                    key.clear();
                    phrase_key_into(&self.scratch.prev, t, &mut key);
                    self.bump(f, &key);
                    self.scratch.phrase = key;
                }
                self.scratch.prev.clear();
                self.scratch.prev.push_str(t);
            }
        });
        self.scratch.analyzer = analyzer;
    }
}

impl<I: TermIds> DocBuilder<'_, I> {
    /// The gloss field: words only (no phrases: two glosses side by side are two senses of one
    /// term as often as two terms), each as its gloss term.
    fn add_glosses(&mut self, glosses: &str) {
        let f = Field::Gloss as usize;
        let mut analyzer = std::mem::take(&mut self.scratch.analyzer);
        let mut key = std::mem::take(&mut self.scratch.phrase);
        analyzer.run(glosses, |t, kind| {
            if kind == TermKind::Word {
                key.clear();
                gloss_term(t, &mut key);
                self.bump(f, &key);
                self.lens[f] += 1.0;
            }
        });
        self.scratch.phrase = key;
        self.scratch.analyzer = analyzer;
    }
}

/// Appends `doc`'s term counts to `tf` and returns its field lengths.
fn analyse<I: TermIds>(
    ids: &mut I,
    scratch: &mut Scratch,
    tf: &mut TermCounts,
    doc: &SearchDoc,
    bridge: Option<&LanguageBridge>,
) -> [f32; NF] {
    let start = tf.len();
    let mut b = DocBuilder {
        ids,
        tf,
        lens: [0.0; NF],
        scratch,
    };
    b.add(Field::Name, doc.name);
    b.add(Field::Label, doc.namespace_label);
    b.add(Field::Desc, doc.description);
    if let Some(bridge) = bridge.filter(|_| needs_glosses(doc.description)) {
        b.add_glosses(&bridge.glosses(doc.description));
    }
    for (pname, pdesc) in doc.params {
        b.add(Field::ParamName, pname);
        b.add(Field::ParamDesc, pdesc);
    }
    let key = exact_key(doc.name);
    if key.len() > 1 {
        b.lens[Field::Exact as usize] = 1.0;
        b.bump(Field::Exact as usize, &key);
    }
    let lens = b.lens;
    for &(tid, _) in &tf[start..] {
        *ids.mark(tid) = 0;
    }
    lens
}

/// Marks a gloss term. Glosses are indexed as terms apart from the words tools' authors wrote
/// (`\u{1}news`, not `news`), so they change no other term's document frequency: an English
/// catalog, a Chinese request and every typed word's rarity rank exactly as without a
/// dictionary, and only a typed word's match in a gloss (its twin term, `query.rs`) is new.
/// Not alphanumeric, so prefix expansion never reaches a gloss.
const GLOSS_MARK: char = '\u{1}';

/// The gloss term of an analysed word, appended to `out`.
pub(crate) fn gloss_term(word: &str, out: &mut String) {
    out.push(GLOSS_MARK);
    out.push_str(word);
}

/// Whether a description has Chinese text a dictionary could gloss (most catalogs have none,
/// and skip the segmenter).
pub(crate) fn needs_glosses(description: &str) -> bool {
    description.chars().any(super::tokenize::is_cjk)
}

fn analyse_chunk(docs: Vec<&SearchDoc>, bridge: Option<&LanguageBridge>) -> AnalysedChunk {
    // Sized from real MCP catalogs (about 32 distinct terms per tool, 11 of them new to a
    // chunk of a few thousand tools) so the buffers are not regrown along the way.
    let mut terms = LocalTerms {
        ids: FastMap::with_capacity_and_hasher(docs.len() * 12, Default::default()),
        ..Default::default()
    };
    let mut scratch = Scratch::default();
    let mut tf = TermCounts::with_capacity(docs.len() * 32);
    let docs = docs
        .into_iter()
        .map(|doc| {
            let start = tf.len();
            let lens = analyse(&mut terms, &mut scratch, &mut tf, doc, bridge);
            (start..tf.len(), lens)
        })
        .collect();
    AnalysedChunk { terms, tf, docs }
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
        self.intern_with(term, || term.into())
    }

    /// [`Self::intern`] with the key's shared string at hand (no copy when the term is new).
    fn intern_with(&mut self, term: &str, key: impl FnOnce() -> Arc<str>) -> u32 {
        let (id, new) = self.terms.intern(term, key);
        // A released id's list is empty already.
        if new && id as usize == self.postings.len() {
            self.postings.push(PostingList::new());
            self.mark.push(0);
        }
        id
    }

    pub fn upsert(&mut self, doc: &SearchDoc) {
        self.remove(doc.name);
        let mut scratch = std::mem::take(&mut self.scratch);
        let mut tf = std::mem::take(&mut self.tf_scratch);
        let bridge = self.bridge.clone();
        let lens = analyse(self, &mut scratch, &mut tf, doc, bridge.as_deref());
        self.insert_analysed(doc, &tf, lens);
        tf.clear();
        self.scratch = scratch;
        self.tf_scratch = tf;
    }

    /// [`Self::upsert`] of many documents, with the analysis (most of the work) spread over
    /// the cores; the result is the same as upserting them in order.
    pub fn upsert_many(&mut self, docs: &[SearchDoc]) {
        // The last of several documents with one name wins, as in order. All removals happen
        // before the merge: a removal can release a term id a worker's terms were mapped to.
        let mut last: FastMap<&str, usize> = FastMap::default();
        for (i, doc) in docs.iter().enumerate() {
            last.insert(doc.name, i);
        }
        let docs: Vec<&SearchDoc> = docs
            .iter()
            .enumerate()
            .filter(|&(i, doc)| last[doc.name] == i)
            .map(|(_, doc)| doc)
            .collect();
        for doc in &docs {
            self.remove(doc.name);
        }
        let bridge = self.bridge.clone();
        let chunks = crate::parallel::map_chunks(docs.clone(), MIN_TOOLS_PER_THREAD, |chunk| {
            analyse_chunk(chunk, bridge.as_deref())
        });
        let new_terms: usize = chunks.iter().map(|c| c.terms.terms.len()).sum();
        self.terms.ids.reserve(new_terms);
        let mut docs = docs.into_iter();
        for mut chunk in chunks {
            let ids: Vec<u32> = (chunk.terms.terms.iter())
                .map(|t| self.intern_with(t, || t.clone()))
                .collect();
            for (tid, _) in &mut chunk.tf {
                *tid = ids[*tid as usize];
            }
            for (range, lens) in chunk.docs {
                let doc = docs.next().expect("one analysis per document");
                self.insert_analysed(doc, &chunk.tf[range], lens);
            }
        }
    }

    /// Adds an analysed document (its name is free) with `terms` as index term ids.
    fn insert_analysed(&mut self, doc: &SearchDoc, terms: &[(u32, [u8; NF])], lens: [f32; NF]) {
        let slot = match self.free.pop() {
            Some(s) => s,
            None => {
                self.docs.push(None);
                self.doc_lens.push([0.0; NF]);
                self.doc_terms.push(Vec::new());
                (self.docs.len() - 1) as u32
            }
        };
        let mut doc_terms = std::mem::take(&mut self.doc_terms[slot as usize]);
        doc_terms.clear();
        doc_terms.reserve(terms.len());
        for &(tid, tf) in terms {
            let list = &mut self.postings[tid as usize];
            let back = doc_terms.len() as u32;
            doc_terms.push((tid, list.len() as u32));
            list.push(Posting {
                doc: slot,
                back,
                tf,
            });
        }
        self.doc_terms[slot as usize] = doc_terms;
        for (total, &l) in self.field_totals.iter_mut().zip(&lens) {
            *total += l as u64;
        }
        self.doc_lens[slot as usize] = lens;
        self.docs[slot as usize] = Some(Doc {
            name: doc.name.to_owned(),
            namespace: doc.namespace.to_owned(),
            label: doc.namespace_label.to_owned(),
            description: doc.description.to_owned(),
        });
        self.by_name.insert(doc.name.to_owned(), slot);
        self.live += 1;
        self.live_cjk += usize::from(mostly_cjk(doc.description));
    }

    pub fn remove(&mut self, name: &str) -> bool {
        let Some(slot) = self.by_name.remove(name) else {
            return false;
        };
        let Some(removed) = self.docs[slot as usize].take() else {
            return false;
        };
        let doc_terms = std::mem::take(&mut self.doc_terms[slot as usize]);
        for &(tid, pos) in &doc_terms {
            let list = &mut self.postings[tid as usize];
            list.swap_remove(pos as usize);
            if let Some(moved) = list.get(pos as usize) {
                self.doc_terms[moved.doc as usize][moved.back as usize].1 = pos;
            }
            if self.postings[tid as usize].is_empty() {
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
        self.free.push(slot);
        self.live -= 1;
        self.live_cjk -= usize::from(mostly_cjk(&removed.description));
        true
    }

    /// Live documents, in slot order.
    pub fn live_docs(&self) -> impl Iterator<Item = (u32, &Doc)> {
        self.docs
            .iter()
            .enumerate()
            .filter_map(|(i, d)| d.as_ref().map(|d| (i as u32, d)))
    }

    /// Checks every bookkeeping invariant (tests only): postings point back at their docs,
    /// lengths add up.
    #[cfg(test)]
    pub fn check_invariants(&self) {
        let mut totals = [0u64; NF];
        let (mut live, mut live_cjk) = (0, 0);
        for (slot, doc) in self.live_docs() {
            live += 1;
            live_cjk += usize::from(mostly_cjk(&doc.description));
            for (back, &(tid, pos)) in self.doc_terms[slot as usize].iter().enumerate() {
                let p = self.postings[tid as usize][pos as usize];
                assert_eq!((p.doc, p.back), (slot, back as u32));
            }
            for (t, l) in totals.iter_mut().zip(self.doc_lens[slot as usize]) {
                *t += l as u64;
            }
            assert_eq!(self.by_name.get(&doc.name), Some(&slot));
        }
        assert_eq!((live, live_cjk), (self.live, self.live_cjk));
        assert_eq!(totals, self.field_totals);
        // Every dictionary term is used, every used id is in the dictionary.
        for (term, id) in self.terms.iter() {
            assert!(!self.postings[id as usize].is_empty(), "dead term {term:?}");
        }
        let used = self.postings.iter().filter(|l| !l.is_empty()).count();
        assert_eq!(used, self.terms.len());
        let posting_count: usize = self.postings.iter().map(|l| l.len()).sum();
        let doc_term_count: usize = self.doc_terms.iter().map(Vec::len).sum();
        assert_eq!(posting_count, doc_term_count);
        assert!(self.mark.iter().all(|&m| m == 0));
    }
}
