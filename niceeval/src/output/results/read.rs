//! Reading results files as streams: one line at a time ([`Records`]), never a whole file in
//! memory. A newer schema is refused; a record cut short by a process killed while writing it
//! (no newline, not valid JSON: a SIGKILL mid-write) is skipped with a warning naming its file
//! and line.

use std::collections::HashSet;
use std::io::BufRead as _;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

use serde::de::DeserializeOwned;

use crate::run::report::{EvalReport, SCHEMA_VERSION};

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

/// The results files `paths` name: files as they are, directories by their `*.jsonl` files
/// and those of their subdirectories one level down (the shards of a run downloaded each into
/// a folder of its own: `results/shard-1/*.jsonl`), sorted by path.
pub(crate) fn files(paths: &[PathBuf]) -> Result<Vec<PathBuf>, ReadError> {
    let mut out = Vec::new();
    for path in paths {
        if path.is_dir() {
            out.extend(in_dir(path, "jsonl")?);
        } else {
            out.push(path.clone());
        }
    }
    Ok(out)
}

/// The files of `dir` whose name ends with `.{ending}`, and those of its subdirectories one
/// level down, sorted by path.
pub(crate) fn in_dir(dir: &Path, ending: &str) -> Result<Vec<PathBuf>, ReadError> {
    let list = |dir: &Path| -> Result<Vec<PathBuf>, ReadError> {
        Ok(std::fs::read_dir(dir)
            .map_err(|source| ReadError::Read {
                path: dir.to_path_buf(),
                source,
            })?
            .filter_map(|entry| entry.ok().map(|e| e.path()))
            .collect())
    };
    let suffix = format!(".{ending}");
    let named = |p: &PathBuf| {
        p.is_file()
            && p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.ends_with(&suffix))
    };
    let mut files = Vec::new();
    for entry in list(dir)? {
        if entry.is_dir() {
            files.extend(list(&entry)?.into_iter().filter(named));
        } else if named(&entry) {
            files.push(entry);
        }
    }
    files.sort();
    Ok(files)
}

/// Reads every report from `paths`: files are read as JSONL, directories contribute their
/// `*.jsonl` files (sorted by name). Blank lines are ignored, and so is a record cut short (no
/// newline, not valid JSON) — the trace of a process killed while writing it — with a warning
/// on stderr naming its file and line.
///
/// Holds every report. The report mode and `niceeval merge` read results files in two
/// streamed passes instead (`Index`), and runs through `Records`, one at a time.
pub fn read_reports(paths: &[PathBuf]) -> Result<Vec<EvalReport>, ReadError> {
    let mut reports = Vec::new();
    for file in files(paths)? {
        let mut records = Records::open(&file)?;
        while let Some(record) = records.next_record::<EvalReport>()? {
            reports.push(record.1);
        }
    }
    Ok(reports)
}

/// The records of one results file, read a line at a time into any type that deserializes
/// from a record (the whole [`EvalReport`], or only the fields a pass needs).
pub(crate) struct Records {
    path: PathBuf,
    reader: std::io::BufReader<std::fs::File>,
    line: usize,
    buf: Vec<u8>,
    /// Bytes read so far, and where the last line read starts.
    offset: u64,
    start: u64,
}

impl Records {
    /// Opens `path`.
    pub(crate) fn open(path: &Path) -> Result<Records, ReadError> {
        let file = std::fs::File::open(path).map_err(|source| ReadError::Read {
            path: path.to_path_buf(),
            source,
        })?;
        Ok(Records {
            path: path.to_path_buf(),
            reader: std::io::BufReader::with_capacity(64 * 1024, file),
            line: 0,
            buf: Vec::new(),
            offset: 0,
            start: 0,
        })
    }

    /// Where the record [`Records::next_record`] returned last is in the file: its first
    /// byte and its length (newline included), to read it again later with [`read_at`].
    pub(crate) fn span(&self) -> (u64, usize) {
        (self.start, self.buf.len())
    }

    /// The file, to read records again by their [`Records::span`].
    pub(crate) fn into_file(self) -> std::fs::File {
        self.reader.into_inner()
    }

    /// The next record and its 1-based line; `None` at the end of the file. Blank lines and
    /// records cut short (warned about) are passed over.
    pub(crate) fn next_record<T: DeserializeOwned>(
        &mut self,
    ) -> Result<Option<(usize, T)>, ReadError> {
        loop {
            self.buf.clear();
            let read = self
                .reader
                .read_until(b'\n', &mut self.buf)
                .map_err(|source| ReadError::Read {
                    path: self.path.clone(),
                    source,
                })?;
            if read == 0 {
                return Ok(None);
            }
            self.start = self.offset;
            self.offset += read as u64;
            self.line += 1;
            let complete = self.buf.ends_with(b"\n");
            let text = match std::str::from_utf8(&self.buf) {
                Ok(text) => text.trim(),
                // A kill can cut a line inside a multi-byte character.
                Err(_) if !complete => {
                    cut_short(&self.path, self.line);
                    continue;
                }
                Err(e) => return Err(self.error(e.to_string())),
            };
            if text.is_empty() {
                continue;
            }
            if let Some(schema) = schema(text)
                && schema > SCHEMA_VERSION
            {
                return Err(self.error(format!(
                        "this record has schema {schema}, newer than the {SCHEMA_VERSION} this niceeval reads; merge it with the niceeval version that wrote it, or upgrade"
                    )));
            }
            match serde_json::from_str::<T>(text) {
                Ok(record) => return Ok(Some((self.line, record))),
                // Cut short: the last line of a killed writer, or (under nextest, where the
                // processes append to one file) a line the next writer started after.
                Err(e) if e.is_eof() => cut_short(&self.path, self.line),
                // The file's last line without its newline: a writer killed mid-line, cut
                // anywhere — inside a number or a keyword the parser says "invalid", not "end
                // of input".
                Err(_) if !complete => cut_short(&self.path, self.line),
                Err(e) => return Err(self.error(e.to_string())),
            }
        }
    }

    fn error(&self, message: String) -> ReadError {
        ReadError::Line {
            path: self.path.clone(),
            line: self.line,
            message,
        }
    }
}

/// The schema of a record: read off the front where writers put it (`{"schema":1,`), else
/// parsed.
fn schema(text: &str) -> Option<u32> {
    if let Some(rest) = text.strip_prefix(r#"{"schema":"#) {
        let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
        if let Ok(schema) = rest[..digits].parse() {
            return Some(schema);
        }
    }
    crate::run::report::schema_of(text).ok()
}

/// Reads the record at `span` ([`Records::span`]) of `file` (the file at `path`, its
/// `line`) again, whole, into `buf`; parses it as an [`EvalReport`].
pub(crate) fn read_at(
    file: &mut std::fs::File,
    path: &Path,
    line: usize,
    (start, len): (u64, usize),
    buf: &mut Vec<u8>,
) -> Result<EvalReport, ReadError> {
    use std::io::{Read as _, Seek as _};
    let read_error = |source| ReadError::Read {
        path: path.to_path_buf(),
        source,
    };
    buf.resize(len, 0);
    file.seek(std::io::SeekFrom::Start(start))
        .map_err(read_error)?;
    file.read_exact(buf).map_err(read_error)?;
    serde_json::from_slice(buf.trim_ascii()).map_err(|e| ReadError::Line {
        path: path.to_path_buf(),
        line,
        message: e.to_string(),
    })
}

/// Warns, once per file and line in a process, that a record cut short was skipped.
fn cut_short(path: &Path, line: usize) {
    static WARNED: OnceLock<Mutex<HashSet<(PathBuf, usize)>>> = OnceLock::new();
    let mut warned = WARNED
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|p| p.into_inner());
    if warned.insert((path.to_path_buf(), line)) {
        eprintln!(
            "niceeval: warning: {}:{line}: skipped a record cut short (a process was killed while writing it)",
            path.display()
        );
    }
}

/// What finding a run reads of a record.
#[derive(serde::Deserialize)]
struct RunOf {
    #[serde(default)]
    run: Option<crate::run::report::RunInfo>,
}

/// The latest run of the test target `target` in the results file at `path` (the run with the
/// latest start among its records, ties broken by id, as [`super::latest_records`] orders
/// runs); `None` when the file holds none, or does not exist. Streams the file.
pub(crate) fn last_run(
    path: &Path,
    target: &str,
) -> Result<Option<crate::run::report::RunInfo>, ReadError> {
    if !path.exists() {
        return Ok(None);
    }
    // Run id → the run as first met, its start moved to the latest start of its records.
    let mut runs: std::collections::HashMap<String, crate::run::report::RunInfo> =
        Default::default();
    let mut records = Records::open(path)?;
    while let Some((_, RunOf { run })) = records.next_record::<RunOf>()? {
        let Some(run) = run.filter(|r| r.target == target) else {
            continue;
        };
        match runs.get_mut(&run.id) {
            Some(known) if known.started < run.started => known.started = run.started,
            Some(_) => {}
            None => {
                runs.insert(run.id.clone(), run);
            }
        }
    }
    Ok(runs
        .into_values()
        .max_by(|a, b| (&a.started, &a.id).cmp(&(&b.started, &b.id))))
}
