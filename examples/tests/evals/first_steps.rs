//! First steps: the shape of an eval, the `#[eval]` options, and the two ways to plug in an
//! agent (a `fn() -> impl Agent` from your crate, or a closure wrapped by `agent_fn`).
//!
//! Run just this file with `cargo test -p niceeval-examples --test evals first_steps::`.

use niceeval::prelude::*;
use niceeval_examples::support_bot;

#[derive(serde::Deserialize)]
#[allow(dead_code)] // only its shape is checked, by `matches::<Refund>()`
struct Refund {
    order_id: String,
    amount_cents: u64,
    status: String,
}

// The README's example: one message, then value assertions on the reply and on the turn's
// structured data. `check` records and continues; `require` stops the body (via `?`) when it
// fails; `?` on `send` ends the eval as an execution error if the agent fails.
#[eval(agent = support_bot, tags = ["refunds", "smoke"])]
async fn refund_small_order(t: &mut Eval) -> niceeval::Result {
    let turn = t.send("I want a refund for order #123").await?;

    t.check(t.reply(), includes("refund"));
    t.check(t.reply(), includes(Regex::new(r"\$\d+\.\d{2}")?));
    t.check(t.reply(), excludes("sorry"));
    t.check(
        &turn.data,
        equals(json!({ "intent": "refund", "order_id": "123", "amount_cents": 2400, "status": "refunded" })),
    );
    t.check(
        t.reply(),
        similarity("Your refund of $24.00 for order #123 is on its way. It will reach your card in 3-5 business days.")
            .at_least(0.8),
    );
    t.require(&turn.data, matches::<Refund>())?;
    Ok(())
}

// Every `#[eval]` option that has an effect today: the agent, tags and a description (kept in
// the eval's report), and a per-run timeout (this body must finish within 10 seconds, instead
// of the 30s set in examples/niceeval.toml).
#[eval(
    agent = support_bot,
    tags = ["status", "smoke"],
    description = "a shipped order's status includes its tracking number",
    timeout = "10s"
)]
async fn shipped_order_has_tracking_number(t: &mut Eval) -> niceeval::Result {
    let turn = t.send("Where is my order #789?").await?;
    t.check(t.reply(), includes("ZX-4471"));
    t.check(
        &turn.data,
        equals(json!({ "intent": "status", "order_id": "789", "status": "shipped" })),
    );
    Ok(())
}

// A body may also return `()`. It cannot use `?` then: here a failed turn would panic in
// `expect`, and niceeval reports a panic as an execution error of this eval (the other evals
// keep running).
#[eval(agent = support_bot, tags = ["status"])]
async fn body_returning_unit(t: &mut Eval) {
    let turn = t
        .send("Hi, what's the status of order 321?")
        .await
        .expect("the bot answers");
    t.check(&turn.message, includes("will ship within 1 business day"));
}

// The input can be JSON instead of text: the agent receives it in `request.input.data` (and as
// JSON text in `request.input.text`, which is what the demo bot reads).
#[eval(agent = support_bot)]
async fn structured_input(t: &mut Eval) -> niceeval::Result {
    t.send(json!({ "order_id": "123", "request": "status" }))
        .await?;
    t.check(t.reply(), includes("was delivered on 2024-05-02"));
    Ok(())
}

// Any async function can be the agent under test: `agent_fn` wraps a closure that receives the
// `Request` and reports what it does through `request.events`.
fn opening_hours_bot() -> impl Agent {
    agent_fn(|request: Request| async move {
        let question = request.input.text.to_lowercase();
        request.events.usage(42, 14);
        if question.contains("open") {
            request
                .events
                .say("We are open from 9:00 to 17:00, Monday to Friday.");
        } else {
            request.events.say("I can only tell you our opening hours.");
        }
        Ok(())
    })
}

// An eval against the closure agent above.
#[eval(agent = opening_hours_bot)]
async fn closure_agent(t: &mut Eval) -> niceeval::Result {
    t.send("When are you open on Mondays?").await?;
    t.check(
        t.reply(),
        includes(Regex::new(r"\d{1,2}:\d{2} to \d{1,2}:\d{2}")?),
    );
    t.check(t.usage().output_tokens, equals(14));
    Ok(())
}
