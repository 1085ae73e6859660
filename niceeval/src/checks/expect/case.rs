//! Case-insensitive substring matching: [`icontains`], and the lower-casing the `icontains_*`
//! list matchers share.

use std::borrow::Cow;

use crate::base::assertion::{Assertion, Grade, Subject};
use crate::base::excerpt::quote;

/// Lower-cases with Unicode's full default mapping (the same as JavaScript's `toLowerCase` and
/// Python's `str.lower`): `"ÉCOLE"` → `"école"`, `"İ"` → `"i̇"`. ASCII text takes a fast path.
pub(crate) fn fold_case(text: &str) -> Cow<'_, str> {
    if text
        .bytes()
        .all(|b| !b.is_ascii_uppercase() && b.is_ascii())
    {
        Cow::Borrowed(text)
    } else if text.is_ascii() {
        Cow::Owned(text.to_ascii_lowercase())
    } else {
        Cow::Owned(text.to_lowercase())
    }
}

/// The text contains `needle`, ignoring case. Gate by default.
///
/// Both sides are lower-cased with Unicode's default mapping (as promptfoo's `icontains` does
/// with JavaScript's `toLowerCase`), so `"STRASSE"` contains `"strasse"` but not `"straße"`:
/// no locale rules and no `ß` → `ss` folding. An empty needle is contained in every text (it
/// passes; assertions as data reject an empty `value` at load time instead). Non-text values
/// are matched against their JSON text; `None` fails.
///
/// ```
/// use niceeval::prelude::*;
/// use niceeval::AssertionResult;
///
/// assert!(AssertionResult::evaluate(&icontains("REFUND"), &"Your refund is here".subject()).passed);
/// assert!(AssertionResult::evaluate(&icontains("école"), &"ÉCOLE".subject()).passed);
/// let r = AssertionResult::evaluate(&icontains("sorry"), &"Hello".subject());
/// assert_eq!(r.reason, r#""Hello" does not contain "sorry" (ignoring case)"#);
/// ```
pub fn icontains(needle: impl Into<String>) -> IContains {
    let needle = needle.into();
    let folded = fold_case(&needle).into_owned();
    IContains { needle, folded }
}

/// The matcher returned by [`icontains`].
#[derive(Debug, Clone)]
pub struct IContains {
    needle: String,
    folded: String,
}

impl Assertion for IContains {
    fn describe(&self) -> String {
        format!("icontains({})", quote(&self.needle))
    }

    fn evaluate(&self, value: &Subject<'_>) -> Grade {
        let Some(text) = value.text() else {
            return Grade::fail(format!(
                "there is no value (None) to search for {}",
                quote(&self.needle)
            ));
        };
        if fold_case(&text).contains(self.folded.as_str()) {
            Grade::pass(format!("contains {} (ignoring case)", quote(&self.needle)))
        } else {
            Grade::fail(format!(
                "{} does not contain {} (ignoring case)",
                value.preview(),
                quote(&self.needle)
            ))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::assertion::{AssertionResult, Checkable};

    fn passes(a: &IContains, text: &str) -> bool {
        AssertionResult::evaluate(a, &text.subject()).passed
    }

    #[test]
    fn ignores_case_both_ways_and_handles_unicode() {
        assert!(passes(&icontains("hello"), "HELLO WORLD"));
        assert!(passes(&icontains("HELLO"), "hello world"));
        assert!(passes(&icontains("ΣΟΦΙΑ"), "η σοφια"));
        assert!(!passes(&icontains("straße"), "STRASSE"));
        assert!(passes(&icontains(""), "anything"));
        assert!(passes(&icontains(""), ""));
        assert!(!passes(&icontains("a"), ""));
    }

    #[test]
    fn none_fails_and_numbers_match_their_text() {
        let a = icontains("42");
        assert!(!AssertionResult::evaluate(&a, &None::<String>.subject()).passed);
        assert!(AssertionResult::evaluate(&a, &1423u32.subject()).passed);
    }
}
