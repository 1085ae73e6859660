//! Layer 6, outputs: finished reports turned into text and files — the results files and
//! their history (`results`), the reporters (console, JSONL, JUnit, Markdown, HTML, OTLP) and
//! snapshots.
//!
//! Invariant: nothing here runs an eval; reporters only render the run layer's data.

pub mod reporter;
pub(crate) mod results;
pub(crate) mod snapshot;
