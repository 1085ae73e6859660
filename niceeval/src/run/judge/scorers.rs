//! The four judge scorers: the request each sends, and how each reads the judge's answer into a
//! score and a reason (or says exactly why the answer cannot be scored).

use serde_json::Value;

use super::prompts::{self, render};
use crate::agents::provider::{ChatRequest, ChatResponse, ToolCall, ToolSpec};

/// What a judge assertion asks.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Scorer {
    /// autoevals Factuality against an expert answer, with the score of each choice.
    Factuality {
        expected: String,
        scores: &'static [(&'static str, f64)],
    },
    /// autoevals ClosedQA against a criterion.
    ClosedQa { criteria: String },
    /// A faithful and complete summary of a source.
    Summarizes { source: String },
    /// A 0–1 grade against a rubric.
    Rubric { rubric: String },
}

impl Scorer {
    /// `factuality`, `closed_qa`, `summarizes` or `rubric`.
    pub(crate) fn name(&self) -> &'static str {
        match self {
            Scorer::Factuality { .. } => "factuality",
            Scorer::ClosedQa { .. } => "closed_qa",
            Scorer::Summarizes { .. } => "summarizes",
            Scorer::Rubric { .. } => "rubric",
        }
    }

    fn argument(&self) -> &str {
        match self {
            Scorer::Factuality { expected, .. } => expected,
            Scorer::ClosedQa { criteria } => criteria,
            Scorer::Summarizes { source } => source,
            Scorer::Rubric { rubric } => rubric,
        }
    }

    /// The assertion's name in reports, e.g. `judge.factuality("Paris is ...")`.
    pub(crate) fn describe(&self) -> String {
        format!(
            "judge.{}({})",
            self.name(),
            crate::base::excerpt::quote_width(self.argument(), 60)
        )
    }

    fn choices(&self) -> Option<&'static [(&'static str, f64)]> {
        match self {
            Scorer::Factuality { scores, .. } => Some(scores),
            Scorer::ClosedQa { .. } => Some(prompts::CLOSED_QA_SCORES),
            Scorer::Summarizes { .. } => Some(prompts::SUMMARIZES_SCORES),
            Scorer::Rubric { .. } => None,
        }
    }

    fn tool_name(&self) -> &'static str {
        match self {
            Scorer::Rubric { .. } => prompts::GRADE_NAME,
            _ => prompts::SELECT_CHOICE_NAME,
        }
    }

    /// The judge request for the question `input` and the text being judged, `output`.
    pub(crate) fn request(&self, input: &str, output: &str) -> ChatRequest {
        let prompt = match self {
            Scorer::Factuality { expected, .. } => render(
                prompts::FACTUALITY,
                &[("input", input), ("expected", expected), ("output", output)],
            ),
            Scorer::ClosedQa { criteria } => render(
                prompts::CLOSED_QA,
                &[("input", input), ("output", output), ("criteria", criteria)],
            ),
            Scorer::Summarizes { source } => render(
                prompts::SUMMARIZES,
                &[("source", source), ("output", output)],
            ),
            Scorer::Rubric { rubric } => render(
                prompts::RUBRIC,
                &[("input", input), ("output", output), ("rubric", rubric)],
            ),
        };
        let (prompt, tool) = match self.choices() {
            Some(choices) => {
                let list = choices
                    .iter()
                    .map(|(c, _)| *c)
                    .collect::<Vec<_>>()
                    .join(", ");
                let suffix = render(prompts::COT_SUFFIX, &[("__choices", &list)]);
                (
                    format!("{prompt}\n{suffix}"),
                    ToolSpec::from_schema_text(
                        prompts::SELECT_CHOICE_NAME,
                        prompts::SELECT_CHOICE_DESCRIPTION,
                        prompts::SELECT_CHOICE_SCHEMA,
                    ),
                )
            }
            None => (
                prompt,
                ToolSpec::from_schema_text(
                    prompts::GRADE_NAME,
                    prompts::GRADE_DESCRIPTION,
                    prompts::GRADE_SCHEMA,
                ),
            ),
        };
        ChatRequest::new()
            .user(prompt)
            .tool(tool)
            .force_tool(self.tool_name())
            .temperature(0.0)
            .max_tokens(2048)
    }

    /// Reads the judge's answer: `Ok((score, reason))`, or `Err` saying why it cannot be scored.
    pub(crate) fn grade(&self, response: &ChatResponse) -> Result<(f64, String), VerdictError> {
        let tool = self.tool_name();
        let from_text;
        let args = match find_call(response, tool) {
            Ok(call) => {
                if let Some(problem) = &call.arguments_error {
                    return Err(VerdictError::ArgumentsNotJson {
                        tool: tool.to_string(),
                        problem: problem.clone(),
                        arguments: crate::base::excerpt::quote(
                            call.arguments.as_str().unwrap_or_default(),
                        ),
                    });
                }
                &call.arguments
            }
            // A judge that answers in text (a local model, a server without tool calls):
            // promptfoo's JSON verdict in its reply is read as the call's arguments.
            Err(_) if response.tool_calls.is_empty() => {
                from_text =
                    self.text_answer(&response.text)
                        .ok_or_else(|| VerdictError::NoVerdict {
                            tool: tool.to_string(),
                            form: if self.choices().is_some() {
                                r#"{"choice": …, "reason": …}"#
                            } else {
                                r#"{"pass": …, "score": …, "reason": …}"#
                            },
                            text: crate::base::excerpt::quote(response.text.trim()),
                        })?;
                &from_text
            }
            Err(e) => return Err(e),
        };
        let rationale = rationale(args.get("reasons"));
        match self.choices() {
            Some(choices) => {
                let raw = args.get("choice").ok_or_else(|| VerdictError::NoField {
                    tool: tool.to_string(),
                    field: "choice",
                    arguments: crate::base::excerpt::json(args),
                })?;
                let chosen = normalize_choice(raw);
                let allowed = choices
                    .iter()
                    .map(|(c, _)| *c)
                    .collect::<Vec<_>>()
                    .join(", ");
                let score = choices
                    .iter()
                    .find(|(c, _)| *c == chosen)
                    .map(|(_, s)| *s)
                    .ok_or_else(|| VerdictError::NotAChoice {
                        chosen: crate::base::excerpt::json(raw),
                        allowed,
                    })?;
                Ok((
                    score,
                    with_rationale(format!("choice {chosen} → score {score}"), &rationale),
                ))
            }
            None => {
                let raw = args.get("score").ok_or_else(|| VerdictError::NoField {
                    tool: tool.to_string(),
                    field: "score",
                    arguments: crate::base::excerpt::json(args),
                })?;
                let score = match raw {
                    Value::Number(n) => n.as_f64(),
                    Value::String(s) => s.trim().parse::<f64>().ok(),
                    _ => None,
                }
                .filter(|s| s.is_finite())
                .ok_or_else(|| VerdictError::NotANumber(crate::base::excerpt::json(raw)))?;
                if !(0.0..=1.0).contains(&score) {
                    return Err(VerdictError::OutOfRange(score));
                }
                Ok((score, with_rationale(format!("score {score}"), &rationale)))
            }
        }
    }
}

impl Scorer {
    /// The arguments a text reply stands for: the first JSON object in it (a code fence
    /// around it is fine) with promptfoo's rubric verdict (`pass`, `score`, `reason`) or a
    /// choice (`choice`, promptfoo's factuality `category`, `answer`). `pass: false` scores
    /// 0, as promptfoo fails it whatever the score; a verdict without `score` scores its
    /// `pass`.
    fn text_answer(&self, text: &str) -> Option<Value> {
        let Some(object) = first_json_object(text) else {
            return self.bare_choice(text);
        };
        let reason = object
            .get("reason")
            .or_else(|| object.get("reasons"))
            .cloned()
            .unwrap_or(Value::Null);
        if self.choices().is_some() {
            let choice = ["choice", "category", "answer", "verdict"]
                .iter()
                .find_map(|k| object.get(*k))?;
            return Some(serde_json::json!({"choice": choice, "reasons": reason}));
        }
        let pass = match object.get("pass") {
            None | Some(Value::Null) => None,
            Some(Value::Bool(b)) => Some(*b),
            Some(other) => Some(matches!(
                other
                    .as_str()
                    .map(|s| s.trim().to_ascii_lowercase())
                    .as_deref(),
                Some("true" | "yes" | "pass" | "y")
            )),
        };
        let score = object.get("score").filter(|v| !v.is_null()).cloned();
        let score = match (pass, score) {
            (None, None) => return None,
            (Some(false), _) => Value::from(0.0),
            // promptfoo keeps a text verdict's score as it is (graders that count points
            // answer 2 or 3); a passing verdict stays passing here, at most 1.
            (_, Some(Value::Number(n))) => Value::from(n.as_f64()?.clamp(0.0, 1.0)),
            // A verdict whose score is no number is scored by its pass, as promptfoo does.
            (Some(true), Some(Value::String(s))) if s.trim().parse::<f64>().is_err() => {
                Value::from(1.0)
            }
            (_, Some(score)) => score,
            (Some(true), None) => Value::from(1.0),
        };
        Some(serde_json::json!({"score": score, "reasons": reason}))
    }
}

impl Scorer {
    /// A choice written without JSON, as promptfoo's own graders read it: closed QA's answer
    /// ends with `Y` or `N`; factuality's holds `(A)`…`(E)`.
    fn bare_choice(&self, text: &str) -> Option<Value> {
        let choice = match self {
            Scorer::ClosedQa { .. } => {
                let end = text.trim_end();
                ["Y", "N"]
                    .into_iter()
                    .find(|c| end.ends_with(c))?
                    .to_string()
            }
            Scorer::Factuality { .. } => {
                let at = text.find(')').filter(|at| *at > 0)?;
                let letter = text[..at].chars().last()?.to_ascii_uppercase();
                if !('A'..='E').contains(&letter) {
                    return None;
                }
                letter.to_string()
            }
            _ => return None,
        };
        Some(serde_json::json!({"choice": choice, "reasons": text.trim()}))
    }
}

/// The first JSON object in `text` (promptfoo's graders answer with one, often in a code
/// fence or after some words).
fn first_json_object(text: &str) -> Option<serde_json::Map<String, Value>> {
    text.match_indices('{').find_map(|(at, _)| {
        let mut stream = serde_json::Deserializer::from_str(&text[at..]).into_iter::<Value>();
        match stream.next() {
            Some(Ok(Value::Object(map))) => Some(map),
            _ => None,
        }
    })
}

fn find_call<'a>(response: &'a ChatResponse, tool: &str) -> Result<&'a ToolCall, VerdictError> {
    if let Some(call) = response.tool_calls.iter().find(|c| c.name == tool) {
        return Ok(call);
    }
    match response.tool_calls.first() {
        Some(other) => Err(VerdictError::OtherTool {
            called: other.name.clone(),
            tool: tool.to_string(),
        }),
        None => Err(VerdictError::NoCall {
            tool: tool.to_string(),
            text: crate::base::excerpt::quote(response.text.trim()),
        }),
    }
}

/// Why a judge's answer cannot be scored (quoted parts are already cut to an excerpt).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub(crate) enum VerdictError {
    /// The tool call's arguments are not JSON.
    #[error("its `{tool}` call has arguments that are not JSON ({problem}): {arguments}")]
    ArgumentsNotJson {
        tool: String,
        problem: String,
        arguments: String,
    },
    /// Neither a tool call nor a JSON verdict in the text.
    #[error(
        "it answered neither with a `{tool}` call nor with a JSON verdict ({form}) (its text: {text})"
    )]
    NoVerdict {
        tool: String,
        form: &'static str,
        text: String,
    },
    /// The call lacks a field.
    #[error("its `{tool}` call has no `{field}`: {arguments}")]
    NoField {
        tool: String,
        field: &'static str,
        arguments: String,
    },
    /// A choice not offered.
    #[error("it chose {chosen}, which is not one of the allowed choices {allowed}")]
    NotAChoice { chosen: String, allowed: String },
    /// A score that is not a number.
    #[error("its score {0} is not a number")]
    NotANumber(String),
    /// A score outside [0, 1].
    #[error("its score {0} is outside [0, 1]")]
    OutOfRange(f64),
    /// Another tool called.
    #[error("it called `{called}` instead of `{tool}`")]
    OtherTool { called: String, tool: String },
    /// Text without the forced call.
    #[error(
        "it answered without calling `{tool}` (its text: {text}); use a judge model that supports forced tool calls"
    )]
    NoCall { tool: String, text: String },
}

/// `(A)`, ` a `, `"A"`, `A.` all mean `A`.
fn normalize_choice(raw: &Value) -> String {
    let text = match raw {
        Value::String(s) => s.as_str(),
        _ => return raw.to_string(),
    };
    text.trim()
        .trim_matches(|c: char| c == '(' || c == ')' || c == '"' || c == '\'' || c == '.')
        .trim()
        .to_ascii_uppercase()
}

fn rationale(reasons: Option<&Value>) -> String {
    match reasons {
        Some(Value::Array(items)) => items
            .iter()
            .map(|i| match i {
                Value::String(s) => s.trim().to_string(),
                other => other.to_string(),
            })
            .filter(|s| !s.is_empty())
            .collect::<Vec<_>>()
            .join(" "),
        Some(Value::String(s)) => s.trim().to_string(),
        Some(Value::Null) | None => String::new(),
        Some(other) => other.to_string(),
    }
}

fn with_rationale(head: String, rationale: &str) -> String {
    if rationale.is_empty() {
        head
    } else {
        format!("{head}: {}", crate::base::excerpt::elide(rationale, 1200))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn answer(name: &str, args: Value) -> ChatResponse {
        ChatResponse {
            tool_calls: vec![ToolCall {
                id: "c".into(),
                name: name.into(),
                arguments: args,
                arguments_error: None,
            }],
            ..ChatResponse::default()
        }
    }

    #[test]
    fn factuality_and_closed_qa_score_maps() {
        let f = Scorer::Factuality {
            expected: "x".into(),
            scores: prompts::FACTUALITY_SCORES,
        };
        for (choice, score) in [("A", 0.4), ("B", 0.6), ("C", 1.0), ("D", 0.0), ("E", 1.0)] {
            let (s, reason) = f
                .grade(&answer(
                    "select_choice",
                    json!({"reasons": ["r1", "r2"], "choice": choice}),
                ))
                .unwrap();
            assert_eq!(s, score, "{choice}");
            assert!(reason.contains("r1 r2"), "{reason}");
        }
        let q = Scorer::ClosedQa {
            criteria: "c".into(),
        };
        assert_eq!(
            q.grade(&answer("select_choice", json!({"choice": "Y"})))
                .unwrap()
                .0,
            1.0
        );
        assert_eq!(
            q.grade(&answer("select_choice", json!({"choice": " n "})))
                .unwrap()
                .0,
            0.0
        );
        assert_eq!(
            f.grade(&answer("select_choice", json!({"choice": "(C)"})))
                .unwrap()
                .0,
            1.0
        );
    }

    fn text(reply: &str) -> ChatResponse {
        ChatResponse {
            text: reply.into(),
            ..ChatResponse::default()
        }
    }

    #[test]
    fn a_text_answer_with_promptfoos_verdict_is_read() {
        let r = Scorer::Rubric {
            rubric: "polite".into(),
        };
        let fenced =
            "Here you go:\n```json\n{\"reason\": \"kind\", \"pass\": true, \"score\": 0.9}\n```";
        let (score, reason) = r.grade(&text(fenced)).unwrap();
        assert_eq!(score, 0.9);
        assert!(reason.contains("kind"), "{reason}");
        // `pass: false` fails whatever the score; `pass` alone is its score.
        assert_eq!(
            r.grade(&text(r#"{"pass": false, "score": 0.8, "reason": "rude"}"#))
                .unwrap()
                .0,
            0.0
        );
        assert_eq!(r.grade(&text(r#"{"pass": true}"#)).unwrap().0, 1.0);
        // Points beyond 1 (a grading prompt that counts them) are a full score.
        assert_eq!(
            r.grade(&text(r#"{"pass": true, "score": 2}"#)).unwrap().0,
            1.0
        );
        // Closed QA and factuality answered without JSON, as promptfoo's own prompts ask.
        let q = Scorer::ClosedQa {
            criteria: "c".into(),
        };
        assert_eq!(q.grade(&text("It meets it.\nY")).unwrap().0, 1.0);
        assert_eq!(q.grade(&text("It does not.\nN")).unwrap().0, 0.0);
        let f = Scorer::Factuality {
            expected: "x".into(),
            scores: prompts::PROMPTFOO_FACTUALITY_SCORES,
        };
        assert_eq!(
            f.grade(&text(r#"{"category": "A", "reason": "subset"}"#))
                .unwrap()
                .0,
            1.0
        );
        // Neither a call nor a verdict: the error shows what came back.
        let err = r.grade(&text("Looks fine to me.")).unwrap_err().to_string();
        assert!(
            err.contains("neither") && err.contains("Looks fine to me."),
            "{err}"
        );
    }

    #[test]
    fn unusable_answers_say_why() {
        let f = Scorer::Factuality {
            expected: "x".into(),
            scores: prompts::FACTUALITY_SCORES,
        };
        let err = f
            .grade(&answer("select_choice", json!({"choice": "F"})))
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("\"F\"") && err.contains("A, B, C, D, E"),
            "{err}"
        );
        let err = f
            .grade(&answer("select_choice", json!({"reasons": []})))
            .unwrap_err()
            .to_string();
        assert!(err.contains("no `choice`"), "{err}");
        let err = f
            .grade(&answer("other", json!({})))
            .unwrap_err()
            .to_string();
        assert!(err.contains("called `other`"), "{err}");
        let err = f
            .grade(&ChatResponse {
                text: "I pick C".into(),
                ..ChatResponse::default()
            })
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("neither with a `select_choice` call") && err.contains("I pick C"),
            "{err}"
        );
        let mut bad = answer("select_choice", json!("{oops"));
        bad.tool_calls[0].arguments_error = Some("EOF".into());
        assert!(f.grade(&bad).unwrap_err().to_string().contains("not JSON"));
    }

    #[test]
    fn rubric_scores_must_be_in_range() {
        let r = Scorer::Rubric {
            rubric: "polite".into(),
        };
        assert_eq!(
            r.grade(&answer("grade", json!({"reasons": "fine", "score": 0.75})))
                .unwrap()
                .0,
            0.75
        );
        assert_eq!(
            r.grade(&answer("grade", json!({"score": "0.5"})))
                .unwrap()
                .0,
            0.5
        );
        assert!(
            r.grade(&answer("grade", json!({"score": 1.5})))
                .unwrap_err()
                .to_string()
                .contains("outside [0, 1]")
        );
        assert!(
            r.grade(&answer("grade", json!({"score": "high"})))
                .unwrap_err()
                .to_string()
                .contains("not a number")
        );
    }

    #[test]
    fn requests_force_the_tool_and_embed_the_data() {
        let request = Scorer::ClosedQa {
            criteria: "Is it polite?".into(),
        }
        .request("Hi there", "Hello! How can I help?");
        assert_eq!(
            request.tool_choice,
            crate::agents::provider::ToolChoice::Tool("select_choice".into())
        );
        let crate::agents::provider::ChatMessage::User(prompt) = &request.messages[0] else {
            panic!("expected a user message");
        };
        assert!(prompt.contains("<task>\nHi there\n</task>"), "{prompt}");
        assert!(
            prompt.contains("<criterion>\nIs it polite?\n</criterion>"),
            "{prompt}"
        );
        assert!(prompt.ends_with("exactly one of Y, N."), "{prompt}");
        let summary = Scorer::Summarizes {
            source: "SRC".into(),
        }
        .request("q", "SUM");
        let crate::agents::provider::ChatMessage::User(prompt) = &summary.messages[0] else {
            panic!("expected a user message");
        };
        assert!(
            prompt.contains("<source>\nSRC\n</source>")
                && prompt.contains("<submission>\nSUM\n</submission>")
        );
        let rubric = Scorer::Rubric { rubric: "R".into() }.request("q", "o");
        assert_eq!(rubric.tools[0].name(), "grade");
    }
}
