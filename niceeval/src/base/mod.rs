//! Layer 0, the base: what every other layer builds on and nothing of running an eval — the
//! event stream's types, excerpts and redaction of texts, panics' messages, statistics,
//! assertions' data and the outcome fold, the grader wire format, "did you mean", and
//! `process`, the one place processes are started and their whole trees ended.
//!
//! Invariant: no module here names an agent, a configuration, a check or a run.

pub(crate) mod assertion;
pub(crate) mod event;
pub(crate) mod excerpt;
pub mod grader;
pub(crate) mod outcome;
pub(crate) mod panic;
pub(crate) mod process;
pub(crate) mod redact;
pub(crate) mod stats;
pub(crate) mod suggest;
