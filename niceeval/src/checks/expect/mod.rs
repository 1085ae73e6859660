//! Matchers: the value assertions passed to [`crate::Eval::check`] and
//! [`crate::Eval::require`].
//!
//! | matcher | default | checks |
//! |---|---|---|
//! | [`includes`] | gate | the text contains a substring or matches a [`Regex`](crate::Regex) |
//! | [`excludes`] | gate | the text does not |
//! | [`equals`] | gate | deep equality, compared as JSON |
//! | [`matches::<T>()`](fn@matches) | gate | the value deserializes into `T` |
//! | [`matches_schema`] | gate | the value validates against a JSON Schema (feature `json-schema`) |
//! | [`similarity`] | soft, threshold 0.6 | normalized Levenshtein similarity to a text |
//! | [`satisfies`] | gate | a predicate with a label |
//! | [`command_succeeded`] | gate | a finished command (`std::process::Output`, exit code) exited 0 |
//! | [`make_assertion`] | gate (settable) | a scoring function |
//!
//! Assertions as data (`niceeval::spec`) also know promptfoo's text-format types, whose
//! matchers live here without a constructor of their own: `is-refusal` (`refusal.rs`),
//! `contains-html`/`is-html` (`html/`), `contains-xml`/`is-xml` (`xml/`),
//! `contains-sql`/`is-sql` (`sql/`) and `meteor` (`meteor/`).
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
pub(crate) mod similarity;
mod structure;
mod text;

mod affix;
pub(crate) mod bleu;
mod case;
#[cfg(feature = "inline-code")]
pub(crate) mod code;
mod combinators;
mod command;
pub(crate) mod custom_dir;

mod edit;
pub(crate) mod gleu;
pub(crate) mod html;
mod js_text;
pub(crate) mod json;
mod lists;
pub(crate) mod meteor;
pub(crate) mod refusal;
mod regex;
pub(crate) mod rouge;
mod script;
pub(crate) mod spent;
pub(crate) mod sql;

pub(crate) mod type_names;
mod words;
pub(crate) mod xml;

pub(crate) mod response;
#[cfg(feature = "providers")]
pub(crate) mod service;
pub(crate) mod trace_spans;

#[cfg(test)]
mod transform_tests;

// The constructors are the API; the matcher types they return stay unnamed (their methods
// come from `Chain`), except the builders whose own methods users call.
pub use custom::{AssertionBuilder, make_assertion, satisfies};
pub use similarity::similarity;
#[cfg(feature = "json-schema")]
#[cfg_attr(docsrs, doc(cfg(feature = "json-schema")))]
pub use structure::matches_schema;
pub(crate) use structure::{Equals, Matches};
pub use structure::{equals, matches};
pub(crate) use text::Pattern;
pub use text::{excludes, includes};

pub use crate::base::assertion::json_path;
pub use affix::{ends_with, starts_with};
pub use bleu::bleu;
pub use case::icontains;
#[cfg(feature = "inline-code")]
pub(crate) use code::Rules as CodeRules;
#[cfg(feature = "inline-code")]
#[cfg_attr(docsrs, doc(cfg(feature = "inline-code")))]
pub use code::{CodeAssertion, javascript, python};
pub(crate) use combinators::{BoxedAssertion, IntoBoxed};
pub use combinators::{all_of, not};
pub use command::command_succeeded;
pub(crate) use custom_dir::missing_message as custom_missing_message;
pub(crate) use custom_dir::{CUSTOM_ASSERTIONS_DIR, CustomAssertions};
pub use custom_dir::{CustomAssertion, custom};
pub(crate) use edit::DEFAULT_MAX_DISTANCE;
pub use edit::{Levenshtein, levenshtein};
#[cfg(feature = "json-schema")]
pub(crate) use json::{SchemaError, check_schema};
pub use json::{contains_json, is_json};
pub use lists::{contains_all, contains_any, icontains_all, icontains_any};
pub use regex::regex;
pub use rouge::{RougeN, rouge_n};
pub(crate) use script::DEFAULT_GRADER_TIMEOUT;
pub(crate) use script::fill_from_events;
pub use script::{Script, script};
pub use spent::{cost, latency};
pub(crate) use words::WordBounds;
pub use words::word_count;
