//! The tool-poisoning scanner: rules from [`crate::rules`] applied to every text of a tool, and
//! combined into findings at two levels.
//!
//! Level policy (why: single keywords are common in legitimate tools, combinations are not):
//! - **Strong evidence blocks on its own**: "ignore previous instructions" (unless the text is
//!   about detecting injections); asking to keep something from the user; hidden tag text, bidi
//!   reordering or a run of invisible characters; a sensitive file or a collected secret to be
//!   put into a call; a smuggling parameter (`sidenote`…) asking for files, secrets or the
//!   conversation; and any rule matching text that was hidden in invisible characters.
//! - **Combinations block**: any finding blocks when the tool also has a finding of another rule
//!   and one of the two is concealment, file-request, secret-request or parameter-smuggling.
//! - **Everything else warns**: a directive to the assistant, a prompt marker, a reference to
//!   another server's tool, a lone secret or file request — shown, not held.

use crate::fields::{Role, TextField, for_each_text_field};
use crate::hidden::{HiddenKind, HiddenRun, Stripped, show_hidden, strip_hidden};
use crate::rules::{
    ACCESS_VERB, ACQUIRE_VERB, CONTEXT_CONTENT, FILE_CONTENTS, FILL_VERB, HIGH_SECRET,
    META_DISCUSSION, OTHER_TOOLS, PHRASES, SECRET, SECRET_SOURCE, SENSITIVE_FILE, SENSITIVE_RULES,
    SMUGGLE_PARAMETER_NAMES, Signal, TARGET, USAGE_DIRECTIVE, ascii_boundaries, compile,
    prefilter_form,
};
use crate::text::{cut, excerpt};
use regex::{Regex, RegexSet, RegexSetBuilder};
use serde_json::Value;
use std::borrow::Cow;
use std::collections::{BTreeSet, HashMap};
use std::sync::{LazyLock, OnceLock};
use unicode_normalization::UnicodeNormalization;

/// How a finding is handled.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Level {
    /// Shown to the user; the tool stays available.
    Warn,
    /// Held like a rug-pull change until a human approves the tool.
    Block,
}

/// One piece of evidence that a tool definition is poisoned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    /// Block or warn.
    pub level: Level,
    /// Stable rule id: `hidden-unicode`, `model-instruction`, `concealment`, `secret-request`,
    /// `file-request`, `parameter-smuggling` or `cross-server-reference`.
    pub rule: &'static str,
    /// Where: `description`, `inputSchema/properties/sidenote/description`, `instructions`…
    pub field: String,
    /// The matched words with a little context; invisible characters shown as `[U+XXXX]`.
    pub excerpt: String,
    /// Which rule matched and why it matters, in words a user understands.
    pub explanation: String,
}

/// The highest level among `findings`, or `None` when there are none.
pub fn worst_level(findings: &[Finding]) -> Option<Level> {
    findings.iter().map(|finding| finding.level).max()
}

/// What the scanner knows beyond the tool itself.
#[derive(Debug, Default)]
pub struct ScanContext {
    /// The server whose tools are scanned.
    pub server: String,
    /// `(server, tool name)` of the other connected servers, for shadowing checks. Entries of
    /// `server` itself are ignored, so one list of every connected server's tools can be kept
    /// and `server` changed between scans.
    pub other_servers_tools: Vec<(String, String)>,
    /// Distinctive tool name (lower case) → servers having it; built on first use.
    by_name: OnceLock<HashMap<String, Vec<String>>>,
}

impl ScanContext {
    /// A context for scanning `server`'s tools next to the given tools of other servers.
    pub fn new(server: impl Into<String>, other_servers_tools: Vec<(String, String)>) -> Self {
        Self {
            server: server.into(),
            other_servers_tools,
            by_name: OnceLock::new(),
        }
    }

    /// Servers other than [`Self::server`] that have a tool named `name` (ASCII case ignored),
    /// unless `server` has one too: a name both share most likely means the server's own tool.
    fn other_servers_with(&self, name: &str) -> Option<&str> {
        let by_name = self.by_name.get_or_init(|| {
            let mut by_name: HashMap<String, Vec<String>> = HashMap::new();
            for (server, tool) in &self.other_servers_tools {
                if is_distinctive_name(tool) {
                    by_name
                        .entry(tool.to_ascii_lowercase())
                        .or_default()
                        .push(server.clone());
                }
            }
            by_name
        });
        let servers = by_name.get(&name.to_ascii_lowercase())?;
        if servers.contains(&self.server) {
            return None;
        }
        servers.first().map(String::as_str)
    }
}

/// Names like `search` or `fetch` are ordinary words in any description; only names that cannot
/// be prose (`send_email`, `list-repos`, `createIssue`) count as references.
fn is_distinctive_name(name: &str) -> bool {
    let hump = name
        .as_bytes()
        .windows(2)
        .any(|pair| pair[0].is_ascii_lowercase() && pair[1].is_ascii_uppercase());
    name.len() >= 5 && (name.contains('_') || name.contains('-') || hump)
}

/// Scans every text of a tool definition (name, title, description, and inside its schemas
/// every title, description, property name and data string).
pub fn scan_tool(tool: &Value, ctx: &ScanContext) -> Vec<Finding> {
    let own_name = tool.get("name").and_then(Value::as_str).unwrap_or("");
    let mut hits = Vec::new();
    for_each_text_field(tool, |field| {
        let path = Location::Tool(field);
        // Hidden characters are all outside ASCII, and most tool text is ASCII: no copy then.
        let stripped = (!field.text.is_ascii()).then(|| strip_hidden(field.text));
        if let Some(stripped) = &stripped {
            hidden_hit(path, field.text, stripped, &mut hits);
        }
        if field.role == Role::Name {
            return;
        }
        let text = match &stripped {
            Some(stripped) => normalise(&stripped.text),
            None => without_emphasis(Cow::Borrowed(field.text)),
        };
        let anchors = detect(&text, path, Scope::Tool, &mut hits);
        if let Some(stripped) = &stripped {
            detect_smuggled(stripped, path, Scope::Tool, &mut hits);
        }
        // Parameter smuggling needs one of the anchors' objects (a file, secret, conversation).
        if let Some(property) = field
            .property
            .filter(|_| anchors.sensitive_object && field.is_description())
        {
            parameter_smuggling(property, &text, path, &mut hits);
        }
        cross_server(&text, path, own_name, ctx, anchors.other_tools, &mut hits);
    });
    findings(hits)
}

/// Scans a server's `instructions`. They are written for the model, so commands to the
/// assistant are expected there and not reported; every other rule applies.
pub fn scan_instructions(text: &str, ctx: &ScanContext) -> Vec<Finding> {
    let path = Location::Instructions;
    let mut hits = Vec::new();
    let stripped = strip_hidden(text);
    hidden_hit(path, text, &stripped, &mut hits);
    let normalised = normalise(&stripped.text);
    let anchors = detect(&normalised, path, Scope::Instructions, &mut hits);
    detect_smuggled(&stripped, path, Scope::Instructions, &mut hits);
    cross_server(&normalised, path, "", ctx, anchors.other_tools, &mut hits);
    findings(hits)
}

/// Where a text is; turned into a display path only when a rule matches.
#[derive(Clone, Copy)]
enum Location<'a> {
    Tool(&'a TextField<'a, 'a>),
    Instructions,
}

impl Location<'_> {
    fn path(self) -> String {
        match self {
            Location::Tool(field) => field.path(),
            Location::Instructions => "instructions".to_owned(),
        }
    }
}

/// Which texts a rule applies to.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Scope {
    Tool,
    Instructions,
}

/// Evidence before levels are decided.
struct Hit {
    signal: Signal,
    field: String,
    excerpt: String,
    why: String,
    strong: bool,
    /// Found in text about detecting attacks (a scanner quoting what it flags): never held
    /// because of another rule's finding, only for what is strong on its own.
    discussed: bool,
}

struct Matchers {
    /// Every phrase, then the anchors below, in one pass: most texts match nothing.
    prefilter: RegexSet,
    phrases: Vec<Regex>,
    sensitive_file: Regex,
    secret: Regex,
    context_content: Regex,
    other_tools: Regex,
    access_verb: Regex,
    fill_verb: Regex,
    target: Regex,
    high_secret: Regex,
    acquire_verb: Regex,
    secret_source: Regex,
    file_contents: Regex,
    meta_discussion: Regex,
    usage_directive: Regex,
    asks_for_content: Regex,
}

/// Anchors follow the phrases in the prefilter, in this order.
const ANCHORS: [&str; 5] = [
    SENSITIVE_FILE,
    SECRET,
    CONTEXT_CONTENT,
    OTHER_TOOLS,
    FILE_CONTENTS,
];
const ANCHOR_FILE: usize = 0;
const ANCHOR_SECRET: usize = 1;
const ANCHOR_CONTEXT: usize = 2;
const ANCHOR_OTHER_TOOLS: usize = 3;
const ANCHOR_FILE_CONTENTS: usize = 4;

/// What the prefilter pass saw in a text beyond the phrases, so later checks run only if needed.
#[derive(Clone, Copy, Default)]
struct Anchors {
    /// A file, secret, conversation or file-contents word: parameter smuggling is possible.
    sensitive_object: bool,
    /// "other tools" / 其他工具: generic cross-server references are possible.
    other_tools: bool,
}

static MATCHERS: LazyLock<Matchers> = LazyLock::new(|| {
    let sources: Vec<String> = PHRASES
        .iter()
        .map(|phrase| prefilter_form(phrase.pattern))
        .chain(ANCHORS.map(str::to_owned))
        .map(|pattern| ascii_boundaries(&pattern))
        .collect();
    Matchers {
        // A larger lazy-DFA cache than the default: the union of all rules has many states,
        // and rebuilding them after each cache clear was a visible part of the scan time.
        prefilter: RegexSetBuilder::new(&sources)
            .dfa_size_limit(64 << 20)
            .build()
            .expect("rule patterns are valid"),
        phrases: PHRASES
            .iter()
            .map(|phrase| compile(phrase.pattern))
            .collect(),
        sensitive_file: compile(SENSITIVE_FILE),
        secret: compile(SECRET),
        context_content: compile(CONTEXT_CONTENT),
        other_tools: compile(OTHER_TOOLS),
        access_verb: compile(ACCESS_VERB),
        fill_verb: compile(FILL_VERB),
        target: compile(TARGET),
        high_secret: compile(HIGH_SECRET),
        acquire_verb: compile(ACQUIRE_VERB),
        secret_source: compile(SECRET_SOURCE),
        file_contents: compile(FILE_CONTENTS),
        meta_discussion: compile(META_DISCUSSION),
        usage_directive: compile(USAGE_DIRECTIVE),
        asks_for_content: compile(r"\b(?:contents?|text)\b|内容"),
    }
});

/// Text as the rules see it: NFKC (full-width letters and punctuation become ASCII) and
/// Markdown emphasis removed, so `**do not** tell the user` matches like plain text.
fn normalise(text: &str) -> Cow<'_, str> {
    let already_nfkc = text.is_ascii()
        || unicode_normalization::is_nfkc_quick(text.chars())
            == unicode_normalization::IsNormalized::Yes;
    if already_nfkc {
        without_emphasis(Cow::Borrowed(text))
    } else {
        without_emphasis(Cow::Owned(text.nfkc().collect()))
    }
}

/// The Markdown half of [`normalise`], alone for ASCII text (which NFKC leaves unchanged).
fn without_emphasis(text: Cow<'_, str>) -> Cow<'_, str> {
    if text.contains('*') {
        Cow::Owned(text.replace('*', " "))
    } else {
        text
    }
}

/// Runs the phrase and combination rules on one text; returns what else it may contain.
fn detect(text: &str, field: Location, scope: Scope, hits: &mut Vec<Hit>) -> Anchors {
    let matchers = &*MATCHERS;
    let matched = matchers.prefilter.matches(text);
    if !matched.matched_any() {
        return Anchors::default();
    }
    let first = hits.len();
    let discussed = matchers.meta_discussion.is_match(text);
    for (index, phrase) in PHRASES.iter().enumerate() {
        if !matched.matched(index) {
            continue;
        }
        if scope == Scope::Instructions
            && matches!(phrase.signal, Signal::Marker | Signal::Directive)
        {
            continue;
        }
        let Some(found) = matchers.phrases[index].find(text) else {
            continue;
        };
        // Overrides block unless the text discusses injections; concealment blocks on its own
        // (none of the ~11k real catalog tools asks to keep something from the user) unless a
        // text about injections quotes it.
        let strong = match phrase.signal {
            Signal::Override => !discussed,
            Signal::Conceal => !(discussed && quoted(text, found.start(), found.end())),
            _ => false,
        };
        hits.push(Hit {
            signal: phrase.signal,
            field: field.path(),
            excerpt: excerpt(text, found.start(), found.end()),
            why: phrase.why.to_owned(),
            strong,
            discussed: false,
        });
    }
    let anchor = |which: usize| matched.matched(PHRASES.len() + which);
    if anchor(ANCHOR_FILE) {
        file_request(text, field, hits);
    }
    if anchor(ANCHOR_SECRET) {
        secret_request(text, field, hits);
    }
    if anchor(ANCHOR_CONTEXT) {
        context_request(text, field, hits);
    }
    if discussed {
        for hit in &mut hits[first..] {
            hit.discussed = true;
        }
    }
    Anchors {
        sensitive_object: [
            ANCHOR_FILE,
            ANCHOR_SECRET,
            ANCHOR_CONTEXT,
            ANCHOR_FILE_CONTENTS,
        ]
        .into_iter()
        .any(anchor),
        other_tools: anchor(ANCHOR_OTHER_TOOLS),
    }
}

/// Text decoded from tag characters or variation selectors goes through the same rules; since
/// it was hidden on purpose, whatever it says blocks.
fn detect_smuggled(stripped: &Stripped, field: Location, scope: Scope, hits: &mut Vec<Hit>) {
    let smuggled = stripped.smuggled_text();
    if smuggled.is_empty() {
        return;
    }
    let first = hits.len();
    detect(&normalise(&smuggled), field, scope, hits);
    for hit in &mut hits[first..] {
        hit.strong = true;
        hit.why = format!("(hidden in invisible characters) {}", hit.why);
    }
}

fn file_request(text: &str, field: Location, hits: &mut Vec<Hit>) {
    let matchers = &*MATCHERS;
    let mut best: Option<Hit> = None;
    for found in matchers.sensitive_file.find_iter(text) {
        let (start, end) = sentence_at(text, found.start(), found.end());
        if !affirmed(&matchers.access_verb, text, start, end) {
            continue;
        }
        // "…read ~/.ssh/id_rsa. Then put it in the notes field" spans two sentences.
        let (_, window_end) = sentence_at(text, end, end);
        let window = &text[start..window_end];
        let strong = matchers.fill_verb.is_match(window) && matchers.target.is_match(window);
        let why = if strong {
            "asks the assistant to read a sensitive file and put its contents into a tool call"
        } else {
            "asks the assistant to read or send a sensitive file (keys, credentials, other tools' configuration)"
        };
        let hit = Hit {
            signal: Signal::FileAccess,
            field: field.path(),
            excerpt: excerpt(text, found.start(), found.end()),
            why: format!("{why}: {}", whole_token(text, found.start(), found.end())),
            strong,
            discussed: false,
        };
        let stronger = strong && !best.as_ref().is_some_and(|hit| hit.strong);
        if best.is_none() || stronger {
            best = Some(hit);
        }
    }
    hits.extend(best);
}

fn secret_request(text: &str, field: Location, hits: &mut Vec<Hit>) {
    let matchers = &*MATCHERS;
    let mut best: Option<Hit> = None;
    for found in matchers.secret.find_iter(text) {
        let (start, end) = sentence_at(text, found.start(), found.end());
        let sentence = &text[start..end];
        let acquired_before = affirmed(&matchers.acquire_verb, text, start, found.start());
        // An environment variable's name (OPENAI_API_KEY) says where the secret is.
        let from_somewhere = matchers.secret_source.is_match(sentence)
            || matchers
                .secret
                .find_iter(sentence)
                .any(|secret| is_environment_name(secret.as_str()));
        let high = matchers.high_secret.is_match(found.as_str());
        let into_call =
            affirmed(&matchers.fill_verb, text, start, end) && matchers.target.is_match(sentence);
        // Collected (or sent) and either taken from somewhere or one no tool needs.
        let requested = (acquired_before || into_call) && (from_somewhere || high);
        if !requested {
            continue;
        }
        // Collected and put into the call: that is exfiltration, not configuration.
        let strong = (high || (acquired_before && from_somewhere)) && into_call;
        if best.as_ref().is_some_and(|hit| hit.strong || !strong) {
            continue;
        }
        best = Some(Hit {
            signal: Signal::SecretAcquire,
            field: field.path(),
            excerpt: excerpt(text, found.start(), found.end()),
            why: format!(
                "asks the assistant to collect a secret ({}) from the user's machine, the conversation or other tools",
                whole_token(text, found.start(), found.end())
            ),
            strong,
            discussed: false,
        });
    }
    hits.extend(best);
}

fn context_request(text: &str, field: Location, hits: &mut Vec<Hit>) {
    let matchers = &*MATCHERS;
    for found in matchers.context_content.find_iter(text) {
        let (start, end) = sentence_at(text, found.start(), found.end());
        if matchers.fill_verb.is_match(&text[start..end]) {
            hits.push(Hit {
                signal: Signal::ContextRequest,
                field: field.path(),
                excerpt: excerpt(text, found.start(), found.end()),
                why: format!(
                    "asks for content that is not this tool's input ({}) to be put into the call",
                    found.as_str()
                ),
                strong: false,
                discussed: false,
            });
            return;
        }
    }
}

/// A parameter whose description asks for files, secrets or the conversation: blocked when the
/// parameter is a classic carrier (`sidenote`, `notes`, `context`…) or the content is a file.
fn parameter_smuggling(property: &str, text: &str, field: Location, hits: &mut Vec<Hit>) {
    let matchers = &*MATCHERS;
    let key: String = property
        .chars()
        .filter(|c| !matches!(c, '_' | '-'))
        .flat_map(char::to_lowercase)
        .collect();
    let carrier = SMUGGLE_PARAMETER_NAMES.contains(&key.as_str());
    // A parameter that takes a path to a key file is configuration, not smuggling.
    let takes_path = ["path", "file", "dir"]
        .iter()
        .any(|part| key.contains(part));
    let file = matchers
        .sensitive_file
        .find(text)
        .filter(|_| carrier || !takes_path);
    let file_content = file.is_some() && (carrier || matchers.asks_for_content.is_match(text));
    let context = matchers.context_content.find(text);
    let high = matchers.high_secret.find(text);
    let contents = matchers.file_contents.find(text).filter(|_| carrier);
    let Some(object) = file
        .filter(|_| file_content)
        .or(context)
        .or(high)
        .or(contents)
    else {
        return;
    };
    if !(carrier || matchers.fill_verb.is_match(text)) {
        return;
    }
    let strong =
        file_content || (carrier && (context.is_some() || high.is_some() || contents.is_some()));
    let why = if carrier {
        format!(
            "of parameter \"{property}\" asks for {} — content unrelated to the tool's job, which would leave with the call",
            object.as_str()
        )
    } else {
        format!(
            "of parameter \"{property}\" asks for {}, which is not normally a tool's input",
            object.as_str()
        )
    };
    hits.push(Hit {
        signal: Signal::ParamSmuggle,
        field: field.path(),
        excerpt: excerpt(text, object.start(), object.end()),
        why,
        strong,
        discussed: false,
    });
}

/// Another server's tool named in a sentence that also says how it must be used (shadowing).
fn cross_server(
    text: &str,
    field: Location,
    own_name: &str,
    ctx: &ScanContext,
    names_other_tools: bool,
    hits: &mut Vec<Hit>,
) {
    let matchers = &*MATCHERS;
    let mut push = |start: usize, end: usize, why: String| {
        // The directive may follow in the next sentence ("X is deprecated; always call Y").
        let (sentence_start, end_of_first) = sentence_at(text, start, end);
        let (_, sentence_end) = sentence_at(text, end_of_first, end_of_first);
        if !matchers
            .usage_directive
            .is_match(&text[sentence_start..sentence_end])
        {
            return false;
        }
        hits.push(Hit {
            signal: Signal::CrossServer,
            field: field.path(),
            excerpt: excerpt(text, start, end),
            why,
            strong: false,
            discussed: false,
        });
        true
    };
    if !ctx.other_servers_tools.is_empty() {
        for (start, end) in name_like_tokens(text) {
            let name = &text[start..end];
            if name.eq_ignore_ascii_case(own_name) {
                continue;
            }
            if let Some(server) = ctx.other_servers_with(name) {
                let why = format!(
                    "names the tool {name} of another server ({server}) and tells the assistant how to use it, which can redirect that tool's calls"
                );
                if push(start, end, why) {
                    return;
                }
            }
        }
    }
    if names_other_tools && let Some(found) = matchers.other_tools.find(text) {
        let why = "tells the assistant how to use other tools or servers".to_owned();
        push(found.start(), found.end(), why);
    }
}

/// `OPENAI_API_KEY`, `GH_TOKEN`: upper case, digits and at least one `_`.
fn is_environment_name(word: &str) -> bool {
    word.contains('_')
        && word
            .bytes()
            .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_')
}

/// Byte classes for [`name_like_tokens`]: one table load per byte instead of a chain of
/// comparisons (the tokenizer runs over every byte of every text).
const WORD: u8 = 1;
const JOINER: u8 = 2;
const LOWER: u8 = 4;
const UPPER: u8 = 8;
const BYTE_CLASSES: [u8; 256] = {
    let mut classes = [0; 256];
    let mut byte = 0;
    while byte < 256 {
        let b = byte as u8;
        classes[byte] = if b == b'_' || b == b'-' {
            WORD | JOINER
        } else if b.is_ascii_lowercase() {
            WORD | LOWER
        } else if b.is_ascii_uppercase() {
            WORD | UPPER
        } else if b.is_ascii_digit() {
            WORD
        } else {
            0
        };
        byte += 1;
    }
    classes
};

/// Byte ranges of the words of `text` that could be tool names (see [`is_distinctive_name`]):
/// runs of ASCII letters, digits, `_` and `-`. A hand-written scan: it runs on every text and is
/// several times faster than a regex tokenizer.
fn name_like_tokens(text: &str) -> impl Iterator<Item = (usize, usize)> + '_ {
    let bytes = text.as_bytes();
    let mut at = 0;
    std::iter::from_fn(move || {
        while at < bytes.len() {
            let start = at;
            // One pass per word: most words have no separator and no hump, and are skipped
            // without building a slice.
            let mut joined = false;
            let mut previous = 0u8;
            while let Some(&byte) = bytes.get(at) {
                let class = BYTE_CLASSES[usize::from(byte)];
                if class == 0 {
                    break;
                }
                // A separator, or a lower-case letter followed by an upper-case one.
                joined |= class & JOINER != 0 || (previous & LOWER != 0 && class & UPPER != 0);
                previous = class;
                at += 1;
            }
            if joined && at - start >= 5 {
                let word = text[start..at].trim_start_matches(['_', '-']);
                let word_start = at - word.len();
                let word = word.trim_end_matches(['_', '-']);
                if is_distinctive_name(word) {
                    return Some((word_start, word_start + word.len()));
                }
            }
            at += 1;
        }
        None
    })
}

/// One finding per field for its invisible characters, unless every run is a recognised
/// legitimate use.
fn hidden_hit(field: Location, original: &str, stripped: &Stripped, hits: &mut Vec<Hit>) {
    let suspicious: Vec<&HiddenRun> = stripped
        .removed
        .iter()
        .filter(|run| run.legitimate_use.is_none())
        .collect();
    let Some(first) = suspicious.first() else {
        return;
    };
    let strong_run = suspicious.iter().find(|run| is_strong_run(run));
    let shown = strong_run.unwrap_or(first);
    let count: usize = suspicious.iter().map(|run| run.chars.chars().count()).sum();
    let mut why = format!(
        "contains {count} invisible character{} ({}) that the user cannot see but the model reads",
        if count == 1 { "" } else { "s" },
        kind_name(shown.kind)
    );
    if let Some(decoded) = suspicious.iter().find_map(|run| run.decoded.as_deref()) {
        why.push_str(&format!("; they spell out \"{}\"", cut(decoded, 200)));
    }
    let end = shown.offset + shown.chars.len();
    let before = excerpt(&original[..shown.offset], shown.offset, shown.offset);
    let after = excerpt(&original[end..], 0, 0);
    let run_start: String = shown.chars.chars().take(12).collect();
    let more = if shown.chars.chars().count() > 12 {
        "…"
    } else {
        ""
    };
    let shown_excerpt = format!(
        "{}{}{more}{}",
        show_hidden(&before),
        show_hidden(&run_start),
        show_hidden(&after)
    );
    hits.push(Hit {
        signal: Signal::Hidden,
        field: field.path(),
        excerpt: shown_excerpt,
        why,
        strong: strong_run.is_some(),
        discussed: false,
    });
}

/// Runs that carry or reorder text: tag characters that decode, bidi embeddings/overrides/
/// isolates (a lone LRM/RLM/ALM mark cannot reorder words and only warns), variation-selector
/// payloads, and four or more zero-width or invisible characters in a row (enough for a byte).
fn is_strong_run(run: &HiddenRun) -> bool {
    let length = run.chars.chars().count();
    match run.kind {
        HiddenKind::Tag | HiddenKind::VariationSelector => run.decoded.is_some(),
        HiddenKind::Bidi => run
            .chars
            .chars()
            .any(|c| !matches!(c, '\u{200E}' | '\u{200F}' | '\u{061C}')),
        HiddenKind::ZeroWidth | HiddenKind::Invisible => length >= 4,
    }
}

fn kind_name(kind: HiddenKind) -> &'static str {
    match kind {
        HiddenKind::Tag => "Unicode tag characters",
        HiddenKind::ZeroWidth => "zero-width characters",
        HiddenKind::Bidi => "bidirectional controls",
        HiddenKind::VariationSelector => "variation selectors",
        HiddenKind::Invisible => "invisible format characters",
    }
}

/// The whitespace- or quote-delimited token around `start..end`: the whole path
/// `~/.cursor/mcp.json` when the rule matched `.cursor/`.
fn whole_token(text: &str, start: usize, end: usize) -> &str {
    let is_delimiter = |c: char| c.is_whitespace() || "`'\"()[]<>,;，。".contains(c);
    let token_start = text[..start]
        .char_indices()
        .rev()
        .find(|&(_, c)| is_delimiter(c))
        .map_or(0, |(at, c)| at + c.len_utf8());
    let token_end = text[end..]
        .char_indices()
        .find(|&(_, c)| is_delimiter(c))
        .map_or(text.len(), |(at, _)| end + at);
    text[token_start.min(start)..token_end.max(end)].trim()
}

/// Byte range of the sentence around `start..end`. A `.` only ends a sentence before
/// whitespace (paths and versions contain dots); `!`, `?`, `;`, `。` and newlines always do.
/// Whether `text[start..end]` stands in quotation marks (a phrase quoted, not said).
fn quoted(text: &str, start: usize, end: usize) -> bool {
    let before = text[..start].trim_end().chars().next_back();
    let after = text[end..].trim_start().chars().next();
    before.is_some_and(|c| "\"'`“‘「『«".contains(c))
        || after.is_some_and(|c| "\"'`”’」』»".contains(c))
}

/// Whether `verbs` matches in `text[start..end]` other than negated ("does not read or
/// upload", 不会读取或上传): a tool saying what it never does asks for nothing. Only a negation
/// right before the verb (or before the verb it is joined to by "or") counts, so "do not forget
/// to read" is still a request.
fn affirmed(verbs: &Regex, text: &str, start: usize, end: usize) -> bool {
    static NEGATED: LazyLock<Regex> = LazyLock::new(|| {
        crate::rules::compile(
            r"(?:\b(?:not|never|no\s+longer|without)|n't)\s+(?:\w+\s+(?:or|and|nor)\s+)?$|(?:不会|不得|绝不|从不|从未|并不|不再|无需|禁止|切勿|不要|不能|不|未)(?:\p{Han}{1,4}(?:或|和|及|、|与))?$",
        )
    });
    verbs
        .find_iter(&text[start..end])
        .any(|verb| !NEGATED.is_match(&text[start..start + verb.start()]))
}

fn sentence_at(text: &str, start: usize, end: usize) -> (usize, usize) {
    let ends_sentence = |at: usize, c: char| match c {
        '。' | '!' | '?' | ';' | '\n' => true,
        '.' => text[at + 1..]
            .chars()
            .next()
            .is_none_or(char::is_whitespace),
        _ => false,
    };
    let sentence_start = text[..start]
        .char_indices()
        .rev()
        .find(|&(at, c)| ends_sentence(at, c))
        .map_or(0, |(at, c)| at + c.len_utf8());
    let sentence_end = text[end..]
        .char_indices()
        .find(|&(at, c)| ends_sentence(end + at, c))
        .map_or(text.len(), |(at, c)| end + at + c.len_utf8());
    (sentence_start, sentence_end)
}

/// Levels per the module's policy; one finding per rule and field.
fn findings(hits: Vec<Hit>) -> Vec<Finding> {
    let rules: BTreeSet<&'static str> = hits
        .iter()
        .filter(|hit| !hit.discussed)
        .map(|hit| hit.signal.rule())
        .collect();
    let sensitive = rules.iter().any(|rule| SENSITIVE_RULES.contains(rule));
    let combined = sensitive && rules.len() >= 2;
    let mut findings: Vec<Finding> = Vec::new();
    // Strong hits first, so the finding kept per rule and field explains the strongest one.
    let mut hits = hits;
    hits.sort_by_key(|hit| !hit.strong);
    for hit in hits {
        let rule = hit.signal.rule();
        let escalated = combined && !hit.discussed;
        let level = if hit.strong || escalated {
            Level::Block
        } else {
            Level::Warn
        };
        if let Some(existing) = findings
            .iter_mut()
            .find(|finding| finding.rule == rule && finding.field == hit.field)
        {
            existing.level = existing.level.max(level);
            continue;
        }
        let handling = if hit.strong {
            "Held for approval: this is rarely if ever legitimate.".to_owned()
        } else if escalated {
            let others: Vec<&str> = rules
                .iter()
                .copied()
                .filter(|other| *other != rule)
                .collect();
            format!(
                "Held for approval because the same tool also has: {}.",
                others.join(", ")
            )
        } else {
            "Shown as a warning: on its own this also appears in legitimate tools.".to_owned()
        };
        findings.push(Finding {
            level,
            rule,
            field: hit.field,
            excerpt: show_hidden(&hit.excerpt),
            explanation: format!("{rule}: the text {}. {handling}", hit.why),
        });
    }
    findings.sort_by(|a, b| b.level.cmp(&a.level).then_with(|| a.field.cmp(&b.field)));
    findings
}
