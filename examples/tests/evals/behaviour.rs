//! What the agent *did*, not only what it said: scoped assertions over the event stream and
//! efficiency budgets. Each is registered when called and evaluated after the body returns;
//! each chains `.at_least(x)` / `.gate()` like any assertion.

use niceeval::prelude::*;
use niceeval_examples::support_bot;

/// A small refund: the order is looked up, then refunded — once each, in that order, with the
/// arguments the customer gave, and no failed tool call.
#[eval(agent = support_bot, tags = ["scoped"])]
async fn refund_calls_its_tools_in_order(t: &mut Eval) -> niceeval::Result {
    t.send("I want a refund for order #123").await?;
    t.called_tool("lookup_order")
        .input(json!({ "order_id": "123" }))
        .count(1);
    t.called_tool("issue_refund")
        .input(InputMatch::object([(
            "amount_cents",
            InputMatch::predicate("a positive amount", |v| {
                v.as_u64().is_some_and(|cents| cents > 0)
            }),
        )]))
        .status(ActionStatus::Completed);
    t.tool_order(["lookup_order", "issue_refund"]);
    t.no_failed_actions();
    t.succeeded();
    t.message_includes(Regex::new(r"refund of \$\d+\.\d{2}")?);
    t.not_event("error");
    t.event("thinking").count(1);
    Ok(())
}

/// A greeting needs no tool at all.
#[eval(agent = support_bot, tags = ["scoped"])]
async fn greeting_uses_no_tools(t: &mut Eval) -> niceeval::Result {
    t.send("Hello there!").await?;
    t.used_no_tools();
    t.not_called_tool("issue_refund");
    t.events_satisfy("every message is non-empty", |events: &[Event]| {
        events
            .iter()
            .all(|e| !matches!(e, Event::Message { text, .. } if text.trim().is_empty()))
    });
    Ok(())
}

/// An unknown order makes `lookup_order` fail. The failed call is visible to the scoped
/// assertions: here we expect it, and check that no refund was attempted.
#[eval(agent = support_bot, tags = ["scoped"])]
async fn unknown_order_fails_the_lookup_and_refunds_nothing(t: &mut Eval) -> niceeval::Result {
    t.send("Where is order #999?").await?;
    t.called_tool("lookup_order")
        .status(ActionStatus::Failed)
        .count(1);
    t.not_called_tool("issue_refund");
    t.message_includes("999");
    Ok(())
}

/// A large refund parks the run on a human approval; assertions on a `Turn` only see that
/// turn's events.
#[eval(agent = support_bot, tags = ["scoped", "hitl"])]
async fn large_refund_parks_then_refunds_after_approval(t: &mut Eval) -> niceeval::Result {
    let asked = t.send("I want a refund for order #456").await?;
    asked.event("input.requested").count(1);
    asked.not_called_tool("issue_refund");
    // `parked` on the turn: that turn ended waiting. (`t.parked()` looks at the whole run,
    // which ends answered.)
    asked.parked();
    let approved = t.respond("Yes, approved.").await?;
    approved.called_tool("issue_refund").count(1);
    t.event_order(["input.requested", "action.called"]);
    Ok(())
}

/// Budgets: tokens, tool calls and cost (estimated from the price table, since the bot names
/// its model on every `usage` event). Gates by default; `.at_least(x)` makes one soft.
#[eval(agent = support_bot, tags = ["efficiency"])]
async fn refund_stays_within_budget(t: &mut Eval) -> niceeval::Result {
    t.send("I want a refund for order #123").await?;
    t.max_tokens(5_000);
    t.max_tool_calls(3);
    t.max_cost(0.01);
    // A deliberately tight budget, soft: recorded with its score (limit / actual), and only a
    // failure under strict mode.
    t.max_tokens(100).at_least(0.05);
    t.check(
        t.usage().output_tokens,
        satisfies(|n: &u64| *n < 1_000, "output is concise"),
    );
    Ok(())
}
