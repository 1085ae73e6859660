//! Custom checks for the shop's evals — the kind a team writes once and shares between eval
//! files: [`money_format`], a value assertion implementing [`Assertion`], and
//! [`RefundsMatchOrders`], a check over a whole run's events implementing [`ScopedCheck`].

use std::collections::HashMap;
use std::sync::LazyLock;

use niceeval::scope::{RunView, ScopedCheck};
use niceeval::{ActionStatus, Assertion, Event, Grade, Regex, Subject};

/// A dollar amount as customers might write it: `$24`, `$24.0`, `$1,024.00`...
static AMOUNT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"\$[0-9][0-9,]*(\.[0-9]+)?").expect("the amount pattern is a valid regex")
});

/// The house style for amounts: `$24.00`, `$1,024.00`.
static HOUSE_STYLE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^\$[0-9]{1,3}(,[0-9]{3})*\.[0-9]{2}$").expect("the style pattern is a valid regex")
});

/// Every dollar amount in the text is written in the house style, `$N.NN`.
///
/// The score is the fraction of amounts written correctly (1 when there are none), so it works
/// as a gate (any mistake-free reply passes) or, with `.at_least(x)`, as a soft quality signal.
///
/// ```
/// use niceeval::prelude::*;
/// use niceeval::AssertionResult;
/// use niceeval_examples::checks::money_format;
///
/// let r = AssertionResult::evaluate(&money_format(), &"Refunded $24.00 of $30".subject());
/// assert_eq!(r.score, 0.5);
/// assert_eq!(r.reason, r#"1 of 2 amount(s) not written as $N.NN: "$30""#);
/// ```
pub fn money_format() -> MoneyFormat {
    MoneyFormat
}

/// The assertion returned by [`money_format`].
#[derive(Debug, Clone, Copy, Default)]
pub struct MoneyFormat;

impl Assertion for MoneyFormat {
    fn describe(&self) -> String {
        "money_format".to_string()
    }

    fn evaluate(&self, value: &Subject<'_>) -> Grade {
        let Some(text) = value.text() else {
            return Grade::fail("there is no value (None) to look for amounts in");
        };
        let amounts: Vec<&str> = AMOUNT.find_iter(&text).map(|m| m.as_str()).collect();
        if amounts.is_empty() {
            return Grade::pass("no amounts in the text");
        }
        let wrong: Vec<String> = amounts
            .iter()
            .filter(|a| !HOUSE_STYLE.is_match(a))
            .map(|a| format!("{a:?}"))
            .collect();
        let score = 1.0 - wrong.len() as f64 / amounts.len() as f64;
        if wrong.is_empty() {
            Grade::pass(format!("all {} amount(s) written as $N.NN", amounts.len()))
        } else {
            Grade::score(
                score,
                format!(
                    "{} of {} amount(s) not written as $N.NN: {}",
                    wrong.len(),
                    amounts.len(),
                    wrong.join(", ")
                ),
            )
        }
    }
}

/// Over the whole run: every completed `issue_refund` call refunds exactly the total that an
/// earlier completed `lookup_order` call returned for that order. Register it with
/// `t.scoped(RefundsMatchOrders)`; it is evaluated after the eval body returns.
///
/// A run without refunds passes. The reason lists each refund that does not match.
#[derive(Debug, Clone, Copy, Default)]
pub struct RefundsMatchOrders;

impl ScopedCheck for RefundsMatchOrders {
    fn describe(&self) -> String {
        "refunds_match_orders".to_string()
    }

    fn evaluate(&self, run: &RunView<'_>) -> Grade {
        // Call ids pair an `action.called` with the `action.result` that follows it.
        let mut open_calls: HashMap<&str, (&str, &niceeval::Value)> = HashMap::new();
        let mut totals: HashMap<String, u64> = HashMap::new();
        let mut refunds = 0;
        let mut problems = Vec::new();
        for event in run.events {
            match event {
                Event::ActionCalled {
                    call_id,
                    name,
                    input,
                } => {
                    open_calls.insert(call_id, (name, input));
                }
                Event::ActionResult {
                    call_id,
                    output,
                    status: ActionStatus::Completed,
                } => {
                    let Some((name, input)) = open_calls.remove(call_id.as_str()) else {
                        continue;
                    };
                    match name {
                        "lookup_order" => {
                            if let (Some(id), Some(total)) =
                                (output["order_id"].as_str(), output["total_cents"].as_u64())
                            {
                                totals.insert(id.to_string(), total);
                            }
                        }
                        "issue_refund" => {
                            refunds += 1;
                            let id = input["order_id"].as_str().unwrap_or("?");
                            let amount = input["amount_cents"].as_u64();
                            match (totals.get(id), amount) {
                                (None, _) => problems.push(format!(
                                    "order #{id} was refunded without being looked up first"
                                )),
                                (Some(total), Some(amount)) if *total == amount => {}
                                (Some(total), amount) => problems.push(format!(
                                    "order #{id} was refunded {amount:?} cents but its total is {total}"
                                )),
                            }
                        }
                        _ => {}
                    }
                }
                _ => {}
            }
        }
        match (refunds, problems.is_empty()) {
            (0, _) => Grade::pass("no refunds were issued"),
            (n, true) => Grade::pass(format!("{n} refund(s), each for its order's total")),
            (_, false) => Grade::fail(problems.join("; ")),
        }
    }
}
