//! Text matchers: [`includes`] and [`excludes`], which look for a [`Pattern`] — a literal
//! substring or a regular expression — in the text form of the value.

use std::ops::Range;

use regex::Regex;

use crate::base::assertion::{Assertion, Grade, Subject};
use crate::base::excerpt;

/// What [`includes`] and [`excludes`] look for: a literal substring or a [`Regex`].
///
/// Built with `.into()` from `&str`, `String`, `&String`, `Regex` or `&Regex`, so the matchers
/// take either directly: `includes("refund")`, `includes(Regex::new(r"order #\d+")?)`.
#[derive(Debug, Clone)]
pub enum Pattern {
    /// A literal substring: case-sensitive, compared character for character (no Unicode
    /// normalization).
    Text(String),
    /// A regular expression, matched anywhere in the text (anchor it with `^`/`$` to match the
    /// whole text; `(?i)` makes it case-insensitive, with Unicode case folding).
    Regex(Regex),
}

impl Pattern {
    /// Where the pattern first occurs in `text`, as a byte range.
    pub fn find(&self, text: &str) -> Option<Range<usize>> {
        match self {
            Pattern::Text(needle) => text.find(needle.as_str()).map(|i| i..i + needle.len()),
            Pattern::Regex(re) => re.find(text).map(|m| m.range()),
        }
    }

    /// The pattern as shown in reports: a quoted string or `/regex/`.
    pub fn display(&self) -> String {
        match self {
            Pattern::Text(needle) => excerpt::quote_width(needle, 60),
            Pattern::Regex(re) => format!("/{}/", excerpt::elide(re.as_str(), 60)),
        }
    }

    /// How many times the pattern occurs (non-overlapping), counting the one at `first`.
    fn count_from(&self, text: &str, first: &Range<usize>) -> usize {
        let rest = &text[first.end..];
        1 + match self {
            Pattern::Text(needle) => rest.matches(needle.as_str()).count(),
            Pattern::Regex(re) => re.find_iter(rest).count(),
        }
    }

    /// A literal pattern that is empty, which would be found in any text.
    fn is_empty_text(&self) -> bool {
        matches!(self, Pattern::Text(needle) if needle.is_empty())
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
pub(crate) fn context(text: &str, range: Range<usize>) -> String {
    excerpt::around(text, range)
}

/// Describes where `pattern` was found: what matched, how often, at which character, and the
/// text around it.
fn found(pattern: &Pattern, text: &str, range: Range<usize>) -> String {
    let at = excerpt::char_index(text, range.start);
    let times = match pattern.count_from(text, &range) {
        1 => String::new(),
        n => format!(" {n} times, first"),
    };
    let what = match pattern {
        Pattern::Text(_) => format!("found {}", pattern.display()),
        Pattern::Regex(_) => format!(
            "{} matched {}",
            pattern.display(),
            excerpt::quote_part(text, range.clone(), 60)
        ),
    };
    format!("{what}{times} at char {at}: {}", context(text, range))
}

/// `does not contain "x"` or `does not match /x/`.
fn absent(pattern: &Pattern) -> String {
    match pattern {
        Pattern::Text(_) => format!("does not contain {}", pattern.display()),
        Pattern::Regex(_) => format!("does not match {}", pattern.display()),
    }
}

/// For a literal pattern that is absent, a case-insensitive search: most misses in replies are
/// a capital letter.
fn case_hint(pattern: &Pattern, text: &str) -> String {
    let Pattern::Text(needle) = pattern else {
        return String::new();
    };
    // An ASCII needle (the usual case) needs no regex: compiling one on every miss cost more
    // than the whole check.
    let found = if needle.is_ascii() {
        find_ignoring_ascii_case(text, needle)
    } else {
        regex::RegexBuilder::new(&regex::escape(needle))
            .case_insensitive(true)
            .build()
            .ok()
            .and_then(|re| re.find(text))
            .map(|m| m.range())
    };
    match found {
        Some(range) => format!(
            " (ignoring case, {} is at char {}: {})",
            excerpt::quote_part(text, range.clone(), 60),
            excerpt::char_index(text, range.start),
            context(text, range)
        ),
        None => String::new(),
    }
}

/// The first match of the ASCII `needle` in `text`, ignoring ASCII case. Its ends are char
/// boundaries: both end bytes match ASCII bytes of the needle.
fn find_ignoring_ascii_case(text: &str, needle: &str) -> Option<std::ops::Range<usize>> {
    let (t, n) = (text.as_bytes(), needle.as_bytes());
    let first = n.first()?.to_ascii_lowercase();
    if n.len() > t.len() {
        return None;
    }
    (0..=t.len() - n.len())
        .find(|&i| t[i].to_ascii_lowercase() == first && t[i..i + n.len()].eq_ignore_ascii_case(n))
        .map(|i| i..i + n.len())
}

fn empty_pattern_error(matcher: &str) -> Grade {
    Grade::error(format!(
        "{matcher}(\"\") looks for the empty string, which every text contains; \
         give a non-empty pattern"
    ))
}

/// The text contains a substring, or matches a [`Regex`] somewhere. **Gate by default.**
///
/// - **Text** is searched as it is: a literal pattern is case-sensitive and compared character
///   for character (no Unicode normalization); use a regex with `(?i)` to ignore case.
/// - **JSON** values (numbers, booleans, objects, arrays) are searched in their compact JSON
///   text: `includes("\"refund\"")` finds the string `"refund"` anywhere in `{"intent":"refund"}`.
/// - **`None`** fails: there is nothing to search.
/// - An empty literal pattern (`includes("")`) is an execution error on the assertion, not a
///   pass: it would be found in any text.
///
/// On a pass the reason shows the text around the first match (and how many there are); on a
/// failure it shows the value, long values elided in the middle, and where a case-insensitive
/// search would have found a literal pattern.
///
/// ```
/// use niceeval::prelude::*;
/// use niceeval::AssertionResult;
///
/// let ok = AssertionResult::evaluate(&includes(Regex::new(r"order #\d+").unwrap()), &"see order #123".subject());
/// assert!(ok.passed);
/// assert_eq!(ok.reason, r#"/order #\d+/ matched "order #123" at char 4: "see order #123""#);
///
/// let no = AssertionResult::evaluate(&includes("refund"), &"Hello".subject());
/// assert_eq!(no.reason, r#""Hello" does not contain "refund""#);
///
/// let case = AssertionResult::evaluate(&includes("refund"), &"Refund issued".subject());
/// assert_eq!(case.reason, r#""Refund issued" does not contain "refund" (ignoring case, "Refund" is at char 0: "Refund issued")"#);
///
/// let json = AssertionResult::evaluate(&includes("\"refund\""), &json!({"intent": "refund"}).subject());
/// assert!(json.passed);
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
        if self.pattern.is_empty_text() {
            return empty_pattern_error("includes");
        }
        let Some(text) = value.text() else {
            return Grade::fail(format!(
                "there is no value (None) to search for {}",
                self.pattern.display()
            ));
        };
        match self.pattern.find(&text) {
            Some(range) => Grade::pass(found(&self.pattern, &text, range)),
            None => Grade::fail(format!(
                "{} {}{}",
                value.preview(),
                absent(&self.pattern),
                case_hint(&self.pattern, &text)
            )),
        }
    }
}

/// The text does not contain the substring, nor match the [`Regex`] anywhere. **Gate by
/// default.**
///
/// - **Text** and **JSON** values are searched as for [`includes`] (JSON in its compact text).
/// - **`None`** passes: there is no text that could contain the pattern.
/// - An empty literal pattern (`excludes("")`) is an execution error on the assertion: every
///   text contains it.
///
/// On a failure the reason shows the text around the first match and how many there are, so
/// a leak in a long reply is easy to find.
///
/// ```
/// use niceeval::prelude::*;
/// use niceeval::AssertionResult;
///
/// let r = AssertionResult::evaluate(&excludes("password"), &"your password is hunter2".subject());
/// assert!(!r.passed);
/// assert_eq!(r.reason, r#"found "password" at char 5: "your password is hunter2""#);
///
/// let r = AssertionResult::evaluate(&excludes(Regex::new(r"(?i)\bsorry\b").unwrap()), &"All good.".subject());
/// assert!(r.passed);
/// assert!(AssertionResult::evaluate(&excludes("x"), &None::<String>.subject()).passed);
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
        if self.pattern.is_empty_text() {
            return empty_pattern_error("excludes");
        }
        let Some(text) = value.text() else {
            return Grade::pass(format!(
                "there is no value (None), so nothing contains {}",
                self.pattern.display()
            ));
        };
        match self.pattern.find(&text) {
            Some(range) => Grade::fail(found(&self.pattern, &text, range)),
            None => Grade::pass(format!("{} {}", value.preview(), absent(&self.pattern))),
        }
    }
}

#[cfg(test)]
mod tests;

#[cfg(test)]
mod doc_examples {
    //! The examples that were this file's doc tests while its items were public.

    #[test]
    fn example_1() {
        use crate::checks::expect::Pattern;

        assert_eq!(Pattern::from("b").find("abc"), Some(1..2));
        assert_eq!(
            Pattern::from(regex::Regex::new(r"\d+").unwrap()).find("ab 123"),
            Some(3..6)
        );
    }
}
