//! The `cargo test` front end: what the `#[test]` function `#[eval]` generates calls. It runs
//! the eval with the engine, appends the report to the crate's results file, prints the report
//! (captured by libtest), announces a skip past the capture, fails a failed eval with its report
//! as the whole message, and at process exit lists the skips and below-threshold passes that
//! libtest counted as plain passes (`exit_notice`).

use std::io::Write as _;
use std::path::Path;

use crate::definition::EvalDefinition;
use crate::engine::run_eval;
use crate::outcome::Outcome;
use crate::report::EvalReport;

mod exit_notice;
mod signals;

/// An eval as libtest names its test: the id without the test target (a `cargo test` process
/// runs one target), as every output of a run names it.
fn name(id: &str) -> &str {
    crate::report::Names::default().name(id)
}

/// The entry point of a `#[eval]` test under `cargo test`: runs the eval, prints its report
/// (captured by the test harness, so shown for failures and with `--nocapture`), announces a
/// skip on the terminal, and fails the test when the eval failed.
///
/// A failure unwinds with `resume_unwind`, which skips the panic hook: the report is the whole
/// failure message, with no panic location or backtrace around it.
pub fn run_test(def: &'static EvalDefinition) {
    finish_test(run_test_report(def));
}

/// The test `#[eval(cases = "..")]` generates for one case: finds the case `name` of the
/// dataset eval `def` (reading the file once per test binary) and runs it as [`run_test`]
/// does. A dataset that cannot be read, or that no longer holds the case, fails the test with
/// the reason.
///
/// With `min_case_pass_rate`, a failing case does not fail its test: the dataset's verdict
/// over the cases this process ran is given when it exits, and a dataset below its rate makes
/// the process exit with 101 (under nextest, one process per test, each case decides alone).
pub fn run_case(def: &'static EvalDefinition, name: &str) {
    finish_case(def, run_case_report(def, name));
}

/// Runs the case `name` of the dataset eval `def` and appends its report to the results file
/// (the first half of [`run_case`]; with `snapshot`, the report is snapshotted in between).
pub fn run_case_report(def: &'static EvalDefinition, name: &str) -> EvalReport {
    match crate::dataset::case_named(def, name) {
        Ok(case) => run_test_report(case),
        Err(e) => {
            let mut report = EvalReport::empty(def);
            report.id = format!("{}::{name}", def.id());
            report.error = Some(crate::outcome::RunError::new(
                crate::outcome::RunErrorKind::Setup,
                e.to_string(),
            ));
            report
        }
    }
}

/// Turns a case's report into its test's result (the second half of [`run_case`]).
pub fn finish_case(def: &'static EvalDefinition, report: EvalReport) {
    match report.min_case_pass_rate {
        Some(min) if std::env::var_os("NEXTEST_RUN_ID").is_none() => {
            exit_notice::dataset_case(name(&def.id()), min, &report);
            if report.outcome == Outcome::Failed {
                // Shown like a failure (with --nocapture), decided by the dataset at exit.
                println!("{}", report.render());
            } else {
                finish_test(report);
            }
        }
        _ => finish_test(report),
    }
}

/// Runs the eval and appends its report to the results file (the first half of
/// [`run_test`]; `#[eval(snapshot)]` snapshots the report in between).
pub fn run_test_report(def: &'static EvalDefinition) -> EvalReport {
    signals::own();
    let report = run_eval(def);
    if let Err(e) = crate::results::append(&report, Path::new(def.manifest_dir)) {
        let _ = writeln!(
            std::io::stderr().lock(),
            "niceeval: could not write the results file for {}: {e}",
            report.id
        );
    }
    #[cfg(feature = "otel")]
    export(def, &report);
    report
}

/// Sends the eval as a trace when `[trace] export` says where.
#[cfg(feature = "otel")]
fn export(def: &EvalDefinition, report: &EvalReport) {
    let endpoint = crate::config::Config::for_manifest_dir(def.manifest_dir)
        .ok()
        .and_then(|c| c.trace.export.clone());
    if let Some(endpoint) = endpoint
        && let Err(e) = crate::reporter::otlp::export(report, &endpoint)
    {
        let _ = writeln!(std::io::stderr().lock(), "niceeval: {e}");
    }
}

/// Turns a report into the test's result (the second half of [`run_test`]).
pub fn finish_test(report: EvalReport) {
    match report.outcome {
        Outcome::Failed => {
            let text = report.render();
            println!("{text}");
            std::panic::resume_unwind(Box::new(text));
        }
        Outcome::Skipped => {
            // libtest has no runtime skip; say it where the user sees it, past output capture.
            let reason = report.skip_reason.as_deref().unwrap_or("no reason given");
            let mut stderr = std::io::stderr().lock();
            let _ = writeln!(stderr, "niceeval: SKIPPED {}: {reason}", name(&report.id));
            drop(stderr);
            exit_notice::skipped(name(&report.id), reason);
            println!("{}", report.render());
        }
        Outcome::Passed => {
            if report.below_threshold {
                exit_notice::below_threshold(&report);
            }
            println!("{}", report.render());
        }
    }
}
