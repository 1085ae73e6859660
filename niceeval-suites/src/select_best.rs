//! promptfoo's `select-best`: the outputs of one test's cases (every prompt × provider) go to
//! the grader in one call, which names the best; that case's item passes and the others' fail.
//!
//! Each case is an eval of its own, run in any order and at any concurrency, so a test's cases
//! share a [`Group`]: one slot per case holding what its provider answered, filled once by
//! whichever needs it first (the case itself, or a sibling that needs every output to ask the
//! grader), and one verdict for them all. A case whose slot a sibling filled replays that
//! answer instead of asking its provider again, so every provider is asked once and the grader
//! sees the outputs the cases are judged on. No case waits for another case to run: the first
//! to need an output fetches it.

use std::sync::Arc;

use serde_json::{Map, Value};
use tokio::sync::OnceCell;

use super::agents::SendingError;
use super::template::TemplateError;
use super::{JudgeSpec, SuiteCase, agents, graders};
use niceeval::__workspace::provider::ChatRequest;
use niceeval::Event;
use niceeval::agent::{Agent as _, AgentError, EventSink, Request};
use niceeval::{Judge, JudgeError};

/// Why a test's outputs could not be compared, or one of them fetched; the provider's,
/// template's or grader's error is kept.
#[derive(Debug, thiserror::Error)]
pub(crate) enum SelectBestError {
    /// A case index outside the group.
    #[error("select-best: no case #{0} in the group")]
    NoCase(usize),
    /// The case's prompt cannot be sent to its provider.
    #[error(transparent)]
    Sending(#[from] SendingError),
    /// The test's provider is the configured agent, which niceeval does not call itself.
    #[error(
        "select-best compares providers niceeval calls itself; this test's provider is the crate's own agent"
    )]
    OwnAgent,
    /// The provider failed.
    #[error("the provider {provider} failed: {source}")]
    Provider {
        /// The provider's label.
        provider: String,
        /// Its error.
        #[source]
        source: AgentError,
    },
    /// One case alone.
    #[error("it needs at least two outputs to compare (the test's prompts × providers)")]
    TooFew,
    /// An output the grader needed could not be fetched.
    #[error(transparent)]
    Output(Arc<SelectBestError>),
    /// The `rubricPrompt` does not render.
    #[error(transparent)]
    Template(#[from] TemplateError),
    /// The grader failed.
    #[error(transparent)]
    Judge(#[from] JudgeError),
    /// The grader's answer names no output.
    #[error("invalid verdict {answer}: the grader names no output 0..{last}")]
    Verdict {
        /// The answer, quoted.
        answer: String,
        /// The last index it could name.
        last: usize,
    },
}

/// The cases of one test with a `select-best` item.
pub(crate) struct Group {
    /// The criteria (the item's `value`).
    pub criteria: String,
    /// The grader named on the item or the test.
    pub judge: Option<JudgeSpec>,
    /// A `rubricPrompt` of the item or the test (`{{criteria}}`, `{{outputs}}`, vars).
    pub prompt: Option<String>,
    /// The test's cases in promptfoo's order (provider by provider, prompt by prompt): the
    /// index the grader names.
    cells: Vec<SuiteCase>,
    outputs: Vec<OnceCell<Result<Vec<Event>, Arc<SelectBestError>>>>,
    verdict: OnceCell<Result<usize, Arc<SelectBestError>>>,
}

impl std::fmt::Debug for Group {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Group")
            .field("criteria", &self.criteria)
            .field("cases", &self.cells.len())
            .finish_non_exhaustive()
    }
}

impl Group {
    /// A group of `cells` (in promptfoo's order).
    pub(crate) fn new(
        criteria: String,
        judge: Option<JudgeSpec>,
        prompt: Option<String>,
        cells: Vec<SuiteCase>,
    ) -> Arc<Group> {
        Arc::new(Group {
            criteria,
            judge,
            prompt,
            outputs: cells.iter().map(|_| OnceCell::new()).collect(),
            cells,
            verdict: OnceCell::new(),
        })
    }

    /// The events of case `index`'s answer: sent to its provider the first time it is asked
    /// for.
    pub(crate) async fn output(
        &self,
        index: usize,
        vars: &Map<String, Value>,
    ) -> Result<Vec<Event>, Arc<SelectBestError>> {
        let Some(slot) = self.outputs.get(index) else {
            return Err(Arc::new(SelectBestError::NoCase(index)));
        };
        slot.get_or_init(|| async { send(&self.cells[index], vars).await.map_err(Arc::new) })
            .await
            .clone()
    }

    /// Whether case `index` is the one the grader picked, and why.
    pub(crate) async fn verdict(
        &self,
        index: usize,
        judge: &Judge,
        vars: &Map<String, Value>,
    ) -> (bool, String) {
        let picked = self
            .verdict
            .get_or_init(|| async { self.ask(judge, vars).await.map_err(Arc::new) })
            .await
            .clone();
        match picked {
            Ok(best) if best == index => (
                true,
                format!(
                    "select-best: output selected as the best: {}",
                    self.criteria
                ),
            ),
            Ok(best) => (
                false,
                format!(
                    "select-best: output not selected (output #{best} was): {}",
                    self.criteria
                ),
            ),
            Err(why) => (false, format!("select-best: {why}")),
        }
    }

    async fn ask(
        &self,
        judge: &Judge,
        vars: &Map<String, Value>,
    ) -> Result<usize, SelectBestError> {
        if self.cells.len() < 2 {
            return Err(SelectBestError::TooFew);
        }
        let mut outputs = Vec::with_capacity(self.cells.len());
        for index in 0..self.cells.len() {
            let events = self
                .output(index, vars)
                .await
                .map_err(SelectBestError::Output)?;
            outputs.push(
                Event::last_reply(&events)
                    .map(|t| t.to_string())
                    .unwrap_or_default(),
            );
        }
        let request = match &self.prompt {
            Some(template) => custom_request(template, &self.criteria, &outputs, vars)?,
            None => default_request(&self.criteria, &outputs),
        };
        let model = self.judge.as_ref().map(|j| j.model.as_str());
        let answer = judge.ask_text(model, &request).await?;
        // As promptfoo: the first digit of the answer is the index.
        answer
            .trim()
            .chars()
            .find_map(|c| c.to_digit(10))
            .map(|d| d as usize)
            .filter(|d| *d < outputs.len())
            .ok_or_else(|| SelectBestError::Verdict {
                answer: niceeval::__workspace::excerpt::quote(answer.trim()),
                last: outputs.len() - 1,
            })
    }
}

/// Sends `case`'s prompt to its provider outside any eval and keeps what it emitted.
async fn send(case: &SuiteCase, vars: &Map<String, Value>) -> Result<Vec<Event>, SelectBestError> {
    let (agent, input, _earlier) = agents::agent_for(case, vars)?;
    let Some(agent) = agent else {
        return Err(SelectBestError::OwnAgent);
    };
    let sink = EventSink::default();
    agent
        .send(Request::new(input, sink.clone()))
        .await
        .map_err(|source| SelectBestError::Provider {
            provider: case.provider.label.clone(),
            source,
        })?;
    Ok(sink.snapshot())
}

/// niceeval's comparison prompt: the criteria, the outputs by index, one integer asked back.
/// Sent as a system message alone, as promptfoo sends its own.
fn default_request(criteria: &str, outputs: &[String]) -> ChatRequest {
    let mut text = format!(
        "Compare the texts below and decide which one fits this criteria best: {criteria}\n\nThe texts:\n"
    );
    for (index, output) in outputs.iter().enumerate() {
        text.push_str(&format!("\n<Text index=\"{index}\">\n{output}\n</Text>\n"));
    }
    text.push_str("\nAnswer with the index of the best text alone: one integer.");
    ChatRequest::new()
        .system(text)
        .temperature(0.0)
        .max_tokens(256)
}

/// A `rubricPrompt` for `select-best`, rendered as promptfoo renders it: `criteria` and each of
/// `outputs` JSON-escaped, the test's vars as `fromVars` writes them.
fn custom_request(
    template: &str,
    criteria: &str,
    outputs: &[String],
    vars: &Map<String, Value>,
) -> Result<ChatRequest, TemplateError> {
    let mut values = Map::new();
    values.insert("criteria".into(), Value::String(graders::escaped(criteria)));
    values.insert(
        "outputs".into(),
        Value::Array(
            outputs
                .iter()
                .map(|o| Value::String(graders::escaped(o)))
                .collect(),
        ),
    );
    for (name, value) in vars {
        values.insert(name.clone(), Value::String(graders::from_var(value)));
    }
    let text = super::template::render(template, &values)?;
    Ok(graders::chat_request(&text)
        .temperature(0.0)
        .max_tokens(256))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_prompt_lists_every_output_by_index() {
        let request = default_request("the loudest", &["hi".into(), "HI!".into()]);
        let system = request.system.unwrap();
        assert!(system.contains("the loudest"), "{system}");
        assert!(
            system.contains("<Text index=\"0\">\nhi\n</Text>")
                && system.contains("<Text index=\"1\">\nHI!\n</Text>"),
            "{system}"
        );
        assert!(request.messages.is_empty());
        let custom = custom_request(
            "Pick for {{criteria}}: {% for o in outputs %}[{{loop.index0}}] {{o}} {% endfor %}",
            "tone",
            &["a".into(), "b\"c".into()],
            &Map::new(),
        )
        .unwrap();
        let niceeval::__workspace::provider::ChatMessage::User(user) = &custom.messages[0] else {
            panic!("a user message");
        };
        assert_eq!(user, "Pick for tone: [0] a [1] b\\\"c ");
    }
}
