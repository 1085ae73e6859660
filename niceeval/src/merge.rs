//! Merging results files: reads JSONL files of [`EvalReport`]s (from one run, or from the shards
//! of a partitioned run), combines the runs of an eval that appears more than once, recomputes
//! pass rates and pass@k, and replays the result through reporters.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::outcome::Outcome;
use crate::report::{EvalReport, SCHEMA_VERSION};
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

/// Merges reports by eval id (sorted by id): an eval reported more than once (by several
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

/// Replays merged reports through reporters as if they had just run; returns the suite report.
pub fn replay(reports: &[EvalReport], reporters: &mut [Box<dyn Reporter>]) -> SuiteReport {
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
    let suite = SuiteReport::new(summaries, 0, false, duration);
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
}
