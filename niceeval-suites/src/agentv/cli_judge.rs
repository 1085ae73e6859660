//! A `cli` target named as a target's `grader_target`: the judge is a program. AgentV hands it
//! the grading prompt as a file (`{PROMPT_FILE}`, also `{PROMPT}`) and reads its answer from
//! `{OUTPUT_FILE}` (`{"text": …}`, or the text itself); the answer is AgentV's grader JSON —
//! `{score, assertions}` for a grader with a prompt, `{checks: [{id, satisfied}]}` for rubric
//! items. Such programs read the prompt by AgentV's section markers (`[[ ## answer ## ]]`,
//! `[[ ## expected_output ## ]]`, `- [id]` rubric lines), so the prompt here is laid out with
//! those markers; its sentences are niceeval's.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;

use super::graders::{Line, PASS_AT};
use niceeval::__workspace::scope::{BoxFuture, Check, Graded};
use niceeval::scope::RunView;
use niceeval::{AssertionKind, Grade, Settings};

/// The judge program: its command template, where it runs, how long it may take.
#[derive(Debug, Clone)]
pub(crate) struct CliJudge {
    pub command: String,
    pub cwd: PathBuf,
    pub timeout: Option<Duration>,
}

/// What the judge is asked.
#[derive(Debug, Clone)]
pub(crate) enum Asked {
    /// A score in [0, 1] (`{score, assertions}`), passing at 0.8.
    Score,
    /// Each rubric item satisfied or not (`{checks}`): the weighted share satisfied, failing
    /// when a required item is not.
    Items(Vec<Line>),
}

/// One grader asked of the judge program.
pub(crate) struct CliJudgeCheck {
    pub judge: Arc<CliJudge>,
    pub name: String,
    pub prompt: String,
    pub asked: Asked,
}

/// The grading prompt, by AgentV's section markers: the sections given (title, text), then
/// the rubric items when there are some.
pub(crate) fn layout(intro: &str, sections: &[(&str, &str)], items: &[Line]) -> String {
    let mut out = vec![intro.to_string(), String::new()];
    for (title, text) in sections {
        if text.trim().is_empty() {
            continue;
        }
        out.push(format!("[[ ## {title} ## ]]"));
        out.push(text.to_string());
        out.push(String::new());
    }
    if !items.is_empty() {
        out.push("[[ ## rubrics ## ]]".into());
        for item in items {
            let required = if item.min.is_some() {
                " (REQUIRED)"
            } else {
                ""
            };
            let weight = if item.weight == 1.0 {
                String::new()
            } else {
                format!(" (weight: {})", item.weight)
            };
            out.push(format!("- [{}]{required}{weight}: {}", item.id, item.text));
        }
        out.push(String::new());
        out.push(
            "Answer with JSON: {\"checks\": [{\"id\", \"satisfied\": true or false, \"reasoning\"}], \"overall_reasoning\"}."
                .into(),
        );
    } else {
        out.push(
            "Answer with JSON: {\"score\": a number from 0 to 1, \"assertions\": [{\"text\", \"passed\"}]}."
                .into(),
        );
    }
    out.join("\n")
}

impl CliJudgeCheck {
    /// Runs the program on the prompt: the text it answered.
    async fn ask(&self) -> Result<String, String> {
        let dir = tempfile::tempdir().map_err(|e| format!("a temporary directory: {e}"))?;
        let prompt_file = dir.path().join("prompt.txt");
        let output_file = dir.path().join("output.json");
        std::fs::write(&prompt_file, self.prompt.as_bytes())
            .map_err(|e| format!("writing {}: {e}", prompt_file.display()))?;
        let command = crate::agents::agentv_command(
            &self.judge.command,
            &self.prompt,
            &prompt_file,
            &output_file,
        );
        let mut sh = tokio::process::Command::new("sh");
        sh.arg("-c")
            .arg(&command)
            .current_dir(&self.judge.cwd)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped());
        let run = niceeval::__workspace::process::output(&mut sh);
        let out = match self.judge.timeout {
            Some(limit) => tokio::time::timeout(limit, run)
                .await
                .map_err(|_| format!("`{command}` ran longer than {}s", limit.as_secs()))?,
            None => run.await,
        }
        .map_err(|e| format!("running `{command}`: {e}"))?;
        if !out.status.success() {
            return Err(format!(
                "`{command}` exited with {}: {}",
                out.status,
                niceeval::__workspace::excerpt::elide(&String::from_utf8_lossy(&out.stderr), 500)
            ));
        }
        let text = std::fs::read_to_string(&output_file)
            .map_err(|e| format!("`{command}` wrote no {{OUTPUT_FILE}}: {e}"))?;
        Ok(match serde_json::from_str::<Value>(&text) {
            Ok(Value::Object(map)) => match map.get("text") {
                Some(Value::String(t)) => t.clone(),
                Some(other) => other.to_string(),
                None => text,
            },
            _ => text,
        })
    }

    /// The verdict the answer gives, as AgentV reads it.
    fn decide(&self, answer: &str) -> Grade {
        let Some(json) = json_in(answer) else {
            return Grade::score(0.0, format!("the judge's answer holds no JSON: {answer}"))
                .with_verdict(false);
        };
        match &self.asked {
            Asked::Score => {
                let score = json
                    .get("score")
                    .and_then(Value::as_f64)
                    .unwrap_or(0.0)
                    .clamp(0.0, 1.0);
                let said = json
                    .get("assertions")
                    .and_then(Value::as_array)
                    .map(|list| {
                        list.iter()
                            .filter_map(|a| a.get("text").and_then(Value::as_str))
                            .collect::<Vec<_>>()
                            .join("; ")
                    })
                    .unwrap_or_default();
                Grade::score(score, said).with_verdict(score >= PASS_AT)
            }
            Asked::Items(items) => {
                let checks = json.get("checks").and_then(Value::as_array);
                let (mut earned, mut total, mut unmet) = (0.0, 0.0, Vec::new());
                for check in checks.into_iter().flatten() {
                    let Some(item) = check
                        .get("id")
                        .and_then(Value::as_str)
                        .and_then(|id| items.iter().find(|i| i.id == id))
                    else {
                        continue;
                    };
                    total += item.weight;
                    if check.get("satisfied").and_then(Value::as_bool) == Some(true) {
                        earned += item.weight;
                    } else if item.min.is_some() {
                        unmet.push(item.id.clone());
                    }
                }
                let score = if total > 0.0 { earned / total } else { 0.0 };
                let pass = unmet.is_empty() && score >= PASS_AT;
                let reason = if unmet.is_empty() {
                    format!("{earned} of {total} weight satisfied")
                } else {
                    format!("required items unmet: {}", unmet.join(", "))
                };
                Grade::score(score.clamp(0.0, 1.0), reason).with_verdict(pass)
            }
        }
    }
}

/// The JSON object in a judge's answer: the whole text, or its first `{…}` (code fences
/// dropped), with AgentV's repair of a `passed` that is not true or false.
fn json_in(answer: &str) -> Option<Value> {
    let cleaned = answer.replace("```json", "").replace("```", "");
    let cleaned = cleaned.trim();
    let blob = match (cleaned.find('{'), cleaned.rfind('}')) {
        (Some(start), Some(end)) if end > start => &cleaned[start..=end],
        _ => cleaned,
    };
    if let Ok(v @ Value::Object(_)) = serde_json::from_str(blob) {
        return Some(v);
    }
    static PASSED: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    let passed = PASSED.get_or_init(|| {
        regex::Regex::new(r#"(?i)("passed"\s*:\s*)(?:"([^"]+)"|([A-Za-z_][A-Za-z0-9_-]*))"#)
            .expect("a valid pattern")
    });
    let repaired = passed.replace_all(blob, |c: &regex::Captures<'_>| {
        let value = c
            .get(2)
            .or_else(|| c.get(3))
            .map(|m| m.as_str().trim().to_lowercase())
            .unwrap_or_default();
        format!(
            "{}{}",
            &c[1],
            if value == "true" { "true" } else { "false" }
        )
    });
    serde_json::from_str(&repaired).ok()
}

impl Check for CliJudgeCheck {
    fn describe(&self) -> String {
        self.name.clone()
    }

    fn kind(&self) -> AssertionKind {
        AssertionKind::Judge
    }

    fn settings(&self) -> Settings {
        Settings::gate()
    }

    fn costly(&self) -> bool {
        true
    }

    fn grade(self: Box<Self>, _run: &RunView<'_>) -> BoxFuture<Graded> {
        Box::pin(async move {
            let grade = match self.ask().await {
                Ok(answer) => self.decide(&answer),
                // As AgentV: a grader that cannot be asked scores 0.
                Err(why) => Grade::score(0.0, format!("the judge program failed: {why}"))
                    .with_verdict(false),
            };
            (grade, None)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(asked: Asked) -> CliJudgeCheck {
        CliJudgeCheck {
            judge: Arc::new(CliJudge {
                command: "true".into(),
                cwd: PathBuf::from("."),
                timeout: None,
            }),
            name: "judge".into(),
            prompt: String::new(),
            asked,
        }
    }

    fn line(id: &str, required: bool) -> Line {
        Line {
            id: id.into(),
            text: id.into(),
            weight: 1.0,
            min: required.then_some(1.0),
        }
    }

    #[test]
    fn a_judge_programs_answers_are_read_as_agentv_reads_them() {
        let g = check(Asked::Score).decide("```json\n{\"score\": 0.85, \"assertions\": []}\n```");
        assert!((g.score - 0.85).abs() < 1e-9 && g.verdict == Some(true));
        let items = Asked::Items(vec![line("a", true), line("b", true), line("c", false)]);
        let g = check(items).decide(
            r#"{"checks": [{"id": "a", "satisfied": true}, {"id": "b", "satisfied": "maybe"}, {"id": "c", "satisfied": true}]}"#,
        );
        assert!((g.score - 2.0 / 3.0).abs() < 1e-9, "{}", g.score);
        assert_eq!(g.verdict, Some(false));
        // `"passed": mixed` is repaired to false, as AgentV repairs it.
        assert!(
            json_in(r#"{"score": 0.65, "assertions": [{"text": "x", "passed": mixed}]}"#).is_some()
        );
    }

    #[test]
    fn the_prompt_carries_agentvs_section_markers() {
        let text = layout(
            "Grade it.",
            &[
                ("question", "q?"),
                ("answer", "a!"),
                ("reference_answer", ""),
            ],
            &[line("rubric-1", true)],
        );
        assert!(text.contains("[[ ## question ## ]]\nq?"));
        assert!(text.contains("[[ ## answer ## ]]\na!"));
        assert!(!text.contains("reference_answer"));
        assert!(text.contains("- [rubric-1] (REQUIRED): rubric-1"));
    }
}
