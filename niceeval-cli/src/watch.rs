//! `niceeval eval --watch` (promptfoo's `-w`): runs the suite, then runs it again whenever the
//! suite file, a file under its directory, or a file it names with `file://` changes, until
//! Ctrl-C. Each run is a process of its own (this command without `--watch`), so every run
//! starts as a fresh `niceeval eval` does.
//!
//! Changes are found by polling (every [`POLL`]) the modification times and sizes of those
//! files rather than with the OS's notifications (`notify`): no dependency more for one
//! option, the same behaviour on every platform and on mounted or network directories where
//! inotify sees nothing, and a suite's directory is a few files. What a run writes (its
//! reports, results) does not start another: the files are looked at afresh after each run,
//! and `target/`, `node_modules/` and hidden directories are not looked at.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};
use std::time::{Duration, SystemTime};

/// How often the files are looked at.
pub const POLL: Duration = Duration::from_millis(100);

/// At most this many files are watched (a suite file at the top of a large tree).
const MAX_FILES: usize = 20_000;

/// Directories never looked into.
const SKIPPED_DIRS: &[&str] = &["target", "node_modules", "__pycache__", "venv"];

/// What a file looked like: modification time and size.
type Stamp = (Option<SystemTime>, u64);

/// The files watched and how they looked.
#[derive(Debug, PartialEq)]
struct Snapshot(BTreeMap<PathBuf, Stamp>);

/// The files to watch for the suite files `configs`, minus `outputs` (what the run writes).
fn watched(configs: &[PathBuf], outputs: &[PathBuf]) -> Vec<PathBuf> {
    let absolute = |p: &Path| std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf());
    let outputs: Vec<PathBuf> = outputs.iter().map(|p| absolute(p)).collect();
    let mut files = Vec::new();
    for config in configs {
        let config = absolute(config);
        files.push(config.clone());
        let dir = config.parent().map(Path::to_path_buf).unwrap_or_default();
        walk(&dir, &mut files);
        // `file://` paths outside the directory.
        if let Ok(text) = std::fs::read_to_string(&config) {
            for named in text.split("file://").skip(1) {
                let end = named
                    .find(|c: char| c.is_whitespace() || matches!(c, '"' | '\'' | ',' | ']' | '}'))
                    .unwrap_or(named.len());
                let mut path = &named[..end];
                // `file://x.py:function`
                if let Some((file, _)) = path.rsplit_once(':')
                    && !file.is_empty()
                {
                    path = file;
                }
                if path.contains(['*', '?', '[']) {
                    continue;
                }
                let path = dir.join(path);
                if path.is_file() {
                    files.push(absolute(&path));
                }
            }
        }
    }
    files.sort();
    files.dedup();
    files.retain(|f| !outputs.contains(f));
    files.truncate(MAX_FILES);
    files
}

fn walk(dir: &Path, files: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        if files.len() >= MAX_FILES {
            return;
        }
        let path = entry.path();
        let name = entry.file_name();
        let name = name.to_string_lossy();
        match entry.file_type() {
            Ok(t)
                if t.is_dir()
                    && !name.starts_with('.')
                    && !SKIPPED_DIRS.contains(&name.as_ref()) =>
            {
                walk(&path, files);
            }
            Ok(t) if t.is_file() => files.push(path),
            _ => {}
        }
    }
}

fn snapshot(files: &[PathBuf]) -> Snapshot {
    Snapshot(
        files
            .iter()
            .map(|f| {
                let stamp = std::fs::metadata(f)
                    .map(|m| (m.modified().ok(), m.len()))
                    .unwrap_or((None, 0));
                (f.clone(), stamp)
            })
            .collect(),
    )
}

/// The first file whose stamp differs between `a` and `b`.
fn changed(a: &Snapshot, b: &Snapshot) -> Option<PathBuf> {
    b.0.iter()
        .find(|(path, stamp)| a.0.get(*path) != Some(*stamp))
        .map(|(path, _)| path.clone())
        .or_else(|| a.0.keys().find(|path| !b.0.contains_key(*path)).cloned())
}

/// Runs `niceeval eval ARGS` (the arguments without `--watch`) now and after every change to
/// the files of `configs` (not `outputs`); returns only when a run cannot be started.
pub fn watch(args: &[String], configs: &[PathBuf], outputs: &[PathBuf]) -> ExitCode {
    let exe = match std::env::current_exe() {
        Ok(exe) => exe,
        Err(e) => {
            eprintln!("error: --watch: cannot find this program to run it again: {e}");
            return ExitCode::from(2);
        }
    };
    let args: Vec<&String> = args
        .iter()
        .filter(|a| !matches!(a.as_str(), "-w" | "--watch"))
        .collect();
    loop {
        let status = Command::new(&exe).arg("eval").args(&args).status();
        if let Err(e) = status {
            eprintln!("error: --watch: cannot run {}: {e}", exe.display());
            return ExitCode::from(2);
        }
        let files = watched(configs, outputs);
        let before = snapshot(&files);
        println!(
            "niceeval eval --watch: watching {} file(s) for changes (Ctrl-C stops)",
            files.len()
        );
        let file = loop {
            std::thread::sleep(POLL);
            // Files added since: the list is made again.
            let now = snapshot(&watched(configs, outputs));
            if let Some(file) = changed(&before, &now) {
                break file;
            }
        };
        println!(
            "niceeval eval --watch: {} changed; running again",
            file.display()
        );
    }
}
