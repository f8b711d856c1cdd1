//! BERT-uncased WordPiece tokenization, as all-MiniLM-L6-v2's `tokenizer.json` defines it
//! (Hugging Face `BertNormalizer` + `BertPreTokenizer` + `WordPiece`), without special tokens.
//!
//! The static table is indexed by these ids, so this must match the reference tokenizer token
//! for token; `fixtures/wordpiece.json` holds the reference's ids for varied texts and the
//! tests compare against it.

use unicode_general_category::{GeneralCategory as Cat, get_general_category};
use unicode_normalization::UnicodeNormalization;

use crate::search::hash::FastMap;

/// Words longer than this many characters become `[UNK]` (the reference's limit).
const MAX_WORD_CHARS: usize = 100;

pub struct WordPiece {
    // A fixed vocabulary shipped with the package: no hash-flooding concern, and the lookup
    // runs for every piece tried.
    ids: FastMap<Box<str>, u32>,
    unk: u32,
    /// Longest vocabulary piece in bytes (without `##`): no longer candidate can match.
    max_piece: usize,
}

impl WordPiece {
    /// From a `vocab.txt` (one token per line, id = line number). `None` without `[UNK]`.
    pub fn from_vocab(vocab: &str) -> Option<Self> {
        let ids: FastMap<Box<str>, u32> = vocab
            .lines()
            .enumerate()
            .map(|(i, token)| (token.into(), i as u32))
            .collect();
        let unk = *ids.get("[UNK]")?;
        let max_piece = ids
            .keys()
            .map(|t| t.strip_prefix("##").unwrap_or(t).len())
            .max()
            .unwrap_or(0);
        Some(WordPiece {
            ids,
            unk,
            max_piece,
        })
    }

    pub fn vocab_size(&self) -> usize {
        self.ids.len()
    }

    /// The id of a vocabulary token (`[CLS]`, `[SEP]`, …), matched literally.
    pub fn token_id(&self, token: &str) -> Option<u32> {
        self.ids.get(token).copied()
    }

    /// The text's token ids.
    pub fn encode(&self, text: &str) -> Vec<u32> {
        let mut out = Vec::new();
        for word in pre_tokenize(&normalize(text)) {
            self.push_word(word, &mut out);
        }
        out
    }

    /// Greedy longest-match-first pieces; a word with an unmatchable rest is one `[UNK]`.
    fn push_word(&self, word: &str, out: &mut Vec<u32>) {
        if word.chars().count() > MAX_WORD_CHARS {
            out.push(self.unk);
            return;
        }
        let first = out.len();
        let mut start = 0;
        let mut piece = String::new();
        while start < word.len() {
            let mut end = word.len();
            while end - start > self.max_piece {
                end = prev_boundary(word, end);
            }
            let mut found = None;
            while end > start {
                piece.clear();
                if start > 0 {
                    piece.push_str("##");
                }
                piece.push_str(&word[start..end]);
                if let Some(&id) = self.ids.get(piece.as_str()) {
                    found = Some(id);
                    break;
                }
                end = prev_boundary(word, end);
            }
            let Some(id) = found else {
                out.truncate(first);
                out.push(self.unk);
                return;
            };
            out.push(id);
            start = end;
        }
    }
}

fn prev_boundary(s: &str, i: usize) -> usize {
    s[..i].char_indices().next_back().map_or(0, |(j, _)| j)
}

/// `BertNormalizer` with `clean_text`, `handle_chinese_chars`, `lowercase` and (following
/// `lowercase`) `strip_accents`, in the reference's order.
fn normalize(text: &str) -> String {
    if text.is_ascii() {
        // Same result without decomposition or category lookups: ASCII controls other than
        // tab and line breaks are dropped, those become spaces.
        return text
            .bytes()
            .filter_map(|b| match b {
                b'\t' | b'\n' | b'\r' => Some(' '),
                0..=0x1f | 0x7f => None,
                _ => Some(b.to_ascii_lowercase() as char),
            })
            .collect();
    }
    let mut cleaned = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if c == '\0' || c == '\u{fffd}' || is_control(c) {
            continue;
        }
        if is_whitespace(c) {
            cleaned.push(' ');
        } else if is_chinese(c) {
            cleaned.push(' ');
            cleaned.push(c);
            cleaned.push(' ');
        } else {
            cleaned.push(c);
        }
    }
    cleaned
        .nfd()
        .filter(|&c| get_general_category(c) != Cat::NonspacingMark)
        .flat_map(char::to_lowercase)
        .collect()
}

/// `BertPreTokenizer`: split on white space (dropped) and around every punctuation character
/// (kept, one per word).
fn pre_tokenize(text: &str) -> impl Iterator<Item = &str> {
    let mut words = Vec::new();
    let mut start = None;
    for (i, c) in text.char_indices() {
        if c.is_whitespace() || is_punctuation(c) {
            if let Some(s) = start.take() {
                words.push(&text[s..i]);
            }
            if !c.is_whitespace() {
                words.push(&text[i..i + c.len_utf8()]);
            }
        } else if start.is_none() {
            start = Some(i);
        }
    }
    if let Some(s) = start {
        words.push(&text[s..]);
    }
    words.into_iter()
}

fn is_whitespace(c: char) -> bool {
    matches!(c, '\t' | '\n' | '\r') || c.is_whitespace()
}

/// Categories Cc, Cf, Cn, Co (and surrogates), except the white-space controls.
fn is_control(c: char) -> bool {
    !matches!(c, '\t' | '\n' | '\r')
        && matches!(
            get_general_category(c),
            Cat::Control | Cat::Format | Cat::Unassigned | Cat::PrivateUse | Cat::Surrogate
        )
}

fn is_punctuation(c: char) -> bool {
    c.is_ascii_punctuation()
        || matches!(
            get_general_category(c),
            Cat::ConnectorPunctuation
                | Cat::DashPunctuation
                | Cat::OpenPunctuation
                | Cat::ClosePunctuation
                | Cat::InitialPunctuation
                | Cat::FinalPunctuation
                | Cat::OtherPunctuation
        )
}

/// The CJK Unified Ideograph blocks the reference splits into single characters.
fn is_chinese(c: char) -> bool {
    matches!(c as u32,
        0x4E00..=0x9FFF
        | 0x3400..=0x4DBF
        | 0x20000..=0x2A6DF
        | 0x2A700..=0x2B73F
        | 0x2B740..=0x2B81F
        | 0x2B920..=0x2CEAF
        | 0xF900..=0xFAFF
        | 0x2F800..=0x2FA1F)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tiny() -> WordPiece {
        WordPiece::from_vocab("[PAD]\n[UNK]\nun\n##aff\n##able\nrun\n##ning\n,\ncafe\n中\n")
            .unwrap()
    }

    #[test]
    fn greedy_longest_match_with_continuations() {
        let wp = tiny();
        assert_eq!(wp.encode("unaffable"), [2, 3, 4]);
        assert_eq!(wp.encode("Running, CAFÉ"), [5, 6, 7, 8]);
        // A word with an unmatchable rest is one [UNK], not a partial match.
        assert_eq!(wp.encode("unxyz run"), [1, 5]);
        assert_eq!(wp.encode(&"a".repeat(101)), [1]);
        // CJK characters are words of their own; controls vanish.
        assert_eq!(wp.encode("中中\u{200b}"), [9, 9]);
    }

    #[test]
    fn normalizer_and_pre_tokenizer_follow_bert() {
        assert_eq!(normalize("Ünïcödé\tX\u{0}"), "unicode x");
        let words: Vec<&str> = pre_tokenize("a.b  c$d").collect();
        assert_eq!(words, ["a", ".", "b", "c", "$", "d"]);
    }
}
