//! Prefix and suffix matchers: [`starts_with`] and [`ends_with`].

use crate::base::assertion::{Assertion, Grade, Subject};
use crate::base::excerpt::quote;

/// Which end of the text an [`Affix`] looks at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum End {
    Start,
    End,
}

/// The matcher returned by [`starts_with`] and [`ends_with`].
#[derive(Debug, Clone)]
pub struct Affix {
    affix: String,
    end: End,
}

/// The text starts with `prefix`, exactly: case-sensitive, and leading whitespace counts
/// (`"  Hello"` does not start with `"Hello"`; chain `.transform(..)` or trim the value first).
/// Gate by default. An empty prefix passes. Non-text values are matched against their JSON
/// text; `None` fails.
///
/// ```
/// use niceeval::prelude::*;
/// use niceeval::AssertionResult;
///
/// assert!(AssertionResult::evaluate(&starts_with("Dear"), &"Dear Ada,".subject()).passed);
/// let r = AssertionResult::evaluate(&starts_with("Dear"), &"Hi Ada".subject());
/// assert_eq!(r.reason, r#""Hi Ada" does not start with "Dear""#);
/// ```
pub fn starts_with(prefix: impl Into<String>) -> Affix {
    Affix {
        affix: prefix.into(),
        end: End::Start,
    }
}

/// The text ends with `suffix`, exactly (case-sensitive; trailing whitespace and newlines
/// count). Gate by default. An empty suffix passes; `None` fails.
///
/// ```
/// use niceeval::prelude::*;
/// use niceeval::AssertionResult;
///
/// assert!(AssertionResult::evaluate(&ends_with("Regards."), &"... Regards.".subject()).passed);
/// assert!(!AssertionResult::evaluate(&ends_with("Regards."), &"Regards.\n".subject()).passed);
/// ```
pub fn ends_with(suffix: impl Into<String>) -> Affix {
    Affix {
        affix: suffix.into(),
        end: End::End,
    }
}

impl Assertion for Affix {
    fn describe(&self) -> String {
        let name = match self.end {
            End::Start => "starts_with",
            End::End => "ends_with",
        };
        format!(
            "{name}({})",
            crate::base::excerpt::quote_width(&self.affix, 60)
        )
    }

    fn evaluate(&self, value: &Subject<'_>) -> Grade {
        let Some(text) = value.text() else {
            return Grade::fail("there is no value (None)");
        };
        let (ok, verb) = match self.end {
            End::Start => (text.starts_with(self.affix.as_str()), "start"),
            End::End => (text.ends_with(self.affix.as_str()), "end"),
        };
        if ok {
            Grade::pass(format!("{}s with {}", verb, quote(&self.affix)))
        } else {
            // Show the end of the text that was compared, so a long value is still readable.
            let shown = match self.end {
                End::Start => value.preview(),
                End::End => {
                    let keep = self.affix.chars().count().max(40);
                    if text.chars().count() > keep + 20 {
                        crate::base::excerpt::quote_tail(&text, keep, 80)
                    } else {
                        value.preview()
                    }
                }
            };
            Grade::fail(format!(
                "{shown} does not {verb} with {}",
                quote(&self.affix)
            ))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::assertion::{AssertionResult, Checkable};

    #[test]
    fn exact_edges() {
        let ok = |a: &Affix, t: &str| AssertionResult::evaluate(a, &t.subject()).passed;
        assert!(ok(&starts_with(""), ""));
        assert!(ok(&ends_with(""), "x"));
        assert!(!ok(&starts_with("Hello"), "  Hello"));
        assert!(!ok(&starts_with("hello"), "Hello"));
        assert!(ok(&starts_with("é"), "école"));
        assert!(ok(&ends_with("🎉"), "done 🎉"));
        assert!(!ok(&ends_with("x"), ""));
        assert!(!AssertionResult::evaluate(&starts_with("a"), &None::<String>.subject()).passed);
    }

    #[test]
    fn long_text_reason_shows_the_end() {
        let text = format!("{}END", "a".repeat(1000));
        let r = AssertionResult::evaluate(&ends_with("FIN"), &text.subject());
        assert!(r.reason.contains("aEND\""), "{}", r.reason);
        assert!(r.reason.len() < 200);
    }
}
