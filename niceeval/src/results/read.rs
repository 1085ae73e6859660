//! Reading results files: JSONL lines of [`EvalReport`]s, a newer schema refused, a last line
//! cut short by a crash ignored.

use std::path::{Path, PathBuf};

use crate::report::{EvalReport, SCHEMA_VERSION};

/// Why results could not be read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ReadError {
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
pub fn read_reports(paths: &[PathBuf]) -> Result<Vec<EvalReport>, ReadError> {
    let mut reports = Vec::new();
    for path in paths {
        if path.is_dir() {
            let mut files: Vec<PathBuf> = std::fs::read_dir(path)
                .map_err(|source| ReadError::Read {
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

fn read_file(path: &Path, out: &mut Vec<EvalReport>) -> Result<(), ReadError> {
    let text = std::fs::read_to_string(path).map_err(|source| ReadError::Read {
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
                return Err(ReadError::Line {
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
                return Err(ReadError::Line {
                    path: path.to_path_buf(),
                    line: index + 1,
                    message: e.to_string(),
                });
            }
        }
    }
    Ok(())
}
