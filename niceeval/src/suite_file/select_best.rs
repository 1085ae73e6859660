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

use super::{JudgeSpec, SuiteCase, agents, graders};
use crate::agent::{Agent as _, EventSink, Request};
use crate::event::Event;
use crate::judge::Judge;
use crate::provider::ChatRequest;

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
    outputs: Vec<OnceCell<Result<Vec<Event>, String>>>,
    verdict: OnceCell<Result<usize, String>>,
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
    ) -> Result<Vec<Event>, String> {
        let Some(slot) = self.outputs.get(index) else {
            return Err(format!("select-best: no case #{index} in the group"));
        };
        slot.get_or_init(|| send(&self.cells[index], vars))
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
            .get_or_init(|| self.ask(judge, vars))
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

    async fn ask(&self, judge: &Judge, vars: &Map<String, Value>) -> Result<usize, String> {
        if self.cells.len() < 2 {
            return Err(
                "it needs at least two outputs to compare (the test's prompts × providers)".into(),
            );
        }
        let mut outputs = Vec::with_capacity(self.cells.len());
        for index in 0..self.cells.len() {
            let events = self.output(index, vars).await?;
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
        let answer = judge
            .ask_text(model, &request)
            .await
            .map_err(|e| e.to_string())?;
        // As promptfoo: the first digit of the answer is the index.
        answer
            .trim()
            .chars()
            .find_map(|c| c.to_digit(10))
            .map(|d| d as usize)
            .filter(|d| *d < outputs.len())
            .ok_or_else(|| {
                format!(
                    "invalid verdict {}: the grader names no output 0..{}",
                    crate::excerpt::quote(answer.trim()),
                    outputs.len() - 1
                )
            })
    }
}

/// Sends `case`'s prompt to its provider outside any eval and keeps what it emitted.
async fn send(case: &SuiteCase, vars: &Map<String, Value>) -> Result<Vec<Event>, String> {
    let (agent, input, _earlier) = agents::agent_for(case, vars)?;
    let Some(agent) = agent else {
        return Err(
            "select-best compares providers niceeval calls itself; this test's provider is the crate's own agent".into(),
        );
    };
    let sink = EventSink::default();
    agent
        .send(Request::new(input, sink.clone()))
        .await
        .map_err(|e| format!("the provider {} failed: {e}", case.provider.label))?;
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
) -> Result<ChatRequest, String> {
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
        let crate::provider::ChatMessage::User(user) = &custom.messages[0] else {
            panic!("a user message");
        };
        assert_eq!(user, "Pick for tone: [0] a [1] b\\\"c ");
    }
}
