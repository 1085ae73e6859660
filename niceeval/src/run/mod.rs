//! Layer 5, running an eval: the handle and what it records (`record`, `turn`, `eval`),
//! definitions (`definition`, `dataset`, `data_eval`), the judge, the comparison with a
//! baseline, the report data, and the engine that runs evals into reports.
//!
//! Invariant: nothing here prints, reads process arguments or sets the exit status; the engine
//! never writes a file but what a check or the judge's cache writes.

pub mod compare;
pub mod data_eval;
pub(crate) mod dataset;
pub(crate) mod definition;
pub(crate) mod engine;
pub(crate) mod error;
pub(crate) mod eval;
#[cfg(feature = "providers")]
pub(crate) mod judge;
pub(crate) mod record;
pub(crate) mod report;
pub(crate) mod turn;
