//! Writing results files: where they are, the run that writes them, appending one line per
//! finished eval (plain `cargo test`) or keeping the file open ([`ResultsFile`], the suite
//! runner), and compacting a file the first time a process writes to it. The suite runner's
//! file has a small companion while the run goes, `<stem>.running.json`: what is running now
//! and since when (see [`RUNNING_SUFFIX`]), read by `niceeval view`'s server.

use std::collections::{HashMap, HashSet};
use std::fs::OpenOptions;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use crate::output::reporter::Reporter;
use crate::run::report::{EvalReport, RunInfo, Versioned};

/// The Cargo target directory of the running test binary: `CARGO_TARGET_DIR` when set, else
/// the nearest ancestor of the executable holding Cargo's `CACHEDIR.TAG` (the root of every
/// target directory), else the nearest ancestor named `target`, else `<manifest_dir>/target`.
///
/// ```
/// let dir = niceeval::__workspace::results::target_dir(std::path::Path::new(env!("CARGO_MANIFEST_DIR")));
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

/// The name [`name_after_suite_files`] gave this process's results, if any.
static NAMED: OnceLock<String> = OnceLock::new();

/// Names this process's results file (`<name>.jsonl`) and its run's target after the suite
/// files it runs, instead of after the running binary: `niceeval eval` is one binary for
/// every suite file, and under one name a second file's run compacted the first one's
/// results away (and hid its run as an older run of the same target). The name is each
/// file's path as given (relative to the current directory when it is under it), with
/// characters other than letters, digits, `.`, `_` and `-` written `_`, the files joined with
/// `+`; a name longer than 100 characters is cut and ends in a hash of the whole. Must come
/// before anything asks for [`this_run`]; returns whether it did.
///
/// ```
/// use std::path::PathBuf;
/// assert_eq!(
///     niceeval::__workspace::results::suite_files_name(&[PathBuf::from("./evals/promptfooconfig.yaml")]),
///     "evals_promptfooconfig.yaml"
/// );
/// ```
pub fn name_after_suite_files(files: &[PathBuf]) -> bool {
    RUN.get().is_none() && NAMED.set(suite_files_name(files)).is_ok()
}

/// The name [`name_after_suite_files`] gives the results of a run of `files`.
pub fn suite_files_name(files: &[PathBuf]) -> String {
    let here = std::env::current_dir().ok();
    let name = files
        .iter()
        .map(|file| {
            let shown = here
                .as_deref()
                .and_then(|here| file.strip_prefix(here).ok())
                .unwrap_or(file);
            let text = shown.to_string_lossy();
            let text = text.strip_prefix("./").unwrap_or(&text);
            text.chars()
                .map(|c| {
                    if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') {
                        c
                    } else {
                        '_'
                    }
                })
                .collect::<String>()
        })
        .collect::<Vec<_>>()
        .join("+");
    if name.len() <= 100 {
        return name;
    }
    use sha2::Digest as _;
    let hash = sha2::Sha256::digest(name.as_bytes());
    let hex: String = hash[..8].iter().map(|b| format!("{b:02x}")).collect();
    // `~`, not `-`: a `-` and 16 hex digits would read as Cargo's hash of a test binary.
    format!("{}~{hex}", &name[..84])
}

/// The running test binary's file stem (`evals-0123abcd`), or the name
/// [`name_after_suite_files`] gave.
fn binary() -> String {
    if let Some(named) = NAMED.get() {
        return named.clone();
    }
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
/// let run = niceeval::__workspace::results::this_run();
/// assert!(run.started.ends_with('Z'));
/// assert_eq!(run.id, niceeval::__workspace::results::this_run().id);
/// ```
pub fn this_run() -> &'static RunInfo {
    RUN.get_or_init(|| {
        let started = humantime::format_rfc3339_millis(std::time::SystemTime::now()).to_string();
        let id = match std::env::var("NEXTEST_RUN_ID") {
            Ok(run) if !run.is_empty() => run,
            _ => format!("{started}-{}", std::process::id()),
        };
        RunInfo::new(id, started, this_target())
    })
}

static RUN: OnceLock<RunInfo> = OnceLock::new();

/// Makes `run` this process's run (`--resume`: the records written from now on continue an
/// earlier run, under its id and start). Must come before anything asks for [`this_run`];
/// returns whether it did.
pub(crate) fn continue_run(run: RunInfo) -> bool {
    RUN.set(run).is_ok()
}

/// This test binary's target (`evals`), without fixing the run.
pub fn this_target() -> String {
    target_name(&binary())
}

/// This process's results file for evals of the crate at `manifest_dir`.
pub(crate) fn this_file(manifest_dir: &Path) -> PathBuf {
    results_dir(manifest_dir).join(file_name())
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
pub(crate) fn under_nextest() -> bool {
    std::env::var("NEXTEST_RUN_ID").is_ok_and(|r| !r.is_empty())
}

/// Ends a line a killed writer left without its newline (under nextest, where the file is
/// not compacted), so the records appended next start on a line of their own; reading skips
/// the cut one with a warning.
fn end_cut_line(path: &Path, file: &mut std::fs::File) -> std::io::Result<()> {
    use std::io::{Read as _, Seek as _, SeekFrom};
    let mut reader = std::fs::File::open(path)?;
    if reader.seek(SeekFrom::End(0))? == 0 {
        return Ok(());
    }
    reader.seek(SeekFrom::End(-1))?;
    let mut last = [0u8];
    reader.read_exact(&mut last)?;
    if last[0] != b'\n' {
        file.write_all(b"\n")?;
    }
    Ok(())
}

/// `[results] keep_runs` of the crate at `manifest_dir` (its default when the configuration is
/// invalid: the run reports that error itself).
fn keep_runs(manifest_dir: &Path) -> usize {
    crate::config::Config::for_manifest_dir(&manifest_dir.to_string_lossy())
        .map_or(crate::config::ResultsConfig::DEFAULT_KEEP_RUNS, |c| {
            c.results.keep_runs()
        })
}

/// The eval ids a test binary defines, for compaction: every eval, and every case of each
/// dataset as its file holds them now (a row deleted from the file is no longer defined, nor
/// is the dataset eval's own name, which only an unreadable file's error record bears); a
/// dataset whose file cannot be read defines its own name and keeps all its cases, as
/// nothing tells which still are. A dataset's cases are looked up in its index
/// ([`crate::run::dataset::Cases`]), not held again as ids.
pub(crate) struct Defined {
    ids: HashSet<String>,
    datasets: HashMap<String, Arc<crate::run::dataset::Cases>>,
    unread: HashSet<String>,
}

impl Defined {
    /// What `defs` define (datasets read once per process: [`crate::run::dataset::cases`]).
    pub(crate) fn of(defs: &[&'static crate::run::definition::EvalDefinition]) -> Defined {
        let mut defined = Defined {
            ids: Default::default(),
            datasets: Default::default(),
            unread: Default::default(),
        };
        for def in defs {
            match crate::run::dataset::cases(def) {
                None => {
                    defined.ids.insert(def.id());
                }
                // A dataset eval whose file reads is its cases only: the error record a run
                // wrote under its own name while the file could not be read is no longer
                // produced, so it leaves.
                Some(Ok(cases)) => {
                    defined.datasets.insert(def.id(), cases);
                }
                Some(Err(_)) => {
                    defined.ids.insert(def.id());
                    defined.unread.insert(def.id());
                }
            }
        }
        defined
    }

    /// Whether `id` is defined (anything is, when nothing was registered: a binary that
    /// cannot tell keeps every record).
    fn contains(&self, id: &str) -> bool {
        (self.ids.is_empty() && self.datasets.is_empty())
            || self.ids.contains(id)
            || id.rsplit_once("::").is_some_and(|(parent, name)| {
                self.unread.contains(parent)
                    || self
                        .datasets
                        .get(parent)
                        .is_some_and(|cases| cases.position(name).is_some())
            })
    }
}

/// What a process does before it first writes to its results file at `path`: outside nextest
/// it compacts that file ([`compact`]). Under nextest, where each eval is a process of its own
/// writing to the run's file, the run's first process (the one that creates that file)
/// compacts instead the files the same binary wrote before — plain `cargo test`'s and earlier
/// nextest runs' — to what the binary defines now, so a deleted eval or dataset row leaves
/// them at the next run there too; a file left with no record is removed.
fn compact_for_run(
    path: &Path,
    manifest_dir: &Path,
    defined: impl FnOnce() -> Defined,
) -> std::io::Result<()> {
    if !under_nextest() {
        // Nothing to compact: what the binary defines is not asked for.
        if !path.exists() {
            return Ok(());
        }
        return compact(path, keep_runs(manifest_dir), &defined());
    }
    match OpenOptions::new().write(true).create_new(true).open(path) {
        Ok(_) => {}
        // Another process of the run was first: it compacts.
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => return Ok(()),
        Err(e) => return Err(e),
    }
    let Some(dir) = path.parent() else {
        return Ok(());
    };
    let defined = defined();
    let keep_runs = keep_runs(manifest_dir);
    for earlier in earlier_files(dir, &binary(), path) {
        compact(&earlier, keep_runs, &defined)?;
        if std::fs::metadata(&earlier).is_ok_and(|m| m.len() == 0) {
            std::fs::remove_file(&earlier)?;
        }
    }
    Ok(())
}

/// The results files in `dir` that the binary `binary` (its file stem) wrote, `current` left
/// out: `<binary>.jsonl` (plain `cargo test`, the suite runner) and
/// `<binary>-<NEXTEST_RUN_ID>.jsonl` (nextest runs).
fn earlier_files(dir: &Path, binary: &str, current: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut files: Vec<PathBuf> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| p != current)
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .and_then(|n| n.strip_suffix(".jsonl"))
                .and_then(|n| n.strip_prefix(binary))
                .is_some_and(|rest| rest.is_empty() || rest.starts_with('-'))
        })
        .collect();
    files.sort();
    files
}

/// Rewrites the results file at `path` to the records of each eval's latest `keep_runs`
/// runs (`[results] keep_runs`) among the evals this binary still defines (`defined`), through a temporary
/// file renamed into place, so a kill mid-way leaves the old file whole. The file is streamed
/// twice (the runs of each eval, then the lines kept, copied as they are): memory holds one id
/// and a few run numbers per eval, never the records. A file that cannot be read as results
/// (from a newer niceeval, or not ours) is replaced by an empty one, as every earlier version
/// did.
fn compact(path: &Path, keep_runs: usize, defined: &Defined) -> std::io::Result<()> {
    if !path.exists() {
        return Ok(());
    }
    compact_with(path, keep_runs, |id| defined.contains(id))
}

/// [`compact`], keeping the evals `still_defined` accepts.
fn compact_with(
    path: &Path,
    keep_runs: usize,
    still_defined: impl Fn(&str) -> bool,
) -> std::io::Result<()> {
    let kept = kept_lines(path, keep_runs.max(1), still_defined);
    let dir = path.parent().unwrap_or(Path::new("."));
    let mut temp = tempfile::NamedTempFile::new_in(dir)?;
    if let Ok(kept) = kept {
        // The second pass copies the kept lines as they are, parsing nothing.
        use std::io::BufRead as _;
        let mut reader = std::io::BufReader::with_capacity(64 * 1024, std::fs::File::open(path)?);
        let mut out = std::io::BufWriter::new(&mut temp);
        let mut kept = kept.into_iter().peekable();
        let mut line = Vec::new();
        let mut number = 0u32;
        while kept.peek().is_some() {
            line.clear();
            if reader.read_until(b'\n', &mut line)? == 0 {
                break;
            }
            number += 1;
            if kept.peek() == Some(&number) {
                kept.next();
                out.write_all(&line)?;
                if !line.ends_with(b"\n") {
                    out.write_all(b"\n")?;
                }
            }
        }
        out.flush()?;
    }
    // The file keeps its own permissions (a temporary file is the owner's alone).
    if let Ok(meta) = std::fs::metadata(path) {
        let _ = temp.as_file().set_permissions(meta.permissions());
    }
    temp.persist(path).map_err(|e| e.error)?;
    Ok(())
}

/// What compaction reads of a record: its eval and its run.
#[derive(serde::Deserialize)]
struct Key {
    id: String,
    #[serde(default)]
    run: Option<KeyRun>,
}

#[derive(serde::Deserialize)]
struct KeyRun {
    id: String,
    started: String,
}

/// The first pass of a compaction: the (1-based, ascending) lines of the records to keep —
/// those of each eval `still_defined` accepts, from its latest `keep_runs` runs, runs ordered
/// as [`super::latest_records`] orders them (the latest start among a run's records, then its
/// id; a record without a run is older than any). Holds one id and a few numbers per eval,
/// and three numbers per record.
fn kept_lines(
    path: &Path,
    keep_runs: usize,
    still_defined: impl Fn(&str) -> bool,
) -> Result<Vec<u32>, super::ReadError> {
    const NO_RUN: u32 = u32::MAX;
    // Run id → its number; by number, its id and latest start.
    let mut numbers: HashMap<String, u32> = HashMap::new();
    let mut runs: Vec<(String, String)> = Vec::new();
    // Eval id → its number; by number, whether it is still defined and its runs.
    let mut evals: HashMap<String, u32> = HashMap::new();
    let mut eval_runs: Vec<(bool, Vec<u32>)> = Vec::new();
    // Per record: its line, its eval, its run.
    let mut lines: Vec<(u32, u32, u32)> = Vec::new();
    let mut records = super::read::Records::open(path)?;
    while let Some((line, key)) = records.next_record::<Key>()? {
        let run = match key.run {
            None => NO_RUN,
            Some(run) => match numbers.get(&run.id) {
                Some(&n) => {
                    let started = &mut runs[n as usize].1;
                    if *started < run.started {
                        *started = run.started;
                    }
                    n
                }
                None => {
                    let n = runs.len() as u32;
                    numbers.insert(run.id.clone(), n);
                    runs.push((run.id, run.started));
                    n
                }
            },
        };
        let eval = match evals.get(&key.id) {
            Some(&n) => n,
            None => {
                let n = eval_runs.len() as u32;
                eval_runs.push((still_defined(&key.id), Vec::new()));
                evals.insert(key.id, n);
                n
            }
        };
        let known = &mut eval_runs[eval as usize].1;
        if !known.contains(&run) {
            known.push(run);
        }
        lines.push((u32::try_from(line).unwrap_or(u32::MAX), eval, run));
    }
    drop(evals);
    drop(numbers);
    let order = |n: u32| -> Option<(&str, &str)> {
        (n != NO_RUN).then(|| {
            let (id, started) = &runs[n as usize];
            (started.as_str(), id.as_str())
        })
    };
    for (_, known) in &mut eval_runs {
        known.sort_by(|a, b| order(*b).cmp(&order(*a)));
        known.truncate(keep_runs);
    }
    Ok(lines
        .into_iter()
        .filter(|(_, eval, run)| {
            let (defined, known) = &eval_runs[*eval as usize];
            *defined && known.contains(run)
        })
        .map(|(line, _, _)| line)
        .collect())
}

/// The suffix of the file beside a results file (`<stem>.running.json`, as the run manifest is
/// `<stem>.manifest.json`) that says, while the suite runner runs, what is running: JSON
/// `{"schema": 1, "run", "pid", "started_ms", "updated_ms", "total", "finished", "running":
/// [{"id", "since_ms"}]}` (times in milliseconds since the Unix epoch; `total` the evals the
/// run will run, `finished` those done so far). Rewritten (to a temporary file, then renamed)
/// when the run starts, at each progress tick (about once a second: the evals running then)
/// and when an eval it listed finishes; removed when the run completes. A file whose
/// `updated_ms` is more than a few seconds old was left by a run that was killed.
pub(crate) const RUNNING_SUFFIX: &str = "running.json";

/// The results file as a reporter, for the suite runner: opens the file once (compacting it,
/// except under nextest), then writes and flushes one line per finished eval — a crash or a
/// kill loses nothing that finished. Beside it, what is running (`<stem>.running.json`).
pub struct ResultsFile {
    path: PathBuf,
    file: std::fs::File,
    line: Vec<u8>,
    running: Running,
}

/// What the run's `<stem>.running.json` says.
struct Running {
    path: PathBuf,
    started: std::time::SystemTime,
    total: usize,
    finished: usize,
    /// The evals running at the last progress tick, with when each started.
    listed: Vec<(String, std::time::SystemTime)>,
    /// Whether the run started (the file is written from then on).
    live: bool,
}

impl Running {
    /// Writes the file (best effort: a run is not stopped or slowed by a file only a viewer
    /// reads, so a failure is left unsaid).
    fn write(&self) {
        let ms = |t: std::time::SystemTime| {
            t.duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_millis() as u64)
        };
        let running: Vec<serde_json::Value> = self
            .listed
            .iter()
            .map(|(id, since)| serde_json::json!({"id": id, "since_ms": ms(*since)}))
            .collect();
        let json = serde_json::json!({
            "schema": 1,
            "run": this_run().id,
            "pid": std::process::id(),
            "started_ms": ms(self.started),
            "updated_ms": ms(std::time::SystemTime::now()),
            "total": self.total,
            "finished": self.finished,
            "running": running,
        });
        let temporary = self.path.with_extension(format!("{RUNNING_SUFFIX}.tmp"));
        if std::fs::write(&temporary, json.to_string()).is_ok() {
            let _ = std::fs::rename(&temporary, &self.path);
        }
    }
}

impl ResultsFile {
    /// Opens this process's results file for evals of the crate at `manifest_dir`; `None` when
    /// results files are turned off.
    ///
    /// ```no_run
    /// # fn main() -> std::io::Result<()> {
    /// let results = niceeval::__workspace::results::ResultsFile::open(std::path::Path::new("."))?;
    /// # Ok(()) }
    /// ```
    pub fn open(manifest_dir: &Path) -> std::io::Result<Option<Self>> {
        Self::open_defining(
            manifest_dir,
            &crate::run::definition::registered(),
            Vec::new,
        )
    }

    /// [`ResultsFile::open`], compacting the file to what `defs` define (the registered
    /// evals and the suite files' cases a run is given) and the ids `more` names (deferred
    /// cases, asked for only when the file is compacted).
    pub(crate) fn open_defining(
        manifest_dir: &Path,
        defs: &[&'static crate::run::definition::EvalDefinition],
        more: impl FnOnce() -> Vec<String>,
    ) -> std::io::Result<Option<Self>> {
        if disabled() {
            return Ok(None);
        }
        let dir = results_dir(manifest_dir);
        std::fs::create_dir_all(&dir)?;
        let path = dir.join(file_name());
        this_run();
        compact_for_run(&path, manifest_dir, || {
            let mut defined = Defined::of(defs);
            defined.ids.extend(more());
            defined
        })?;
        let mut file = OpenOptions::new().create(true).append(true).open(&path)?;
        end_cut_line(&path, &mut file)?;
        let running = Running {
            path: path.with_extension(RUNNING_SUFFIX),
            started: std::time::SystemTime::now(),
            total: 0,
            finished: 0,
            listed: Vec::new(),
            live: false,
        };
        Ok(Some(ResultsFile {
            path,
            file,
            line: Vec::new(),
            running,
        }))
    }

    /// The file written to.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Reporter for ResultsFile {
    fn on_run_start(&mut self, start: &crate::run::report::SuiteStart) -> std::io::Result<()> {
        // The suite runner says what it will run; plain `cargo test` (one eval at a time, as
        // libtest calls them) does not, and has no progress to tell.
        if start.evals.is_empty() {
            return Ok(());
        }
        self.running.live = true;
        self.running.started = std::time::SystemTime::now();
        self.running.total = start.evals.len();
        self.running.write();
        Ok(())
    }

    fn on_eval_complete(&mut self, report: &EvalReport) -> std::io::Result<()> {
        // The whole line in one write: a kill never leaves half a report behind.
        self.line.clear();
        serde_json::to_writer(&mut self.line, &Versioned::stamped(report, this_run()))
            .map_err(std::io::Error::other)?;
        self.line.push(b'\n');
        self.file.write_all(&self.line)?;
        self.file.flush()?;
        let running = &mut self.running;
        running.finished += 1;
        // An eval the file lists as running leaves it now (those that started since the last
        // tick were never listed: a write per eval would cost a million writes a million).
        if let Some(at) = running.listed.iter().position(|(id, _)| *id == report.id) {
            running.listed.swap_remove(at);
            running
                .listed
                .sort_by(|a, b| a.1.cmp(&b.1).then_with(|| a.0.cmp(&b.0)));
            if running.live {
                running.write();
            }
        }
        Ok(())
    }

    fn on_progress(&mut self, progress: &crate::run::report::Progress) -> std::io::Result<()> {
        if !self.running.live {
            return Ok(());
        }
        let now = std::time::SystemTime::now();
        self.running.listed = progress
            .running
            .iter()
            .map(|(id, elapsed)| (id.clone(), now.checked_sub(*elapsed).unwrap_or(now)))
            .collect();
        self.running.write();
        Ok(())
    }

    fn on_run_complete(&mut self, _suite: &crate::run::report::SuiteReport) -> std::io::Result<()> {
        if self.running.live {
            let _ = std::fs::remove_file(&self.running.path);
            self.running.live = false;
        }
        Ok(())
    }

    /// Each report is written as it comes.
    fn reads_evals(&self) -> bool {
        false
    }
}

#[cfg(test)]
mod tests {
    use super::{compact_with, earlier_files, target_name};

    /// Compaction writes a temporary file and renames it over the results: the results keep
    /// the permissions they had (they were left owner-only, 0600, by the temporary file).
    #[cfg(unix)]
    #[test]
    fn a_compacted_file_keeps_its_permissions() {
        use std::os::unix::fs::PermissionsExt as _;
        let dir = tempfile::tempdir().expect("a temporary directory");
        let path = dir.path().join("evals.jsonl");
        std::fs::write(&path, "").expect("writable");
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).expect("chmod");
        compact_with(&path, 1, |_| true).expect("compacted");
        let mode = std::fs::metadata(&path)
            .expect("there")
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o644);
    }

    #[test]
    fn the_earlier_files_of_a_binary_are_its_own_and_not_the_current_one() {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let bin = "plain-0123456789abcdef";
        for name in [
            "plain-0123456789abcdef.jsonl",
            "plain-0123456789abcdef-1b4e28ba-2fa1-11d2-883f-0016d3cca427.jsonl",
            "plain-0123456789abcdef-now.jsonl",
            "plain-0123456789abcdef-now.manifest.json",
            "plain-0123456789abcdefx.jsonl",
            "suite-fedcba9876543210.jsonl",
        ] {
            std::fs::write(dir.path().join(name), "").expect("writable");
        }
        let current = dir.path().join("plain-0123456789abcdef-now.jsonl");
        let names: Vec<String> = earlier_files(dir.path(), bin, &current)
            .iter()
            .map(|p| {
                p.file_name()
                    .expect("a name")
                    .to_string_lossy()
                    .into_owned()
            })
            .collect();
        assert_eq!(
            names,
            [
                "plain-0123456789abcdef-1b4e28ba-2fa1-11d2-883f-0016d3cca427.jsonl",
                "plain-0123456789abcdef.jsonl",
            ]
        );
    }

    fn line(id: &str, run: &str) -> String {
        format!(
            r#"{{"schema":1,"id":"{id}","file":"t.rs","line":1,"outcome":"passed","assertions":[],"duration_ms":1.0,"usage":{{"input_tokens":0,"output_tokens":0,"cache_read_tokens":0}},"runs":[],"reliability":{{"n":1,"c":1,"pass_rate":1.0,"pass_at_k":[1.0],"pass_hat_k":[1.0]}},"min_pass_rate":1.0,"run":{{"id":"{run}","started":"{run}","target":"t"}}}}"#
        )
    }

    #[test]
    fn compaction_keeps_each_evals_latest_runs_and_drops_cut_lines() {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let path = dir.path().join("t.jsonl");
        let mut text = String::new();
        for run in ["2026-01-01", "2026-01-02", "2026-01-03"] {
            text.push_str(&line("t::a", run));
            text.push('\n');
        }
        // b ran only in the first run (a filtered run since): it keeps that record.
        text.push_str(&line("t::b", "2026-01-01"));
        text.push('\n');
        text.push_str(&line("t::gone", "2026-01-03"));
        text.push('\n');
        // A record cut short by a kill, then more appended after it (nextest's shared file).
        text.push_str(&line("t::a", "2026-01-04")[..40]);
        text.push('\n');
        std::fs::write(&path, &text).expect("writable");
        compact_with(&path, 2, |id| id != "t::gone").expect("compacted");
        let kept = std::fs::read_to_string(&path).expect("readable");
        let runs: Vec<(String, String)> = kept
            .lines()
            .map(|l| {
                let v: serde_json::Value = serde_json::from_str(l).expect("whole lines only");
                (
                    v["id"].as_str().unwrap_or_default().to_string(),
                    v["run"]["id"].as_str().unwrap_or_default().to_string(),
                )
            })
            .collect();
        let pairs: Vec<(&str, &str)> = runs.iter().map(|(a, b)| (a.as_str(), b.as_str())).collect();
        assert_eq!(
            pairs,
            [
                ("t::a", "2026-01-02"),
                ("t::a", "2026-01-03"),
                ("t::b", "2026-01-01"),
            ]
        );
        compact_with(&path, 1, |_| true).expect("compacted");
        let kept = std::fs::read_to_string(&path).expect("readable");
        assert_eq!(kept.lines().count(), 2, "{kept}");
    }

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
