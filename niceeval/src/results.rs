//! Where eval reports land when there is no suite runner: under plain `cargo test` (or
//! `cargo nextest`) every finished eval appends its [`EvalReport`] as one JSON line to a file in
//! `target/niceeval/results/`, which a suite binary merges into reports with `--report`
//! ([`crate::harness::run_report`]; `cargo test --test evals -- --report --markdown summary.md`).
//!
//! The suite runner (`niceeval::main!()`) writes the same files through [`ResultsFile`], a
//! reporter that keeps the file open and flushes each line as its eval finishes.
//!
//! File naming: `<test binary>.jsonl`, truncated the first time a process writes to it (so a
//! rerun replaces the previous run's results). Under nextest, which runs each test in its own
//! process, the file is `<test binary>-<NEXTEST_RUN_ID>.jsonl` and is only appended to.
//! `NICEEVAL_RESULTS_DIR` overrides the directory; `NICEEVAL_RESULTS=0` turns the files off.
//!
//! ```no_run
//! // After `cargo test`: every eval of every test binary, merged into one summary.
//! let dir = niceeval::results::results_dir(std::path::Path::new(env!("CARGO_MANIFEST_DIR")));
//! let reports = niceeval::merge::merge(niceeval::merge::read_reports(&[dir])?);
//! println!("{} evals", reports.len());
//! # Ok::<(), niceeval::merge::MergeError>(())
//! ```

use std::fs::OpenOptions;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

use crate::report::{EvalReport, Versioned};

/// The Cargo target directory of the running test binary: `CARGO_TARGET_DIR` when set, else
/// the nearest ancestor of the executable holding Cargo's `CACHEDIR.TAG` (the root of every
/// target directory), else the nearest ancestor named `target`, else `<manifest_dir>/target`.
///
/// ```
/// let dir = niceeval::results::target_dir(std::path::Path::new(env!("CARGO_MANIFEST_DIR")));
/// assert!(dir.is_absolute());
/// ```
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
        let mut ancestors = exe.ancestors().skip(1);
        if let Some(found) = ancestors.find(|dir| dir.join("CACHEDIR.TAG").is_file()) {
            return found.to_path_buf();
        }
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

/// Whether results files are turned off (`NICEEVAL_RESULTS=0`).
pub fn disabled() -> bool {
    std::env::var("NICEEVAL_RESULTS").is_ok_and(|v| v.trim() == "0")
}

/// Whether this process runs under nextest (one process per test: files are appended to).
fn under_nextest() -> bool {
    std::env::var("NEXTEST_RUN_ID").is_ok_and(|r| !r.is_empty())
}

/// Appends `report` to this process's results file. Errors are returned, not raised: losing a
/// results file must not fail an eval.
pub fn append(report: &EvalReport, manifest_dir: &Path) -> std::io::Result<PathBuf> {
    static WRITTEN: OnceLock<Mutex<Vec<PathBuf>>> = OnceLock::new();
    if disabled() {
        return Ok(PathBuf::new());
    }
    let dir = results_dir(manifest_dir);
    std::fs::create_dir_all(&dir)?;
    let path = dir.join(file_name());
    let mut line = serde_json::to_string(&Versioned::new(report)).map_err(std::io::Error::other)?;
    line.push('\n');
    let written = WRITTEN.get_or_init(Default::default);
    let mut written = written.lock().unwrap_or_else(|p| p.into_inner());
    let first = !written.contains(&path);
    let truncate = first && !under_nextest();
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

/// The results file as a reporter, for the suite runner: opens the file once (truncating it,
/// except under nextest), then writes and flushes one line per finished eval — a crash or a
/// kill loses nothing that finished.
pub struct ResultsFile {
    path: PathBuf,
    file: std::fs::File,
    line: Vec<u8>,
}

impl ResultsFile {
    /// Opens this process's results file for evals of the crate at `manifest_dir`; `None` when
    /// results files are turned off.
    ///
    /// ```no_run
    /// # fn main() -> std::io::Result<()> {
    /// let results = niceeval::results::ResultsFile::open(std::path::Path::new("."))?;
    /// # Ok(()) }
    /// ```
    pub fn open(manifest_dir: &Path) -> std::io::Result<Option<Self>> {
        if disabled() {
            return Ok(None);
        }
        let dir = results_dir(manifest_dir);
        std::fs::create_dir_all(&dir)?;
        let path = dir.join(file_name());
        let file = OpenOptions::new()
            .create(true)
            .write(true)
            .append(under_nextest())
            .truncate(!under_nextest())
            .open(&path)?;
        Ok(Some(ResultsFile {
            path,
            file,
            line: Vec::new(),
        }))
    }

    /// The file written to.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl crate::reporter::Reporter for ResultsFile {
    fn on_eval_complete(&mut self, report: &EvalReport) -> std::io::Result<()> {
        // The whole line in one write: a kill never leaves half a report behind.
        self.line.clear();
        serde_json::to_writer(&mut self.line, &Versioned::new(report))
            .map_err(std::io::Error::other)?;
        self.line.push(b'\n');
        self.file.write_all(&self.line)?;
        self.file.flush()
    }
}
