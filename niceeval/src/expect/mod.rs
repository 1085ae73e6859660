//! Matchers: the value assertions passed to [`crate::Eval::check`] and
//! [`crate::Eval::require`].
//!
//! Every matcher is a gate without threshold unless its docs say otherwise ([`similarity`] is
//! soft with threshold 0.6). Chain `.at_least(x)` to make one soft with a threshold, `.gate()` to
//! make it a gate again; the last call wins.
//!
//! ```
//! use niceeval::prelude::*;
//! use niceeval::AssertionResult;
//!
//! let result = AssertionResult::evaluate(&includes("refund"), &"Your refund is on its way".subject());
//! assert!(result.passed);
//! let result = AssertionResult::evaluate(&excludes(Regex::new(r"\bsorry\b").unwrap()), &"So sorry!".subject());
//! assert!(!result.passed);
//! assert!(result.reason.contains("sorry"));
//! ```

mod custom;
mod similarity;
mod structure;
mod text;

pub use custom::{make_assertion, satisfies, AssertionBuilder, Custom, Satisfies, View};
pub use similarity::{levenshtein_distance, normalized_similarity, similarity, Similarity};
pub use structure::{
    equals, json_difference, matches, matches_schema, Equals, Matches, MatchesSchema,
};
pub use text::{excludes, includes, Excludes, Includes, Pattern};
