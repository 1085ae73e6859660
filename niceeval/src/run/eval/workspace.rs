//! The handle's side of workspaces: `t.workspace()`, the snapshots around each `send` that
//! attribute changes to turns, and `t.run_tests(..)`, which records one gate per test case.

use std::future::{Future, IntoFuture};
use std::path::PathBuf;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use crate::base::assertion::{AssertionKind, AssertionResult, Grade, Settings};
use crate::base::event::Event;
use crate::checks::expect::Pattern;
use crate::checks::scope::{DiffIsEmpty, FileCheck, NoFailedShellCommands, NotInDiff, Scoped};
use crate::resources::workspace::test_report::parse_junit;
use crate::resources::workspace::{
    RunCommand, TestFormat, TestOutcome, TestReport, Tree, Workspace, WorkspaceError, read_libtest,
};
use crate::run::error::{Error, Result};
use crate::run::turn::Turn;

use super::Eval;

/// Records the working copy as it is now (on a blocking thread).
pub(super) async fn snapshot(ws: &Arc<Workspace>) -> Result<Tree> {
    let ws = ws.clone();
    tokio::task::spawn_blocking(move || ws.snapshot())
        .await
        .map_err(|e| Error::msg(format!("snapshotting the working copy failed: {e}")))?
        .map_err(Error::from)
}

/// The `workspace.changed` event of everything changed since `before`.
pub(super) async fn changes_since(
    ws: &Arc<Workspace>,
    before: Tree,
) -> std::result::Result<Option<Event>, WorkspaceError> {
    let ws = ws.clone();
    tokio::task::spawn_blocking(move || {
        let after = ws.snapshot()?;
        ws.change_event(&before, &after)
    })
    .await
    .unwrap_or_else(|e| {
        Err(WorkspaceError::Task(
            "taking the turn's diff",
            e.to_string(),
        ))
    })
}

impl Eval {
    /// The run's working copy, for an eval with `#[eval(workspace = "dir")]`: its path, its
    /// diff against the baseline, files to read and write, commands to run.
    ///
    /// # Panics
    ///
    /// When the eval has no workspace; the run then fails with a message saying to add
    /// `workspace = ".."` to the attribute.
    pub fn workspace(&self) -> &Workspace {
        match &self.workspace {
            Some(ws) => ws,
            None => panic!(
                "eval {} has no workspace: add `workspace = \"dir\"` to #[eval(..)] (a template directory, relative to the crate's directory)",
                self.id
            ),
        }
    }

    /// Runs a test suite in the working copy and records one gate assertion per test case,
    /// named `test <name>`, with the runner's failure output as the reason of a failed one.
    /// `.await` it; `?` ends the eval as an execution error when the suite cannot be read.
    ///
    /// Results are read from libtest's output (`cargo test`, human or `--format json`), or from
    /// a JUnit XML file the command writes, named with [`RunTests::junit`] (pytest
    /// `--junitxml`, vitest, jest, go-junit…). Ignored and skipped cases are not recorded. A
    /// command whose results name no test is an error, never a pass; so is a runner killed by a
    /// signal, and one that exits non-zero without a failing test (a build error, a crash).
    ///
    /// ```no_run
    /// use niceeval::prelude::*;
    ///
    /// #[eval(workspace = "fixtures/todo-app")]
    /// async fn tests_pass(t: &mut Eval) -> niceeval::Result {
    ///     let report = t.run_tests(["cargo", "test"]).await?;
    ///     assert!(report.cases.len() > 0);
    ///     t.run_tests(["python3", "-m", "pytest", "--junitxml=report.xml"]).junit("report.xml").await?;
    ///     Ok(())
    /// }
    /// ```
    pub fn run_tests<I, S>(&self, command: I) -> RunTests<'_>
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        let command: Vec<String> = command.into_iter().map(Into::into).collect();
        RunTests {
            eval: self,
            shown: command.join(" "),
            command: command.split_first().map(|(program, args)| {
                self.workspace()
                    .run_command(program.clone(), args.to_vec())
                    .unlogged()
            }),
            junit: None,
        }
    }
}

/// Defines each workspace assertion on [`Eval`] (the changes of every turn, and the commands
/// run through the workspace) and on [`Turn`] (that turn's changes and shell actions). `$ws`
/// is whether the eval has a working copy, read from the handle or the turn.
macro_rules! workspace_assertions {
    ($(
        $(#[$attr:meta])*
        fn $name:ident($($arg:ident: $ty:ty),*) -> $check:ty = |$ws:ident| $make:expr;
    )*) => {
        impl Eval {
            $(
                $(#[$attr])*
                pub fn $name(&self, $($arg: $ty),*) -> Scoped<$check> {
                    let $ws = self.workspace.is_some();
                    self.scoped($make)
                }
            )*
        }

        impl Turn {
            $(
                #[doc = concat!(
                    "[`Eval::", stringify!($name), "`](Eval::", stringify!($name),
                    ") limited to what this turn (this `send`) changed."
                )]
                pub fn $name(&self, $($arg: $ty),*) -> Scoped<$check> {
                    let $ws = self.has_workspace();
                    self.scoped($make)
                }
            )*
        }
    };
}

workspace_assertions! {
    /// The agent changed `path` (relative to the working copy): created, modified or deleted
    /// it, as a net effect of its turns. The failure lists what did change.
    ///
    /// ```no_run
    /// use niceeval::prelude::*;
    /// # fn fixer() -> impl Agent { agent_fn(|_r: Request| async { Ok(()) }) }
    ///
    /// #[eval(agent = fixer, workspace = "fixtures/todo-app")]
    /// async fn fixes_lib(t: &mut Eval) -> niceeval::Result {
    ///     let turn = t.send("Make `cargo test` pass").await?;
    ///     t.file_changed("src/lib.rs");
    ///     turn.file_changed("src/lib.rs"); // changed by this send
    ///     Ok(())
    /// }
    /// ```
    fn file_changed(path: impl Into<String>) -> FileCheck =
        |ws| FileCheck::changed(path).without_workspace(!ws);

    /// The agent created `path`: it did not exist in the working copy before and does now.
    fn file_created(path: impl Into<String>) -> FileCheck =
        |ws| FileCheck::created(path).without_workspace(!ws);

    /// The agent deleted `path` from the working copy.
    fn file_deleted(path: impl Into<String>) -> FileCheck =
        |ws| FileCheck::deleted(path).without_workspace(!ws);

    /// No diff the agent made contains `pattern` (a substring or a [`Regex`](crate::Regex)):
    /// every turn's diff is searched, so a secret written and removed again is still found.
    /// The failure quotes the diff line and names the file.
    fn not_in_diff(pattern: impl Into<Pattern>) -> NotInDiff =
        |ws| NotInDiff::new(pattern).without_workspace(!ws);

    /// The agent changed no file of the working copy.
    fn diff_is_empty() -> DiffIsEmpty = |ws| DiffIsEmpty::new().without_workspace(!ws);
}

impl Eval {
    /// No shell command failed: every shell action the agent reported (Claude Code's `Bash`,
    /// Codex's `command_execution`, a `shell` tool; see [`crate::ActionKind`]) ended without a
    /// `failed` status or a non-zero exit code, and so did every command the eval ran with
    /// [`Workspace::run_command`](crate::resources::workspace::Workspace::run_command). The failure lists
    /// each failed command with its exit code.
    pub fn no_failed_shell_commands(&self) -> Scoped<NoFailedShellCommands> {
        let check = match &self.workspace {
            Some(ws) => NoFailedShellCommands::new().with_commands(ws.command_log()),
            None => NoFailedShellCommands::new(),
        };
        self.scoped(check)
    }
}

impl Turn {
    /// [`Eval::no_failed_shell_commands`] over this turn's shell actions.
    pub fn no_failed_shell_commands(&self) -> Scoped<NoFailedShellCommands> {
        self.scoped(NoFailedShellCommands::new())
    }
}

/// A test suite to run in the working copy; see [`Eval::run_tests`]. `.await` it for the
/// [`TestReport`].
#[must_use = "the tests run only when awaited"]
pub struct RunTests<'a> {
    eval: &'a Eval,
    /// The command line as given, for messages.
    shown: String,
    /// The runner, in the working copy (`None` when the command was empty).
    command: Option<RunCommand>,
    junit: Option<PathBuf>,
}

impl std::fmt::Debug for RunTests<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RunTests")
            .field("command", &self.shown)
            .field("junit", &self.junit)
            .finish_non_exhaustive()
    }
}

impl RunTests<'_> {
    /// Reads the results from this JUnit XML file (relative to the command's directory) that
    /// the command writes.
    pub fn junit(mut self, path: impl Into<PathBuf>) -> Self {
        self.junit = Some(path.into());
        self
    }

    /// Runs in `dir`, relative to the working copy.
    pub fn cwd(mut self, dir: impl Into<PathBuf>) -> Self {
        self.command = self.command.map(|c| c.cwd(dir));
        self
    }

    /// Sets an environment variable for the command.
    pub fn env(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.command = self.command.map(|c| c.env(key, value));
        self
    }

    /// Kills the runner after `timeout` (default 10 minutes).
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.command = self.command.map(|c| c.timeout(timeout));
        self
    }

    async fn run(self) -> Result<TestReport> {
        let Some(command) = self.command else {
            return Err(Error::msg(
                "t.run_tests needs a command: t.run_tests([\"cargo\", \"test\"])",
            ));
        };
        let shown = self.shown;
        let junit = self.junit.as_ref().map(|p| command.directory().join(p));
        if let Some(file) = &junit {
            // A report left by an earlier run must not pass for this one's.
            let _ = std::fs::remove_file(file);
        }
        let output = command.run(true).await?;
        let text = String::from_utf8_lossy(&output.stdout).into_owned();
        let ends = || crate::base::excerpt::quote(&crate::base::process::tail(&text, 600));
        if output.status.code().is_none() {
            return Err(Error::from(WorkspaceError::Tests(format!(
                "the test runner `{shown}` was killed ({}); output ends: {}",
                output.status,
                ends()
            ))));
        }
        let (format, cases) = match &junit {
            Some(file) => {
                let xml = std::fs::read_to_string(file).map_err(|e| {
                    WorkspaceError::Tests(format!(
                        "`{shown}` wrote no JUnit report at {} ({e}); exit code {}; output ends: {}",
                        file.display(),
                        output.status.code().unwrap_or(-1),
                        ends()
                    ))
                })?;
                let cases = parse_junit(&xml).map_err(|e| match e {
                    WorkspaceError::Junit { source, .. } => WorkspaceError::Junit {
                        path: Some(file.clone()),
                        source,
                    },
                    other => other,
                })?;
                (TestFormat::Junit, cases)
            }
            None => read_libtest(&text),
        };
        let code = output.status.code();
        if cases.is_empty() && format == TestFormat::Libtest && quiet_libtest(&text) {
            return Err(Error::from(WorkspaceError::Tests(format!(
                "`{shown}` printed libtest's quiet format (`-q`), which does not name the tests that pass; run it without `-q` (or with `-- --format json` on a nightly toolchain)"
            ))));
        }
        if cases.is_empty() {
            return Err(Error::from(WorkspaceError::Tests(format!(
                "`{shown}` named no test (exit code {}); output ends: {}; for runners other than libtest, write JUnit XML and name the file with .junit(path)",
                code.unwrap_or(-1),
                ends()
            ))));
        }
        let failed = cases.iter().any(|c| c.outcome == TestOutcome::Failed);
        if code != Some(0) && !failed {
            return Err(Error::from(WorkspaceError::Tests(format!(
                "the test runner `{shown}` exited with code {} but reported no failing test (a build error or a crash?); output ends: {}",
                code.unwrap_or(-1),
                ends()
            ))));
        }
        for case in &cases {
            let grade = match case.outcome {
                TestOutcome::Skipped => continue,
                TestOutcome::Passed => Grade::pass("passed"),
                TestOutcome::Failed if case.message.is_empty() => Grade::fail("failed"),
                TestOutcome::Failed => Grade::fail(case.message.clone()),
            };
            self.eval.record().push_result(AssertionResult::from_grade(
                format!("test {}", case.name),
                AssertionKind::Test,
                &Settings::gate(),
                grade,
            ));
        }
        Ok(TestReport {
            command: shown,
            format,
            cases,
            exit_code: code,
            output: text,
        })
    }
}

/// libtest's `-q` output: "running N tests" followed by a line of dots, `F`s and `i`s.
fn quiet_libtest(text: &str) -> bool {
    let mut lines = text.lines();
    while let Some(line) = lines.next() {
        if line.starts_with("running ")
            && line.ends_with(" tests")
            && let Some(next) = lines.next()
            && !next.is_empty()
            && next.chars().all(|c| matches!(c, '.' | 'F' | 'i'))
        {
            return true;
        }
    }
    false
}

impl<'a> IntoFuture for RunTests<'a> {
    type Output = Result<TestReport>;
    type IntoFuture = Pin<Box<dyn Future<Output = Self::Output> + Send + 'a>>;

    fn into_future(self) -> Self::IntoFuture {
        Box::pin(self.run())
    }
}
