//! The demo agent: a deterministic customer-support bot for the shop in [`crate::orders`].
//!
//! It reads the customer's message (and earlier messages of the session), decides what the
//! customer wants, calls its tools through [`EventSink::tool_call`], reports token usage as a
//! model-backed bot would, and answers. No randomness, no clock, no network: the same input
//! always produces the same events.
//!
//! What it understands:
//!
//! - **status** ("where is my order #789?"): calls `lookup_order`, answers with the order's
//!   status, sets structured data `{"intent": "status", "order_id", "status"}`;
//! - **refund** ("I want a refund for order #123"): calls `lookup_order`, then `issue_refund`
//!   for totals up to [`APPROVAL_LIMIT_CENTS`]; above it, asks a human for approval with an
//!   `input.requested` event and parks the turn until the eval responds (`t.respond`);
//! - **export** ("send me order #789 as JSON"): answers with the order as a JSON text;
//! - **greetings**, and anything else with a short help text.
//!
//! An unknown order number makes the `lookup_order` call fail (status `failed`) and the bot
//! says it could not find the order. An empty message is an agent error.

use niceeval::{
    ActionStatus, Event,
    agent::{Agent, AgentError, EventSink, Message, Request},
    async_trait,
};
use niceeval::{Role, Value};
use serde_json::json;

use crate::orders::{self, Order, OrderStatus, dollars};

/// Refunds above this total (in cents, so $100.00) need a human's approval.
pub const APPROVAL_LIMIT_CENTS: u64 = 10_000;

/// The model the bot pretends to be, named on its `usage` events so costs can be estimated
/// from niceeval's price table.
pub const MODEL: &str = "openai/gpt-4o-mini";

/// Tokens of the (imaginary) system prompt, counted in every model call's input.
const SYSTEM_PROMPT_TOKENS: u64 = 120;

/// The demo support bot, ready to be evaluated: `#[eval(agent = support_bot)]`.
///
/// ```
/// use niceeval::prelude::*;
/// use niceeval_examples::support_bot;
///
/// #[eval(agent = support_bot)]
/// async fn refund(t: &mut Eval) -> niceeval::Result {
///     t.send("I want a refund for order #123").await?;
///     t.check(t.reply(), includes("$24.00"));
///     Ok(())
/// }
/// # fn main() {}
/// ```
pub fn support_bot() -> impl Agent {
    SupportBot
}

/// The agent behind [`support_bot`]; see the module docs for what it does.
#[derive(Debug, Clone, Copy, Default)]
pub struct SupportBot;

#[async_trait]
impl Agent for SupportBot {
    async fn send(&self, request: Request) -> Result<(), AgentError> {
        let Request {
            input,
            history,
            responding_to,
            events,
            ..
        } = request;
        let text = input.text.trim();
        if text.is_empty() {
            return Err(AgentError::new(
                "the customer message is empty; send a question about an order",
            ));
        }
        let mut turn = TurnWriter::new(&events, &history, text);
        match responding_to {
            Some(approval) => turn.answer_approval(&approval, text),
            None => turn.answer(text, &history),
        }
        Ok(())
    }

    fn name(&self) -> String {
        "support_bot".to_string()
    }
}

/// What the customer wants.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Intent {
    Refund,
    Export,
    Status,
    Greeting,
}

impl Intent {
    fn as_str(self) -> &'static str {
        match self {
            Intent::Refund => "refund",
            Intent::Export => "export",
            Intent::Status => "status",
            Intent::Greeting => "greeting",
        }
    }

    /// The intent a message states, if any. Refunds win over everything else.
    fn of(text: &str) -> Option<Intent> {
        let lower = text.to_lowercase();
        let words: Vec<&str> = lower
            .split(|c: char| !c.is_alphanumeric())
            .filter(|w| !w.is_empty())
            .collect();
        let has = |candidates: &[&str]| words.iter().any(|w| candidates.contains(w));
        if has(&["refund", "refunded", "return"]) || lower.contains("money back") {
            Some(Intent::Refund)
        } else if has(&["json"]) {
            Some(Intent::Export)
        } else if has(&[
            "where",
            "status",
            "track",
            "tracking",
            "arrive",
            "shipped",
            "delivered",
        ]) {
            Some(Intent::Status)
        } else if has(&["hi", "hello", "hey"]) {
            Some(Intent::Greeting)
        } else {
            None
        }
    }
}

/// The first order number in a message: a run of three or more digits, with or without `#`.
fn order_id(text: &str) -> Option<String> {
    text.split(|c: char| !c.is_ascii_digit())
        .find(|digits| digits.len() >= 3)
        .map(str::to_string)
}

/// What the customer said earlier in this session, newest first.
fn earlier_user_messages(history: &[Message]) -> impl Iterator<Item = &str> {
    history
        .iter()
        .rev()
        .filter(|m| m.role == Role::User)
        .map(|m| m.text.as_str())
}

/// Writes one turn's events: thinking, tool calls, usage, the answer and structured data.
struct TurnWriter<'a> {
    events: &'a EventSink,
    /// Input tokens of the next model call: system prompt, history, input, tool results so far.
    context_tokens: u64,
}

/// A rough token count: about four characters per token.
fn tokens(text: &str) -> u64 {
    (text.chars().count() as u64).div_ceil(4)
}

impl<'a> TurnWriter<'a> {
    fn new(events: &'a EventSink, history: &[Message], input: &str) -> Self {
        let history_tokens: u64 = history.iter().map(|m| tokens(&m.text)).sum();
        TurnWriter {
            events,
            context_tokens: SYSTEM_PROMPT_TOKENS + history_tokens + tokens(input),
        }
    }

    fn think(&self, text: String) {
        self.events.emit(Event::Thinking { text: text.into() });
    }

    /// One model call that decides on a tool call (a short output).
    fn plan(&self) {
        self.events.model_usage(MODEL, self.context_tokens, 16);
    }

    /// Calls `lookup_order`; `None` (and a failed call) for an unknown order.
    fn lookup(&mut self, id: &str) -> Option<&'static Order> {
        let input = json!({ "order_id": id });
        let found = orders::find(id);
        let output = match found {
            Some(order) => {
                let output = order.to_json();
                self.events.tool_call("lookup_order", input, output.clone());
                output
            }
            None => {
                let output = json!({ "error": format!("no order #{id}") });
                self.events.tool_call_with_status(
                    "lookup_order",
                    input,
                    output.clone(),
                    ActionStatus::Failed,
                );
                output
            }
        };
        self.context_tokens += 16 + tokens(&output.to_string());
        found
    }

    /// The final model call: the answer, its usage, and the turn's structured data.
    fn reply(&self, text: &str, data: Option<Value>) {
        self.events
            .model_usage(MODEL, self.context_tokens, tokens(text));
        self.events.say(text);
        if let Some(data) = data {
            self.events.set_data(data);
        }
    }

    fn answer(&mut self, text: &str, history: &[Message]) {
        let stated = Intent::of(text);
        // A message without an intent continues the conversation ("It's #123" after "I want a
        // refund"); one without an order number refers to the order discussed before.
        let intent = stated.or_else(|| earlier_user_messages(history).find_map(Intent::of));
        let id = order_id(text).or_else(|| earlier_user_messages(history).find_map(order_id));
        match (intent, id) {
            (Some(Intent::Greeting), _) => self.reply(
                "Hi! I can tell you where an order is or refund it. What is your order number?",
                None,
            ),
            (None, Some(id)) => self.reply(
                &format!(
                    "What would you like to do with order #{id}? I can check its status or refund it."
                ),
                None,
            ),
            (None, None) => self.reply(
                "Sorry, I can only help with orders: their status and refunds. Please tell me your order number, for example #123.",
                None,
            ),
            (Some(intent), None) => self.reply(
                "Which order is it? Please send the order number, for example #123.",
                Some(json!({ "intent": intent.as_str(), "order_id": null })),
            ),
            (Some(intent), Some(id)) => {
                self.think(format!(
                    "The customer wants {} for order #{id}; look the order up first.",
                    match intent {
                        Intent::Refund => "a refund",
                        Intent::Export => "the order details as JSON",
                        _ => "the status",
                    }
                ));
                self.plan();
                match self.lookup(&id) {
                    None => self.reply(
                        &format!(
                            "I couldn't find order #{id}. Please check the number on your order confirmation."
                        ),
                        Some(json!({ "intent": intent.as_str(), "order_id": id, "error": "order_not_found" })),
                    ),
                    Some(order) => match intent {
                        Intent::Refund => self.refund(order),
                        Intent::Export => self.reply(&order.to_json().to_string(), None),
                        _ => self.status(order),
                    },
                }
            }
        }
    }

    fn status(&self, order: &Order) {
        let what = format!("Order #{} ({})", order.id, order.item);
        let text = match order.status {
            OrderStatus::Paid => format!("{what} is paid and will ship within 1 business day."),
            OrderStatus::Shipped => format!(
                "{what} has shipped; the tracking number is {}. It should arrive within 2 business days.",
                order.tracking.unwrap_or("not available yet")
            ),
            OrderStatus::Delivered => format!(
                "{what} was delivered on {}.",
                order.delivered_on.unwrap_or("an unknown date")
            ),
            OrderStatus::Refunded => format!("{what} was refunded."),
        };
        self.reply(
            &text,
            Some(json!({ "intent": "status", "order_id": order.id, "status": order.status.as_str() })),
        );
    }

    fn refund(&mut self, order: &Order) {
        let amount = dollars(order.total_cents);
        let data = |status: &str| json!({ "intent": "refund", "order_id": order.id, "amount_cents": order.total_cents, "status": status });
        if order.status == OrderStatus::Refunded {
            return self.reply(
                &format!(
                    "Order #{} ({}) was already refunded ({amount}).",
                    order.id, order.item
                ),
                Some(data("already_refunded")),
            );
        }
        if order.total_cents > APPROVAL_LIMIT_CENTS {
            self.events.emit(Event::InputRequested {
                request: json!({
                    "question": format!("Approve a refund of {amount} for order #{} ({})?", order.id, order.item),
                    "action": "issue_refund",
                    "order_id": order.id,
                    "amount_cents": order.total_cents,
                }),
            });
            return self.reply(
                &format!(
                    "A refund of {amount} for order #{} needs a supervisor's approval. I have asked for it and will get back to you.",
                    order.id
                ),
                Some(data("awaiting_approval")),
            );
        }
        self.issue_refund(order);
        self.reply(
            &format!(
                "Your refund of {amount} for order #{} ({}) is on its way. It will reach your card in 3-5 business days.",
                order.id, order.item
            ),
            Some(data("refunded")),
        );
    }

    fn issue_refund(&mut self, order: &Order) {
        let output = json!({ "refund_id": format!("R-{}", order.id), "status": "issued" });
        self.context_tokens += 16 + tokens(&output.to_string());
        self.events.tool_call(
            "issue_refund",
            json!({ "order_id": order.id, "amount_cents": order.total_cents }),
            output,
        );
    }

    /// The continuation of a turn parked on `input.requested`: the human approved or declined.
    fn answer_approval(&mut self, approval: &Value, answer: &str) {
        let Some(order) = approval["order_id"].as_str().and_then(orders::find) else {
            return self.reply(
                "I lost track of which refund this approval is for. Please start again with the order number.",
                None,
            );
        };
        let lower = answer.to_lowercase();
        let words: Vec<&str> = lower
            .split(|c: char| !c.is_alphanumeric())
            .filter(|w| !w.is_empty())
            .collect();
        let declined = words
            .iter()
            .any(|w| ["no", "deny", "denied", "decline", "declined", "reject"].contains(w));
        let approved = !declined
            && words
                .iter()
                .any(|w| ["yes", "approve", "approved", "ok", "okay"].contains(w));
        let amount = dollars(order.total_cents);
        self.plan();
        if approved {
            self.issue_refund(order);
            self.reply(
                &format!(
                    "Approved: your refund of {amount} for order #{} ({}) is on its way. It will reach your card in 3-5 business days.",
                    order.id, order.item
                ),
                Some(json!({ "intent": "refund", "order_id": order.id, "amount_cents": order.total_cents, "status": "refunded" })),
            );
        } else {
            self.events.tool_call_with_status(
                "issue_refund",
                json!({ "order_id": order.id, "amount_cents": order.total_cents }),
                json!({ "error": "declined by a human reviewer" }),
                ActionStatus::Rejected,
            );
            self.reply(
                &format!(
                    "Sorry, the refund of {amount} for order #{} was not approved. A supervisor will email you with the details.",
                    order.id
                ),
                Some(json!({ "intent": "refund", "order_id": order.id, "amount_cents": order.total_cents, "status": "declined" })),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn intents_and_order_numbers() {
        assert_eq!(
            Intent::of("I want my money back for #123"),
            Some(Intent::Refund)
        );
        assert_eq!(Intent::of("Where is order 789?"), Some(Intent::Status));
        assert_eq!(Intent::of("order 789 as JSON please"), Some(Intent::Export));
        assert_eq!(Intent::of("Hello there"), Some(Intent::Greeting));
        assert_eq!(
            Intent::of("this is a chair"),
            None,
            "`hi` inside a word is not a greeting"
        );
        assert_eq!(order_id("order #456, please").as_deref(), Some("456"));
        assert_eq!(order_id("I have 2 mugs"), None);
    }

    #[test]
    fn same_input_same_events() {
        let run = || {
            let sink = EventSink::default();
            let mut turn = TurnWriter::new(&sink, &[], "refund order #123");
            turn.answer("refund order #123", &[]);
            sink.snapshot()
        };
        assert_eq!(run(), run());
        let names: Vec<&str> = run().iter().map(Event::kind).collect();
        assert_eq!(
            names,
            [
                "thinking",
                "usage",
                "action.called",
                "action.result",
                "action.called",
                "action.result",
                "usage",
                "message"
            ]
        );
    }
}
