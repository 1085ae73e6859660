//! Where eval reports land when there is no suite runner: under plain `cargo test` (or
//! `cargo nextest`) every finished eval appends its [`EvalReport`] as one JSON line to a file in
//! `target/niceeval/results/`, which the `niceeval` command-line tool merges into reports.
//!
//! File naming: `<test binary>.jsonl`, truncated the first time a process writes to it (so a
//! rerun replaces the previous run's results). Under nextest, which runs each test in its own
//! process, the file is `<test binary>-<NEXTEST_RUN_ID>.jsonl` and is only appended to.
//! `NICEEVAL_RESULTS_DIR` overrides the directory; `NICEEVAL_RESULTS=0` turns the files off.

use std::fs::OpenOptions;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

use crate::report::EvalReport;

/// The Cargo target directory of the running test binary: `CARGO_TARGET_DIR` when set, else the
/// ancestor of the executable named `target`, else `<manifest_dir>/target`.
pub fn target_dir(manifest_dir: &Path) -> PathBuf {
    if let Some(dir) = std::env::var_os("CARGO_TARGET_DIR").filter(|d| !d.is_empty()) {
        let dir = PathBuf::from(dir);
        return if dir.is_absolute() {
            dir
        } else {
            manifest_dir.join(dir)
        };
    }
    if let Ok(exe) = std::env::current_exe() {
        // <target>/<profile>/deps/<binary>, or <target>/<triple>/<profile>/deps/<binary>
        if let Some(found) = exe
            .ancestors()
            .skip(1)
            .find(|dir| dir.file_name().is_some_and(|n| n == "target"))
        {
            return found.to_path_buf();
        }
    }
    manifest_dir.join("target")
}

/// The results directory for evals of the crate at `manifest_dir`.
pub fn results_dir(manifest_dir: &Path) -> PathBuf {
    match std::env::var_os("NICEEVAL_RESULTS_DIR").filter(|d| !d.is_empty()) {
        Some(dir) => PathBuf::from(dir),
        None => target_dir(manifest_dir).join("niceeval").join("results"),
    }
}

fn file_name() -> String {
    let binary = std::env::current_exe()
        .ok()
        .and_then(|p| p.file_stem().map(|s| s.to_string_lossy().into_owned()))
        .unwrap_or_else(|| "evals".to_string());
    // Cargo appends a hash to test binaries (`smoke-0123abcd`); keep it: it tells targets apart.
    match std::env::var("NEXTEST_RUN_ID") {
        Ok(run) if !run.is_empty() => format!("{binary}-{run}.jsonl"),
        _ => format!("{binary}.jsonl"),
    }
}

/// Appends `report` to this process's results file. Errors are returned, not raised: losing a
/// results file must not fail an eval.
pub fn append(report: &EvalReport, manifest_dir: &Path) -> std::io::Result<PathBuf> {
    static WRITTEN: OnceLock<Mutex<Vec<PathBuf>>> = OnceLock::new();
    if std::env::var("NICEEVAL_RESULTS").is_ok_and(|v| v == "0") {
        return Ok(PathBuf::new());
    }
    let dir = results_dir(manifest_dir);
    std::fs::create_dir_all(&dir)?;
    let path = dir.join(file_name());
    let mut line = serde_json::to_string(report).map_err(std::io::Error::other)?;
    line.push('\n');
    let written = WRITTEN.get_or_init(Default::default);
    let mut written = written.lock().unwrap_or_else(|p| p.into_inner());
    let first = !written.contains(&path);
    let truncate = first && std::env::var("NEXTEST_RUN_ID").map_or(true, |r| r.is_empty());
    let mut file = OpenOptions::new()
        .create(true)
        .append(!truncate)
        .write(true)
        .truncate(truncate)
        .open(&path)?;
    // One write call per line: concurrent appenders never interleave within a line.
    file.write_all(line.as_bytes())?;
    if first {
        written.push(path.clone());
    }
    Ok(path)
}
