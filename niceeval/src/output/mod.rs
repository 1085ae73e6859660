//! Layer 6, outputs: finished reports turned into text and files — the results files and
//! their history (`results`), the run history's store (`history`, feature `history`), the reporters (console, JSONL, JUnit, Markdown, HTML, OTLP) and
//! snapshots.
//!
//! Invariant: nothing here runs an eval; reporters only render the run layer's data.

#[cfg(feature = "history")]
pub(crate) mod history;
pub mod reporter;
pub(crate) mod results;
pub(crate) mod snapshot;
