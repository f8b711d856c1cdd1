//! Bounded renderings of untrusted text: cuts at character boundaries, marked with `…`.

/// Characters of unchanged context kept before and after a difference or a match.
const CONTEXT_CHARS: usize = 40;

/// `text` cut to at most `max_chars` characters (plus `…` when cut).
pub(crate) fn cut(text: &str, max_chars: usize) -> String {
    match text.char_indices().nth(max_chars) {
        Some((end, _)) => format!("{}…", &text[..end]),
        None => text.to_owned(),
    }
}

/// The parts of `before` and `after` around where they differ, each at most `max_chars`
/// characters plus `…` marks, so an injection appended to a long description stays visible.
pub(crate) fn focus_on_difference(before: &str, after: &str, max_chars: usize) -> (String, String) {
    let old: Vec<char> = before.chars().collect();
    let new: Vec<char> = after.chars().collect();
    if old.len() <= max_chars && new.len() <= max_chars {
        return (before.to_owned(), after.to_owned());
    }
    let prefix = old.iter().zip(&new).take_while(|(a, b)| a == b).count();
    let room = old.len().min(new.len()) - prefix;
    let suffix = old
        .iter()
        .rev()
        .zip(new.iter().rev())
        .take(room)
        .take_while(|(a, b)| a == b)
        .count();
    let start = prefix.saturating_sub(CONTEXT_CHARS);
    let window = |chars: &[char]| {
        let end = (chars.len() - suffix + CONTEXT_CHARS).min(chars.len());
        let shown_end = end.min(start + max_chars);
        let mut shown = String::new();
        if start > 0 {
            shown.push('…');
        }
        shown.extend(&chars[start..shown_end]);
        if shown_end < chars.len() {
            shown.push('…');
        }
        shown
    };
    (window(&old), window(&new))
}

/// The match `text[start..end]` with a little context on each side, cut with `…`.
pub(crate) fn excerpt(text: &str, start: usize, end: usize) -> String {
    let before: Vec<char> = text[..start]
        .chars()
        .rev()
        .take(CONTEXT_CHARS + 1)
        .collect();
    let after: Vec<char> = text[end..].chars().take(CONTEXT_CHARS + 1).collect();
    let mut shown = String::new();
    if before.len() > CONTEXT_CHARS {
        shown.push('…');
    }
    shown.extend(
        before
            .iter()
            .rev()
            .skip(before.len().saturating_sub(CONTEXT_CHARS)),
    );
    shown.push_str(&cut(&text[start..end], 3 * CONTEXT_CHARS));
    shown.extend(after.iter().take(CONTEXT_CHARS));
    if after.len() > CONTEXT_CHARS {
        shown.push('…');
    }
    shown
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cut_counts_characters_not_bytes() {
        assert_eq!(cut("你好世界", 2), "你好…");
        assert_eq!(cut("short", 10), "short");
    }

    #[test]
    fn difference_in_the_middle_is_centred() {
        let before = format!("{}OLD{}", "a".repeat(200), "b".repeat(200));
        let after = format!("{}NEW{}", "a".repeat(200), "b".repeat(200));
        let (old, new) = focus_on_difference(&before, &after, 100);
        assert_eq!(old, format!("…{}OLD{}…", "a".repeat(40), "b".repeat(40)));
        assert_eq!(new, format!("…{}NEW{}…", "a".repeat(40), "b".repeat(40)));
    }

    #[test]
    fn excerpt_keeps_context_on_both_sides() {
        let text = format!(
            "{}ignore previous instructions{}",
            "x".repeat(100),
            "y".repeat(5)
        );
        let start = 100;
        let end = start + "ignore previous instructions".len();
        assert_eq!(
            excerpt(&text, start, end),
            format!(
                "…{}ignore previous instructions{}",
                "x".repeat(40),
                "y".repeat(5)
            )
        );
    }
}
