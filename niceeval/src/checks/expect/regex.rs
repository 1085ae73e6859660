//! [`regex`]: the text matches a regular expression somewhere (a search, not a full match).

use std::sync::{Arc, LazyLock, Mutex};

use regex::Regex;
use rustc_hash::FxHashMap;

use crate::base::assertion::{Assertion, Grade, Subject};
use crate::checks::expect::text::context;

/// A compiled pattern: the linear-time engine when it can, the backtracking one for
/// look-around and back-references.
#[derive(Debug, Clone)]
enum Compiled {
    Linear(Regex),
    Backtracking(fancy_regex::Regex),
}

impl Compiled {
    fn as_str(&self) -> &str {
        match self {
            Compiled::Linear(re) => re.as_str(),
            Compiled::Backtracking(re) => re.as_str(),
        }
    }

    /// The first match; `Err` when the backtracking engine gives up (its step limit).
    fn find(&self, text: &str) -> Result<Option<std::ops::Range<usize>>, fancy_regex::Error> {
        match self {
            Compiled::Linear(re) => Ok(re.find(text).map(|m| m.range())),
            Compiled::Backtracking(re) => re.find(text).map(|m| m.map(|m| m.range())),
        }
    }
}

/// A regular expression for [`regex`]: a pattern to compile (`&str`, `String`) or a compiled
/// [`Regex`].
#[derive(Debug, Clone)]
pub struct RegexSource(Result<Arc<Compiled>, (String, String)>);

/// Patterns compiled so far in this process: an eval builds its matchers on every run, and
/// compiling a pattern costs far more than matching it against a reply. Every matcher of a
/// pattern shares one compiled value, and with it the regex's pool of search caches.
type Shared = Result<Arc<Compiled>, (String, String)>;
static COMPILED: LazyLock<Mutex<FxHashMap<String, Shared>>> = LazyLock::new(Default::default);

/// Most patterns [`COMPILED`] keeps (it starts over when full).
const COMPILED_LIMIT: usize = 1024;

fn compile(pattern: &str) -> Shared {
    let lock = || COMPILED.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(compiled) = lock().get(pattern) {
        return compiled.clone();
    }
    let compiled = match Regex::new(pattern) {
        Ok(re) => Ok(Arc::new(Compiled::Linear(re))),
        Err(linear) => match fancy_regex::Regex::new(pattern) {
            Ok(re) => Ok(Arc::new(Compiled::Backtracking(re))),
            Err(_) => Err((pattern.to_string(), linear.to_string())),
        },
    };
    let mut cache = lock();
    if cache.len() >= COMPILED_LIMIT {
        cache.clear();
    }
    cache.insert(pattern.to_string(), compiled.clone());
    compiled
}

impl From<&str> for RegexSource {
    fn from(pattern: &str) -> Self {
        RegexSource(compile(pattern))
    }
}

impl From<String> for RegexSource {
    fn from(pattern: String) -> Self {
        RegexSource::from(pattern.as_str())
    }
}

impl From<Regex> for RegexSource {
    fn from(re: Regex) -> Self {
        RegexSource(Ok(Arc::new(Compiled::Linear(re))))
    }
}

impl From<&Regex> for RegexSource {
    fn from(re: &Regex) -> Self {
        RegexSource(Ok(Arc::new(Compiled::Linear(re.clone()))))
    }
}

/// The text matches `pattern` somewhere. Gate by default.
///
/// It is a search (like Python's `re.search` and JavaScript's `RegExp.test`): anchor with `^`
/// and `$` for a full match. The syntax is the [`regex`](https://docs.rs/regex) crate's, which
/// runs in linear time on any input; a pattern that needs look-around or back-references (as
/// JavaScript and Python allow, and promptfoo or Runsight suites use) runs on a backtracking
/// engine ([`fancy-regex`](https://docs.rs/fancy-regex)) instead. Write `(?i)` for
/// case-insensitive and `(?s)` to let `.` match newlines; `\d` and `\w` are Unicode-aware. An
/// invalid pattern is an execution error here and a load-time error in assertions as data.
/// `None` fails.
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
    re: Shared,
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
        format!("regex(/{}/)", crate::base::excerpt::elide(pattern, 60))
    }

    fn evaluate(&self, value: &Subject<'_>) -> Grade {
        let re = match &self.re {
            Ok(re) => re,
            Err((pattern, e)) => {
                return Grade::error(format!("invalid regular expression /{pattern}/: {e}"));
            }
        };
        let Some(text) = value.text() else {
            return Grade::fail("there is no value (None) to match");
        };
        match re.find(&text) {
            Err(e) => Grade::error(format!("regex /{}/ could not finish: {e}", re.as_str())),
            Ok(Some(range)) => Grade::pass(format!("matched at {}", context(&text, range))),
            Ok(None) => Grade::fail(format!(
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
    use crate::base::assertion::{AssertionResult, Checkable};

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
        // Look-around and back-references fall back to the backtracking engine.
        assert!(ok(&regex(r"^(?!.*error).*$"), "all good"));
        assert!(!ok(&regex(r"^(?!.*error).*$"), "an error"));
        assert!(ok(&regex(r"(\w+) \1"), "hello hello"));
        assert!(regex("(?<=a").invalid().is_some());
    }

    #[test]
    fn a_pattern_compiled_again_comes_from_the_cache_and_behaves_the_same() {
        for _ in 0..3 {
            let ok = |a: &RegexMatch, t: &str| AssertionResult::evaluate(a, &t.subject()).passed;
            assert!(ok(&regex(r"order #\d+ cached"), "see order #12 cached"));
            assert!(!ok(&regex(r"order #\d+ cached"), "see order # cached"));
            assert!(regex("[cached").invalid().is_some());
        }
        assert!(COMPILED.lock().unwrap().contains_key(r"order #\d+ cached"));
    }
}
