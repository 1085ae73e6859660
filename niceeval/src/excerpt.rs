//! How values appear inside assertion reasons: quoted on one line, long ones elided in the
//! middle so both ends stay visible, and the neighbourhood of a position in a long text (where a
//! pattern matched, where two texts start to differ).
//!
//! Everything here is linear in the size of the value and returns a bounded string, so a reason
//! stays short however large the checked value is. Lengths are counted in Unicode scalar values
//! (`char`s), and no function splits one.

use std::ops::Range;

/// Longest excerpt, in characters, before the middle is elided.
pub const DEFAULT_WIDTH: usize = 160;

/// Characters shown on each side of a position by [`around`].
pub const CONTEXT: usize = 40;

/// Quotes `text` as a Rust-style string literal (escapes, one line), eliding the middle of long
/// text.
///
/// Control characters, combining marks and other invisible characters are escaped
/// (`"cafe\u{301}"`), which shows why two texts that look alike do not match.
///
/// ```
/// use niceeval::excerpt::quote;
///
/// assert_eq!(quote("hi \"you\""), r#""hi \"you\"""#);
/// assert_eq!(quote("line\nbreak"), r#""line\nbreak""#);
/// let long = "a".repeat(500);
/// let shown = quote(&long);
/// assert!(shown.len() < 200);
/// assert!(shown.contains("… 340 chars elided …"));
/// ```
pub fn quote(text: &str) -> String {
    quote_width(text, DEFAULT_WIDTH)
}

/// [`quote`] with a chosen width.
///
/// ```
/// assert_eq!(niceeval::excerpt::quote_width("abcdefghij", 4), r#""ab… 6 chars elided …ij""#);
/// ```
pub fn quote_width(text: &str, width: usize) -> String {
    format!("{:?}", elide(text, width))
}

/// Shortens `text` to about `width` characters by replacing its middle with a marker that says
/// how much was left out. Counts Unicode scalar values, never splits one.
///
/// ```
/// use niceeval::excerpt::elide;
///
/// assert_eq!(elide("short", 10), "short");
/// assert_eq!(elide("0123456789abcdefghij", 10), "01234… 10 chars elided …fghij");
/// assert_eq!(elide("日本語のテキストです", 4), "日本… 6 chars elided …です");
/// ```
pub fn elide(text: &str, width: usize) -> String {
    if text.is_ascii() {
        // Fast path: bytes are characters.
        if text.len() <= width {
            return text.to_string();
        }
        let head = width.div_ceil(2);
        let tail = width / 2;
        let omitted = text.len() - head - tail;
        return format!(
            "{}… {omitted} chars elided …{}",
            &text[..head],
            &text[text.len() - tail..]
        );
    }
    let count = text.chars().count();
    if count <= width {
        return text.to_string();
    }
    let head = width.div_ceil(2);
    let tail = width / 2;
    let head_end = byte_at_char(text, head);
    let tail_start = if tail == 0 {
        text.len()
    } else {
        text.char_indices()
            .rev()
            .nth(tail - 1)
            .map_or(0, |(i, _)| i)
    };
    format!(
        "{}… {} chars elided …{}",
        &text[..head_end],
        count - head - tail,
        &text[tail_start..]
    )
}

/// Compact one-line JSON of `value`, elided like [`elide`].
///
/// ```
/// use niceeval::excerpt::json;
///
/// assert_eq!(json(&serde_json::json!({"a": [1, 2]})), r#"{"a":[1,2]}"#);
/// assert!(json(&serde_json::json!("x".repeat(1000))).contains("chars elided"));
/// ```
pub fn json(value: &serde_json::Value) -> String {
    elide(&value.to_string(), DEFAULT_WIDTH)
}

/// Quotes the part of `text` around the byte range `range`: the range itself plus [`CONTEXT`]
/// characters on each side, with `…` where the text was cut. A range longer than
/// [`DEFAULT_WIDTH`] characters is elided in its middle. `range` must lie on character
/// boundaries (as the ranges of `str::find` and `Regex::find` do); it is clamped to the text.
///
/// ```
/// use niceeval::excerpt::around;
///
/// let text = format!("{}Your refund is on its way.{}", "x".repeat(100), "y".repeat(100));
/// let at = text.find("refund").unwrap();
/// assert_eq!(
///     around(&text, at..at + "refund".len()),
///     format!(r#""…{}Your refund is on its way.{}…""#, "x".repeat(35), "y".repeat(25))
/// );
/// assert_eq!(around("short text", 0..5), r#""short text""#);
/// ```
pub fn around(text: &str, range: Range<usize>) -> String {
    let end = range.end.min(text.len());
    let start = range.start.min(end);
    let before = &text[..start];
    let from = before
        .char_indices()
        .rev()
        .nth(CONTEXT - 1)
        .map_or(0, |(i, _)| i);
    let to = text[end..]
        .char_indices()
        .nth(CONTEXT)
        .map_or(text.len(), |(i, _)| end + i);
    let mut shown = String::new();
    if from > 0 {
        shown.push('…');
    }
    shown.push_str(&text[from..start]);
    shown.push_str(&elide(&text[start..end], DEFAULT_WIDTH));
    shown.push_str(&text[end..to]);
    if to < text.len() {
        shown.push('…');
    }
    format!("{shown:?}")
}

/// Where two texts start to differ: the byte offset of the first differing character (the
/// same in both, as their prefixes are equal), or `None` when they are equal. When one text is
/// a prefix of the other, it is the shorter one's length.
///
/// ```
/// use niceeval::excerpt::first_difference;
///
/// assert_eq!(first_difference("same", "same"), None);
/// assert_eq!(first_difference("kitten", "sitting"), Some(0));
/// assert_eq!(first_difference("héllo", "hélp"), Some(4));
/// assert_eq!(first_difference("abc", "abcdef"), Some(3));
/// ```
pub fn first_difference(a: &str, b: &str) -> Option<usize> {
    if a == b {
        return None;
    }
    let common = a.bytes().zip(b.bytes()).take_while(|(x, y)| x == y).count();
    // Back up to the start of the character the bytes differ in.
    let mut at = common;
    while !a.is_char_boundary(at) || !b.is_char_boundary(at) {
        at -= 1;
    }
    Some(at)
}

/// The number of characters before byte `byte` of `text` (a character boundary).
///
/// ```
/// assert_eq!(niceeval::excerpt::char_index("日本語", 6), 2);
/// ```
pub fn char_index(text: &str, byte: usize) -> usize {
    text[..byte.min(text.len())].chars().count()
}

/// The byte offset of character number `n` of `text` (its length when `n` is past the end).
fn byte_at_char(text: &str, n: usize) -> usize {
    text.char_indices().nth(n).map_or(text.len(), |(i, _)| i)
}

/// `12345` → `12,345`.
pub(crate) fn format_count(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// USD with cents, and enough decimals below $1 to show four significant digits:
/// `$12.35`, `$0.50`, `$0.0123`, `$0.00004567`.
pub(crate) fn format_usd(usd: f64) -> String {
    if !usd.is_finite() {
        return format!("${usd}");
    }
    let magnitude = usd.abs();
    let decimals = if magnitude >= 1.0 || magnitude == 0.0 {
        2
    } else {
        (2.0f64.max(-magnitude.log10().floor() + 3.0) as usize).min(12)
    };
    let mut text = format!("{usd:.decimals$}");
    if decimals > 2 {
        let keep = text.find('.').map_or(text.len(), |dot| dot + 3);
        while text.len() > keep && text.ends_with('0') {
            text.pop();
        }
    }
    format!("${text}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn elide_keeps_both_ends_and_counts_chars() {
        let text = "é".repeat(30);
        let shown = elide(&text, 10);
        assert!(shown.starts_with("ééééé…"));
        assert!(shown.ends_with("…ééééé"));
        assert!(shown.contains("20 chars elided"));
    }

    #[test]
    fn elide_edge_widths() {
        assert_eq!(elide("", 0), "");
        assert_eq!(elide("abc", 0), "… 3 chars elided …");
        assert_eq!(elide("abc", 1), "a… 2 chars elided …");
        assert_eq!(elide("abc", 3), "abc");
        assert_eq!(elide("😀😀😀😀", 2), "😀… 2 chars elided …😀");
    }

    #[test]
    fn quote_escapes_and_shows_invisible_characters() {
        assert_eq!(quote("a\nb"), "\"a\\nb\"");
        assert_eq!(quote("cafe\u{301}"), "\"cafe\\u{301}\"");
        assert_eq!(quote(""), "\"\"");
        // A literal backslash sequence stays as it was written.
        assert_eq!(quote("\\u{2026}"), "\"\\\\u{2026}\"");
    }

    #[test]
    fn huge_text_is_bounded() {
        let text = "x".repeat(5_000_000);
        assert!(quote(&text).len() < 250);
        let text = "日".repeat(2_000_000);
        assert!(quote(&text).chars().count() < 200);
        assert!(json(&serde_json::Value::String(text)).chars().count() < 200);
    }

    #[test]
    fn around_marks_cut_ends_and_elides_long_matches() {
        let text = format!("{}MATCH{}", "a".repeat(10), "b".repeat(10));
        assert_eq!(
            around(&text, 10..15),
            format!("{text:?}"),
            "short text: whole"
        );
        let long_match = "m".repeat(1_000);
        let text = format!("start {long_match} end");
        let shown = around(&text, 6..1_006);
        assert!(shown.starts_with("\"start mmm"), "{shown}");
        assert!(shown.ends_with("mmm end\""), "{shown}");
        assert!(shown.contains("840 chars elided"), "{shown}");
        // Multi-byte context, empty range, range past the end.
        let text = "日本語".repeat(100);
        let shown = around(&text, 150..150);
        assert_eq!(shown.chars().count(), 2 + 2 + 2 * CONTEXT, "{shown}");
        assert_eq!(around("abc", 10..20), "\"abc\"");
        assert_eq!(around("", 0..0), "\"\"");
    }

    #[test]
    fn around_a_match_in_a_huge_text_is_bounded() {
        let text = format!("{}needle{}", "h".repeat(3_000_000), "t".repeat(3_000_000));
        let at = text.find("needle").unwrap();
        let shown = around(&text, at..at + 6);
        assert!(shown.contains("needle"));
        assert!(shown.chars().count() < 100, "{shown}");
    }

    #[test]
    fn first_difference_lands_on_a_character_boundary() {
        // 'é' (C3 A9) and 'è' (C3 A8) share their first byte.
        assert_eq!(first_difference("café", "cafè"), Some(3));
        assert_eq!(first_difference("", "x"), Some(0));
        assert_eq!(first_difference("😀a", "😃a"), Some(0));
        assert_eq!(char_index("😀😃x", 8), 2);
    }
}
