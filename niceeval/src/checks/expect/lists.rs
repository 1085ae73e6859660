//! List matchers: [`contains_all`], [`contains_any`] and their case-insensitive forms
//! [`icontains_all`], [`icontains_any`].

use crate::base::assertion::{Assertion, Grade, Subject};
use crate::base::excerpt::quote;
use crate::checks::expect::case::fold_case;

/// Whether a list matcher needs every item or one of them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Need {
    All,
    Any,
}

/// The matcher returned by [`contains_all`], [`contains_any`], [`icontains_all`] and
/// [`icontains_any`].
#[derive(Debug, Clone)]
pub struct ContainsList {
    items: Vec<String>,
    folded: Vec<String>,
    need: Need,
    ignore_case: bool,
}

fn list(
    items: impl IntoIterator<Item = impl Into<String>>,
    need: Need,
    ignore_case: bool,
) -> ContainsList {
    let items: Vec<String> = items.into_iter().map(Into::into).collect();
    let folded = if ignore_case {
        items.iter().map(|i| fold_case(i).into_owned()).collect()
    } else {
        Vec::new()
    };
    ContainsList {
        items,
        folded,
        need,
        ignore_case,
    }
}

/// The text contains every item (case-sensitive). Gate by default; scores 1 or 0.
///
/// An empty list passes (there is nothing missing), as in promptfoo; the reason of a failure
/// lists every missing item. Non-text values are matched against their JSON text; `None` fails.
///
/// ```
/// use niceeval::prelude::*;
/// use niceeval::AssertionResult;
///
/// let r = AssertionResult::evaluate(&contains_all(["summary", "next steps"]), &"summary: ...".subject());
/// assert!(!r.passed);
/// assert_eq!(r.reason, r#"missing 1 of 2: "next steps""#);
/// assert!(AssertionResult::evaluate(&contains_all(Vec::<String>::new()), &"x".subject()).passed);
/// ```
pub fn contains_all(items: impl IntoIterator<Item = impl Into<String>>) -> ContainsList {
    list(items, Need::All, false)
}

/// The text contains at least one item (case-sensitive). Gate by default; scores 1 or 0.
///
/// An empty list fails (no item can be found), as in promptfoo.
///
/// ```
/// use niceeval::prelude::*;
/// use niceeval::AssertionResult;
///
/// let a = contains_any(["approve", "accept"]);
/// assert!(AssertionResult::evaluate(&a, &"I accept".subject()).passed);
/// assert!(!AssertionResult::evaluate(&contains_any(Vec::<String>::new()), &"x".subject()).passed);
/// ```
pub fn contains_any(items: impl IntoIterator<Item = impl Into<String>>) -> ContainsList {
    list(items, Need::Any, false)
}

/// [`contains_all`], ignoring case (Unicode default lower-casing, as [`crate::checks::expect::icontains`]).
///
/// ```
/// use niceeval::prelude::*;
/// use niceeval::AssertionResult;
///
/// assert!(AssertionResult::evaluate(&icontains_all(["HELLO", "world"]), &"Hello, World".subject()).passed);
/// ```
pub fn icontains_all(items: impl IntoIterator<Item = impl Into<String>>) -> ContainsList {
    list(items, Need::All, true)
}

/// [`contains_any`], ignoring case.
///
/// ```
/// use niceeval::prelude::*;
/// use niceeval::AssertionResult;
///
/// assert!(AssertionResult::evaluate(&icontains_any(["NOPE", "WORLD"]), &"hello world".subject()).passed);
/// ```
pub fn icontains_any(items: impl IntoIterator<Item = impl Into<String>>) -> ContainsList {
    list(items, Need::Any, true)
}

impl ContainsList {
    fn name(&self) -> &'static str {
        match (self.need, self.ignore_case) {
            (Need::All, false) => "contains_all",
            (Need::Any, false) => "contains_any",
            (Need::All, true) => "icontains_all",
            (Need::Any, true) => "icontains_any",
        }
    }

    fn shown(items: &[&String]) -> String {
        items
            .iter()
            .map(|i| quote(i))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

impl Assertion for ContainsList {
    fn describe(&self) -> String {
        let all: Vec<&String> = self.items.iter().collect();
        crate::base::excerpt::elide(&format!("{}([{}])", self.name(), Self::shown(&all)), 120)
    }

    fn evaluate(&self, value: &Subject<'_>) -> Grade {
        let Some(text) = value.text() else {
            return Grade::fail("there is no value (None) to search");
        };
        let haystack = if self.ignore_case {
            fold_case(&text)
        } else {
            std::borrow::Cow::Borrowed(text.as_ref())
        };
        let needles = if self.ignore_case {
            &self.folded
        } else {
            &self.items
        };
        let case = if self.ignore_case {
            " (ignoring case)"
        } else {
            ""
        };
        match self.need {
            Need::All => {
                let missing: Vec<&String> = self
                    .items
                    .iter()
                    .zip(needles)
                    .filter(|(_, n)| !haystack.contains(n.as_str()))
                    .map(|(item, _)| item)
                    .collect();
                if missing.is_empty() {
                    Grade::pass(format!("contains all {} item(s){case}", self.items.len()))
                } else {
                    Grade::fail(format!(
                        "missing {} of {}{case}: {}",
                        missing.len(),
                        self.items.len(),
                        Self::shown(&missing)
                    ))
                }
            }
            Need::Any => match self
                .items
                .iter()
                .zip(needles)
                .find(|(_, n)| haystack.contains(n.as_str()))
            {
                Some((item, _)) => Grade::pass(format!("contains {}{case}", quote(item))),
                None if self.items.is_empty() => {
                    Grade::fail("the list of items is empty, so none can be found")
                }
                None => Grade::fail(format!(
                    "{} contains none of{case}: {}",
                    value.preview(),
                    Self::shown(&self.items.iter().collect::<Vec<_>>())
                )),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::assertion::{AssertionResult, Checkable};

    fn passes(a: &ContainsList, text: &str) -> bool {
        AssertionResult::evaluate(a, &text.subject()).passed
    }

    #[test]
    fn all_and_any_with_empty_lists() {
        let none: [&str; 0] = [];
        assert!(passes(&contains_all(none), ""));
        assert!(!passes(&contains_any(none), "anything"));
        assert!(passes(&icontains_all(none), ""));
        assert!(!passes(&icontains_any(none), ""));
    }

    #[test]
    fn case_sensitivity() {
        assert!(!passes(&contains_all(["Hello", "World"]), "hello world"));
        assert!(passes(&icontains_all(["Hello", "World"]), "hello world"));
        assert!(!passes(&contains_any(["HELLO"]), "hello"));
        assert!(passes(&icontains_any(["HELLO"]), "hello"));
        assert!(passes(&icontains_any(["ÜBER"]), "über alles"));
    }

    #[test]
    fn reasons_name_missing_items() {
        let r = AssertionResult::evaluate(&icontains_all(["a", "B", "zz"]), &"ab".subject());
        assert_eq!(r.reason, "missing 1 of 3 (ignoring case): \"zz\"");
        let r = AssertionResult::evaluate(&contains_any(["x", "y"]), &"ab".subject());
        assert_eq!(r.reason, "\"ab\" contains none of: \"x\", \"y\"");
        assert_eq!(contains_any(["x"]).describe(), "contains_any([\"x\"])");
    }
}
