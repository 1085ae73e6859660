//! LLM-as-judge evals. They need a judge model: set `[judge] model` in niceeval.toml or the
//! `NICEEVAL_JUDGE_MODEL` environment variable (plus the provider's API key, or a local
//! OpenAI-compatible server such as Ollama, which needs none):
//!
//! ```text
//! NICEEVAL_JUDGE_MODEL=openai/llama3.2 NICEEVAL_JUDGE_BASE_URL=http://127.0.0.1:11434/v1 \
//!     cargo test -p niceeval-examples --test judge
//! ```
//!
//! Without a judge they are skipped, and say what to set.

use niceeval::prelude::*;

/// A small deterministic agent for these evals: answers a few geography and summary questions.
fn tutor() -> impl Agent {
    agent_fn(|request: Request| async move {
        let question = request.input.text.to_lowercase();
        let answer = if question.contains("capital of france") {
            "The capital of France is Paris."
        } else if question.contains("summarize") {
            "The meeting moved the launch to May 3 because QA found two blocking bugs; marketing will update the announcement."
        } else {
            "I am not sure."
        };
        request.events.say(answer);
        Ok(())
    })
}

const MEETING_NOTES: &str = "Launch review, April 12. QA reported two blocking bugs in the \
checkout flow, so the team agreed to move the launch from April 20 to May 3. Marketing will \
update the announcement and the press kit before April 25.";

/// Skips the eval, saying what to set, when no judge model is usable.
fn require_judge(t: &Eval) -> Option<String> {
    t.judge()
        .ready()
        .err()
        .map(|why| format!("no judge model is usable, so this judge eval is skipped: {why}"))
}

#[eval(agent = tutor, tags = ["judge"])]
async fn capital_answer_is_factual(t: &mut Eval) -> niceeval::Result {
    if let Some(reason) = require_judge(t) {
        return t.skip(reason);
    }
    t.send("What is the capital of France?").await?;
    t.check(t.reply(), includes("Paris"));
    t.judge()
        .factuality("Paris is the capital of France.")
        .at_least(0.6);
    t.judge()
        .closed_qa("Does the answer name a single city?")
        .gate();
    Ok(())
}

#[eval(agent = tutor, tags = ["judge"])]
async fn meeting_summary_is_faithful(t: &mut Eval) -> niceeval::Result {
    if let Some(reason) = require_judge(t) {
        return t.skip(reason);
    }
    let turn = t
        .send(format!("Summarize these notes: {MEETING_NOTES}"))
        .await?;
    t.judge()
        .summarizes(MEETING_NOTES)
        .on(&turn.message)
        .at_least(0.5);
    t.judge()
        .rubric("The summary gives the new launch date and the reason for the delay.")
        .at_least(0.7);
    Ok(())
}

// The suite runner: runs every #[eval] above concurrently, with libtest-style arguments.
niceeval::main!();
