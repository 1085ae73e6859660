//! Writing your own checks: `make_assertion` (a scoring closure), an `Assertion` implementation
//! (`money_format`, in `examples/src/checks.rs`), weights and named metrics, and a check over
//! the whole run's events (`ScopedCheck`, registered with `t.scoped`).

use niceeval::prelude::*;
use niceeval::{Grade, Severity, Subject};
use niceeval_examples::checks::{RefundsMatchOrders, money_format};
use niceeval_examples::support_bot;

// `make_assertion(name)` turns a closure into an assertion. `.score(f)` returns a number in
// [0, 1]; `.grade(f)` returns a full `Grade` with a reason. The closure's parameter type picks
// the view of the value, as with `satisfies`. Custom assertions are gates unless given a
// severity, and chain `.at_least` / `.gate` like the built-ins.
#[eval(agent = support_bot, tags = ["custom"])]
async fn make_assertion_scores_and_grades(t: &mut Eval) -> niceeval::Result {
    t.send("Where is my order #789?").await?;

    // A score between 0 and 1: 1 for replies of up to 25 words, less for longer ones.
    let brevity = make_assertion("brevity")
        .severity(Severity::Soft)
        .threshold(0.5)
        .score(|s: &str| (25.0 / s.split_whitespace().count() as f64).min(1.0));
    t.check(t.reply(), brevity);

    // A full grade with a reason, so a failure explains itself.
    let mentions_item = make_assertion("mentions_item").grade(|s: &str| {
        let items = ["mug", "Espresso", "Coffee beans", "frother", "tumbler"];
        match items.iter().find(|item| s.contains(*item)) {
            Some(item) => Grade::pass(format!("names the item ({item})")),
            None => Grade::fail("does not say which item the order is for"),
        }
    });
    t.check(t.reply(), mentions_item);
    Ok(())
}

// An `Assertion` implementation from the shared checks module: the score is the fraction of
// dollar amounts written as $N.NN. As a gate it needs a perfect reply; with `.at_least(x)`
// it is a soft signal.
#[eval(agent = support_bot, tags = ["custom"])]
async fn assertion_trait_implementation(t: &mut Eval) -> niceeval::Result {
    t.send("Can I get a refund for order #789?").await?;
    t.check(t.reply(), money_format());
    t.check("We refunded $32.50 of $40", money_format().at_least(0.5));
    Ok(())
}

// An `Assertion` can also be written right where it is used.
struct EndsWithPunctuation;

impl Assertion for EndsWithPunctuation {
    fn describe(&self) -> String {
        "ends_with_punctuation".to_string()
    }

    fn evaluate(&self, value: &Subject<'_>) -> Grade {
        let text = value.text().unwrap_or_default();
        let last = text.trim_end().chars().last();
        Grade::from_bool(
            matches!(last, Some('.' | '!' | '?')),
            format!("ends with {last:?}"),
        )
    }
}

// The inline assertion above, on a reply.
#[eval(agent = support_bot, tags = ["custom"])]
async fn inline_assertion(t: &mut Eval) -> niceeval::Result {
    t.send("hello").await?;
    t.check(t.reply(), EndsWithPunctuation);
    Ok(())
}

// Weights and metrics: the eval's score is the weighted mean of its assertions' scores
// (weight 0 records an assertion without counting it), and each assertion can name the
// metric it feeds. Both are kept in the eval's report (`EvalReport::assertions`).
#[eval(agent = support_bot, tags = ["custom"])]
async fn weights_and_metrics(t: &mut Eval) -> niceeval::Result {
    t.send("What's the status of order #789?").await?;
    t.check(
        t.reply(),
        includes("ZX-4471").weight(3.0).metric("accuracy"),
    );
    t.check(t.reply(), includes("2 business days").metric("accuracy"));
    t.check(t.reply(), money_format().metric("style"));
    // Weight 0: a soft signal without threshold (it always passes), recorded for the
    // record but left out of the score.
    let words = make_assertion("word_count")
        .severity(Severity::Soft)
        .score(|s: &str| (s.split_whitespace().count() as f64 / 100.0).min(1.0));
    t.check(t.reply(), words.weight(0.0).metric("style"));
    Ok(())
}

// A check over the run's events rather than one value: `t.scoped` registers a
// `ScopedCheck`, which niceeval evaluates after the body returns, over every event of the run
// (tool calls of all turns included). This one checks that each refund paid exactly the total
// that `lookup_order` reported for its order.
#[eval(agent = support_bot, tags = ["custom", "refunds"])]
async fn scoped_check_over_events(t: &mut Eval) -> niceeval::Result {
    t.scoped(RefundsMatchOrders);
    t.send("I want a refund for order #123").await?;
    t.send("And also a refund for #789, please").await?;
    t.check(t.reply(), includes("$32.50"));
    Ok(())
}
