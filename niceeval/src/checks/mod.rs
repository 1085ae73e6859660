//! Layer 3, the checks: matchers that grade one value (`expect`, and `spec`, assertions as
//! data), then the checks graded after the body over the run's events (`scope`, and
//! `run_budget`, the budgets of tokens, cost and tool calls).
//!
//! Invariant: a matcher never sees an event log, a run or a configuration — what it may know
//! of its run comes as a `CheckContext`; a scoped check never sees `Eval`, `Turn` or the
//! record: it grades a `RunView` and registers through the `Defer` seam.

pub mod expect;
pub(crate) mod run_budget;
pub mod scope;
pub mod spec;
