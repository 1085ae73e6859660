//! Conversations: several turns in one session, starting over with `new_session`, a human in
//! the loop (`input.requested` parks a turn; `t.respond` answers it), and what a run records:
//! `t.turns()`, `t.events()` and `t.usage()`.

use niceeval::ActionStatus;
use niceeval::prelude::*;
use niceeval_examples::support_bot;

/// Names of the tools called in `events`, in order. (Collections are checked as JSON:
/// `t.check(json!(names), equals([..]))`.)
fn tools_called(events: &[Event]) -> Vec<String> {
    events
        .iter()
        .filter_map(|e| match e {
            Event::ActionCalled { name, .. } => Some(name.clone()),
            _ => None,
        })
        .collect()
}

// Each `send` is one turn. The agent sees the session's earlier messages (`request.history`),
// so the demo bot can finish a refund whose order number came in a later message.
#[eval(agent = support_bot, tags = ["conversation"])]
async fn multi_turn_refund(t: &mut Eval) -> niceeval::Result {
    let first = t.send("Hi, I need a refund").await?;
    t.check(&first.message, includes("Which order"));
    t.check(
        &first.data,
        equals(json!({ "intent": "refund", "order_id": null })),
    );

    let second = t.send("It's order #123").await?;
    t.check(&second.message, includes("Your refund of $24.00"));
    t.check(
        json!(tools_called(&second.events)),
        equals(["lookup_order", "issue_refund"]),
    );

    // `t.reply()` is the last assistant message of the run; `t.turns()` holds every turn.
    t.check(t.reply(), equals(second.message.as_str()));
    t.check(t.turns().len(), equals(2));
    Ok(())
}

// `new_session()` starts a new conversation: the agent gets a new session id and no history.
// Everything recorded so far stays in the run. After it, the bot no longer knows that the
// customer wanted a refund, and asks.
#[eval(agent = support_bot, tags = ["conversation"])]
async fn new_session_forgets(t: &mut Eval) -> niceeval::Result {
    t.send("I want a refund").await?;
    t.new_session();
    t.send("It's #123").await?;
    t.check(
        t.reply(),
        includes("What would you like to do with order #123?"),
    );
    t.check(json!(tools_called(t.events())), equals(json!([])));
    Ok(())
}

// Human in the loop: refunds over $100 need approval. The bot emits an `input.requested` event,
// the turn ends with status `Waiting`, and `t.respond(answer)` continues the run with the
// human's answer (the agent receives the request it made in `request.responding_to`).
#[eval(agent = support_bot, tags = ["conversation", "approval"])]
async fn large_refund_needs_approval(t: &mut Eval) -> niceeval::Result {
    let parked = t
        .send("Refund order #456 please, the machine leaks")
        .await?;
    t.check(json!(parked.status), equals("waiting"));
    t.check(&parked.message, includes("needs a supervisor's approval"));
    t.check(
        json!(tools_called(&parked.events)),
        equals(["lookup_order"]),
    );
    let request = parked.events.iter().find_map(|e| match e {
        Event::InputRequested { request } => Some(request.clone()),
        _ => None,
    });
    t.check(&request, includes("Approve a refund of $349.00"));

    let done = t.respond("Yes, approved.").await?;
    t.check(json!(done.status), equals("completed"));
    t.check(t.reply(), includes("Approved: your refund of $349.00"));
    t.check(json!(tools_called(&done.events)), equals(["issue_refund"]));
    Ok(())
}

// The same flow when the human says no: the bot's `issue_refund` call ends `rejected`.
#[eval(agent = support_bot, tags = ["conversation", "approval"])]
async fn declined_refund(t: &mut Eval) -> niceeval::Result {
    t.send("I want my money back for order #456").await?;
    let done = t.respond("No, the warranty covers a repair.").await?;
    t.check(t.reply(), includes("was not approved"));
    let rejected = done.events.iter().any(|e| {
        matches!(
            e,
            Event::ActionResult {
                status: ActionStatus::Rejected,
                ..
            }
        )
    });
    t.check(rejected, equals(true));
    t.check(
        &done.data,
        satisfies(|d: &Value| d["status"] == "declined", "status is declined"),
    );
    Ok(())
}

// Usage: the bot reports tokens with `usage` events, one per (imagined) model call. A turn sums
// its own (`turn.usage`); `t.usage()` sums the whole run.
#[eval(agent = support_bot, tags = ["conversation", "usage"])]
async fn token_usage(t: &mut Eval) -> niceeval::Result {
    let first = t.send("Where is order #789?").await?;
    let second = t.send("And order #321?").await?;
    let run = t.usage();
    t.check(
        run.total_tokens(),
        equals(first.usage.total_tokens() + second.usage.total_tokens()),
    );
    t.check(
        run.input_tokens,
        satisfies(|n: &u64| *n < 1_500, "under 1,500 input tokens"),
    );
    t.check(
        second.usage.input_tokens > first.usage.input_tokens,
        equals(true),
    ); // history grows
    // The demo bot reports tokens but no cost: the cost is the price table's estimate for
    // the model its usage events name.
    t.check(
        run.cost_usd.unwrap_or(0.0),
        satisfies(|c: &f64| *c > 0.0, "an estimated cost"),
    );
    Ok(())
}

// Every event of the run, in order: each turn starts with the user's message, then whatever
// the agent emitted (thinking, usage, tool calls and results, input requests, messages).
#[eval(agent = support_bot, tags = ["conversation"])]
async fn the_event_stream(t: &mut Eval) -> niceeval::Result {
    t.send("Where is order #789?").await?;
    let kinds: Vec<&str> = t.events().iter().map(Event::kind).collect();
    t.check(
        json!(kinds),
        equals([
            "message",
            "thinking",
            "usage",
            "action.called",
            "action.result",
            "usage",
            "message",
        ]),
    );
    // Events serialize to the JSONL wire format that the replay agent reads back.
    let line = serde_json::to_string(&t.events()[3])?;
    t.check(
        line,
        equals(r#"{"type":"action.called","call_id":"call_1","name":"lookup_order","input":{"order_id":"789"}}"#),
    );
    Ok(())
}
