//! Reading and merging results files.

use std::path::PathBuf;

use super::*;
use crate::base::outcome::Outcome;
use crate::run::report::{EvalReport, RunInfo};

const LINE: &str = r#"{"id":"a::b","file":"t.rs","line":1,"outcome":"passed","assertions":[],"duration_ms":1.0,"usage":{"input_tokens":0,"output_tokens":0,"cache_read_tokens":0},"runs":[{"outcome":"passed","duration_ms":1.0,"usage":{"input_tokens":0,"output_tokens":0,"cache_read_tokens":0}}],"reliability":{"n":1,"c":1,"pass_rate":1.0,"pass_at_k":[1.0],"pass_hat_k":[1.0]},"min_pass_rate":1.0}"#;

fn file(text: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let path = dir.path().join("r.jsonl");
    std::fs::write(&path, text).expect("writable");
    (dir, path)
}

#[test]
fn written_records_carry_the_schema_and_newer_ones_are_refused() {
    use crate::output::reporter::{Jsonl, Reporter};
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

/// Wherever the kill cuts the last line (inside a number, `tru`, a string, after a comma),
/// the records before it are read, whole or by the few fields a pass needs (the fields passed
/// over are checked less: `1.` at the end is "invalid number" there, not "end of input"). A
/// resumed run failed on a cut inside a number.
#[test]
fn a_last_line_cut_anywhere_is_ignored() {
    #[derive(serde::Deserialize)]
    struct Head {
        #[allow(dead_code)]
        id: String,
    }
    let line = LINE.replacen(
        r#""id":"#,
        r#""extra_number":1.25,"extra_negative":-7,"extra_flag":true,"id":"#,
        1,
    );
    for end in 1..line.len() {
        if !line.is_char_boundary(end) {
            continue;
        }
        let (_dir, path) = file(&format!("{line}\n{}", &line[..end]));
        let reports = read_reports(std::slice::from_ref(&path))
            .unwrap_or_else(|e| panic!("cut at {end}: {e}"));
        assert_eq!(reports.len(), 1, "cut at {end}");
        let mut records = Records::open(&path).expect("opens");
        let mut heads = 0;
        while records
            .next_record::<Head>()
            .unwrap_or_else(|e| panic!("cut at {end}, by its head: {e}"))
            .is_some()
        {
            heads += 1;
        }
        assert_eq!(heads, 1, "cut at {end}");
    }
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

#[test]
fn a_directory_of_shard_folders_contributes_their_files_one_level_down() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    for (shard, id) in [("shard-1", "a::one"), ("shard-2", "a::two")] {
        let folder = dir.path().join(shard);
        std::fs::create_dir_all(folder.join("deeper")).expect("writable");
        std::fs::write(
            folder.join("evals.jsonl"),
            format!("{}\n", LINE.replace("a::b", id)),
        )
        .expect("writable");
        std::fs::write(
            folder.join("evals.manifest.json"),
            serde_json::json!({
                "schema": 1, "niceeval": "0.1.0", "target": "evals", "run": shard,
                "commit": null, "config_hash": "x", "shard": null, "evals": [id]
            })
            .to_string(),
        )
        .expect("writable");
        // Two levels down is not read.
        std::fs::write(
            folder.join("deeper").join("evals.jsonl"),
            format!("{}\n", LINE.replace("a::b", "a::deep")),
        )
        .expect("writable");
    }
    let reports = merge(read_reports(&[dir.path().to_path_buf()]).expect("readable"));
    let ids: Vec<&str> = reports.iter().map(|r| r.id.as_str()).collect();
    assert_eq!(ids, ["a::one", "a::two"]);
    let index = super::Index::read(&[dir.path().to_path_buf()]).expect("readable");
    assert_eq!(index.evals(), 2);
    let manifests = super::manifest::read_all(&[dir.path().to_path_buf()]).expect("readable");
    assert_eq!(manifests.len(), 2);
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

/// A writer the test keeps a handle on while a reporter owns it.
#[derive(Clone, Default)]
struct Shared(std::sync::Arc<std::sync::Mutex<Vec<u8>>>);

impl std::io::Write for Shared {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().expect("not poisoned").extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Shared {
    fn text(&self) -> String {
        String::from_utf8(self.0.lock().expect("not poisoned").clone()).expect("UTF-8")
    }
}

/// A report of `id` with `runs` (their outcomes), from `run` at `started`, needing
/// `min_pass_rate`; its own outcome and statistics recomputed as the writer does.
fn record(
    id: &str,
    runs: &[Outcome],
    run: Option<(&str, &str, &str)>,
    min_pass_rate: f64,
    ms: f64,
) -> EvalReport {
    let mut report = with_run("passed", id, None);
    let one = report.runs[0].clone();
    report.runs = runs
        .iter()
        .enumerate()
        .map(|(i, outcome)| {
            let mut r = one.clone();
            r.outcome = *outcome;
            r.duration_ms = ms + i as f64;
            r
        })
        .collect();
    report.duration_ms = ms;
    report.min_pass_rate = min_pass_rate;
    report.tags = vec![format!("t{ms}")];
    report.run = run.map(|(id, started, target)| RunInfo::new(id, started, target));
    report.recompute();
    report
}

/// Writes `reports` as a results file does (one versioned line each), then `tail` as is.
fn write_records(path: &std::path::Path, reports: &[EvalReport], tail: &str) {
    let mut text = String::new();
    for report in reports {
        let line =
            serde_json::to_string(&crate::run::report::Versioned::new(report)).expect("serializes");
        text.push_str(&line);
        text.push('\n');
        text.push('\n');
    }
    text.push_str(tail);
    std::fs::write(path, text).expect("writable");
}

#[test]
fn the_streamed_merge_writes_what_merging_in_memory_writes() {
    use crate::output::reporter::{Jsonl, Markdown, Reporter};
    use Outcome::{Failed, Passed, Skipped};
    let (t1, t2, t3, t5) = (
        "2026-01-01T00:00:00.000Z",
        "2026-02-01T00:00:00.000Z",
        "2026-03-01T00:00:00.000Z",
        "2026-03-01T00:00:05.000Z",
    );
    let dir = tempfile::tempdir().expect("a temporary directory");
    let (one, two) = (dir.path().join("a.jsonl"), dir.path().join("b.jsonl"));
    write_records(
        &one,
        &[
            record("a::x", &[Passed], Some(("r1", t1, "a")), 1.0, 1.0),
            // An earlier run of the target than its latest: named as such.
            record("a::w", &[Failed], Some(("r1", t1, "a")), 1.0, 2.0),
            // Two processes of one nextest run, and an older run.
            record("a::y", &[Failed], Some(("u", t3, "a")), 0.5, 3.0),
            record("a::y", &[Passed], Some(("r1", t1, "a")), 0.5, 4.0),
            record(
                "a::flaky",
                &[Passed, Failed, Passed],
                Some(("u", t3, "a")),
                0.6,
                5.0,
            ),
            record("a::old", &[Passed], None, 1.0, 6.0),
        ],
        "",
    );
    let cut =
        serde_json::to_string(&record("a::cut", &[Passed], None, 1.0, 1.0)).expect("serializes");
    write_records(
        &two,
        &[
            record("a::x", &[Failed], Some(("r2", t2, "a")), 1.0, 7.0),
            record("a::y", &[Passed, Passed], Some(("u", t5, "a")), 0.5, 8.0),
            record(
                "a::flaky",
                &[Skipped, Failed],
                Some(("u", t5, "a")),
                0.6,
                9.0,
            ),
            record("a::skip", &[Skipped], Some(("u", t5, "a")), 1.0, 10.0),
            record("a::old", &[Failed], None, 1.0, 11.0),
            record("b::v", &[Passed], Some(("r9", t2, "b")), 1.0, 12.0),
        ],
        &cut[..cut.len() / 2],
    );
    let paths = [one, two];
    for combine in [false, true] {
        let outputs = || {
            let (jsonl, markdown) = (Shared::default(), Shared::default());
            let reporters: Vec<Box<dyn Reporter>> = vec![
                Box::new(Jsonl::new(jsonl.clone())),
                Box::new(Markdown::new(markdown.clone())),
            ];
            (reporters, jsonl, markdown)
        };
        let read = read_reports(&paths).expect("readable");
        let in_memory = if combine { merge(read) } else { latest(read) };
        let (mut reporters, jsonl, markdown) = outputs();
        let expected = replay(&in_memory, &mut reporters);
        let expected_earlier: Vec<(String, String)> = from_earlier_runs(&in_memory)
            .iter()
            .map(|r| {
                let run = r.run.as_ref().expect("a run");
                (r.id.clone(), run.started.clone())
            })
            .collect();

        let merged = Index::read(&paths).expect("readable").view(combine);
        let earlier: Vec<(String, String)> = merged
            .earlier_runs()
            .into_iter()
            .map(|(id, started)| (id.to_string(), started.to_string()))
            .collect();
        assert_eq!(earlier, expected_earlier, "combine: {combine}");
        assert_eq!(
            merged.targets().into_iter().collect::<Vec<_>>(),
            ["a", "b"],
            "combine: {combine}"
        );
        let (mut reporters, streamed_jsonl, streamed_markdown) = outputs();
        let streamed = merged
            .replay(&mut reporters, true, |_| {})
            .expect("readable");
        assert_eq!(streamed, expected, "combine: {combine}");
        assert_eq!(streamed_jsonl.text(), jsonl.text(), "combine: {combine}");
        assert_eq!(
            streamed_markdown.text(),
            markdown.text(),
            "combine: {combine}"
        );
        assert_eq!(streamed.evals.len(), 7);
    }
    // The cases the data is made of happened: the latest view keeps a::x's failing run, merges
    // the nextest processes of a::y, and names a::w and a::x (older runs than target a's
    // latest; the records of no run, a::old, are not named); combine merges a::flaky's five
    // runs.
    let latest = Index::read(&paths).expect("readable").view(false);
    let earlier = latest.earlier_runs();
    assert_eq!(earlier, [("a::w", t1), ("a::x", t2)]);
    let suite = latest.replay(&mut [], false, |_| {}).expect("readable");
    let x = suite.evals.iter().find(|e| e.id == "a::x").expect("a::x");
    assert_eq!((x.outcome, x.runs), (Failed, 1));
    let y = suite.evals.iter().find(|e| e.id == "a::y").expect("a::y");
    assert_eq!((y.outcome, y.runs), (Passed, 3));
    assert!(suite.evals.iter().all(|e| e.baseline.is_none()));
    let combined = Index::read(&paths).expect("readable").view(true);
    let suite = combined.replay(&mut [], true, |_| {}).expect("readable");
    let flaky = suite
        .evals
        .iter()
        .find(|e| e.id == "a::flaky")
        .expect("flaky");
    assert_eq!((flaky.outcome, flaky.runs), (Failed, 5)); // 2 of 4 counted < 0.6
    assert_eq!(suite.flaky.len(), 4, "{:?}", suite.flaky);
}

#[test]
fn a_record_that_does_not_read_whole_the_second_time_is_an_error_naming_file_and_line() {
    // The first pass reads only what merging decides by; a record missing a field the
    // report needs fails in the second, named.
    let line = LINE.replace(r#""file":"t.rs","#, "");
    let (_dir, path) = file(&format!("{LINE}\n{line}\n"));
    let merged = Index::read(std::slice::from_ref(&path))
        .expect("the first pass reads it")
        .view(false);
    let error = merged
        .replay(&mut [], false, |_| {})
        .expect_err("a missing field")
        .to_string();
    assert!(
        error.starts_with(&format!("{}:2: not a niceeval eval report", path.display())),
        "{error}"
    );
    assert!(error.contains("missing field `file`"), "{error}");
}
