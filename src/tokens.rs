//! Exact token counts for the encodings OpenAI-compatible providers bill by.
//!
//! A text is cut into pieces the way tiktoken's pre-tokenization regex cuts it
//! (`pretokenize`, a scanner of ours), and each piece is counted by the `bpe` crate's
//! backtracking encoder, which yields the same tokens as tiktoken's merges while running faster
//! than tiktoken-rs; the tests compare token ids with tiktoken-rs on real tool definitions and
//! on thousands of random texts.
//!
//! The encoder's tables are built in memory from OpenAI's rank files (shipped in the addon as
//! raw tokens, 1.5 MB gzipped) on first use of an encoding, instead of being linked in prebuilt:
//! the prebuilt tables of the two encodings were 54 MB of the addon's 68 MB. Building costs one to two
//! seconds of one core per encoding, so the built tables are cached on disk (`cache`), and
//! `warm_up` reads or builds the default encoding's off the JS thread when the addon loads.

mod cache;
mod pretokenize;

pub use cache::set_dir as set_cache_dir;

use std::io::Read;
use std::str::FromStr;
use std::sync::LazyLock;
use std::thread;

use bpe::byte_pair_encoding::BytePairEncoding;

use crate::error::ToolregError;
use pretokenize::Pattern;

/// The BPE vocabularies a tool definition can be priced in.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Encoding {
    /// GPT-4o, GPT-4.1, o-series and GPT-5 models.
    #[default]
    O200kBase,
    /// GPT-4, GPT-3.5 and most OpenAI-compatible open models' estimates.
    Cl100kBase,
}

impl Encoding {
    pub const ALL: [Encoding; 2] = [Encoding::O200kBase, Encoding::Cl100kBase];

    pub fn as_str(self) -> &'static str {
        match self {
            Encoding::O200kBase => "o200k_base",
            Encoding::Cl100kBase => "cl100k_base",
        }
    }

    fn encoder(self) -> &'static Encoder {
        match self {
            Encoding::O200kBase => &O200K_BASE,
            Encoding::Cl100kBase => &CL100K_BASE,
        }
    }
}

/// The hash factor `bpe` needs to index a vocabulary without collisions; this one is known to
/// be collision-free for both vocabularies (the one bpe-openai, by the same authors, built them with).
const HASH_FACTOR: u64 = 17_846_336_922_010_275_747;

/// One encoding: its vocabulary and the pattern its texts are cut by before encoding.
struct Encoder {
    bpe: BytePairEncoding,
    pattern: Pattern,
}

impl Encoder {
    fn count(&self, text: &str) -> usize {
        pretokenize::pieces(text, self.pattern)
            .map(|piece| self.bpe.count(piece))
            .sum()
    }
}

static CL100K_BASE: LazyLock<Encoder> = LazyLock::new(|| Encoder {
    bpe: load_bpe(
        Encoding::Cl100kBase,
        include_bytes!("../assets/tiktoken/cl100k_base.ranks.gz"),
    ),
    pattern: Pattern::Cl100k,
});
static O200K_BASE: LazyLock<Encoder> = LazyLock::new(|| Encoder {
    bpe: load_bpe(
        Encoding::O200kBase,
        include_bytes!("../assets/tiktoken/o200k_base.ranks.gz"),
    ),
    pattern: Pattern::O200k,
});

/// The encoding's tables, from the disk cache when one is set and holds them.
fn load_bpe(encoding: Encoding, packed_ranks_gz: &[u8]) -> BytePairEncoding {
    cache::load_or_build(encoding.as_str(), packed_ranks_gz, || {
        build_bpe(packed_ranks_gz)
    })
}

/// An encoder from a packed rank file (`scripts/pack-tiktoken-ranks.mjs`: per rank, a length
/// byte and the token's bytes, gzipped). The files are OpenAI's, checked against their published
/// SHA-256 in the tests; a failure here is a corrupt build, not bad input.
fn build_bpe(packed_ranks_gz: &[u8]) -> BytePairEncoding {
    BytePairEncoding::from_dictionary(unpack_ranks(packed_ranks_gz), Some(HASH_FACTOR))
}

/// The tokens of a packed rank file, in rank order.
fn unpack_ranks(packed_ranks_gz: &[u8]) -> Vec<Vec<u8>> {
    let mut packed = Vec::new();
    flate2::read::GzDecoder::new(packed_ranks_gz)
        .read_to_end(&mut packed)
        .expect("the shipped rank file is valid gzip");
    let mut tokens = Vec::with_capacity(packed.len() / 7);
    let mut rest = &packed[..];
    while let Some((&len, tail)) = rest.split_first() {
        let (token, tail) = tail
            .split_at_checked(usize::from(len))
            .expect("the shipped rank file ends inside a token");
        tokens.push(token.to_vec());
        rest = tail;
    }
    tokens
}

impl FromStr for Encoding {
    type Err = ToolregError;

    fn from_str(name: &str) -> Result<Self, Self::Err> {
        Encoding::ALL
            .into_iter()
            .find(|e| e.as_str() == name)
            .ok_or_else(|| ToolregError::InvalidArgument {
                field: "encoding".into(),
                reason: format!(
                    "unknown encoding {name:?}; expected \"o200k_base\" or \"cl100k_base\""
                ),
            })
    }
}

/// Number of tokens `text` encodes to, without special-token handling (tool definitions are
/// plain text, and a literal `<|endoftext|>` in a description is billed as ordinary text).
pub fn count(text: &str, encoding: Encoding) -> usize {
    encoding.encoder().count(text)
}

/// Counts many texts on all cores. Results keep the input order.
///
/// Work is split by bytes rather than by item count so that one huge schema does not leave
/// the other threads idle.
pub fn count_many<S: AsRef<str> + Sync>(texts: &[S], encoding: Encoding) -> Vec<usize> {
    // Builds the encoder even for an empty batch: an async count is the way to warm an
    // encoding off the JS thread.
    let encoder = encoding.encoder();
    let total_bytes: usize = texts.iter().map(|t| t.as_ref().len()).sum();
    let workers = thread::available_parallelism().map_or(1, |n| n.get());
    // Below this, thread start-up costs more than it saves.
    const PARALLEL_MIN_BYTES: usize = 64 * 1024;
    if workers == 1 || total_bytes < PARALLEL_MIN_BYTES {
        return texts.iter().map(|t| encoder.count(t.as_ref())).collect();
    }
    let chunks = split_by_bytes(texts, workers);
    let mut out = vec![0; texts.len()];
    thread::scope(|scope| {
        let mut rest = out.as_mut_slice();
        let mut start = 0;
        for end in chunks {
            let (mine, tail) = rest.split_at_mut(end - start);
            rest = tail;
            let slice = &texts[start..end];
            scope.spawn(move || {
                for (slot, text) in mine.iter_mut().zip(slice) {
                    *slot = encoder.count(text.as_ref());
                }
            });
            start = end;
        }
    });
    out
}

/// Ends of `parts` contiguous ranges holding roughly equal numbers of bytes.
fn split_by_bytes<S: AsRef<str>>(texts: &[S], parts: usize) -> Vec<usize> {
    let total: usize = texts.iter().map(|t| t.as_ref().len()).sum();
    let per_part = total.div_ceil(parts).max(1);
    let mut ends = Vec::with_capacity(parts);
    let mut acc = 0;
    for (i, text) in texts.iter().enumerate() {
        acc += text.as_ref().len();
        if acc >= per_part * (ends.len() + 1) && ends.len() + 1 < parts {
            ends.push(i + 1);
        }
    }
    ends.push(texts.len());
    ends.dedup();
    ends
}

/// Builds the default encoding's tables so the first count on the JS thread does not pay for
/// them; the other encoding is built on its first use.
pub fn warm_up() {
    count("warm", Encoding::default());
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tiktoken(text: &str, encoding: Encoding) -> usize {
        let bpe = match encoding {
            Encoding::O200kBase => tiktoken_rs::o200k_base_singleton(),
            Encoding::Cl100kBase => tiktoken_rs::cl100k_base_singleton(),
        };
        bpe.encode_ordinary(text).len()
    }

    const SAMPLES: &[&str] = &[
        "",
        "hello world",
        "Hello, World!  \n\n  trailing spaces   ",
        "{\"name\":\"github_create_issue\",\"description\":\"Create a new issue in a GitHub repository\",\"input_schema\":{\"type\":\"object\",\"properties\":{\"owner\":{\"type\":\"string\"}},\"required\":[\"owner\"]}}",
        "北京天气怎么样？请查询今天的天气预报。",
        "Café-Überweisung naïve façade — “quotes” and emoji 🚀🔥👩‍👩‍👧",
        "I'm sure they've said it's what we'd DONE, isn't it? THEY'LL see.",
        "12345678901234567890 3.14159 0x1F 1e-10",
        "\t\tindented\r\n\r\nwindows\rlines",
        "<|endoftext|> is plain text here",
        "path/to/file.rs:10:5 https://example.com/a?b=c&d=e#frag",
    ];

    #[test]
    fn counts_equal_tiktoken_on_varied_text() {
        for encoding in Encoding::ALL {
            for text in SAMPLES {
                assert_eq!(
                    count(text, encoding),
                    tiktoken(text, encoding),
                    "{encoding:?} {text:?}"
                );
            }
        }
    }

    #[test]
    fn counts_equal_tiktoken_on_pathological_runs() {
        let runs = [
            "a".repeat(20_000),
            "_".repeat(10_000),
            " ".repeat(5_000),
            "ab1 ".repeat(3_000),
        ];
        for encoding in Encoding::ALL {
            for text in &runs {
                assert_eq!(
                    count(text, encoding),
                    tiktoken(text, encoding),
                    "{encoding:?}"
                );
            }
        }
    }

    /// Token ids the way `count` counts them: our pieces, each encoded by `bpe`.
    fn our_ids(text: &str, encoding: Encoding) -> Vec<u32> {
        let encoder = encoding.encoder();
        pretokenize::pieces(text, encoder.pattern)
            .flat_map(|piece| encoder.bpe.encode_via_backtracking(piece))
            .collect()
    }

    fn tiktoken_ids(text: &str, encoding: Encoding) -> Vec<u32> {
        let bpe = match encoding {
            Encoding::O200kBase => tiktoken_rs::o200k_base_singleton(),
            Encoding::Cl100kBase => tiktoken_rs::cl100k_base_singleton(),
        };
        bpe.encode_ordinary(text)
    }

    /// Random texts from a fixed seed (splitmix64), the same on every run: short runs of the
    /// characters tiktoken's patterns treat differently (letters of every case class, marks,
    /// numbers, symbols, apostrophes before contraction letters, every kind of whitespace and
    /// line break), plus now and then any code point at all.
    struct RandomTexts(u64);

    impl RandomTexts {
        const ASCII: &str =
            "abcxyzABCXYZsStTmMdDrReEvVlL0123456789'\"{}[]:,./\\-_!?@#$%^&*()<>=+|~`";
        const SPACES: [&str; 15] = [
            " ", "\t", "\n", "\r", "\r\n", "\u{b}", "\u{c}", "\u{85}", "\u{a0}", "\u{1680}",
            "\u{2003}", "\u{2028}", "\u{2029}", "\u{202f}", "\u{3000}",
        ];
        const UNICODE: &str = "éÉǅʰー中あאßΩωİıſ\u{212a}\u{301}\u{308}\u{e31}\u{903}\u{20dd}\u{fe0f}٣Ⅻ½²𝟙🚀\u{200d}\u{ad}€—“”…";

        fn next_u64(&mut self) -> u64 {
            self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = self.0;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            z ^ (z >> 31)
        }

        fn below(&mut self, n: usize) -> usize {
            (self.next_u64() % n as u64) as usize
        }

        fn char_of(&mut self, pool: &str) -> char {
            let chars: Vec<char> = pool.chars().collect();
            chars[self.below(chars.len())]
        }

        fn any_char(&mut self) -> char {
            loop {
                let limit = if self.below(2) == 0 {
                    0x1_0000
                } else {
                    0x11_0000
                };
                if let Some(ch) = char::from_u32(self.below(limit) as u32) {
                    return ch;
                }
            }
        }

        fn text(&mut self) -> String {
            let mut text = String::new();
            for _ in 0..self.below(40) {
                let unit = match self.below(10) {
                    0..=3 => self.char_of(Self::ASCII).to_string(),
                    4 | 5 => Self::SPACES[self.below(Self::SPACES.len())].to_string(),
                    6 | 7 => self.char_of(Self::UNICODE).to_string(),
                    8 => format!("'{}", self.char_of("sStTmMdDrReEvVlLſ")),
                    _ => self.any_char().to_string(),
                };
                let repeats = if self.below(4) == 0 {
                    1 + self.below(5)
                } else {
                    1
                };
                text.push_str(&unit.repeat(repeats));
            }
            text
        }
    }

    #[test]
    fn pieces_and_token_ids_equal_tiktoken_on_random_text() {
        // Any fixed seed does (this one is "toolreg" in ASCII); 6,000 comparisons take ~2 s.
        let mut texts = RandomTexts(0x0074_6f6f_6c72_6567);
        for _ in 0..3_000 {
            let text = texts.text();
            for encoding in Encoding::ALL {
                let pattern = encoding.encoder().pattern;
                assert_eq!(
                    pretokenize::tests::scanned_pieces(&text, pattern),
                    pretokenize::tests::reference_pieces(&text, pattern),
                    "{encoding:?} {text:?}"
                );
                let ids = our_ids(&text, encoding);
                assert_eq!(ids, tiktoken_ids(&text, encoding), "{encoding:?} {text:?}");
                assert_eq!(count(&text, encoding), ids.len(), "{encoding:?} {text:?}");
            }
        }
    }

    /// Real tool definitions as providers receive them, from the committed MCP captures.
    fn fixture_definitions() -> Vec<String> {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures");
        let mut out = Vec::new();
        for file in ["everything", "filesystem", "memory", "github"] {
            let text = std::fs::read_to_string(format!("{dir}/{file}.tools_list.json")).unwrap();
            let capture: serde_json::Value = serde_json::from_str(&text).unwrap();
            for tool in capture["tools"].as_array().unwrap() {
                out.push(
                    serde_json::json!({
                        "name": tool["name"],
                        "description": tool["description"],
                        "input_schema": tool["inputSchema"],
                    })
                    .to_string(),
                );
            }
        }
        out
    }

    #[test]
    fn counts_equal_tiktoken_on_real_tool_definitions() {
        let definitions = fixture_definitions();
        assert_eq!(definitions.len(), 62);
        for encoding in Encoding::ALL {
            let many = count_many(&definitions, encoding);
            for (text, counted) in definitions.iter().zip(many) {
                assert_eq!(counted, tiktoken(text, encoding), "{encoding:?} {text}");
            }
        }
    }

    #[test]
    fn encodings_differ_on_the_same_text() {
        let text = "北京天气怎么样？请查询今天的天气预报。";
        assert_ne!(
            count(text, Encoding::O200kBase),
            count(text, Encoding::Cl100kBase)
        );
    }

    #[test]
    fn count_many_keeps_order_and_matches_single_counts() {
        // Large enough to take the parallel path.
        let texts: Vec<String> = (0..400)
            .map(|i| {
                format!(
                    "tool number {i}: {}",
                    "lorem ipsum dolor sit amet ".repeat(i % 37 + 1)
                )
            })
            .collect();
        assert!(texts.iter().map(String::len).sum::<usize>() > 64 * 1024);
        let many = count_many(&texts, Encoding::O200kBase);
        let single: Vec<usize> = texts
            .iter()
            .map(|t| count(t, Encoding::O200kBase))
            .collect();
        assert_eq!(many, single);
    }

    #[test]
    fn split_by_bytes_covers_everything_once() {
        let texts = vec![
            "x".repeat(10),
            "y".repeat(1000),
            "z".repeat(10),
            "w".repeat(10),
        ];
        let ends = split_by_bytes(&texts, 2);
        assert_eq!(*ends.last().unwrap(), texts.len());
        assert!(ends.windows(2).all(|w| w[0] < w[1]));
    }

    /// Rebuilds tiktoken's text form (`base64(token) rank` per line) from the packed files: it
    /// must hash to the SHA-256 tiktoken checks its downloads against.
    #[test]
    fn shipped_rank_files_are_openais() {
        use base64::Engine;
        use sha2::{Digest, Sha256};
        for (file, published) in [
            (
                &include_bytes!("../assets/tiktoken/cl100k_base.ranks.gz")[..],
                "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
            ),
            (
                &include_bytes!("../assets/tiktoken/o200k_base.ranks.gz")[..],
                "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
            ),
        ] {
            let mut hasher = Sha256::new();
            for (rank, token) in unpack_ranks(file).iter().enumerate() {
                let line = format!(
                    "{} {rank}\n",
                    base64::engine::general_purpose::STANDARD.encode(token)
                );
                hasher.update(line.as_bytes());
            }
            let digest: String = hasher
                .finalize()
                .iter()
                .map(|b| format!("{b:02x}"))
                .collect();
            assert_eq!(digest, published);
        }
    }

    #[test]
    fn parses_encoding_names() {
        assert_eq!(
            "cl100k_base".parse::<Encoding>().unwrap(),
            Encoding::Cl100kBase
        );
        let err = "p50k".parse::<Encoding>().unwrap_err();
        assert!(err.to_string().contains("p50k"));
    }
}
