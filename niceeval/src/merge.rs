//! Merging results files: reads JSONL files of [`EvalReport`]s (from one run, or from the shards
//! of a partitioned run), combines the runs of an eval that appears more than once, recomputes
//! pass rates and pass@k, and replays the result through reporters.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::report::EvalReport;
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
/// `*.jsonl` files (sorted by name). Blank lines are ignored.
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
    for (index, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let report = serde_json::from_str(line).map_err(|e| MergeError::Line {
            path: path.to_path_buf(),
            line: index + 1,
            message: e.to_string(),
        })?;
        out.push(report);
    }
    Ok(())
}

/// Merges reports by eval id (sorted by id): an eval reported more than once gets all its runs,
/// its statistics and outcome recomputed, and as representative the first report whose outcome
/// is failed (else the last one).
///
/// ```
/// use niceeval::merge::merge;
///
/// assert!(merge(Vec::new()).is_empty());
/// ```
pub fn merge(reports: Vec<EvalReport>) -> Vec<EvalReport> {
    let mut by_id: BTreeMap<String, Vec<EvalReport>> = BTreeMap::new();
    for report in reports {
        by_id.entry(report.id.clone()).or_default().push(report);
    }
    by_id
        .into_values()
        .map(|group| {
            if group.len() == 1 {
                let mut only = group;
                let mut report = only.remove(0);
                report.recompute();
                return report;
            }
            let runs: Vec<_> = group.iter().flat_map(|r| r.runs.clone()).collect();
            let duration: f64 = group.iter().map(|r| r.duration_ms).sum();
            let pick = group
                .iter()
                .position(|r| r.outcome == crate::outcome::Outcome::Failed)
                .unwrap_or(group.len() - 1);
            let mut report = group.into_iter().nth(pick).expect("index within the group");
            report.runs = runs;
            report.duration_ms = duration;
            report.recompute();
            report
        })
        .collect()
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
