//! A forgiving JSON reader for tool arguments written by a model.
//!
//! It reads what models actually emit when they get JSON wrong: code fences, prose around the
//! value, trailing or missing commas, single and smart quotes, unquoted keys, comments, Python
//! literals, `NaN`/`Infinity`, raw newlines and control characters inside strings, and output cut
//! off mid-value (open strings and brackets are closed where the text stops). Every deviation
//! it forgives is recorded as a [`Leniency`], so the caller can report what was fixed.
//!
//! The reader never loops without consuming input and refuses nesting deeper than
//! [`MAX_DEPTH`], so hostile text cannot hang it or overflow the stack.

use std::collections::BTreeSet;
use std::fmt;

use serde_json::{Map, Number, Value};

/// Containers nested deeper than this are refused (real tool arguments are shallow).
pub const MAX_DEPTH: usize = 128;

/// One kind of deviation from strict JSON that the reader forgave.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Leniency {
    /// The value sat inside a Markdown code fence.
    CodeFence,
    /// Text before or after the value was ignored.
    SurroundingText,
    /// A comma before `}` or `]`, or a doubled comma.
    TrailingComma,
    /// Two members or elements with no comma between them.
    MissingComma,
    /// A string in single quotes.
    SingleQuotes,
    /// A string in typographic quotes (`“…”`, `‘…’`).
    SmartQuotes,
    /// An object key without quotes.
    UnquotedKey,
    /// A `//`, `/* */` or `#` comment.
    Comment,
    /// Python `True`, `False`, `None` (or JS `undefined`).
    PythonLiteral,
    /// `NaN` or `Infinity`, read as `null` (JSON has no such numbers).
    NonFiniteNumber,
    /// A number JSON does not allow (`+1`, `.5`, `1.`, `007`).
    LooseNumber,
    /// A raw newline, tab or other control character inside a string.
    RawControlCharacter,
    /// An escape JSON does not define (`\'`, `\d`), kept as written.
    InvalidEscape,
    /// A quote inside a string that does not end it (`"say "hi" now"`).
    UnescapedQuote,
    /// The text ended inside the value; open strings and brackets were closed there.
    Truncated,
}

impl Leniency {
    /// Stable kebab-case name, used in repair reports.
    pub fn as_str(self) -> &'static str {
        match self {
            Leniency::CodeFence => "code-fence",
            Leniency::SurroundingText => "surrounding-text",
            Leniency::TrailingComma => "trailing-comma",
            Leniency::MissingComma => "missing-comma",
            Leniency::SingleQuotes => "single-quotes",
            Leniency::SmartQuotes => "smart-quotes",
            Leniency::UnquotedKey => "unquoted-key",
            Leniency::Comment => "comment",
            Leniency::PythonLiteral => "python-literal",
            Leniency::NonFiniteNumber => "non-finite-number",
            Leniency::LooseNumber => "loose-number",
            Leniency::RawControlCharacter => "raw-control-character",
            Leniency::InvalidEscape => "invalid-escape",
            Leniency::UnescapedQuote => "unescaped-quote",
            Leniency::Truncated => "truncated",
        }
    }
}

impl fmt::Display for Leniency {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A value read leniently, with what had to be forgiven to read it (empty for strict JSON).
#[derive(Debug, Clone, PartialEq)]
pub struct LenientValue {
    pub value: Value,
    pub fixes: BTreeSet<Leniency>,
}

/// Why the text could not be read even leniently.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LenientError {
    /// Only whitespace, comments or a fence with nothing in it.
    #[error("the text holds no JSON value")]
    Empty,
    /// A character that cannot start or continue a value where it stands.
    #[error("unexpected {found:?} at byte {at}")]
    Unexpected { found: char, at: usize },
    /// Containers nested deeper than [`MAX_DEPTH`].
    #[error("the value nests deeper than {limit} levels")]
    TooDeep { limit: usize },
}

/// Reads `text` as JSON, strictly if it is valid and leniently otherwise.
pub fn read_lenient(text: &str) -> Result<LenientValue, LenientError> {
    if let Ok(value) = serde_json::from_str::<Value>(text) {
        return Ok(LenientValue {
            value,
            fixes: BTreeSet::new(),
        });
    }
    let mut fixes = BTreeSet::new();
    let body = match strip_code_fence(text) {
        Some(inner) => {
            fixes.insert(Leniency::CodeFence);
            inner
        }
        None => text,
    };
    let mut reader = Reader {
        src: body,
        pos: 0,
        fixes,
    };
    reader.skip_space();
    if reader.at_end() {
        return Err(LenientError::Empty);
    }
    // Prose before the value: tool arguments are an object (or an array), so start at the first
    // bracket unless the text starts with one.
    if !matches!(reader.peek(), Some('{' | '['))
        && let Some(offset) = body[reader.pos..].find(['{', '['])
    {
        reader.pos += offset;
        reader.fixes.insert(Leniency::SurroundingText);
    }
    let value = reader.value(0)?;
    reader.skip_space();
    if !reader.at_end() {
        reader.fixes.insert(Leniency::SurroundingText);
    }
    Ok(LenientValue {
        value,
        fixes: reader.fixes,
    })
}

/// The text inside the first Markdown code fence (up to the closing fence, or the end when the
/// output was cut off), or `None` when there is no fence.
fn strip_code_fence(text: &str) -> Option<&str> {
    let start = text.find("```")?;
    let after = &text[start + 3..];
    // The info string (`json`, `javascript`) runs to the end of the fence's line.
    let body = match after.find('\n') {
        Some(newline) => &after[newline + 1..],
        None => after.trim_start_matches(|c: char| c.is_ascii_alphanumeric()),
    };
    Some(match body.find("```") {
        Some(end) => &body[..end],
        None => body,
    })
}

struct Reader<'a> {
    src: &'a str,
    pos: usize,
    fixes: BTreeSet<Leniency>,
}

/// How a string was opened: decides which characters may close it.
#[derive(Clone, Copy)]
enum Quote {
    Double,
    Single,
    SmartDouble,
    SmartSingle,
}

impl Quote {
    fn of(c: char) -> Option<Quote> {
        match c {
            '"' => Some(Quote::Double),
            '\'' => Some(Quote::Single),
            '“' | '”' | '„' => Some(Quote::SmartDouble),
            '‘' | '’' => Some(Quote::SmartSingle),
            _ => None,
        }
    }

    fn closes(self, c: char) -> bool {
        match self {
            Quote::Double => c == '"',
            Quote::Single => c == '\'',
            Quote::SmartDouble => matches!(c, '”' | '“' | '"'),
            Quote::SmartSingle => matches!(c, '’' | '‘' | '\''),
        }
    }
}

impl<'a> Reader<'a> {
    fn peek(&self) -> Option<char> {
        self.src[self.pos..].chars().next()
    }

    fn at_end(&self) -> bool {
        self.pos >= self.src.len()
    }

    fn bump(&mut self) -> Option<char> {
        let c = self.peek()?;
        self.pos += c.len_utf8();
        Some(c)
    }

    fn fix(&mut self, leniency: Leniency) {
        self.fixes.insert(leniency);
    }

    fn unexpected(&self) -> LenientError {
        LenientError::Unexpected {
            found: self.peek().unwrap_or(' '),
            at: self.pos,
        }
    }

    /// Skips whitespace and comments.
    fn skip_space(&mut self) {
        loop {
            let rest = &self.src[self.pos..];
            let trimmed = rest.trim_start();
            self.pos += rest.len() - trimmed.len();
            if trimmed.starts_with("//") || trimmed.starts_with('#') {
                self.fix(Leniency::Comment);
                self.pos += trimmed.find('\n').unwrap_or(trimmed.len());
            } else if let Some(body) = trimmed.strip_prefix("/*") {
                self.fix(Leniency::Comment);
                self.pos += 2 + body.find("*/").map_or(body.len(), |end| end + 2);
            } else {
                return;
            }
        }
    }

    fn value(&mut self, depth: usize) -> Result<Value, LenientError> {
        self.skip_space();
        let Some(c) = self.peek() else {
            self.fix(Leniency::Truncated);
            return Ok(Value::Null);
        };
        match c {
            '{' | '[' if depth >= MAX_DEPTH => Err(LenientError::TooDeep { limit: MAX_DEPTH }),
            '{' => self.object(depth + 1),
            '[' => self.array(depth + 1),
            c if Quote::of(c).is_some() => Ok(Value::String(self.string(false))),
            c if c == '-' || c == '+' || c == '.' || c.is_ascii_digit() => self.number(),
            _ => self.word(),
        }
    }

    fn object(&mut self, depth: usize) -> Result<Value, LenientError> {
        self.bump(); // `{`
        let mut map = Map::new();
        let mut after_comma = false;
        while self.before_member('}', map.is_empty(), &mut after_comma) {
            let key = self.key()?;
            self.skip_space();
            match self.peek() {
                // Cut off after the key: the member never had a value.
                None => {
                    self.fix(Leniency::Truncated);
                    break;
                }
                Some(':') => {
                    self.bump();
                }
                Some(_) => return Err(self.unexpected()),
            }
            self.skip_space();
            if self.at_end() {
                self.fix(Leniency::Truncated);
                break;
            }
            let value = self.value(depth)?;
            map.insert(key, value);
            after_comma = self.after_member();
            match self.peek() {
                Some('}') | None => {}
                Some(c) if after_comma || Quote::of(c).is_some() || is_key_char(c) => {}
                Some(_) => return Err(self.unexpected()),
            }
        }
        Ok(Value::Object(map))
    }

    fn key(&mut self) -> Result<String, LenientError> {
        let c = self.peek().ok_or(LenientError::Empty)?;
        if Quote::of(c).is_some() {
            return Ok(self.string(true));
        }
        let start = self.pos;
        while self.peek().is_some_and(is_key_char) {
            self.bump();
        }
        if self.pos == start {
            return Err(self.unexpected());
        }
        self.fix(Leniency::UnquotedKey);
        Ok(self.src[start..self.pos].to_owned())
    }

    fn array(&mut self, depth: usize) -> Result<Value, LenientError> {
        self.bump(); // `[`
        let mut items = Vec::new();
        let mut after_comma = false;
        while self.before_member(']', items.is_empty(), &mut after_comma) {
            items.push(self.value(depth)?);
            after_comma = self.after_member();
        }
        Ok(Value::Array(items))
    }

    /// Before each member of an object or array: skips doubled commas, consumes the closing
    /// bracket, and says whether a member follows (not at the bracket, nor where the text ends:
    /// the container is closed there).
    fn before_member(&mut self, close: char, first: bool, after_comma: &mut bool) -> bool {
        loop {
            self.skip_space();
            match self.peek() {
                None => {
                    self.fix(Leniency::Truncated);
                    return false;
                }
                Some(c) if c == close => {
                    if *after_comma {
                        self.fix(Leniency::TrailingComma);
                    }
                    self.bump();
                    return false;
                }
                Some(',') => {
                    self.fix(Leniency::TrailingComma);
                    self.bump();
                    *after_comma = true;
                }
                Some(_) => {
                    if !first && !*after_comma {
                        self.fix(Leniency::MissingComma);
                    }
                    return true;
                }
            }
        }
    }

    /// After a member: consumes the comma that separates it from the next, if there is one.
    fn after_member(&mut self) -> bool {
        self.skip_space();
        let comma = self.peek() == Some(',');
        if comma {
            self.bump();
        }
        comma
    }

    /// Reads a quoted string; the reader stands on the opening quote. A key ends at its first
    /// closing quote; a value may contain quotes the model forgot to escape.
    fn string(&mut self, is_key: bool) -> String {
        let open = self.bump().and_then(Quote::of).unwrap_or(Quote::Double);
        match open {
            Quote::Single => self.fix(Leniency::SingleQuotes),
            Quote::SmartDouble | Quote::SmartSingle => self.fix(Leniency::SmartQuotes),
            Quote::Double => {}
        }
        let mut out = String::new();
        loop {
            let Some(c) = self.bump() else {
                self.fix(Leniency::Truncated);
                return out;
            };
            if open.closes(c) {
                if is_key || self.quote_ends_string() {
                    return out;
                }
                self.fix(Leniency::UnescapedQuote);
                out.push(c);
                continue;
            }
            match c {
                '\\' => self.escape(&mut out),
                c if (c as u32) < 0x20 => {
                    self.fix(Leniency::RawControlCharacter);
                    out.push(c);
                }
                c => out.push(c),
            }
        }
    }

    /// A closing quote ends the string only where a string may end: before `,` `:` `}` `]`,
    /// another quote, a comment or the end. Elsewhere it is a quote the model forgot to escape.
    fn quote_ends_string(&self) -> bool {
        let rest = self.src[self.pos..].trim_start();
        match rest.chars().next() {
            None => true,
            Some(c) => matches!(c, ',' | ':' | '}' | ']' | '/' | '#') || Quote::of(c).is_some(),
        }
    }

    fn escape(&mut self, out: &mut String) {
        let Some(c) = self.bump() else {
            // A lone backslash where the text was cut off.
            self.fix(Leniency::Truncated);
            return;
        };
        match c {
            '"' | '\\' | '/' => out.push(c),
            'b' => out.push('\u{8}'),
            'f' => out.push('\u{c}'),
            'n' => out.push('\n'),
            'r' => out.push('\r'),
            't' => out.push('\t'),
            'u' => match self.hex4() {
                Some(unit) => self.push_utf16(out, unit),
                None => {
                    self.fix(Leniency::InvalidEscape);
                    out.push_str("\\u");
                }
            },
            '\'' => {
                self.fix(Leniency::InvalidEscape);
                out.push('\'');
            }
            other => {
                self.fix(Leniency::InvalidEscape);
                out.push('\\');
                out.push(other);
            }
        }
    }

    fn hex4(&mut self) -> Option<u16> {
        let digits = self.src.get(self.pos..self.pos + 4)?;
        let unit = u16::from_str_radix(digits, 16).ok()?;
        if !digits.bytes().all(|b| b.is_ascii_hexdigit()) {
            return None;
        }
        self.pos += 4;
        Some(unit)
    }

    /// Appends a `\uXXXX` code unit, pairing surrogates; a lone surrogate becomes U+FFFD.
    fn push_utf16(&mut self, out: &mut String, unit: u16) {
        if (0xD800..0xDC00).contains(&unit) && self.src[self.pos..].starts_with("\\u") {
            let save = self.pos;
            self.pos += 2;
            if let Some(low) = self.hex4().filter(|low| (0xDC00..0xE000).contains(low)) {
                let code = 0x10000 + ((u32::from(unit) - 0xD800) << 10) + (u32::from(low) - 0xDC00);
                out.push(char::from_u32(code).unwrap_or('\u{FFFD}'));
                return;
            }
            self.pos = save;
        }
        out.push(char::from_u32(u32::from(unit)).unwrap_or('\u{FFFD}'));
    }

    fn number(&mut self) -> Result<Value, LenientError> {
        let start = self.pos;
        while self
            .peek()
            .is_some_and(|c| c.is_ascii_digit() || matches!(c, '-' | '+' | '.' | 'e' | 'E'))
        {
            self.bump();
        }
        let raw = &self.src[start..self.pos];
        // `-Infinity`, `+Infinity`.
        if raw == "-" || raw == "+" {
            if starts_with_word(&self.src[self.pos..], "Infinity") {
                self.pos += "Infinity".len();
                self.fix(Leniency::NonFiniteNumber);
                return Ok(Value::Null);
            }
            self.pos = start;
            return Err(self.unexpected());
        }
        if let Ok(Value::Number(n)) = serde_json::from_str::<Value>(raw) {
            return Ok(Value::Number(n));
        }
        let cleaned = raw.strip_prefix('+').unwrap_or(raw);
        let at_end = self.at_end();
        match cleaned.parse::<f64>() {
            Ok(f) if f.is_finite() => {
                self.fix(
                    if at_end && !cleaned.ends_with(|c: char| c.is_ascii_digit()) {
                        Leniency::Truncated
                    } else {
                        Leniency::LooseNumber
                    },
                );
                Ok(number_value(cleaned, f))
            }
            _ => {
                // `1e` or `-` where the text was cut off: keep the digits that made it.
                let digits = cleaned.trim_end_matches(['e', 'E', '+', '-', '.']);
                match digits.parse::<f64>() {
                    Ok(f) if at_end && f.is_finite() => {
                        self.fix(Leniency::Truncated);
                        Ok(number_value(digits, f))
                    }
                    _ => {
                        self.pos = start;
                        Err(self.unexpected())
                    }
                }
            }
        }
    }

    fn word(&mut self) -> Result<Value, LenientError> {
        let rest = &self.src[self.pos..];
        for (word, value, leniency) in WORDS {
            if starts_with_word(rest, word) {
                self.pos += word.len();
                if let Some(leniency) = leniency {
                    self.fix(leniency);
                }
                return Ok(value.clone());
            }
        }
        // A literal cut off mid-word (`tr`, `fals`, `nul`).
        if !rest.is_empty() && rest.chars().all(|c| c.is_ascii_alphabetic()) {
            for (word, value, _) in &WORDS[..3] {
                if word.starts_with(rest) {
                    self.pos = self.src.len();
                    self.fix(Leniency::Truncated);
                    return Ok(value.clone());
                }
            }
        }
        Err(self.unexpected())
    }
}

/// Bare words read as values: JSON's, then Python's and JS's, with the leniency each implies.
const WORDS: [(&str, Value, Option<Leniency>); 10] = [
    ("true", Value::Bool(true), None),
    ("false", Value::Bool(false), None),
    ("null", Value::Null, None),
    ("True", Value::Bool(true), Some(Leniency::PythonLiteral)),
    ("False", Value::Bool(false), Some(Leniency::PythonLiteral)),
    ("None", Value::Null, Some(Leniency::PythonLiteral)),
    ("undefined", Value::Null, Some(Leniency::PythonLiteral)),
    ("NaN", Value::Null, Some(Leniency::NonFiniteNumber)),
    ("Infinity", Value::Null, Some(Leniency::NonFiniteNumber)),
    ("inf", Value::Null, Some(Leniency::NonFiniteNumber)),
];

/// `word` at the start of `text`, not followed by more identifier characters.
fn starts_with_word(text: &str, word: &str) -> bool {
    text.starts_with(word)
        && !text[word.len()..]
            .chars()
            .next()
            .is_some_and(|c| c.is_alphanumeric() || c == '_')
}

fn is_key_char(c: char) -> bool {
    c.is_alphanumeric() || matches!(c, '_' | '$' | '-' | '.')
}

/// An integer stays an integer (`+7` → 7, `007` → 7); anything else is a float.
fn number_value(text: &str, f: f64) -> Value {
    let integral = text.bytes().all(|b| b.is_ascii_digit() || b == b'-');
    if integral {
        if let Ok(i) = text.parse::<i64>() {
            return Value::Number(i.into());
        }
        if let Ok(u) = text.parse::<u64>() {
            return Value::Number(u.into());
        }
    }
    Number::from_f64(f).map_or(Value::Null, Value::Number)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn read(text: &str) -> (Value, Vec<Leniency>) {
        let read = read_lenient(text).unwrap_or_else(|e| panic!("{text:?}: {e}"));
        (read.value, read.fixes.into_iter().collect())
    }

    #[test]
    fn strict_json_needs_no_fixes() {
        assert_eq!(
            read(r#"{"a": [1, 2.5, "x"]}"#),
            (json!({"a": [1, 2.5, "x"]}), vec![])
        );
        assert_eq!(read("  42 "), (json!(42), vec![]));
    }

    #[test]
    fn code_fences_and_prose() {
        use Leniency::*;
        assert_eq!(
            read("```json\n{\"path\": \"/tmp\"}\n```"),
            (json!({"path": "/tmp"}), vec![CodeFence])
        );
        assert_eq!(
            read("Sure! Here are the arguments: {\"q\": 1}. Let me know."),
            (json!({"q": 1}), vec![SurroundingText])
        );
        assert_eq!(
            read("```\n{\"q\": 1"),
            (json!({"q": 1}), vec![CodeFence, Truncated])
        );
        assert_eq!(read_lenient("```json\n```"), Err(LenientError::Empty));
    }

    #[test]
    fn commas_quotes_keys_comments() {
        use Leniency::*;
        assert_eq!(
            read("{'a': 'it's', b: [1,2,],}"),
            (
                json!({"a": "it's", "b": [1, 2]}),
                vec![TrailingComma, SingleQuotes, UnquotedKey, UnescapedQuote]
            )
        );
        assert_eq!(
            read("{\"a\": 1 \"b\": 2}"),
            (json!({"a": 1, "b": 2}), vec![MissingComma])
        );
        assert_eq!(
            read("{ // the path\n \"p\": \"x\" /* done */ }"),
            (json!({"p": "x"}), vec![Comment])
        );
        assert_eq!(
            read("{“name”: “Ada”}"),
            (json!({"name": "Ada"}), vec![SmartQuotes])
        );
        assert_eq!(
            read(r#"{"msg": "say "hi" now"}"#),
            (json!({"msg": "say \"hi\" now"}), vec![UnescapedQuote])
        );
    }

    #[test]
    fn literals_and_numbers() {
        use Leniency::*;
        assert_eq!(
            read("{\"a\": True, \"b\": None, \"c\": False}"),
            (
                json!({"a": true, "b": null, "c": false}),
                vec![PythonLiteral]
            )
        );
        assert_eq!(
            read("[NaN, -Infinity, Infinity]"),
            (json!([null, null, null]), vec![NonFiniteNumber])
        );
        assert_eq!(
            read("[+1, .5, 007, 2.]"),
            (json!([1, 0.5, 7, 2.0]), vec![LooseNumber])
        );
        assert_eq!(read("[18446744073709551615]").0, json!([u64::MAX]));
    }

    #[test]
    fn strings_with_raw_controls_and_odd_escapes() {
        use Leniency::*;
        assert_eq!(
            read("{\"code\": \"line1\nline2\tx\"}"),
            (
                json!({"code": "line1\nline2\tx"}),
                vec![RawControlCharacter]
            )
        );
        assert_eq!(
            read(r#"{"re": "\d+\'"}"#),
            (json!({"re": "\\d+'"}), vec![InvalidEscape])
        );
        assert_eq!(
            read(r#"["\ud83d\ude00", "\ud800x"]"#).0,
            json!(["😀", "\u{FFFD}x"])
        );
    }

    #[test]
    fn truncated_output_is_closed_in_place() {
        use Leniency::*;
        assert_eq!(
            read(r#"{"path": "/tmp/a", "content": "hello wor"#),
            (
                json!({"path": "/tmp/a", "content": "hello wor"}),
                vec![Truncated]
            )
        );
        assert_eq!(
            read(r#"{"a": [1, 2"#),
            (json!({"a": [1, 2]}), vec![Truncated])
        );
        assert_eq!(read(r#"{"a": 1, "b""#), (json!({"a": 1}), vec![Truncated]));
        assert_eq!(
            read(r#"{"a": 1, "b": "#),
            (json!({"a": 1}), vec![Truncated])
        );
        assert_eq!(read(r#"{"a": tr"#), (json!({"a": true}), vec![Truncated]));
        assert_eq!(read(r#"{"a": 12e"#), (json!({"a": 12}), vec![Truncated]));
        assert_eq!(read(r#"{"a": "x\"#), (json!({"a": "x"}), vec![Truncated]));
    }

    #[test]
    fn refuses_what_it_cannot_read() {
        assert_eq!(read_lenient(""), Err(LenientError::Empty));
        assert_eq!(
            read_lenient("   // only a comment"),
            Err(LenientError::Empty)
        );
        assert!(matches!(
            read_lenient("no json here"),
            Err(LenientError::Unexpected { .. })
        ));
        assert!(matches!(
            read_lenient("{\"a\" 1}"),
            Err(LenientError::Unexpected { .. })
        ));
        let deep = "[".repeat(MAX_DEPTH + 1);
        assert_eq!(
            read_lenient(&deep),
            Err(LenientError::TooDeep { limit: MAX_DEPTH })
        );
        assert!(read_lenient(&"[".repeat(MAX_DEPTH)).is_ok());
    }
}
