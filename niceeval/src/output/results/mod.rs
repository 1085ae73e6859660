//! The history of runs: the results files where eval reports land, and how they are read back.
//!
//! Under plain `cargo test` (or `cargo nextest`) and under the suite runner
//! (`niceeval::main!()`) alike, every finished eval's [`EvalReport`](crate::EvalReport) is one
//! JSON line in a file in `target/niceeval/results/`, written by [`ResultsFile`], a reporter
//! that keeps the file open and flushes each line as its eval finishes. A suite binary's `--report` and the `niceeval report` / `niceeval merge` commands
//! read them back, keep each eval's latest run ([`latest`], the default) or combine every
//! record as the shards of one run ([`merge`], `--combine`), recompute pass rates and pass@k,
//! and replay the result through reporters ([`crate::front::harness::run_report`], `cargo test --test
//! evals -- --report --markdown summary.md`). They do it in two streamed passes (`Index`,
//! `stream.rs`): positions and counters first, then each eval's records read again and merged
//! one eval at a time, so memory does not hold the records. [`read_reports`], [`latest`],
//! [`merge`] and [`replay`] do the same in memory, for callers that want the reports.
//!
//! Every record carries the run that wrote it ([`RunInfo`](crate::run::report::RunInfo): run id, start time,
//! target), so reading can tell the latest run of a target from an earlier one.
//!
//! File naming: `<test binary>.jsonl`. The first time a process writes to it, the file is
//! compacted to the latest record of each eval the binary still defines (each dataset's cases
//! as its file holds them now: a deleted row leaves), then appended to: a
//! rerun replaces the results of the evals it ran, and a filtered run (`cargo test --test
//! evals refund`) keeps the other evals' latest results instead of dropping them. Under
//! nextest, which runs each test in its own process, the file is
//! `<test binary>-<NEXTEST_RUN_ID>.jsonl` and is only appended to; the run's first process
//! compacts the binary's earlier files instead (earlier runs', plain `cargo test`'s) to what
//! it defines now, so a deleted eval or row leaves the results at the next nextest run too.
//! `NICEEVAL_RESULTS_DIR` overrides the directory; `NICEEVAL_RESULTS=0` turns the files off.
//! While the suite runner runs, `<stem>.running.json` beside its file says what is running
//! (for `niceeval view`; removed when the run ends).
//!
//! ```no_run
//! // After `cargo test`: every eval of every test binary, merged into one summary.
//! let dir = niceeval::__workspace::results::results_dir(std::path::Path::new(env!("CARGO_MANIFEST_DIR")));
//! let reports = niceeval::__workspace::results::merge(niceeval::__workspace::results::read_reports(&[dir])?);
//! println!("{} evals", reports.len());
//! # Ok::<(), niceeval::__workspace::results::ReadError>(())
//! ```

pub mod manifest;
mod merge;
mod read;
mod stream;
mod write;

pub use merge::{from_earlier_runs, latest, latest_records, merge, replay};
pub use read::{ReadError, read_reports};
pub(crate) use read::{Records, last_run};
pub(crate) use stream::Index;
pub use write::this_target;
pub use write::{
    ResultsFile, name_after_suite_files, results_dir, suite_files_name, target_dir, this_run,
};
pub(crate) use write::{continue_run, this_file, under_nextest};

#[cfg(test)]
mod tests;
