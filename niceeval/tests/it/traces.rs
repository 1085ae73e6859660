//! OpenTelemetry in, with real clients: a Python agent instrumented with the OpenTelemetry SDK
//! (protobuf and JSON exporters) run as a command agent, the official OpenAI instrumentation
//! around the real `openai` client against a loopback fake, a Rust agent through
//! `niceeval::trace::layer()` in 50 concurrent evals, and the chat agent's `traceparent`. The
//! checks read tool calls and tokens from the spans alone.
#![cfg(all(unix, feature = "otel"))]

use std::path::PathBuf;
use std::sync::OnceLock;

use niceeval::__private::{Arc, BoxFuture, EvalDefinition, RunOptions, make_agent, run_eval_async};
use niceeval::agent::command::CommandAgent;
use niceeval::prelude::*;
use niceeval::{AssertionResult, EvalReport};

use crate::support::{self, rt};

type Body = for<'a> fn(&'a mut Eval) -> BoxFuture<'a, niceeval::Result>;

const INSTALL: &str =
    "run scripts/install-test-deps.sh (it pip-installs scripts/test-requirements.txt)";

/// Fails (never skips) when the pinned Python OpenTelemetry packages are missing.
fn python_with(modules: &[&str]) {
    let check = format!("import {}", modules.join(", "));
    let ok = std::process::Command::new("python3")
        .args(["-c", &check])
        .output()
        .is_ok_and(|o| o.status.success());
    assert!(
        ok,
        "python3 with {modules:?} is required by this test; {INSTALL}"
    );
}

fn script(name: &str) -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/it/traces")
        .join(name)
        .display()
        .to_string()
}

fn define(
    name: &'static str,
    agent: fn() -> Arc<dyn Agent>,
    body: Body,
) -> &'static EvalDefinition {
    static DIR: OnceLock<tempfile::TempDir> = OnceLock::new();
    let dir = DIR.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("niceeval.toml"),
            "[trace]\nsettle = \"2s\"\n",
        )
        .unwrap();
        dir
    });
    let manifest_dir: &'static str = Box::leak(dir.path().display().to_string().into_boxed_str());
    Box::leak(Box::new(
        EvalDefinition::new(name, module_path!(), file!(), line!(), manifest_dir, body)
            .with_agent(agent),
    ))
}

fn run(def: &'static EvalDefinition) -> EvalReport {
    rt().block_on(run_eval_async(def, &RunOptions::default()))
}

fn assertion<'r>(report: &'r EvalReport, name: &str) -> &'r AssertionResult {
    report
        .assertions
        .iter()
        .find(|a| a.name.starts_with(name))
        .unwrap_or_else(|| panic!("no assertion {name} in\n{}", report.render()))
}

fn spans(report: &EvalReport) -> Vec<&Value> {
    report
        .events
        .iter()
        .filter_map(|e| match e {
            Event::Custom { name, data } if name == "otel.span" => Some(data),
            _ => None,
        })
        .collect()
}

fn protobuf_agent() -> Arc<dyn Agent> {
    make_agent(CommandAgent::new(
        "python3",
        [script("agent.py"), "protobuf".into()],
    ))
}

fn json_agent() -> Arc<dyn Agent> {
    make_agent(CommandAgent::new(
        "python3",
        [script("agent.py"), "json".into()],
    ))
}

fn passing(t: &mut Eval) -> BoxFuture<'_, niceeval::Result> {
    Box::pin(async move {
        t.send("Refund order 123").await?;
        t.called_tool("lookup_order");
        t.called_tool("refund");
        t.tool_order(["lookup_order", "refund"]);
        t.no_failed_actions();
        t.max_tokens(1000);
        t.max_tool_calls(2);
        Ok(())
    })
}

fn failing(t: &mut Eval) -> BoxFuture<'_, niceeval::Result> {
    Box::pin(async move {
        t.send("Refund order 123").await?;
        t.called_tool("delete_account");
        t.tool_order(["refund", "lookup_order"]);
        t.max_tokens(100);
        t.max_tool_calls(1);
        Ok(())
    })
}

fn checks_pass_and_fail_from_spans(agent: fn() -> Arc<dyn Agent>) {
    let report = run(define("spans_pass", agent, passing));
    assert_eq!(report.outcome, Outcome::Passed, "{}", report.render());
    // The agent printed only its reply; the tool calls and usage are the spans'.
    assert_eq!(
        report
            .events
            .iter()
            .filter(|e| matches!(e, Event::ActionCalled { .. }))
            .count(),
        2
    );
    assert_eq!(report.usage.input_tokens, 120);
    assert_eq!(report.usage.output_tokens, 30);
    let spans = spans(&report);
    assert_eq!(spans.len(), 4, "{spans:?}");
    let chat = spans
        .iter()
        .find(|s| s["name"] == "chat gpt-4o-mini")
        .unwrap();
    assert_eq!(chat["kind"], "client");
    assert_eq!(chat["service"], "refund-agent");
    assert_eq!(chat["status"]["code"], "unset");
    assert_eq!(chat["trace_id"].as_str().unwrap().len(), 32);
    assert!(chat["start_unix_nano"].as_u64().unwrap() <= chat["end_unix_nano"].as_u64().unwrap());
    assert_eq!(chat["attributes"]["gen_ai.usage.input_tokens"], 120);
    // The agent's root span hangs from the turn: it joined the eval's trace from TRACEPARENT.
    let root = spans
        .iter()
        .find(|s| s["name"] == "invoke_agent refund-agent")
        .unwrap();
    assert!(root["parent_span_id"].is_string());
    assert!(spans.iter().all(|s| s["trace_id"] == root["trace_id"]));

    let report = run(define("spans_fail", agent, failing));
    assert_eq!(report.outcome, Outcome::Failed);
    for name in [
        "called_tool(\"delete_account\")",
        "tool_order",
        "max_tokens(100)",
        "max_tool_calls(1)",
    ] {
        assert!(
            !assertion(&report, name).passed,
            "{name} should fail:\n{}",
            report.render()
        );
    }
}

#[test]
fn python_sdk_protobuf_exporter_spans_feed_the_checks() {
    python_with(&[
        "opentelemetry.sdk",
        "opentelemetry.exporter.otlp.proto.http",
    ]);
    checks_pass_and_fail_from_spans(protobuf_agent);
}

#[test]
fn python_sdk_json_exporter_spans_feed_the_checks() {
    python_with(&["opentelemetry.sdk", "opentelemetry.exporter.otlp.json.http"]);
    checks_pass_and_fail_from_spans(json_agent);
}

static FAKE_OPENAI: OnceLock<support::FakeProvider> = OnceLock::new();

fn openai_agent() -> Arc<dyn Agent> {
    let fake = FAKE_OPENAI.get().expect("the fake is started");
    make_agent(
        CommandAgent::new("python3", [script("openai_agent.py")])
            .env("OPENAI_BASE_URL", format!("{}/v1", fake.url)),
    )
}

#[test]
fn official_openai_instrumentation_usage_reaches_budgets() {
    python_with(&["openai", "opentelemetry.instrumentation.openai_v2"]);
    FAKE_OPENAI.get_or_init(|| {
        support::FakeProvider::start(|_, _| support::Reply::json(support::openai_text("Refunded.")))
    });
    fn within(t: &mut Eval) -> BoxFuture<'_, niceeval::Result> {
        Box::pin(async move {
            t.send("Refund order 123").await?;
            t.max_tokens(30); // two calls of 10 + 5 tokens
            Ok(())
        })
    }
    fn over(t: &mut Eval) -> BoxFuture<'_, niceeval::Result> {
        Box::pin(async move {
            t.send("Refund order 123").await?;
            t.max_tokens(29);
            Ok(())
        })
    }
    let report = run(define("openai_within", openai_agent, within));
    assert_eq!(report.outcome, Outcome::Passed, "{}", report.render());
    assert_eq!(
        (report.usage.input_tokens, report.usage.output_tokens),
        (20, 10)
    );
    let chats: Vec<_> = spans(&report)
        .into_iter()
        .filter(|s| s["attributes"]["gen_ai.operation.name"] == "chat")
        .collect();
    assert_eq!(chats.len(), 2, "{}", report.render());
    let report = run(define("openai_over", openai_agent, over));
    assert_eq!(report.outcome, Outcome::Failed);
    assert!(!assertion(&report, "max_tokens(29)").passed);
}
