//! Reading and merging results files.

use std::path::PathBuf;

use super::*;
use crate::outcome::Outcome;
use crate::report::{EvalReport, RunInfo};

const LINE: &str = r#"{"id":"a::b","file":"t.rs","line":1,"outcome":"passed","assertions":[],"duration_ms":1.0,"usage":{"input_tokens":0,"output_tokens":0,"cache_read_tokens":0},"runs":[{"outcome":"passed","duration_ms":1.0,"usage":{"input_tokens":0,"output_tokens":0,"cache_read_tokens":0}}],"reliability":{"n":1,"c":1,"pass_rate":1.0,"pass_at_k":[1.0],"pass_hat_k":[1.0]},"min_pass_rate":1.0}"#;

fn file(text: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let path = dir.path().join("r.jsonl");
    std::fs::write(&path, text).expect("writable");
    (dir, path)
}

#[test]
fn written_records_carry_the_schema_and_newer_ones_are_refused() {
    use crate::reporter::{Jsonl, Reporter};
    let report: EvalReport = serde_json::from_str(LINE).expect("a report");
    let mut jsonl = Jsonl::new(Vec::new());
    jsonl.on_eval_complete(&report).expect("written");
    let written = String::from_utf8(jsonl.into_inner()).expect("UTF-8");
    assert!(
        written.starts_with(r#"{"schema":1,"id":"a::b""#),
        "{written}"
    );
    let (_dir, path) = file(&written);
    let read = read_reports(std::slice::from_ref(&path)).expect("readable");
    assert_eq!(read[0].id, "a::b");

    let newer = written.replacen(r#""schema":1"#, r#""schema":7"#, 1);
    let (_dir, path) = file(&format!("{LINE}\n{newer}"));
    let error = read_reports(&[path])
        .expect_err("a newer schema")
        .to_string();
    assert!(error.contains("r.jsonl:2:"), "{error}");
    assert!(error.contains("schema 7, newer than the 1"), "{error}");
}

#[test]
fn a_last_line_cut_short_by_a_crash_is_ignored() {
    let cut = &LINE[..LINE.len() / 2];
    let (_dir, path) = file(&format!("{LINE}\n\n{LINE}\n{cut}"));
    let reports = read_reports(&[path]).expect("readable");
    assert_eq!(reports.len(), 2);
}

#[test]
fn a_line_cut_short_before_more_records_is_skipped() {
    // Under nextest the next process appends after a killed one's cut line.
    let cut = &LINE[..LINE.len() / 2];
    let (_dir, path) = file(&format!("{LINE}\n{cut}\n{LINE}\n"));
    let reports = read_reports(&[path]).expect("readable");
    assert_eq!(reports.len(), 2);
}

#[test]
fn a_bad_line_elsewhere_is_an_error_naming_file_and_line() {
    let (_dir, path) = file(&format!("{LINE}\nnot json\n{LINE}\n"));
    let error = read_reports(std::slice::from_ref(&path))
        .expect_err("a bad line")
        .to_string();
    assert!(
        error.starts_with(&format!("{}:2: not a niceeval eval report", path.display())),
        "{error}"
    );
}

#[test]
fn directories_contribute_their_jsonl_files() {
    let (dir, _path) = file(&format!("{LINE}\n"));
    std::fs::write(dir.path().join("notes.txt"), "not a report").expect("writable");
    let reports = read_reports(&[dir.path().to_path_buf()]).expect("readable");
    assert_eq!(merge(reports).len(), 1);
    let missing = read_reports(&[dir.path().join("missing")]).expect_err("missing");
    assert!(missing.to_string().starts_with("cannot read "), "{missing}");
}

fn with_run(outcome: &str, id: &str, run: Option<(&str, &str)>) -> EvalReport {
    let mut report: EvalReport = serde_json::from_str(
        &LINE
            .replace("\"passed\"", &format!("\"{outcome}\""))
            .replace("a::b", id),
    )
    .expect("a report");
    report.run = run.map(|(id, started)| RunInfo::new(id, started, "a"));
    report
}

#[test]
fn the_latest_run_of_an_eval_wins_and_combine_keeps_every_record() {
    let old = with_run("passed", "a::b", Some(("r1", "2026-01-01T00:00:00.000Z")));
    let new = with_run("failed", "a::b", Some(("r2", "2026-02-01T00:00:00.000Z")));
    let latest = latest(vec![new.clone(), old.clone()]);
    assert_eq!(latest.len(), 1);
    assert_eq!(latest[0].outcome, Outcome::Failed);
    assert_eq!(latest[0].runs.len(), 1);
    let combined = merge(vec![old, new]);
    assert_eq!(combined[0].runs.len(), 2);
    assert_eq!(combined[0].reliability.pass_rate, 0.5);
}

#[test]
fn records_of_older_versions_are_older_than_any_run() {
    let unversioned = with_run("passed", "a::b", None);
    let new = with_run("failed", "a::b", Some(("r2", "2026-02-01T00:00:00.000Z")));
    let latest = latest(vec![new, unversioned.clone()]);
    assert_eq!(latest[0].outcome, Outcome::Failed);
    // Alone, they are the latest there is, and from no earlier run.
    let alone = super::latest(vec![unversioned]);
    assert_eq!(alone.len(), 1);
    assert!(from_earlier_runs(&alone).is_empty());
}

#[test]
fn the_processes_of_one_nextest_run_are_one_run() {
    // Same run id, each process started at its own time.
    let one = with_run(
        "passed",
        "a::one",
        Some(("uuid", "2026-02-01T00:00:00.000Z")),
    );
    let two = with_run(
        "passed",
        "a::two",
        Some(("uuid", "2026-02-01T00:00:09.000Z")),
    );
    let older = with_run("passed", "a::one", Some(("r0", "2026-02-01T00:00:05.000Z")));
    let latest = latest(vec![one, two, older]);
    assert_eq!(latest.len(), 2);
    assert!(
        latest
            .iter()
            .all(|r| r.run.as_ref().is_some_and(|r| r.id == "uuid"))
    );
    assert!(from_earlier_runs(&latest).is_empty());
}
