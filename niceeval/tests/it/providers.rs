//! Model providers and the chat agent against a fake provider on 127.0.0.1 speaking each real
//! wire format: tool-call parsing, usage, retries, errors, and the tool loop.

#![cfg(feature = "providers")]

use crate::support;
use crate::support::rt;

use std::time::Duration;

use niceeval::__workspace::provider::{
    ChatRequest, ClientOptions, ModelClient, ModelName, ProviderError, RetryPolicy, ToolSpec,
};
use niceeval::agent::chat::{ChatAgent, Tool};
use niceeval::{ActionStatus, Eval, Event, TurnStatus};
use serde_json::json;
use support::{FakeProvider, Reply};

fn fast_retries(n: u32) -> RetryPolicy {
    RetryPolicy::default()
        .retries(n)
        .backoff_between(Duration::from_millis(10), Duration::from_millis(40))
}

fn make_client(
    model: &str,
    server: &FakeProvider,
    base_suffix: &str,
    retry: RetryPolicy,
) -> ModelClient {
    ModelClient::new(
        ModelName::parse(model).unwrap(),
        ClientOptions::default()
            .base_url(format!("{}{base_suffix}", server.url))
            .retry(retry)
            .timeout(Duration::from_secs(5)),
    )
    .unwrap()
}

fn lookup_request() -> ChatRequest {
    ChatRequest::new()
        .system("You look orders up.")
        .user("Where is order 123?")
        .tool(ToolSpec::new(
            "lookup_order",
            "Looks an order up",
            json!({"type": "object", "properties": {"id": {"type": "string"}}}),
        ))
}

#[test]
fn openai_tool_calls_and_usage_are_parsed() {
    let server = FakeProvider::start(|_, _| {
        Reply::json(support::openai_tool_call(
            "lookup_order",
            json!({"id": "123"}),
        ))
    });
    let client = make_client("openai/gpt-test", &server, "/v1", RetryPolicy::none());
    let answer = rt().block_on(client.complete(&lookup_request())).unwrap();
    assert_eq!(answer.tool_calls.len(), 1);
    assert_eq!(answer.tool_calls[0].name, "lookup_order");
    assert_eq!(answer.tool_calls[0].arguments, json!({"id": "123"}));
    assert_eq!(answer.usage.input_tokens, 120);
    assert_eq!(answer.usage.output_tokens, 30);
    let seen = &server.seen()[0];
    assert_eq!(seen.path, "/v1/chat/completions");
    assert_eq!(
        seen.body["messages"][0],
        json!({"role": "system", "content": "You look orders up."})
    );
    assert_eq!(seen.body["tool_choice"], "auto");
    assert!(
        !seen.headers.contains_key("authorization"),
        "loopback without a key sends none"
    );
}

#[test]
fn anthropic_tool_use_blocks_are_parsed() {
    let server = FakeProvider::start(|_, _| {
        Reply::json(support::anthropic_tool_use(
            "lookup_order",
            json!({"id": "123"}),
        ))
    });
    let client = make_client("anthropic/claude-test", &server, "", RetryPolicy::none());
    let answer = rt().block_on(client.complete(&lookup_request())).unwrap();
    assert_eq!(answer.text, "Let me think.");
    assert_eq!(answer.tool_calls[0].id, "toolu_1");
    assert_eq!(answer.tool_calls[0].arguments, json!({"id": "123"}));
    assert_eq!(answer.usage.total_tokens(), 120);
    let seen = &server.seen()[0];
    assert_eq!(seen.path, "/v1/messages");
    assert_eq!(seen.body["system"], "You look orders up.");
    assert_eq!(seen.body["tools"][0]["input_schema"]["type"], "object");
}

#[test]
fn persistent_server_errors_give_up_after_the_retries() {
    let server =
        FakeProvider::start(|_, _| Reply::status(503, r#"{"error":{"message":"overloaded"}}"#));
    let client = make_client("openai/m", &server, "/v1", fast_retries(2));
    let err = rt()
        .block_on(client.complete(&ChatRequest::new().user("hi")))
        .unwrap_err();
    assert_eq!(server.count(), 3);
    let text = err.to_string();
    assert!(
        text.contains("HTTP 503")
            && text.contains("after 3 attempts")
            && text.contains("overloaded"),
        "{text}"
    );
}

#[test]
fn client_errors_are_not_retried() {
    let server =
        FakeProvider::start(|_, _| Reply::status(400, r#"{"error":{"message":"unknown model"}}"#));
    let client = make_client("openai/m", &server, "/v1", fast_retries(3));
    let err = rt()
        .block_on(client.complete(&ChatRequest::new().user("hi")))
        .unwrap_err();
    assert_eq!(server.count(), 1);
    assert!(
        matches!(err, ProviderError::Status { status: 400, .. }),
        "{err}"
    );
}

#[test]
fn retry_after_as_an_http_date_is_honoured_and_too_long_a_wait_is_refused() {
    let soon = httpdate::fmt_http_date(std::time::SystemTime::now() + Duration::from_secs(1));
    let server = FakeProvider::start(move |n, _| match n {
        0 => Reply::status(429, "{}").header("retry-after", &soon),
        _ => Reply::json(support::openai_text("ok")),
    });
    let client = make_client("openai/m", &server, "/v1", fast_retries(1));
    let answer = rt()
        .block_on(client.complete(&ChatRequest::new().user("hi")))
        .unwrap();
    assert_eq!(answer.text, "ok");
    assert_eq!(server.count(), 2);

    let server = FakeProvider::start(|_, _| Reply::status(429, "{}").header("retry-after", "3600"));
    let limited = make_client("openai/m", &server, "/v1", fast_retries(3));
    let err = rt()
        .block_on(limited.complete(&ChatRequest::new().user("hi")))
        .unwrap_err();
    assert!(
        matches!(err, ProviderError::RetryTooLate { seconds: 3600, .. }),
        "{err}"
    );
    assert_eq!(server.count(), 1);
}

#[test]
fn connection_errors_are_retried_then_reported() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let client = ModelClient::new(
        ModelName::parse("openai/m").unwrap(),
        ClientOptions::default()
            .base_url(format!("http://127.0.0.1:{port}/v1"))
            .retry(fast_retries(2)),
    )
    .unwrap();
    let err = rt()
        .block_on(client.complete(&ChatRequest::new().user("hi")))
        .unwrap_err();
    let text = err.to_string();
    assert!(
        text.starts_with("cannot reach openai/m") && text.contains("after 3 attempts"),
        "{text}"
    );
}

#[test]
fn timeouts_are_reported_without_retrying() {
    let server = FakeProvider::start(|_, _| {
        Reply::json(support::openai_text("late")).delay(Duration::from_secs(3))
    });
    let client = ModelClient::new(
        ModelName::parse("openai/m").unwrap(),
        ClientOptions::default()
            .base_url(format!("{}/v1", server.url))
            .timeout(Duration::from_millis(200))
            .retry(fast_retries(3)),
    )
    .unwrap();
    let err = rt()
        .block_on(client.complete(&ChatRequest::new().user("hi")))
        .unwrap_err();
    assert!(matches!(err, ProviderError::Timeout { .. }), "{err}");
    // The client gave up on its request, not the server: on a loaded machine the server may
    // take it in only after the client's 200 ms, so wait for it (the client retries nothing
    // after it returned), then check it was the only one.
    let waited = std::time::Instant::now();
    while server.count() == 0 && waited.elapsed() < Duration::from_secs(30) {
        std::thread::sleep(Duration::from_millis(10));
    }
    assert_eq!(server.count(), 1);
}

#[test]
fn agent_cache_is_opt_in() {
    let dir = tempfile::tempdir().unwrap();
    let server = FakeProvider::start(|_, _| Reply::json(support::openai_text("hello")));
    let make = |mode| {
        ModelClient::new(
            ModelName::parse("openai/m").unwrap(),
            ClientOptions::default()
                .base_url(format!("{}/v1", server.url))
                .cache(mode)
                .cache_dir(dir.path()),
        )
        .unwrap()
    };
    let rt = rt();
    let request = ChatRequest::new().user("hi");
    let off = make(niceeval::__workspace::config::CacheMode::Off);
    rt.block_on(off.complete(&request)).unwrap();
    rt.block_on(off.complete(&request)).unwrap();
    assert_eq!(server.count(), 2);
    let on = make(niceeval::__workspace::config::CacheMode::ReadWrite);
    assert!(!rt.block_on(on.complete(&request)).unwrap().cached);
    assert!(rt.block_on(on.complete(&request)).unwrap().cached);
    assert_eq!(server.count(), 3);
    let write_only = make(niceeval::__workspace::config::CacheMode::Write);
    assert!(!rt.block_on(write_only.complete(&request)).unwrap().cached);
    assert_eq!(server.count(), 4);
}

fn order_tool() -> Tool {
    Tool::new(
        "lookup_order",
        "Looks an order up",
        json!({"type": "object", "properties": {"id": {"type": "string"}}, "required": ["id"]}),
        |input| async move {
            match input["id"].as_str() {
                Some("123") => Ok(json!({"id": "123", "status": "shipped"})),
                _ => Err("no such order".into()),
            }
        },
    )
}

#[test]
fn the_chat_agent_runs_the_tool_loop_and_emits_events() {
    let server = FakeProvider::start(|n, _| match n {
        0 => Reply::json(support::openai_tool_call(
            "lookup_order",
            json!({"id": "123"}),
        )),
        _ => Reply::json(support::openai_text("Order 123 has shipped.")),
    });
    let agent = ChatAgent::new("openai/gpt-test")
        .base_url(format!("{}/v1", server.url))
        .system("You are a support agent.")
        .tool(order_tool());
    let mut t = Eval::detached(Some(std::sync::Arc::new(agent)));
    let turn = rt().block_on(t.send("Where is order 123?")).unwrap();
    assert_eq!(turn.message, "Order 123 has shipped.");
    assert_eq!(turn.usage.total_tokens(), 150 + 15);
    let kinds: Vec<&str> = turn.events.iter().map(Event::kind).collect();
    assert_eq!(
        kinds,
        [
            "message",
            "usage",
            "action.called",
            "action.result",
            "usage",
            "message",
            // Why the model stopped (`chat:finish`), which a suite file's `finish-reason` reads.
            "custom"
        ]
    );
    assert!(
        matches!(&turn.events[6], Event::Custom { name, data } if name == "chat:finish" && data["finish_reason"] == "stop"),
        "{:?}",
        turn.events[6]
    );
    assert!(
        matches!(&turn.events[3], Event::ActionResult { status: ActionStatus::Completed, output, .. } if output["status"] == "shipped")
    );
    let second = &server.seen()[1];
    let messages = second.body["messages"].as_array().unwrap();
    assert_eq!(
        messages[2]["tool_calls"][0]["function"]["name"],
        "lookup_order"
    );
    assert_eq!(messages[3]["role"], "tool");
    assert_eq!(messages[3]["tool_call_id"], "call_abc");
    assert!(messages[3]["content"].as_str().unwrap().contains("shipped"));
    // The next turn carries the history.
    rt().block_on(t.send("Thanks")).unwrap();
    let third = &server.seen()[2];
    let roles: Vec<&str> = third.body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .collect();
    assert_eq!(roles, ["system", "user", "assistant", "user"]);
}

#[test]
fn failing_and_unknown_tools_become_failed_actions_the_model_sees() {
    let server = FakeProvider::start(|n, _| match n {
        0 => Reply::json(support::openai_tool_call(
            "lookup_order",
            json!({"id": "999"}),
        )),
        1 => Reply::json(support::openai_tool_call("delete_order", json!({}))),
        _ => Reply::json(support::openai_text("Sorry, I could not find it.")),
    });
    let agent = ChatAgent::new("openai/gpt-test")
        .base_url(format!("{}/v1", server.url))
        .tool(order_tool());
    let mut t = Eval::detached(Some(std::sync::Arc::new(agent)));
    let turn = rt().block_on(t.send("Where is order 999?")).unwrap();
    let failed: Vec<_> = turn
        .events
        .iter()
        .filter(|e| {
            matches!(
                e,
                Event::ActionResult {
                    status: ActionStatus::Failed,
                    ..
                }
            )
        })
        .collect();
    assert_eq!(failed.len(), 2, "{:?}", turn.events);
    let seen = server.seen();
    let tool_message = &seen[1].body["messages"].as_array().unwrap()[2];
    assert!(
        tool_message["content"]
            .as_str()
            .unwrap()
            .contains("no such order"),
        "{tool_message}"
    );
    let tool_message = seen[2].body["messages"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .clone();
    assert!(
        tool_message["content"]
            .as_str()
            .unwrap()
            .contains("no tool named"),
        "{tool_message}"
    );
}

#[test]
fn a_chat_agent_stuck_in_tool_calls_fails_the_turn() {
    let server = FakeProvider::start(|_, _| {
        Reply::json(support::openai_tool_call(
            "lookup_order",
            json!({"id": "123"}),
        ))
    });
    let agent = ChatAgent::new("openai/gpt-test")
        .base_url(format!("{}/v1", server.url))
        .tool(order_tool())
        .max_rounds(3);
    let mut t = Eval::detached(Some(std::sync::Arc::new(agent)));
    let err = rt().block_on(t.send("loop")).unwrap_err().to_string();
    assert!(
        err.contains("after 3 model calls") && err.contains("max_rounds"),
        "{err}"
    );
    assert_eq!(server.count(), 3);
    assert_eq!(t.turns()[0].status, TurnStatus::Failed);
}

#[test]
fn a_chat_agent_without_a_key_says_which_variable_to_set() {
    let agent = ChatAgent::new("anthropic/claude-test")
        .base_url("http://agent.invalid")
        .api_key_env("NICEEVAL_TEST_NEVER_SET_AGENT_KEY");
    let mut t = Eval::detached(Some(std::sync::Arc::new(agent)));
    let err = rt().block_on(t.send("hi")).unwrap_err().to_string();
    assert!(err.contains("NICEEVAL_TEST_NEVER_SET_AGENT_KEY"), "{err}");
}

#[test]
fn a_chat_agent_that_times_out_names_the_agent_timeout_not_the_judge() {
    let server = FakeProvider::start(|_, _| {
        Reply::json(support::openai_text("late")).delay(Duration::from_secs(3))
    });
    let agent = ChatAgent::new("openai/gpt-test")
        .base_url(format!("{}/v1", server.url))
        .timeout(Duration::from_millis(200));
    let mut t = Eval::detached(Some(std::sync::Arc::new(agent)));
    let err = rt().block_on(t.send("hi")).unwrap_err().to_string();
    assert!(err.contains("did not answer within 0.2s"), "{err}");
    assert!(
        err.contains("[agent] timeout in niceeval.toml, or ChatAgent::timeout(..)"),
        "{err}"
    );
    assert!(!err.contains("[judge]"), "{err}");
}

/// A process never holds more connections to an origin than it had requests in flight to it at
/// once: a request puts its connection back in the pool before its answer is handed back, and
/// opens one only when none is idle. Sequential requests, each from a runtime of its own, so
/// share one connection (a pool tied to a runtime would open one per request).
#[test]
fn a_pooled_connection_outlives_the_runtime_that_opened_it() {
    const REQUESTS: usize = 10;
    let server = FakeProvider::start(|_, _| Reply::json(support::openai_text("hi")));
    for _ in 0..REQUESTS {
        // A new client on a new runtime each time, the runtime dropped after its request.
        let client = make_client("openai/gpt-test", &server, "/v1", RetryPolicy::none());
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let answer = runtime.block_on(client.complete(&ChatRequest::new().user("hi")));
        assert_eq!(answer.unwrap().text, "hi");
        drop(runtime);
    }
    assert_eq!(server.count(), REQUESTS);
    assert_eq!(
        server.connections(),
        1,
        "{REQUESTS} requests one after another, each from a runtime of its own"
    );
}

#[test]
fn two_thousand_per_eval_agents_open_at_most_concurrency_connections() {
    const CONCURRENCY: usize = 8;
    const EVALS: usize = 2_000;
    let server = FakeProvider::start(|_, _| Reply::json(support::openai_text("hi")));
    let url = format!("{}/v1", server.url);
    // As under `cargo test`: CONCURRENCY threads, each eval with its own agent on its own
    // runtime.
    std::thread::scope(|scope| {
        for _ in 0..CONCURRENCY {
            scope.spawn(|| {
                for _ in 0..EVALS / CONCURRENCY {
                    let agent = ChatAgent::new("openai/gpt-test").base_url(url.clone());
                    let mut t = Eval::detached(Some(std::sync::Arc::new(agent)));
                    let runtime = tokio::runtime::Builder::new_current_thread()
                        .enable_all()
                        .build()
                        .unwrap();
                    let turn = runtime.block_on(t.send("hello")).unwrap();
                    assert_eq!(turn.message, "hi");
                }
            });
        }
    });
    assert_eq!(server.count(), EVALS);
    assert!(server.max_in_flight() <= CONCURRENCY);
    // Every connection the server accepted (the loopback server closes none).
    assert!(
        server.connections() <= CONCURRENCY,
        "{} connections for {EVALS} evals at concurrency {CONCURRENCY}",
        server.connections()
    );
}

/// The variables a child of the limit tests reads: the server, the shared target directory,
/// the limits, and how many requests it sends at once.
const CHILD_URL: &str = "NICEEVAL_TEST_LIMIT_URL";
const CHILD_DIR: &str = "NICEEVAL_TEST_LIMIT_DIR";
const CHILD_MAX: &str = "NICEEVAL_TEST_LIMIT_MAX";
const CHILD_RPM: &str = "NICEEVAL_TEST_LIMIT_RPM";
const CHILD_SENDS: &str = "NICEEVAL_TEST_LIMIT_SENDS";

/// One of the processes of the machine-wide limit tests (as nextest runs every test: a process
/// of this binary running one test). Sends its requests all at once through one client.
#[test]
#[ignore = "a child process of the machine-wide limit tests, which run it"]
fn limit_child() {
    let var = |name: &str| {
        std::env::var(name)
            .unwrap_or_else(|_| panic!("{name} is unset: this test is run by the limit tests"))
    };
    let mut options = ClientOptions::default()
        .base_url(var(CHILD_URL))
        .limits_dir(var(CHILD_DIR))
        .max_concurrency(var(CHILD_MAX).parse().unwrap())
        .timeout(Duration::from_secs(120));
    if let Ok(rpm) = std::env::var(CHILD_RPM) {
        options = options.requests_per_minute(rpm.parse().unwrap());
    }
    let client = std::sync::Arc::new(
        ModelClient::new(ModelName::parse("openai/gpt-test").unwrap(), options).unwrap(),
    );
    let sends: usize = var(CHILD_SENDS).parse().unwrap();
    rt().block_on(async {
        let tasks: Vec<_> = (0..sends)
            .map(|_| {
                let client = client.clone();
                tokio::spawn(async move { client.complete(&ChatRequest::new().user("hi")).await })
            })
            .collect();
        for task in tasks {
            assert_eq!(task.await.unwrap().unwrap().text, "hi");
        }
    });
}

/// Runs `processes` children of this test binary (each `limit_child`) at once against `server`
/// with one shared target directory.
fn run_children(server: &FakeProvider, processes: usize, vars: &[(&str, String)]) {
    let dir = tempfile::tempdir().unwrap();
    let exe = std::env::current_exe().unwrap();
    let children: Vec<_> = (0..processes)
        .map(|_| {
            std::process::Command::new(&exe)
                .args([
                    "--exact",
                    "providers::limit_child",
                    "--ignored",
                    "--nocapture",
                ])
                .env(CHILD_URL, format!("{}/v1", server.url))
                .env(CHILD_DIR, dir.path())
                .envs(vars.iter().map(|(k, v)| (k, v)))
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for child in children {
        let out = child.wait_with_output().unwrap();
        assert!(
            out.status.success(),
            "a child failed:\n{}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

#[test]
fn max_concurrency_holds_across_sixteen_processes() {
    let server = FakeProvider::start(|_, _| {
        Reply::json(support::openai_text("hi")).delay(Duration::from_millis(100))
    });
    // 16 processes of 5 requests at once each: without a machine-wide limit, up to 16 × 3 = 48
    // would be in flight.
    run_children(
        &server,
        16,
        &[(CHILD_MAX, "3".into()), (CHILD_SENDS, "5".into())],
    );
    assert_eq!(server.count(), 80);
    assert!(
        server.max_in_flight() <= 3,
        "{} requests in flight at once, over the limit of 3",
        server.max_in_flight()
    );
}

#[test]
fn requests_per_minute_hold_across_processes() {
    let server = FakeProvider::start(|_, _| Reply::json(support::openai_text("hi")));
    // 1,200 per minute: starts 50 ms apart, the first no earlier than now, so the last of 12
    // requests from 4 processes starts — and reaches the server — at least 11 × 50 ms from now.
    // (Measured from the requests' arrivals alone, the span shrinks on a loaded machine when
    // an early request is held up on its way and a late one is not.) 10 ms of slack for the
    // two clocks: the pace file's wall clock, the server's monotonic one.
    let before = std::time::Instant::now();
    run_children(
        &server,
        4,
        &[
            (CHILD_MAX, "8".into()),
            (CHILD_RPM, "1200".into()),
            (CHILD_SENDS, "3".into()),
        ],
    );
    let seen = server.seen();
    assert_eq!(seen.len(), 12);
    let last = seen.iter().map(|s| s.at).max().unwrap();
    assert!(
        last - before >= Duration::from_millis(540),
        "12 requests within {:?} of the start",
        last - before
    );
}

#[test]
fn a_killed_process_frees_its_slot() {
    // The first request hangs (its process holds the only slot); later ones answer at once.
    let server = FakeProvider::start(|n, _| {
        let reply = Reply::json(support::openai_text("hi"));
        if n == 0 {
            reply.delay(Duration::from_secs(5))
        } else {
            reply
        }
    });
    let dir = tempfile::tempdir().unwrap();
    let mut child = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "providers::limit_child", "--ignored"])
        .env(CHILD_URL, format!("{}/v1", server.url))
        .env(CHILD_DIR, dir.path())
        .env(CHILD_MAX, "1")
        .env(CHILD_SENDS, "1")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let waited = std::time::Instant::now();
    while server.count() == 0 {
        assert!(
            waited.elapsed() < Duration::from_secs(120),
            "the child never sent"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    child.kill().unwrap(); // SIGKILL: no destructor runs, the kernel closes the lock file
    let status = child.wait().unwrap();
    assert!(
        !status.success(),
        "the child finished its request before it was killed: {status}"
    );
    let client = ModelClient::new(
        ModelName::parse("openai/gpt-test").unwrap(),
        ClientOptions::default()
            .base_url(format!("{}/v1", server.url))
            .limits_dir(dir.path())
            .max_concurrency(1)
            .timeout(Duration::from_secs(60)),
    )
    .unwrap();
    let answer = rt().block_on(async {
        tokio::time::timeout(
            Duration::from_secs(60),
            client.complete(&ChatRequest::new().user("hi")),
        )
        .await
    });
    assert_eq!(
        answer
            .expect("the slot of the killed process was not freed")
            .unwrap()
            .text,
        "hi"
    );
}
