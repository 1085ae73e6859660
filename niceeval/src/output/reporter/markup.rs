//! Text inside markup: escaping for the HTML report and the Markdown summary, and the
//! characters XML 1.0 forbids shown as `\u{..}` (the JUnit reporter's XML writer escapes markup
//! itself, but cannot write those).

use std::borrow::Cow;
use std::fmt::Write as _;

/// Whether XML 1.0 forbids `c` in a document (control characters other than tab, line feed and
/// carriage return; U+FFFE and U+FFFF).
fn forbidden(c: char) -> bool {
    !matches!(c, '\t' | '\n' | '\r') && ((c as u32) < 0x20 || c == '\u{FFFE}' || c == '\u{FFFF}')
}

/// Appends `c` as `\u{..}`, its escape in Rust source.
fn push_shown(out: &mut String, c: char) {
    let _ = write!(out, "\\u{{{:x}}}", c as u32);
}

/// Escapes text for HTML or XML attributes and content, showing the characters XML 1.0 forbids
/// as `\u{..}`.
pub(crate) fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            c if forbidden(c) => push_shown(&mut out, c),
            c => out.push(c),
        }
    }
    out
}

/// `text` with the characters XML 1.0 forbids shown as `\u{..}`, everything else as is.
pub(crate) fn xml_safe(text: &str) -> Cow<'_, str> {
    if !text.chars().any(forbidden) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if forbidden(c) {
            push_shown(&mut out, c);
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_markup_and_control_characters() {
        assert_eq!(
            escape("a<b & \"c\"\u{1}"),
            "a&lt;b &amp; &quot;c&quot;\\u{1}"
        );
    }

    #[test]
    fn xml_safe_shows_only_what_xml_forbids() {
        assert!(matches!(
            xml_safe("a<b & \"c\"\t\n\r"),
            Cow::Borrowed("a<b & \"c\"\t\n\r")
        ));
        assert_eq!(
            xml_safe("\u{1b}[31mred\u{0} \u{FFFE}\u{FFFF}"),
            "\\u{1b}[31mred\\u{0} \\u{fffe}\\u{ffff}"
        );
    }
}
