//! LLM-as-judge end to end: evals run through `run_eval` against a fake provider on 127.0.0.1
//! that speaks the real wire formats. No test touches the network.

#![cfg(feature = "providers")]

use crate::support;

use niceeval::Chain;
use std::sync::Arc;
use std::time::Duration;

use niceeval::__private::BoxFuture;
use niceeval::{AssertionKind, Eval, EvalReport, Outcome, Severity, agent::Agent};
use serde_json::json;
use support::{Crate, FakeProvider, Reply, define, openai_choice, run, says};

type BodyResult = Result<(), niceeval::Error>;

fn paris() -> Arc<dyn Agent> {
    says("Paris is the capital of France.")
}

/// A `[judge]` table for the fake provider. The cache goes to the crate's own directory
/// (`cache_dir` is relative to niceeval.toml), so no two tests share one, wherever the target
/// directory is (`CARGO_TARGET_DIR` would otherwise give every crate the same cache).
fn openai_toml(server: &FakeProvider, extra: &str) -> String {
    format!(
        "[judge]\nmodel = \"openai/judge-toml\"\nbase_url = \"{}/v1\"\ncache_dir = \"judge-cache\"\n{extra}",
        server.url
    )
}

fn judge_results(report: &EvalReport) -> Vec<&niceeval::AssertionResult> {
    report
        .assertions
        .iter()
        .filter(|a| a.kind == AssertionKind::Judge)
        .collect()
}

/// The fake judge picks the choice written after "pick " in the expected answer / criterion.
fn choice_from_prompt(_: usize, seen: &support::Seen) -> Reply {
    let prompt = seen.prompt();
    let choice = prompt
        .split("pick ")
        .nth(1)
        .and_then(|rest| rest.chars().next())
        .map(|c| c.to_string())
        .unwrap_or_else(|| "?".into());
    openai_choice(&choice, &format!("because the data says pick {choice}"))
}

fn five_factuality(t: &mut Eval) -> BoxFuture<'_, BodyResult> {
    Box::pin(async move {
        t.send("What is the capital of France?").await?;
        for choice in ["A", "B", "C", "D", "E"] {
            t.judge().factuality(format!("expert: pick {choice}"));
        }
        t.judge().closed_qa("criterion: pick Y");
        t.judge().closed_qa("criterion: pick N");
        Ok(())
    })
}

#[test]
fn score_maps_and_rationale_follow_autoevals() {
    let server = FakeProvider::start(choice_from_prompt);
    let krate = Crate::new(&openai_toml(&server, ""));
    let report = run(define("score_maps", &krate, five_factuality).with_agent(paris));
    let judges = judge_results(&report);
    let scores: Vec<f64> = judges.iter().map(|a| a.score).collect();
    assert_eq!(
        scores,
        vec![0.4, 0.6, 1.0, 0.0, 1.0, 1.0, 0.0],
        "{}",
        report.render()
    );
    for judge in &judges {
        assert_eq!(judge.severity, Severity::Soft, "judges are soft by default");
        assert!(judge.passed, "soft without threshold passes: {judge:?}");
        assert!(
            judge.reason.contains("because the data says pick"),
            "{}",
            judge.reason
        );
        assert!(
            judge.reason.contains("judge: openai/judge-toml"),
            "{}",
            judge.reason
        );
    }
    assert_eq!(report.outcome, Outcome::Passed);
    let seen = server.seen();
    let factuality = seen
        .iter()
        .find(|s| s.prompt().contains("expert: pick A"))
        .unwrap();
    assert_eq!(factuality.path, "/v1/chat/completions");
    let prompt = factuality.prompt();
    assert!(
        prompt.contains("<question>\nWhat is the capital of France?\n</question>"),
        "{prompt}"
    );
    assert!(
        prompt.contains("<submission>\nParis is the capital of France.\n</submission>"),
        "{prompt}"
    );
    assert!(prompt.contains("exactly one of A, B, C, D, E."), "{prompt}");
    assert_eq!(
        factuality.body["tool_choice"],
        json!({"type": "function", "function": {"name": "select_choice"}})
    );
    assert_eq!(
        factuality.body["tools"][0]["function"]["name"],
        "select_choice"
    );
    assert_eq!(factuality.body["temperature"], 0.0);
}

fn thresholds(t: &mut Eval) -> BoxFuture<'_, BodyResult> {
    Box::pin(async move {
        t.send("q").await?;
        t.judge().factuality("pick A").at_least(0.5); // 0.4: soft below threshold
        t.judge().closed_qa("pick N").gate(); // 0: failed gate
        Ok(())
    })
}

#[test]
fn thresholds_and_gates_decide_the_outcome() {
    let server = FakeProvider::start(choice_from_prompt);
    let krate = Crate::new(&openai_toml(&server, ""));
    let report = run(define("thresholds", &krate, thresholds).with_agent(paris));
    let judges = judge_results(&report);
    assert!(judges[0].is_below_threshold(), "{:?}", judges[0]);
    assert!(judges[1].is_failed_gate(), "{:?}", judges[1]);
    assert_eq!(report.outcome, Outcome::Failed);
    assert!(
        report.error.is_none(),
        "a failed judge gate is not an execution error"
    );
}

fn resolution(t: &mut Eval) -> BoxFuture<'_, BodyResult> {
    Box::pin(async move {
        t.send("q").await?;
        t.judge().closed_qa("pick Y").model("openai/judge-call");
        t.judge().closed_qa("pick Y");
        Ok(())
    })
}

#[test]
fn model_resolution_per_call_then_attribute_then_toml() {
    let server = FakeProvider::start(choice_from_prompt);
    let krate = Crate::new(&openai_toml(&server, ""));
    run(define("with_attribute", &krate, resolution)
        .with_agent(paris)
        .with_judge_model("openai/judge-attribute"));
    let mut models: Vec<String> = server
        .seen()
        .iter()
        .map(|s| s.model().to_string())
        .collect();
    models.sort();
    assert_eq!(models, ["judge-attribute", "judge-call"]);

    let server = FakeProvider::start(choice_from_prompt);
    let krate = Crate::new(&openai_toml(&server, ""));
    let report = run(define("without_attribute", &krate, resolution).with_agent(paris));
    let mut models: Vec<String> = server
        .seen()
        .iter()
        .map(|s| s.model().to_string())
        .collect();
    models.sort();
    assert_eq!(models, ["judge-call", "judge-toml"]);
    assert_eq!(report.outcome, Outcome::Passed, "{}", report.render());
}

fn one_closed_qa(t: &mut Eval) -> BoxFuture<'_, BodyResult> {
    Box::pin(async move {
        t.send("Is Paris in France?").await?;
        t.judge().closed_qa("Does it answer the question?");
        Ok(())
    })
}

fn expect_judge_error(report: &EvalReport, needles: &[&str]) {
    assert_eq!(report.outcome, Outcome::Failed, "{}", report.render());
    let judge = judge_results(report)[0];
    let error = judge
        .error
        .as_deref()
        .unwrap_or_else(|| panic!("no error on {judge:?}"));
    for needle in needles {
        assert!(error.contains(needle), "{needle:?} not in: {error}");
    }
    let run_error = report.error_message().unwrap_or_default();
    assert!(run_error.contains("could not be evaluated"), "{run_error}");
}

#[test]
fn no_judge_model_is_an_error_saying_what_to_set() {
    let krate = Crate::new("");
    if std::env::var_os("NICEEVAL_JUDGE_MODEL").is_some() {
        return; // the environment configures a judge; this case cannot be shown here
    }
    let report = run(define("no_model", &krate, one_closed_qa).with_agent(paris));
    expect_judge_error(
        &report,
        &[
            ".model(",
            "#[eval(judge_model",
            "[judge] model",
            "NICEEVAL_JUDGE_MODEL",
        ],
    );
}

#[test]
fn no_api_key_is_an_error_naming_the_variable() {
    // A non-loopback base URL needs a key; none is set, so nothing is sent anywhere.
    let krate = Crate::new(
        "[judge]\nmodel = \"openai/m\"\nbase_url = \"http://judge.invalid/v1\"\napi_key_env = \"NICEEVAL_TEST_NEVER_SET_KEY\"\n",
    );
    let report = run(define("no_key", &krate, one_closed_qa).with_agent(paris));
    expect_judge_error(&report, &["NICEEVAL_TEST_NEVER_SET_KEY", "api_key_env"]);
}

#[test]
fn unusable_answers_are_clear_errors() {
    let cases: Vec<(Reply, &[&str])> = vec![
        (
            openai_choice("Maybe", "unsure"),
            &["\"Maybe\"", "not one of the allowed choices Y, N"],
        ),
        (
            Reply::json(support::openai_text("Y, it does.")),
            &["neither with a `select_choice` call", "Y, it does."],
        ),
        (
            Reply::raw("{\"choices\": [oops"),
            &["cannot read", "not a Chat Completions answer"],
        ),
        (
            Reply::json(support::openai_tool_call("select_choice", json!("x"))).header("x", "y"),
            &["no `choice`"],
        ),
        (
            Reply::status(401, r#"{"error":{"message":"Incorrect API key provided"}}"#),
            &["HTTP 401", "Incorrect API key provided"],
        ),
    ];
    for (reply, needles) in cases {
        let server = FakeProvider::start(move |_, _| reply.clone());
        let krate = Crate::new(&openai_toml(&server, "cache = \"off\"\n"));
        let report = run(define("unusable", &krate, one_closed_qa).with_agent(paris));
        expect_judge_error(&report, needles);
        assert_eq!(server.count(), 1, "not retried: {needles:?}");
    }
}

#[test]
fn a_slow_judge_times_out_with_a_clear_error() {
    let server = FakeProvider::start(|_, _| openai_choice("Y", "ok").delay(Duration::from_secs(3)));
    let krate = Crate::new(&openai_toml(&server, "timeout = \"300ms\"\n"));
    let report = run(define("slow", &krate, one_closed_qa).with_agent(paris));
    expect_judge_error(&report, &["did not answer within 0.3s", "[judge] timeout"]);
}

#[test]
fn rate_limits_are_retried_after_retry_after() {
    let server = FakeProvider::start(|n, _| match n {
        0 => Reply::status(429, r#"{"error":{"message":"slow down"}}"#).header("retry-after", "1"),
        _ => openai_choice("Y", "fine"),
    });
    let krate = Crate::new(&openai_toml(&server, ""));
    let report = run(define("rate_limited", &krate, one_closed_qa).with_agent(paris));
    assert_eq!(report.outcome, Outcome::Passed, "{}", report.render());
    assert_eq!(judge_results(&report)[0].score, 1.0);
    assert_eq!(server.count(), 2);
}

#[test]
fn server_errors_are_retried() {
    let server = FakeProvider::start(|n, _| match n {
        0 | 1 => Reply::status(500, "internal"),
        _ => openai_choice("Y", "fine"),
    });
    let krate = Crate::new(&openai_toml(&server, ""));
    let report = run(define("flaky", &krate, one_closed_qa).with_agent(paris));
    assert_eq!(report.outcome, Outcome::Passed, "{}", report.render());
    assert_eq!(server.count(), 3);
}

#[test]
fn anthropic_judges_use_the_messages_api() {
    let server = FakeProvider::start(|_, _| {
        Reply::json(support::anthropic_tool_use(
            "select_choice",
            json!({"reasons": ["consistent"], "choice": "C"}),
        ))
    });
    let var = "NICEEVAL_TEST_ANTHROPIC_KEY_A1";
    // SAFETY: other tests of this binary run on other threads, but the variable is unique to
    // this test, std serializes its own environment access (`env::var`, spawning a process)
    // with `set_var`, and nothing here reads the environment from C: every request goes to
    // 127.0.0.1, so no host name is resolved.
    unsafe { std::env::set_var(var, "sk-ant-test-a1") };
    let krate = Crate::new(&format!(
        "[judge]\nmodel = \"anthropic/claude-judge\"\nbase_url = \"{}\"\napi_key_env = \"{var}\"\ncache_dir = \"judge-cache\"\n",
        server.url
    ));
    let report = run(define("anthropic", &krate, five_factuality_one).with_agent(paris));
    assert_eq!(judge_results(&report)[0].score, 1.0, "{}", report.render());
    let seen = &server.seen()[0];
    assert_eq!(seen.path, "/v1/messages");
    assert_eq!(seen.headers["x-api-key"], "sk-ant-test-a1");
    assert_eq!(seen.headers["anthropic-version"], "2023-06-01");
    assert_eq!(seen.body["model"], "claude-judge");
    assert_eq!(
        seen.body["tool_choice"],
        json!({"type": "tool", "name": "select_choice"})
    );
    assert_eq!(seen.body["tools"][0]["name"], "select_choice");
    assert!(seen.body["max_tokens"].as_u64().is_some());
}

fn five_factuality_one(t: &mut Eval) -> BoxFuture<'_, BodyResult> {
    Box::pin(async move {
        t.send("q").await?;
        t.judge().factuality("Paris");
        Ok(())
    })
}

fn four_judges(t: &mut Eval) -> BoxFuture<'_, BodyResult> {
    Box::pin(async move {
        t.send("q").await?;
        t.judge().closed_qa("pick Y 1");
        t.judge().closed_qa("pick Y 2");
        t.judge().summarizes("pick A: the source text");
        t.judge().rubric("be polite").on("Hello there, friend!");
        Ok(())
    })
}

#[test]
fn judges_of_one_run_are_asked_concurrently() {
    let server = FakeProvider::start(|n, seen| {
        let reply = if seen.prompt().contains("<rubric>") {
            Reply::json(support::openai_tool_call(
                "grade",
                json!({"reasons": ["polite"], "score": 0.9}),
            ))
        } else {
            choice_from_prompt(n, seen)
        };
        // Each answer waits until two judge calls are at the server (or 10 s): a loaded
        // machine cannot make concurrent calls look sequential.
        reply.hold_until_in_flight(2)
    });
    let krate = Crate::new(&openai_toml(&server, ""));
    let report = run(define("concurrent", &krate, four_judges).with_agent(paris));
    let scores: Vec<f64> = judge_results(&report).iter().map(|a| a.score).collect();
    assert_eq!(scores, vec![1.0, 1.0, 1.0, 0.9], "{}", report.render());
    assert!(
        server.max_in_flight() >= 2,
        "in flight at once: {}",
        server.max_in_flight()
    );
    let rubric = server
        .seen()
        .into_iter()
        .find(|s| s.prompt().contains("<rubric>"))
        .unwrap();
    assert!(
        rubric
            .prompt()
            .contains("<submission>\nHello there, friend!\n</submission>"),
        "{}",
        rubric.prompt()
    );
}

fn twins(t: &mut Eval) -> BoxFuture<'_, BodyResult> {
    Box::pin(async move {
        t.send("q").await?;
        t.judge().closed_qa("pick Y");
        t.judge().closed_qa("pick Y").gate();
        Ok(())
    })
}

#[test]
fn identical_concurrent_judge_calls_share_one_request() {
    let server = FakeProvider::start(|n, seen| {
        choice_from_prompt(n, seen).delay(Duration::from_millis(300))
    });
    let krate = Crate::new(&openai_toml(&server, ""));
    let report = run(define("twins", &krate, twins).with_agent(paris));
    assert_eq!(report.outcome, Outcome::Passed, "{}", report.render());
    assert_eq!(judge_results(&report).len(), 2);
    assert_eq!(server.count(), 1);
}

#[test]
fn a_warm_cache_makes_no_judge_requests_and_corrupt_entries_are_rewritten() {
    let server = FakeProvider::start(|n, seen| {
        if seen.prompt().contains("<rubric>") {
            Reply::json(support::openai_tool_call(
                "grade",
                json!({"reasons": [], "score": 0.9}),
            ))
        } else {
            choice_from_prompt(n, seen)
        }
    });
    let krate = Crate::new(&openai_toml(&server, ""));
    let suite = || {
        [
            run(define("suite_a", &krate, four_judges).with_agent(paris)),
            run(define("suite_b", &krate, five_factuality).with_agent(paris)),
        ]
    };
    let cold = suite();
    let first = server.count();
    assert_eq!(first, 4 + 7, "one request per distinct judge call");
    let warm = suite();
    assert_eq!(server.count(), first, "the warm run asked the judge again");
    for (a, b) in cold.iter().zip(&warm) {
        let scores = |r: &EvalReport| judge_results(r).iter().map(|a| a.score).collect::<Vec<_>>();
        assert_eq!(scores(a), scores(b));
    }
    // Corrupt every entry: ignored, asked again, rewritten.
    let entries: Vec<_> = support::files_under(&krate.cache_dir());
    assert_eq!(entries.len(), first);
    for entry in &entries {
        std::fs::write(entry, b"{ truncated").unwrap();
    }
    let repaired = suite();
    assert!(repaired.iter().all(|r| r.outcome == Outcome::Passed));
    assert_eq!(server.count(), 2 * first);
    suite();
    assert_eq!(
        server.count(),
        2 * first,
        "rewritten entries serve the next run"
    );
}

#[test]
fn the_cache_lives_where_cache_dir_says_relative_to_niceeval_toml() {
    let server = FakeProvider::start(choice_from_prompt);
    let krate = Crate::new(&format!(
        "[judge]\nmodel = \"openai/judge-toml\"\nbase_url = \"{}/v1\"\ncache_dir = \"answers/judge\"\n",
        server.url
    ));
    // The eval's crate is a subdirectory: the path is read from the file's directory.
    let member = krate.path().join("member");
    std::fs::create_dir_all(&member).unwrap();
    let manifest_dir: &'static str =
        Box::leak(member.to_str().unwrap().to_string().into_boxed_str());
    fn pick_y(t: &mut Eval) -> BoxFuture<'_, BodyResult> {
        Box::pin(async move {
            t.send("q").await?;
            t.judge().closed_qa("pick Y");
            Ok(())
        })
    }
    let mut def = define("placed", &krate, pick_y).with_agent(paris);
    def.manifest_dir = manifest_dir;
    let report = run(def);
    assert_eq!(report.outcome, Outcome::Passed, "{}", report.render());
    run(define("placed", &krate, pick_y).with_agent(paris));
    assert_eq!(
        server.count(),
        1,
        "the second run is answered from the cache"
    );
    let dir = krate.path().join("answers/judge");
    assert_eq!(krate.cache_dir(), dir);
    assert_eq!(support::files_under(&dir).len(), 1);
    let default = niceeval::__workspace::cache::ResponseCache::for_manifest_dir(&member);
    assert!(
        support::files_under(default.dir())
            .iter()
            .all(|f| !f.starts_with(krate.path()))
    );
}

#[test]
fn cache_off_asks_every_time() {
    let server = FakeProvider::start(choice_from_prompt);
    let krate = Crate::new(&openai_toml(&server, "cache = \"off\"\n"));
    run(define("off_a", &krate, one_closed_qa).with_agent(paris));
    run(define("off_b", &krate, one_closed_qa).with_agent(paris));
    assert_eq!(server.count(), 2);
    assert!(support::files_under(&krate.cache_dir()).is_empty());
}

#[test]
fn the_api_key_is_never_written_anywhere() {
    let key = "sk-test-NEVER-WRITE-9f8e7d6c5b4a";
    let var = "NICEEVAL_TEST_KEY_SCAN_1";
    // SAFETY: other tests of this binary run on other threads, but the variable is unique to
    // this test, std serializes its own environment access (`env::var`, spawning a process)
    // with `set_var`, and nothing here reads the environment from C: every request goes to
    // 127.0.0.1, so no host name is resolved.
    unsafe { std::env::set_var(var, key) };
    let server = FakeProvider::start(choice_from_prompt);
    let krate = Crate::new(&openai_toml(&server, &format!("api_key_env = \"{var}\"\n")));
    let reports = [
        run(define("scan_a", &krate, five_factuality).with_agent(paris)),
        run(define("scan_b", &krate, one_closed_qa).with_agent(paris)),
    ];
    assert!(
        server
            .seen()
            .iter()
            .all(|s| s.headers["authorization"] == format!("Bearer {key}"))
    );
    // What a reporter would write: the JSON and text reports.
    for (i, report) in reports.iter().enumerate() {
        std::fs::write(
            krate.path().join(format!("report-{i}.json")),
            serde_json::to_vec_pretty(report).unwrap(),
        )
        .unwrap();
        std::fs::write(
            krate.path().join(format!("report-{i}.txt")),
            report.render(),
        )
        .unwrap();
    }
    let files = krate.files();
    assert!(
        files.iter().any(|f| f.starts_with(krate.cache_dir())),
        "the cache was written"
    );
    for file in files {
        let bytes = std::fs::read(&file).unwrap();
        assert!(
            !bytes.windows(key.len()).any(|w| w == key.as_bytes()),
            "{} contains the API key",
            file.display()
        );
    }
}

fn skip_without_judge(t: &mut Eval) -> BoxFuture<'_, BodyResult> {
    Box::pin(async move {
        if let Err(why) = t.judge().ready() {
            return t.skip(format!("no judge configured: {why}"));
        }
        t.send("q").await?;
        t.judge().closed_qa("pick Y");
        Ok(())
    })
}

#[test]
fn ready_tells_whether_a_judge_is_configured() {
    if std::env::var_os("NICEEVAL_JUDGE_MODEL").is_none() {
        let report = run(define("skip", &Crate::new(""), skip_without_judge).with_agent(paris));
        assert_eq!(report.outcome, Outcome::Skipped);
        assert!(report.skip_reason.unwrap().contains("NICEEVAL_JUDGE_MODEL"));
    }
    let server = FakeProvider::start(choice_from_prompt);
    let krate = Crate::new(&openai_toml(&server, ""));
    let report = run(define("ready", &krate, skip_without_judge).with_agent(paris));
    assert_eq!(report.outcome, Outcome::Passed, "{}", report.render());
}

fn judge_then_skip(t: &mut Eval) -> BoxFuture<'_, BodyResult> {
    Box::pin(async move {
        t.send("q").await?;
        t.judge().closed_qa("pick Y");
        t.skip("decided to skip after registering a judge")
    })
}

#[test]
fn skipped_and_errored_runs_do_not_ask_the_judge() {
    let server = FakeProvider::start(choice_from_prompt);
    let krate = Crate::new(&openai_toml(&server, ""));
    let report = run(define("judge_then_skip", &krate, judge_then_skip).with_agent(paris));
    assert_eq!(report.outcome, Outcome::Skipped, "{}", report.render());
    let report = run(define("judge_then_error", &krate, judge_then_error).with_agent(paris));
    assert_eq!(report.outcome, Outcome::Failed);
    assert!(report.error_message().unwrap().contains("fixture missing"));
    assert_eq!(server.count(), 0);
}

fn judge_then_error(t: &mut Eval) -> BoxFuture<'_, BodyResult> {
    Box::pin(async move {
        t.send("q").await?;
        t.judge().closed_qa("pick Y");
        Err(niceeval::Error::msg("fixture missing"))
    })
}

fn json_answer() -> Arc<dyn Agent> {
    says(r#"{"answer": "Paris, pick C", "trace": ["SECRET-TRACE looked up capitals"]}"#)
}

fn transformed(t: &mut Eval) -> BoxFuture<'_, BodyResult> {
    Box::pin(async move {
        t.send("What is the capital of France? Answer as JSON.")
            .await?;
        t.judge()
            .factuality("Paris")
            .transform(niceeval::expect::json_path("$.answer"));
        t.judge()
            .closed_qa("Is it polite?")
            .transform(niceeval::expect::json_path("$.missing"))
            .gate();
        Ok(())
    })
}

#[test]
fn a_transform_sends_the_judge_only_the_selected_part() {
    let server = FakeProvider::start(choice_from_prompt);
    let krate = Crate::new(&openai_toml(&server, "cache = \"off\"\n"));
    let report = run(define("transformed", &krate, transformed).with_agent(json_answer));
    let judges = judge_results(&report);
    assert_eq!(judges.len(), 2, "{}", report.render());
    assert_eq!(judges[0].name, "judge.factuality(\"Paris\") at $.answer");
    assert_eq!(judges[0].score, 1.0, "{}", report.render());
    // The selection failed: that assertion fails with the reason and asks no judge.
    assert_eq!(
        judges[1].name,
        "judge.closed_qa(\"Is it polite?\") at $.missing"
    );
    assert!(judges[1].is_failed_gate(), "{:?}", judges[1]);
    assert_eq!(judges[1].score, 0.0);
    assert!(
        judges[1].reason.contains("$.missing"),
        "{}",
        report.render()
    );
    let seen = server.seen();
    assert_eq!(seen.len(), 1, "one request, for the selected answer only");
    let prompt = seen[0].prompt();
    assert!(prompt.contains("Paris, pick C"), "{prompt}");
    assert!(!prompt.contains("SECRET-TRACE"), "{prompt}");
}

fn one_judge(t: &mut Eval) -> BoxFuture<'_, BodyResult> {
    Box::pin(async move {
        t.send("q").await?;
        t.judge().closed_qa("pick Y");
        Ok(())
    })
}

#[test]
fn judges_of_every_eval_share_pooled_connections() {
    let server = FakeProvider::start(choice_from_prompt);
    let krate = Crate::new(&openai_toml(&server, "cache = \"off\"\n"));
    // Each eval runs on a runtime of its own that is gone before the next one starts: the pooled
    // connection outlives them all.
    for _ in 0..20 {
        let report = run(define("shared", &krate, one_judge).with_agent(paris));
        assert_eq!(judge_results(&report)[0].score, 1.0, "{}", report.render());
    }
    assert_eq!(server.count(), 20);
    // One request at a time: one connection (a request puts its connection back in the pool
    // before its answer is handed back; see `provider/pool.rs`).
    assert_eq!(
        server.connections(),
        1,
        "connections for 20 evals one after another: the pooled connection did not outlive the evals"
    );
}
