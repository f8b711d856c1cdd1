//! Words across languages: a bilingual dictionary that gives a Chinese request the English
//! words of its terms, so the word ranker can match tools described only in English.
//!
//! Words index Chinese as character bigrams, which finds Chinese text and nothing else: before
//! this, a Chinese request over English-described tools matched only the Latin words it
//! happened to hold (Lark-zh-en R@5 0.033). Looking each term up in a dictionary and adding
//! its English glosses to the query lifts that to 0.6 (docs/search-ranking.md, "Words across
//! languages"), and it needs no model: a table lookup per term.
//!
//! The dictionary is data the host installs (the optional `@toolreg/dict-zh-en` package, built
//! from CC-CEDICT), one entry a line: `term<TAB>english words`. A request's Chinese runs are cut
//! into the longest terms the dictionary has (forward maximum matching, the classic dictionary
//! segmenter), and each term's glosses join the query as words (stemmed like typed words,
//! weighted by `Tuning::gloss_weight`; see `query.rs`).

use super::hash::{FastMap, FastSet};
use super::tokenize::{is_cjk, without_cjk_stopwords};

/// A term longer than this (in characters) is never looked up: CC-CEDICT's longest useful
/// entries are idioms and names of four to eight characters, and each extra length is one more
/// hash lookup per character of the request.
const MAX_TERM_CHARS: usize = 8;

/// A parsed bilingual dictionary: term → its glosses (English words, space-separated).
#[derive(Default)]
pub struct LanguageBridge {
    glosses: FastMap<Box<str>, Box<str>>,
    /// The longest term's length in characters (at most [`MAX_TERM_CHARS`]).
    longest: usize,
}

impl std::fmt::Debug for LanguageBridge {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LanguageBridge")
            .field("terms", &self.glosses.len())
            .finish_non_exhaustive()
    }
}

/// What is wrong with a dictionary's text.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum BridgeError {
    #[error("line {line}: expected `term<TAB>english words`, found {found:?}")]
    Line { line: usize, found: String },
    #[error("the dictionary has no entries")]
    Empty,
}

impl LanguageBridge {
    /// Parses the dictionary text: one `term<TAB>glosses` a line; blank lines and lines starting
    /// with `#` (the source and licence header) are skipped. A term listed twice keeps both
    /// lines' glosses.
    pub fn parse(text: &str) -> Result<Self, BridgeError> {
        let mut bridge = LanguageBridge::default();
        for (i, line) in text.lines().enumerate() {
            let line = line.trim_end_matches('\r');
            if line.trim().is_empty() || line.starts_with('#') {
                continue;
            }
            let Some((term, glosses)) = line.split_once('\t') else {
                return Err(BridgeError::Line {
                    line: i + 1,
                    found: line.chars().take(60).collect(),
                });
            };
            let (term, glosses) = (term.trim(), glosses.trim());
            let chars = term.chars().count();
            if term.is_empty() || glosses.is_empty() || chars > MAX_TERM_CHARS {
                continue;
            }
            bridge.longest = bridge.longest.max(chars);
            match bridge.glosses.get_mut(term) {
                Some(old) => *old = format!("{old} {glosses}").into(),
                None => {
                    bridge.glosses.insert(term.into(), glosses.into());
                }
            }
        }
        if bridge.glosses.is_empty() {
            return Err(BridgeError::Empty);
        }
        Ok(bridge)
    }

    pub fn len(&self) -> usize {
        self.glosses.len()
    }

    pub fn is_empty(&self) -> bool {
        self.glosses.is_empty()
    }

    /// The English glosses of the query's CJK terms, each word once, in the order the terms
    /// come; empty when the query has no term the dictionary knows. Request phrasing (`帮我`,
    /// `一下`) is cut first, as the word tokenizer cuts it: "help me" says nothing about a tool.
    pub fn glosses(&self, query: &str) -> String {
        let mut out = String::new();
        // A hash set: a long description's glosses run to hundreds of words (CC-CEDICT's
        // single characters have many senses), where a list's lookups add up.
        let mut seen: FastSet<&str> = FastSet::default();
        for run in cjk_runs(query) {
            without_cjk_stopwords(run, |piece| {
                self.segment(piece, |term| {
                    for word in self.glosses[term].split(' ').filter(|w| !w.is_empty()) {
                        if seen.insert(word) {
                            if !out.is_empty() {
                                out.push(' ');
                            }
                            out.push_str(word);
                        }
                    }
                })
            });
        }
        out
    }

    /// The glosses of one term, when the dictionary has it.
    pub(crate) fn term_glosses(&self, term: &str) -> Option<&str> {
        self.glosses.get(term).map(|g| &**g)
    }

    /// Forward maximum matching: at each position the longest term the dictionary has; a
    /// character it does not know is skipped.
    fn segment<'t>(&self, run: &'t str, mut f: impl FnMut(&'t str)) {
        let starts: Vec<usize> = run
            .char_indices()
            .map(|(i, _)| i)
            .chain([run.len()])
            .collect();
        let mut at = 0;
        while at + 1 < starts.len() {
            let longest = self.longest.min(starts.len() - 1 - at);
            let found = (1..=longest)
                .rev()
                .find(|&n| self.glosses.contains_key(&run[starts[at]..starts[at + n]]));
            match found {
                Some(n) => {
                    f(&run[starts[at]..starts[at + n]]);
                    at += n;
                }
                None => at += 1,
            }
        }
    }
}

/// The maximal runs of CJK characters in `text`.
fn cjk_runs(text: &str) -> impl Iterator<Item = &str> {
    text.split(|c: char| !is_cjk(c)).filter(|r| !r.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    const DICT: &str = "# a test dictionary\n\
        批量\tbatch lot\n\
        撤回\trecall revoke\n\
        消息\tnews information message\n\
        消\tdisappear\n\
        息\tbreath\n\
        天气\tweather\n\
        天\tday sky\n\
        查询\tcheck query\n\
        帮\thelp\n";

    fn bridge() -> LanguageBridge {
        LanguageBridge::parse(DICT).unwrap()
    }

    #[test]
    fn longest_terms_first_and_each_word_once() {
        assert_eq!(
            bridge().glosses("批量撤回消息"),
            "batch lot recall revoke news information message"
        );
        // 天气 wins over 天; 天 alone when the next character is not 气.
        assert_eq!(bridge().glosses("天气 天"), "weather day sky");
        assert_eq!(bridge().glosses("查询查询"), "check query");
    }

    #[test]
    fn request_phrasing_is_not_translated() {
        // 帮我 is request phrasing; 帮 alone is a word.
        assert_eq!(bridge().glosses("帮我查询天气"), "check query weather");
        assert_eq!(bridge().glosses("帮查询"), "help check query");
    }

    #[test]
    fn unknown_characters_and_other_scripts_are_skipped() {
        assert_eq!(
            bridge().glosses("撤回的消息"),
            "recall revoke news information message"
        );
        assert_eq!(bridge().glosses("recall messages"), "");
        assert_eq!(bridge().glosses("한국어 カタカナ"), "");
    }

    #[test]
    fn bad_dictionaries_say_what_is_wrong() {
        assert_eq!(
            LanguageBridge::parse("批量 batch\n").unwrap_err(),
            BridgeError::Line {
                line: 1,
                found: "批量 batch".into()
            }
        );
        assert_eq!(
            LanguageBridge::parse("# only a header\n\n").unwrap_err(),
            BridgeError::Empty
        );
        // Repeated terms merge; over-long terms are skipped, not an error.
        let b =
            LanguageBridge::parse("消息\tnews\n消息\tmessage\n一二三四五六七八九\tnine\n").unwrap();
        assert_eq!(b.len(), 1);
        assert_eq!(b.glosses("消息"), "news message");
    }
}
