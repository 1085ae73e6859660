//! The baseline: a git repository whose directory lives outside the working copy, used only to
//! snapshot the copy as trees and compare them. The agent never sees it.
//!
//! This drives the git CLI rather than a library: git's own `add -A` (with its stat cache in
//! the index) is what makes a snapshot of a large copy cheap, it honours `.gitignore` files the
//! way users expect, and its diff output is the unified diff users read. Every call runs with
//! the user's and the system's git configuration turned off, so a global `core.autocrlf` or
//! excludes file cannot change what an eval sees.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use super::WorkspaceError;
use crate::base::event::{Change, FileChange};

/// A tree object id: one snapshot of the working copy.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct Tree(pub(crate) String);

/// The baseline repository of one working copy.
#[derive(Debug)]
pub(crate) struct Git {
    git_dir: PathBuf,
    work_tree: PathBuf,
}

/// The baseline being recorded from the template (see [`Git::start_baseline`]).
pub(crate) struct Baseline {
    child: std::process::Child,
}

impl Baseline {
    /// Waits for the template's objects and writes the baseline tree.
    pub(crate) fn finish(self, git: &Git) -> Result<Tree, WorkspaceError> {
        let out = self
            .child
            .wait_with_output()
            .map_err(|e| WorkspaceError::git_missing(&e))?;
        if !out.status.success() {
            return Err(WorkspaceError::Git {
                command: "add --all".to_string(),
                message: String::from_utf8_lossy(&out.stderr).trim().to_string(),
            });
        }
        let out = git.run(["write-tree"])?;
        Ok(Tree(String::from_utf8_lossy(&out).trim().to_string()))
    }
}

impl Git {
    /// Creates the repository in `git_dir` for `work_tree`, excluding `ignore` patterns
    /// (gitignore syntax) besides the copy's own `.gitignore` files.
    pub(crate) fn init(
        git_dir: &Path,
        work_tree: &Path,
        ignore: &[String],
    ) -> Result<Git, WorkspaceError> {
        let git = Git {
            git_dir: git_dir.to_path_buf(),
            work_tree: work_tree.to_path_buf(),
        };
        git.run(["init", "--quiet"])?;
        let exclude = git_dir.join("info").join("exclude");
        if let Some(parent) = exclude.parent() {
            std::fs::create_dir_all(parent).map_err(|e| WorkspaceError::io(parent, e))?;
        }
        let mut text = String::from("# [workspace] ignore in niceeval.toml\n");
        for pattern in ignore {
            text.push_str(pattern);
            text.push('\n');
        }
        std::fs::write(&exclude, text).map_err(|e| WorkspaceError::io(&exclude, e))?;
        Ok(git)
    }

    /// Starts recording `template` — the source of the copy — into the index, while the copy is
    /// being made: the baseline's objects are written in parallel with the copy, and the copy
    /// keeps the template's modification times, so the copy's first snapshot finds every file
    /// clean without reading it again. Finish with [`Baseline::finish`].
    pub(crate) fn start_baseline(&self, template: &Path) -> Result<Baseline, WorkspaceError> {
        // Every file streamed into one uncompressed pack (git's bulk check-in, used for files
        // over core.bigFileThreshold) rather than one compressed loose object each: creating
        // thousands of small files is what a baseline of a large template costs. Only this
        // command sets it; diffs read the blobs as usual.
        let child = self
            .command_in(
                template,
                [
                    "-c",
                    "core.bigFileThreshold=1",
                    "-c",
                    "pack.compression=0",
                    "add",
                    "--all",
                ],
            )
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| WorkspaceError::git_missing(&e))?;
        Ok(Baseline { child })
    }

    /// Records the working copy as it is now and returns its tree.
    pub(crate) fn snapshot(&self) -> Result<Tree, WorkspaceError> {
        self.run(["add", "--all"])?;
        let out = self.run(["write-tree"])?;
        Ok(Tree(String::from_utf8_lossy(&out).trim().to_string()))
    }

    /// The paths that differ between `from` and `to`, in path order.
    pub(crate) fn changes(
        &self,
        from: &Tree,
        to: &Tree,
    ) -> Result<Vec<FileChange>, WorkspaceError> {
        if from == to {
            return Ok(Vec::new());
        }
        let status = self.run([
            "diff-tree",
            "-r",
            "-z",
            "--no-renames",
            "--name-status",
            &from.0,
            &to.0,
        ])?;
        let numstat = self.run([
            "diff-tree",
            "-r",
            "-z",
            "--no-renames",
            "--numstat",
            &from.0,
            &to.0,
        ])?;
        // --numstat -z: "added\tdeleted\tpath\0"; binary files show "-\t-".
        let mut binaries = std::collections::HashSet::new();
        for record in numstat.split(|b| *b == 0).filter(|r| !r.is_empty()) {
            let text = String::from_utf8_lossy(record);
            let mut parts = text.splitn(3, '\t');
            if let (Some("-"), Some("-"), Some(path)) = (parts.next(), parts.next(), parts.next()) {
                binaries.insert(path.to_string());
            }
        }
        // --name-status -z: "M\0path\0".
        let mut fields = status.split(|b| *b == 0).filter(|r| !r.is_empty());
        let mut changes = Vec::new();
        while let (Some(code), Some(path)) = (fields.next(), fields.next()) {
            let change = match code.first() {
                Some(b'A') => Change::Created,
                Some(b'D') => Change::Deleted,
                _ => Change::Modified,
            };
            let path = String::from_utf8_lossy(path).into_owned();
            let binary = binaries.contains(&path);
            changes.push(FileChange {
                path,
                change,
                binary,
            });
        }
        Ok(changes)
    }

    /// The unified diff from `from` to `to` (binary files as "Binary files … differ").
    pub(crate) fn unified(&self, from: &Tree, to: &Tree) -> Result<String, WorkspaceError> {
        if from == to {
            return Ok(String::new());
        }
        let out = self.run([
            "diff-tree",
            "-r",
            "-p",
            "--no-renames",
            "--no-color",
            "--no-ext-diff",
            &from.0,
            &to.0,
        ])?;
        Ok(String::from_utf8_lossy(&out).into_owned())
    }

    /// The contents of `path` in `tree`, `None` when it has no such file.
    pub(crate) fn read(&self, tree: &Tree, path: &str) -> Result<Option<Vec<u8>>, WorkspaceError> {
        let spec = format!("{}:{path}", tree.0);
        let out = self
            .command(["cat-file", "blob", spec.as_str()])
            .output()
            .map_err(|e| WorkspaceError::git_missing(&e))?;
        Ok(out.status.success().then_some(out.stdout))
    }

    fn command<I, S>(&self, args: I) -> Command
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        self.command_in(&self.work_tree, args)
    }

    /// A git command over the work tree `work_tree` (the copy, or the template it comes from).
    fn command_in<I, S>(&self, work_tree: &Path, args: I) -> Command
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        let mut command = Command::new("git");
        // Only what is said here counts: no user, system or environment configuration, and
        // no hooks or pagers.
        for (key, _) in std::env::vars_os() {
            if key.to_string_lossy().starts_with("GIT_") {
                command.env_remove(&key);
            }
        }
        command
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_TERMINAL_PROMPT", "0")
            .arg("--git-dir")
            .arg(&self.git_dir)
            .arg("--work-tree")
            .arg(work_tree)
            .args([
                "-c",
                "core.autocrlf=false",
                "-c",
                "core.safecrlf=false",
                "-c",
                "core.quotePath=false",
                "-c",
                "core.symlinks=true",
                "-c",
                "core.fileMode=true",
                // Whole-second mtime and size decide whether a file needs reading again (git's
                // racy-entry check covers edits within the second): the copy keeps the
                // template's times, so the index made from the template fits the copy.
                "-c",
                "core.checkStat=minimal",
                "-c",
                "core.trustctime=false",
                "-c",
                "core.looseCompression=1",
                "-c",
                "gc.auto=0",
                "-c",
                "advice.addEmbeddedRepo=false",
            ])
            .args(args)
            .current_dir(work_tree)
            .stdin(Stdio::null());
        command
    }

    fn run<I, S>(&self, args: I) -> Result<Vec<u8>, WorkspaceError>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        let args: Vec<std::ffi::OsString> = args
            .into_iter()
            .map(|a| a.as_ref().to_os_string())
            .collect();
        let out = self
            .command(&args)
            .output()
            .map_err(|e| WorkspaceError::git_missing(&e))?;
        if out.status.success() {
            Ok(out.stdout)
        } else {
            Err(WorkspaceError::Git {
                command: args
                    .iter()
                    .map(|a| a.to_string_lossy().into_owned())
                    .collect::<Vec<_>>()
                    .join(" "),
                message: String::from_utf8_lossy(&out.stderr).trim().to_string(),
            })
        }
    }
}
