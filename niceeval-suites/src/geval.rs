//! promptfoo's `g-eval`: the grader first writes evaluation steps for the criteria
//! (`{"steps": [...]}`), then scores the output by them out of 10 (`{"score": n, "reason":
//! …}`); the item's score is that over 10, passing at its threshold (promptfoo's default 0.7).
//! A list of criteria is graded one by one and averaged; the first that cannot be graded fails
//! the item. An answer that cannot be read fails the item (score 0), as in promptfoo; the
//! prompts are niceeval's own.

use std::time::Duration;

use serde_json::Value;

use super::JudgeSpec;
use super::graders;
use niceeval::__workspace::provider::{ChatRequest, ModelClient};
use niceeval::__workspace::scope::{BoxFuture, Check, Graded};
use niceeval::scope::RunView;
use niceeval::{AssertionKind, Grade, Settings};

/// promptfoo's default threshold of `g-eval`.
pub(crate) const DEFAULT_THRESHOLD: f64 = 0.7;

/// The highest score the grader gives.
const MAX_SCORE: f64 = 10.0;

/// One `g-eval` item, ready to grade.
pub(crate) struct GEval {
    /// Its criteria (one, or the list written).
    pub criteria: Vec<String>,
    /// The prompt the output answers.
    pub input: String,
    pub output: String,
    pub threshold: f64,
    pub inverse: bool,
    pub grader: JudgeSpec,
    pub timeout: Duration,
}

/// Why one criterion could not be graded: the item fails with it (promptfoo's grader
/// failure), or errors when the grader could not be asked at all.
enum Failure {
    Unreadable(String),
    Provider(String),
}

impl Check for GEval {
    fn describe(&self) -> String {
        let first = self.criteria.first().map(String::as_str).unwrap_or("");
        format!(
            "{}g-eval({}) at {}",
            if self.inverse { "not-" } else { "" },
            niceeval::__workspace::excerpt::quote_width(first, 60),
            self.threshold
        )
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
        Box::pin(async move { (self.measure().await, None) })
    }
}

impl GEval {
    async fn measure(&self) -> Grade {
        if self.criteria.is_empty() {
            return Grade::score(0.0, "g-eval needs at least one criterion in its value")
                .with_verdict(false);
        }
        let client = match graders::client(&self.grader, self.timeout, " (the grader of `g-eval`)")
        {
            Ok(client) => client,
            Err(e) => return Grade::error(format!("g-eval: {e}")),
        };
        let mut scores = Vec::with_capacity(self.criteria.len());
        let mut reasons = Vec::with_capacity(self.criteria.len());
        for (i, criterion) in self.criteria.iter().enumerate() {
            match self.one(&client, criterion).await {
                Ok((score, reason)) => {
                    scores.push(score);
                    reasons.push(reason);
                }
                Err(Failure::Provider(e)) => return Grade::error(format!("g-eval: {e}")),
                Err(Failure::Unreadable(why)) => {
                    let why = if self.criteria.len() > 1 {
                        format!(
                            "criterion {}/{} ({criterion:?}) failed: {why}",
                            i + 1,
                            self.criteria.len()
                        )
                    } else {
                        why
                    };
                    return Grade::score(0.0, why).with_verdict(false);
                }
            }
        }
        let score = scores.iter().sum::<f64>() / scores.len() as f64;
        let passed = score >= self.threshold;
        let (pass, score) = if self.inverse {
            (!passed, 1.0 - score)
        } else {
            (passed, score)
        };
        Grade::score(score.clamp(0.0, 1.0), reasons.join("\n\n")).with_verdict(pass)
    }

    /// The score (out of 1) and reason of one criterion.
    async fn one(&self, client: &ModelClient, criterion: &str) -> Result<(f64, String), Failure> {
        let steps_reply = ask(client, &STEPS_PROMPT.replace("{{criteria}}", criterion)).await?;
        let steps = read_steps(&steps_reply).map_err(Failure::Unreadable)?;
        let prompt = EVALUATE_PROMPT
            .replace("{{criteria}}", criterion)
            .replace("{{steps}}", &steps.join("\n- "))
            .replace("{{input}}", &self.input)
            .replace("{{output}}", &self.output);
        let reply = ask(client, &prompt).await?;
        read_score(&reply).map_err(Failure::Unreadable)
    }
}

async fn ask(client: &ModelClient, prompt: &str) -> Result<String, Failure> {
    let request = ChatRequest::new()
        .user(prompt)
        .temperature(0.0)
        .max_tokens(2048);
    let text = client
        .complete(&request)
        .await
        .map_err(|e| Failure::Provider(e.to_string()))?
        .text;
    if text.is_empty() {
        return Err(Failure::Unreadable("the grader returned no output".into()));
    }
    Ok(text)
}

/// The steps of the first `{"steps": …` object of a line: a non-empty list of non-empty texts.
fn read_steps(reply: &str) -> Result<Vec<String>, String> {
    let object = reply
        .lines()
        .find_map(|line| {
            let at = line.find("{\"steps\"")?;
            let end = line.rfind('}')?;
            (end > at).then(|| &line[at..=end])
        })
        .ok_or_else(|| format!("the evaluation steps are not in JSON format: {reply}"))?;
    let value: Value = serde_json::from_str(object)
        .map_err(|e| format!("the evaluation steps are not in JSON format: {e}"))?;
    let Some(Value::Array(steps)) = value.get("steps") else {
        return Err("the steps answer has no list of steps".into());
    };
    if steps.is_empty() {
        return Err("the grader proposed no evaluation step".into());
    }
    steps
        .iter()
        .map(|s| match s {
            Value::String(s) if !s.trim().is_empty() => Ok(s.clone()),
            other => Err(format!("the steps answer holds an invalid step: {other}")),
        })
        .collect()
}

/// The score over 10 (as a share of 1) and reason of the first `{…}` of a line.
fn read_score(reply: &str) -> Result<(f64, String), String> {
    let object = reply
        .lines()
        .find_map(|line| {
            let at = line.find('{')?;
            let end = line.rfind('}')?;
            (end > at).then(|| &line[at..=end])
        })
        .ok_or_else(|| format!("the evaluation result is not in JSON format: {reply}"))?;
    let value: Value = serde_json::from_str(object)
        .map_err(|e| format!("the evaluation result is not in JSON format: {e}"))?;
    let score = match value.get("score") {
        Some(Value::Number(n)) => n.as_f64(),
        Some(Value::String(s)) if !s.trim().is_empty() => s.trim().parse().ok(),
        _ => None,
    }
    .filter(|s: &f64| s.is_finite())
    .ok_or_else(|| {
        format!(
            "the result has an invalid or missing score: {}",
            value["score"]
        )
    })?;
    if !(0.0..=MAX_SCORE).contains(&score) {
        return Err(format!("the score {score} is outside 0-10"));
    }
    let reason = match value.get("reason") {
        Some(Value::String(r)) if !r.trim().is_empty() => r.clone(),
        other => {
            return Err(format!(
                "the result has an invalid or missing reason: {other:?}"
            ));
        }
    };
    Ok((score / MAX_SCORE, reason))
}

const STEPS_PROMPT: &str = "You will grade a text against the criteria below. First, list the \
steps you will follow to grade it, short and concrete. Answer with one line of JSON only: \
{\"steps\": [\"first step\", \"second step\"]}

Criteria: {{criteria}}";

const EVALUATE_PROMPT: &str = "Grade the reply below against the criteria, following the \
steps. Give a score from 0 (does not meet them at all) to 10 (meets them fully). Answer with \
one line of JSON only: {\"score\": <0-10>, \"reason\": \"why\"}

Criteria: {{criteria}}

Steps:
- {{steps}}

The request: {{input}}

The reply: {{output}}";

#[cfg(test)]
mod tests {
    use super::*;

    // promptfoo's rules (test/matchers/gEval*.test.ts): the steps object on a line, a score
    // out of 10 with a reason.
    #[test]
    fn steps_and_scores_read_as_promptfoo_reads_them() {
        assert_eq!(
            read_steps("{\"steps\": [\"a\", \"b\"]}").unwrap(),
            vec!["a".to_string(), "b".to_string()]
        );
        assert!(read_steps("no json").is_err());
        assert!(read_steps("{\"steps\": []}").is_err());
        assert!(read_steps("{\"steps\": [\"\"]}").is_err());
        let (score, reason) = read_score("{\"score\": 8, \"reason\": \"good\"}").unwrap();
        assert!((score - 0.8).abs() < 1e-9 && reason == "good");
        assert!(read_score("{\"score\": 11, \"reason\": \"x\"}").is_err());
        assert!(read_score("{\"score\": \"high\", \"reason\": \"x\"}").is_err());
        assert!(read_score("{\"score\": 5}").is_err());
        assert_eq!(
            read_score("{\"score\": \"7\", \"reason\": \"r\"}")
                .unwrap()
                .0,
            0.7
        );
    }
}
