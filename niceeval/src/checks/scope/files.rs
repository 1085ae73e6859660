//! What the agent did to its working copy and its shell: `file_changed`, `file_created`,
//! `file_deleted`, `not_in_diff`, `diff_is_empty` and `no_failed_shell_commands`.
//!
//! The changes are read from the `workspace.changed` events the handle records after each
//! `send`. Over several turns they compose: a path's state before its first change and after
//! its last one decide how it changed (created then deleted is no change; deleted then created
//! is a modification). `not_in_diff` searches every turn's diff, so a secret written in one turn
//! and removed in the next is still found.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::{Arc, Mutex};

use serde_json::Value;

use crate::base::assertion::Grade;
use crate::base::event::{ActionKind, ActionStatus, Change, Event};
use crate::base::excerpt;
use crate::checks::expect::Pattern;
use crate::checks::scope::{RunView, ScopedCheck};
use crate::resources::workspace::CommandRecord;

const NO_WORKSPACE: &str = "the eval has no workspace: add `workspace = \"dir\"` to #[eval(..)]";

/// The net change of every path over the `workspace.changed` events in scope, in path order.
fn net_changes(events: &[Event]) -> BTreeMap<&str, Change> {
    // path → (existed before its first change, exists after its last one)
    let mut state: BTreeMap<&str, (bool, bool)> = BTreeMap::new();
    for event in events {
        if let Event::WorkspaceChanged { files, .. } = event {
            for file in files {
                let existed = file.change != Change::Created;
                let exists = file.change != Change::Deleted;
                state
                    .entry(file.path.as_str())
                    .and_modify(|(_, now)| *now = exists)
                    .or_insert((existed, exists));
            }
        }
    }
    state
        .into_iter()
        .filter_map(|(path, (before, after))| {
            let change = match (before, after) {
                (true, true) => Change::Modified,
                (false, true) => Change::Created,
                (true, false) => Change::Deleted,
                (false, false) => return None,
            };
            Some((path, change))
        })
        .collect()
}

/// Whether a `workspace.changed` event in scope was cut at `[workspace] max_files` /
/// `max_bytes`: then what is not in the part niceeval saw decides nothing.
fn cut(events: &[Event]) -> bool {
    events
        .iter()
        .any(|e| matches!(e, Event::WorkspaceChanged { partial: true, .. }))
}

/// The execution error of a file check that the seen part of a cut diff cannot decide.
fn undecided(what: &str) -> Grade {
    Grade::error(format!(
        "the working copy's change was over [workspace] max_files / max_bytes, so niceeval kept \
         only part of it (the report marks it partial), and {what} in that part; raise the \
         limits in niceeval.toml to check it"
    ))
}

/// "src/lib.rs (modified), notes.txt (created)", or "no file changed".
fn listing(changes: &BTreeMap<&str, Change>) -> String {
    if changes.is_empty() {
        return "no file changed".to_string();
    }
    let mut text = String::from("changed: ");
    for (i, (path, change)) in changes.iter().enumerate() {
        if i == 12 {
            let _ = write!(text, ", … {} more", changes.len() - 12);
            break;
        }
        if i > 0 {
            text.push_str(", ");
        }
        let _ = write!(text, "{path} ({})", change.as_str());
    }
    text
}

/// Which change a [`FileCheck`] asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Want {
    Any,
    Created,
    Deleted,
}

/// The check behind [`Eval::file_changed`](crate::Eval::file_changed),
/// [`Eval::file_created`](crate::Eval::file_created) and
/// [`Eval::file_deleted`](crate::Eval::file_deleted).
#[derive(Debug, Clone)]
pub struct FileCheck {
    path: String,
    want: Want,
    workspace: bool,
}

impl FileCheck {
    fn new(path: impl Into<String>, want: Want) -> FileCheck {
        FileCheck {
            path: normalize(&path.into()),
            want,
            workspace: true,
        }
    }

    /// `path` was created, modified or deleted.
    pub fn changed(path: impl Into<String>) -> FileCheck {
        FileCheck::new(path, Want::Any)
    }

    /// `path` did not exist and does now.
    pub fn created(path: impl Into<String>) -> FileCheck {
        FileCheck::new(path, Want::Created)
    }

    /// `path` existed and does not any more.
    pub fn deleted(path: impl Into<String>) -> FileCheck {
        FileCheck::new(path, Want::Deleted)
    }

    /// Grades as an error saying the eval has no workspace.
    pub(crate) fn without_workspace(mut self, no: bool) -> FileCheck {
        self.workspace = !no;
        self
    }
}

/// `./src//lib.rs` → `src/lib.rs`.
fn normalize(path: &str) -> String {
    path.split(['/', '\\'])
        .filter(|part| !part.is_empty() && *part != ".")
        .collect::<Vec<_>>()
        .join("/")
}

impl ScopedCheck for FileCheck {
    fn describe(&self) -> String {
        let name = match self.want {
            Want::Any => "file_changed",
            Want::Created => "file_created",
            Want::Deleted => "file_deleted",
        };
        format!("{name}({:?})", self.path)
    }

    fn evaluate(&self, run: &RunView<'_>) -> Grade {
        if !self.workspace {
            return Grade::error(NO_WORKSPACE);
        }
        let changes = net_changes(run.events);
        let path = self.path.as_str();
        // Over a cut diff only what the seen part shows in the wanted state decides.
        let decided = matches!(
            (changes.get(path), self.want),
            (Some(_), Want::Any)
                | (Some(Change::Created), Want::Created)
                | (Some(Change::Deleted), Want::Deleted)
        );
        if !decided && cut(run.events) {
            return undecided(&format!("whether {path} changed is not"));
        }
        match (changes.get(path), self.want) {
            (Some(change), Want::Any) => Grade::pass(format!("{path} was {}", change.as_str())),
            (Some(Change::Created), Want::Created) => Grade::pass(format!("{path} was created")),
            (Some(Change::Deleted), Want::Deleted) => Grade::pass(format!("{path} was deleted")),
            (Some(change), want) => Grade::fail(format!(
                "{path} was {}, not {}",
                change.as_str(),
                if want == Want::Created {
                    "created"
                } else {
                    "deleted"
                }
            )),
            (None, _) => Grade::fail(format!("{path} did not change; {}", listing(&changes))),
        }
    }
}

/// The check behind [`Eval::not_in_diff`](crate::Eval::not_in_diff).
#[derive(Debug, Clone)]
pub struct NotInDiff {
    pattern: Pattern,
    workspace: bool,
}

impl NotInDiff {
    /// No diff in scope contains `pattern` (a substring or a `Regex`).
    pub fn new(pattern: impl Into<Pattern>) -> NotInDiff {
        NotInDiff {
            pattern: pattern.into(),
            workspace: true,
        }
    }

    pub(crate) fn without_workspace(mut self, no: bool) -> NotInDiff {
        self.workspace = !no;
        self
    }
}

impl ScopedCheck for NotInDiff {
    fn describe(&self) -> String {
        format!("not_in_diff({})", self.pattern.display())
    }

    fn evaluate(&self, run: &RunView<'_>) -> Grade {
        if !self.workspace {
            return Grade::error(NO_WORKSPACE);
        }
        for event in run.events {
            let Event::WorkspaceChanged { diff, .. } = event else {
                continue;
            };
            if let Some(found) = self.pattern.find(diff) {
                return Grade::fail(found_in_diff(diff, found));
            }
        }
        if cut(run.events) {
            return undecided(&format!("{} is not", self.pattern.display()));
        }
        Grade::pass("not found in the diff")
    }
}

/// Where a match of `not_in_diff` is, without repeating it: the file, the line of the new
/// file (from the hunk header), and that diff line with the match masked as a secret would be
/// (`+KEY=sk-a…[redacted]`). What `not_in_diff` looks for is usually a secret, and the reason
/// is printed and stored everywhere.
fn found_in_diff(diff: &str, found: std::ops::Range<usize>) -> String {
    let start = diff[..found.start].rfind('\n').map_or(0, |i| i + 1);
    let end = diff[found.end..]
        .find('\n')
        .map_or(diff.len(), |i| found.end + i);
    let before = &diff[..start];
    let file = before
        .rfind("\n+++ b/")
        .map(|at| {
            let rest = &diff[at + 7..];
            rest[..rest.find('\n').unwrap_or(rest.len())].to_string()
        })
        .unwrap_or_default();
    // The hunk header `@@ -a,b +c,d @@` before the line gives the new file's first line; the
    // lines after it that are not removals count up from there.
    let line = before.rfind("\n@@ ").and_then(|at| {
        let header_end = before[at + 1..].find('\n').map(|i| at + 1 + i)?;
        let header = &before[at + 1..header_end];
        let plus = header.split_whitespace().find(|w| w.starts_with('+'))?;
        let first: usize = plus[1..].split(',').next()?.parse().ok()?;
        let between = &before[header_end + 1..];
        let counted = between.lines().filter(|l| !l.starts_with('-')).count();
        Some(first + counted)
    });
    let masked = format!(
        "{}{}{}",
        &diff[start..found.start],
        crate::base::redact::mask(&diff[found.clone()]),
        &diff[found.end..end]
    );
    let place = match (file.is_empty(), line) {
        (false, Some(line)) => format!(" at {file}:{line}"),
        (false, None) => format!(" in {file}"),
        (true, _) => String::new(),
    };
    format!("the diff has a match{place}: {}", excerpt::quote(&masked))
}

/// The check behind [`Eval::diff_is_empty`](crate::Eval::diff_is_empty).
#[derive(Debug, Clone, Default)]
pub struct DiffIsEmpty {
    no_workspace: bool,
}

impl DiffIsEmpty {
    /// No file changed in scope.
    pub fn new() -> DiffIsEmpty {
        DiffIsEmpty::default()
    }

    pub(crate) fn without_workspace(mut self, no: bool) -> DiffIsEmpty {
        self.no_workspace = no;
        self
    }
}

impl ScopedCheck for DiffIsEmpty {
    fn describe(&self) -> String {
        "diff_is_empty()".to_string()
    }

    fn evaluate(&self, run: &RunView<'_>) -> Grade {
        if self.no_workspace {
            return Grade::error(NO_WORKSPACE);
        }
        let changes = net_changes(run.events);
        if changes.is_empty() {
            Grade::pass("no file changed")
        } else {
            Grade::fail(listing(&changes))
        }
    }
}

/// The check behind [`Eval::no_failed_shell_commands`](crate::Eval::no_failed_shell_commands):
/// every shell action the agent reported ([`ActionKind::Shell`]) ended well — its result is not
/// `failed` and its output carries no non-zero `exit_code` (or `exitCode`) — and so did every
/// command the eval ran through the workspace.
#[derive(Debug, Clone, Default)]
pub struct NoFailedShellCommands {
    commands: Option<Arc<Mutex<Vec<CommandRecord>>>>,
}

impl NoFailedShellCommands {
    /// Over the agent's shell actions only.
    pub fn new() -> NoFailedShellCommands {
        NoFailedShellCommands::default()
    }

    /// Also over the commands logged here (the workspace's `run_command`s).
    pub(crate) fn with_commands(mut self, commands: Arc<Mutex<Vec<CommandRecord>>>) -> Self {
        self.commands = Some(commands);
        self
    }
}

/// A non-zero exit code in a shell action's output.
fn exit_code(output: &Value) -> Option<i64> {
    ["exit_code", "exitCode", "returncode"]
        .iter()
        .find_map(|key| output.get(key).and_then(Value::as_i64))
        .filter(|code| *code != 0)
}

/// The command line of a shell action's input, for the listing.
fn command_of(input: &Value) -> String {
    match input.get("command").or_else(|| input.get("cmd")) {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(parts)) => parts
            .iter()
            .map(|p| p.as_str().map_or_else(|| p.to_string(), str::to_string))
            .collect::<Vec<_>>()
            .join(" "),
        _ => input.to_string(),
    }
}

impl ScopedCheck for NoFailedShellCommands {
    fn describe(&self) -> String {
        "no_failed_shell_commands()".to_string()
    }

    fn evaluate(&self, run: &RunView<'_>) -> Grade {
        let mut calls: BTreeMap<&str, String> = BTreeMap::new();
        let mut failed: Vec<String> = Vec::new();
        let mut shells = 0;
        for event in run.events {
            match event {
                Event::ActionCalled {
                    call_id,
                    name,
                    input,
                } if ActionKind::of(name, input) == ActionKind::Shell => {
                    shells += 1;
                    calls.insert(call_id.as_str(), command_of(input));
                }
                Event::ActionResult {
                    call_id,
                    output,
                    status,
                } => {
                    let Some(command) = calls.get(call_id.as_str()) else {
                        continue;
                    };
                    let how = match (status, exit_code(output)) {
                        (_, Some(code)) => Some(format!("exit code {code}")),
                        (ActionStatus::Failed, None) => Some("failed".to_string()),
                        (ActionStatus::Rejected, None) => Some("rejected".to_string()),
                        (ActionStatus::Completed, None) => None,
                    };
                    if let Some(how) = how {
                        failed.push(format!("{} ({how})", excerpt::quote(command)));
                    }
                }
                _ => {}
            }
        }
        if let Some(commands) = &self.commands {
            for record in commands.lock().unwrap_or_else(|p| p.into_inner()).iter() {
                shells += 1;
                if !record.success {
                    let how = match record.exit_code {
                        Some(code) => format!("exit code {code}"),
                        None => "killed by a signal".to_string(),
                    };
                    failed.push(format!(
                        "{} (run by the eval, {how})",
                        excerpt::quote(&record.command)
                    ));
                }
            }
        }
        if failed.is_empty() {
            Grade::pass(format!("{shells} shell command(s), none failed"))
        } else {
            Grade::fail(format!(
                "{} of {shells} shell command(s) failed: {}",
                failed.len(),
                failed.join("; ")
            ))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::event::FileChange;
    use crate::config::Config;

    fn changed(files: &[(&str, Change)], diff: &str) -> Event {
        Event::WorkspaceChanged {
            files: files
                .iter()
                .map(|(p, c)| FileChange {
                    path: p.to_string(),
                    change: *c,
                    binary: false,
                })
                .collect(),
            diff: diff.into(),
            partial: false,
        }
    }

    fn grade(check: &dyn ScopedCheck, events: &[Event]) -> Grade {
        check.evaluate(&RunView {
            events,
            config: &Config::default(),
        })
    }

    #[test]
    fn changes_compose_over_turns() {
        let events = [
            changed(
                &[
                    ("a", Change::Created),
                    ("b", Change::Deleted),
                    ("c", Change::Modified),
                ],
                "",
            ),
            changed(
                &[
                    ("a", Change::Deleted),
                    ("b", Change::Created),
                    ("d", Change::Created),
                ],
                "",
            ),
        ];
        let net = net_changes(&events);
        assert_eq!(
            net.into_iter().collect::<Vec<_>>(),
            [
                ("b", Change::Modified),
                ("c", Change::Modified),
                ("d", Change::Created)
            ]
        );
        assert_eq!(grade(&FileCheck::changed("a"), &events).score, 0.0);
        assert_eq!(grade(&FileCheck::created("./d"), &events).score, 1.0);
        let g = grade(&DiffIsEmpty::new(), &events);
        assert_eq!(g.reason, "changed: b (modified), c (modified), d (created)");
    }

    #[test]
    fn not_in_diff_names_the_file_and_line() {
        let diff = "diff --git a/.env b/.env\n--- /dev/null\n+++ b/.env\n@@ -0,0 +1 @@\n+KEY=sk-abcdefghijklmnopqrstuvwx\n";
        let events = [changed(&[(".env", Change::Created)], diff)];
        let re = regex::Regex::new(r"sk-[A-Za-z0-9]{20,}").unwrap();
        let g = grade(&NotInDiff::new(re), &events);
        assert_eq!(g.score, 0.0);
        assert!(g.reason.contains("at .env:1"), "{}", g.reason);
        assert!(g.reason.contains("+KEY="), "{}", g.reason);
        assert_eq!(grade(&NotInDiff::new("password"), &events).score, 1.0);
    }

    #[test]
    fn not_in_diff_names_the_line_and_never_repeats_the_secret() {
        let diff = "diff --git a/src/config.rs b/src/config.rs\n--- a/src/config.rs\n+++ b/src/config.rs\n\
                    @@ -10,3 +10,4 @@ fn x()\n context\n-old\n+new\n+const KEY: &str = \"sk-abcdefghijklmnopqrstuvwx\";\n";
        let events = [changed(&[("src/config.rs", Change::Modified)], diff)];
        let re = regex::Regex::new(r"sk-[A-Za-z0-9]{20,}").unwrap();
        let g = grade(&NotInDiff::new(re), &events);
        assert_eq!(g.score, 0.0);
        assert!(g.reason.contains("at src/config.rs:12"), "{}", g.reason);
        assert!(
            !g.reason.contains("abcdefghij"),
            "the secret is masked: {}",
            g.reason
        );
        assert!(g.reason.contains("sk-a…[redacted]"), "{}", g.reason);
    }

    #[test]
    fn a_cut_diff_decides_only_what_its_seen_part_shows() {
        let diff =
            "diff --git a/z00.txt b/z00.txt\n--- /dev/null\n+++ b/z00.txt\n@@ -0,0 +1 @@\n+x\n";
        let mut event = changed(&[("z00.txt", Change::Created)], diff);
        if let Event::WorkspaceChanged { partial, .. } = &mut event {
            *partial = true;
        }
        let events = [event];
        // Seen: decided.
        assert_eq!(grade(&FileCheck::created("z00.txt"), &events).score, 1.0);
        assert_eq!(grade(&NotInDiff::new("+x"), &events).score, 0.0);
        // Not seen: an execution error, never "did not change" or "not found".
        for g in [
            grade(&FileCheck::created("z09.txt"), &events),
            grade(&FileCheck::changed("z09.txt"), &events),
            grade(&NotInDiff::new("sk-"), &events),
        ] {
            assert!(g.error.is_some(), "{}", g.reason);
            assert!(g.reason.contains("max_files / max_bytes"), "{}", g.reason);
            assert!(!g.reason.contains("did not change"), "{}", g.reason);
        }
    }

    #[test]
    fn without_a_workspace_the_checks_say_so() {
        let g = grade(&FileCheck::changed("a").without_workspace(true), &[]);
        assert!(g.error.is_some());
        assert!(g.reason.contains("workspace = "), "{}", g.reason);
    }

    #[test]
    fn failed_shell_actions_and_logged_commands_are_listed() {
        let events = [
            Event::ActionCalled {
                call_id: "1".into(),
                name: "command_execution".into(),
                input: serde_json::json!({"command": ["bash", "-lc", "exit 3"]}),
            },
            Event::ActionResult {
                call_id: "1".into(),
                output: serde_json::json!({"exit_code": 3}),
                status: ActionStatus::Failed,
            },
            Event::ActionCalled {
                call_id: "2".into(),
                name: "lookup".into(),
                input: serde_json::json!({}),
            },
            Event::ActionResult {
                call_id: "2".into(),
                output: serde_json::json!({"exit_code": 1}),
                status: ActionStatus::Failed,
            },
        ];
        let log = Arc::new(Mutex::new(vec![CommandRecord {
            command: "cargo build".into(),
            exit_code: Some(101),
            success: false,
        }]));
        let g = grade(&NoFailedShellCommands::new().with_commands(log), &events);
        assert_eq!(
            g.reason,
            "2 of 2 shell command(s) failed: \"bash -lc exit 3\" (exit code 3); \"cargo build\" (run by the eval, exit code 101)"
        );
    }
}

#[cfg(test)]
mod doc_examples {
    //! The examples that were this file's doc tests while its items were public.

    #[test]
    fn example_1() {
        use crate::checks::scope::{FileCheck, RunView, ScopedCheck};
        use crate::{Change, Event, FileChange, config::Config};

        let events = vec![Event::WorkspaceChanged {
            files: vec![FileChange {
                path: "src/lib.rs".into(),
                change: Change::Modified,
                binary: false,
            }],
            diff: "".into(),
            partial: false,
        }];
        let view = RunView {
            events: &events,
            config: &Config::default(),
        };
        assert_eq!(FileCheck::changed("src/lib.rs").evaluate(&view).score, 1.0);
        let grade = FileCheck::created("src/lib.rs").evaluate(&view);
        assert_eq!(grade.reason, "src/lib.rs was modified, not created");
    }

    #[test]
    fn example_2() {
        use crate::checks::scope::{NoFailedShellCommands, RunView, ScopedCheck};
        use crate::{ActionStatus, Event, config::Config, json};

        let events = vec![
            Event::ActionCalled {
                call_id: "1".into(),
                name: "Bash".into(),
                input: json!({"command": "cargo test"}),
            },
            Event::ActionResult {
                call_id: "1".into(),
                output: json!({"exit_code": 101}),
                status: ActionStatus::Completed,
            },
        ];
        let grade = NoFailedShellCommands::new().evaluate(&RunView {
            events: &events,
            config: &Config::default(),
        });
        assert_eq!(grade.score, 0.0);
        assert!(grade.reason.contains("cargo test"), "{}", grade.reason);
    }
}
