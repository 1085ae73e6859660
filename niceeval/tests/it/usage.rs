//! Tokens and cost: every run's usage and the total of an eval run several times, the judge's
//! calls counted apart from the agent's, a suite total, and the price table's estimate where
//! the agent reports tokens but no cost — in `t.usage()` and in the context of assertions as
//! data. Agents and judge talk to a fake OpenAI-compatible server on 127.0.0.1.

#![cfg(feature = "providers")]

use crate::support;

use niceeval::__private::BoxFuture;
use niceeval::reporter::{EvalSummary, SuiteReport};
use niceeval::spec::{self, AssertSpec};
use niceeval::{Eval, Outcome};
use serde_json::json;
use support::{Crate, FakeProvider, Reply, define, openai_choice, run};

type BodyResult = Result<(), niceeval::Error>;

/// `[judge]` on the fake server, and prices for the fake models: $1 per 1M input tokens, $2
/// per 1M output tokens for the agent; $10 / $20 for the judge.
fn toml(server: &FakeProvider) -> String {
    format!(
        "[judge]\nmodel = \"openai/judge-fake\"\nbase_url = \"{url}/v1\"\ncache = \"off\"\n\n\
         [agent]\ntype = \"openai\"\nmodel = \"openai/agent-fake\"\nbase_url = \"{url}/v1\"\n\n\
         [prices.\"openai/agent-fake\"]\ninput = 1.0\noutput = 2.0\n\n\
         [prices.\"openai/judge-fake\"]\ninput = 10.0\noutput = 20.0\n",
        url = server.url
    )
}

/// The agent's answers are plain text (10 prompt + 5 completion tokens); the judge's pick "Y"
/// (120 + 30 tokens). Which is which: the judge's request names its tool.
fn server() -> FakeProvider {
    FakeProvider::start(|_, seen| {
        if seen.body.to_string().contains("select_choice") {
            openai_choice("Y", "it does")
        } else {
            Reply::json(support::openai_text("Paris."))
        }
    })
}

fn asks_and_judges(t: &mut Eval) -> BoxFuture<'_, BodyResult> {
    Box::pin(async move {
        t.send("What is the capital of France?").await?;
        t.judge().closed_qa("Does it name a city?");
        Ok(())
    })
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-12
}

#[test]
fn five_runs_show_every_run_and_the_total_with_the_judge_apart() {
    let server = server();
    let krate = Crate::new(&toml(&server));
    let report = run(define("five_runs", &krate, asks_and_judges).with_runs(5));
    assert_eq!(report.outcome, Outcome::Passed, "{}", report.render());
    assert_eq!(report.runs.len(), 5);

    // Each run: the agent's 15 tokens at $1/$2 per 1M, the judge's 150 at $10/$20 per 1M.
    let agent_run = 10.0 * 1e-6 + 5.0 * 2e-6;
    let judge_run = 120.0 * 10e-6 + 30.0 * 20e-6;
    for run in &report.runs {
        assert_eq!(run.usage.total_tokens(), 15);
        assert!(
            close(run.cost_usd.expect("estimated"), agent_run),
            "{run:?}"
        );
        assert_eq!(run.judge_usage.total_tokens(), 150);
        assert!(close(
            run.judge_usage.cost_usd.expect("estimated"),
            judge_run
        ));
    }
    assert_eq!(report.total_usage.total_tokens(), 75);
    assert!(close(
        report.total_usage.cost_usd.expect("known"),
        5.0 * agent_run
    ));
    assert_eq!(report.judge_usage.total_tokens(), 750);
    assert!(close(
        report.judge_usage.cost_usd.expect("known"),
        5.0 * judge_run
    ));

    // The text report lists every run's usage and the totals.
    let text = report.render();
    assert!(
        text.contains("run usage: 15 tokens $0.00002, 15 tokens $0.00002, 15 tokens $0.00002, 15 tokens $0.00002, 15 tokens $0.00002; total 75 tokens $0.0001"),
        "{text}"
    );
    assert!(
        text.contains("judge usage over all runs: 750 tokens $0.009"),
        "{text}"
    );

    // Summary tables: the totals over the runs, the judge's apart; and a suite total.
    let summary = EvalSummary::from(&report);
    assert_eq!(summary.usage.total_tokens(), 75);
    let cells = summary.table_cells("-");
    assert_eq!(cells[5], "75 (judge 750)");
    assert_eq!(cells[6], "$0.0001 (judge $0.009)");
    let suite = SuiteReport::new(vec![summary.clone(), summary], 0, false, 1.0);
    assert_eq!(
        suite.spending().as_deref(),
        Some("tokens: 150 agent + 1500 judge; cost: $0.0002 agent + $0.018 judge")
    );
}

fn spends_and_grades_as_data(t: &mut Eval) -> BoxFuture<'_, BodyResult> {
    Box::pin(async move {
        t.send("What is the capital of France?").await?;
        let usage = t.usage();
        assert_eq!(usage.total_tokens(), 15);
        let cost = usage.cost_usd.expect("estimated from [prices]");
        assert!(close(cost, 10.0 * 1e-6 + 5.0 * 2e-6), "{cost}");
        // No cost passed by hand: the run's context has it, and its latency.
        let context = t.spec_context();
        assert!(context.latency_ms.is_some_and(|ms| ms > 0.0));
        let within = spec::evaluate(
            &[
                AssertSpec::new("cost", json!(0.001)),
                AssertSpec::new("latency", json!(60_000)),
            ],
            t.reply(),
            &context,
        )
        .expect("valid specs");
        assert!(within.pass, "{:?}", within.results);
        let over = spec::evaluate(
            &[AssertSpec::new("cost", json!(0.000001))],
            t.reply(),
            &context,
        )
        .expect("valid specs");
        assert!(!over.pass, "{:?}", over.results);
        // The same as one assertion of the run (a dataset case's `assert` list): one line per
        // item, cost and latency read from the run (without them these items are errors).
        let items: Vec<AssertSpec> = serde_json::from_value(json!([
            {"type": "icontains", "value": "paris"},
            {"type": "cost", "threshold": 0.001},
            {"type": "latency", "threshold": 60000},
        ]))?;
        let graded = t.check(t.reply(), spec::assertions(&items));
        assert!(graded.passed, "{graded:?}");
        assert_eq!(graded.children.len(), 3);
        Ok(())
    })
}

#[test]
fn a_chat_agent_reporting_tokens_gets_the_price_tables_estimate() {
    let server = server();
    let krate = Crate::new(&toml(&server));
    // The default agent of niceeval.toml: a ChatAgent on the fake server.
    let report = run(define("chat_cost", &krate, spends_and_grades_as_data));
    assert_eq!(report.outcome, Outcome::Passed, "{}", report.render());
    assert!(report.cost_usd.is_some());
}
