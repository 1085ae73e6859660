//! Named custom assertions by convention: executables in `.niceeval/assertions/`, found by
//! walking up from a directory, used as [`custom`]`("NAME")` in Rust and `type: NAME` in
//! assertions as data. They speak the script-grader protocol ([`crate::base::grader`]).

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

use serde_json::Value;

use crate::base::assertion::{Assertion, CheckContext, Grade, Subject};
use crate::base::grader::GraderInput;
use crate::checks::expect::script::{DEFAULT_GRADER_TIMEOUT, GraderRun, fill_from_events};

/// The folder custom assertions live in, below a project directory.
pub const CUSTOM_ASSERTIONS_DIR: &str = ".niceeval/assertions";

/// The custom assertions visible from one directory.
#[derive(Debug, Clone, Default)]
pub struct CustomAssertions {
    /// The `.niceeval/assertions` folder found, if any.
    pub dir: Option<PathBuf>,
    /// Name → file, for every usable assertion in it.
    pub entries: BTreeMap<String, PathBuf>,
    /// Files ignored, with why (shadowing a built-in, a duplicate name).
    pub ignored: Vec<(PathBuf, String)>,
}

impl CustomAssertions {
    /// Discovers the custom assertions for `start`: the nearest `.niceeval/assertions` folder in
    /// `start` or one of its ancestors. Files named `NAME.py`, `NAME.js`, `NAME.mjs`, `NAME.sh`,
    /// or any file with an execute bit, define the assertion `NAME`. A name that is a built-in
    /// assertion type (`contains`, `is-json`, ...) is ignored: built-ins cannot be overridden.
    /// Results are cached per directory for the life of the process; the first discovery prints
    /// a warning on stderr for every ignored file.
    pub fn discover(start: &Path) -> CustomAssertions {
        static CACHE: OnceLock<Mutex<HashMap<PathBuf, CustomAssertions>>> = OnceLock::new();
        let start = start.canonicalize().unwrap_or_else(|_| start.to_path_buf());
        let cache = CACHE.get_or_init(Default::default);
        if let Some(found) = cache.lock().unwrap_or_else(|p| p.into_inner()).get(&start) {
            return found.clone();
        }
        let found = Self::scan(&start);
        for (path, why) in &found.ignored {
            eprintln!("niceeval: warning: ignoring {}: {why}", path.display());
        }
        cache
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(start, found.clone());
        found
    }

    fn scan(start: &Path) -> CustomAssertions {
        let Some(dir) = start
            .ancestors()
            .map(|d| d.join(CUSTOM_ASSERTIONS_DIR))
            .find(|d| d.is_dir())
        else {
            return CustomAssertions::default();
        };
        let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
            .map(|rd| rd.filter_map(|e| e.ok().map(|e| e.path())).collect())
            .unwrap_or_default();
        files.sort();
        let mut found = CustomAssertions {
            dir: Some(dir),
            ..CustomAssertions::default()
        };
        for path in files {
            if !path.is_file() {
                continue;
            }
            let Some(name) = assertion_name(&path) else {
                continue;
            };
            if super::type_names::is_builtin_type(&name) {
                found.ignored.push((
                    path,
                    format!("`{name}` is a built-in assertion type, which a custom assertion cannot override; rename the file"),
                ));
            } else if let Some(first) = found.entries.get(&name) {
                let why = format!("`{name}` is already defined by {}", first.display());
                found.ignored.push((path, why));
            } else {
                found.entries.insert(name, path);
            }
        }
        found
    }

    /// The grader command for `name`, if it is defined.
    pub fn command(&self, name: &str) -> Option<Vec<String>> {
        self.entries.get(name).map(|path| command_for(path))
    }
}

fn assertion_name(path: &Path) -> Option<String> {
    let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("");
    let stem = path.file_stem()?.to_str()?.to_string();
    if matches!(ext, "py" | "js" | "mjs" | "sh") {
        return Some(stem);
    }
    if is_executable(path) {
        return path
            .file_name()?
            .to_str()
            .map(str::to_string)
            .map(|n| if ext.is_empty() { n } else { stem.clone() });
    }
    None
}

#[cfg(unix)]
fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    path.metadata()
        .map(|m| m.permissions().mode() & 0o111 != 0)
        .unwrap_or(false)
}

#[cfg(not(unix))]
fn is_executable(_path: &Path) -> bool {
    false
}

/// How a custom assertion file is run: `.py` with `python3`, `.js`/`.mjs` with `node`, `.sh`
/// with `bash`, anything else directly.
fn command_for(path: &Path) -> Vec<String> {
    let file = path.to_string_lossy().into_owned();
    match path.extension().and_then(|e| e.to_str()) {
        Some("py") => vec!["python3".into(), file],
        Some("js" | "mjs") => vec!["node".into(), file],
        Some("sh") => vec!["bash".into(), file],
        _ => vec![file],
    }
}

/// A named custom assertion from the nearest `.niceeval/assertions/` folder (see
/// [`CustomAssertions::discover`]), found by walking up from the directory of the source file
/// that calls `custom` (the eval's directory), else from the current directory (the crate's,
/// under `cargo test`), or from the directory set with [`CustomAssertion::from_dir`]. It runs like a
/// [`crate::checks::expect::script`] grader and follows the same result rules. Gate by default. An
/// unknown name is an execution error listing the names that exist.
///
/// ```no_run
/// use niceeval::prelude::*;
///
/// // .niceeval/assertions/min-words.py
/// let t = Eval::detached(None);
/// t.check("Hello there, nice to meet you!", custom("min-words").config(json!({"min": 3})));
/// ```
#[track_caller]
pub fn custom(name: impl Into<String>) -> CustomAssertion {
    CustomAssertion {
        name: name.into(),
        caller: std::panic::Location::caller().file(),
        start: None,
        payload: GraderInput::default(),
        timeout: DEFAULT_GRADER_TIMEOUT,
    }
}

/// The assertion returned by [`custom`].
#[derive(Debug, Clone)]
pub struct CustomAssertion {
    name: String,
    caller: &'static str,
    start: Option<PathBuf>,
    payload: GraderInput,
    timeout: Duration,
}

impl CustomAssertion {
    /// Looks for `.niceeval/assertions/` from this directory upwards.
    pub fn from_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.start = Some(dir.into());
        self
    }

    /// `config` in the grader's input.
    pub fn config(mut self, config: Value) -> Self {
        self.payload.config = Some(config);
        self
    }

    /// The longest the assertion may run (default 60 s).
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// Fills `messages`, `trace_summary`, `token_usage` and `cost_usd` from a run's events.
    pub fn events(mut self, events: &[crate::base::event::Event]) -> Self {
        fill_from_events(&mut self.payload, events);
        self
    }

    /// Replaces the grader input template (its `output` is still the checked value).
    pub fn payload(mut self, payload: GraderInput) -> Self {
        self.payload = payload;
        self
    }

    /// The name this assertion runs.
    pub fn name(&self) -> &str {
        &self.name
    }
}

impl Assertion for CustomAssertion {
    fn describe(&self) -> String {
        format!("custom({})", crate::base::excerpt::quote(&self.name))
    }

    fn evaluate(&self, value: &Subject<'_>) -> Grade {
        self.evaluate_in(value, &CheckContext::default())
    }

    /// Inside a workspace eval's `t.check`, the grader gets the working copy and its diff.
    fn evaluate_in(&self, value: &Subject<'_>, context: &CheckContext) -> Grade {
        let start = match &self.start {
            Some(dir) => dir.clone(),
            None => match std::env::current_dir() {
                Ok(cwd) => caller_dir(&cwd, self.caller).unwrap_or(cwd),
                Err(e) => return Grade::error(format!("cannot read the current directory: {e}")),
            },
        };
        let found = CustomAssertions::discover(&start);
        let Some(command) = found.command(&self.name) else {
            return Grade::error(missing_message(&self.name, &start, &found));
        };
        let cwd = found
            .dir
            .as_deref()
            .and_then(Path::parent)
            .and_then(Path::parent)
            .map(Path::to_path_buf);
        let text = value.text();
        GraderRun {
            command: &command,
            payload: &self.payload,
            cwd: cwd.as_deref(),
            timeout: self.timeout,
            env: &[],
            working_copy: context.working_copy(),
        }
        .grade(text.as_deref())
    }
}

/// The directory of the calling source file: `file!()` paths are relative to the workspace
/// root, which is the current directory or one of its ancestors under `cargo test`.
fn caller_dir(cwd: &Path, file: &str) -> Option<PathBuf> {
    let file = Path::new(file);
    if file.is_absolute() {
        return file.parent().map(Path::to_path_buf);
    }
    cwd.ancestors()
        .map(|dir| dir.join(file))
        .find(|candidate| candidate.is_file())
        .and_then(|found| found.parent().map(Path::to_path_buf))
}

/// Why `name` is not a custom assertion visible from `start`, with what is there.
pub(crate) fn missing_message(name: &str, start: &Path, found: &CustomAssertions) -> String {
    if super::type_names::is_builtin_type(name) {
        return format!(
            "`{name}` is a built-in assertion type; custom assertions cannot override it"
        );
    }
    match &found.dir {
        None => format!(
            "no custom assertion `{name}`: there is no {CUSTOM_ASSERTIONS_DIR} folder in {} or above it; create {CUSTOM_ASSERTIONS_DIR}/{name}.py (or .js, .mjs, .sh)",
            start.display()
        ),
        Some(dir) => {
            let names: Vec<&str> = found.entries.keys().map(String::as_str).collect();
            format!(
                "no custom assertion `{name}` in {}; it defines: {}",
                dir.display(),
                if names.is_empty() {
                    "none".to_string()
                } else {
                    names.join(", ")
                }
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn caller_directory_is_found_from_the_workspace_root() {
        let cwd = std::env::current_dir().unwrap();
        let here = caller_dir(&cwd, file!()).unwrap();
        assert!(here.ends_with("src/checks/expect"), "{}", here.display());
        assert_eq!(caller_dir(&cwd, "no/such/file.rs"), None);
        assert_eq!(custom("x").caller, file!());
    }
}
