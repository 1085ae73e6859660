//! OpenTelemetry in, with real clients: a Python agent instrumented with the OpenTelemetry SDK
//! (protobuf and JSON exporters) run as a command agent, the official OpenAI instrumentation
//! around the real `openai` client against a loopback fake, a Rust agent through
//! `niceeval::trace::layer()` in 50 concurrent evals, and the chat agent's `traceparent`. The
//! checks read tool calls and tokens from the spans alone.
#![cfg(all(unix, feature = "otel"))]

use std::path::PathBuf;
use std::sync::OnceLock;

use niceeval::__private::{Arc, BoxFuture, EvalDefinition, make_agent};
use niceeval::__workspace::{RunOptions, run_eval_async};
use niceeval::agent::command::CommandAgent;
use niceeval::prelude::*;
use niceeval::{AssertionResult, EvalReport};

use crate::support::{self, rt};

type Body = for<'a> fn(&'a mut Eval) -> BoxFuture<'a, niceeval::Result>;

const INSTALL: &str =
    "run scripts/install-test-deps.sh (it pip-installs scripts/test-requirements.txt)";

/// Whether the pinned Python OpenTelemetry packages are there: under CI their absence fails
/// the test; elsewhere a notice goes to stderr and the caller skips.
fn python_with(modules: &[&str]) -> bool {
    let check = format!("import {}", modules.join(", "));
    let ok = std::process::Command::new("python3")
        .args(["-c", &check])
        .output()
        .is_ok_and(|o| o.status.success());
    crate::scripts_support::available(ok, &format!("python3 with {modules:?}"), INSTALL)
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
    if !python_with(&[
        "opentelemetry.sdk",
        "opentelemetry.exporter.otlp.proto.http",
    ]) {
        return;
    }
    checks_pass_and_fail_from_spans(protobuf_agent);
}

#[test]
fn python_sdk_json_exporter_spans_feed_the_checks() {
    if !python_with(&["opentelemetry.sdk", "opentelemetry.exporter.otlp.json.http"]) {
        return;
    }
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
    if !python_with(&["openai", "opentelemetry.instrumentation.openai_v2"]) {
        return;
    }
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

/// The OpenAI-compatible fake the weather agents call: the question names cities ("Paris and
/// Rome"); each model call asks for the weather of the next city with one `get_weather` call
/// (`call_1`, `call_2`, …), then answers in text.
static FAKE_WEATHER: OnceLock<support::FakeProvider> = OnceLock::new();

fn weather_fake() -> &'static support::FakeProvider {
    FAKE_WEATHER.get_or_init(|| {
        support::FakeProvider::start(|_, seen| {
            let messages = seen.body["messages"]
                .as_array()
                .cloned()
                .unwrap_or_default();
            let question = messages
                .first()
                .and_then(|m| m["content"].as_str())
                .unwrap_or("");
            let cities: Vec<&str> = question.trim().split(" and ").collect();
            let done = messages.iter().filter(|m| m["role"] == "tool").count();
            let Some(city) = cities.get(done) else {
                return support::Reply::json(support::openai_text("Sunny."));
            };
            let mut answer = support::openai_tool_call("get_weather", json!({ "city": city }));
            answer["choices"][0]["message"]["tool_calls"][0]["id"] =
                json!(format!("call_{}", done + 1));
            support::Reply::json(answer)
        })
    })
}

/// The weather agent instrumented as `mode` says (see traces/tool_agent.py).
fn weather_agent(mode: &str) -> Arc<dyn Agent> {
    make_agent(
        CommandAgent::new("python3", [script("tool_agent.py"), mode.to_string()])
            .env("OPENAI_BASE_URL", format!("{}/v1", weather_fake().url)),
    )
}

fn openllmetry_agent() -> Arc<dyn Agent> {
    weather_agent("openllmetry")
}

fn openinference_agent() -> Arc<dyn Agent> {
    weather_agent("openinference")
}

fn genai_agent() -> Arc<dyn Agent> {
    weather_agent("genai")
}

fn genai_logs_agent() -> Arc<dyn Agent> {
    weather_agent("genai-logs")
}

fn one_city(t: &mut Eval) -> BoxFuture<'_, niceeval::Result> {
    Box::pin(async move {
        t.send("Paris").await?;
        t.called_tool("get_weather")
            .input(json!({ "city": "Paris" }))
            .count(1);
        t.max_tool_calls(1);
        t.no_failed_actions();
        Ok(())
    })
}

fn two_cities(t: &mut Eval) -> BoxFuture<'_, niceeval::Result> {
    Box::pin(async move {
        t.send("Paris and Rome").await?;
        t.called_tool("get_weather").count(2);
        t.max_tool_calls(2);
        Ok(())
    })
}

/// One call the model named and a tool span ran is one call, its input the model's arguments
/// and its result the tool span's, for the convention of `agent`. `results` says whether the
/// convention records tool results (openai-v2 with content in log records does not).
fn one_call_per_named_and_run_tool(
    label: &'static str,
    agent: fn() -> Arc<dyn Agent>,
    results: bool,
) {
    let report = run(define(label, agent, one_city));
    assert_eq!(
        report.outcome,
        Outcome::Passed,
        "{label}:\n{}",
        report.render()
    );

    let name: &'static str = Box::leak(format!("{label}_two").into_boxed_str());
    let report = run(define(name, agent, two_cities));
    assert_eq!(
        report.outcome,
        Outcome::Passed,
        "{label}:\n{}",
        report.render()
    );
    let called: Vec<(&str, &Value)> = report
        .events
        .iter()
        .filter_map(|e| match e {
            Event::ActionCalled { call_id, input, .. } => Some((call_id.as_str(), input)),
            _ => None,
        })
        .collect();
    assert_eq!(
        called,
        [
            ("call_1", &json!({ "city": "Paris" })),
            ("call_2", &json!({ "city": "Rome" }))
        ],
        "{label}: each tool span runs the call named before it"
    );
    let outputs: Vec<(&str, &Value)> = report
        .events
        .iter()
        .filter_map(|e| match e {
            Event::ActionResult {
                call_id, output, ..
            } => Some((call_id.as_str(), output)),
            _ => None,
        })
        .collect();
    let expected = if results {
        [
            ("call_1", &json!("sunny in Paris")),
            ("call_2", &json!("sunny in Rome")),
        ]
    } else {
        [("call_1", &Value::Null), ("call_2", &Value::Null)]
    };
    assert_eq!(outputs, expected, "{label}");
    // Two model calls with tool calls (120 + 30 tokens each) and the answer (10 + 5), once.
    assert_eq!(
        (report.usage.input_tokens, report.usage.output_tokens),
        (250, 65),
        "{label}"
    );
}

#[test]
fn openllmetry_tool_spans_without_ids_run_the_calls_their_chat_spans_named() {
    if !python_with(&["openai", "opentelemetry.instrumentation.openai"]) {
        return;
    }
    one_call_per_named_and_run_tool("openllmetry", openllmetry_agent, true);
}

#[test]
fn openinference_tool_spans_without_ids_run_the_calls_their_llm_spans_named() {
    if !python_with(&["openai", "openinference.instrumentation.openai"]) {
        return;
    }
    one_call_per_named_and_run_tool("openinference", openinference_agent, true);
}

#[test]
fn genai_execute_tool_spans_without_ids_run_the_calls_their_chat_spans_named() {
    if !python_with(&[
        "openai",
        "opentelemetry.instrumentation.openai_v2",
        "opentelemetry.util.genai",
    ]) {
        return;
    }
    one_call_per_named_and_run_tool("genai", genai_agent, true);
}

#[test]
fn tool_arguments_only_in_openai_v2_log_records_are_read() {
    if !python_with(&[
        "openai",
        "opentelemetry.instrumentation.openai_v2",
        "opentelemetry.util.genai",
        "opentelemetry.exporter.otlp.proto.http._log_exporter",
    ]) {
        return;
    }
    one_call_per_named_and_run_tool("genai_logs", genai_logs_agent, false);
    // The records are kept as `otel.log` events, one per model call.
    let report = run(define("genai_logs_kept", genai_logs_agent, one_city));
    let logs: Vec<&Value> = report
        .events
        .iter()
        .filter_map(|e| match e {
            Event::Custom { name, data } if name == "otel.log" => Some(data),
            _ => None,
        })
        .collect();
    assert_eq!(logs.len(), 2, "{logs:?}");
    assert!(
        logs.iter()
            .all(|l| l["name"] == "gen_ai.client.inference.operation.details")
    );
}

fn resource_echo() -> Arc<dyn Agent> {
    make_agent(
        CommandAgent::shell("cat >/dev/null; printf '%s' \"$OTEL_RESOURCE_ATTRIBUTES\"")
            .text_output()
            .env(
                "OTEL_RESOURCE_ATTRIBUTES",
                "deployment.environment=ci,team=evals",
            ),
    )
}

#[test]
fn the_suites_resource_attributes_reach_the_agent_beside_the_runs_trace_id() {
    fn echo(t: &mut Eval) -> BoxFuture<'_, niceeval::Result> {
        Box::pin(async move {
            t.send("which resource?").await?;
            Ok(())
        })
    }
    let report = run(define("resource_echo", resource_echo, echo));
    assert_eq!(report.outcome, Outcome::Passed, "{}", report.render());
    let reply = report
        .events
        .iter()
        .find_map(|e| match e {
            Event::Message {
                role: niceeval::Role::Assistant,
                text,
            } => Some(text.to_string()),
            _ => None,
        })
        .unwrap_or_default();
    let pairs: Vec<&str> = reply.split(',').collect();
    assert_eq!(pairs.len(), 3, "{reply}");
    assert_eq!(pairs[..2], ["deployment.environment=ci", "team=evals"]);
    let trace_id = pairs[2]
        .strip_prefix("niceeval.trace_id=")
        .unwrap_or_else(|| panic!("{reply}"));
    assert_eq!(trace_id.len(), 32, "{reply}");
}

/// The process's subscriber: niceeval's layer, set once for the test binary from the agent's
/// factory (where a suite whose `main` is `niceeval::main!()`'s installs it).
fn subscriber() {
    static SET: OnceLock<()> = OnceLock::new();
    SET.get_or_init(|| {
        use tracing_subscriber::layer::SubscriberExt;
        let subscriber = tracing_subscriber::registry().with(niceeval::trace::layer());
        tracing::subscriber::set_global_default(subscriber).expect("no other subscriber");
    });
}

/// An in-process Rust agent instrumented with `tracing` the ways agents in the wild are: a
/// rig-style `chat` span whose usage is recorded after the call and whose tool call is only in
/// `gen_ai.output.messages`, and an `execute_tool` span created in another task under the
/// agent's span.
fn rust_agent() -> Arc<dyn Agent> {
    use tracing::Instrument;
    subscriber();
    make_agent(agent_fn(|request: Request| async move {
        let tool = format!("tool_{}", request.input.text);
        let agent = tracing::info_span!("invoke_agent", gen_ai.operation.name = "invoke_agent");
        let tool_name = tool.clone();
        async move {
            let chat = tracing::info_span!(
                "chat",
                otel.kind = "client",
                gen_ai.operation.name = "chat",
                gen_ai.provider.name = "openai",
                gen_ai.request.model = "gpt-4o-mini",
                gen_ai.usage.input_tokens = tracing::field::Empty,
                gen_ai.usage.output_tokens = tracing::field::Empty,
                gen_ai.output.messages = tracing::field::Empty,
            );
            tokio::time::sleep(std::time::Duration::from_millis(2))
                .instrument(chat.clone())
                .await;
            chat.record("gen_ai.usage.input_tokens", 10u64);
            chat.record("gen_ai.usage.output_tokens", 2u64);
            let messages = json!([{"role": "assistant", "parts": [
                {"type": "tool_call", "id": "call_1", "name": tool_name, "arguments": {"n": 1}}]}]);
            chat.record("gen_ai.output.messages", messages.to_string().as_str());
            drop(chat);
            tokio::spawn(
                async move {
                    let span = tracing::info_span!(
                        "execute_tool",
                        gen_ai.operation.name = "execute_tool",
                        gen_ai.tool.name = tool_name.as_str(),
                        gen_ai.tool.call.id = "call_1",
                        gen_ai.tool.call.result = "{\"ok\":true}",
                    );
                    tokio::time::sleep(std::time::Duration::from_millis(1))
                        .instrument(span)
                        .await;
                }
                .instrument(tracing::Span::current()),
            )
            .await
            .expect("the tool task");
        }
        .instrument(agent)
        .await;
        request.events.say(format!("used {tool}"));
        Ok(())
    }))
}

fn own_spans_only(t: &mut Eval) -> BoxFuture<'_, niceeval::Result> {
    Box::pin(async move {
        let name = t.id().rsplit("::").next().unwrap_or_default().to_string();
        t.send(name.clone()).await?;
        t.called_tool(format!("tool_{name}"));
        t.max_tool_calls(1);
        t.max_tokens(12);
        t.no_failed_actions();
        Ok(())
    })
}

#[test]
fn rust_tracing_layer_keeps_fifty_concurrent_evals_apart() {
    let defs: Vec<&'static EvalDefinition> = (0..50)
        .map(|i| {
            let name: &'static str = Box::leak(format!("eval{i}").into_boxed_str());
            define(name, rust_agent, own_spans_only)
        })
        .collect();
    let reports = rt().block_on(async {
        let mut set = tokio::task::JoinSet::new();
        for (i, def) in defs.iter().copied().enumerate() {
            set.spawn(async move { (i, run_eval_async(def, &RunOptions::default()).await) });
        }
        let mut reports = set.join_all().await;
        reports.sort_by_key(|(i, _)| *i);
        reports
    });
    for (i, report) in reports {
        assert_eq!(report.outcome, Outcome::Passed, "{}", report.render());
        let tools: Vec<&str> = report
            .events
            .iter()
            .filter_map(|e| match e {
                Event::ActionCalled { name, .. } => Some(name.as_str()),
                _ => None,
            })
            .collect();
        assert_eq!(
            tools,
            [format!("tool_eval{i}")],
            "one call: the chat's and the tool span's are one event"
        );
        let spans = spans(&report);
        assert_eq!(spans.len(), 3, "{spans:?}");
        assert!(spans.iter().all(|s| s["trace_id"] == spans[0]["trace_id"]));
        let chat = spans.iter().find(|s| s["name"] == "chat").unwrap();
        assert_eq!(chat["kind"], "client");
        assert_eq!(chat["attributes"]["gen_ai.usage.input_tokens"], 10);
        let agent = spans.iter().find(|s| s["name"] == "invoke_agent").unwrap();
        let tool = spans.iter().find(|s| s["name"] == "execute_tool").unwrap();
        assert_eq!(
            tool["parent_span_id"], agent["span_id"],
            "the spawned task's span keeps its parent"
        );
        assert_eq!(report.usage.input_tokens, 10);
    }
}

/// One HTTP/1.1 exchange with the receiver: the status line's code and the body.
fn http(head: &str, body: &[u8]) -> (u16, String) {
    use std::io::{Read, Write};
    let endpoint = niceeval::__workspace::trace::endpoint().unwrap();
    let address = endpoint.trim_start_matches("http://");
    let mut stream = std::net::TcpStream::connect(address).unwrap();
    stream.write_all(head.as_bytes()).unwrap();
    stream.write_all(body).unwrap();
    let mut out = Vec::new();
    stream.read_to_end(&mut out).unwrap();
    let text = String::from_utf8_lossy(&out).to_string();
    let code = text
        .split(' ')
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    let body = text.split("\r\n\r\n").nth(1).unwrap_or("").to_string();
    (code, body)
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    use std::io::Write;
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(bytes).unwrap();
    gz.finish().unwrap()
}

#[test]
fn the_receiver_reads_chunked_gzip_and_refuses_bad_bodies_with_a_status_and_a_message() {
    use niceeval::__workspace::trace;
    let endpoint = trace::endpoint().unwrap();
    assert!(
        endpoint.starts_with("http://127.0.0.1:"),
        "loopback only: {endpoint}"
    );
    let run = trace::Run::start();
    let json = format!(
        r#"{{"resourceSpans":[{{"scopeSpans":[{{"spans":[{{"traceId":"{}","spanId":"b7ad6b7169203331",
        "name":"execute_tool x","startTimeUnixNano":1,"endTimeUnixNano":"2","attributes":[
        {{"key":"gen_ai.operation.name","value":{{"stringValue":"execute_tool"}}}},
        {{"key":"gen_ai.tool.name","value":{{"stringValue":"x"}}}}]}}]}}]}}]}}"#,
        run.trace_id()
    );
    // Chunked and gzipped, as Node sends it.
    let zipped = gzip(json.as_bytes());
    let mut chunked = Vec::new();
    for chunk in zipped.chunks(7) {
        chunked.extend_from_slice(format!("{:x}\r\n", chunk.len()).as_bytes());
        chunked.extend_from_slice(chunk);
        chunked.extend_from_slice(b"\r\n");
    }
    chunked.extend_from_slice(b"0\r\n\r\n");
    let (code, _) = http(
        "POST /v1/traces HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Encoding: gzip\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n",
        &chunked,
    );
    assert_eq!(code, 200);
    let spans = rt().block_on(run.take());
    assert_eq!(spans.len(), 1);
    assert_eq!(spans[0]["name"], "execute_tool x");

    let rejected = trace::counts().3;
    let (code, message) = http(
        "POST /v1/traces HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 9\r\nConnection: close\r\n\r\n",
        b"{not json",
    );
    assert_eq!(code, 400);
    assert!(
        message.starts_with("the body is not OTLP/JSON"),
        "{message}"
    );
    let (code, message) = http(
        "POST /v1/traces HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-protobuf\r\nContent-Length: 3\r\nConnection: close\r\n\r\n",
        b"\xff\xff\xff",
    );
    assert_eq!(code, 400, "{message}");
    assert!(
        message.starts_with("the body is not an OTLP protobuf message"),
        "{message}"
    );
    let (code, message) = http(
        "POST /v1/traces HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-protobuf\r\nContent-Length: 999999999\r\nConnection: close\r\n\r\n",
        b"",
    );
    assert_eq!(code, 413);
    assert!(message.contains("size limit"), "{message}");
    assert!(trace::counts().3 >= rejected + 3);
    assert!(trace::last_rejection().is_some());
    let (code, _) = http(
        "GET /v1/traces HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
        b"",
    );
    assert_eq!(code, 404);

    // A span of a trace no run knows is counted, not attached anywhere; one of a finished run
    // is late.
    let unknown = trace::counts().0;
    let body = trace::protobuf_batch(&["0af7651916cd43dd8448eb211c80319c".into()], 3);
    assert_eq!(
        trace::ingest(false, "application/x-protobuf", None, body).unwrap(),
        0
    );
    assert!(trace::counts().0 >= unknown + 3);
    let late = trace::counts().1;
    let id = run.trace_id();
    drop(run);
    let body = trace::protobuf_batch(&[id], 2);
    assert_eq!(
        trace::ingest(false, "application/x-protobuf", None, body).unwrap(),
        0
    );
    assert!(trace::counts().1 >= late + 2);
}

static FAKE_CHAT: OnceLock<support::FakeProvider> = OnceLock::new();

fn chat_agent() -> Arc<dyn Agent> {
    let fake = FAKE_CHAT.get().expect("the fake is started");
    make_agent(
        niceeval::agent::chat::ChatAgent::new("openai/gpt-test")
            .base_url(format!("{}/v1", fake.url))
            .api_key_env("NICEEVAL_TRACES_TEST_NO_KEY"),
    )
}

#[test]
fn the_chat_agent_sends_the_turns_traceparent() {
    let fake = FAKE_CHAT.get_or_init(|| {
        support::FakeProvider::start(|_, _| support::Reply::json(support::openai_text("Hi.")))
    });
    fn twice(t: &mut Eval) -> BoxFuture<'_, niceeval::Result> {
        Box::pin(async move {
            t.send("one").await?;
            t.send("two").await?;
            Ok(())
        })
    }
    let report = run(define("chat_traceparent", chat_agent, twice));
    assert_eq!(report.outcome, Outcome::Passed, "{}", report.render());
    let parents: Vec<String> = fake
        .seen()
        .iter()
        .map(|seen| seen.headers.get("traceparent").cloned().unwrap_or_default())
        .collect();
    assert_eq!(parents.len(), 2);
    let parts: Vec<Vec<&str>> = parents.iter().map(|p| p.split('-').collect()).collect();
    for p in &parts {
        assert_eq!(
            (p.len(), p[0], p[1].len(), p[2].len(), p[3]),
            (4, "00", 32, 16, "01"),
            "{parents:?}"
        );
    }
    assert_eq!(parts[0][1], parts[1][1], "one trace per run");
    assert_ne!(parts[0][2], parts[1][2], "one parent span per turn");
}

/// A collector on 127.0.0.1 keeping every body POSTed to `/v1/traces`.
struct Collector {
    url: String,
    bodies: Arc<std::sync::Mutex<Vec<Vec<u8>>>>,
    _thread: std::thread::JoinHandle<()>,
}

fn collector() -> Collector {
    let bodies: Arc<std::sync::Mutex<Vec<Vec<u8>>>> = Arc::default();
    let (port_tx, port_rx) = std::sync::mpsc::channel();
    let kept = bodies.clone();
    let thread = std::thread::spawn(move || {
        rt().block_on(async move {
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
            port_tx.send(listener.local_addr().unwrap().port()).unwrap();
            let app = axum::Router::new().route(
                "/v1/traces",
                axum::routing::post(move |body: axum::body::Bytes| {
                    let kept = kept.clone();
                    async move {
                        kept.lock().unwrap().push(body.to_vec());
                        ""
                    }
                }),
            );
            axum::serve(listener, app).await.unwrap();
        })
    });
    let port = port_rx.recv().unwrap();
    Collector {
        url: format!("http://127.0.0.1:{port}"),
        bodies,
        _thread: thread,
    }
}

#[test]
fn an_exported_eval_decodes_as_otlp_with_the_eval_run_turn_agent_tree() {
    if !python_with(&[
        "opentelemetry.proto",
        "opentelemetry.exporter.otlp.proto.http",
    ]) {
        return;
    }
    let collector = collector();
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("niceeval.toml"),
        format!("[trace]\nexport = \"{}\"\n", collector.url),
    )
    .unwrap();
    let manifest_dir: &'static str = Box::leak(dir.path().display().to_string().into_boxed_str());
    let def: &'static EvalDefinition = Box::leak(Box::new(
        EvalDefinition::new(
            "exported",
            module_path!(),
            file!(),
            line!(),
            manifest_dir,
            passing,
        )
        .with_agent(protobuf_agent),
    ));
    let report = niceeval::__private::run_test_report(def);
    assert_eq!(report.outcome, Outcome::Passed, "{}", report.render());
    let bodies = collector.bodies.lock().unwrap().clone();
    assert_eq!(bodies.len(), 1, "one request per eval");
    let file = dir.path().join("export.bin");
    std::fs::write(&file, &bodies[0]).unwrap();
    let out = std::process::Command::new("python3")
        .arg(script("decode_export.py"))
        .arg(&file)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let spans: Vec<Value> = serde_json::from_slice(&out.stdout).unwrap();
    let named = |prefix: &str| {
        spans
            .iter()
            .find(|s| s["name"].as_str().unwrap().starts_with(prefix))
            .unwrap_or_else(|| panic!("no span {prefix} in {spans:#?}"))
    };
    let eval = named("eval ");
    let run = named("run 1");
    let turn = named("turn 1");
    let agent = named("invoke_agent");
    let chat = named("chat gpt-4o-mini");
    let tool = named("execute_tool refund");
    assert_eq!(eval["parent"], "");
    assert_eq!(run["parent"], eval["span_id"]);
    assert_eq!(turn["parent"], run["span_id"]);
    assert_eq!(agent["parent"], turn["span_id"]);
    assert_eq!(chat["parent"], agent["span_id"]);
    assert_eq!(tool["parent"], agent["span_id"]);
    assert!(
        spans.iter().all(|s| s["trace_id"] == eval["trace_id"]),
        "one trace per eval"
    );
    assert_eq!(chat["attributes"]["gen_ai.usage.input_tokens"], 120);
    let results: Vec<&Value> = run["events"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["name"] == "gen_ai.evaluation.result")
        .collect();
    assert_eq!(results.len(), report.assertions.len());
    let order = results
        .iter()
        .find(|e| {
            e["attributes"]["gen_ai.evaluation.name"]
                == "tool_order([\"lookup_order\", \"refund\"])"
        })
        .unwrap_or_else(|| panic!("{results:#?}"));
    assert_eq!(order["attributes"]["gen_ai.evaluation.score.label"], "pass");
    assert_eq!(order["attributes"]["gen_ai.evaluation.score.value"], 1.0);
}
