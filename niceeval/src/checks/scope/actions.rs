//! What the agent did beyond single tool calls: `tool_order`, `used_no_tools`, `loaded_skill`,
//! `called_subagent` and `no_failed_actions`.

use std::collections::{HashMap, HashSet};
use std::fmt::Write as _;

use serde_json::Value;

use crate::base::assertion::Grade;
use crate::base::event::{ActionStatus, Event};
use crate::base::excerpt;
use crate::checks::expect::Pattern;
use crate::checks::scope::calls::{self, LISTED};
use crate::checks::scope::{RunView, Scoped, ScopedCheck};

/// The tool name whose calls load a skill, for [`LoadedSkill`].
pub const LOAD_SKILL_TOOL: &str = "load_skill";

/// The option of `called_subagent`, chained on the registration builder.
impl Scoped<CalledSubagent> {
    /// Only calls whose `remote_url` contains this text or matches this `Regex`.
    pub fn remote_url(self, pattern: impl Into<Pattern>) -> Self {
        let pattern = pattern.into();
        self.map_check(|c| c.remote_url(pattern))
    }
}

/// The check behind [`Eval::tool_order`](crate::Eval::tool_order).
#[derive(Debug, Clone)]
pub struct ToolOrder {
    names: Vec<String>,
}

impl ToolOrder {
    /// These tools, in this relative order.
    pub fn new(names: impl IntoIterator<Item = impl Into<String>>) -> Self {
        ToolOrder {
            names: names.into_iter().map(Into::into).collect(),
        }
    }
}

/// The check behind [`Eval::used_no_tools`](crate::Eval::used_no_tools).
#[derive(Debug, Clone, Copy, Default)]
pub struct UsedNoTools;

/// The check behind [`Eval::loaded_skill`](crate::Eval::loaded_skill).
#[derive(Debug, Clone)]
pub struct LoadedSkill {
    name: String,
}

impl LoadedSkill {
    /// The skill `name`.
    pub fn new(name: impl Into<String>) -> Self {
        LoadedSkill { name: name.into() }
    }
}

/// The check behind [`Eval::called_subagent`](crate::Eval::called_subagent).
#[derive(Debug, Clone)]
pub struct CalledSubagent {
    name: String,
    remote_url: Option<Pattern>,
}

impl CalledSubagent {
    /// The subagent `name`.
    pub fn new(name: impl Into<String>) -> Self {
        CalledSubagent {
            name: name.into(),
            remote_url: None,
        }
    }

    /// Only calls whose `remote_url` contains the text or matches the regex.
    pub fn remote_url(mut self, pattern: impl Into<Pattern>) -> Self {
        self.remote_url = Some(pattern.into());
        self
    }
}

/// The check behind [`Eval::no_failed_actions`](crate::Eval::no_failed_actions).
#[derive(Debug, Clone, Copy, Default)]
pub struct NoFailedActions;

fn tool_names(events: &[Event]) -> impl Iterator<Item = &str> {
    events.iter().filter_map(|e| match e {
        Event::ActionCalled { name, .. } => Some(name.as_str()),
        _ => None,
    })
}

impl ScopedCheck for ToolOrder {
    fn describe(&self) -> String {
        let names: Vec<String> = self.names.iter().map(|n| excerpt::quote(n)).collect();
        format!("tool_order([{}])", names.join(", "))
    }

    fn evaluate(&self, run: &RunView<'_>) -> Grade {
        if self.names.is_empty() {
            return Grade::error(
                "tool_order([]) has no tools to order; list at least one tool name",
            );
        }
        let mut found: Vec<usize> = Vec::with_capacity(self.names.len());
        for (at, event) in run.events.iter().enumerate() {
            if let Event::ActionCalled { name, .. } = event
                && *name == self.names[found.len()]
            {
                found.push(at);
                if found.len() == self.names.len() {
                    break;
                }
            }
        }
        let steps = |n: usize| {
            self.names[..n]
                .iter()
                .zip(&found)
                .map(|(name, at)| format!("{name} (#{at})"))
                .collect::<Vec<_>>()
                .join(" → ")
        };
        if found.len() == self.names.len() {
            return Grade::pass(format!("called in order: {}", steps(found.len())));
        }
        let missing = &self.names[found.len()];
        let called_at = run
            .events
            .iter()
            .position(|e| matches!(e, Event::ActionCalled { name, .. } if name == missing));
        let mut reason = match (found.last(), called_at) {
            (None, _) => format!("{missing} was never called"),
            (Some(&last), Some(at)) => format!(
                "found {} but no {missing} after it ({missing} was called at #{at}, before #{last})",
                steps(found.len())
            ),
            (Some(_), None) => format!(
                "found {} but no {missing} after it ({missing} was never called)",
                steps(found.len())
            ),
        };
        let sequence = calls::sequence(tool_names(run.events));
        if sequence.is_empty() {
            reason.push_str("; no tool was called");
        } else {
            let _ = write!(reason, "; tool calls in order: {sequence}");
        }
        Grade::fail(reason)
    }
}

impl ScopedCheck for UsedNoTools {
    fn describe(&self) -> String {
        "used_no_tools()".to_string()
    }

    fn evaluate(&self, run: &RunView<'_>) -> Grade {
        let calls = calls::calls_where(run.events, |_| true);
        if calls.is_empty() {
            return Grade::pass(format!(
                "no action.called event in {} event(s)",
                run.events.len()
            ));
        }
        Grade::fail(format!(
            "{} tool call(s):{}",
            calls.len(),
            calls::list_calls(run.events, &calls, None, |_, _| None)
        ))
    }
}

/// The skill a `load_skill` input names: the bare string, or its `skill` or `name` field.
fn skill_named(input: &Value) -> Option<&str> {
    input
        .as_str()
        .or_else(|| input.get("skill").and_then(Value::as_str))
        .or_else(|| input.get("name").and_then(Value::as_str))
}

impl ScopedCheck for LoadedSkill {
    fn describe(&self) -> String {
        format!("loaded_skill({})", excerpt::quote(&self.name))
    }

    fn evaluate(&self, run: &RunView<'_>) -> Grade {
        let events = run.events;
        // One pass: a skill.loaded event or a completed load_skill call ends it; load_skill
        // calls for the skill wait in `open` for their result.
        let mut attempts: Vec<calls::Call<'_>> = Vec::new();
        let mut outcomes: Vec<Option<ActionStatus>> = Vec::new();
        let mut open = calls::OpenCalls::default();
        for (at, event) in events.iter().enumerate() {
            match event {
                Event::SkillLoaded { name } if *name == self.name => {
                    return Grade::pass(format!("skill.loaded event at #{at}"));
                }
                Event::ActionCalled {
                    call_id,
                    name,
                    input,
                } if name == LOAD_SKILL_TOOL && skill_named(input) == Some(self.name.as_str()) => {
                    open.insert(call_id, attempts.len());
                    attempts.push(calls::Call {
                        at,
                        call_id,
                        name,
                        input,
                    });
                    outcomes.push(None);
                }
                Event::ActionResult {
                    call_id, status, ..
                } if !attempts.is_empty() => {
                    if let Some(i) = open.remove(call_id) {
                        if *status == ActionStatus::Completed {
                            return Grade::pass(format!(
                                "{LOAD_SKILL_TOOL} call at #{} → completed",
                                attempts[i].at
                            ));
                        }
                        outcomes[i] = Some(*status);
                    }
                }
                _ => {}
            }
        }
        // A call without a result did not fail: it counts as loaded.
        if let Some(i) = outcomes.iter().position(Option::is_none) {
            return Grade::pass(format!(
                "{LOAD_SKILL_TOOL} call at #{} → no result",
                attempts[i].at
            ));
        }
        if !attempts.is_empty() {
            return Grade::fail(format!(
                "skill {} was not loaded: every {LOAD_SKILL_TOOL} call for it failed:{}",
                excerpt::quote(&self.name),
                calls::list_calls(events, &attempts, Some(&outcomes), |_, _| None)
            ));
        }
        let loaded_names = events.iter().filter_map(|e| match e {
            Event::SkillLoaded { name } => Some(name.as_str()),
            Event::ActionCalled { name, input, .. } if name == LOAD_SKILL_TOOL => {
                Some(skill_named(input).unwrap_or("<unnamed>"))
            }
            _ => None,
        });
        Grade::fail(match calls::histogram(loaded_names) {
            Some(names) => format!(
                "skill {} was not loaded; skills loaded: {names}",
                excerpt::quote(&self.name)
            ),
            None => format!(
                "skill {} was not loaded; no skill was loaded (no skill.loaded event, no {LOAD_SKILL_TOOL} call)",
                excerpt::quote(&self.name)
            ),
        })
    }
}

impl ScopedCheck for CalledSubagent {
    fn describe(&self) -> String {
        let mut name = format!("called_subagent({})", excerpt::quote(&self.name));
        if let Some(url) = &self.remote_url {
            let _ = write!(name, ".remote_url({})", url.display());
        }
        name
    }

    fn evaluate(&self, run: &RunView<'_>) -> Grade {
        let mut seen: Vec<(usize, Option<&str>)> = Vec::new();
        for (at, event) in run.events.iter().enumerate() {
            if let Event::SubagentCalled {
                name, remote_url, ..
            } = event
            {
                if *name != self.name {
                    continue;
                }
                let url = remote_url.as_deref();
                let fits = match &self.remote_url {
                    None => true,
                    Some(pattern) => url.is_some_and(|u| pattern.find(u).is_some()),
                };
                if fits {
                    return Grade::pass(match url {
                        Some(url) => format!("called at #{at} ({})", excerpt::quote(url)),
                        None => format!("called at #{at}"),
                    });
                }
                seen.push((at, url));
            }
        }
        if seen.is_empty() {
            let others = calls::histogram(run.events.iter().filter_map(|e| match e {
                Event::SubagentCalled { name, .. } => Some(name.as_str()),
                _ => None,
            }));
            return Grade::fail(match others {
                Some(names) => format!(
                    "subagent {} was never called; subagents called: {names}",
                    self.name
                ),
                None => format!(
                    "subagent {} was never called; no subagent was called",
                    self.name
                ),
            });
        }
        let mut listed = String::new();
        for (at, url) in seen.iter().take(LISTED) {
            let url = url.map_or("no remote_url".to_string(), excerpt::quote);
            let _ = write!(listed, "\n  #{at} {} → {url}", self.name);
        }
        if seen.len() > LISTED {
            let _ = write!(listed, "\n  … and {} more", seen.len() - LISTED);
        }
        let pattern = self
            .remote_url
            .as_ref()
            .map_or(String::new(), Pattern::display);
        Grade::fail(format!(
            "no call to subagent {} has a remote_url matching {pattern}; {} call(s) seen:{listed}",
            self.name,
            seen.len()
        ))
    }
}

/// A failed `action.result` or `subagent.completed` event.
struct Failure<'a> {
    at: usize,
    call_id: &'a str,
    output: Option<&'a Value>,
}

impl ScopedCheck for NoFailedActions {
    fn describe(&self) -> String {
        "no_failed_actions()".to_string()
    }

    fn evaluate(&self, run: &RunView<'_>) -> Grade {
        let events = run.events;
        let mut failures: Vec<Failure<'_>> = Vec::new();
        let mut results = 0usize;
        for (at, event) in events.iter().enumerate() {
            match event {
                Event::ActionResult {
                    call_id,
                    status,
                    output,
                } => {
                    results += 1;
                    if *status == ActionStatus::Failed {
                        failures.push(Failure {
                            at,
                            call_id,
                            output: Some(output),
                        });
                    }
                }
                Event::SubagentCompleted { call_id, status } => {
                    results += 1;
                    if *status == ActionStatus::Failed {
                        failures.push(Failure {
                            at,
                            call_id,
                            output: None,
                        });
                    }
                }
                _ => {}
            }
        }
        if failures.is_empty() {
            return Grade::pass(format!(
                "none of {results} finished tool or subagent call(s) failed"
            ));
        }
        // Name each failure by the call it ends: the latest call with its id before it. Only
        // the failing ids are tracked.
        let wanted: HashSet<&str> = failures.iter().map(|f| f.call_id).collect();
        let mut latest: HashMap<&str, String> = HashMap::new();
        let mut described: Vec<String> = Vec::with_capacity(failures.len().min(LISTED));
        let mut next = 0;
        for (at, event) in events.iter().enumerate() {
            if next >= failures.len().min(LISTED) {
                break;
            }
            match event {
                Event::ActionCalled {
                    call_id,
                    name,
                    input,
                } if wanted.contains(call_id.as_str()) => {
                    latest.insert(call_id, calls::render_call(name, input));
                }
                Event::SubagentCalled {
                    call_id,
                    name,
                    remote_url,
                } if wanted.contains(call_id.as_str()) => {
                    let url = remote_url
                        .as_deref()
                        .map(|u| format!(" ({})", excerpt::quote(u)))
                        .unwrap_or_default();
                    latest.insert(call_id, format!("subagent {name}{url}"));
                }
                _ => {}
            }
            if failures[next].at == at {
                let failure = &failures[next];
                let call = latest.get(failure.call_id).cloned().unwrap_or_else(|| {
                    format!("call {} (its call event is not in scope)", failure.call_id)
                });
                let output = match failure.output {
                    Some(Value::Null) | None => String::new(),
                    Some(output) => format!(": {}", excerpt::elide(&output.to_string(), 100)),
                };
                described.push(format!("\n  #{at} {call} → failed{output}"));
                next += 1;
            }
        }
        let mut reason = format!("{} failed call(s):{}", failures.len(), described.concat());
        if failures.len() > LISTED {
            let _ = write!(reason, "\n  … and {} more", failures.len() - LISTED);
        }
        Grade::fail(reason)
    }
}

#[cfg(test)]
mod doc_examples {
    //! The examples that were this file's doc tests while its items were public.

    #[test]
    fn example_1() {
        use crate::checks::scope::tests::{called, result};
        use crate::checks::scope::{RunView, ScopedCheck, ToolOrder};
        use crate::{ActionStatus, json};

        let events = [
            called("1", "write_file", json!({})),
            result("1", ActionStatus::Completed, json!(null)),
            called("2", "read_file", json!({})),
            result("2", ActionStatus::Completed, json!(null)),
        ];
        let grade = ToolOrder::new(["read_file", "write_file"]).evaluate(&RunView {
            events: &events,
            config: &Default::default(),
        });
        assert_eq!(grade.score, 0.0);
        assert!(
            grade.reason.contains("no write_file after it"),
            "{}",
            grade.reason
        );
    }
}
