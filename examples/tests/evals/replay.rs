//! Replaying recorded transcripts: an agent that plays back a JSONL file of events, so evals of
//! a model-backed agent can run offline, fast and for free. Each `t.send` (or `t.respond`) plays
//! the next recorded turn; turns are separated by the recorded user messages, which are not
//! replayed (the eval's own input is recorded instead).
//!
//! The evals here that name no agent use the default agent of `examples/niceeval.toml`:
//!
//! ```toml
//! [agent]
//! type = "replay"
//! path = "transcripts/refund_456_approved.jsonl"
//! ```

use niceeval::prelude::*;

// No `agent = ..`: the default agent from niceeval.toml replays a recorded refund that needed
// a human's approval. The recorded `input.requested` event parks the first turn, so
// `t.respond` works exactly as with a live agent.
#[eval(tags = ["replay"])]
async fn default_agent_from_config(t: &mut Eval) -> niceeval::Result {
    let parked = t
        .send("I want a refund for order #456, the espresso machine leaks.")
        .await?;
    t.check(json!(parked.status), equals("waiting"));
    t.check(t.reply(), includes("supervisor's approval"));

    t.respond("Yes, approved.").await?;
    t.check(
        t.reply(),
        includes(Regex::new(r"refund of \$349\.00 .* is on its way")?),
    );
    t.check(
        t.reply(),
        similarity("Approved: your refund of $349.00 for order #456 is on its way. It will reach your card in 3-5 business days.")
            .at_least(0.8),
    );
    Ok(())
}

// Recorded usage events carry the model's cost, so `t.usage()` has tokens and dollars.
#[eval(tags = ["replay", "usage"])]
async fn recorded_cost(t: &mut Eval) -> niceeval::Result {
    t.send("I want a refund for order #456").await?;
    t.respond("Yes").await?;
    let usage = t.usage();
    t.check(usage.total_tokens(), equals(2157));
    t.check(usage.cache_read_tokens, equals(1600));
    t.check(
        usage.cost_usd,
        satisfies(|usd: &f64| (*usd - 0.00623).abs() < 1e-9, "costs $0.00623"),
    );
    Ok(())
}

// An explicit replay agent: `replay(path)` with a path relative to the crate's directory
// (where `cargo test` runs). This transcript records a failed lookup (a typo in the order
// number) and its correction.
fn recorded_status_chat() -> impl Agent {
    replay("transcripts/where_is_my_order.jsonl")
}

// Two turns of the recorded status conversation.
#[eval(agent = recorded_status_chat, tags = ["replay"])]
async fn replayed_conversation(t: &mut Eval) -> niceeval::Result {
    let first = t.send("Where is my order #798?").await?;
    t.check(&first.message, includes("couldn't find order #798"));
    let failed = first.events.iter().any(|e| {
        matches!(
            e,
            Event::ActionResult {
                status: niceeval::ActionStatus::Failed,
                ..
            }
        )
    });
    t.check(failed, equals(true));

    t.send("Sorry, I meant #789.").await?;
    t.check(t.reply(), includes("ZX-4471"));
    Ok(())
}
