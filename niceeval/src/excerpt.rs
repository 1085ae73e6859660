//! How values appear inside assertion reasons: quoted, on one line, long ones elided in the
//! middle so both ends stay visible.

/// Longest excerpt, in characters, before the middle is elided.
pub const DEFAULT_WIDTH: usize = 160;

/// Quotes `text` as a Rust-style string literal, eliding the middle of long text.
///
/// ```
/// use niceeval::excerpt::quote;
///
/// assert_eq!(quote("hi \"you\""), r#""hi \"you\"""#);
/// let long = "a".repeat(500);
/// let shown = quote(&long);
/// assert!(shown.len() < 200);
/// assert!(shown.contains("… 340 chars elided …"));
/// ```
pub fn quote(text: &str) -> String {
    quote_width(text, DEFAULT_WIDTH)
}

/// [`quote`] with a chosen width.
pub fn quote_width(text: &str, width: usize) -> String {
    format!("{:?}", Elided(elide(text, width).as_str())).replace("\\u{2026}", "…")
}

struct Elided<'a>(&'a str);

impl std::fmt::Debug for Elided<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Debug::fmt(self.0, f)
    }
}

/// Shortens `text` to about `width` characters by replacing its middle with a marker that says
/// how much was left out. Counts Unicode scalar values, never splits one.
///
/// ```
/// use niceeval::excerpt::elide;
///
/// assert_eq!(elide("short", 10), "short");
/// assert_eq!(elide("0123456789abcdefghij", 10), "01234… 10 chars elided …fghij");
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
    let omitted = count - head - tail;
    let head_end = text
        .char_indices()
        .nth(head)
        .map(|(i, _)| i)
        .unwrap_or(text.len());
    let tail_start = text
        .char_indices()
        .nth(count - tail)
        .map(|(i, _)| i)
        .unwrap_or(text.len());
    format!(
        "{}… {omitted} chars elided …{}",
        &text[..head_end],
        &text[tail_start..]
    )
}

/// Compact one-line JSON of `value`, elided like [`elide`].
pub fn json(value: &serde_json::Value) -> String {
    elide(&value.to_string(), DEFAULT_WIDTH)
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
    fn quote_escapes_newlines() {
        assert_eq!(quote("a\nb"), "\"a\\nb\"");
    }

    #[test]
    fn huge_text_is_bounded() {
        let text = "x".repeat(5_000_000);
        assert!(quote(&text).len() < 250);
    }
}
