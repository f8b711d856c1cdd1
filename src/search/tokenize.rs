//! Text analysis shared by indexing and querying.
//!
//! Tool text is mostly identifiers (`github_create_issue`, `readFile`, `HTTPServer`) mixed with
//! prose, sometimes Chinese/Japanese/Korean. Both sides of the index must be analysed by exactly
//! the same function, so every rule here is deterministic and context-free: fold (case, accents),
//! split identifiers, drop stopwords, stem lightly. CJK runs have no spaces, so they become
//! overlapping character bigrams — the usual dependency-free way to make CJK text searchable.

use std::borrow::Cow;

/// What kind of term [`analyze_tagged`] emitted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TermKind {
    /// A word or identifier part, in text order (these form phrases).
    Word,
    /// The joined form of a split identifier (`GitHub` → `github`), emitted after its parts.
    Compound,
    /// A CJK bigram or single character.
    Cjk,
    /// The unstemmed form of the word just emitted, when stemming cut an `-ing`/`-ed` ending
    /// (`building` after `build`), marked with [`SURFACE_MARK`]. Stemming merges a noun with a verb it only looks
    /// like (`building`, `build`); the surface term lets a query that typed the word as the
    /// tool wrote it rank that tool above the ones that only share the stem. Not a word of its
    /// own: it forms no phrases and does not count toward field lengths.
    Surface,
}

/// First character of every surface term ([`TermKind::Surface`]), keeping them apart from
/// stems in the one term dictionary (the stem of one word can be the surface of another).
pub const SURFACE_MARK: char = '\u{3}';

/// Calls `emit` with every analysed term of `text`, in order (duplicates included, so the
/// caller can count term frequencies).
///
/// A camelCase or letter/digit compound (`GitHub`, `base64`) emits its parts *and* the joined
/// word, because users type brand names both ways (`github`, `git hub`).
/// Surface terms ([`TermKind::Surface`]) are an index detail and are left out.
pub fn analyze(text: &str, mut emit: impl FnMut(&str)) {
    analyze_tagged(text, |t, kind| {
        if kind != TermKind::Surface {
            emit(t)
        }
    });
}

/// [`analyze`], also telling what kind of term each one is.
pub fn analyze_tagged(text: &str, emit: impl FnMut(&str, TermKind)) {
    Analyzer::default().run(text, emit);
}

/// [`analyze_tagged`] with buffers kept between texts: indexing analyses several texts per
/// tool, and allocating fresh buffers for each was a measurable share of index build time.
#[derive(Clone, Default)]
pub struct Analyzer {
    folded: String,
    word: String,
    surface: String,
}

impl Analyzer {
    /// Same terms as [`analyze_tagged`].
    pub fn run(&mut self, text: &str, mut emit: impl FnMut(&str, TermKind)) {
        let Analyzer {
            folded,
            word,
            surface,
        } = self;
        // Folding leaves ASCII as it is, and most tool text is ASCII.
        let text = if text.is_ascii() {
            text
        } else {
            folded.clear();
            fold_into(text, folded);
            folded.as_str()
        };
        for run in Runs::new(text) {
            match run {
                Run::Cjk(s) => without_cjk_stopwords(s, |piece| {
                    cjk_terms(piece, &mut |t| emit(t, TermKind::Cjk))
                }),
                Run::Word(s) => {
                    let mut parts = 0usize;
                    for part in IdentParts::new(s) {
                        parts += 1;
                        emit_word(part, TermKind::Word, word, surface, &mut emit);
                    }
                    if parts > 1 {
                        emit_word(s, TermKind::Compound, word, surface, &mut emit);
                    }
                }
            }
        }
    }
}

/// First character of every phrase term.
pub const PHRASE_MARK: char = '\u{2}';

/// The term for two adjacent words (`channel clips`), so a query that repeats a name's or a
/// description's word order gets credit for the phrase, not just the words. The prefix byte
/// keeps phrase terms apart from words.
pub fn phrase_key(first: &str, second: &str) -> String {
    let mut key = String::with_capacity(first.len() + second.len() + 2);
    phrase_key_into(first, second, &mut key);
    key
}

/// [`phrase_key`] appended to a reusable buffer (indexing builds one per word pair).
pub fn phrase_key_into(first: &str, second: &str, out: &mut String) {
    out.push(PHRASE_MARK);
    out.push_str(first);
    out.push(' ');
    out.push_str(second);
}

/// Collects [`analyze`] output into owned strings (tests, small inputs).
pub fn analyze_to_vec(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    analyze(text, |t| out.push(t.to_owned()));
    out
}

/// The whole-name key: folded and lowercased, separators kept. Indexed as one extra term so an
/// exact-name query (`read_file`) ranks that tool first; a query word is compared with the same
/// function.
pub fn exact_key(name: &str) -> String {
    let mut folded = String::with_capacity(name.len());
    fold_into(name, &mut folded);
    let trimmed = folded.trim_matches(|c: char| !c.is_alphanumeric());
    let mut key = String::with_capacity(trimmed.len() + 1);
    // A prefix byte keeps whole-name keys apart from ordinary words (`weather` the tool name vs
    // `weather` the word); both live in one term dictionary.
    key.push('\u{1}');
    for c in trimmed.chars() {
        key.push(c.to_ascii_lowercase());
    }
    key
}

/// Lowercase, stopword-filter and stem one ASCII word part, then emit it as `kind`, followed
/// by its surface form when stemming cut an `-ing`/`-ed` ending.
fn emit_word(
    word: &str,
    kind: TermKind,
    buf: &mut String,
    surface: &mut String,
    emit: &mut impl FnMut(&str, TermKind),
) {
    buf.clear();
    buf.push_str(word);
    buf.make_ascii_lowercase();
    if is_stopword(buf) {
        return;
    }
    surface.clear();
    surface.push(SURFACE_MARK);
    surface.push_str(buf);
    let cut_inflection = stem_in_place(buf);
    emit(buf, kind);
    if cut_inflection {
        emit(surface, TermKind::Surface);
    }
}

/// Emit CJK terms for a run of Han/Kana/Hangul characters: overlapping bigrams, or the single
/// character when the run has only one.
fn cjk_terms(run: &str, emit: &mut impl FnMut(&str)) {
    let mut it = run.char_indices().peekable();
    let mut count = 0;
    while let Some((i, c)) = it.next() {
        count += 1;
        if let Some(&(j, d)) = it.peek() {
            emit(&run[i..j + d.len_utf8()]);
        } else if count == 1 {
            emit(&run[i..i + c.len_utf8()]);
        }
    }
}

/// Request phrasing of Chinese requests ("帮我查一下…", "我想知道…", "请问…"). Like the English
/// stopwords they say nothing about which tool is wanted, and as character bigrams they would
/// match whatever text happens to hold them, and pair with the words beside them (`帮我查` →
/// `我查`). Only phrases: the single characters of request phrasing (`请`, `的`) are also parts
/// of words tools are described with (`申请`, `请求`, `目的`); cutting them measured within noise
/// (docs/search-ranking.md, "Search in the user's language").
#[rustfmt::skip]
const CJK_STOPWORDS: &[&str] = &[
    "帮我", "帮忙", "一下", "我想", "我要", "请问", "请帮", "能不能", "可不可以", "告诉我", "给我",
    "麻烦",
];

/// Calls `f` with the pieces of a CJK run between its stopwords ([`CJK_STOPWORDS`]; at each
/// position the longest one that matches is cut).
pub(crate) fn without_cjk_stopwords(run: &str, mut f: impl FnMut(&str)) {
    let (mut start, mut i) = (0, 0);
    while i < run.len() {
        let rest = &run[i..];
        match CJK_STOPWORDS
            .iter()
            .filter(|w| rest.starts_with(**w))
            .map(|w| w.len())
            .max()
        {
            Some(len) => {
                if start < i {
                    f(&run[start..i]);
                }
                i += len;
                start = i;
            }
            None => i += rest.chars().next().map_or(1, char::len_utf8),
        }
    }
    if start < run.len() {
        f(&run[start..]);
    }
}

/// The words of a text: its white-space separated tokens, where Chinese or Japanese text,
/// written without spaces, counts one word per two characters (roughly a Chinese word's
/// length, so `你好` is one word like `Hi`, and `查天气` two).
pub(crate) fn word_count(text: &str) -> usize {
    let (all, _) = words_and_cjk_words(text);
    all
}

/// Whether most of a text's words ([`word_count`]) are CJK: `帮我查一下北京天气` and
/// `[Feishu/Lark]-智能门禁-获取门禁记录列表` are, `search github issues about 内存泄漏` is not.
pub(crate) fn mostly_cjk(text: &str) -> bool {
    let (all, cjk) = words_and_cjk_words(text);
    cjk * 2 > all
}

fn words_and_cjk_words(text: &str) -> (usize, usize) {
    let (mut all, mut cjk_words) = (0, 0);
    for token in text.split_whitespace() {
        let cjk = token.chars().filter(|&c| is_cjk(c)).count();
        let other = token.chars().any(|c| c.is_alphanumeric() && !is_cjk(c));
        if cjk == 0 {
            all += 1;
        } else {
            cjk_words += cjk.div_ceil(2);
            all += cjk.div_ceil(2) + usize::from(other);
        }
    }
    (all, cjk_words)
}

/// Han, Hiragana, Katakana and Hangul: scripts written without spaces between words.
pub fn is_cjk(c: char) -> bool {
    matches!(c as u32,
        0x3040..=0x30FF   // Hiragana, Katakana
        | 0x31F0..=0x31FF // Katakana phonetic extensions
        | 0x3400..=0x4DBF // CJK extension A
        | 0x4E00..=0x9FFF // CJK unified ideographs
        | 0xF900..=0xFAFF // CJK compatibility ideographs
        | 0x1100..=0x11FF // Hangul Jamo
        | 0x3130..=0x318F // Hangul compatibility Jamo
        | 0xAC00..=0xD7AF // Hangul syllables
        | 0x20000..=0x2FA1F // CJK extensions B.. and compatibility supplement
    )
}

/// Folds accents and other Latin-like letters to ASCII (`é`→`e`, `ß`→`ss`, full-width `Ａ`→`A`)
/// while keeping case (needed for camelCase splitting) and keeping CJK characters as they are
/// (transliterating them would destroy the bigram matching).
fn fold_into(text: &str, out: &mut String) {
    for c in text.chars() {
        if c.is_ascii() || is_cjk(c) {
            out.push(c);
        } else if let Some(s) = deunicode::deunicode_char(c) {
            // deunicode may map punctuation to ASCII punctuation or letters to several letters.
            out.push_str(s);
        } else {
            out.push(' ');
        }
    }
}

enum Run<'a> {
    Word(&'a str),
    Cjk(&'a str),
}

/// Splits folded text into maximal ASCII-alphanumeric runs and CJK runs; everything else
/// (spaces, `_ - . / :` and punctuation) separates.
struct Runs<'a> {
    s: &'a str,
    pos: usize,
}

impl<'a> Runs<'a> {
    fn new(s: &'a str) -> Self {
        Runs { s, pos: 0 }
    }
}

impl<'a> Runs<'a> {
    /// The character starting at byte `i` when it is CJK (`None` for ASCII and other scripts).
    fn cjk_at(&self, i: usize) -> Option<char> {
        self.s[i..].chars().next().filter(|&c| is_cjk(c))
    }

    /// Byte length of the character starting at byte `i`.
    fn char_len(&self, i: usize) -> usize {
        self.s[i..].chars().next().map_or(1, char::len_utf8)
    }
}

/// Scans bytes: runs and separators are ASCII except CJK characters, which are decoded only
/// where a non-ASCII byte starts one.
impl<'a> Iterator for Runs<'a> {
    type Item = Run<'a>;
    fn next(&mut self) -> Option<Run<'a>> {
        let bytes = self.s.as_bytes();
        let mut start = self.pos;
        let cjk = loop {
            let &b = bytes.get(start)?;
            if b.is_ascii_alphanumeric() {
                break false;
            }
            if !b.is_ascii() && self.cjk_at(start).is_some() {
                break true;
            }
            start += if b.is_ascii() {
                1
            } else {
                self.char_len(start)
            };
        };
        let mut end = start;
        if cjk {
            while bytes.get(end).is_some_and(|b| !b.is_ascii())
                && let Some(c) = self.cjk_at(end)
            {
                end += c.len_utf8();
            }
        } else {
            while bytes.get(end).is_some_and(u8::is_ascii_alphanumeric) {
                end += 1;
            }
        }
        self.pos = end;
        let piece = &self.s[start..end];
        Some(if cjk {
            Run::Cjk(piece)
        } else {
            Run::Word(piece)
        })
    }
}

/// Splits one ASCII alphanumeric run at camelCase, acronym and letter/digit boundaries:
/// `getHTTPServer2` → `get`, `HTTP`, `Server`, `2`.
struct IdentParts<'a> {
    s: &'a [u8],
    pos: usize,
}

impl<'a> IdentParts<'a> {
    fn new(s: &'a str) -> Self {
        IdentParts {
            s: s.as_bytes(),
            pos: 0,
        }
    }
}

impl<'a> Iterator for IdentParts<'a> {
    type Item = &'a str;
    fn next(&mut self) -> Option<&'a str> {
        let s = self.s;
        if self.pos >= s.len() {
            return None;
        }
        let start = self.pos;
        let mut i = start + 1;
        while i < s.len() {
            let (p, c) = (s[i - 1], s[i]);
            let boundary = (p.is_ascii_lowercase() && c.is_ascii_uppercase())
                || (p.is_ascii_alphabetic() && c.is_ascii_digit())
                || (p.is_ascii_digit() && c.is_ascii_alphabetic())
                || (p.is_ascii_uppercase()
                    && c.is_ascii_uppercase()
                    && s.get(i + 1).is_some_and(|n| n.is_ascii_lowercase()));
            if boundary {
                break;
            }
            i += 1;
        }
        self.pos = i;
        // Only ASCII bytes are in a run, so any byte index is a char boundary.
        std::str::from_utf8(&s[start..i]).ok()
    }
}

/// English function words plus request filler ("please", "can you") that carry no tool
/// meaning. Kept short on purpose: IDF already discounts frequent words, and a long list risks
/// removing words that are tool names ("show", "find", "get" are kept).
const STOPWORDS: &[&str] = &[
    "a", "about", "above", "after", "again", "all", "also", "am", "an", "and", "any", "are", "as",
    "at", "be", "been", "before", "being", "both", "but", "by", "can", "could", "d", "did", "do",
    "does", "doing", "each", "eg", "etc", "for", "from", "had", "has", "have", "having", "he",
    "her", "here", "hers", "him", "his", "how", "i", "ie", "if", "im", "in", "into", "is", "it",
    "its", "itself", "just", "let", "ll", "m", "me", "might", "more", "most", "must", "my",
    "myself", "of", "off", "on", "once", "only", "or", "other", "our", "ours", "out", "over",
    "please", "re", "s", "shall", "she", "should", "so", "some", "such", "t", "than", "that",
    "the", "their", "theirs", "them", "then", "there", "these", "they", "this", "those", "through",
    "to", "too", "up", "us", "ve", "very", "was", "we", "were", "what", "when", "where", "which",
    "while", "who", "whom", "why", "will", "with", "would", "you", "your", "yours",
];

/// Words of request phrasing ("can you *provide* *information* on…", "I *need* *help*…") that
/// are common in any user request but say little about which tool is wanted. They are not
/// dropped (many tools are named `get_*`, `list_*`, `find_*`), only weighted down in queries,
/// because a catalog where few tools say "provide" would otherwise give them a high IDF.
#[rustfmt::skip]
const REQUEST_WORDS: &[&str] = &[
    "able", "additionally", "anything", "appreciate", "assist", "available", "best", "certain",
    "check", "currently", "detail", "different", "else", "every", "find", "get", "give", "go",
    "good", "great", "help", "info", "information", "interested", "kindly", "know", "like",
    "looking", "make", "many", "much", "need", "particular", "possible", "provide", "recommend",
    "recommendation", "share", "show", "something", "specific", "sure", "tell", "thank",
    "thanks", "various", "want", "way",
];

/// True when the analysed query term `term` is a stemmed request word (see `REQUEST_WORDS`).
pub fn is_request_word(term: &str) -> bool {
    static STEMS: std::sync::OnceLock<std::collections::HashSet<String>> =
        std::sync::OnceLock::new();
    STEMS
        .get_or_init(|| REQUEST_WORDS.iter().map(|w| stem(w).into_owned()).collect())
        .contains(term)
}

/// True when `w` (lowercase ASCII) is a stopword.
pub fn is_stopword(w: &str) -> bool {
    // A hash set: this runs for every word indexed, and a binary search costs ~7 string
    // comparisons per word.
    static SET: std::sync::OnceLock<super::hash::FastSet<&'static str>> =
        std::sync::OnceLock::new();
    // No stopword is longer than 8 bytes; most indexed words are, and skip the lookup.
    w.len() <= 8
        && SET
            .get_or_init(|| STOPWORDS.iter().copied().collect())
            .contains(w)
}

fn has_vowel(s: &str) -> bool {
    s.bytes()
        .any(|b| matches!(b, b'a' | b'e' | b'i' | b'o' | b'u' | b'y'))
}

/// Light, deterministic English stemmer: plural `-s/-es/-ies`, `-ing`, `-ed/-ied`, and a final
/// silent `-e`, so `creates`, `created`, `creating` and `create` all become `creat`.
///
/// Deliberately much smaller than Porter: tool text is short and full of identifiers and brand
/// names, and aggressive suffix stripping merges unrelated words. Words of 3 letters or fewer,
/// digits and non-ASCII terms are returned unchanged.
pub fn stem(w: &str) -> Cow<'_, str> {
    let mut s = w.to_owned();
    let _ = stem_in_place(&mut s);
    if s == w {
        Cow::Borrowed(w)
    } else {
        Cow::Owned(s)
    }
}

/// [`stem`] on a buffer: every rule only cuts a suffix and maybe appends a letter or two, so
/// indexing stems each word where it was lowercased, without allocating. Returns whether it cut
/// an `-ing`/`-ed` ending, the rule that turns nouns and adjectives into verbs (`building`,
/// `advanced`); plurals and a silent `e` keep a word's meaning.
fn stem_in_place(s: &mut String) -> bool {
    if s.len() <= 3 || !s.bytes().all(|b| b.is_ascii_lowercase()) {
        return false;
    }
    // Step 1: plurals.
    let n = s.len();
    if s.ends_with("ies") && n >= 5 {
        s.truncate(n - 3);
        s.push('y');
    } else if s.ends_with("sses") {
        s.truncate(n - 2);
    } else if s.ends_with("ss") || s.ends_with("us") || s.ends_with("is") {
        // `address`, `status`, `analysis`: not plurals.
    } else if s.ends_with("xes") || s.ends_with("ches") || s.ends_with("shes") {
        s.truncate(n - 2);
    } else if s.ends_with('s') {
        s.truncate(n - 1);
    }
    // Step 2: -ied / -ed / -ing (only when what is left still looks like a word).
    let n = s.len();
    if s.ends_with("ied") && n >= 5 {
        s.truncate(n - 3);
        s.push('y');
        return true;
    }
    let base = &s[..n.saturating_sub(2)];
    if s.ends_with("ed") && base.len() >= 3 && !base.ends_with('e') && has_vowel(base) {
        let keep = undouble(base).len();
        s.truncate(keep);
        return true;
    }
    let base = &s[..n.saturating_sub(3)];
    if s.ends_with("ing") && base.len() >= 3 && has_vowel(base) {
        let keep = undouble(base).len();
        s.truncate(keep);
        return true;
    }
    // Step 3: silent final e (`create` ↔ `creat`-ed), not `-ee` (`free`).
    if s.len() >= 4 && s.ends_with('e') && !s.ends_with("ee") {
        s.truncate(s.len() - 1);
    }
    false
}

/// `stopp` → `stop`, `runn` → `run`; keeps `ll`, `ss`, `zz` (`call`, `pass`, `buzz`).
fn undouble(s: &str) -> &str {
    let b = s.as_bytes();
    let n = b.len();
    if n >= 3
        && b[n - 1] == b[n - 2]
        && !matches!(
            b[n - 1],
            b'l' | b's' | b'z' | b'a' | b'e' | b'i' | b'o' | b'u'
        )
    {
        &s[..n - 1]
    } else {
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(s: &str) -> Vec<String> {
        analyze_to_vec(s)
    }

    #[test]
    fn stopword_list_is_sorted() {
        // `is_stopword` relies on binary search.
        assert!(STOPWORDS.windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn splits_snake_kebab_dotted_slashed() {
        assert_eq!(t("read_file"), ["read", "fil"]);
        assert_eq!(t("github-create-issue"), ["github", "creat", "issu"]);
        assert_eq!(t("fs.readdir/list"), ["fs", "readdir", "list"]);
    }

    #[test]
    fn splits_camel_and_pascal_and_keeps_compound() {
        assert_eq!(t("readFile"), ["read", "fil", "readfil"]);
        assert_eq!(t("GitHub"), ["git", "hub", "github"]);
    }

    #[test]
    fn splits_acronyms() {
        assert_eq!(t("HTTPServer"), ["http", "server", "httpserver"]);
        assert_eq!(t("getURLForID"), ["get", "url", "id", "geturlforid"]);
        assert_eq!(t("parseJSON"), ["pars", "json", "parsejson"]);
    }

    #[test]
    fn splits_digits() {
        assert_eq!(t("base64"), ["bas", "64", "base64"]);
        assert_eq!(t("oauth2Token"), ["oauth", "2", "token", "oauth2token"]);
        assert_eq!(t("2024"), ["2024"]);
    }

    #[test]
    fn folds_case_and_accents() {
        assert_eq!(t("Café Überweisung"), ["caf", "uberweisung"]);
        assert_eq!(t("ÉCOLE"), t("ecole"));
        assert_eq!(t("Straße"), ["strass"]);
    }

    #[test]
    fn a_text_is_mostly_cjk_when_most_of_its_words_are() {
        assert!(mostly_cjk("帮我查一下北京天气"));
        assert!(mostly_cjk(
            "[Feishu/Lark]-智能门禁-门禁记录-获取门禁记录列表"
        ));
        assert!(mostly_cjk("查看github仓库的问题"));
        assert!(!mostly_cjk("search github issues about 内存泄漏"));
        assert!(!mostly_cjk("List the issues of a GitHub repository"));
        // Half is not most: `北京` is one word against `weather`.
        assert!(!mostly_cjk("weather 北京"));
        assert!(!mostly_cjk(""));
    }

    #[test]
    fn cjk_bigrams_and_unigrams() {
        assert_eq!(t("搜索关键词"), ["搜索", "索关", "关键", "键词"]);
        assert_eq!(t("天"), ["天"]);
        // CJK and Latin in one string split at the script change; CJK punctuation separates.
        assert_eq!(t("必应search，天气"), ["必应", "search", "天气"]);
        assert_eq!(t("ファイル"), ["ファ", "ァイ", "イル"]);
        assert_eq!(t("검색"), ["검색"]);
    }

    #[test]
    fn cuts_chinese_request_phrasing_out_of_a_run() {
        // Whole, the run's bigrams would be 帮我 我查 查一 一下 下北 北京 京的 的天 天气.
        assert_eq!(
            t("帮我查一下北京的天气"),
            ["查", "北京", "京的", "的天", "天气"]
        );
        assert_eq!(t("请问我想知道明天"), ["知道", "道明", "明天"]);
        // The longest phrase wins; a run that is only request phrasing leaves nothing.
        assert!(t("能不能帮我").is_empty());
        // Single characters of request phrasing stay: they are parts of words (申请, 请求).
        assert_eq!(t("申请请求"), ["申请", "请请", "请求"]);
    }

    #[test]
    fn drops_stopwords() {
        assert_eq!(t("Can you please get me the weather"), ["get", "weather"]);
        assert!(t("the of and to").is_empty());
        assert!(t("Messi's").iter().all(|w| w != "s"));
    }

    #[test]
    fn stems_lightly_and_consistently() {
        for (a, b) in [
            ("files", "file"),
            ("queries", "query"),
            ("creating", "create"),
            ("created", "creates"),
            ("matches", "match"),
            ("running", "run"),
            ("stopped", "stop"),
            ("updated", "update"),
            ("applied", "apply"),
        ] {
            assert_eq!(stem(a), stem(b), "{a} vs {b}");
        }
        // Not plurals / not verbs.
        assert_eq!(stem("status"), "status");
        assert_eq!(stem("address"), "address");
        assert_eq!(stem("analysis"), "analysis");
        assert_eq!(stem("string"), "string");
        assert_eq!(stem("speed"), "speed");
        assert_eq!(stem("call"), "call");
        assert_eq!(stem("calling"), "call");
        assert_eq!(stem("free"), "free");
        // Short words, digits and CJK are untouched.
        assert_eq!(stem("gas"), "gas");
        assert_eq!(stem("v2"), "v2");
        assert_eq!(stem("天气"), "天气");
    }

    #[test]
    fn tags_words_compounds_and_cjk() {
        let mut out = Vec::new();
        analyze_tagged("getUser 天气", |t, k| out.push((t.to_owned(), k)));
        assert_eq!(
            out,
            [
                ("get".to_owned(), TermKind::Word),
                ("user".to_owned(), TermKind::Word),
                ("getuser".to_owned(), TermKind::Compound),
                ("天气".to_owned(), TermKind::Cjk),
            ]
        );
        assert_ne!(phrase_key("a", "b"), phrase_key("a b", ""));
    }

    #[test]
    fn exact_key_is_folded_and_marked() {
        assert_eq!(exact_key("Read_File"), "\u{1}read_file");
        assert_eq!(exact_key("\"read_file\","), exact_key("read_file"));
        assert_ne!(exact_key("weather"), "weather");
    }
}
