//! Resolving a tool name the model got slightly wrong to one of the tools of this call.
//!
//! Rules, tried in order, each only when its best match is unique: the exact name; the same
//! words in another case or separator style (`readFile`, `Read-File`); the name with a
//! namespace prefix added or dropped (`mcp__fs__read_file` ↔ `read_file`, `functions.read_file`);
//! a small typo (Damerau–Levenshtein, with a clear margin over the runner-up). A tool that needs
//! approval is only ever reached by its exact name: a guess must never lead to a gated action.

use std::fmt;

/// A tool of this call, as name resolution sees it.
#[derive(Debug, Clone, Copy)]
pub struct NameCandidate<'a> {
    pub name: &'a str,
    /// The tool asks for approval before it runs (`needsApproval`).
    pub needs_approval: bool,
}

/// Which rule matched.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NameRule {
    Exact,
    /// Same words, other case or separators.
    CaseOrSeparator,
    /// A namespace prefix added or dropped.
    Prefix,
    /// A small typo.
    Typo,
}

impl NameRule {
    /// Stable kebab-case name, used in repair reports.
    pub fn as_str(self) -> &'static str {
        match self {
            NameRule::Exact => "exact",
            NameRule::CaseOrSeparator => "case-or-separator",
            NameRule::Prefix => "prefix",
            NameRule::Typo => "typo",
        }
    }
}

impl fmt::Display for NameRule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Why no tool was chosen.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NameError {
    #[error("no tool of this call is close to {requested:?}")]
    NotFound { requested: String },
    #[error("{requested:?} could mean any of {candidates:?}")]
    Ambiguous {
        requested: String,
        candidates: Vec<String>,
    },
    #[error(
        "{requested:?} resembles {tool:?}, which needs approval and is only called by its exact name"
    )]
    ApprovalGated { requested: String, tool: String },
}

/// Typos are only considered for names of at least this many characters (normalised): in
/// shorter names one edit changes the meaning (`get` / `set`).
const MIN_TYPO_LEN: usize = 5;
/// The best typo match must beat the runner-up by this many edits.
const TYPO_MARGIN: usize = 2;
/// Prefix words models invent that name no real namespace.
const GENERIC_PREFIXES: [&str; 7] = [
    "functions",
    "function",
    "tools",
    "tool",
    "defaultapi",
    "api",
    "mcp",
];

/// Picks the tool `requested` means, returning its index in `tools` and the rule that matched.
pub fn resolve_tool_name(
    requested: &str,
    tools: &[NameCandidate<'_>],
) -> Result<(usize, NameRule), NameError> {
    resolve_with_keys(requested, tools, &NameKeys::new(tools))
}

/// The comparison keys of a tool list, computed once and reused for every call against it.
#[derive(Debug, Default)]
pub struct NameKeys(Vec<Key>);

impl NameKeys {
    pub fn new(tools: &[NameCandidate<'_>]) -> Self {
        NameKeys(tools.iter().map(|t| Key::of(t.name)).collect())
    }
}

/// [`resolve_tool_name`] with the keys of `tools` computed beforehand.
pub fn resolve_with_keys(
    requested: &str,
    tools: &[NameCandidate<'_>],
    keys: &NameKeys,
) -> Result<(usize, NameRule), NameError> {
    if let Some(i) = tools.iter().position(|t| t.name == requested) {
        return Ok((i, NameRule::Exact));
    }
    let wanted = Key::of(requested);
    let keys = &keys.0;

    let same: Vec<usize> = (0..tools.len())
        .filter(|&i| keys[i].full == wanted.full)
        .collect();
    if let Some(found) = pick(requested, tools, &same, NameRule::CaseOrSeparator)? {
        return Ok(found);
    }

    let prefixed: Vec<usize> = (0..tools.len())
        .filter(|&i| {
            keys[i].last == wanted.last
                && (wanted.has_prefix() || keys[i].has_prefix())
                && wanted.prefix_fits(&keys[i])
        })
        .collect();
    if let Some(found) = pick(requested, tools, &prefixed, NameRule::Prefix)? {
        return Ok(found);
    }

    let mut scored: Vec<(usize, usize)> = keys
        .iter()
        .enumerate()
        .filter_map(|(i, key)| wanted.typo_distance(key).map(|d| (d, i)))
        .collect();
    scored.sort_unstable();
    if let Some(&(best, index)) = scored.first() {
        let runner_up = scored.get(1).map_or(usize::MAX, |(d, _)| *d);
        if runner_up < best + TYPO_MARGIN {
            let candidates = scored
                .iter()
                .take_while(|(d, _)| *d < best + TYPO_MARGIN)
                .map(|(_, i)| tools[*i].name.to_owned())
                .collect();
            return Err(NameError::Ambiguous {
                requested: requested.to_owned(),
                candidates,
            });
        }
        return pick(requested, tools, &[index], NameRule::Typo)
            .map(|found| found.expect("one candidate"));
    }
    Err(NameError::NotFound {
        requested: requested.to_owned(),
    })
}

/// One match is the answer (unless it is gated), several are ambiguous, none moves on.
fn pick(
    requested: &str,
    tools: &[NameCandidate<'_>],
    matches: &[usize],
    rule: NameRule,
) -> Result<Option<(usize, NameRule)>, NameError> {
    match matches {
        [] => Ok(None),
        [i] if tools[*i].needs_approval => Err(NameError::ApprovalGated {
            requested: requested.to_owned(),
            tool: tools[*i].name.to_owned(),
        }),
        [i] => Ok(Some((*i, rule))),
        several => Err(NameError::Ambiguous {
            requested: requested.to_owned(),
            candidates: several.iter().map(|&i| tools[i].name.to_owned()).collect(),
        }),
    }
}

/// A name reduced for comparison: lower-case letters and digits only (`Read-File`, `readFile`
/// and `READ_FILE` are one key), whole and split at namespace delimiters (`__`, `.`, `/`, `:`).
#[derive(Debug)]
struct Key {
    full: String,
    last: String,
    prefixes: Vec<String>,
}

impl Key {
    fn of(name: &str) -> Key {
        let mut segments: Vec<String> = name
            .split("__")
            .flat_map(|part| part.split(['.', '/', ':']))
            .map(squash)
            .filter(|s| !s.is_empty())
            .collect();
        let last = segments.pop().unwrap_or_default();
        Key {
            full: squash(name),
            last,
            prefixes: segments,
        }
    }

    fn has_prefix(&self) -> bool {
        !self.prefixes.is_empty()
    }

    /// Every prefix segment of this (requested) name is generic (`functions.`), or names a
    /// segment of the tool's own prefix, or the tool has no prefix at all: `github.create_issue`
    /// fits `mcp__github__create_issue`, `gitlab__create_issue` does not.
    fn prefix_fits(&self, tool: &Key) -> bool {
        !tool.has_prefix()
            || self
                .prefixes
                .iter()
                .all(|p| GENERIC_PREFIXES.contains(&p.as_str()) || tool.prefixes.contains(p))
    }

    /// Edits between the names (whole, or last segments when the prefixes fit), if few enough
    /// to count as a typo: 1 below ten characters, 2 from ten.
    fn typo_distance(&self, tool: &Key) -> Option<usize> {
        let mut best: Option<usize> = None;
        let mut consider = |a: &str, b: &str| {
            let len = a.chars().count();
            if len < MIN_TYPO_LEN {
                return;
            }
            let limit = if len >= 10 { 2 } else { 1 };
            let d = edit_distance(a, b);
            if d <= limit {
                best = Some(best.map_or(d, |b: usize| b.min(d)));
            }
        };
        consider(&self.full, &tool.full);
        if self.prefix_fits(tool) {
            consider(&self.last, &tool.last);
        }
        best
    }
}

fn squash(name: &str) -> String {
    name.chars()
        .filter(|c| c.is_alphanumeric())
        .flat_map(char::to_lowercase)
        .collect()
}

/// Optimal-string-alignment distance (Damerau–Levenshtein with adjacent transpositions).
fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    if a.is_empty() || b.is_empty() {
        return a.len().max(b.len());
    }
    let width = b.len() + 1;
    let mut rows = vec![0usize; width * (a.len() + 1)];
    for (j, cell) in rows.iter_mut().enumerate().take(width) {
        *cell = j;
    }
    for i in 1..=a.len() {
        rows[i * width] = i;
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut best = (rows[(i - 1) * width + j] + 1)
                .min(rows[i * width + j - 1] + 1)
                .min(rows[(i - 1) * width + j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                best = best.min(rows[(i - 2) * width + j - 2] + 1);
            }
            rows[i * width + j] = best;
        }
    }
    rows[a.len() * width + b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tools<'a>(names: &[&'a str]) -> Vec<NameCandidate<'a>> {
        names
            .iter()
            .map(|name| NameCandidate {
                name,
                needs_approval: name.starts_with("delete"),
            })
            .collect()
    }

    fn resolve(requested: &str, names: &[&str]) -> Result<(String, NameRule), NameError> {
        let set = tools(names);
        resolve_tool_name(requested, &set).map(|(i, rule)| (names[i].to_owned(), rule))
    }

    #[test]
    fn exact_then_case_and_separators() {
        let names = ["read_file", "write_file", "list_directory"];
        assert_eq!(
            resolve("read_file", &names),
            Ok(("read_file".into(), NameRule::Exact))
        );
        for variant in [
            "readFile",
            "ReadFile",
            "read-file",
            "READ_FILE",
            "read.file",
            "Read File",
        ] {
            assert_eq!(
                resolve(variant, &names),
                Ok(("read_file".into(), NameRule::CaseOrSeparator)),
                "{variant}"
            );
        }
        assert_eq!(Key::of("mcp__gh.Get-HTTP_status").prefixes, ["mcp", "gh"]);
        assert_eq!(Key::of("mcp__gh.Get-HTTP_status").last, "gethttpstatus");
    }

    #[test]
    fn namespace_prefixes_added_or_dropped() {
        let names = [
            "mcp__github__create_issue",
            "mcp__github__list_issues",
            "search",
        ];
        for variant in [
            "create_issue",
            "functions.create_issue",
            "github.create_issue",
            "github__createIssue",
        ] {
            assert_eq!(
                resolve(variant, &names),
                Ok(("mcp__github__create_issue".into(), NameRule::Prefix)),
                "{variant}"
            );
        }
        assert_eq!(
            resolve("functions.search", &names),
            Ok(("search".into(), NameRule::Prefix))
        );
        // An extra server prefix on a tool that has none.
        assert_eq!(
            resolve("mcp__local__read_file", &["read_file", "write_file"]),
            Ok(("read_file".into(), NameRule::Prefix))
        );
        // A different server's namespace is not ours to guess.
        assert!(matches!(
            resolve("gitlab__create_issue", &names),
            Err(NameError::NotFound { .. })
        ));
        // The same bare name on two servers.
        assert!(matches!(
            resolve("read_file", &["mcp__a__read_file", "mcp__b__read_file"]),
            Err(NameError::Ambiguous { candidates, .. }) if candidates.len() == 2
        ));
    }

    #[test]
    fn typos_need_a_clear_winner() {
        let names = ["read_file", "write_file", "search_files", "list_directory"];
        assert_eq!(
            resolve("raed_file", &names),
            Ok(("read_file".into(), NameRule::Typo))
        );
        assert_eq!(
            resolve("list_directroy", &names),
            Ok(("list_directory".into(), NameRule::Typo))
        );
        assert_eq!(
            resolve("search_filez", &names),
            Ok(("search_files".into(), NameRule::Typo))
        );
        // A typo in the bare name of a prefixed tool.
        assert_eq!(
            resolve(
                "list_isseus",
                &["mcp__github__list_issues", "mcp__github__get_issue"]
            ),
            Ok(("mcp__github__list_issues".into(), NameRule::Typo))
        );
        // One edit from two tools.
        assert!(matches!(
            resolve("read_files", &["read_file", "read_filez"]),
            Err(NameError::Ambiguous { .. })
        ));
        // Too far, too short.
        assert!(matches!(
            resolve("fetch_url", &names),
            Err(NameError::NotFound { .. })
        ));
        assert!(matches!(
            resolve("gat", &["get", "set2"]),
            Err(NameError::NotFound { .. })
        ));
        assert!(matches!(
            resolve("anything", &[]),
            Err(NameError::NotFound { .. })
        ));
    }

    #[test]
    fn approval_gated_tools_need_their_exact_name() {
        let names = ["delete_file", "read_file"];
        assert_eq!(
            resolve("delete_file", &names),
            Ok(("delete_file".into(), NameRule::Exact))
        );
        for variant in ["deleteFile", "functions.delete_file", "delete_fille"] {
            assert!(
                matches!(
                    resolve(variant, &names),
                    Err(NameError::ApprovalGated { .. })
                ),
                "{variant}"
            );
        }
    }

    #[test]
    fn edit_distance_counts_transpositions_once() {
        assert_eq!(edit_distance("abc", "abc"), 0);
        assert_eq!(edit_distance("abc", "acb"), 1);
        assert_eq!(edit_distance("kitten", "sitting"), 3);
        assert_eq!(edit_distance("", "abc"), 3);
        assert_eq!(edit_distance("é", "e"), 1);
    }
}
