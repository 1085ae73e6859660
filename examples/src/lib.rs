//! # niceeval-examples
//!
//! A small, deterministic customer-support agent and an eval suite against it: the runnable
//! companion to niceeval's README. Run the suite with
//!
//! ```text
//! cargo test -p niceeval-examples
//! ```
//!
//! - [`support_bot`] — the agent under test (module [`bot`]): it looks orders up, refunds them,
//!   asks a human before large refunds, and reports tool calls and token usage as events;
//! - [`orders`] — the fixed order book its tools read;
//! - [`checks`] — custom assertions shared by the eval files.
//!
//! The evals live in `examples/tests/`, one file per theme; `examples/niceeval.toml` sets the
//! default agent (a replay of `examples/transcripts/refund_456_approved.jsonl`) for evals that do
//! not name one.

#![deny(missing_docs)]

pub mod bot;
pub mod checks;
pub mod orders;

pub use bot::{support_bot, SupportBot, APPROVAL_LIMIT_CENTS};

#[cfg(doctest)]
#[doc = include_str!("../../README.md")]
pub struct ReadmeDoctests;
