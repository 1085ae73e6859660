//! A suite stopped mid-way keeps everything that finished: killed with SIGKILL (no chance to
//! clean up), every finished eval is a whole line in the JSONL and results files; interrupted
//! with SIGINT (Ctrl-C), the runner stops, reports what finished and exits with 130.
//!
//! The fixture's `slow::*` evals (12 of them) wait `FIXTURE_SLOW_MS` each; at concurrency 2 the
//! batch takes six rounds, and the test stops it once two evals are on disk.

use std::path::Path;
use std::time::Duration;

use niceeval::{EvalReport, Outcome};
use niceeval_tests::child::{self, Output, Running};
use niceeval_tests::fixture::{Fixtures, RUN_DEADLINE};

/// Lines of a file that end with a newline (a line being written does not count).
fn finished_lines(path: &Path) -> usize {
    std::fs::read_to_string(path)
        .map(|text| text.matches('\n').count())
        .unwrap_or(0)
}

/// Every line of a JSONL file, each of which must be a whole report of a passed slow eval.
fn read_complete(path: &Path) -> Vec<EvalReport> {
    let text = std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    assert!(
        text.ends_with('\n'),
        "{} ends mid-line:\n{text}",
        path.display()
    );
    text.lines()
        .map(|line| {
            let report: EvalReport = serde_json::from_str(line)
                .unwrap_or_else(|e| panic!("not a whole report ({e}): {line}"));
            assert!(report.id.starts_with("suite::slow::e"), "{}", report.id);
            assert_eq!(report.outcome, Outcome::Passed, "{line}");
            report
        })
        .collect()
}

/// Starts the slow batch writing `jsonl` and `junit`, results into `results`, and waits until
/// two evals are in the JSONL file.
fn start_slow_batch(dir: &Path) -> Running {
    let fixtures = Fixtures::get();
    let arg = |name: &str| dir.join(name).to_str().expect("UTF-8").to_string();
    let mut command = fixtures.command(
        "suite",
        "suite",
        &[
            "slow::",
            "--concurrency",
            "2",
            "--jsonl",
            &arg("r.jsonl"),
            "--junit",
            &arg("junit.xml"),
        ],
    );
    command
        .env("FIXTURE_SLOW_MS", "400")
        .env("NICEEVAL_RESULTS_DIR", dir.join("results"));
    let mut running = child::spawn(&mut command);
    let jsonl = dir.join("r.jsonl");
    child::wait_until(RUN_DEADLINE, "two evals finished", || {
        assert!(!running.exited(), "the suite ended before it was stopped");
        finished_lines(&jsonl) >= 2
    });
    running
}

fn results_file(dir: &Path) -> std::path::PathBuf {
    let files: Vec<_> = std::fs::read_dir(dir.join("results"))
        .expect("the results directory exists")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .collect();
    assert_eq!(files.len(), 1, "{files:?}");
    files[0].clone()
}

fn ids(reports: &[EvalReport]) -> Vec<&str> {
    let mut ids: Vec<&str> = reports.iter().map(|r| r.id.as_str()).collect();
    ids.sort();
    ids
}

#[test]
fn a_killed_suite_leaves_every_finished_eval_complete_on_disk() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let running = start_slow_batch(dir.path());
    let out: Output = running.kill();
    assert_eq!(out.code(), None, "killed by a signal\n{}", out.dump());

    let reports = read_complete(&dir.path().join("r.jsonl"));
    assert!(
        (2..12).contains(&reports.len()),
        "killed mid-way, yet {} evals finished\n{}",
        reports.len(),
        out.dump()
    );
    // Every eval the console announced as finished is on disk (files are written first).
    let announced: Vec<&str> = out
        .libtest()
        .results()
        .into_iter()
        .map(|(name, _)| name)
        .collect();
    for name in &announced {
        assert!(
            reports.iter().any(|r| r.id == format!("suite::{name}")),
            "{name} was announced but is not in the JSONL file"
        );
    }
    // The results file holds the same evals, each whole.
    let results = read_complete(&results_file(dir.path()));
    assert_eq!(ids(&results), ids(&reports));
}

#[cfg(unix)]
#[test]
fn ctrl_c_stops_the_suite_reports_what_finished_and_exits_130() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let running = start_slow_batch(dir.path());
    running.signal(libc::SIGINT);
    let out = running.wait(Duration::from_secs(30));
    let log = out.dump();
    assert_eq!(out.code(), Some(130), "{log}");

    let reports = read_complete(&dir.path().join("r.jsonl"));
    assert!((2..12).contains(&reports.len()), "{log}");
    let summary = out
        .libtest()
        .summary()
        .unwrap_or_else(|| panic!("no `test result:` line\n{log}"));
    assert!(!summary.ok, "an interrupted run is not ok\n{log}");
    assert_eq!(summary.passed as usize, reports.len(), "{log}");
    let not_run = 12 - reports.len();
    assert!(
        out.stdout.contains(&format!(
            "interrupted: {not_run} eval(s) did not finish; finished results were reported"
        )),
        "{log}"
    );
    // The JUnit file is written at the end: it exists and holds exactly what finished.
    let xml = std::fs::read_to_string(dir.path().join("junit.xml")).expect("junit written");
    let doc = roxmltree::Document::parse(&xml).unwrap_or_else(|e| panic!("{e}\n{xml}"));
    let cases = doc
        .descendants()
        .filter(|n| n.has_tag_name("testcase"))
        .count();
    assert_eq!(cases, reports.len(), "{xml}");
}
