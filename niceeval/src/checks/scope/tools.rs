//! `called_tool` and `not_called_tool`: whether the agent called a tool, with which input
//! ([`InputMatch`]), how often and with which result status. One check type, [`ToolCheck`],
//! serves both; `not_called_tool` is the exact negation of `called_tool` with the same options.

use crate::base::assertion::Grade;
use crate::base::event::ActionStatus;
use crate::base::excerpt;
use crate::checks::scope::calls::{self, Call};
use crate::checks::scope::{InputMatch, RunView, Scoped, ScopedCheck};

/// The options of `called_tool` / `not_called_tool`, chained on the registration builder.
impl Scoped<ToolCheck> {
    /// Keeps only calls whose input matches `m` (see [`InputMatch`]).
    pub fn input(self, m: impl Into<InputMatch>) -> Self {
        let m = m.into();
        self.map_check(|c| c.input(m))
    }

    /// Asks for exactly `n` matching calls (`0` is allowed).
    pub fn count(self, n: usize) -> Self {
        self.map_check(|c| c.count(n))
    }

    /// Keeps only calls whose `action.result` ended with `status`; applied before `.input`.
    pub fn status(self, status: ActionStatus) -> Self {
        self.map_check(|c| c.status(status))
    }
}

/// The check behind [`Eval::called_tool`](crate::Eval::called_tool) and
/// [`Eval::not_called_tool`](crate::Eval::not_called_tool).
#[derive(Debug, Clone)]
pub struct ToolCheck {
    name: String,
    negated: bool,
    input: Option<InputMatch>,
    count: Option<usize>,
    status: Option<ActionStatus>,
}

impl ToolCheck {
    /// Passes when the tool was called (see [`Eval::called_tool`](crate::Eval::called_tool)).
    pub fn called(name: impl Into<String>) -> Self {
        ToolCheck {
            name: name.into(),
            negated: false,
            input: None,
            count: None,
            status: None,
        }
    }

    /// Passes when the tool was not called (see
    /// [`Eval::not_called_tool`](crate::Eval::not_called_tool)).
    pub fn not_called(name: impl Into<String>) -> Self {
        ToolCheck {
            negated: true,
            ..ToolCheck::called(name)
        }
    }

    /// Keeps only calls whose input matches `m`.
    pub fn input(mut self, m: impl Into<InputMatch>) -> Self {
        self.input = Some(m.into());
        self
    }

    /// Asks for exactly `n` matching calls.
    pub fn count(mut self, n: usize) -> Self {
        self.count = Some(n);
        self
    }

    /// Keeps only calls whose result ended with `status`.
    pub fn status(mut self, status: ActionStatus) -> Self {
        self.status = Some(status);
        self
    }

    /// `calls to bash with status failed and input {..}`.
    fn what(&self) -> String {
        let mut what = format!("call(s) to {}", self.name);
        if let Some(status) = self.status {
            what.push_str(&format!(" with status {}", status.as_str()));
        }
        if let Some(input) = &self.input {
            let joint = if self.status.is_some() {
                " and"
            } else {
                " with"
            };
            what.push_str(&format!(
                "{joint} input {}",
                excerpt::elide(&input.to_string(), 80)
            ));
        }
        what
    }

    /// Why one call is not counted, given its status (`None` when it is counted).
    fn rejection(&self, call: &Call<'_>, status: Option<ActionStatus>) -> Option<String> {
        if let Some(wanted) = self.status
            && status != Some(wanted)
        {
            return Some(match status {
                Some(actual) => format!("status {}, not {}", actual.as_str(), wanted.as_str()),
                None => format!("no result, so no status (wanted {})", wanted.as_str()),
            });
        }
        self.input.as_ref().and_then(|m| m.explain(call.input))
    }
}

impl ScopedCheck for ToolCheck {
    fn describe(&self) -> String {
        let mut name = format!(
            "{}({})",
            if self.negated {
                "not_called_tool"
            } else {
                "called_tool"
            },
            excerpt::quote(&self.name)
        );
        if let Some(input) = &self.input {
            name.push_str(&format!(
                ".input({})",
                excerpt::elide(&input.to_string(), 60)
            ));
        }
        if let Some(n) = self.count {
            name.push_str(&format!(".count({n})"));
        }
        if let Some(status) = self.status {
            name.push_str(&format!(".status({})", status.as_str()));
        }
        name
    }

    fn evaluate(&self, run: &RunView<'_>) -> Grade {
        let events = run.events;
        let calls = calls::calls_where(events, |n| n == self.name);
        // Statuses are paired for every call only when a status filter needs them.
        let statuses = self.status.map(|_| calls::statuses(events, &calls));
        let mut buffer = Vec::new();
        let matching: Vec<usize> = (0..calls.len())
            .filter(|&i| {
                self.status
                    .is_none_or(|s| statuses.as_ref().is_some_and(|all| all[i] == Some(s)))
                    && self
                        .input
                        .as_ref()
                        .is_none_or(|m| m.matches_with(calls[i].input, &mut buffer))
            })
            .collect();
        let found = matching.len();
        let holds = match self.count {
            Some(n) => found == n,
            None => found > 0,
        };
        let passed = holds != self.negated;
        let what = self.what();
        let head = match (self.count, self.negated, holds) {
            (None, _, true) => format!("found {found} matching {what}"),
            (None, _, false) => format!("no matching {what}"),
            (Some(n), false, true) => format!("exactly {n} matching {what}, as expected"),
            (Some(n), false, false) => {
                format!("expected exactly {n} matching {what}, found {found}")
            }
            (Some(n), true, true) => format!("found exactly {n} matching {what}"),
            (Some(n), true, false) => format!("found {found} matching {what}, not exactly {n}"),
        };
        let reason = if calls.is_empty() && passed {
            format!("{head}: {} was never called", self.name)
        } else if calls.is_empty() {
            // Show what was called instead (a typo in the name shows up here).
            let instead = match calls::tool_histogram(events) {
                Some(tools) => format!("tools called: {tools}"),
                None => "no tool was called".to_string(),
            };
            format!("{head}: {} was never called; {instead}", self.name)
        } else if found > 0 && holds {
            // The calls that counted: the evidence of a pass, or the offending calls of a
            // failed not_called_tool.
            let picked: Vec<Call<'_>> = matching.iter().map(|&i| calls[i]).collect();
            let known: Option<Vec<_>> = statuses
                .as_ref()
                .map(|all| matching.iter().map(|&i| all[i]).collect());
            format!(
                "{head}:{}",
                calls::list_calls(events, &picked, known.as_deref(), |_, _| None)
            )
        } else {
            // Every call to the tool, and why each one that did not count was left out.
            format!(
                "{head}; {} call(s) to {} seen:{}",
                calls.len(),
                self.name,
                calls::list_calls(events, &calls, statuses.as_deref(), |i, status| {
                    self.rejection(&calls[i], status)
                })
            )
        };
        Grade::from_bool(passed, reason)
    }
}

#[cfg(test)]
mod doc_examples {
    //! The examples that were this file's doc tests while its items were public.

    #[test]
    fn example_1() {
        use crate::checks::scope::tests::{called, result};
        use crate::checks::scope::{RunView, ScopedCheck, ToolCheck};
        use crate::{ActionStatus, config::Config, json};

        let events = [
            called("1", "lookup_order", json!({ "id": "123" })),
            result("1", ActionStatus::Completed, json!({ "status": "paid" })),
            called("2", "issue_refund", json!({ "id": "123" })),
            result("2", ActionStatus::Failed, json!("denied")),
        ];
        let view = RunView {
            events: &events,
            config: &Config::default(),
        };

        assert_eq!(
            ToolCheck::called("lookup_order")
                .input(json!({ "id": "123" }))
                .count(1)
                .evaluate(&view)
                .score,
            1.0
        );
        let refund = ToolCheck::called("issue_refund")
            .status(ActionStatus::Completed)
            .evaluate(&view);
        assert_eq!(refund.score, 0.0);
        assert!(
            refund.reason.contains("status failed, not completed"),
            "{}",
            refund.reason
        );
    }
}
