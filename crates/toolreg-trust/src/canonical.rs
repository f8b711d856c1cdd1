//! The RFC 8785 JSON Canonicalization Scheme (JCS) over `serde_json` values.
//!
//! Two tool definitions that differ only in key order, whitespace or the spelling of a number
//! (`1`, `1.0`, `1e0`) have the same canonical text, so pins never report such differences.

use serde_json::{Map, Number, Value};
use std::cmp::Ordering;
use std::fmt::Write;
use std::sync::LazyLock;

/// The RFC 8785 canonical text of `value`: object keys sorted by their UTF-16 code units, no
/// whitespace, numbers as ECMAScript's `Number.prototype.toString` writes them, strings with
/// the minimal escaping of RFC 8785 §3.2.2.2.
///
/// Every number is read as an IEEE-754 double, as RFC 8785 (I-JSON) requires: integers beyond
/// 2^53 are rounded to the nearest double, so `9007199254740993` canonicalises like
/// `9007199254740992`.
pub fn canonical_json(value: &Value) -> String {
    let mut out = String::with_capacity(256);
    write_value(&mut out, value);
    out
}

/// Whether `a` and `b` have the same canonical text, without building it: numbers compare as
/// doubles (so `-0` equals `0`, as both are written `0`), objects as unordered maps.
pub fn same_canonical(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Null, Value::Null) => true,
        (Value::Bool(x), Value::Bool(y)) => x == y,
        (Value::Number(x), Value::Number(y)) => as_double(x) == as_double(y),
        (Value::String(x), Value::String(y)) => x == y,
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| same_canonical(p, q))
        }
        (Value::Object(x), Value::Object(y)) => {
            if x.len() != y.len() {
                return false;
            }
            // Both maps iterate in key order unless serde_json's `preserve_order` is on: walk
            // them in step, and look keys up only if the orders turn out to differ.
            for ((key_x, p), (key_y, q)) in x.iter().zip(y) {
                if key_x != key_y {
                    return x
                        .iter()
                        .all(|(key, p)| y.get(key).is_some_and(|q| same_canonical(p, q)));
                }
                if !same_canonical(p, q) {
                    return false;
                }
            }
            true
        }
        _ => false,
    }
}

/// Object entries in RFC 8785 order (UTF-16 code units, not UTF-8 bytes: the two differ when
/// a character above U+FFFF is compared with one in U+E000..U+FFFF).
pub(crate) fn sorted_entries(map: &Map<String, Value>) -> Vec<(&String, &Value)> {
    let mut entries: Vec<_> = map.iter().collect();
    entries.sort_by(|a, b| utf16_order(a.0, b.0));
    entries
}

fn utf16_order(a: &str, b: &str) -> Ordering {
    if a.is_ascii() && b.is_ascii() {
        return a.as_bytes().cmp(b.as_bytes());
    }
    a.encode_utf16().cmp(b.encode_utf16())
}

/// Where canonical text goes: a `String` for [`canonical_json`], or straight into a hash for
/// digests (see `crate::pin`), so a digest never builds the whole text.
pub(crate) trait Sink {
    fn push_str(&mut self, text: &str);
}

impl Sink for String {
    fn push_str(&mut self, text: &str) {
        String::push_str(self, text);
    }
}

fn write_value(out: &mut impl Sink, value: &Value) {
    match value {
        Value::Null => out.push_str("null"),
        Value::Bool(true) => out.push_str("true"),
        Value::Bool(false) => out.push_str("false"),
        Value::Number(number) => write_number(out, number),
        Value::String(text) => write_string(out, text),
        Value::Array(items) => {
            out.push_str("[");
            for (index, item) in items.iter().enumerate() {
                if index > 0 {
                    out.push_str(",");
                }
                write_value(out, item);
            }
            out.push_str("]");
        }
        Value::Object(map) => {
            // serde_json's default map iterates in UTF-8 byte order, which is UTF-16 order
            // unless a key has a character from U+E000 up (lead byte 0xEE or more): sort only
            // then, or when the map keeps insertion order (`preserve_order`).
            let in_utf16_order =
                *MAPS_ITERATE_SORTED && map.keys().all(|key| key.bytes().all(|byte| byte < 0xEE));
            if in_utf16_order {
                write_object(out, map.iter());
            } else {
                write_object(out, sorted_entries(map).into_iter());
            }
        }
    }
}

/// Whether `serde_json::Map` iterates in key order (its default `BTreeMap`) rather than in
/// insertion order (the `preserve_order` feature, which another crate may switch on).
static MAPS_ITERATE_SORTED: LazyLock<bool> = LazyLock::new(|| {
    let mut probe = Map::new();
    probe.insert("b".to_owned(), Value::Null);
    probe.insert("a".to_owned(), Value::Null);
    probe.keys().next().is_some_and(|first| first == "a")
});

/// Writes an object from entries already in canonical order.
pub(crate) fn write_object<'a>(
    out: &mut impl Sink,
    entries: impl Iterator<Item = (&'a String, &'a Value)>,
) {
    out.push_str("{");
    for (index, (key, item)) in entries.enumerate() {
        if index > 0 {
            out.push_str(",");
        }
        write_string(out, key);
        out.push_str(":");
        write_value(out, item);
    }
    out.push_str("}");
}

/// serde_json without `arbitrary_precision` stores every number as an i64, u64 or finite f64,
/// so the conversion always succeeds; NaN and infinities cannot occur in a `Value`.
fn as_double(number: &Number) -> f64 {
    number.as_f64().unwrap_or(f64::NAN)
}

/// Integers up to 2^53 in magnitude are written as their exact decimal digits, which is what
/// ECMAScript writes for them (every neighbouring integer is a double too, so no shorter digit
/// string round-trips): most numbers in tool schemas take this path, without any formatting
/// machinery or allocation.
fn write_number(out: &mut impl Sink, number: &Number) {
    const EXACT: u64 = 1 << 53;
    if let Some(n) = number.as_u64().filter(|n| *n <= EXACT) {
        write_integer(out, false, n);
    } else if let Some(n) = number.as_i64().filter(|n| n.unsigned_abs() <= EXACT) {
        write_integer(out, n < 0, n.unsigned_abs());
    } else {
        let mut text = String::new();
        write_double(&mut text, as_double(number));
        out.push_str(&text);
    }
}

fn write_integer(out: &mut impl Sink, negative: bool, mut n: u64) {
    let mut digits = [0u8; 21];
    let mut start = digits.len();
    loop {
        start -= 1;
        digits[start] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    if negative {
        start -= 1;
        digits[start] = b'-';
    }
    out.push_str(std::str::from_utf8(&digits[start..]).expect("ASCII digits"));
}

/// ECMAScript `Number.prototype.toString` (ECMA-262 §6.1.6.1.20), which RFC 8785 §3.2.2.3
/// prescribes. Rust's `{:e}` gives the shortest digits that round-trip (the closest such when
/// there are several), which is exactly the digit string ECMAScript asks for.
fn write_double(out: &mut String, x: f64) {
    if x == 0.0 {
        // Both +0 and -0.
        out.push('0');
        return;
    }
    if x.is_nan() || x.is_infinite() {
        // Unreachable with serde_json values (see `as_double`); JSON has no spelling for these.
        out.push_str("null");
        return;
    }
    if x < 0.0 {
        out.push('-');
    }
    let scientific = format!("{:e}", x.abs());
    let (mantissa, exponent) = scientific
        .split_once('e')
        .expect("`{:e}` always writes an exponent");
    let exponent: i32 = exponent.parse().expect("`{:e}` writes a decimal exponent");
    let mut digits: String = mantissa.chars().filter(|c| *c != '.').collect();
    round_tie_to_even(&mut digits, x.abs());
    // ECMAScript's names: the value is 0.digits × 10^n, with k digits.
    let k = digits.len() as i32;
    let n = exponent + 1;
    if k <= n && n <= 21 {
        out.push_str(&digits);
        out.extend(std::iter::repeat_n('0', (n - k) as usize));
    } else if 0 < n && n <= 21 {
        out.push_str(&digits[..n as usize]);
        out.push('.');
        out.push_str(&digits[n as usize..]);
    } else if -6 < n && n <= 0 {
        out.push_str("0.");
        out.extend(std::iter::repeat_n('0', (-n) as usize));
        out.push_str(&digits);
    } else {
        out.push_str(&digits[..1]);
        if k > 1 {
            out.push('.');
            out.push_str(&digits[1..]);
        }
        let shown = n - 1;
        let _ = write!(out, "e{}{}", if shown < 0 { '-' } else { '+' }, shown.abs());
    }
}

/// Rust's shortest digits round a tie up; ECMAScript takes the even candidate. A tie (x exactly
/// halfway between two shortest candidates) needs a double spacing above the last digit's
/// weight, so only numbers with 15 or more digits are checked, against x's exact expansion
/// (at most 767 significant digits).
fn round_tie_to_even(digits: &mut String, x: f64) {
    let k = digits.len();
    let last = digits.as_bytes()[k - 1];
    if k < 15 || last % 2 == 0 {
        return;
    }
    let exact = format!("{x:.800e}");
    let exact_digits: Vec<u8> = exact
        .split('e')
        .next()
        .unwrap_or_default()
        .bytes()
        .filter(|b| b.is_ascii_digit())
        .collect();
    let is_tie = exact_digits[k] == b'5' && exact_digits[k + 1..].iter().all(|&d| d == b'0');
    if !is_tie || exact_digits[..k - 1] != digits.as_bytes()[..k - 1] {
        return;
    }
    // Candidates: the truncation T (exact_digits[..k]) and T + 1; one of them is `digits`.
    let truncated_last = exact_digits[k - 1];
    let even_last = if truncated_last % 2 == 0 {
        truncated_last
    } else {
        truncated_last + 1
    };
    if even_last <= b'9' {
        digits.pop();
        digits.push(char::from(even_last));
    }
}

/// RFC 8785 §3.2.2.2: only `"`, `\` and the C0 controls are escaped; controls with a short form
/// use it, the others `\u00xx` in lower case. Everything else is written as is.
pub(crate) fn write_string(out: &mut impl Sink, text: &str) {
    out.push_str("\"");
    let bytes = text.as_bytes();
    let mut written = 0;
    loop {
        let index = written + clean_prefix(&bytes[written..]);
        // The escaped bytes are ASCII, so `index` is a char boundary.
        out.push_str(&text[written..index]);
        let Some(&byte) = bytes.get(index) else {
            break;
        };
        let short = match byte {
            b'"' => "\\\"",
            b'\\' => "\\\\",
            0x08 => "\\b",
            b'\t' => "\\t",
            b'\n' => "\\n",
            0x0c => "\\f",
            b'\r' => "\\r",
            _ => "",
        };
        if short.is_empty() {
            const HEX: &[u8; 16] = b"0123456789abcdef";
            let escape = [
                b'\\',
                b'u',
                b'0',
                b'0',
                HEX[usize::from(byte >> 4)],
                HEX[usize::from(byte & 15)],
            ];
            out.push_str(std::str::from_utf8(&escape).expect("ASCII escape"));
        } else {
            out.push_str(short);
        }
        written = index + 1;
    }
    out.push_str("\"");
}

/// The length of the longest prefix of `bytes` that needs no escaping. Nearly all strings need
/// none, so eight bytes are tested at a time (SWAR: a byte is flagged when it is below 0x20 or
/// equal to `"` or `\`; the tests are exact, with no false positives).
fn clean_prefix(bytes: &[u8]) -> usize {
    const ONES: u64 = u64::from_ne_bytes([0x01; 8]);
    const HIGHS: u64 = u64::from_ne_bytes([0x80; 8]);
    let has_zero = |word: u64| word.wrapping_sub(ONES) & !word & HIGHS;
    let mut at = 0;
    for chunk in bytes.chunks_exact(8) {
        let word = u64::from_ne_bytes(chunk.try_into().expect("chunks of 8"));
        let flagged = word.wrapping_sub(ONES * 0x20) & !word & HIGHS
            | has_zero(word ^ (ONES * u64::from(b'"')))
            | has_zero(word ^ (ONES * u64::from(b'\\')));
        if flagged != 0 {
            break;
        }
        at += 8;
    }
    at + bytes[at..]
        .iter()
        .position(|&byte| byte < 0x20 || byte == b'"' || byte == b'\\')
        .unwrap_or(bytes.len() - at)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn double(bits: u64) -> String {
        canonical_json(&json!(f64::from_bits(bits)))
    }

    /// RFC 8785 Appendix B: IEEE-754 bit patterns and their canonical text.
    #[test]
    fn number_vectors_from_rfc_appendix_b() {
        let vectors: [(u64, &str); 23] = [
            (0x0000000000000000, "0"),
            (0x8000000000000000, "0"),
            (0x0000000000000001, "5e-324"),
            (0x8000000000000001, "-5e-324"),
            (0x7fefffffffffffff, "1.7976931348623157e+308"),
            (0xffefffffffffffff, "-1.7976931348623157e+308"),
            (0x4340000000000000, "9007199254740992"),
            (0xc340000000000000, "-9007199254740992"),
            (0x4430000000000000, "295147905179352830000"),
            (0x44b52d02c7e14af5, "9.999999999999997e+22"),
            (0x44b52d02c7e14af6, "1e+23"),
            (0x44b52d02c7e14af7, "1.0000000000000001e+23"),
            (0x444b1ae4d6e2ef4e, "999999999999999700000"),
            (0x444b1ae4d6e2ef4f, "999999999999999900000"),
            (0x444b1ae4d6e2ef50, "1e+21"),
            (0x3eb0c6f7a0b5ed8c, "9.999999999999997e-7"),
            (0x3eb0c6f7a0b5ed8d, "0.000001"),
            (0x41b3de4355555553, "333333333.3333332"),
            (0x41b3de4355555554, "333333333.33333325"),
            (0x41b3de4355555555, "333333333.3333333"),
            (0x41b3de4355555556, "333333333.3333334"),
            (0x41b3de4355555557, "333333333.33333343"),
            (0xbecbf647612f3696, "-0.0000033333333333333333"),
        ];
        for (bits, expected) in vectors {
            assert_eq!(double(bits), expected, "bits {bits:#018x}");
        }
        assert_eq!(double(0x43143ff3c1cb0959), "1424953923781206.2");
    }

    /// RFC 8785 §3.2.2: the worked example of the specification.
    #[test]
    fn rfc_example_with_numbers_strings_and_literals() {
        let input = r#"{
            "numbers": [333333333.33333329, 1E30, 4.50, 2e-3, 0.000000000000000000000000001],
            "string": "\u20ac$\u000F\u000aA'\u0042\u0022\u005c\\\"\/",
            "literals": [null, true, false]
        }"#;
        let value: Value = serde_json::from_str(input).unwrap();
        assert_eq!(
            canonical_json(&value),
            r#"{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],"string":"€$\u000f\nA'B\"\\\\\"/"}"#
        );
    }

    /// RFC 8785 §3.2.3: keys sort by UTF-16 code units (U+1F600 is D83D DE00, before U+FB33).
    #[test]
    fn keys_sort_by_utf16_code_units() {
        let input = r#"{"\u20ac":"Euro Sign","\r":"Carriage Return","\ufb33":"Hebrew Letter Dalet With Dagesh","1":"One","\ud83d\ude00":"Emoji: Grinning Face","\u0080":"Control","\u00f6":"Latin Small Letter O With Diaeresis"}"#;
        let value: Value = serde_json::from_str(input).unwrap();
        assert_eq!(
            canonical_json(&value),
            "{\"\\r\":\"Carriage Return\",\"1\":\"One\",\"\u{80}\":\"Control\",\
             \"ö\":\"Latin Small Letter O With Diaeresis\",\"€\":\"Euro Sign\",\
             \"😀\":\"Emoji: Grinning Face\",\"\u{fb33}\":\"Hebrew Letter Dalet With Dagesh\"}"
        );
    }

    #[test]
    fn integers_and_their_float_spellings_are_one_number() {
        let spellings = ["1", "1.0", "1e0", "10e-1", "1.00000"];
        for text in spellings {
            let value: Value = serde_json::from_str(text).unwrap();
            assert_eq!(canonical_json(&value), "1", "{text}");
        }
        let negative_zero: Value = serde_json::from_str("-0.0").unwrap();
        assert_eq!(canonical_json(&negative_zero), "0");
        assert_eq!(canonical_json(&json!(1e21)), "1e+21");
        assert_eq!(canonical_json(&json!(1e-7)), "1e-7");
        assert_eq!(canonical_json(&json!(123e-8)), "0.00000123");
        assert_eq!(canonical_json(&json!(-1.5)), "-1.5");
        assert_eq!(canonical_json(&json!(u64::MAX)), "18446744073709552000");
    }

    #[test]
    fn clean_prefix_stops_at_the_first_byte_to_escape() {
        // Bytes next to the escaped ones, which must never be flagged.
        let near_misses: Vec<u8> = [0x20, 0x21, 0x23, 0x5b, 0x5d, 0x7f, 0xa2, 0xdc, 0xff]
            .into_iter()
            .cycle()
            .take(30)
            .collect();
        assert_eq!(clean_prefix(&near_misses), near_misses.len());
        for special in [0x00, 0x08, 0x1f, b'"', b'\\'] {
            for at in 0..near_misses.len() {
                let mut bytes = near_misses.clone();
                bytes[at] = special;
                assert_eq!(clean_prefix(&bytes), at, "{special:#x} at {at}");
            }
        }
    }

    #[test]
    fn control_characters_use_lower_case_unicode_escapes() {
        assert_eq!(
            canonical_json(&json!("a\u{1}b\u{1f}\u{7f}\u{2028}")),
            "\"a\\u0001b\\u001f\u{7f}\u{2028}\""
        );
    }

    #[test]
    fn same_canonical_agrees_with_the_text() {
        let a: Value = serde_json::from_str(r#"{"b":[1,2.5,{"x":-0}],"a":"t"}"#).unwrap();
        let b: Value =
            serde_json::from_str(r#"{ "a" : "t", "b" : [1.0, 25e-1, {"x": 0}] }"#).unwrap();
        let c: Value = serde_json::from_str(r#"{"a":"t","b":[1,2.5,{"x":1}]}"#).unwrap();
        assert!(same_canonical(&a, &b));
        assert_eq!(canonical_json(&a), canonical_json(&b));
        assert!(!same_canonical(&a, &c));
        assert_ne!(canonical_json(&a), canonical_json(&c));
    }
}
