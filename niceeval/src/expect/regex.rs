//! [`regex`]: the text matches a regular expression somewhere (a search, not a full match).

use regex::Regex;

use crate::assertion::{Assertion, Grade, Subject};
use crate::expect::text::context;

/// A regular expression for [`regex`]: a pattern to compile (`&str`, `String`) or a compiled
/// [`Regex`].
#[derive(Debug, Clone)]
pub struct RegexSource(Result<Regex, (String, String)>);

impl From<&str> for RegexSource {
    fn from(pattern: &str) -> Self {
        RegexSource(Regex::new(pattern).map_err(|e| (pattern.to_string(), e.to_string())))
    }
}

impl From<String> for RegexSource {
    fn from(pattern: String) -> Self {
        RegexSource::from(pattern.as_str())
    }
}

impl From<Regex> for RegexSource {
    fn from(re: Regex) -> Self {
        RegexSource(Ok(re))
    }
}

impl From<&Regex> for RegexSource {
    fn from(re: &Regex) -> Self {
        RegexSource(Ok(re.clone()))
    }
}

/// The text matches `pattern` somewhere. Gate by default.
///
/// It is a search (like Python's `re.search` and JavaScript's `RegExp.test`): anchor with `^`
/// and `$` for a full match. The syntax is the [`regex`](https://docs.rs/regex) crate's: no
/// look-around or back-references (linear time on any input); write `(?i)` for case-insensitive
/// and `(?s)` to let `.` match newlines. An invalid pattern is an execution error here and a
/// load-time error in assertions as data. `None` fails.
///
/// ```
/// use niceeval::prelude::*;
/// use niceeval::AssertionResult;
///
/// assert!(AssertionResult::evaluate(&regex(r"\d{4}-\d{2}-\d{2}"), &"due 2024-05-01".subject()).passed);
/// assert!(!AssertionResult::evaluate(&regex(r"^\d+$"), &"12a".subject()).passed);
/// let bad = AssertionResult::evaluate(&regex("(unclosed"), &"x".subject());
/// assert!(bad.error.is_some());
/// ```
pub fn regex(pattern: impl Into<RegexSource>) -> RegexMatch {
    RegexMatch {
        re: pattern.into().0,
    }
}

/// The matcher returned by [`regex`].
#[derive(Debug, Clone)]
pub struct RegexMatch {
    re: Result<Regex, (String, String)>,
}

impl RegexMatch {
    /// Why the pattern does not compile, if it does not.
    pub fn invalid(&self) -> Option<&str> {
        self.re.as_ref().err().map(|(_, e)| e.as_str())
    }
}

impl Assertion for RegexMatch {
    fn describe(&self) -> String {
        let pattern = match &self.re {
            Ok(re) => re.as_str(),
            Err((p, _)) => p.as_str(),
        };
        format!("regex(/{}/)", crate::excerpt::elide(pattern, 60))
    }

    fn evaluate(&self, value: &Subject<'_>) -> Grade {
        let re = match &self.re {
            Ok(re) => re,
            Err((pattern, e)) => {
                return Grade::error(format!("invalid regular expression /{pattern}/: {e}"))
            }
        };
        let Some(text) = value.text() else {
            return Grade::fail("there is no value (None) to match");
        };
        match re.find(&text) {
            Some(m) => Grade::pass(format!("matched at {}", context(&text, m.range()))),
            None => Grade::fail(format!(
                "{} does not match /{}/",
                value.preview(),
                re.as_str()
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::assertion::{AssertionResult, Checkable};

    #[test]
    fn search_semantics_and_flags() {
        let ok = |a: &RegexMatch, t: &str| AssertionResult::evaluate(a, &t.subject()).passed;
        assert!(ok(&regex("b"), "abc"));
        assert!(!ok(&regex("^b"), "abc"));
        assert!(ok(&regex("(?i)HELLO"), "hello"));
        assert!(ok(&regex(""), ""));
        assert!(ok(&regex(r"\p{Greek}+"), "αβγ"));
        assert!(!ok(&regex("a.b"), "a\nb"));
        assert!(ok(&regex("(?s)a.b"), "a\nb"));
        assert!(regex("[").invalid().is_some());
        assert_eq!(regex(r"\d+").describe(), r"regex(/\d+/)");
    }
}
