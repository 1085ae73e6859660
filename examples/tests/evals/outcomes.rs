//! How results fold into an outcome: `check` vs `require`, soft assertions below their
//! threshold (a mark, or a failure under strict), `t.skip`, several runs, and agent failures.
//!
//! The order, for one run: an execution error (agent error propagated with `?`, panic,
//! timeout) fails the eval; then any failed gate fails it; then `t.skip` skips it; then a soft
//! assertion below its threshold passes it with a mark (fails it under strict); else it passes.

use niceeval::prelude::*;
use niceeval_examples::support_bot;

// `check` records the result and continues; `require` does the same but returns `Err` when the
// assertion does not pass, so `?` stops the body right there — use it when later steps make no
// sense without it. Both return the `AssertionResult`, with its score and reason.
#[eval(agent = support_bot, tags = ["outcomes"])]
async fn check_versus_require(t: &mut Eval) -> niceeval::Result {
    let turn = t.send("Where is order #321?").await?;
    let status = t.require(
        &turn.data,
        matches_schema(json!({ "required": ["status"] })),
    )?;
    t.check(status.score, equals(1.0));
    let result = t.check(t.reply(), includes("paid"));
    t.check(result.passed, equals(true));
    Ok(())
}

// A soft assertion below its threshold does not fail the eval: the eval passes, marked
// "passed (below threshold)" in its report (see it with `-- --nocapture`). Here the reply is
// checked against a wording the bot does not use, so similarity is about 0.24 < 0.9.
//
// Strict mode turns such marks into failures. Try:
//   NICEEVAL_STRICT=1 cargo test -p niceeval-examples --test evals outcomes::soft_below_threshold
#[eval(agent = support_bot, tags = ["outcomes"])]
async fn soft_below_threshold_passes_with_a_mark(t: &mut Eval) -> niceeval::Result {
    t.send("Where is my order #789?").await?;
    t.check(t.reply(), includes("ZX-4471"));
    t.check(
        t.reply(),
        similarity("Your coffee is on its way, track it with ZX-4471!").at_least(0.9),
    );
    Ok(())
}

// `strict` makes this eval fail on any soft assertion below its threshold, whatever the
// environment says. Its soft assertions all clear their thresholds, so it passes.
#[eval(agent = support_bot, strict, tags = ["outcomes"])]
async fn strict_eval(t: &mut Eval) -> niceeval::Result {
    t.send("Where is order #123?").await?;
    t.check(
        t.reply(),
        similarity("Order #123 (Blue ceramic mug) was delivered on 2024-05-02.").at_least(0.95),
    );
    Ok(())
}

// The agent for the eval below: replays the transcript named by an environment variable.
fn production_transcript() -> impl Agent {
    replay(std::env::var("SUPPORT_BOT_TRANSCRIPT").unwrap_or_default())
}

// `t.skip(reason)` ends the body and reports the eval as skipped (not passed): `cargo test`
// prints "niceeval: SKIPPED <test name>: <reason>". Here, a check of a recorded production
// conversation that only runs when one is provided:
//   SUPPORT_BOT_TRANSCRIPT=transcripts/where_is_my_order.jsonl cargo test -p niceeval-examples --test evals outcomes::
#[eval(agent = production_transcript, tags = ["outcomes"])]
async fn skipped_without_a_transcript(t: &mut Eval) -> niceeval::Result {
    if std::env::var_os("SUPPORT_BOT_TRANSCRIPT").is_none() {
        return t.skip("set SUPPORT_BOT_TRANSCRIPT to a recorded transcript (JSONL) to run it");
    }
    t.send("(replayed)").await?;
    t.check(t.reply(), excludes(Regex::new(r"\b\d{13,16}\b")?)); // no card numbers
    Ok(())
}

// `runs = N` runs the eval N times (each run gets a fresh agent); the eval passes when the
// share of passing runs reaches `min_pass_rate` (default 1.0). The demo bot is deterministic,
// so all runs pass; against a real model this is how flakiness becomes a pass rate.
#[eval(agent = support_bot, runs = 3, min_pass_rate = 0.6, tags = ["outcomes"])]
async fn several_runs(t: &mut Eval) -> niceeval::Result {
    t.send("I'd like a refund for #123").await?;
    t.check(t.reply(), includes("$24.00"));
    Ok(())
}

// When the agent fails a turn, `send` returns `Err`. With `?` that ends the eval as an
// execution error; here the eval expects the failure and checks it instead. The failed turn is
// still recorded, with an `error` event.
#[eval(agent = support_bot, tags = ["outcomes"])]
async fn agent_error_is_an_err(t: &mut Eval) -> niceeval::Result {
    let error = t.send("   ").await.err().map(|e| e.to_string());
    t.check(error, includes("the customer message is empty"));
    let turn = &t.turns()[0];
    t.check(json!(turn.status), equals("failed"));
    Ok(())
}

// A failed *tool call* is not an agent error: the turn completes and the bot explains. The
// failed call is in the event stream, with status `failed`.
#[eval(agent = support_bot, tags = ["outcomes"])]
async fn unknown_order_fails_the_tool_call(t: &mut Eval) -> niceeval::Result {
    let turn = t.send("Where is order #999?").await?;
    t.check(t.reply(), includes("couldn't find order #999"));
    t.check(json!(turn.status), equals("completed"));
    let failed_lookups = turn
        .events
        .iter()
        .filter(|e| {
            matches!(e, Event::ActionResult { status, .. } if *status == niceeval::ActionStatus::Failed)
        })
        .count();
    t.check(failed_lookups, equals(1));
    Ok(())
}
