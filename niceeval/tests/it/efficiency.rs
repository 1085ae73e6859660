//! Efficiency budgets end to end: real evals run through `run_eval` against agents that emit
//! `usage` events (with and without a reported cost, known and unknown models), over and within
//! budget, as gates and as soft assertions, with `[prices]` and `[run] strict` from a real
//! `niceeval.toml`.

use std::path::Path;

use niceeval::__private::{Arc, BoxFuture, EvalDefinition, make_agent};
use niceeval::__workspace::run_eval;
use niceeval::prelude::*;
use niceeval::{AssertionKind, AssertionResult, EvalReport};

type Body = for<'a> fn(&'a mut Eval) -> BoxFuture<'a, niceeval::Result>;

/// A `usage` event.
fn usage(input: u64, output: u64, cost_usd: Option<f64>, model: Option<&str>) -> Event {
    Event::Usage {
        input_tokens: input,
        output_tokens: output,
        cache_read_tokens: 0,
        cost_usd,
        model: model.map(str::to_string),
    }
}

/// Runs an eval whose agent emits `events` on every turn and whose body sends one message and
/// then runs `body`; `niceeval.toml` (possibly empty) is written to a fresh crate directory.
macro_rules! run {
    (config: $config:expr, events: [$($event:expr),* $(,)?], |$t:ident| $body:block) => {{
        fn agent() -> Arc<dyn Agent> {
            make_agent(agent_fn(|request: Request| async move {
                $(request.events.emit($event);)*
                request.events.say("done");
                Ok(())
            }))
        }
        fn body($t: &mut Eval) -> BoxFuture<'_, niceeval::Result> {
            Box::pin(async move {
                $t.send("go").await?;
                $body
                Ok(())
            })
        }
        run_in_crate(agent, body, $config)
    }};
}

fn run_in_crate(agent: fn() -> Arc<dyn Agent>, body: Body, config: &str) -> EvalReport {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("niceeval.toml"), config).unwrap();
    let report = run_eval(definition(dir.path(), agent, body));
    drop(dir);
    report
}

fn definition(dir: &Path, agent: fn() -> Arc<dyn Agent>, body: Body) -> &'static EvalDefinition {
    let manifest_dir: &'static str = Box::leak(dir.display().to_string().into_boxed_str());
    Box::leak(Box::new(
        EvalDefinition::new(
            "budget",
            module_path!(),
            file!(),
            line!(),
            manifest_dir,
            body,
        )
        .with_agent(agent),
    ))
}

fn assertion<'r>(report: &'r EvalReport, name: &str) -> &'r AssertionResult {
    report
        .assertions
        .iter()
        .find(|a| a.name == name)
        .unwrap_or_else(|| panic!("no assertion {name} in\n{}", report.render()))
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-9
}

#[test]
fn within_every_budget_passes_and_reports_the_estimated_cost() {
    let report = run!(
        config: "",
        events: [
            usage(800_000, 100_000, None, Some("openai/gpt-4o-mini-2024-07-18")),
            Event::ActionCalled { call_id: "1".into(), name: "lookup_order".into(), input: json!({"id": "123"}) },
        ],
        |t| {
            t.max_tokens(900_000);
            t.max_cost(0.50);
            t.max_tool_calls(1);
        }
    );
    assert_eq!(report.outcome, Outcome::Passed, "{}", report.render());
    for name in ["max_tokens(900000)", "max_cost(0.5)", "max_tool_calls(1)"] {
        let a = assertion(&report, name);
        assert_eq!(a.kind, AssertionKind::Efficiency);
        assert_eq!((a.severity, a.threshold), (Severity::Gate, Some(1.0)));
        assert_eq!(a.score, 1.0);
        assert!(a.passed);
    }
    // $0.15 × 0.8 + $0.60 × 0.1
    let expected = 0.12 + 0.06;
    assert!(
        close(report.cost_usd.unwrap(), expected),
        "{:?}",
        report.cost_usd
    );
    assert!(close(report.runs[0].cost_usd.unwrap(), expected));
    let reason = &assertion(&report, "max_cost(0.5)").reason;
    assert!(
        reason.starts_with("cost $0.18, within the limit of $0.50: $0.18 estimated for openai/gpt-4o-mini-2024-07-18 (priced as openai/gpt-4o-mini)"),
        "{reason}"
    );
    assert!(
        report.render().contains("900000 tokens, $0.18"),
        "{}",
        report.render()
    );
}

#[test]
fn an_overrun_fails_a_gate_with_limit_over_actual() {
    let report = run!(
        config: "",
        events: [usage(30_000, 10_000, Some(0.40), Some("gpt-4o"))],
        |t| {
            t.max_tokens(20_000);
            t.max_cost(0.10);
        }
    );
    assert_eq!(report.outcome, Outcome::Failed);
    assert!(
        report.error.is_none(),
        "an overrun is a failed gate, not an error"
    );
    let tokens = assertion(&report, "max_tokens(20000)");
    assert!(tokens.is_failed_gate());
    assert_eq!(tokens.score, 0.5);
    assert_eq!(
        tokens.reason,
        "40,000 tokens (30,000 input + 10,000 output), over the limit of 20,000 by 20,000"
    );
    let cost = assertion(&report, "max_cost(0.1)");
    assert!(close(cost.score, 0.25));
    // the agent's figure wins over the estimate for gpt-4o
    assert_eq!(
        cost.reason,
        "cost $0.40, over the limit of $0.10 by $0.30: $0.40 reported by the agent (1 usage event)"
    );
    assert_eq!(report.cost_usd, Some(0.40));
    let text = report.render();
    assert!(
        text.contains("FAIL  gate max_tokens(20000) — score 0.50 (needs ≥ 1.00)"),
        "{text}"
    );
}

#[test]
fn at_least_makes_a_budget_soft() {
    // 12,500 tokens against 10,000: score 0.8
    let tolerated = run!(
        config: "",
        events: [usage(10_000, 2_500, None, None)],
        |t| { t.max_tokens(10_000).at_least(0.7); }
    );
    assert_eq!(tolerated.outcome, Outcome::Passed, "{}", tolerated.render());
    assert!(!tolerated.below_threshold);
    let a = assertion(&tolerated, "max_tokens(10000)");
    assert_eq!(
        (a.severity, a.threshold, a.score),
        (Severity::Soft, Some(0.7), 0.8)
    );

    let marked = run!(
        config: "",
        events: [usage(10_000, 2_500, None, None)],
        |t| { t.max_tokens(10_000).at_least(0.9); }
    );
    assert_eq!(marked.outcome, Outcome::Passed);
    assert!(marked.below_threshold, "{}", marked.render());

    let strict = run!(
        config: "[run]\nstrict = true\n",
        events: [usage(10_000, 2_500, None, None)],
        |t| { t.max_tokens(10_000).at_least(0.9); }
    );
    assert_eq!(strict.outcome, Outcome::Failed, "{}", strict.render());

    // .gate() after .at_least keeps the threshold
    let gated = run!(
        config: "",
        events: [usage(10_000, 2_500, None, None)],
        |t| { t.max_tokens(10_000).at_least(0.7).gate(); }
    );
    assert_eq!(gated.outcome, Outcome::Passed);
    assert_eq!(
        assertion(&gated, "max_tokens(10000)").severity,
        Severity::Gate
    );
}

#[test]
fn an_unknown_model_under_max_cost_is_an_error_showing_the_prices_to_add() {
    let report = run!(
        config: "",
        events: [usage(1_000, 1_000, None, Some("acme/brainy-1"))],
        |t| {
            t.max_cost(1.0).at_least(0.1);
            t.max_tokens(10_000);
        }
    );
    assert_eq!(report.outcome, Outcome::Failed, "never a pass");
    let cost = assertion(&report, "max_cost(1)");
    let error = cost
        .error
        .as_deref()
        .expect("an execution error on the assertion");
    assert!(!cost.passed);
    assert!(
        error.contains("no price for model \"acme/brainy-1\""),
        "{error}"
    );
    assert!(error.contains("niceeval.toml"), "{error}");
    assert!(
        error.contains(
            "[prices.\"acme/brainy-1\"]\ninput = ..    # USD per 1M input tokens\noutput = .."
        ),
        "{error}"
    );
    assert!(report.error_message().unwrap().contains("acme/brainy-1"));
    // tokens do not need a price
    assert!(assertion(&report, "max_tokens(10000)").passed);
    assert_eq!(report.cost_usd, None);
    assert!(
        report.render().contains("ERROR soft max_cost(1)"),
        "{}",
        report.render()
    );
}

#[test]
fn an_unknown_model_without_max_cost_leaves_the_cost_unknown_and_the_eval_alone() {
    let report = run!(
        config: "",
        events: [usage(1_000, 1_000, None, Some("acme/brainy-1"))],
        |t| { t.max_tokens(10_000); }
    );
    assert_eq!(report.outcome, Outcome::Passed, "{}", report.render());
    assert_eq!(report.cost_usd, None);
    assert_eq!(report.usage.total_tokens(), 2_000);
}

#[test]
fn prices_in_niceeval_toml_price_unknown_models_and_override_built_ins() {
    let config = r#"
[prices."acme/brainy-1"]
input = 2.0
output = 10.0

[prices."openai/gpt-4o"]
input = 1.0
output = 1.0
"#;
    let report = run!(
        config: config,
        events: [
            usage(100_000, 10_000, None, Some("brainy-1-20250601")),
            usage(1_000_000, 0, None, Some("gpt-4o")),
        ],
        |t| { t.max_cost(1.5); }
    );
    assert_eq!(report.outcome, Outcome::Passed, "{}", report.render());
    // 0.1 × $2 + 0.01 × $10 + 1 × $1 (the override, not the $2.50 list price)
    assert!(
        close(report.cost_usd.unwrap(), 0.2 + 0.1 + 1.0),
        "{:?}",
        report.cost_usd
    );
    let reason = &assertion(&report, "max_cost(1.5)").reason;
    assert!(
        reason.contains("estimated for brainy-1-20250601 (priced as acme/brainy-1)"),
        "{reason}"
    );
    assert!(
        reason.contains("estimated for gpt-4o (priced as openai/gpt-4o)"),
        "{reason}"
    );
    assert!(reason.contains("[prices] in niceeval.toml"), "{reason}");
    assert!(!reason.contains("built-in"), "{reason}");
}

#[test]
fn usage_without_model_or_cost_cannot_be_priced() {
    let report = run!(
        config: "",
        events: [usage(500, 100, None, None)],
        |t| { t.max_cost(5.0); }
    );
    assert_eq!(report.outcome, Outcome::Failed);
    let error = assertion(&report, "max_cost(5)").error.clone().unwrap();
    assert!(error.contains("neither `cost_usd` nor `model`"), "{error}");
    assert!(error.contains("600 tokens"), "{error}");
    assert_eq!(report.cost_usd, None);
}

#[test]
fn budgets_without_usage_events_are_errors_not_passes() {
    let report = run!(
        config: "",
        events: [],
        |t| {
            t.max_tokens(1_000);
            t.max_cost(1.0);
            t.max_tool_calls(3);
        }
    );
    assert_eq!(report.outcome, Outcome::Failed);
    for name in ["max_tokens(1000)", "max_cost(1)"] {
        let error = assertion(&report, name).error.clone().unwrap();
        assert!(error.contains("no `usage` events"), "{name}: {error}");
    }
    // zero tool calls is a real count
    let calls = assertion(&report, "max_tool_calls(3)");
    assert!(calls.passed && calls.error.is_none());
    assert_eq!(calls.reason, "no tool calls, within the limit of 3");
    assert_eq!(report.cost_usd, None);
}

#[test]
fn too_many_tool_calls_fail_and_name_the_tools() {
    let report = run!(
        config: "",
        events: [
            Event::ActionCalled { call_id: "1".into(), name: "search".into(), input: json!({"q": "a"}) },
            Event::ActionCalled { call_id: "2".into(), name: "search".into(), input: json!({"q": "b"}) },
            Event::SubagentCalled { call_id: "3".into(), name: "researcher".into(), remote_url: None },
            Event::ActionCalled { call_id: "4".into(), name: "lookup_order".into(), input: json!({}) },
            Event::ActionCalled { call_id: "5".into(), name: "search".into(), input: json!({"q": "c"}) },
        ],
        |t| { t.max_tool_calls(2); }
    );
    assert_eq!(report.outcome, Outcome::Failed);
    let a = assertion(&report, "max_tool_calls(2)");
    assert_eq!(a.score, 0.5);
    assert_eq!(
        a.reason,
        "4 tool calls, over the limit of 2 by 2: search ×3, lookup_order"
    );
}

#[test]
fn usage_is_summed_over_every_turn_of_the_run() {
    let report = run!(
        config: "",
        events: [usage(1_000, 500, Some(0.01), Some("gpt-4o"))],
        |t| {
            t.send("again").await?;
            t.new_session();
            t.send("and once more").await?;
            let total = t.usage();
            t.check(total.total_tokens(), equals(json!(4_500)));
            t.max_tokens(4_000);
            t.max_cost(0.03);
        }
    );
    assert_eq!(report.usage.total_tokens(), 4_500);
    assert!(close(report.cost_usd.unwrap(), 0.03));
    assert!(
        assertion(&report, "max_cost(0.03)").passed,
        "{}",
        report.render()
    );
    let tokens = assertion(&report, "max_tokens(4000)");
    assert!(close(tokens.score, 4_000.0 / 4_500.0));
    assert_eq!(report.outcome, Outcome::Failed);
}

#[test]
fn a_negative_cost_limit_is_an_author_error() {
    let report = run!(
        config: "",
        events: [usage(1, 1, Some(0.0), None)],
        |t| { t.max_cost(-0.5); }
    );
    assert_eq!(report.outcome, Outcome::Failed);
    let error = assertion(&report, "max_cost(-0.5)").error.clone().unwrap();
    assert!(error.contains("0 or more"), "{error}");
}

#[test]
fn detached_handle_sums_usage_from_a_real_agent() {
    let agent = agent_fn(|request: Request| async move {
        request.events.emit(Event::Usage {
            input_tokens: 120,
            output_tokens: 30,
            cache_read_tokens: 100,
            cost_usd: None,
            model: Some("anthropic/claude-haiku-4-5-20251001".into()),
        });
        request.events.say("hi");
        Ok(())
    });
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let mut t = Eval::detached(Some(Arc::new(agent)));
    rt.block_on(async {
        t.send("one").await.unwrap();
        t.send("two").await.unwrap();
    });
    let total = t.usage();
    assert_eq!(
        (
            total.input_tokens,
            total.output_tokens,
            total.cache_read_tokens
        ),
        (240, 60, 200)
    );
    assert_eq!(total.total_tokens(), 300);
    let cost = niceeval::__workspace::price::estimate_cost(t.events(), t.config()).unwrap();
    // Haiku 4.5: 40 uncached × $1 + 200 cache reads × $0.10 + 60 × $5, per 1M
    assert!(
        close(cost.usd, (40.0 * 1.0 + 200.0 * 0.1 + 60.0 * 5.0) / 1e6),
        "{cost}"
    );
    assert_eq!(
        cost.estimates[0].priced_as.key,
        "anthropic/claude-haiku-4-5"
    );
}

/// Calls `lookup_order` as many times as the input's number and reports 100 tokens a call.
fn counting_agent() -> Arc<dyn Agent> {
    make_agent(agent_fn(|request: Request| async move {
        let calls: u64 = request.input.text.trim().parse().unwrap_or(0);
        for i in 0..calls {
            request
                .events
                .tool_call("lookup_order", json!({"id": i}), json!({"status": "paid"}));
        }
        request
            .events
            .model_usage("openai/gpt-4o-mini", 100 * calls, 0);
        request.events.say("done");
        Ok(())
    }))
}

#[test]
fn budgets_on_a_turn_count_only_that_turns_events() {
    fn body(t: &mut Eval) -> BoxFuture<'_, niceeval::Result> {
        Box::pin(async move {
            let first = t.send("1").await?;
            let second = t.send("3").await?;
            first.max_tool_calls(1);
            second.max_tool_calls(2);
            first.max_tokens(100);
            second.max_tokens(300);
            second.max_cost(0.01);
            t.max_tool_calls(4);
            Ok(())
        })
    }
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("niceeval.toml"), "").unwrap();
    let report = run_eval(definition(dir.path(), counting_agent, body));
    let verdicts: Vec<(&str, bool, f64)> = report
        .assertions
        .iter()
        .map(|a| (a.name.as_str(), a.passed, a.score))
        .collect();
    assert_eq!(
        verdicts,
        [
            ("turn 1: max_tool_calls(1)", true, 1.0),
            ("turn 2: max_tool_calls(2)", false, 2.0 / 3.0),
            ("turn 1: max_tokens(100)", true, 1.0),
            ("turn 2: max_tokens(300)", true, 1.0),
            ("turn 2: max_cost(0.01)", true, 1.0),
            ("max_tool_calls(4)", true, 1.0),
        ],
        "{}",
        report.render()
    );
    assert!(
        assertion(&report, "turn 2: max_tool_calls(2)")
            .reason
            .starts_with("3 tool calls, over the limit of 2"),
        "{}",
        report.render()
    );
}
