//! The runner in process: `niceeval::__workspace::run_eval` on definitions built by hand (as `#[eval]` would
//! build them), checking the report fields that `cargo test` output does not show — outcome,
//! error, marks, skip reason, assertion order, the events kept after a crash, and runs.

use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use niceeval::__private::{BoxFuture, EvalDefinition};
use niceeval::RunErrorKind;
use niceeval::prelude::*;
use niceeval::{EvalReport, Role};

type Body = for<'a> fn(&'a mut Eval) -> BoxFuture<'a, niceeval::Result>;

/// A directory with an empty niceeval.toml, so no file from a parent directory applies.
fn quiet_dir() -> &'static str {
    static DIR: OnceLock<&'static str> = OnceLock::new();
    DIR.get_or_init(|| config_dir("# no settings\n"))
}

/// A fresh directory holding `contents` as niceeval.toml; lives as long as the process.
fn config_dir(contents: &str) -> &'static str {
    let dir = tempfile::tempdir().expect("a temporary directory");
    std::fs::write(dir.path().join("niceeval.toml"), contents).expect("writable temp dir");
    let path = dir.keep();
    Box::leak(path.display().to_string().into_boxed_str())
}

fn definition(name: &'static str, body: Body) -> EvalDefinition {
    EvalDefinition::new(name, module_path!(), file!(), line!(), quiet_dir(), body)
}

fn run(definition: EvalDefinition) -> EvalReport {
    niceeval::__workspace::run_eval(Box::leak(Box::new(definition)))
}

/// Whether the environment running these tests turned strict mode on (`NICEEVAL_STRICT`), which
/// applies to in-process evals as to any other.
fn strict_from_env() -> bool {
    std::env::var("NICEEVAL_STRICT").is_ok_and(|v| {
        matches!(
            v.trim().to_ascii_lowercase().as_str(),
            "1" | "true" | "yes" | "on"
        )
    })
}

fn names(report: &EvalReport) -> Vec<&str> {
    report.assertions.iter().map(|a| a.name.as_str()).collect()
}

fn greeter() -> Arc<dyn Agent> {
    Arc::new(agent_fn(|request: Request| async move {
        request
            .events
            .say(format!("Hello! You said: {}", request.input.text));
        Ok(())
    }))
}

/// Emits a tool call and a partial answer, then panics.
fn crashing_agent() -> Arc<dyn Agent> {
    Arc::new(agent_fn(|request: Request| async move {
        request.events.tool_call(
            "lookup_order",
            json!({"id": "123"}),
            json!({"status": "paid"}),
        );
        request.events.say("Your order is");
        if request.input.text.contains("order") {
            panic!("agent crashed mid-turn");
        }
        Ok(())
    }))
}

/// Emits a tool call and a partial answer, then never finishes.
fn hanging_agent() -> Arc<dyn Agent> {
    Arc::new(agent_fn(|request: Request| async move {
        request.events.tool_call(
            "lookup_order",
            json!({"id": "123"}),
            json!({"status": "paid"}),
        );
        request.events.say("Your order is");
        std::future::pending::<()>().await;
        Ok(())
    }))
}

fn broken_agent() -> Arc<dyn Agent> {
    Arc::new(agent_fn(|_request: Request| async move {
        Err(AgentError::new("upstream returned 503"))
    }))
}

fn panicking_factory() -> Arc<dyn Agent> {
    panic!("no credentials for the agent")
}

/// The events a crashed turn must keep: the user's message and everything the agent emitted.
fn assert_partial_turn_kept(report: &EvalReport) {
    let kinds: Vec<String> = report
        .events
        .iter()
        .map(|e| {
            serde_json::to_value(e).expect("events serialize")["type"]
                .as_str()
                .unwrap_or("?")
                .to_string()
        })
        .collect();
    assert_eq!(
        kinds,
        ["message", "action.called", "action.result", "message"],
        "{:#?}",
        report.events
    );
    assert_eq!(
        report.events[0],
        Event::Message {
            role: Role::User,
            text: "where is my order?".into()
        }
    );
    assert_eq!(report.events[3], Event::assistant("Your order is"));
}

#[test]
fn passing_eval_report() {
    fn body(t: &mut Eval) -> BoxFuture<'_, niceeval::Result> {
        Box::pin(async move {
            t.send("order 123").await?;
            t.check(t.reply(), includes("order 123"));
            t.check(t.reply(), similarity("Hello! You said: order 123"));
            Ok(())
        })
    }
    let report = run(definition("passing", body).with_agent(greeter));
    assert_eq!(report.outcome, Outcome::Passed);
    assert_eq!(report.id, "it::runtime::passing");
    assert!(report.file.ends_with("runtime.rs"), "{}", report.file);
    assert_eq!(report.error, None);
    assert!(!report.below_threshold);
    assert_eq!(report.skip_reason, None);
    assert_eq!(report.score, Some(1.0));
    assert_eq!(report.pass_rate(), 1.0);
    assert_eq!(report.runs[0].outcome, Outcome::Passed);
    assert_eq!(report.events.len(), 2, "{:#?}", report.events);
    assert_eq!(
        report.events[1],
        Event::assistant("Hello! You said: order 123")
    );
}

#[test]
fn assertions_are_reported_in_the_order_they_ran() {
    fn body(t: &mut Eval) -> BoxFuture<'_, niceeval::Result> {
        Box::pin(async move {
            t.check("c", includes("c"));
            t.require("a", includes("a"))?;
            t.check("b", excludes("z"));
            t.check("b", similarity("b").at_least(0.5));
            Ok(())
        })
    }
    let report = run(definition("ordered", body));
    assert_eq!(
        names(&report),
        [
            r#"includes("c")"#,
            r#"includes("a")"#,
            r#"excludes("z")"#,
            r#"similarity("b")"#
        ]
    );
    assert!(report.assertions.iter().all(|a| a.passed));
    assert_eq!(report.assertions[3].severity, Severity::Soft);
    assert_eq!(report.assertions[3].threshold, Some(0.5));
}

#[test]
fn failed_gate_fails_without_an_execution_error() {
    fn body(t: &mut Eval) -> BoxFuture<'_, niceeval::Result> {
        Box::pin(async move {
            t.check("Hello there", includes("Hello"));
            t.check("Hello there", includes("refund"));
            Ok(())
        })
    }
    let report = run(definition("failed_gate", body));
    assert_eq!(report.outcome, Outcome::Failed);
    assert_eq!(report.error, None);
    assert!(!report.below_threshold);
    assert_eq!(report.score, Some(0.5));
    let failed = &report.assertions[1];
    assert!(failed.is_failed_gate());
    assert_eq!(failed.reason, r#""Hello there" does not contain "refund""#);
}

#[test]
fn soft_below_threshold_is_marked_and_fails_only_under_strict() {
    fn body(t: &mut Eval) -> BoxFuture<'_, niceeval::Result> {
        Box::pin(async move {
            t.check("abc", includes("a"));
            t.check("abcd", similarity("wxyz").at_least(0.9));
            Ok(())
        })
    }
    let lenient = run(definition("soft", body));
    assert!(lenient.below_threshold);
    assert_eq!(lenient.error, None);
    assert_eq!(lenient.strict, strict_from_env());
    let expected = if strict_from_env() {
        Outcome::Failed
    } else {
        Outcome::Passed
    };
    assert_eq!(lenient.outcome, expected);
    assert!(lenient.assertions[1].is_below_threshold());

    let strict = run(definition("soft_strict", body).with_strict());
    assert_eq!(strict.outcome, Outcome::Failed);
    assert!(strict.strict);
    assert!(strict.below_threshold);
    assert_eq!(strict.error, None);
    assert!(
        strict
            .render()
            .contains("strict mode: soft assertions below")
    );
}

#[test]
fn skip_is_recorded_with_its_reason() {
    fn body(t: &mut Eval) -> BoxFuture<'_, niceeval::Result> {
        Box::pin(async move {
            t.check("configured", includes("config"));
            t.skip("no API key")?;
            t.check("after", includes("never reached"));
            Ok(())
        })
    }
    let report = run(definition("skip", body));
    assert_eq!(report.outcome, Outcome::Skipped);
    assert_eq!(report.skip_reason.as_deref(), Some("no API key"));
    assert_eq!(report.error, None);
    assert_eq!(names(&report), [r#"includes("config")"#]);
    assert_eq!(report.pass_rate(), 1.0);
}

#[test]
fn an_ignored_skip_still_skips() {
    fn body(t: &mut Eval) -> BoxFuture<'_, niceeval::Result> {
        Box::pin(async move {
            let _ = t.skip("first reason");
            let _ = t.skip("second reason");
            t.check("x", includes("x"));
            Ok(())
        })
    }
    let report = run(definition("ignored_skip", body));
    assert_eq!(report.outcome, Outcome::Skipped);
    assert_eq!(report.skip_reason.as_deref(), Some("first reason"));
}

#[test]
fn failed_gate_wins_over_skip() {
    fn body(t: &mut Eval) -> BoxFuture<'_, niceeval::Result> {
        Box::pin(async move {
            t.check("x", includes("y"));
            t.skip("too late")
        })
    }
    let report = run(definition("gate_then_skip", body));
    assert_eq!(report.outcome, Outcome::Failed);
    assert_eq!(report.skip_reason.as_deref(), Some("too late"));
}

#[test]
fn require_stops_the_body_without_an_execution_error() {
    fn body(t: &mut Eval) -> BoxFuture<'_, niceeval::Result> {
        Box::pin(async move {
            t.require("Hello", includes("refund"))?;
            t.check("Hello", includes("after"));
            Ok(())
        })
    }
    let report = run(definition("require", body));
    assert_eq!(report.outcome, Outcome::Failed);
    assert_eq!(report.error, None);
    assert_eq!(names(&report), [r#"includes("refund")"#]);
    let stopped = "t.require(includes(\"refund\")) did not pass; the rest of the body did not run";
    assert_eq!(report.stopped.as_deref(), Some(stopped));
    assert!(
        report
            .render()
            .contains(&format!("\n  stopped: {stopped}\n")),
        "{}",
        report.render()
    );
}

#[test]
fn a_require_that_passes_or_is_ignored_does_not_mark_the_body_stopped() {
    fn body(t: &mut Eval) -> BoxFuture<'_, niceeval::Result> {
        Box::pin(async move {
            t.require("Hello", includes("Hello"))?;
            let _ignored = t.require("Hello", includes("refund"));
            Ok(())
        })
    }
    let report = run(definition("require_ignored", body));
    assert_eq!(report.outcome, Outcome::Failed);
    assert_eq!(report.stopped, None);
    assert!(!report.render().contains("stopped:"), "{}", report.render());
}

#[test]
fn agent_panic_mid_turn_keeps_its_events() {
    fn body(t: &mut Eval) -> BoxFuture<'_, niceeval::Result> {
        Box::pin(async move {
            t.check("before", includes("before"));
            t.send("where is my order?").await?;
            t.check(t.reply(), includes("never checked"));
            Ok(())
        })
    }
    let report = run(definition("agent_panics", body).with_agent(crashing_agent));
    assert_eq!(report.outcome, Outcome::Failed);
    assert_eq!(
        report.error_message(),
        Some("the eval body panicked: agent crashed mid-turn")
    );
    assert_eq!(
        report.error.as_ref().map(|e| e.kind),
        Some(RunErrorKind::Panic)
    );
    assert_eq!(names(&report), [r#"includes("before")"#]);
    assert_partial_turn_kept(&report);
}

#[test]
fn agent_hang_mid_turn_times_out_and_keeps_its_events() {
    fn body(t: &mut Eval) -> BoxFuture<'_, niceeval::Result> {
        Box::pin(async move {
            t.check("before", includes("before"));
            t.send("where is my order?").await?;
            Ok(())
        })
    }
    let report = run(definition("agent_hangs", body)
        .with_agent(hanging_agent)
        // Room for the body to start on a loaded machine; the agent hangs for good.
        .with_timeout_ms(3_000));
    assert_eq!(report.outcome, Outcome::Failed);
    let error = report.error_message().unwrap_or_default();
    assert!(error.starts_with("timed out after 3s; "), "{error}");
    assert_eq!(
        report.error.as_ref().map(|e| e.kind),
        Some(RunErrorKind::Timeout)
    );
    assert_eq!(names(&report), [r#"includes("before")"#]);
    assert_partial_turn_kept(&report);
}

#[test]
fn blocking_body_times_out() {
    fn body(t: &mut Eval) -> BoxFuture<'_, niceeval::Result> {
        Box::pin(async move {
            t.check("before", includes("before"));
            std::thread::sleep(Duration::from_secs(10));
            t.check("after", includes("never reached"));
            Ok(())
        })
    }
    // Room for the body to start on a loaded machine; it blocks for 10 s.
    let report = run(definition("blocks", body).with_timeout_ms(3_000));
    assert_eq!(report.outcome, Outcome::Failed);
    let error = report.error_message().unwrap_or_default();
    assert!(error.starts_with("timed out after 3s; "), "{error}");
    assert_eq!(names(&report), [r#"includes("before")"#]);
}

#[test]
fn agent_error_is_an_execution_error_with_an_error_event() {
    fn body(t: &mut Eval) -> BoxFuture<'_, niceeval::Result> {
        Box::pin(async move {
            t.send("hi").await?;
            t.check(t.reply(), includes("never checked"));
            Ok(())
        })
    }
    let report = run(definition("agent_error", body).with_agent(broken_agent));
    assert_eq!(report.outcome, Outcome::Failed);
    assert_eq!(
        report.error_message(),
        Some("agent agent_fn failed: upstream returned 503")
    );
    assert_eq!(
        report.error.as_ref().map(|e| e.kind),
        Some(RunErrorKind::Agent)
    );
    assert!(report.assertions.is_empty());
    assert_eq!(
        report.events.last(),
        Some(&Event::Error {
            message: "upstream returned 503".into()
        })
    );
}

#[test]
fn body_error_is_the_run_error() {
    fn body(t: &mut Eval) -> BoxFuture<'_, niceeval::Result> {
        Box::pin(async move {
            t.check("x", includes("x"));
            Err(niceeval::Error::msg("the golden file is missing"))
        })
    }
    let report = run(definition("body_error", body));
    assert_eq!(report.outcome, Outcome::Failed);
    assert_eq!(report.error_message(), Some("the golden file is missing"));
    assert_eq!(
        report.error.as_ref().map(|e| e.kind),
        Some(RunErrorKind::Body)
    );
    assert_eq!(report.assertions.len(), 1);
}

#[test]
fn send_without_an_agent_is_a_clear_error() {
    fn body(t: &mut Eval) -> BoxFuture<'_, niceeval::Result> {
        Box::pin(async move {
            t.send("anyone?").await?;
            Ok(())
        })
    }
    let report = run(definition("no_agent", body));
    assert_eq!(report.outcome, Outcome::Failed);
    let error = report.error_message().unwrap_or_default();
    assert!(
        error.starts_with(
            "eval it::runtime::no_agent has no agent: add `#[eval(agent = my_agent)]`"
        ),
        "{error}"
    );
    assert!(
        error.contains("`[agent]` section in niceeval.toml"),
        "{error}"
    );
}

#[test]
fn panicking_agent_factory_is_an_execution_error() {
    static RAN: AtomicBool = AtomicBool::new(false);
    fn body(_t: &mut Eval) -> BoxFuture<'_, niceeval::Result> {
        Box::pin(async move {
            RAN.store(true, Ordering::SeqCst);
            Ok(())
        })
    }
    let report = run(definition("bad_factory", body).with_agent(panicking_factory));
    assert_eq!(report.outcome, Outcome::Failed);
    assert_eq!(
        report.error_message(),
        Some("creating the agent panicked: no credentials for the agent")
    );
    assert!(!RAN.load(Ordering::SeqCst), "the body must not run");
}

#[test]
fn panicking_value_check_is_an_error_on_that_assertion() {
    fn body(t: &mut Eval) -> BoxFuture<'_, niceeval::Result> {
        Box::pin(async move {
            t.check(
                "text",
                satisfies(
                    |_: &str| -> bool { panic!("predicate bug") },
                    "never panics",
                ),
            );
            t.check("text", includes("te"));
            Ok(())
        })
    }
    let report = run(definition("panicking_check", body));
    assert_eq!(report.outcome, Outcome::Failed);
    assert_eq!(
        names(&report),
        ["satisfies(never panics)", r#"includes("te")"#],
        "the body goes on after a broken check"
    );
    let broken = &report.assertions[0];
    assert!(!broken.passed);
    assert!(
        broken
            .error
            .as_deref()
            .is_some_and(|e| e.contains("predicate bug")),
        "{broken:?}"
    );
    let error = report.error_message().unwrap_or_default();
    assert!(
        error.starts_with("assertion satisfies(never panics) could not be evaluated: "),
        "{error}"
    );
}

#[test]
fn runs_fold_into_a_pass_rate() {
    static STRICT_RUNS: AtomicUsize = AtomicUsize::new(0);
    static LENIENT_RUNS: AtomicUsize = AtomicUsize::new(0);
    /// Passes on odd-numbered runs (1st, 3rd, ...), fails on the others.
    fn alternate(t: &Eval, counter: &AtomicUsize) {
        let n = counter.fetch_add(1, Ordering::SeqCst);
        let verdict = if n % 2 == 1 { "fail" } else { "pass" };
        t.check(verdict, equals("pass"));
    }
    fn strict_body(t: &mut Eval) -> BoxFuture<'_, niceeval::Result> {
        Box::pin(async move {
            alternate(t, &STRICT_RUNS);
            Ok(())
        })
    }
    fn lenient_body(t: &mut Eval) -> BoxFuture<'_, niceeval::Result> {
        Box::pin(async move {
            alternate(t, &LENIENT_RUNS);
            Ok(())
        })
    }

    let report = run(definition("runs", strict_body).with_runs(4));
    // Runs of one eval run concurrently, so which run saw which counter value is not fixed:
    // count outcomes instead of expecting an order.
    use Outcome::{Failed, Passed};
    let count = |o| report.runs.iter().filter(|r| r.outcome == o).count();
    assert_eq!((count(Passed), count(Failed)), (2, 2));
    let first_failed = report
        .runs
        .iter()
        .position(|r| r.outcome == Failed)
        .map_or(0, |i| i + 1);
    assert_eq!(report.pass_rate(), 0.5);
    assert_eq!(report.min_pass_rate, 1.0);
    assert_eq!(report.outcome, Failed);
    // The representative run is the first failed one.
    assert!(!report.assertions[0].passed);
    assert!(
        report.render().contains(&format!(
            "runs: 2/4 passed, pass rate 0.50 (needs 1.00); showing run {first_failed}"
        )),
        "{}",
        report.render()
    );

    let report = run(definition("runs_lenient", lenient_body)
        .with_runs(4)
        .with_min_pass_rate(0.5));
    assert_eq!(report.outcome, Passed);
    assert_eq!(report.pass_rate(), 0.5);
    assert_eq!(report.runs.len(), 4);
}

#[test]
fn skipped_runs_do_not_count_towards_the_pass_rate() {
    static SOME_SKIP: AtomicUsize = AtomicUsize::new(0);
    fn some_skip(t: &mut Eval) -> BoxFuture<'_, niceeval::Result> {
        Box::pin(async move {
            if SOME_SKIP.fetch_add(1, Ordering::SeqCst) == 0 {
                return t.skip("warming up");
            }
            t.check("ok", includes("ok"));
            Ok(())
        })
    }
    fn all_skip(t: &mut Eval) -> BoxFuture<'_, niceeval::Result> {
        Box::pin(async move { t.skip("no key") })
    }
    let report = run(definition("some_skip", some_skip).with_runs(3));
    // Runs of one eval run concurrently: which run took the counter first is not fixed (under
    // load it was the third), so count outcomes instead of expecting an order.
    let count = |o| report.runs.iter().filter(|r| r.outcome == o).count();
    assert_eq!(report.runs.len(), 3);
    assert_eq!((count(Outcome::Skipped), count(Outcome::Passed)), (1, 2));
    assert_eq!(report.pass_rate(), 1.0);
    assert_eq!(report.outcome, Outcome::Passed);

    let report = run(definition("all_skip", all_skip).with_runs(3));
    assert_eq!(report.outcome, Outcome::Skipped);
    assert_eq!(report.skip_reason.as_deref(), Some("no key"));
}

#[test]
fn malformed_config_fails_before_the_body_runs() {
    static RAN: AtomicBool = AtomicBool::new(false);
    fn body(_t: &mut Eval) -> BoxFuture<'_, niceeval::Result> {
        Box::pin(async move {
            RAN.store(true, Ordering::SeqCst);
            Ok(())
        })
    }
    let dir = config_dir("[run]\nconcurency = 4\n");
    let mut def = definition("bad_config", body);
    def.manifest_dir = dir;
    let report = run(def);
    assert_eq!(report.outcome, Outcome::Failed);
    let file = Path::new(dir).join("niceeval.toml");
    let error = report.error_message().unwrap_or_default();
    assert!(
        error.starts_with(&format!(
            "{}:2:1: [run] concurency: unknown key `concurency`; did you mean `concurrency`?",
            file.display()
        )),
        "{error}"
    );
    assert!(!RAN.load(Ordering::SeqCst), "the body must not run");
    assert_eq!(report.runs.len(), 1);
}

/// Replies 1 MiB: `BEGIN `, filler with two- and three-byte characters, `✓ END`.
fn long_talker() -> Arc<dyn Agent> {
    Arc::new(agent_fn(|request: Request| async move {
        let mut text = String::from("BEGIN ");
        while text.len() + 20 < 1 << 20 {
            text.push_str("héllo wörld ✓ ");
        }
        while text.len() + 7 < 1 << 20 {
            text.push('x');
        }
        text.push_str("✓ END");
        request.events.tool_call(
            "fetch",
            json!({ "id": 7, "page": text }),
            json!(text.clone()),
        );
        request.events.say(text);
        Ok(())
    }))
}

fn long_reply_body(t: &mut Eval) -> BoxFuture<'_, niceeval::Result> {
    Box::pin(async move {
        t.send("talk a lot").await?;
        t.check(t.reply().len(), equals(1 << 20));
        t.check(t.reply(), ends_with("✓ END"));
        t.check(
            t.reply(),
            make_assertion("quotes the reply").grade(|s: &str| niceeval::Grade::from_bool(true, s)),
        );
        Ok(())
    })
}

/// Every text of `report` that held the 1 MiB reply, with the bound it must meet.
fn stored_texts(report: &EvalReport) -> Vec<(&'static str, String)> {
    let mut texts = vec![("reason", report.assertions[2].reason.clone())];
    for event in &report.events {
        match event {
            Event::Message {
                role: Role::Assistant,
                text,
            } => texts.push(("reply", text.to_string())),
            Event::ActionCalled { input, .. } => {
                assert_eq!(input["id"], 7, "the input keeps its shape: {input}");
                let page = input["page"].as_str().expect("the page is a string");
                texts.push(("tool input", page.to_string()));
            }
            Event::ActionResult { output, .. } => texts.push((
                "tool output",
                output.as_str().expect("a string").to_string(),
            )),
            _ => {}
        }
    }
    assert_eq!(texts.len(), 4, "{texts:?}");
    texts
}

#[test]
fn reports_store_long_texts_capped_while_assertions_see_them_whole() {
    // The default: 64 KiB per value.
    let report = run(definition("long_reply", long_reply_body).with_agent(long_talker));
    assert_eq!(report.outcome, Outcome::Passed, "{}", report.render());
    assert!(report.assertions.iter().all(|a| a.passed));
    for (what, text) in stored_texts(&report) {
        assert!(text.len() <= 64 * 1024 + 64, "{what}: {} bytes", text.len());
        assert!(
            text.starts_with("BEGIN héllo") && text.ends_with("✓ END"),
            "{what}"
        );
        assert!(
            text.contains("…[elided 960.0 KiB of 1.0 MiB]…"),
            "{what}: {}",
            niceeval::__workspace::excerpt::elide(&text, 200)
        );
    }
    let line = serde_json::to_string(&report).expect("serializes");
    assert!(line.len() < 5 * 64 * 1024, "{} bytes", line.len());

    // `[report] max_text` in niceeval.toml.
    let mut def = definition("long_reply_small_cap", long_reply_body).with_agent(long_talker);
    def.manifest_dir = config_dir("[report]\nmax_text = \"4KiB\"\n");
    let report = run(def);
    assert_eq!(report.outcome, Outcome::Passed, "{}", report.render());
    for (what, text) in stored_texts(&report) {
        assert!(text.len() <= 4 * 1024 + 64, "{what}: {} bytes", text.len());
        assert!(text.contains("…[elided 1020.0 KiB of 1.0 MiB]…"), "{what}");
    }
}

/// A secret given to an agent (`SPOT_API_KEY`), and a reply that holds it where the reasons'
/// excerpts cut: the context before a match, the tail of `ends_with`, the elided middle of a
/// long text, a JSON value.
const SPOT_KEY: &str = "sk-spot-VERYSECRET-000111222";

#[cfg(unix)]
fn spot_agent() -> Arc<dyn Agent> {
    Arc::new(
        niceeval::agent::command::CommandAgent::shell(
            "printf 'Hello, here is what you asked for today: key %s then the word ERROR' \"$SPOT_API_KEY\"",
        )
        .text_output()
        .env("SPOT_API_KEY", SPOT_KEY),
    )
}

/// The 5-character windows of [`SPOT_KEY`] that show in `text` (a mask keeps its first 4
/// characters; every longer fragment holds a window).
fn spot_fragments(text: &str) -> Vec<&'static str> {
    (0..=SPOT_KEY.len() - 5)
        .map(|i| &SPOT_KEY[i..i + 5])
        .filter(|w| text.contains(w))
        .collect()
}

#[cfg(unix)]
#[test]
fn no_fragment_of_a_secret_reaches_the_reports_where_an_excerpt_cuts_it() {
    fn body(t: &mut Eval) -> BoxFuture<'_, niceeval::Result> {
        Box::pin(async move {
            t.send("go").await?;
            let long = format!("{} {}", t.reply(), "x".repeat(200));
            t.check(t.reply(), excludes("ERROR"));
            t.check(t.reply(), includes("WARNING"));
            t.check(t.reply(), ends_with("WARNING"));
            t.check(
                t.reply(),
                equals("Hello, here is what you asked for today: nothing"),
            );
            t.check(t.reply(), similarity("key then the word WARNING"));
            t.check(t.reply(), regex("^WARNING"));
            t.check(t.reply(), is_json(None));
            t.check(long.as_str(), excludes("ERROR"));
            t.check(
                long.as_str(),
                equals(format!("{} {}", t.reply(), "y".repeat(200))),
            );
            t.check(
                json!({ "reply": long }),
                equals(json!({ "reply": "other" })),
            );
            Ok(())
        })
    }
    let report = run(definition("secret_at_a_cut", body).with_agent(spot_agent));
    assert_eq!(report.outcome, Outcome::Failed);
    let reasons: Vec<&str> = report
        .assertions
        .iter()
        .map(|a| a.reason.as_str())
        .collect();
    let excludes = reasons[0];
    assert!(
        excludes.contains("sk-s…[redacted] then the word ERROR"),
        "{reasons:#?}"
    );
    let dir = tempfile::tempdir().expect("a temporary directory");
    let file = |name: &str| dir.path().join(name);
    let create = |name: &str| std::fs::File::create(file(name)).expect("writable");
    let mut reporters: Vec<Box<dyn niceeval::reporter::Reporter>> = vec![
        Box::new(niceeval::__workspace::reporter::Jsonl::new(create(
            "r.jsonl",
        ))),
        Box::new(niceeval::__workspace::reporter::Junit::new(create("r.xml"))),
        Box::new(niceeval::__workspace::reporter::Markdown::new(create(
            "r.md",
        ))),
        Box::new(niceeval::__workspace::reporter::Html::new(create("r.html"))),
        Box::new(niceeval::__workspace::reporter::Console::new(
            create("console.txt"),
            false,
        )),
    ];
    niceeval::__workspace::results::replay(std::slice::from_ref(&report), &mut reporters);
    drop(reporters);
    let read = |name: &str| std::fs::read_to_string(file(name)).expect("written");
    let page = read("r.html");
    let mut html_data = String::new();
    for part in page.split("application/x-niceeval-gz\" id=\"").skip(1) {
        let id = &part[..part.find('"').expect("an id")];
        let data = niceeval_tests::page::data(&page, id).expect("the element's data");
        html_data.push_str(&data.to_string());
    }
    assert!(html_data.contains("then the word ERROR"), "{html_data}");
    let outputs = [
        (
            "the report",
            serde_json::to_string(&report).expect("serializes"),
        ),
        ("JSONL", read("r.jsonl")),
        ("JUnit", read("r.xml")),
        ("Markdown", read("r.md")),
        ("HTML", page.clone()),
        ("the HTML page's data", html_data),
        ("the console", read("console.txt")),
    ];
    for (what, text) in &outputs {
        assert!(
            spot_fragments(text).is_empty(),
            "{what} shows {:?} of the secret:\n{text}",
            spot_fragments(text)
        );
    }
}
