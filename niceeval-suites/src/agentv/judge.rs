//! AgentV's grading protocol, for the judge an AgentV file names (a target's `grader_target`,
//! or the LLM target itself): the judge gets a grading prompt and answers with AgentV's grader
//! JSON — `{score, assertions}` for a grader with a prompt, `{checks: [{id, satisfied}]}` for
//! rubric items, `{checks: [{id, score}]}` (0–10) for items scored by bands. A chat model gets
//! the prompt as its user message and the answer's shape as its system message; a `cli`
//! target is a program, handed the prompt as a file (`{PROMPT_FILE}`, also `{PROMPT}`) whose
//! answer is read from `{OUTPUT_FILE}` (`{"text": …}`, or the text itself). An answer that is
//! not the JSON asked for is asked again, three times in all; then the grader is skipped
//! (an execution error of its test, as in AgentV). Programs written for AgentV read the prompt
//! by its section markers (`[[ ## answer ## ]]`, `- [id]` rubric lines, `### Criterion: id`),
//! so the prompt is laid out with those markers; its sentences are niceeval's.

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

/// Who answers: a chat model, or a program.
#[derive(Debug, Clone)]
pub(crate) enum Judge {
    Model(crate::JudgeSpec),
    Program(Arc<CliJudge>),
}

/// What the judge is asked.
#[derive(Debug, Clone)]
pub(crate) enum Asked {
    /// A score in [0, 1] (`{score, assertions}`), passing at 0.8.
    Score,
    /// Each rubric item satisfied or not (`{checks}`): the weighted share satisfied, failing
    /// when a required item is not.
    Items(Vec<Line>),
    /// Each item scored 0–10 by its bands (`{checks: [{id, score}]}`): the weighted mean of
    /// the scores over 10, an item passing at 7; failing when an item is under its least score.
    Scored(Vec<Line>),
}

impl Asked {
    /// The system message telling a chat model the answer's shape.
    fn shape(&self) -> &'static str {
        match self {
            Asked::Score => {
                "You grade answers. Reply with one JSON object and nothing else, shaped {\"score\": a number from 0.0 to 1.0, \"assertions\": [{\"text\": what you checked, \"passed\": true or false, \"evidence\": a short quote or reason}]}."
            }
            Asked::Items(_) => {
                "You grade answers against rubric items. Reply with one JSON object and nothing else, shaped {\"checks\": [{\"id\": the item's id, \"satisfied\": true or false, \"reasoning\": one sentence}], \"overall_reasoning\": one sentence}."
            }
            Asked::Scored(_) => {
                "You grade answers criterion by criterion. Reply with one JSON object and nothing else, shaped {\"checks\": [{\"id\": the criterion's id, \"score\": a whole number from 0 to 10 inside one of its bands, \"reasoning\": one sentence}], \"overall_reasoning\": one sentence}."
            }
        }
    }
}

/// One grader asked of the judge.
pub(crate) struct JudgeCheck {
    pub judge: Judge,
    pub name: String,
    pub prompt: Prompt,
    pub asked: Asked,
}

/// The grading prompt: made when the grader was registered, or by a script when it is graded.
pub(crate) enum Prompt {
    Ready(String),
    /// A prompt script: its command, its folder, and the grading payload (JSON) it reads.
    Script {
        command: Vec<String>,
        cwd: PathBuf,
        payload: String,
    },
}

/// Runs a prompt script: what it prints, trimmed (an error when it prints nothing).
async fn scripted(
    command: &[String],
    cwd: &std::path::Path,
    payload: &str,
) -> Result<String, String> {
    let dir = tempfile::tempdir().map_err(|e| format!("a temporary directory: {e}"))?;
    let input = dir.path().join("payload.json");
    std::fs::write(&input, payload).map_err(|e| format!("writing the payload: {e}"))?;
    let Some((program, args)) = command.split_first() else {
        return Err("the prompt script has no command".into());
    };
    // Through the process core (its stdin is null): the payload comes in by a redirection.
    let mut sh = tokio::process::Command::new("sh");
    sh.arg("-c")
        .arg("exec \"$@\" < \"$NICEEVAL_PAYLOAD\"")
        .arg("sh")
        .arg(program)
        .args(args)
        .env("NICEEVAL_PAYLOAD", &input)
        .current_dir(cwd)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let out = Box::pin(niceeval::__workspace::process::output(&mut sh))
        .await
        .map_err(|e| format!("running {program}: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "{program} exited with {}: {}",
            out.status,
            niceeval::__workspace::excerpt::elide(&String::from_utf8_lossy(&out.stderr), 500)
        ));
    }
    let text = String::from_utf8_lossy(&out.stdout).trim().to_string();
    if text.is_empty() {
        return Err("the prompt script printed no prompt".into());
    }
    Ok(text)
}

/// How many times a judge is asked before its grader is skipped (AgentV's three attempts).
const ATTEMPTS: usize = 3;

/// The grading prompt, by AgentV's section markers: the sections given (title, text), then
/// the rubric items when there are some.
pub(crate) fn layout(
    intro: &str,
    sections: &[(&str, &str)],
    items: &[Line],
    scored: bool,
) -> String {
    let mut out = vec![intro.to_string(), String::new()];
    for (title, text) in sections {
        if text.trim().is_empty() {
            continue;
        }
        out.push(format!("[[ ## {title} ## ]]"));
        out.push(text.to_string());
        out.push(String::new());
    }
    if scored {
        // A criterion scored by bands: its heading, then its bands (AgentV's layout).
        for item in items {
            out.push(format!("### Criterion: {}", item.id));
            out.push(item.text.clone());
            if let Some(min) = item.min {
                out.push(format!("It needs at least {} of 10.", min * 10.0));
            }
            out.push(String::new());
        }
        out.push(
            "Answer with JSON: {\"checks\": [{\"id\", \"score\": 0 to 10, \"reasoning\"}], \"overall_reasoning\"}."
                .into(),
        );
    } else if !items.is_empty() {
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

impl JudgeCheck {
    /// The judge's answer to `prompt`.
    async fn ask_with(&self, prompt: &str) -> Result<String, String> {
        match &self.judge {
            // Boxed: a process's and an HTTP call's futures are large, and a judge runs deep in
            // the nested futures of a test's score (a debug build's stack overflowed).
            Judge::Program(program) => Box::pin(self.run_program(program, prompt)).await,
            Judge::Model(spec) => {
                let client = crate::graders::client(
                    spec,
                    niceeval::__workspace::provider::DEFAULT_TIMEOUT,
                    " (the grader_target of the AgentV file)",
                )
                .map_err(|e| e.to_string())?;
                let request = niceeval::__workspace::provider::ChatRequest::new()
                    .system(self.asked.shape())
                    .user(prompt)
                    .temperature(0.0);
                Box::pin(client.complete(&request))
                    .await
                    .map(|reply| reply.text)
                    .map_err(|e| e.to_string())
            }
        }
    }

    /// Runs the program on the prompt: the text it answered.
    async fn run_program(&self, program: &CliJudge, prompt: &str) -> Result<String, String> {
        let dir = tempfile::tempdir().map_err(|e| format!("a temporary directory: {e}"))?;
        let prompt_file = dir.path().join("prompt.txt");
        let output_file = dir.path().join("output.json");
        std::fs::write(&prompt_file, prompt.as_bytes())
            .map_err(|e| format!("writing {}: {e}", prompt_file.display()))?;
        let command =
            crate::agents::agentv_command(&program.command, prompt, &prompt_file, &output_file);
        let mut sh = tokio::process::Command::new("sh");
        sh.arg("-c")
            .arg(&command)
            .current_dir(&program.cwd)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped());
        let run = Box::pin(niceeval::__workspace::process::output(&mut sh));
        let out = match program.timeout {
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

    /// The verdict the answer gives, as AgentV reads it; `Err` when it is not the JSON asked
    /// for (the judge is asked again).
    fn decide(&self, answer: &str) -> Result<Grade, String> {
        let json = json_in(answer).ok_or_else(|| format!("no JSON object in: {answer}"))?;
        match &self.asked {
            Asked::Score => {
                let score = json
                    .get("score")
                    .and_then(Value::as_f64)
                    .filter(|s| (0.0..=1.0).contains(s))
                    .ok_or_else(|| "`score` is not a number from 0 to 1".to_string())?;
                let said = match json.get("assertions") {
                    None | Some(Value::Null) => String::new(),
                    Some(Value::Array(list)) => list
                        .iter()
                        .map(|a| {
                            let text = a.get("text").and_then(Value::as_str);
                            let passed = a.get("passed").and_then(Value::as_bool);
                            match (text, passed) {
                                (Some(t), Some(p)) => {
                                    Ok(format!("{} {t}", if p { "✓" } else { "✗" }))
                                }
                                _ => Err("an assertion needs `text` and `passed`".to_string()),
                            }
                        })
                        .collect::<Result<Vec<_>, _>>()?
                        .join("; "),
                    Some(_) => return Err("`assertions` is not a list".into()),
                };
                Ok(Grade::score(score, said).with_verdict(score >= PASS_AT))
            }
            Asked::Items(items) | Asked::Scored(items) => {
                let scored = matches!(self.asked, Asked::Scored(_));
                let checks = json
                    .get("checks")
                    .and_then(Value::as_array)
                    .ok_or_else(|| "`checks` is not a list".to_string())?;
                let (mut earned, mut total, mut unmet) = (0.0, 0.0, Vec::new());
                for check in checks {
                    let id = check
                        .get("id")
                        .and_then(Value::as_str)
                        .ok_or_else(|| "a check needs `id`".to_string())?;
                    let value = if scored {
                        let raw = check
                            .get("score")
                            .and_then(Value::as_f64)
                            .filter(|s| (0.0..=10.0).contains(s) && s.fract() == 0.0)
                            .ok_or_else(|| {
                                "a check's `score` is a whole number 0-10".to_string()
                            })?;
                        raw / 10.0
                    } else {
                        let satisfied = check
                            .get("satisfied")
                            .and_then(Value::as_bool)
                            .ok_or_else(|| "a check's `satisfied` is true or false".to_string())?;
                        f64::from(u8::from(satisfied))
                    };
                    let Some(item) = items.iter().find(|i| i.id == id) else {
                        continue;
                    };
                    total += item.weight;
                    earned += value * item.weight;
                    if item.min.is_some_and(|min| value < min) {
                        unmet.push(item.id.clone());
                    }
                }
                let score = if total > 0.0 {
                    (earned / total).clamp(0.0, 1.0)
                } else {
                    0.0
                };
                let pass = unmet.is_empty() && score >= PASS_AT;
                let reason = if unmet.is_empty() {
                    format!("{earned} of {total} weight earned")
                } else {
                    format!("required items unmet: {}", unmet.join(", "))
                };
                Ok(Grade::score(score, reason).with_verdict(pass))
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

impl Check for JudgeCheck {
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
            let prompt = match &self.prompt {
                Prompt::Ready(text) => text.clone(),
                Prompt::Script {
                    command,
                    cwd,
                    payload,
                } => match scripted(command, cwd, payload).await {
                    Ok(text) => text,
                    Err(why) => {
                        return (
                            Grade::error(format!("{}: the prompt script failed: {why}", self.name)),
                            None,
                        );
                    }
                },
            };
            let mut last = String::new();
            // The last answer that held JSON of the wrong shape, and why.
            let mut misshapen = None;
            for _ in 0..ATTEMPTS {
                match self.ask_with(&prompt).await {
                    Ok(answer) => match self.decide(&answer) {
                        Ok(grade) => return (grade, None),
                        Err(why) => {
                            last = format!("the judge's answer cannot be read: {why}");
                            if json_in(&answer).is_some() {
                                misshapen = Some((answer, why));
                            }
                        }
                    },
                    Err(why) => last = format!("the judge could not be asked: {why}"),
                }
            }
            // As AgentV: an answer with the grading in it but the wrong shape is asked once
            // more to be put in shape.
            if let Some((answer, why)) = misshapen {
                let repair = format!(
                    "This grading answer has the right content in the wrong shape ({why}). Write it again as the JSON object described, changing nothing of its verdicts:\n\n{answer}"
                );
                if let Ok(fixed) = self.ask_with(&repair).await {
                    match self.decide(&fixed) {
                        Ok(grade) => return (grade, None),
                        Err(why) => last = format!("the repaired answer cannot be read: {why}"),
                    }
                }
            }
            // As AgentV: a grader whose judge gives no readable answer is skipped, which
            // makes its test an execution error.
            (
                Grade::error(format!(
                    "{} skipped after {ATTEMPTS} attempts: {last}",
                    self.name
                )),
                None,
            )
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(asked: Asked) -> JudgeCheck {
        JudgeCheck {
            judge: Judge::Program(Arc::new(CliJudge {
                command: "true".into(),
                cwd: PathBuf::from("."),
                timeout: None,
            })),
            name: "judge".into(),
            prompt: Prompt::Ready(String::new()),
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
        let g = check(Asked::Score)
            .decide("```json\n{\"score\": 0.85, \"assertions\": []}\n```")
            .expect("read");
        assert!((g.score - 0.85).abs() < 1e-9 && g.verdict == Some(true));
        let items = Asked::Items(vec![line("a", true), line("b", true), line("c", false)]);
        let g = check(items)
            .decide(
                r#"{"checks": [{"id": "a", "satisfied": true}, {"id": "b", "satisfied": false}, {"id": "c", "satisfied": true}]}"#,
            )
            .expect("read");
        assert!((g.score - 2.0 / 3.0).abs() < 1e-9, "{}", g.score);
        assert_eq!(g.verdict, Some(false));
        // A score out of range, and `satisfied` that is not true or false, are not answers.
        assert!(check(Asked::Score).decide(r#"{"score": 1.5}"#).is_err());
        assert!(
            check(Asked::Items(vec![line("a", true)]))
                .decide(r#"{"checks": [{"id": "a", "satisfied": "yes"}]}"#)
                .is_err()
        );
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
            false,
        );
        assert!(text.contains("[[ ## question ## ]]\nq?"));
        assert!(text.contains("[[ ## answer ## ]]\na!"));
        assert!(!text.contains("reference_answer"));
        assert!(text.contains("- [rubric-1] (REQUIRED): rubric-1"));
    }
}
