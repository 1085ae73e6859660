//! AgentV's `skill-trigger` grader (`graders/skill-trigger.ts` of AgentV 4.42.4): whether the
//! agent used a named skill. Every tool call of the run is scanned, in order, until one shows
//! the skill: a `Skill` tool call (any case) whose `input.skill` holds the name, a `Read` tool
//! call (any case) whose `input.file_path` (else `input.path`) holds `skills/<name>/` (so
//! `.agents/skills/…`, `~/.claude/skills/…` and any other folder of skills), or any tool's
//! output holding `skills/<name>/`. niceeval's `skill.loaded` event (how its agents report a
//! `Skill` call) counts as a `Skill` call naming its skill. `should_trigger: false` (true unless
//! given) expects the skill not used. The grader scores 1 (pass) when what happened is what
//! was expected, else 0 (fail).

use serde_json::{Map, Value};

use super::graders::COMMON;
use crate::SuiteFileError;
use crate::promptfoo::{Doc, OwnedStep, key, with};
use niceeval::Event;
use niceeval::Grade;
use niceeval::scope::{RunView, ScopedCheck};

/// A `skill-trigger` grader's settings.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct SkillTrigger {
    /// `skill`: the skill's name.
    pub skill: String,
    /// `should_trigger`: whether the skill is expected used (true unless given).
    pub should_trigger: bool,
}

/// Reads a `skill-trigger` grader's own keys (`skill`, `should_trigger`).
pub(super) fn parse(
    doc: &Doc<'_>,
    at: &[OwnedStep],
    map: &Map<String, Value>,
    kind: &str,
) -> Result<SkillTrigger, SuiteFileError> {
    let allowed: Vec<&str> = COMMON
        .iter()
        .chain(&["skill", "should_trigger"])
        .copied()
        .collect();
    doc.keys(at, map, &allowed, kind)?;
    let skill = match map.get("skill") {
        Some(Value::String(s)) if !s.is_empty() => s.clone(),
        _ => {
            return Err(doc.err(
                at,
                format!("`{kind}` needs `skill` (the name of the skill)"),
            ));
        }
    };
    let should_trigger = match map.get("should_trigger") {
        None | Some(Value::Null) => true,
        Some(Value::Bool(b)) => *b,
        Some(_) => {
            return Err(doc.err(
                &with(at, key("should_trigger")),
                "`should_trigger` is true or false",
            ));
        }
    };
    Ok(SkillTrigger {
        skill,
        should_trigger,
    })
}

/// One tool call of the run, as AgentV's grader sees it.
struct Call<'a> {
    tool: &'a str,
    /// The skill a `skill.loaded` event names (its `input.skill`).
    loaded: Option<&'a str>,
    input: Option<&'a Map<String, Value>>,
    /// Its result's output, when it has one that is not null.
    output: Option<&'a Value>,
}

impl<'a> Call<'a> {
    /// An input field that is given and not null (JavaScript's `input.x ?? …`).
    fn field(&self, k: &str) -> Option<&'a Value> {
        self.input.and_then(|i| i.get(k)).filter(|v| !v.is_null())
    }
}

/// The run's tool calls in order.
fn calls(events: &[Event]) -> Vec<Call<'_>> {
    let mut out = Vec::new();
    for event in events {
        match event {
            Event::ActionCalled {
                call_id,
                name,
                input,
            } => {
                let output = events.iter().find_map(|e| match e {
                    Event::ActionResult {
                        call_id: id,
                        output,
                        ..
                    } if id == call_id => Some(output),
                    _ => None,
                });
                out.push(Call {
                    tool: name,
                    loaded: None,
                    input: input.as_object(),
                    output: output.filter(|o| !o.is_null()),
                });
            }
            // niceeval's agents report a `Skill` call as `skill.loaded`.
            Event::SkillLoaded { name } => out.push(Call {
                tool: "Skill",
                loaded: Some(name),
                input: None,
                output: None,
            }),
            _ => {}
        }
    }
    out
}

/// A JavaScript `String(value)` of an input field: text as it is, nothing as empty.
fn text_of(value: Option<&Value>) -> String {
    match value {
        None | Some(Value::Null) => String::new(),
        Some(Value::String(s)) => s.clone(),
        Some(other) => other.to_string(),
    }
}

impl SkillTrigger {
    /// The evidence that the skill was used, if it was, and how many tool calls were seen.
    fn detect(&self, events: &[Event]) -> (Option<String>, usize) {
        let skill = self.skill.as_str();
        let folder = format!("skills/{skill}/");
        let all = calls(events);
        for call in &all {
            match call.tool.to_lowercase().as_str() {
                "skill" => {
                    let arg = call
                        .loaded
                        .map_or_else(|| text_of(call.field("skill")), str::to_string);
                    if arg.contains(skill) {
                        let evidence = format!("Skill tool invoked with skill=\"{arg}\"");
                        return (Some(evidence), all.len());
                    }
                }
                "read" => {
                    let path = text_of(call.field("file_path").or_else(|| call.field("path")));
                    if path.contains(&folder) {
                        let evidence = format!("Read tool loaded skill file: {path}");
                        return (Some(evidence), all.len());
                    }
                }
                _ => {}
            }
            if let Some(output) = call.output {
                let text = match output {
                    Value::String(s) => s.clone(),
                    other => other.to_string(),
                };
                if text.contains(&folder) {
                    let evidence = format!(
                        "Tool \"{}\" output referenced skill file for \"{skill}\"",
                        call.tool
                    );
                    return (Some(evidence), all.len());
                }
            }
        }
        (None, all.len())
    }
}

/// The grader as a check over the run's events.
pub(crate) struct SkillTriggerCheck {
    pub name: String,
    pub spec: SkillTrigger,
}

impl ScopedCheck for SkillTriggerCheck {
    fn describe(&self) -> String {
        self.name.clone()
    }

    fn evaluate(&self, run: &RunView<'_>) -> Grade {
        let skill = &self.spec.skill;
        let should = self.spec.should_trigger;
        let (evidence, seen) = self.spec.detect(run.events);
        let triggered = evidence.is_some();
        let reason = match (triggered == should, should) {
            (true, true) => {
                evidence.unwrap_or_else(|| format!("Skill \"{skill}\" triggered as expected"))
            }
            (true, false) => format!("Skill \"{skill}\" correctly did not trigger"),
            (false, true) if seen > 0 => {
                format!("Skill \"{skill}\" not found in {seen} tool call(s)")
            }
            (false, true) => "No tool calls recorded".to_string(),
            (false, false) => {
                evidence.unwrap_or_else(|| format!("Skill \"{skill}\" triggered unexpectedly"))
            }
        };
        let pass = triggered == should;
        Grade::score(if pass { 1.0 } else { 0.0 }, reason).with_verdict(pass)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// A tool call and its result, as niceeval's agents record them.
    fn call(id: &str, tool: &str, input: Value, output: Value) -> [Event; 2] {
        [
            Event::ActionCalled {
                call_id: id.into(),
                name: tool.into(),
                input,
            },
            Event::ActionResult {
                call_id: id.into(),
                output,
                status: niceeval::ActionStatus::Completed,
            },
        ]
    }

    fn grade(should_trigger: bool, events: &[Event]) -> Grade {
        let check = SkillTriggerCheck {
            name: "t".into(),
            spec: SkillTrigger {
                skill: "csv-analyzer".into(),
                should_trigger,
            },
        };
        let config = niceeval::__workspace::config::Config::default();
        check.evaluate(&RunView {
            events,
            config: &config,
        })
    }

    #[test]
    fn a_skill_call_a_skill_file_read_or_a_tool_output_naming_it_triggers() {
        // AgentV's skill-trigger.test.ts: canonical tool names, any case, any skills folder.
        let cases = [
            call("1", "Skill", json!({"skill": "csv-analyzer"}), Value::Null),
            call(
                "1",
                "Read",
                json!({"file_path": "/path/to/skills/csv-analyzer/SKILL.md"}),
                Value::Null,
            ),
            call(
                "1",
                "read",
                json!({"path": "/home/user/.agents/skills/csv-analyzer/SKILL.md"}),
                Value::Null,
            ),
            call(
                "1",
                "Bash",
                json!({"command": "grep -r skill"}),
                json!("Found: .agents/skills/csv-analyzer/SKILL.md"),
            ),
        ];
        for events in &cases {
            let g = grade(true, events);
            assert_eq!((g.score, g.verdict), (1.0, Some(true)), "{}", g.reason);
            let g = grade(false, events);
            assert_eq!((g.score, g.verdict), (0.0, Some(false)), "{}", g.reason);
        }
        let loaded = [Event::SkillLoaded {
            name: "csv-analyzer".into(),
        }];
        assert_eq!(grade(true, &loaded).score, 1.0);
    }

    #[test]
    fn other_skills_files_and_tools_do_not_trigger() {
        let mut events = Vec::new();
        events.extend(call(
            "1",
            "Skill",
            json!({"skill": "using-superpowers"}),
            Value::Null,
        ));
        events.extend(call(
            "2",
            "Read",
            json!({"file_path": "/workspace/README.md"}),
            Value::Null,
        ));
        events.extend(call("3", "Bash", json!({"command": "ls"}), json!("a b")));
        let g = grade(true, &events);
        assert_eq!(g.score, 0.0);
        assert_eq!(
            g.reason,
            "Skill \"csv-analyzer\" not found in 3 tool call(s)"
        );
        assert_eq!(grade(false, &events).score, 1.0);
        let g = grade(true, &[]);
        assert_eq!(
            (g.score, g.reason.as_str()),
            (0.0, "No tool calls recorded")
        );
        assert_eq!(grade(false, &[]).score, 1.0);
        // A later call still counts.
        events.extend(call(
            "4",
            "Skill",
            json!({"skill": "csv-analyzer"}),
            Value::Null,
        ));
        assert_eq!(grade(true, &events).score, 1.0);
        assert_eq!(grade(false, &events).score, 0.0);
    }
}
