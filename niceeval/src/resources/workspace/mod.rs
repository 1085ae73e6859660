//! Workspaces: evals of agents that change files. Each run of an eval with
//! `#[eval(workspace = "dir")]` gets a fresh working copy of the template in a temporary
//! directory, with a baseline recorded by git in a directory of its own beside the copy (so the
//! agent sees no `.git` it did not bring); the agent works in the copy, and the eval reads what
//! changed ([`Workspace::diff`]), runs commands ([`Workspace::run_command`]) and test suites
//! (`t.run_tests`) there.
//!
//! What the diff leaves out: the template's own `.gitignore` files, and `[workspace] ignore`
//! patterns in `niceeval.toml` (gitignore syntax). The agent's processes run under
//! `[workspace] isolation` ([`Isolation`]): none, or bubblewrap.
//!
//! ```
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! use niceeval::__workspace::workspace::Settings;
//! use niceeval::workspace::Workspace;
//!
//! let template = tempfile::tempdir()?;
//! std::fs::write(template.path().join("README.md"), "# todo\n")?;
//!
//! let ws = Workspace::create(template.path(), &Settings::default())?;
//! assert_eq!(ws.read_text("README.md")?, "# todo\n");
//! assert!(!ws.path().join(".git").exists()); // the baseline lives outside the copy
//! ws.write_text("src/lib.rs", "pub fn complete() {}\n")?;
//! assert_eq!(ws.diff().files(), ["src/lib.rs"]);
//! # Ok(()) }
//! ```

pub(crate) mod command;
pub(crate) mod copy;
mod diff;
mod git;
pub(crate) mod sandbox;
pub(crate) mod settings;
pub(crate) mod test_report;

use std::path::{Component, Path, PathBuf};
use std::sync::{Arc, Mutex};

// What an eval names: the working copy, its diff, a command run in it and the results of
// `t.run_tests`. How it is made (settings, limits, isolation) is niceeval.toml's business.
pub(crate) use crate::config::{Isolation, Keep};
pub(crate) use command::CommandRecord;
pub use command::RunCommand;
pub(crate) use copy::Limits;
pub use diff::Diff;
pub(crate) use sandbox::Sandbox;
pub(crate) use settings::Settings;
pub(crate) use test_report::read_libtest;
pub use test_report::{TestCase, TestFormat, TestOutcome, TestReport};

use crate::base::event::{Event, FileChange};
use git::Git;
pub(crate) use git::Tree;

/// Why a workspace operation failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum WorkspaceError {
    /// A file operation failed.
    #[error("{}: {source}", path.display())]
    Io {
        /// The path.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
    /// The template (or a directory to add) is not a directory.
    #[error("{}: not a directory (a workspace template is a directory, relative to the crate's manifest directory)", .0.display())]
    NotADirectory(PathBuf),
    /// The template holds more than the limits allow.
    #[error(
        "{}: the template is over the workspace limits (seen so far: {files} files, {bytes} bytes; limits: {} files, {} bytes); raise [workspace] max_files / max_bytes in niceeval.toml or slim the template",
        path.display(), limits.max_files, limits.max_bytes
    )]
    TooLarge {
        /// The template.
        path: PathBuf,
        /// Files counted before stopping.
        files: u64,
        /// Bytes counted before stopping.
        bytes: u64,
        /// The limits.
        limits: Limits,
    },
    /// `git` could not be started.
    #[error(
        "cannot run `git` ({0}); workspaces record their baseline with the git CLI: install git"
    )]
    GitMissing(String),
    /// A git command failed.
    #[error("`git {command}` failed in the workspace baseline: {message}")]
    Git {
        /// The arguments.
        command: String,
        /// Its stderr.
        message: String,
    },
    /// A path given to the workspace leaves the working copy.
    #[error("{0:?} is outside the working copy; give a path relative to it, without `..`")]
    OutsideCopy(String),
    /// A program could not be started.
    #[error("cannot start `{program}`: {message}")]
    Spawn {
        /// The program as given.
        program: String,
        /// Why.
        message: String,
    },
    /// A command ran past its timeout and was killed.
    #[error(
        "`{command}` did not finish within {after:?} and was killed; raise it with .timeout(..)"
    )]
    Timeout {
        /// The command line.
        command: String,
        /// The timeout.
        after: std::time::Duration,
    },
    /// A test run could not be read as test results.
    #[error("{0}")]
    Tests(String),
    /// A JUnit report (from `path`, when it came from a file) is not XML.
    #[error(
        "{}not JUnit XML: {source}",
        path.as_ref().map(|p| format!("{}: ", p.display())).unwrap_or_default()
    )]
    Junit {
        /// The report's file.
        path: Option<PathBuf>,
        /// The XML parser's error.
        #[source]
        source: roxmltree::Error,
    },
    /// A background task of the workspace (a copying thread, a snapshot) failed to complete.
    #[error("{0} failed: {1}")]
    Task(&'static str, String),
}

impl WorkspaceError {
    pub(crate) fn io(path: &Path, source: std::io::Error) -> WorkspaceError {
        WorkspaceError::Io {
            path: path.to_path_buf(),
            source,
        }
    }

    pub(crate) fn git_missing(e: &std::io::Error) -> WorkspaceError {
        WorkspaceError::GitMissing(e.to_string())
    }
}

/// One run's working copy: a fresh copy of the template, its baseline, the sandbox the agent's
/// processes run in, and the log of commands run through it. See the module docs.
pub struct Workspace {
    /// The temporary directory holding `work/` (the copy) and `git/` (the baseline); `None`
    /// once kept or removed.
    dir: Mutex<Option<tempfile::TempDir>>,
    root: PathBuf,
    template: PathBuf,
    git: Arc<Git>,
    baseline: Tree,
    sandbox: Sandbox,
    settings: Settings,
    commands: Arc<Mutex<Vec<CommandRecord>>>,
}

impl std::fmt::Debug for Workspace {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Workspace")
            .field("path", &self.root)
            .field("template", &self.template)
            .field("isolation", &self.settings.isolation)
            .finish_non_exhaustive()
    }
}

impl Workspace {
    /// Copies `template` into a new temporary directory and records the baseline. Fails before
    /// copying anything when the template is over `settings.limits`, and when bubblewrap
    /// isolation is asked for but `bwrap` cannot run.
    pub fn create(template: &Path, settings: &Settings) -> Result<Workspace, WorkspaceError> {
        if settings.isolation == Isolation::Bubblewrap {
            sandbox::check_bwrap()?;
        }
        let dir = tempfile::Builder::new()
            .prefix("niceeval-workspace-")
            .tempdir()
            .map_err(|e| WorkspaceError::io(&std::env::temp_dir(), e))?;
        // The canonical path, so paths read back (from git, from the agent) compare equal.
        let base = dir
            .path()
            .canonicalize()
            .map_err(|e| WorkspaceError::io(dir.path(), e))?;
        let root = base.join("work");
        let private = base.join("private");
        for dir in [root.clone(), private.join("home"), private.join("tmp")] {
            std::fs::create_dir_all(&dir).map_err(|e| WorkspaceError::io(&dir, e))?;
        }
        // Refuse an oversized template before anything is copied or hashed.
        let entries = copy::list(template, settings.limits)?;
        let git = Git::init(&base.join("git"), &root, &settings.ignore)?;
        // The baseline is hashed from the template while the copy is made; the copy keeps the
        // template's modification times, so git then finds the copy clean without reading it.
        let recording = git.start_baseline(template)?;
        let copied = copy::copy_entries(template, &root, entries, true);
        let baseline = recording.finish(&git);
        copied?;
        let baseline = baseline?;
        Ok(Workspace {
            dir: Mutex::new(Some(dir)),
            sandbox: Sandbox::new(&root, settings.isolation, settings.network)
                .with_private_dir(private),
            root,
            template: template.to_path_buf(),
            git: Arc::new(git),
            baseline,
            settings: settings.clone(),
            commands: Arc::default(),
        })
    }

    /// The working copy: the directory the agent works in.
    pub fn path(&self) -> &Path {
        &self.root
    }

    /// The template it was copied from.
    pub fn template(&self) -> &Path {
        &self.template
    }

    /// The sandbox the agent's processes (and [`Workspace::run_command`]) run in.
    pub fn sandbox(&self) -> &Sandbox {
        &self.sandbox
    }

    /// What changed against the baseline, now (see [`Diff`]).
    ///
    /// # Panics
    ///
    /// When git fails on the baseline (a broken installation); [`Workspace::try_diff`] returns
    /// the error instead. Inside an eval the panic ends the run as an execution error with
    /// git's message.
    pub fn diff(&self) -> Diff {
        match self.try_diff() {
            Ok(diff) => diff,
            Err(e) => panic!("cannot take the workspace diff: {e}"),
        }
    }

    /// What changed against the baseline, now, or why git could not tell.
    pub fn try_diff(&self) -> Result<Diff, WorkspaceError> {
        let now = self.git.snapshot()?;
        let (files, text, partial) = self.compare(&self.baseline, &now)?;
        Ok(Diff::new(files, text, partial, self.git.clone(), now))
    }

    /// The contents of `path` (relative to the working copy) as text, invalid UTF-8 replaced.
    pub fn read_text(&self, path: impl AsRef<Path>) -> Result<String, WorkspaceError> {
        let full = self.inside(path.as_ref())?;
        let bytes = std::fs::read(&full).map_err(|e| WorkspaceError::io(&full, e))?;
        Ok(String::from_utf8_lossy(&bytes).into_owned())
    }

    /// Writes `text` to `path` (relative to the working copy), creating its directories.
    pub fn write_text(
        &self,
        path: impl AsRef<Path>,
        text: impl AsRef<str>,
    ) -> Result<(), WorkspaceError> {
        let full = self.inside(path.as_ref())?;
        if let Some(parent) = full.parent() {
            std::fs::create_dir_all(parent).map_err(|e| WorkspaceError::io(parent, e))?;
        }
        std::fs::write(&full, text.as_ref()).map_err(|e| WorkspaceError::io(&full, e))
    }

    /// Copies the files of `dir` (relative to the eval crate's manifest directory) into the
    /// working copy, over what is there: hidden tests, say, that the agent never saw.
    pub fn add_files(&self, dir: impl AsRef<Path>) -> Result<(), WorkspaceError> {
        let dir = dir.as_ref();
        let source = match &self.settings.base_dir {
            Some(base) if dir.is_relative() => base.join(dir),
            _ => dir.to_path_buf(),
        };
        copy::copy_tree(&source, &self.root, self.settings.limits).map(|_| ())
    }

    /// A command to run in the working copy, under the workspace's isolation; set `.cwd(..)`,
    /// `.env(..)`, `.timeout(..)` and `.await` it for its [`std::process::Output`], which
    /// [`crate::checks::expect::command_succeeded`] checks.
    pub fn run_command<I, S>(&self, program: impl Into<String>, args: I) -> RunCommand
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        RunCommand::new(
            self.sandbox.clone(),
            program.into(),
            args.into_iter().map(Into::into).collect(),
            self.commands.clone(),
        )
    }

    /// Every command run through [`Workspace::run_command`] so far, in order.
    pub fn commands(&self) -> Vec<CommandRecord> {
        self.commands
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// The shared log [`Workspace::commands`] reads (for checks evaluated after the body).
    pub(crate) fn command_log(&self) -> Arc<Mutex<Vec<CommandRecord>>> {
        self.commands.clone()
    }

    /// Records the working copy as it is now.
    pub(crate) fn snapshot(&self) -> Result<Tree, WorkspaceError> {
        self.git.snapshot()
    }

    /// The `workspace.changed` event from `from` to `to`, `None` when nothing changed.
    pub(crate) fn change_event(
        &self,
        from: &Tree,
        to: &Tree,
    ) -> Result<Option<Event>, WorkspaceError> {
        let (files, diff, partial) = self.compare(from, to)?;
        Ok((!files.is_empty()).then(|| Event::WorkspaceChanged {
            files,
            diff: diff.into(),
            partial,
        }))
    }

    fn compare(
        &self,
        from: &Tree,
        to: &Tree,
    ) -> Result<(Vec<FileChange>, String, bool), WorkspaceError> {
        let changes = self.git.changes(from, to)?;
        let text = self.git.unified(from, to)?;
        let limits = self.settings.limits;
        Ok(diff::bound(
            changes,
            text,
            limits.max_files,
            limits.max_bytes,
        ))
    }

    /// Ends the run's use of the copy: keeps it (returning its path) or removes it, as `keep`
    /// says for a run that `passed`.
    pub(crate) fn finish(&self, passed: bool) -> Option<PathBuf> {
        let dir = self.dir.lock().unwrap_or_else(|p| p.into_inner()).take()?;
        if self.settings.keep.keeps(passed) {
            let _kept = dir.keep();
            Some(self.root.clone())
        } else {
            drop(dir);
            None
        }
    }

    /// `path` inside the working copy, refusing absolute paths, `..` and links that lead out.
    fn inside(&self, path: &Path) -> Result<PathBuf, WorkspaceError> {
        let shown = || path.display().to_string();
        if path.is_absolute()
            || path
                .components()
                .any(|c| !matches!(c, Component::Normal(_) | Component::CurDir))
        {
            return Err(WorkspaceError::OutsideCopy(shown()));
        }
        let full = self.root.join(path);
        // Follow links only as far as they exist; the deepest existing ancestor must resolve
        // inside the copy.
        let mut probe = full.as_path();
        loop {
            if let Ok(real) = probe.canonicalize() {
                if !real.starts_with(&self.root) {
                    return Err(WorkspaceError::OutsideCopy(shown()));
                }
                break;
            }
            // A dangling link could point anywhere: writing through it is refused.
            if std::fs::symlink_metadata(probe).is_ok_and(|m| m.file_type().is_symlink()) {
                return Err(WorkspaceError::OutsideCopy(shown()));
            }
            match probe.parent() {
                Some(parent) => probe = parent,
                None => break,
            }
        }
        Ok(full)
    }
}

impl Drop for Workspace {
    fn drop(&mut self) {
        // A run that never reached `finish` (a panic in niceeval itself) removes its copy.
        let dir = self.dir.get_mut().unwrap_or_else(|p| p.into_inner()).take();
        drop(dir);
    }
}
