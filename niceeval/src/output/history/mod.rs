//! The run history: every finished run's summary per eval — outcome, pass counts, score,
//! metrics, tokens, cost, duration — and the run's own row — commit, config hash, shard,
//! filter, niceeval version, totals — in one SQLite file (feature `history`), and what is read
//! back from it: the runs, newest first, and an eval's or a suite's trend with the points where
//! it moved beyond chance marked (`niceeval history`), and what the viewer's page gets of them
//! (`page.rs`: bounded, compact).
//!
//! The file is `<target>/niceeval/history.sqlite` unless `[history] path` or
//! `NICEEVAL_HISTORY` names another (`place.rs`); `[history] enabled = false` or
//! `NICEEVAL_HISTORY=off` records nothing. The suite runner, plain `cargo test`, `niceeval
//! eval` and `niceeval merge` record through [`Recorder`], a reporter that commits each eval's
//! row as it finishes (a killed run keeps what finished). Several processes may write at once
//! (nextest: one process per eval, one run id): the file is in WAL mode with a busy timeout,
//! and rows are upserted by (run, target, eval).

mod marks;
mod page;
mod place;
mod query;
mod recorder;
mod store;

pub use marks::{Mark, MarkRule, Point, Shift, mark};
pub use place::{Place, store_path};
pub use query::{EvalPoint, RunRow, SuitePoint};
pub(crate) use recorder::Recorder;
pub use store::{History, HistoryError, SCHEMA};
