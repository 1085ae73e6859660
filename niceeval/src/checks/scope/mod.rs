//! Assertions evaluated after the eval body, over the run's event stream: the [`ScopedCheck`]
//! trait, the registration builder [`Scoped`], the one grading path after the body (every check
//! a body registers — scoped assertions, budgets, judge calls — goes through it), and every
//! built-in scoped assertion.
//!
//! A scoped assertion is registered when called (`t.succeeded()`), configured by chaining on the
//! returned [`Scoped`] builder, and recorded when the builder is dropped. After the body
//! returns, the runner evaluates every registered check once over the final event log (or over
//! one turn's slice of it, for assertions made on a [`crate::Turn`]). Every built-in check is a
//! gate without threshold; `.at_least(x)` makes it soft.
//!
//! | On `t` and on a `Turn` | Passes when |
//! |---|---|
//! | `succeeded()` | no `error` event, not parked, something was sent |
//! | `parked()` | the last exchange ends waiting on `input.requested` |
//! | `message_includes(pat)` | an assistant message contains `pat` (text or `Regex`) |
//! | `called_tool(name)` `.input(m)` `.count(n)` `.status(s)` | a matching call exists (exactly `n` with `count`) |
//! | `not_called_tool(name)` (same options) | the negation of `called_tool` with the same options |
//! | `tool_order([..])` | the tools were called in this relative order |
//! | `used_no_tools()` | no `action.called` event |
//! | `loaded_skill(name)` | a `skill.loaded` event or a non-failed `load_skill` call names the skill |
//! | `called_subagent(name)` `.remote_url(pat)` | a `subagent.called` event with that name (and URL) |
//! | `no_failed_actions()` | no tool, skill or subagent call ended `failed` |
//! | `event(kind)` `.count(n)` | an event of that kind exists (exactly `n` with `count`) |
//! | `not_event(kind)` | no event of that kind |
//! | `event_order([..])` | events of these kinds appeared in this relative order |
//! | `events_satisfy(label, f)` | `f(&events)` returns true |
//! | `file_changed(path)` / `file_created(path)` / `file_deleted(path)` | the working copy's path changed that way |
//! | `not_in_diff(pat)` | no diff of the working copy contains `pat` |
//! | `diff_is_empty()` | no file of the working copy changed |
//! | `no_failed_shell_commands()` | no shell action failed or exited non-zero (nor, on `t`, a workspace command) |
//!
//! On a [`crate::Turn`] only: `output_equals(v)` and `output_matches::<T>()` check the turn's
//! structured output. Tool inputs are matched with the [`InputMatch`] language.
//!
//! Every check is also a public type with a constructor, so a recorded transcript can be graded
//! without an eval:

/// Defines each scoped assertion twice: on [`crate::Eval`] over the whole run, and on
/// [`crate::Turn`] over that turn's events. The docs written here are the `Eval` method's; the
/// `Turn` method links to them.
//
// The check types stay unnamed: users reach them through the methods on `Eval` and `Turn`,
// whose `Scoped<..>` builders document their options. The benchmarks reach them through
// `__private`.
pub(crate) mod actions;
mod calls;
pub(crate) mod deferred;
pub(crate) mod events;
pub(crate) mod files;
mod matching;
pub(crate) mod run_checks;
#[cfg(test)]
mod tests;
pub(crate) mod tools;
pub(crate) mod turn_output;

pub(crate) use actions::{CalledSubagent, LoadedSkill, NoFailedActions, ToolOrder, UsedNoTools};
pub(crate) use deferred::{Check, Defer, Deferred, perform};
pub(crate) use events::{EventCheck, EventOrder, EventsSatisfy, NoEvent};
pub(crate) use files::{DiffIsEmpty, FileCheck, NoFailedShellCommands, NotInDiff};
pub use matching::{InputMatch, InputMatchError};
pub(crate) use run_checks::{MessageIncludes, Parked, Succeeded};
pub(crate) use tools::ToolCheck;
pub(crate) use turn_output::{OutputEquals, OutputMatches};

use std::ops::Range;
use std::sync::Arc;

use crate::base::assertion::{AssertionKind, Chain, Grade, Settings};
use crate::base::event::Event;
use crate::config::Config;

/// What a scoped check sees: the events in its scope and the run's configuration.
#[derive(Debug, Clone, Copy)]
pub struct RunView<'a> {
    /// The events in scope (the whole run, or one turn).
    pub events: &'a [Event],
    /// The configuration (price table, ...).
    pub config: &'a Config,
}

/// A check over a run's events, evaluated after the body returns.
pub trait ScopedCheck: Send + Sync {
    /// A short name for reports, e.g. `called_tool("lookup_order")`.
    fn describe(&self) -> String;
    /// Grades the run.
    fn evaluate(&self, run: &RunView<'_>) -> Grade;
    /// Which mechanism this is (scoped or efficiency).
    fn kind(&self) -> AssertionKind {
        AssertionKind::Scoped
    }
    /// Default severity and threshold: a gate without threshold.
    fn settings(&self) -> Settings {
        Settings::gate()
    }
}

/// Registration handle for a check graded after the body (a scoped assertion, a budget, a judge
/// call); recorded when dropped. Chain `.at_least(x)`, `.gate()`, `.weight(w)`, `.metric(name)`
/// (and the check's own options) before the `;`.
///
/// Not `#[must_use]`: `t.succeeded();` is the intended use — the statement's end drops the
/// builder, which records the assertion. Holding the builder in a variable delays the
/// registration (and the position in the report) until the variable goes out of scope.
pub struct Scoped<C> {
    check: Option<C>,
    settings: Settings,
    range: Option<Range<usize>>,
    label: Option<String>,
    record: Arc<dyn Defer>,
    /// The check as the run's list keeps it (set where `C: Check` is known).
    erase: fn(C) -> Box<dyn Check>,
}

impl<C> Scoped<C> {
    pub(crate) fn new(record: Arc<dyn Defer>, check: C, range: Option<Range<usize>>) -> Self
    where
        C: Check,
    {
        let settings = check.settings();
        Scoped {
            check: Some(check),
            settings,
            range,
            label: None,
            record,
            erase: |check| Box::new(check),
        }
    }

    /// A check over one turn's events, reported as `label: describe()`.
    pub(crate) fn in_turn(
        record: Arc<dyn Defer>,
        check: C,
        range: Range<usize>,
        label: String,
    ) -> Self
    where
        C: Check,
    {
        let mut scoped = Scoped::new(record, check, Some(range));
        scoped.label = Some(label);
        scoped
    }

    /// Replaces the check with `f(check)`: how per-check options (`.input`, `.count`, ...) are
    /// forwarded from the builder to the check's own by-value setters.
    pub(crate) fn map_check(mut self, f: impl FnOnce(C) -> C) -> Self {
        self.check = self.check.take().map(f);
        self
    }

    /// The check being configured.
    pub fn check_mut(&mut self) -> &mut C {
        self.check
            .as_mut()
            .expect("a Scoped builder holds its check until dropped")
    }
}

impl<C: std::fmt::Debug> std::fmt::Debug for Scoped<C> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Scoped")
            .field("check", &self.check)
            .field("settings", &self.settings)
            .field("label", &self.label)
            .finish_non_exhaustive()
    }
}

impl<C> Chain for Scoped<C> {
    type Chained = Self;

    fn configure(mut self, change: impl FnOnce(&mut Settings)) -> Self {
        change(&mut self.settings);
        self
    }
}

impl<C> Drop for Scoped<C> {
    fn drop(&mut self) {
        if let Some(check) = self.check.take() {
            self.record.defer(Deferred {
                check: (self.erase)(check),
                settings: self.settings.clone(),
                range: self.range.clone(),
                label: self.label.take(),
            });
        }
    }
}

#[cfg(test)]
mod doc_examples {
    //! The examples that were this file's doc tests while its items were public.

    #[test]
    fn example_1() {
        use crate::checks::scope::tests::{called, result};
        use crate::checks::scope::{InputMatch, RunView, ScopedCheck, ToolCheck};
        use crate::{ActionStatus, Regex, config::Config, json};

        let events = [
            called("1", "bash", json!({ "command": "pwd" })),
            result("1", ActionStatus::Completed, json!("/home")),
        ];
        let view = RunView {
            events: &events,
            config: &Config::default(),
        };

        let check = ToolCheck::called("bash").input(InputMatch::object([(
            "command",
            Regex::new("^pw").unwrap(),
        )]));
        assert_eq!(check.evaluate(&view).score, 1.0);
        let check = ToolCheck::called("bash").count(2);
        let grade = check.evaluate(&view);
        assert_eq!(grade.score, 0.0);
        assert!(
            grade.reason.contains(r#"bash {"command":"pwd"}"#),
            "{}",
            grade.reason
        );
    }
}
