//! # niceeval-examples
//!
//! A small, deterministic customer-support agent and an eval suite against it: the runnable
//! companion to niceeval's README and guide (`docs/book`). Run the suite with
//!
//! ```text
//! cargo test -p niceeval-examples
//! ```
//!
//! - [`support_bot`] — the agent under test (module [`bot`]): it looks orders up, refunds them,
//!   asks a human before large refunds, and reports tool calls and token usage as events;
//! - [`orders`] — the fixed order book its tools read;
//! - [`checks`] — custom assertions shared by the eval files;
//! - [`fixer`] — a small coding agent for the workspace evals: it edits a copy of
//!   `examples/fixtures/todo-app`.
//!
//! The evals live in `examples/tests/evals/` (one test binary, one module per theme) and
//! `examples/tests/judge.rs`; `examples/niceeval.toml` sets the default agent (a replay of
//! `examples/transcripts/refund_456_approved.jsonl`) for evals that do not name one.

#![deny(missing_docs)]

pub mod bot;
pub mod checks;
pub mod fixer;
pub mod orders;

pub use bot::{APPROVAL_LIMIT_CENTS, SupportBot, support_bot};

#[cfg(doctest)]
#[doc = include_str!("../../README.md")]
pub struct ReadmeDoctests;

#[cfg(doctest)]
pub mod book;

#[cfg(test)]
mod readme {
    /// The text of `async fn NAME` up to the closing brace at the start of a line.
    fn eval_fn<'a>(text: &'a str, name: &str) -> &'a str {
        let start = text
            .find(&format!("async fn {name}("))
            .unwrap_or_else(|| panic!("no `async fn {name}` found"));
        let len = text[start..]
            .find("\n}\n")
            .unwrap_or_else(|| panic!("`async fn {name}` has no closing brace"));
        &text[start..start + len + 2]
    }

    #[test]
    fn readme_example_is_the_suite_eval() {
        let readme = include_str!("../../README.md");
        let suite = include_str!("../tests/evals/first_steps.rs");
        assert_eq!(
            eval_fn(readme, "refund_small_order"),
            eval_fn(suite, "refund_small_order"),
            "README.md's example must stay identical to examples/tests/evals/first_steps.rs"
        );
    }

    #[test]
    fn book_introduction_example_is_the_suite_eval() {
        let page = include_str!("../../docs/book/src/introduction.md");
        let suite = include_str!("../tests/evals/first_steps.rs");
        assert_eq!(
            eval_fn(page, "refund_small_order"),
            eval_fn(suite, "refund_small_order"),
            "docs/book/src/introduction.md's example must stay identical to examples/tests/evals/first_steps.rs"
        );
    }

    #[test]
    fn book_workspace_example_is_the_suite_eval() {
        let page = include_str!("../../docs/book/src/workspaces.md");
        let suite = include_str!("../tests/evals/workspaces.rs");
        assert_eq!(
            eval_fn(page, "fixes_the_missing_method"),
            eval_fn(suite, "fixes_the_missing_method"),
            "docs/book/src/workspaces.md's example must stay identical to examples/tests/evals/workspaces.rs"
        );
    }
}
