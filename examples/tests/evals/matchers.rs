//! The value matchers, one eval per family: `includes` / `excludes` (substring or `Regex`),
//! `equals` (deep, JSON-aware), `matches::<T>()` (serde), `matches_schema` (JSON Schema),
//! `similarity` (soft by default; `.at_least`, `.gate`) and `satisfies` (typed closures).
//!
//! Every matcher is a gate unless its docs say otherwise; `similarity` is soft with threshold
//! 0.6. `.at_least(x)` makes any assertion soft with threshold `x`; `.gate()` makes it a gate
//! again (keeping the threshold); the last call wins.

use niceeval::prelude::*;
use niceeval_examples::support_bot;
use serde::Deserialize;

// `includes` and `excludes` take a `&str` (a case-sensitive substring) or a `Regex` (matched
// anywhere in the text).
#[eval(agent = support_bot, tags = ["matchers"])]
async fn includes_and_excludes(t: &mut Eval) -> niceeval::Result {
    t.send("Where is my order #789?").await?;
    t.check(t.reply(), includes("Coffee beans"));
    t.check(
        t.reply(),
        includes(Regex::new(r"tracking number is [A-Z]{2}-\d{4}")?),
    );
    t.check(t.reply(), excludes("refund"));
    // No internal tool names or call ids leak into what the customer reads.
    t.check(t.reply(), excludes(Regex::new(r"lookup_order|call_\d+")?));
    Ok(())
}

// `equals` compares deeply, as JSON: key order does not matter and `2400 == 2400.0`. It takes
// anything `Serialize`, and checks `Option`s (`None` is a missing value), strings and numbers.
#[eval(agent = support_bot, tags = ["matchers"])]
async fn equals_on_structured_data(t: &mut Eval) -> niceeval::Result {
    let turn = t.send("Please refund order 123").await?;
    t.check(
        &turn.data,
        equals(json!({ "status": "refunded", "amount_cents": 2400.0, "order_id": "123", "intent": "refund" })),
    );
    t.check(
        turn.data.as_ref().map(|d| d["intent"].clone()),
        equals("refund"),
    );
    t.check(t.turns().len(), equals(1));
    Ok(())
}

/// The order as the bot sends it when asked for JSON.
#[derive(Debug, Deserialize)]
struct OrderDetails {
    order_id: String,
    item: String,
    total_cents: u64,
    status: String,
    #[serde(default)]
    tracking: Option<String>,
}

// `matches::<T>()` passes when the value deserializes into `T`; text is parsed as JSON first,
// so it works on a reply that *is* JSON as well as on `turn.data`. Once the shape is required,
// the body can deserialize it itself and check fields.
#[eval(agent = support_bot, tags = ["matchers", "structured"])]
async fn matches_a_serde_type(t: &mut Eval) -> niceeval::Result {
    let turn = t.send("Send me order #789 as JSON").await?;
    t.require(t.reply(), matches::<OrderDetails>())?;
    let order: OrderDetails = serde_json::from_str(t.reply())?;
    t.check(&order.order_id, equals("789"));
    t.check(&order.item, includes("Coffee"));
    t.check(order.total_cents, equals(3250));
    t.check(&order.status, equals("shipped"));
    t.check(order.tracking, equals(Some("ZX-4471")));
    // A reply that is a JSON object also becomes the turn's structured data.
    t.check(&turn.data, matches::<OrderDetails>());
    Ok(())
}

// `matches_schema` validates against a JSON Schema (drafts 4 to 2020-12).
#[eval(agent = support_bot, tags = ["matchers", "structured"])]
async fn matches_json_schema(t: &mut Eval) -> niceeval::Result {
    let turn = t.send("order 123 as json").await?;
    let order_schema = json!({
        "type": "object",
        "required": ["order_id", "item", "total_cents", "status"],
        "properties": {
            "order_id": { "type": "string", "pattern": "^[0-9]+$" },
            "total_cents": { "type": "integer", "minimum": 0 },
            "status": { "enum": ["paid", "shipped", "delivered", "refunded"] }
        }
    });
    t.check(t.reply(), matches_schema(order_schema));
    t.check(
        &turn.data,
        matches_schema(json!({ "type": "object", "properties": { "delivered_on": { "type": "string", "pattern": "^[0-9]{4}-[0-9]{2}-[0-9]{2}$" } } })),
    );
    Ok(())
}

// `command_succeeded()` checks a finished command (`std::process::Output`, an exit status or a
// JSON command result): a build, a test run or a validator over what the agent produced. A
// failure shows the exit code and the end of stderr. Here Python's JSON parser must accept the
// reply.
#[eval(agent = support_bot, tags = ["matchers", "structured"])]
async fn command_succeeded_on_a_real_process(t: &mut Eval) -> niceeval::Result {
    t.send("order 123 as json").await?;
    let dir = tempfile::tempdir()?;
    let file = dir.path().join("reply.json");
    std::fs::write(&file, t.reply())?;
    let validated = std::process::Command::new("python3")
        .args(["-m", "json.tool"])
        .arg(&file)
        .output()?;
    t.check(validated, command_succeeded());
    Ok(())
}

// `similarity` is normalized Levenshtein similarity (1 = identical). It is soft: by default it
// needs 0.6, and below that it marks the eval instead of failing it. `.at_least(x)` sets the
// threshold; `.gate()` makes it a gate, so falling below the threshold fails the eval.
#[eval(agent = support_bot, tags = ["matchers"])]
async fn similarity_soft_and_gate(t: &mut Eval) -> niceeval::Result {
    t.send("Where is order #123?").await?;
    // The reply is "Order #123 (Blue ceramic mug) was delivered on 2024-05-02."
    let expected = "Order #123 (Blue mug) was delivered on 2024-05-02.";
    t.check(t.reply(), similarity(expected)); // soft, needs 0.6
    t.check(t.reply(), similarity(expected).at_least(0.8)); // soft, needs 0.8
    t.check(t.reply(), similarity(expected).gate()); // gate, needs 0.6
    t.check(t.reply(), similarity(expected).at_least(0.8).gate()); // gate, needs 0.8
    Ok(())
}

// `satisfies(predicate, label)`: the closure's parameter type picks the view of the value —
// `&str` for text, `&Value` for JSON, `&u64` / `&i64` / `&f64` / `&usize` for numbers, `&bool`.
// A value without that view (say, `None` where a number was expected) fails with a reason.
#[eval(agent = support_bot, tags = ["matchers"])]
async fn satisfies_typed_closures(t: &mut Eval) -> niceeval::Result {
    let turn = t.send("I want my money back for order #789").await?;
    t.check(
        t.reply(),
        satisfies(
            |s: &str| s.split_whitespace().count() < 40,
            "reply under 40 words",
        ),
    );
    t.check(
        &turn.data,
        satisfies(
            |data: &Value| data["order_id"] == "789",
            "data names order 789",
        ),
    );
    let amount = turn.data.as_ref().map(|d| d["amount_cents"].clone());
    t.check(
        amount,
        satisfies(
            |cents: &u64| *cents <= 10_000,
            "refund within the bot's own limit",
        ),
    );
    t.check(
        t.usage().total_tokens(),
        satisfies(|n: &u64| *n < 2_000, "turn under 2,000 tokens"),
    );
    t.check(
        turn.status == TurnStatus::Completed,
        satisfies(|done: &bool| *done, "turn completed"),
    );
    Ok(())
}
