//! Embeddings for hybrid search without a host embedding model: the built-in static table
//! (this file) and the optional local neural model (`bert`: a BERT encoder run in Rust, with
//! the tokenizers `wordpiece` and `sentencepiece` and the low-bit weights of `quant`;
//! `cache`: its vectors on disk, `local`: the two together).
//!
//! Built-in static embeddings:
//! One vector per WordPiece token, distilled from all-MiniLM-L6-v2 and fitted on public MCP
//! tool texts (`scripts/build_static_embeddings.py`, `assets/static-embeddings/README.md`). A
//! text's vector is the weighted sum of its tokens' vectors: a few dozen table rows, so
//! embedding a tool or a query takes microseconds, with no model, thread pool or network at
//! run time. It is weaker than the model it was distilled from and is measured as such
//! (README, "Hybrid search quality").

pub mod bert;
pub mod cache;
mod kernels;
pub mod local;
mod q8;
mod quant;
mod safetensors;
mod sentencepiece;
mod wordpiece;

use std::path::Path;
use std::sync::OnceLock;

pub use wordpiece::WordPiece;

/// Where the table is in the source tree: Rust tests, examples and benchmarks load it from
/// there. The addon is given it by the JS layer instead ([`StaticEmbeddings::install_builtin`]):
/// the files ship once in the main package, not inside every platform's addon.
const SOURCE_ASSETS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/assets/static-embeddings");

static BUILTIN: OnceLock<StaticEmbeddings> = OnceLock::new();

/// The token table: `dim` 4-bit values per token (two per byte: even column in the low nibble),
/// each row with its scale, and a per-token weight (0 for stopwords, punctuation and special
/// tokens). 4 bits halve the table against int8 at no measurable retrieval cost (assets README).
pub struct StaticEmbeddings {
    tokenizer: WordPiece,
    dim: usize,
    table: Vec<u8>,
    scales: Vec<f32>,
    weights: Vec<f32>,
}

impl StaticEmbeddings {
    /// The table shipped with the package: the one installed by the host, else the source
    /// tree's, read on first use.
    pub fn builtin() -> &'static StaticEmbeddings {
        BUILTIN.get_or_init(|| {
            StaticEmbeddings::from_dir(Path::new(SOURCE_ASSETS))
                .expect("the static embedding table of the source tree is readable and consistent")
        })
    }

    /// Makes these files the built-in table (the first install wins). Errs, naming what is
    /// wrong, when they do not form a table.
    pub fn install_builtin(
        vocab: &str,
        table: Vec<u8>,
        scales: &[u8],
        weights: &[u8],
    ) -> Result<(), String> {
        if BUILTIN.get().is_none() {
            let table = StaticEmbeddings::from_parts(vocab, table, scales, weights).ok_or(
                "the static embedding files do not agree in size (vocab.txt, table.q4, \
                 scales.f32, weights.f32)",
            )?;
            let _ = BUILTIN.set(table);
        }
        Ok(())
    }

    /// From the four asset files in `dir`.
    pub fn from_dir(dir: &Path) -> Result<Self, String> {
        let read = |name: &str| {
            std::fs::read(dir.join(name)).map_err(|e| format!("{}: {e}", dir.join(name).display()))
        };
        let vocab = String::from_utf8(read("vocab.txt")?)
            .map_err(|_| format!("{}: not UTF-8", dir.join("vocab.txt").display()))?;
        StaticEmbeddings::from_parts(
            &vocab,
            read("table.q4")?,
            &read("scales.f32")?,
            &read("weights.f32")?,
        )
        .ok_or_else(|| format!("{}: the four files do not agree in size", dir.display()))
    }

    /// From the four asset files' contents; `None` when their sizes disagree.
    pub fn from_parts(vocab: &str, table: Vec<u8>, scales: &[u8], weights: &[u8]) -> Option<Self> {
        let tokenizer = WordPiece::from_vocab(vocab)?;
        let n = tokenizer.vocab_size();
        let scales = f32_le(scales);
        let weights = f32_le(weights);
        if n == 0 || scales.len() != n || weights.len() != n || !table.len().is_multiple_of(n) {
            return None;
        }
        Some(StaticEmbeddings {
            tokenizer,
            dim: table.len() / n * 2,
            table,
            scales,
            weights,
        })
    }

    pub fn dim(&self) -> usize {
        self.dim
    }

    /// The text's unit-length vector; `None` when no token carries weight (empty text,
    /// only stopwords or punctuation).
    pub fn embed(&self, text: &str) -> Option<Vec<f32>> {
        let mut sum = vec![0f32; self.dim];
        let mut any = false;
        for id in self.tokenizer.encode(text) {
            let id = id as usize;
            let w = self.weights[id] * self.scales[id];
            if w == 0.0 {
                continue;
            }
            any = true;
            let bytes = self.dim / 2;
            let row = &self.table[id * bytes..(id + 1) * bytes];
            for (acc, &packed) in sum.chunks_exact_mut(2).zip(row) {
                // Shifting the nibble to the top and back sign-extends it.
                acc[0] += w * f32::from(((packed << 4) as i8) >> 4);
                acc[1] += w * f32::from((packed as i8) >> 4);
            }
        }
        let norm = sum.iter().map(|x| x * x).sum::<f32>().sqrt();
        if !any || norm == 0.0 || !norm.is_finite() {
            return None;
        }
        sum.iter_mut().for_each(|x| *x /= norm);
        Some(sum)
    }
}

fn f32_le(bytes: &[u8]) -> Vec<f32> {
    bytes
        .chunks_exact(4)
        .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;

    fn fixture() -> Value {
        serde_json::from_str(include_str!("../../fixtures/wordpiece.json")).expect("json")
    }

    fn ids(v: &Value) -> Vec<u32> {
        v.as_array()
            .expect("ids")
            .iter()
            .map(|x| x.as_u64().expect("id") as u32)
            .collect()
    }

    #[test]
    fn tokenizer_matches_the_reference_on_every_fixture_text() {
        let table = StaticEmbeddings::builtin();
        let cases = fixture()["cases"].as_array().expect("cases").clone();
        assert!(cases.len() >= 100);
        for case in &cases {
            let text = case["text"].as_str().expect("text");
            assert_eq!(table.tokenizer.encode(text), ids(&case["ids"]), "{text:?}");
        }
    }

    #[test]
    fn vectors_match_the_reference_computation() {
        let table = StaticEmbeddings::builtin();
        assert_eq!(table.dim(), 128);
        for case in fixture()["vectors"].as_array().expect("vectors") {
            let text = case["text"].as_str().expect("text");
            let want: Vec<f32> = case["vector"]
                .as_array()
                .expect("vector")
                .iter()
                .map(|x| x.as_f64().expect("float") as f32)
                .collect();
            match table.embed(text) {
                Some(got) => {
                    for (g, w) in got.iter().zip(&want) {
                        assert!((g - w).abs() < 2e-5, "{text:?}: {g} vs {w}");
                    }
                }
                None => assert!(want.iter().all(|&w| w == 0.0), "{text:?}"),
            }
        }
    }

    #[test]
    fn related_words_are_near_and_empty_texts_have_no_vector() {
        let table = StaticEmbeddings::builtin();
        let cos = |a: &str, b: &str| {
            let (a, b) = (table.embed(a).unwrap(), table.embed(b).unwrap());
            a.iter().zip(&b).map(|(x, y)| x * y).sum::<f32>()
        };
        assert!(
            cos("bitcoin price", "cryptocurrency quotes") > cos("bitcoin price", "send an email")
        );
        assert!(table.embed("").is_none());
        assert!(table.embed("the of and ?!").is_none());
    }
}
