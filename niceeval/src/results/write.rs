//! Writing results files: where they are, the run that writes them, appending one line per
//! finished eval (plain `cargo test`) or keeping the file open ([`ResultsFile`], the suite
//! runner), and compacting a file the first time a process writes to it.

use std::fs::OpenOptions;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

use crate::report::{EvalReport, RunInfo, Versioned};
use crate::reporter::Reporter;

/// The Cargo target directory of the running test binary: `CARGO_TARGET_DIR` when set, else
/// the nearest ancestor of the executable holding Cargo's `CACHEDIR.TAG` (the root of every
/// target directory), else the nearest ancestor named `target`, else `<manifest_dir>/target`.
///
/// ```
/// let dir = niceeval::__private::results::target_dir(std::path::Path::new(env!("CARGO_MANIFEST_DIR")));
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

/// The running test binary's file stem (`evals-0123abcd`).
fn binary() -> String {
    std::env::current_exe()
        .ok()
        .and_then(|p| p.file_stem().map(|s| s.to_string_lossy().into_owned()))
        .unwrap_or_else(|| "evals".to_string())
}

/// This process's run: its id and start time are taken the first time they are asked for (the
/// front ends ask when they start). The id is the start time plus the process id, so ids
/// order like start times; under nextest it is `NEXTEST_RUN_ID`, shared by the processes of
/// one run.
///
/// ```
/// let run = niceeval::__private::results::this_run();
/// assert!(run.started.ends_with('Z'));
/// assert_eq!(run.id, niceeval::__private::results::this_run().id);
/// ```
pub fn this_run() -> &'static RunInfo {
    static RUN: OnceLock<RunInfo> = OnceLock::new();
    RUN.get_or_init(|| {
        let started = humantime::format_rfc3339_millis(std::time::SystemTime::now()).to_string();
        let id = match std::env::var("NEXTEST_RUN_ID") {
            Ok(run) if !run.is_empty() => run,
            _ => format!("{started}-{}", std::process::id()),
        };
        RunInfo::new(id, started, target_name(&binary()))
    })
}

/// The target's name in a test binary's file stem: Cargo appends `-<16 hex digits>`.
fn target_name(stem: &str) -> String {
    match stem.rsplit_once('-') {
        Some((name, hash))
            if !name.is_empty()
                && hash.len() == 16
                && hash.bytes().all(|b| b.is_ascii_hexdigit()) =>
        {
            name.to_string()
        }
        _ => stem.to_string(),
    }
}

fn file_name() -> String {
    let binary = binary();
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
    let mut line = serde_json::to_string(&Versioned::stamped(report, this_run()))
        .map_err(std::io::Error::other)?;
    line.push('\n');
    let written = WRITTEN.get_or_init(Default::default);
    let mut written = written.lock().unwrap_or_else(|p| p.into_inner());
    let first = !written.contains(&path);
    if first && !under_nextest() {
        compact(&path)?;
    }
    let mut file = OpenOptions::new().create(true).append(true).open(&path)?;
    // One write call per line: concurrent appenders never interleave within a line.
    file.write_all(line.as_bytes())?;
    if first {
        written.push(path.clone());
    }
    Ok(path)
}

/// Rewrites the results file at `path` to the latest record of each eval this binary still
/// defines ([`super::latest_records`]), through a temporary file renamed into place, so
/// a kill mid-way leaves the old file whole. A file that cannot be read as results (from a
/// newer niceeval, or not ours) is replaced by an empty one, as every earlier version did.
fn compact(path: &Path) -> std::io::Result<()> {
    if !path.exists() {
        return Ok(());
    }
    let registered = crate::definition::registered();
    let defined: std::collections::HashSet<String> = registered.iter().map(|d| d.id()).collect();
    // The cases of a dataset eval are `<its id>::<case>`; whatever its file holds now.
    let datasets: std::collections::HashSet<String> = registered
        .iter()
        .filter(|d| d.dataset.is_some())
        .map(|d| d.id())
        .collect();
    let still_defined = |id: &str| {
        defined.is_empty()
            || defined.contains(id)
            || id
                .rsplit_once("::")
                .is_some_and(|(parent, _)| datasets.contains(parent))
    };
    let kept = match super::read_reports(&[path.to_path_buf()]) {
        Ok(reports) => super::latest_records(reports)
            .into_iter()
            .filter(|r| still_defined(&r.id))
            .collect(),
        Err(_) => Vec::new(),
    };
    let dir = path.parent().unwrap_or(Path::new("."));
    let mut temp = tempfile::NamedTempFile::new_in(dir)?;
    for report in &kept {
        serde_json::to_writer(&mut temp, &Versioned::new(report)).map_err(std::io::Error::other)?;
        temp.write_all(b"\n")?;
    }
    temp.flush()?;
    temp.persist(path).map_err(|e| e.error)?;
    Ok(())
}

/// The results file as a reporter, for the suite runner: opens the file once (compacting it,
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
    /// let results = niceeval::__private::results::ResultsFile::open(std::path::Path::new("."))?;
    /// # Ok(()) }
    /// ```
    pub fn open(manifest_dir: &Path) -> std::io::Result<Option<Self>> {
        if disabled() {
            return Ok(None);
        }
        let dir = results_dir(manifest_dir);
        std::fs::create_dir_all(&dir)?;
        let path = dir.join(file_name());
        this_run();
        if !under_nextest() {
            compact(&path)?;
        }
        let file = OpenOptions::new().create(true).append(true).open(&path)?;
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

impl Reporter for ResultsFile {
    fn on_eval_complete(&mut self, report: &EvalReport) -> std::io::Result<()> {
        // The whole line in one write: a kill never leaves half a report behind.
        self.line.clear();
        serde_json::to_writer(&mut self.line, &Versioned::stamped(report, this_run()))
            .map_err(std::io::Error::other)?;
        self.line.push(b'\n');
        self.file.write_all(&self.line)?;
        self.file.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::target_name;

    #[test]
    fn the_target_is_the_binary_name_without_cargos_hash() {
        assert_eq!(target_name("evals-0123456789abcdef"), "evals");
        assert_eq!(target_name("my-evals-0123456789abcdef"), "my-evals");
        assert_eq!(target_name("my-evals"), "my-evals");
        assert_eq!(
            target_name("evals-0123456789abcdeg"),
            "evals-0123456789abcdeg"
        );
    }
}
