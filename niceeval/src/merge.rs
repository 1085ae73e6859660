//! Merging results files: reads JSONL files of [`EvalReport`]s, picks what to show — the latest
//! run of each eval ([`latest`], the default), or every record combined as shards of one run
//! ([`merge`]) — combines the runs of an eval that appears more than once, recomputes pass
//! rates and pass@k, and replays the result through reporters.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::outcome::Outcome;
use crate::report::{EvalReport, RunInfo, SCHEMA_VERSION};
use crate::reporter::{EvalSummary, Reporter, SuiteReport, SuiteStart};

/// Why results could not be read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum MergeError {
    /// A file or directory could not be read.
    #[error("cannot read {path}: {source}")]
    Read {
        /// The path.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// A line is not an eval report.
    #[error("{path}:{line}: not a niceeval eval report ({message})")]
    Line {
        /// The file.
        path: PathBuf,
        /// 1-based line number.
        line: usize,
        /// What serde said.
        message: String,
    },
}

/// Reads every report from `paths`: files are read as JSONL, directories contribute their
/// `*.jsonl` files (sorted by name). Blank lines are ignored, and so is a last line cut short
/// (no newline, not valid JSON) — the trace of a process killed while writing it.
pub fn read_reports(paths: &[PathBuf]) -> Result<Vec<EvalReport>, MergeError> {
    let mut reports = Vec::new();
    for path in paths {
        if path.is_dir() {
            let mut files: Vec<PathBuf> = std::fs::read_dir(path)
                .map_err(|source| MergeError::Read {
                    path: path.clone(),
                    source,
                })?
                .filter_map(|entry| entry.ok().map(|e| e.path()))
                .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
                .collect();
            files.sort();
            for file in files {
                read_file(&file, &mut reports)?;
            }
        } else {
            read_file(path, &mut reports)?;
        }
    }
    Ok(reports)
}

fn read_file(path: &Path, out: &mut Vec<EvalReport>) -> Result<(), MergeError> {
    let text = std::fs::read_to_string(path).map_err(|source| MergeError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    let complete = text.ends_with('\n');
    let count = text.lines().count();
    for (index, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        match crate::report::schema_of(line) {
            Ok(schema) if schema > SCHEMA_VERSION => {
                return Err(MergeError::Line {
                    path: path.to_path_buf(),
                    line: index + 1,
                    message: format!(
                        "this record has schema {schema}, newer than the {SCHEMA_VERSION} this niceeval reads; merge it with the niceeval version that wrote it, or upgrade"
                    ),
                });
            }
            _ => {}
        }
        match serde_json::from_str(line) {
            Ok(report) => out.push(report),
            Err(e) if e.is_eof() && !complete && index + 1 == count => {}
            Err(e) => {
                return Err(MergeError::Line {
                    path: path.to_path_buf(),
                    line: index + 1,
                    message: e.to_string(),
                });
            }
        }
    }
    Ok(())
}

/// Merges reports by eval id (sorted by id), combining every record as a shard of one run
/// (`--combine`; [`latest`] is the default view): an eval reported more than once (by several
/// shards, or by reruns of one failing eval) gets all its runs, in file order, its statistics
/// and outcome recomputed ([`crate::report::fold_runs`]), its durations added up, and as
/// representative the first report whose own outcome is the merged outcome (else the first
/// failed one, else the last) — the same rule a single run of all of them uses.
///
/// ```
/// use niceeval::merge::merge;
/// use niceeval::Outcome;
/// # let report = |outcome: &str| -> niceeval::EvalReport { serde_json::from_value(serde_json::json!({
/// #   "id": "demo::flaky", "file": "tests/demo.rs", "line": 3, "outcome": outcome,
/// #   "assertions": [], "duration_ms": 10.0,
/// #   "usage": {"input_tokens": 0, "output_tokens": 0, "cache_read_tokens": 0},
/// #   "runs": [{"outcome": outcome, "duration_ms": 10.0,
/// #             "usage": {"input_tokens": 0, "output_tokens": 0, "cache_read_tokens": 0}}],
/// #   "reliability": {"n": 1, "c": 0, "pass_rate": 0.0, "pass_at_k": [], "pass_hat_k": []},
/// #   "min_pass_rate": 0.5 })).unwrap() };
///
/// // One shard ran the eval once and it passed; another ran it once and it failed.
/// let merged = merge(vec![report("passed"), report("failed")]);
/// assert_eq!(merged.len(), 1);
/// assert_eq!(merged[0].runs.len(), 2);
/// assert_eq!(merged[0].reliability.pass_rate, 0.5);
/// assert_eq!(merged[0].outcome, Outcome::Passed); // 0.5 meets min_pass_rate 0.5
/// assert_eq!(merged[0].duration_ms, 20.0);
/// ```
pub fn merge(reports: Vec<EvalReport>) -> Vec<EvalReport> {
    let mut by_id: BTreeMap<String, Vec<EvalReport>> = BTreeMap::new();
    for report in reports {
        by_id.entry(report.id.clone()).or_default().push(report);
    }
    by_id.into_values().filter_map(merge_group).collect()
}

/// Merges the reports of one eval.
fn merge_group(mut group: Vec<EvalReport>) -> Option<EvalReport> {
    if group.len() == 1 {
        let mut report = group.pop()?;
        report.recompute();
        return Some(report);
    }
    let runs: Vec<_> = group.iter().flat_map(|r| r.runs.iter().cloned()).collect();
    let duration: f64 = group.iter().map(|r| r.duration_ms).sum();
    let min_pass_rate = group.last()?.min_pass_rate;
    let (outcome, _) = crate::report::fold_runs(&runs, min_pass_rate);
    let pick = group
        .iter()
        .position(|r| r.outcome == outcome)
        .or_else(|| group.iter().position(|r| r.outcome == Outcome::Failed))
        .unwrap_or(group.len() - 1);
    let mut report = group.swap_remove(pick);
    report.runs = runs;
    report.duration_ms = duration;
    report.min_pass_rate = min_pass_rate;
    report.recompute();
    Some(report)
}

/// The order of runs: a run is as late as the latest start among its records (the processes
/// of one nextest run share a run id and start apart), ties broken by id; a record of an older
/// version (no run) is older than any run.
struct RunOrder<'a>(BTreeMap<&'a str, &'a str>);

impl<'a> RunOrder<'a> {
    fn of(reports: &'a [EvalReport]) -> Self {
        let mut latest: BTreeMap<&str, &str> = BTreeMap::new();
        for run in reports.iter().filter_map(|r| r.run.as_ref()) {
            let started = latest
                .entry(run.id.as_str())
                .or_insert(run.started.as_str());
            *started = (*started).max(run.started.as_str());
        }
        RunOrder(latest)
    }

    fn key(&self, run: Option<&'a RunInfo>) -> Option<(&'a str, &'a str)> {
        run.map(|r| {
            let started = self.0.get(r.id.as_str()).copied().unwrap_or(&r.started);
            (started, r.id.as_str())
        })
    }
}

/// Keeps, for each eval, only the records of the latest run that reported it: a results file
/// that holds an earlier build's passing run and a new failing one shows the failing one, and
/// an eval a filtered run did not select keeps its latest record from an earlier run. Records
/// keep their order.
///
/// ```
/// use niceeval::merge::latest_records;
/// # let report = |run: &str, outcome: &str| -> niceeval::EvalReport { serde_json::from_value(serde_json::json!({
/// #   "id": "evals::order_status", "file": "tests/evals.rs", "line": 3, "outcome": outcome,
/// #   "assertions": [], "duration_ms": 10.0,
/// #   "usage": {"input_tokens": 0, "output_tokens": 0, "cache_read_tokens": 0},
/// #   "runs": [], "reliability": {"n": 1, "c": 0, "pass_rate": 0.0, "pass_at_k": [], "pass_hat_k": []},
/// #   "min_pass_rate": 1.0,
/// #   "run": {"id": run, "started": run, "target": "evals"} })).unwrap() };
///
/// let kept = latest_records(vec![
///     report("2026-11-20T08:00:00.000Z", "passed"),
///     report("2026-11-23T08:00:00.000Z", "failed"),
/// ]);
/// assert_eq!(kept.len(), 1);
/// assert_eq!(kept[0].outcome, niceeval::Outcome::Failed);
/// ```
pub fn latest_records(reports: Vec<EvalReport>) -> Vec<EvalReport> {
    let order = RunOrder::of(&reports);
    let mut newest: BTreeMap<&str, Option<(&str, &str)>> = BTreeMap::new();
    for report in &reports {
        let key = order.key(report.run.as_ref());
        let entry = newest.entry(report.id.as_str()).or_insert(key);
        if key > *entry {
            *entry = key;
        }
    }
    let keep: Vec<bool> = reports
        .iter()
        .map(|r| newest.get(r.id.as_str()) == Some(&order.key(r.run.as_ref())))
        .collect();
    reports
        .into_iter()
        .zip(keep)
        .filter_map(|(report, keep)| keep.then_some(report))
        .collect()
}

/// The latest view of results: [`latest_records`], then [`merge`] (the shards of one run, or a
/// nextest run's processes, combine).
pub fn latest(reports: Vec<EvalReport>) -> Vec<EvalReport> {
    merge(latest_records(reports))
}

/// The reports (of a latest view) that come from an earlier run than their target's latest
/// one: evals the latest run did not select. Reporting them says so, so nothing is mixed in
/// silently.
///
/// ```
/// # let report = |id: &str, run: &str| -> niceeval::EvalReport { serde_json::from_value(serde_json::json!({
/// #   "id": id, "file": "tests/evals.rs", "line": 3, "outcome": "passed",
/// #   "assertions": [], "duration_ms": 10.0,
/// #   "usage": {"input_tokens": 0, "output_tokens": 0, "cache_read_tokens": 0},
/// #   "runs": [], "reliability": {"n": 1, "c": 1, "pass_rate": 1.0, "pass_at_k": [], "pass_hat_k": []},
/// #   "min_pass_rate": 1.0,
/// #   "run": {"id": run, "started": run, "target": "evals"} })).unwrap() };
/// let reports = niceeval::merge::latest(vec![
///     report("evals::refund", "2026-11-20T08:00:00.000Z"),
///     report("evals::order_status", "2026-11-20T08:00:00.000Z"),
///     report("evals::order_status", "2026-11-23T08:00:00.000Z"), // a filtered run
/// ]);
/// let earlier = niceeval::merge::from_earlier_runs(&reports);
/// assert_eq!(earlier.len(), 1);
/// assert_eq!(earlier[0].id, "evals::refund");
/// ```
pub fn from_earlier_runs(reports: &[EvalReport]) -> Vec<&EvalReport> {
    let order = RunOrder::of(reports);
    let mut newest: BTreeMap<&str, Option<(&str, &str)>> = BTreeMap::new();
    for run in reports.iter().filter_map(|r| r.run.as_ref()) {
        let key = order.key(Some(run));
        let entry = newest.entry(run.target.as_str()).or_insert(key);
        if key > *entry {
            *entry = key;
        }
    }
    reports
        .iter()
        .filter(|r| {
            r.run
                .as_ref()
                .is_some_and(|run| newest.get(run.target.as_str()) != Some(&order.key(Some(run))))
        })
        .collect()
}

/// Replays merged reports through reporters as if they had just run; returns the suite report.
pub fn replay(reports: &[EvalReport], reporters: &mut [Box<dyn Reporter>]) -> SuiteReport {
    replay_with(reports, reporters, |_| {})
}

/// [`replay`], with `finish` completing the suite report (e.g. with the comparison with a
/// baseline, [`SuiteReport::comparison`]) before the reporters get it.
pub fn replay_with(
    reports: &[EvalReport],
    reporters: &mut [Box<dyn Reporter>],
    finish: impl FnOnce(&mut SuiteReport),
) -> SuiteReport {
    let start = SuiteStart {
        evals: reports.iter().map(|r| r.id.clone()).collect(),
        concurrency: 1,
    };
    for reporter in reporters.iter_mut() {
        let _ = reporter.on_run_start(&start);
    }
    let mut summaries = Vec::with_capacity(reports.len());
    for report in reports {
        for reporter in reporters.iter_mut() {
            let _ = reporter.on_eval_complete(report);
        }
        summaries.push(EvalSummary::from(report));
    }
    let duration = reports.iter().map(|r| r.duration_ms).sum();
    let mut suite = SuiteReport::new(summaries, 0, false, duration);
    finish(&mut suite);
    for reporter in reporters.iter_mut() {
        let _ = reporter.on_run_complete(&suite);
    }
    suite
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
