//! The `cargo test` front end: what the `#[test]` function `#[eval]` generates calls. It runs
//! the eval with the engine, appends the report to the crate's results file, prints the report
//! (captured by libtest), announces a skip past the capture, fails a failed eval with its report
//! as the whole message, and at process exit lists the skips and below-threshold passes that
//! libtest counted as plain passes (`exit_notice`).

use std::io::Write as _;
use std::sync::Mutex;

use crate::base::outcome::Outcome;
use crate::front::harness::outputs::{Outputs, Requested};
use crate::run::definition::EvalDefinition;
use crate::run::engine::run_eval;
use crate::run::report::{EvalReport, EvalSummary, SuiteReport, SuiteStart};

mod exit_notice;
#[cfg(test)]
mod same_outputs;
mod signals;

/// An eval as libtest names its test: the id without the test target (a `cargo test` process
/// runs one target), as every output of a run names it.
fn name(id: &str) -> &str {
    crate::run::report::Names::default().name(id)
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
    match crate::run::dataset::case_named(def, name) {
        Ok(case) => run_test_report(case),
        Err(e) => {
            let mut report = EvalReport::empty(def);
            report.id = format!("{}::{name}", def.id());
            // A case of the dataset all the same: its verdict counts it.
            report.dataset = Some(def.id());
            report.error = Some(crate::base::outcome::RunError::new(
                crate::base::outcome::RunErrorKind::Setup,
                e.to_string(),
            ));
            deliver(def.manifest_dir, &report);
            report
        }
    }
}

/// Turns a case's report into its test's result (the second half of [`run_case`]).
pub fn finish_case(_def: &'static EvalDefinition, report: EvalReport) {
    match report.min_case_pass_rate {
        // The exit notice (a reporter of the process's outputs) tallies the case.
        Some(_) if std::env::var_os("NEXTEST_RUN_ID").is_none() => {
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

/// Runs the eval and hands its report to the process's outputs (the first half of
/// [`run_test`]; `#[eval(snapshot)]` snapshots the report in between).
pub fn run_test_report(def: &'static EvalDefinition) -> EvalReport {
    signals::own();
    let report = run_eval(def);
    deliver(def.manifest_dir, &report);
    report
}

/// The outputs of this process: one list of reporters per crate whose evals it runs (a test
/// binary runs one crate's; niceeval's own tests run evals of many temporary ones), built
/// on the first eval by the one builder the suite runner uses too
/// ([`crate::front::harness::outputs`]), fed every finished eval, and ended when the process exits.
struct Session {
    manifest_dir: &'static str,
    outputs: Outputs,
    summaries: Vec<EvalSummary>,
    started: std::time::Instant,
}

static SESSIONS: Mutex<Vec<Session>> = Mutex::new(Vec::new());

/// Hands `report` to the outputs of the crate at `manifest_dir`, building them on its first
/// eval. Errors are said on stderr: losing an output must not fail an eval.
fn deliver(manifest_dir: &'static str, report: &EvalReport) {
    let mut sessions = SESSIONS.lock().unwrap_or_else(|p| p.into_inner());
    let index = match sessions.iter().position(|s| s.manifest_dir == manifest_dir) {
        Some(index) => index,
        None => {
            let outputs = match Outputs::build(
                Some(manifest_dir),
                &crate::run::definition::registered(),
                Vec::new,
                &Requested::of_env(),
                Vec::new(),
                Box::new(exit_notice::ExitNotice),
            ) {
                Ok(outputs) => outputs,
                Err(e) => {
                    let _ = writeln!(std::io::stderr().lock(), "niceeval: {e}");
                    return;
                }
            };
            if sessions.is_empty() {
                exit_notice::at_exit(finish_sessions);
            }
            let mut session = Session {
                manifest_dir,
                outputs,
                summaries: Vec::new(),
                started: std::time::Instant::now(),
            };
            session.outputs.start(&SuiteStart {
                evals: Default::default(),
                concurrency: 1,
            });
            sessions.push(session);
            sessions.len() - 1
        }
    };
    let session = &mut sessions[index];
    session.outputs.eval(report);
    let mut summary = EvalSummary::from(report);
    summary.baseline = None;
    session.summaries.push(summary);
}

/// At exit: ends every session's outputs with the suite of what this process ran (JUnit,
/// Markdown and HTML files are written now; the exit notice takes its datasets' verdicts).
/// Never blocks: a thread that died holding the lock would otherwise hang the exit.
fn finish_sessions() {
    let Ok(mut sessions) = SESSIONS.try_lock() else {
        return;
    };
    for session in sessions.iter_mut() {
        let suite = SuiteReport::new(
            std::mem::take(&mut session.summaries),
            0,
            false,
            session.started.elapsed().as_secs_f64() * 1000.0,
        );
        session.outputs.finish(&suite);
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
            println!("{}", report.render());
        }
        Outcome::Passed => {
            println!("{}", report.render());
        }
    }
}
