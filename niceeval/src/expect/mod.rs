//! Matchers: the value assertions passed to [`crate::Eval::check`] and
//! [`crate::Eval::require`].
//!
//! | matcher | default | checks |
//! |---|---|---|
//! | [`includes`] | gate | the text contains a substring or matches a [`Regex`](crate::Regex) |
//! | [`excludes`] | gate | the text does not |
//! | [`equals`] | gate | deep equality, compared as JSON |
//! | [`matches::<T>()`](matches) | gate | the value deserializes into `T` |
//! | [`matches_schema`] | gate | the value validates against a JSON Schema (feature `json-schema`) |
//! | [`similarity`] | soft, threshold 0.6 | normalized Levenshtein similarity to a text |
//! | [`satisfies`] | gate | a predicate with a label |
//! | [`command_succeeded`] | gate | a finished command (`std::process::Output`, exit code) exited 0 |
//! | [`make_assertion`] | gate (settable) | a scoring function |
//!
//! Chain `.at_least(x)` to make one soft with a threshold, `.gate()` to make it a gate again
//! (keeping the threshold); the last call wins. `.weight(w)` and `.metric(name)` set how it
//! counts in the eval's scores.
//!
//! What a matcher looks at is a [`Subject`](crate::Subject): text (`&str`, `String`,
//! `t.reply()`), JSON (`Value`, numbers, booleans, `turn.data`) or nothing (`None`). Text
//! matchers read JSON as its compact JSON text; structural matchers parse text as JSON. Each
//! matcher's docs say how it treats `None`. A reason always shows the relevant part of the value,
//! elided in the middle when long, so a failure report stays readable for multi-megabyte
//! replies.
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
//!
//! // In an eval: `t.check(t.reply(), includes("refund"))`.
//! let t = Eval::detached(None);
//! assert!(t.check("Your refund is on its way", similarity("Your refund is on the way").at_least(0.8)).passed);
//! ```

mod custom;
mod json_diff;
mod levenshtein;
mod similarity;
mod structure;
mod text;

mod affix;
mod bleu;
mod budget;
mod case;
#[cfg(feature = "inline-code")]
mod code;
mod combinators;
mod command;
mod custom_dir;
mod edit;
mod json;
mod lists;
mod process;
mod regex;
mod rouge;
mod script;

pub(crate) mod type_names;
mod words;
pub use type_names::is_builtin_type;

pub use custom::{make_assertion, satisfies, AssertionBuilder, Custom, Satisfies, View};
pub use similarity::{levenshtein_distance, normalized_similarity, similarity, Similarity};
pub use structure::{equals, json_difference, matches, Equals, Matches};
#[cfg(feature = "json-schema")]
#[cfg_attr(docsrs, doc(cfg(feature = "json-schema")))]
pub use structure::{matches_schema, MatchesSchema};
pub use text::{excludes, includes, Excludes, Includes, Pattern};

pub use crate::assertion::{json_path, Transform};
pub use affix::{ends_with, starts_with, Affix};
pub use bleu::{bleu, bleu_score, Bleu, References, DEFAULT_BLEU_THRESHOLD};
pub use budget::{cost, latency, Budget};
pub use case::{icontains, IContains};
#[cfg(feature = "inline-code")]
pub(crate) use code::Rules as CodeRules;
#[cfg(feature = "inline-code")]
#[cfg_attr(docsrs, doc(cfg(feature = "inline-code")))]
pub use code::{javascript, python, CodeAssertion, DEFAULT_CODE_TIMEOUT};
pub use combinators::{all_of, not, AllOf, BoxedAssertion, IntoBoxed, Not};
pub use command::{command_succeeded, CommandSucceeded};
pub(crate) use custom_dir::missing_message as custom_missing_message;
pub use custom_dir::{custom, CustomAssertion, CustomAssertions, CUSTOM_ASSERTIONS_DIR};
pub use edit::{levenshtein, Levenshtein, DEFAULT_MAX_DISTANCE};
#[cfg(feature = "json-schema")]
pub(crate) use json::schema_error as schema_problem;
pub use json::{contains_json, find_json, is_json, ContainsJson, IsJson};
pub use lists::{contains_all, contains_any, icontains_all, icontains_any, ContainsList};
pub use regex::{regex, RegexMatch, RegexSource};
pub use rouge::{rouge_n, rouge_n_score, rouge_tokens, RougeN, DEFAULT_ROUGE_THRESHOLD};
pub(crate) use script::fill_from_events;
pub use script::{script, Script, DEFAULT_GRADER_TIMEOUT};
pub use words::{count_words, word_count, WordBounds, WordCount};
