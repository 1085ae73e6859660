//! Text matchers: [`includes`] and [`excludes`], over a substring or a regular expression.

use regex::Regex;

use crate::assertion::{Assertion, Grade, Subject};
use crate::excerpt::quote;

/// What [`includes`] and [`excludes`] look for: a literal substring or a [`Regex`].
#[derive(Debug, Clone)]
pub enum Pattern {
    /// A literal substring (case-sensitive).
    Text(String),
    /// A regular expression, matched anywhere in the text.
    Regex(Regex),
}

impl Pattern {
    /// Where the pattern first occurs in `text`, as a byte range.
    pub fn find(&self, text: &str) -> Option<std::ops::Range<usize>> {
        match self {
            Pattern::Text(needle) => text.find(needle.as_str()).map(|i| i..i + needle.len()),
            Pattern::Regex(re) => re.find(text).map(|m| m.range()),
        }
    }

    /// The pattern as shown in reports: a quoted string or `/regex/`.
    pub fn display(&self) -> String {
        match self {
            Pattern::Text(needle) => quote(needle),
            Pattern::Regex(re) => format!("/{}/", re.as_str()),
        }
    }
}

impl From<&str> for Pattern {
    fn from(s: &str) -> Self {
        Pattern::Text(s.to_string())
    }
}

impl From<String> for Pattern {
    fn from(s: String) -> Self {
        Pattern::Text(s)
    }
}

impl From<&String> for Pattern {
    fn from(s: &String) -> Self {
        Pattern::Text(s.clone())
    }
}

impl From<Regex> for Pattern {
    fn from(re: Regex) -> Self {
        Pattern::Regex(re)
    }
}

impl From<&Regex> for Pattern {
    fn from(re: &Regex) -> Self {
        Pattern::Regex(re.clone())
    }
}

/// Shows the text around a byte range, so a reason points at the match in a long value.
pub(crate) fn context(text: &str, range: std::ops::Range<usize>) -> String {
    const AROUND: usize = 40;
    let start = text[..range.start]
        .char_indices()
        .rev()
        .nth(AROUND - 1)
        .map(|(i, _)| i)
        .unwrap_or(0);
    let end = text[range.end..]
        .char_indices()
        .nth(AROUND)
        .map(|(i, _)| range.end + i)
        .unwrap_or(text.len());
    let mut shown = String::new();
    if start > 0 {
        shown.push('…');
    }
    shown.push_str(&text[start..end]);
    if end < text.len() {
        shown.push('…');
    }
    quote(&shown)
}

/// The text contains a substring, or matches a [`Regex`] somewhere. Gate by default.
///
/// Non-text values are matched against their compact JSON text; `None` fails.
///
/// ```
/// use niceeval::prelude::*;
/// use niceeval::AssertionResult;
///
/// let ok = AssertionResult::evaluate(&includes(Regex::new(r"order #\d+").unwrap()), &"see order #123".subject());
/// assert!(ok.passed);
/// let no = AssertionResult::evaluate(&includes("refund"), &"Hello".subject());
/// assert_eq!(no.reason, r#""Hello" does not contain "refund""#);
/// ```
pub fn includes(pattern: impl Into<Pattern>) -> Includes {
    Includes {
        pattern: pattern.into(),
    }
}

/// The matcher returned by [`includes`].
#[derive(Debug, Clone)]
pub struct Includes {
    pattern: Pattern,
}

impl Assertion for Includes {
    fn describe(&self) -> String {
        format!("includes({})", self.pattern.display())
    }

    fn evaluate(&self, value: &Subject<'_>) -> Grade {
        let Some(text) = value.text() else {
            return Grade::fail(format!(
                "there is no value (None) to search for {}",
                self.pattern.display()
            ));
        };
        match self.pattern.find(&text) {
            Some(range) => Grade::pass(format!("found at {}", context(&text, range))),
            None => Grade::fail(format!(
                "{} does not {} {}",
                value.preview(),
                verb(&self.pattern),
                self.pattern.display()
            )),
        }
    }
}

fn verb(pattern: &Pattern) -> &'static str {
    match pattern {
        Pattern::Text(_) => "contain",
        Pattern::Regex(_) => "match",
    }
}

/// The text does not contain the substring nor match the [`Regex`]. Gate by default.
///
/// `None` passes (there is nothing that could contain the pattern).
///
/// ```
/// use niceeval::prelude::*;
/// use niceeval::AssertionResult;
///
/// let r = AssertionResult::evaluate(&excludes("password"), &"your password is hunter2".subject());
/// assert!(!r.passed);
/// assert!(r.reason.contains("\"your password is hunter2\""));
/// ```
pub fn excludes(pattern: impl Into<Pattern>) -> Excludes {
    Excludes {
        pattern: pattern.into(),
    }
}

/// The matcher returned by [`excludes`].
#[derive(Debug, Clone)]
pub struct Excludes {
    pattern: Pattern,
}

impl Assertion for Excludes {
    fn describe(&self) -> String {
        format!("excludes({})", self.pattern.display())
    }

    fn evaluate(&self, value: &Subject<'_>) -> Grade {
        let Some(text) = value.text() else {
            return Grade::pass("there is no value (None)");
        };
        match self.pattern.find(&text) {
            Some(range) => Grade::fail(format!(
                "{} found at {}",
                self.pattern.display(),
                context(&text, range)
            )),
            None => Grade::pass(format!(
                "{} does not {} {}",
                value.preview(),
                verb(&self.pattern),
                self.pattern.display()
            )),
        }
    }
}
