//! tiktoken's pre-tokenization for cl100k_base and o200k_base: the regex that cuts a text into
//! the pieces BPE encodes one by one. The patterns are tiktoken's (as tiktoken-rs has them; the
//! tests run them through fancy-regex and compare):
//!
//! - cl100k_base: `'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+|
//!   ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s`
//! - o200k_base: `[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?|
//!   [^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?|
//!   \p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+`
//!
//! They are matched here by a scanner, not a regex engine: `\s+(?!\S)` is a look-ahead the
//! `regex` crate lacks, and every alternative reduces to a few runs over character classes once
//! its backtracking is worked out (done alternative by alternative below, in the leftmost-first
//! order a backtracking engine tries them). Every character starts some alternative, so the
//! pieces are contiguous and cover the text.
//!
//! The character classes are read from `regex-syntax` (the Unicode tables of the `regex` crate,
//! which tiktoken-rs's fancy-regex matches with), so the two agree on every code point.

use std::collections::HashMap;
use std::sync::LazyLock;

use regex_syntax::hir::{Class, HirKind};

/// Which of tiktoken's two patterns to cut by.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Pattern {
    Cl100k,
    O200k,
}

/// `\p{L}`.
const LETTER: u8 = 1 << 0;
/// `\p{N}`.
const NUMBER: u8 = 1 << 1;
/// `\s`: Unicode's White_Space.
const SPACE: u8 = 1 << 2;
/// The start of an o200k word, `[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]`.
const HEAD: u8 = 1 << 3;
/// The rest of an o200k word, `[\p{Ll}\p{Lm}\p{Lo}\p{M}]`. Modifier and other letters and
/// marks are both HEAD and TAIL, which is what makes o200k's backtracking subtle.
const TAIL: u8 = 1 << 4;

const CLASS_PATTERNS: [(u8, &str); 5] = [
    (LETTER, r"\p{L}"),
    (NUMBER, r"\p{N}"),
    (SPACE, r"\s"),
    (HEAD, r"[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]"),
    (TAIL, r"[\p{Ll}\p{Lm}\p{Lo}\p{M}]"),
];

/// `[^\s\p{L}\p{N}]`: punctuation, symbols, marks, controls other than whitespace, unassigned.
fn is_symbol(classes: u8) -> bool {
    classes & (SPACE | LETTER | NUMBER) == 0
}

/// `[^\r\n\p{L}\p{N}]`: the one character both patterns allow in front of a word.
fn may_lead_word(code_point: u32, classes: u8) -> bool {
    code_point != u32::from(b'\r')
        && code_point != u32::from(b'\n')
        && classes & (LETTER | NUMBER) == 0
}

/// Code points per block of the class table.
const BLOCK: usize = 256;
const CODE_POINTS: usize = 0x11_0000;

/// The classes of every code point, as bits: a table per 256 code points, each distinct table
/// stored once (with regex-syntax 0.8.12's Unicode 16 tables, 140 of the 4,352 blocks differ:
/// 36 kB of blocks and a 9 kB index instead of 1.1 MB).
struct ClassTable {
    ascii: [u8; 128],
    block_of: Vec<u16>,
    blocks: Vec<[u8; BLOCK]>,
}

static CLASSES: LazyLock<ClassTable> = LazyLock::new(ClassTable::from_regex_syntax);

impl ClassTable {
    fn from_regex_syntax() -> Self {
        let mut flat = vec![0u8; CODE_POINTS];
        for (bit, pattern) in CLASS_PATTERNS {
            let hir = regex_syntax::parse(pattern).expect("the class patterns parse");
            let HirKind::Class(Class::Unicode(class)) = hir.kind() else {
                unreachable!("{pattern} is a Unicode class");
            };
            for range in class.iter() {
                for slot in &mut flat[range.start() as usize..=range.end() as usize] {
                    *slot |= bit;
                }
            }
        }
        let mut index_of_block = HashMap::new();
        let mut blocks = Vec::new();
        let block_of = flat
            .chunks_exact(BLOCK)
            .map(|chunk| {
                let block: [u8; BLOCK] = chunk.try_into().expect("chunks of BLOCK bytes");
                *index_of_block.entry(block).or_insert_with(|| {
                    blocks.push(block);
                    u16::try_from(blocks.len() - 1).expect("fewer than 65,536 distinct blocks")
                })
            })
            .collect();
        let ascii = flat[..128].try_into().expect("128 ASCII code points");
        Self {
            ascii,
            block_of,
            blocks,
        }
    }

    #[inline]
    fn of(&self, code_point: u32) -> u8 {
        let code_point = code_point as usize;
        self.blocks[usize::from(self.block_of[code_point / BLOCK])][code_point % BLOCK]
    }
}

/// The pieces of `text` under `pattern`, in order; together they are exactly `text`.
pub(super) fn pieces(text: &str, pattern: Pattern) -> Pieces<'_> {
    Pieces {
        text: text.as_bytes(),
        pos: 0,
        pattern,
        classes: &CLASSES,
    }
}

pub(super) struct Pieces<'t> {
    /// Valid UTF-8 (it comes from a `&str`), so positions after whole characters are boundaries.
    text: &'t [u8],
    pos: usize,
    pattern: Pattern,
    classes: &'static ClassTable,
}

impl<'t> Iterator for Pieces<'t> {
    type Item = &'t [u8];

    fn next(&mut self) -> Option<&'t [u8]> {
        let start = self.pos;
        let (code_point, classes, len) = self.char_at(start)?;
        let end = match self.pattern {
            Pattern::Cl100k => self.cl100k_piece_end(start, code_point, classes, start + len),
            Pattern::O200k => self.o200k_piece_end(start, code_point, classes, start + len),
        };
        debug_assert!(end > start, "every piece takes at least one character");
        self.pos = end;
        Some(&self.text[start..end])
    }
}

impl Pieces<'_> {
    /// The character at `pos` (a character boundary): its code point, its classes and its
    /// length in bytes; `None` at the end of the text.
    #[inline]
    fn char_at(&self, pos: usize) -> Option<(u32, u8, usize)> {
        let &first = self.text.get(pos)?;
        if first < 0x80 {
            return Some((u32::from(first), self.classes.ascii[usize::from(first)], 1));
        }
        let continuation = |offset: usize| u32::from(self.text[pos + offset] & 0x3f);
        let (code_point, len) = if first < 0xe0 {
            ((u32::from(first & 0x1f) << 6) | continuation(1), 2)
        } else if first < 0xf0 {
            let high = u32::from(first & 0x0f) << 12;
            (high | (continuation(1) << 6) | continuation(2), 3)
        } else {
            let high = u32::from(first & 0x07) << 18;
            let low = (continuation(2) << 6) | continuation(3);
            (high | (continuation(1) << 12) | low, 4)
        };
        Some((code_point, self.classes.of(code_point), len))
    }

    fn has_at(&self, pos: usize, wanted: impl Fn(u8) -> bool) -> bool {
        self.char_at(pos)
            .is_some_and(|(_, classes, _)| wanted(classes))
    }

    /// Where the run of characters whose classes satisfy `wanted`, from `pos`, ends.
    #[inline]
    fn run_end(&self, mut pos: usize, wanted: impl Fn(u8) -> bool) -> usize {
        while let Some((_, classes, len)) = self.char_at(pos) {
            if !wanted(classes) {
                break;
            }
            pos += len;
        }
        pos
    }

    /// `\p{N}{1,3}` from a number at `pos`.
    fn numbers_end(&self, mut pos: usize) -> usize {
        for _ in 0..3 {
            match self.char_at(pos) {
                Some((_, classes, len)) if classes & NUMBER != 0 => pos += len,
                _ => break,
            }
        }
        pos
    }

    /// The end of `'s`, `'t`, `'re`, `'ve`, `'m`, `'ll` or `'d` in any case at `pos`, if one is
    /// there. `(?i)` folds case the Unicode way, so `s` also stands for `ſ` (U+017F, long s);
    /// none of the other letters has a non-ASCII variant (a test checks both against
    /// regex-syntax).
    fn contraction_end(&self, pos: usize) -> Option<usize> {
        if self.text.get(pos) != Some(&b'\'') {
            return None;
        }
        let letter_at = |at: usize| -> Option<(u8, usize)> {
            if self.text.get(at..at + 2) == Some(&[0xc5, 0xbf]) {
                return Some((b's', at + 2));
            }
            Some((self.text.get(at)?.to_ascii_lowercase(), at + 1))
        };
        let (first, after_first) = letter_at(pos + 1)?;
        let second = |wanted: u8| match letter_at(after_first) {
            Some((letter, end)) if letter == wanted => Some(end),
            _ => None,
        };
        match first {
            b's' | b't' | b'm' | b'd' => Some(after_first),
            b'r' | b'v' => second(b'e'),
            b'l' => second(b'l'),
            _ => None,
        }
    }

    /// ` ?[^\s\p{L}\p{N}]+` then any run of the `trailing` bytes (line breaks; o200k adds `/`).
    /// A space counts only when a symbol follows it (otherwise the engine gives it back and
    /// the symbol run cannot start at a space).
    fn symbols_end(
        &self,
        pos: usize,
        code_point: u32,
        classes: u8,
        next: usize,
        trailing: &[u8],
    ) -> Option<usize> {
        let symbols_start = if is_symbol(classes) {
            pos
        } else if code_point == u32::from(b' ') && self.has_at(next, is_symbol) {
            next
        } else {
            return None;
        };
        let mut end = self.run_end(symbols_start, is_symbol);
        while self
            .text
            .get(end)
            .is_some_and(|byte| trailing.contains(byte))
        {
            end += 1;
        }
        Some(end)
    }

    /// A whitespace run at `pos`, which reaches every pattern's last alternatives. Let W be the
    /// whole run:
    /// - `\s*[\r\n]` (cl100k) and `\s*[\r\n]+` (o200k) take W up to its last line break: the
    ///   greedy `\s*` gives characters back until a line break follows it;
    /// - `\s+(?!\S)` takes W when the text ends after it, else W without its last character
    ///   (the character after W is not whitespace, so the look-ahead holds only one earlier),
    ///   which needs two characters;
    /// - `\s` / `\s+` take a lone character.
    ///
    /// cl100k's `\s++$` comes before its line-break alternative, so there a run that ends the
    /// text is one piece even with line breaks in it; o200k has no such alternative.
    fn spaces_end(&self, pos: usize) -> usize {
        let mut end = pos;
        let mut last_start = pos;
        let mut after_line_break = None;
        while let Some((code_point, classes, len)) = self.char_at(end) {
            if classes & SPACE == 0 {
                break;
            }
            if code_point == u32::from(b'\r') || code_point == u32::from(b'\n') {
                after_line_break = Some(end + len);
            }
            last_start = end;
            end += len;
        }
        let ends_text = end == self.text.len();
        match after_line_break {
            _ if ends_text && self.pattern == Pattern::Cl100k => end,
            Some(line_end) => line_end,
            None if ends_text || last_start == pos => end,
            None => last_start,
        }
    }

    /// cl100k_base's alternatives, in order, for the character at `pos` (`next` is after it).
    fn cl100k_piece_end(&self, pos: usize, code_point: u32, classes: u8, next: usize) -> usize {
        if let Some(end) = self.contraction_end(pos) {
            return end;
        }
        // `[^\r\n\p{L}\p{N}]?+\p{L}++`: a letter run, or one leading character and a letter run.
        let is_letter = |classes: u8| classes & LETTER != 0;
        if is_letter(classes)
            || (may_lead_word(code_point, classes) && self.has_at(next, is_letter))
        {
            return self.run_end(next, is_letter);
        }
        if classes & NUMBER != 0 {
            return self.numbers_end(pos);
        }
        if let Some(end) = self.symbols_end(pos, code_point, classes, next, b"\r\n") {
            return end;
        }
        self.spaces_end(pos)
    }

    /// o200k_base's alternatives, in order, for the character at `pos` (`next` is after it).
    fn o200k_piece_end(&self, pos: usize, code_point: u32, classes: u8, next: usize) -> usize {
        // The two word alternatives start with `[^\r\n\p{L}\p{N}]?`, which the engine tries
        // with the character first, then without; without, the word starts at the character
        // itself, which can only work for a mark (marks lead words and are HEAD and TAIL).
        let word_starts = if may_lead_word(code_point, classes) {
            [Some(next), (classes & (HEAD | TAIL) != 0).then_some(pos)]
        } else {
            [Some(pos), None]
        };
        for word_end in [Self::tail_word_end, Self::head_word_end] {
            for start in word_starts.into_iter().flatten() {
                if let Some(end) = word_end(self, start) {
                    // `(?i:'s|'t|'re|'ve|'m|'ll|'d)?`, greedy.
                    return self.contraction_end(end).unwrap_or(end);
                }
            }
        }
        if classes & NUMBER != 0 {
            return self.numbers_end(pos);
        }
        if let Some(end) = self.symbols_end(pos, code_point, classes, next, b"\r\n/") {
            return end;
        }
        self.spaces_end(pos)
    }

    /// `[HEAD]*[TAIL]+` from `start`. The greedy HEAD run is given back one character at a time
    /// until a TAIL character follows: right after the run (a lowercase letter, then the TAIL run
    /// goes on), or else at the run's last character that is also TAIL (then the TAIL run is that
    /// one character, since the HEAD characters after it are not TAIL).
    fn tail_word_end(&self, start: usize) -> Option<usize> {
        let mut pos = start;
        let mut after_last_tail = None;
        while let Some((_, classes, len)) = self.char_at(pos) {
            if classes & HEAD == 0 {
                break;
            }
            pos += len;
            if classes & TAIL != 0 {
                after_last_tail = Some(pos);
            }
        }
        let is_tail = |classes: u8| classes & TAIL != 0;
        if self.has_at(pos, is_tail) {
            return Some(self.run_end(pos, is_tail));
        }
        after_last_tail
    }

    /// `[HEAD]+[TAIL]*` from `start`: nothing after the runs can fail, so no backtracking.
    fn head_word_end(&self, start: usize) -> Option<usize> {
        let head_end = self.run_end(start, |classes| classes & HEAD != 0);
        (head_end > start).then(|| self.run_end(head_end, |classes| classes & TAIL != 0))
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;

    /// tiktoken's patterns as tiktoken-rs 0.12 builds its encoders with them.
    const TIKTOKEN_CL100K: &str = r"'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s";
    const TIKTOKEN_O200K: &str = concat!(
        r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
        r"|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
        r"|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+",
    );

    pub(in crate::tokens) fn reference_regex(pattern: Pattern) -> &'static fancy_regex::Regex {
        static CL100K: LazyLock<fancy_regex::Regex> =
            LazyLock::new(|| fancy_regex::Regex::new(TIKTOKEN_CL100K).unwrap());
        static O200K: LazyLock<fancy_regex::Regex> =
            LazyLock::new(|| fancy_regex::Regex::new(TIKTOKEN_O200K).unwrap());
        match pattern {
            Pattern::Cl100k => &CL100K,
            Pattern::O200k => &O200K,
        }
    }

    /// The pieces fancy-regex finds with tiktoken's pattern, as tiktoken cuts the text.
    pub(in crate::tokens) fn reference_pieces(text: &str, pattern: Pattern) -> Vec<&str> {
        reference_regex(pattern)
            .find_iter(text)
            .map(|found| {
                found
                    .expect("no backtracking limit on short texts")
                    .as_str()
            })
            .collect()
    }

    pub(in crate::tokens) fn scanned_pieces(text: &str, pattern: Pattern) -> Vec<&str> {
        pieces(text, pattern)
            .map(|piece| std::str::from_utf8(piece).expect("pieces end on character boundaries"))
            .collect()
    }

    #[test]
    fn cuts_like_tiktoken_at_each_alternative() {
        let texts = [
            "I'm sure they'VE said it's what we'd DONE, isn't it? THEY'LL see 'sup",
            "ſ'ſ 'ſ x'S",
            "  hello\tworld   \n\n  next \r\n\r\n x",
            "ends in spaces   ",
            "ends in a line break and spaces \n  ",
            "ends in a line break\n",
            "12345 ٣٣٣٣ Ⅻ½² 1.5e-10",
            " !!! ?\n\n/x  ///\n/ {\"a\": [1, 2]}",
            "HTMLParser getHTTPResponseCode camelCase ǅemal ʰaʰ 中文字 ー",
            "e\u{301}\u{308}X \u{301}X \u{301}\u{301} \u{20dd}a \u{903}\u{903}\u{903}",
            "\u{a0}\u{a0}x\u{3000}\u{3000}\u{3000}y\u{85}\u{2028}z",
            "🚀🔥 👩\u{200d}👩\u{200d}👧 a\u{fe0f}b",
            // A mark that starts a piece is a word of its own in o200k (the word alternative
            // without its optional leading character), before the symbol alternative can take it.
            "\u{301}X",
            "\u{fe0f}\u{a5579}X",
        ];
        for pattern in [Pattern::Cl100k, Pattern::O200k] {
            for text in texts {
                assert_eq!(
                    scanned_pieces(text, pattern),
                    reference_pieces(text, pattern),
                    "{pattern:?} {text:?}"
                );
            }
        }
    }

    /// The table and the UTF-8 decoding give every code point the classes the `regex` crate
    /// matches it with.
    #[test]
    fn every_code_point_has_the_classes_regex_gives_it() {
        let matchers = CLASS_PATTERNS
            .map(|(bit, pattern)| (bit, regex::Regex::new(&format!("^{pattern}$")).unwrap()));
        let mut buffer = [0u8; 4];
        for ch in (0..CODE_POINTS as u32).filter_map(char::from_u32) {
            let text = ch.encode_utf8(&mut buffer);
            let (code_point, classes, len) = pieces(text, Pattern::O200k).char_at(0).unwrap();
            assert_eq!((code_point, len), (u32::from(ch), text.len()));
            for (bit, regex) in &matchers {
                assert_eq!(
                    classes & bit != 0,
                    regex.is_match(text),
                    "U+{code_point:04X} {regex}"
                );
            }
        }
    }

    /// `(?i)` in tiktoken's contractions: exactly the characters regex-syntax folds together.
    #[test]
    fn contraction_letters_fold_as_regex_syntax_folds_them() {
        let folds = |letters: &str| -> Vec<char> {
            let hir = regex_syntax::parse(&format!("(?i)[{letters}]")).unwrap();
            let HirKind::Class(Class::Unicode(class)) = hir.kind() else {
                unreachable!()
            };
            class
                .iter()
                .flat_map(|range| range.start()..=range.end())
                .collect()
        };
        assert!(folds("s").contains(&'ſ'));
        for (prefix, letters) in [("'", "stmd"), ("'r", "e"), ("'v", "e"), ("'l", "l")] {
            let expected = folds(letters);
            for ch in (0..CODE_POINTS as u32).filter_map(char::from_u32) {
                let text = format!("{prefix}{ch}");
                let found = pieces(&text, Pattern::Cl100k).contraction_end(0);
                assert_eq!(
                    found == Some(text.len()),
                    expected.contains(&ch),
                    "{text:?}"
                );
            }
        }
    }
}
