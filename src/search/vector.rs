//! Optional dense vectors per tool, for hybrid (lexical + embedding) search.
//!
//! The index never computes embeddings: the host's embedder does (asynchronously, in JS). This
//! module keeps, per document slot, the text that should be embedded and the vector once it
//! arrives, and a queue of slots whose vector is missing. A vector is kept across
//! re-registrations as long as the tool's embedding text is unchanged, so an MCP resync that
//! re-registers identical tools costs no embedding calls. A vector computed for an older text
//! is refused (the tool changed while it was being embedded).

use std::collections::BTreeSet;

/// The text embedded for a tool: namespace label (without the `mcp:` prefix), the name's
/// words, and the description (first 1,000 characters; small embedding models read ~256
/// tokens anyway).
pub fn embedding_text(name: &str, label: &str, description: &str) -> String {
    let label = label.strip_prefix("mcp:").unwrap_or(label);
    let mut out = String::with_capacity(label.len() + name.len() + description.len().min(1000) + 4);
    out.push_str(label);
    out.push_str(": ");
    // Identifier words in their original case: `mcp__github__createIssue` → `github create
    // Issue`; the `mcp` prefix of wire names says nothing.
    let mut prev: Option<char> = None;
    let mut first = true;
    let body = name.strip_prefix("mcp__").unwrap_or(name);
    for c in body.chars() {
        if c.is_alphanumeric() {
            let camel = prev.is_some_and(|p| p.is_lowercase() && c.is_uppercase());
            if camel || (!first && prev.is_none()) {
                out.push(' ');
            }
            out.push(c);
            first = false;
            prev = Some(c);
        } else {
            prev = None;
        }
    }
    let description = description.trim();
    if !description.is_empty() {
        out.push_str(" — ");
        match description.char_indices().nth(1000) {
            Some((cut, _)) => out.push_str(&description[..cut]),
            None => out.push_str(description),
        }
    }
    out
}

#[derive(Clone, Default)]
pub(crate) struct Vectors {
    /// Off until the host says it has an embedder: then every upsert records its text.
    pub enabled: bool,
    /// Vector length, fixed by the first vector stored (0: none yet).
    pub dim: usize,
    /// Per slot: the text to embed (empty for free slots).
    pub text: Vec<String>,
    /// Per slot `dim` floats, row after row: one allocation that a search streams through,
    /// instead of a pointer per tool (measured: the scan of 11k tools ran ~3× faster).
    data: Vec<f32>,
    /// Per slot: whether its row holds the unit-length vector of the current text.
    has: Vec<bool>,
    /// Slots whose vector is missing and that nobody is computing.
    pub pending: BTreeSet<u32>,
    /// Slots with a vector.
    pub ready: usize,
}

/// Why a vector was not stored.
#[derive(Debug, PartialEq, Eq)]
pub enum VectorRefusal {
    /// The tool's embedding text changed since the vector was requested.
    Stale,
}

impl Vectors {
    fn grow(&mut self, slot: u32) {
        let need = slot as usize + 1;
        if self.text.len() < need {
            self.text.resize(need, String::new());
            self.has.resize(need, false);
            self.data.resize(need * self.dim, 0.0);
        }
    }

    /// The slot's vector, if it has one.
    #[inline]
    pub fn row(&self, slot: usize) -> Option<&[f32]> {
        if self.has.get(slot) == Some(&true) {
            Some(&self.data[slot * self.dim..(slot + 1) * self.dim])
        } else {
            None
        }
    }

    /// Writes a unit-length vector into the slot's row; the first vector fixes `dim`.
    fn store(&mut self, slot: usize, unit: &[f32]) {
        if self.dim == 0 {
            self.dim = unit.len();
            self.data.resize(self.text.len() * self.dim, 0.0);
        }
        self.data[slot * self.dim..(slot + 1) * self.dim].copy_from_slice(unit);
        if !std::mem::replace(&mut self.has[slot], true) {
            self.ready += 1;
        }
    }

    /// The slot's old text and vector (before the tool is replaced or removed).
    pub fn take(&mut self, slot: u32) -> Option<(String, Option<Vec<f32>>)> {
        let s = slot as usize;
        if s >= self.text.len() {
            return None;
        }
        self.pending.remove(&slot);
        let v = self.row(s).map(<[f32]>::to_vec);
        if std::mem::replace(&mut self.has[s], false) {
            self.ready -= 1;
        }
        Some((std::mem::take(&mut self.text[s]), v))
    }

    /// Records a (re)registered tool's text; keeps `old`'s vector when the text is the same.
    pub fn put(&mut self, slot: u32, text: String, old: Option<(String, Option<Vec<f32>>)>) {
        self.grow(slot);
        let s = slot as usize;
        match old.and_then(|(t, v)| (t == text).then_some(v).flatten()) {
            Some(v) => self.store(s, &v),
            None => {
                self.pending.insert(slot);
            }
        }
        self.text[s] = text;
    }

    /// Computes every queued vector with a synchronous embedder (unit-length output); a text
    /// it cannot embed leaves the queue without a vector.
    pub fn fill_pending(&mut self, embed: impl Fn(&str) -> Option<Vec<f32>>) {
        while let Some(slot) = self.pending.pop_first() {
            if let Some(v) = embed(&self.text[slot as usize]) {
                self.store(slot as usize, &v);
            }
        }
    }

    /// Stores a vector computed for `text`; normalised to unit length. The caller checked
    /// its length against `dim`.
    pub fn set(&mut self, slot: u32, text: &str, vector: &[f32]) -> Result<(), VectorRefusal> {
        let s = slot as usize;
        if s >= self.text.len() || self.text[s] != text {
            return Err(VectorRefusal::Stale);
        }
        let norm = vector.iter().map(|x| x * x).sum::<f32>().sqrt();
        let unit: Vec<f32> = if norm > 0.0 && norm.is_finite() {
            vector.iter().map(|x| x / norm).collect()
        } else {
            vec![0.0; vector.len()]
        };
        self.store(s, &unit);
        self.pending.remove(&slot);
        Ok(())
    }

    /// Whether the slot exists and still waits for a vector.
    pub fn missing(&self, slot: u32) -> bool {
        self.has.get(slot as usize) == Some(&false)
    }
}

/// Dot product (both sides are unit length, so this is the cosine similarity).
#[inline]
pub(crate) fn dot(a: &[f32], b: &[f32]) -> f32 {
    // Eight independent lanes let the compiler keep two SIMD registers busy without
    // reassociation flags.
    let mut acc = [0f32; 8];
    let (a8, a_rest) = a.split_at(a.len() / 8 * 8);
    let (b8, b_rest) = b.split_at(a8.len().min(b.len()));
    for (x, y) in a8.chunks_exact(8).zip(b8.chunks_exact(8)) {
        for j in 0..8 {
            acc[j] += x[j] * y[j];
        }
    }
    let tail: f32 = a_rest.iter().zip(b_rest).map(|(x, y)| x * y).sum();
    acc.iter().sum::<f32>() + tail
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn embedding_text_reads_like_a_sentence() {
        assert_eq!(
            embedding_text("mcp__github__createIssue", "mcp:GitHub", "Open a new issue"),
            "GitHub: github create Issue — Open a new issue"
        );
        assert_eq!(embedding_text("web_search", "web", ""), "web: web search");
    }
}
