//! What `cargo test` shows a user of `#[eval]`, proven on a real crate: the fixture
//! `fixtures/outcomes` (one eval per outcome) and `fixtures/bad-config` (a malformed
//! niceeval.toml) are built once, then their test binaries run as child processes — one eval at
//! a time with `--exact`, or whole — and once through `cargo test` itself. Each test asserts on
//! the exit status, libtest's `test NAME ... RESULT` lines and `test result:` counts, and the
//! rendered report in the failure output.

use niceeval_tests::child::Output;
use niceeval_tests::fixture::Fixtures;
use niceeval_tests::libtest::Summary;

/// libtest's exit code when a test failed.
const FAILED: Option<i32> = Some(101);

/// Every eval of the `outcomes` fixture, sorted by name.
const EVALS: [&str; 13] = [
    "agent_error",
    "body_error",
    "failing_gate",
    "no_agent",
    "panicking",
    "passing",
    "require_stops",
    "skipped",
    "soft_below_threshold",
    "soft_below_threshold_strict",
    "times_out_async",
    "times_out_blocking",
    "within_timeout",
];

/// The evals of the `outcomes` fixture that pass under `cargo test` without strict mode.
const PASSING: [&str; 4] = [
    "passing",
    "skipped",
    "soft_below_threshold",
    "within_timeout",
];

/// Runs one eval of the `outcomes` fixture.
fn eval(name: &str, extra: &[&str], env: &[(&str, &str)]) -> Output {
    let mut args = vec!["--exact", name];
    args.extend_from_slice(extra);
    Fixtures::get().run("outcomes", "evals", &args, env)
}

/// The failure output of a single failed eval, after checking it failed as one test of one.
fn failure_of(name: &str, out: &Output) -> String {
    let log = out.dump();
    assert_eq!(
        out.code(),
        FAILED,
        "{name} should fail the test binary\n{log}"
    );
    let libtest = out.libtest();
    assert_eq!(libtest.result_of(name), Some("FAILED"), "{log}");
    assert_eq!(libtest.failures(), vec![name], "{log}");
    let summary = libtest
        .summary()
        .unwrap_or_else(|| panic!("no summary\n{log}"));
    assert_eq!(
        (summary.ok, summary.passed, summary.failed),
        (false, 0, 1),
        "{log}"
    );
    let failure = libtest
        .failure_output(name)
        .unwrap_or_else(|| panic!("no captured output for {name}\n{log}"))
        .to_string();
    // The report is the failure message: no panic location or backtrace from the runner.
    if name != "panicking" {
        assert!(!failure.contains("panicked at"), "{log}");
    }
    failure
}

/// Checks a single eval passed as one test of one.
fn assert_passed(name: &str, out: &Output) {
    let log = out.dump();
    assert_eq!(out.code(), Some(0), "{name} should pass\n{log}");
    let libtest = out.libtest();
    assert_eq!(libtest.result_of(name), Some("ok"), "{log}");
    assert_eq!(
        libtest.summary(),
        Some(Summary {
            ok: true,
            passed: 1,
            failed: 0,
            ignored: 0,
            filtered_out: EVALS.len() as u32 - 1
        }),
        "{log}"
    );
}

/// The line `#[eval]` reports for `name`: the line of its `async fn`.
fn line_of(name: &str) -> usize {
    let source = Fixtures::get().crate_dir("outcomes").join("tests/evals.rs");
    let text = std::fs::read_to_string(&source).expect("the fixture source is readable");
    let needle = format!("async fn {name}(");
    text.lines()
        .position(|l| l.contains(&needle))
        .map(|i| i + 1)
        .unwrap_or_else(|| panic!("{needle} not found in {}", source.display()))
}

#[test]
fn passing_eval_passes_and_prints_nothing() {
    let out = eval("passing", &[], &[]);
    assert_passed("passing", &out);
    assert!(
        !out.stdout.contains("eval passing passed"),
        "a passing eval's report is captured:\n{}",
        out.dump()
    );
    assert!(!out.stderr.contains("SKIPPED"), "{}", out.dump());
    assert!(!out.stderr.contains("counted as passed"), "{}", out.dump());
}

#[test]
fn passing_eval_shows_its_report_with_nocapture() {
    let out = eval("passing", &["--nocapture"], &[]);
    assert_passed("passing", &out);
    let report = format!(
        "eval passing passed\n  at outcomes/tests/evals.rs:{}\n  2 assertion(s), score 1.00\n\n  ok    gate includes(\"order 123\") — score 1.00\n",
        line_of("passing")
    );
    assert!(out.stdout.contains(&report), "{}", out.dump());
}

#[test]
fn failing_gate_fails_and_the_report_is_the_whole_message() {
    let failure = failure_of("failing_gate", &eval("failing_gate", &[], &[]));
    let expected = format!(
        r#"eval failing_gate FAILED
  at outcomes/tests/evals.rs:{}
  2 assertion(s), 1 gate(s) failed, score 0.50

  ok    gate includes("Hello") — score 1.00
        found "Hello" at char 0: "Hello! You said: I want my money back"
  FAIL  gate includes("refund") — score 0.00
        "Hello! You said: I want my money back" does not contain "refund""#,
        line_of("failing_gate")
    );
    assert_eq!(failure.trim_end(), expected);
}

#[test]
fn soft_below_threshold_passes_with_a_mark() {
    let out = eval("soft_below_threshold", &[], &[]);
    assert_passed("soft_below_threshold", &out);
    // libtest counts it as a plain pass; at exit the process lists the mark and its assertion.
    assert!(
        out.stderr.ends_with(
            "niceeval: 1 of the tests counted as passed above was an eval that passed with soft assertions below their threshold (strict mode would fail it):\n  soft_below_threshold: similarity(\"your refund was issued today\") scored 0.10 (needs ≥ 0.90)\n"
        ),
        "{}",
        out.dump()
    );
    let out = eval("soft_below_threshold", &["--nocapture"], &[]);
    assert_passed("soft_below_threshold", &out);
    for expected in [
        "eval soft_below_threshold passed (below threshold)\n",
        "1 assertion(s), 1 below threshold, score 0.10\n",
        "BELOW soft similarity(\"your refund was issued today\") — score 0.10 (needs ≥ 0.90)\n",
        "got \"the parcel left the warehouse\", expected \"your refund was issued today\"",
    ] {
        assert!(
            out.stdout.contains(expected),
            "missing {expected:?}\n{}",
            out.dump()
        );
    }
    assert!(!out.stdout.contains("strict mode"), "{}", out.dump());
}

#[test]
fn soft_below_threshold_fails_with_niceeval_strict() {
    let failure = failure_of(
        "soft_below_threshold",
        &eval("soft_below_threshold", &[], &[("NICEEVAL_STRICT", "1")]),
    );
    assert!(
        failure.starts_with("eval soft_below_threshold FAILED\n"),
        "{failure}"
    );
    assert!(
        failure.contains("  strict mode: soft assertions below their threshold fail the eval\n"),
        "{failure}"
    );
    assert!(
        failure.contains(
            "  BELOW soft similarity(\"your refund was issued today\") — score 0.10 (needs ≥ 0.90)\n"
        ),
        "{failure}"
    );
    assert!(
        !failure.contains("error:"),
        "not an execution error:\n{failure}"
    );

    // Strict mode only concerns soft assertions: a passing eval still passes under it.
    assert_passed(
        "passing",
        &eval("passing", &[], &[("NICEEVAL_STRICT", "1")]),
    );
}

#[test]
fn strict_attribute_fails_without_the_environment_variable() {
    let failure = failure_of(
        "soft_below_threshold_strict",
        &eval("soft_below_threshold_strict", &[], &[]),
    );
    assert!(
        failure.starts_with("eval soft_below_threshold_strict FAILED\n"),
        "{failure}"
    );
    assert!(failure.contains("  strict mode: "), "{failure}");
    assert!(failure.contains("BELOW soft similarity("), "{failure}");
}

#[test]
fn invalid_niceeval_strict_fails_the_eval_naming_the_variable() {
    let failure = failure_of(
        "passing",
        &eval("passing", &[], &[("NICEEVAL_STRICT", "maybe")]),
    );
    assert!(
        failure.contains(
            "error: environment variable NICEEVAL_STRICT=\"maybe\" is invalid: use 1/true/yes/on or 0/false/no/off"
        ),
        "{failure}"
    );
}

#[test]
fn skip_is_announced_as_skipped_not_as_a_silent_pass() {
    let out = eval("skipped", &[], &[]);
    assert_passed("skipped", &out);
    // libtest has no runtime skip: the announcement goes to the terminal, past output capture.
    assert!(
        out.stderr
            .contains("niceeval: SKIPPED skipped: no API key in this environment\n"),
        "{}",
        out.dump()
    );
    assert!(!out.stdout.contains("niceeval: SKIPPED"), "{}", out.dump());
    // libtest's summary counts it as passed; at exit the process says which passes were skips.
    assert!(
        out.stderr.ends_with(
            "niceeval: 1 of the tests counted as passed above was a skipped eval (libtest has no runtime skip):\n  skipped: no API key in this environment\n"
        ),
        "{}",
        out.dump()
    );

    let out = eval("skipped", &["--nocapture"], &[]);
    assert!(
        out.stdout.contains(&format!(
            "eval skipped skipped\n  at outcomes/tests/evals.rs:{}\n  skipped: no API key in this environment\n",
            line_of("skipped")
        )),
        "{}",
        out.dump()
    );
    assert_eq!(
        out.stderr.matches("niceeval: SKIPPED").count(),
        1,
        "{}",
        out.dump()
    );
}

#[test]
fn panicking_eval_fails_with_the_panic_message() {
    let failure = failure_of("panicking", &eval("panicking", &[], &[]));
    let report = failure
        .find("eval panicking FAILED (error)\n")
        .map(|at| &failure[at..])
        .unwrap_or_else(|| panic!("no report in:\n{failure}"));
    assert!(
        report.contains("  error: the eval body panicked: the fixture body panicked on purpose\n"),
        "{failure}"
    );
    // What was recorded before the panic is kept.
    assert!(
        report.contains("  ok    gate includes(\"before\") — score 1.00\n        found \"before\" at char 9: \"recorded before the panic\""),
        "{failure}"
    );
}

#[test]
fn async_timeout_fails_with_its_message() {
    let failure = failure_of("times_out_async", &eval("times_out_async", &[], &[]));
    assert!(
        failure.starts_with("eval times_out_async FAILED (error)\n"),
        "{failure}"
    );
    assert!(
        failure.contains(
            "  error: timed out after 3s; raise it with #[eval(timeout = \"..\")] or [run] timeout in niceeval.toml\n"
        ),
        "{failure}"
    );
    assert!(
        failure.contains("found \"before\" at char 9: \"recorded before the hang\""),
        "{failure}"
    );
    assert!(!failure.contains("never reached"), "{failure}");
}

#[test]
fn blocking_timeout_fails_with_its_message() {
    let failure = failure_of("times_out_blocking", &eval("times_out_blocking", &[], &[]));
    assert!(
        failure.starts_with("eval times_out_blocking FAILED (error)\n"),
        "{failure}"
    );
    assert!(
        failure.contains("  error: timed out after 3s; "),
        "{failure}"
    );
    assert!(
        failure.contains("found \"before\" at char 9: \"recorded before blocking\""),
        "{failure}"
    );
    assert!(!failure.contains("never reached"), "{failure}");
}

#[test]
fn require_stops_the_body() {
    let failure = failure_of("require_stops", &eval("require_stops", &[], &[]));
    let expected = format!(
        r#"eval require_stops FAILED
  at outcomes/tests/evals.rs:{}
  stopped: t.require(includes("refund")) did not pass; the rest of the body did not run
  1 assertion(s), 1 gate(s) failed, score 0.00

  FAIL  gate includes("refund") — score 0.00
        "Hello! You said: hi" does not contain "refund""#,
        line_of("require_stops")
    );
    assert_eq!(failure.trim_end(), expected);
}

#[test]
fn agent_error_propagated_with_question_mark_fails_the_eval() {
    let failure = failure_of("agent_error", &eval("agent_error", &[], &[]));
    assert!(
        failure.starts_with("eval agent_error FAILED (error)\n"),
        "{failure}"
    );
    assert!(
        failure.contains("  error: agent agent_fn failed: upstream returned 503\n"),
        "{failure}"
    );
    assert!(failure.contains("  0 assertion(s)"), "{failure}");
    assert!(
        !failure.contains("checked after the agent error"),
        "{failure}"
    );
}

#[test]
fn body_error_fails_with_its_message() {
    let failure = failure_of("body_error", &eval("body_error", &[], &[]));
    assert!(
        failure.starts_with("eval body_error FAILED (error)\n"),
        "{failure}"
    );
    assert!(
        failure.contains("  error: the golden file golden.json is missing\n"),
        "{failure}"
    );
    assert!(
        failure.contains("  ok    gate includes(\"before\")"),
        "{failure}"
    );
}

#[test]
fn send_without_an_agent_says_how_to_configure_one() {
    let failure = failure_of("no_agent", &eval("no_agent", &[], &[]));
    assert!(
        failure.contains(
            "  error: eval evals::no_agent has no agent: add `#[eval(agent = my_agent)]` (a `fn() -> impl Agent`) or an `[agent]` section in niceeval.toml\n"
        ),
        "{failure}"
    );
}

#[test]
fn one_crashing_eval_does_not_stop_the_others() {
    let fixtures = Fixtures::get();
    let out = fixtures.run("outcomes", "evals", &["--test-threads", "1"], &[]);
    let log = out.dump();
    assert_eq!(out.code(), FAILED, "{log}");
    let libtest = out.libtest();
    let expected: Vec<(&str, &str)> = EVALS
        .iter()
        .map(|name| {
            (
                *name,
                if PASSING.contains(name) {
                    "ok"
                } else {
                    "FAILED"
                },
            )
        })
        .collect();
    // One thread runs the evals in name order: those after the panic and the timeouts ran too.
    assert_eq!(libtest.results(), expected, "{log}");
    assert_eq!(
        libtest.summary(),
        Some(Summary {
            ok: false,
            passed: PASSING.len() as u32,
            failed: (EVALS.len() - PASSING.len()) as u32,
            ignored: 0,
            filtered_out: 0
        }),
        "{log}"
    );
    let failed: Vec<&str> = EVALS.into_iter().filter(|n| !PASSING.contains(n)).collect();
    assert_eq!(libtest.failures(), failed, "{log}");
    for name in &failed {
        let output = libtest
            .failure_output(name)
            .unwrap_or_else(|| panic!("no output for {name}\n{log}"));
        assert!(
            output.contains(&format!("eval {name} FAILED")),
            "{name}:\n{log}"
        );
    }
    assert_eq!(out.stderr.matches("niceeval: SKIPPED").count(), 1, "{log}");
}

#[test]
fn malformed_config_fails_every_eval_naming_file_line_and_column() {
    let fixtures = Fixtures::get();
    let out = fixtures.run("bad-config", "evals", &[], &[]);
    let log = out.dump();
    assert_eq!(out.code(), FAILED, "{log}");
    let libtest = out.libtest();
    assert_eq!(libtest.result_of("first"), Some("FAILED"), "{log}");
    assert_eq!(libtest.result_of("second"), Some("FAILED"), "{log}");
    assert_eq!(
        libtest.summary().map(|s| (s.passed, s.failed)),
        Some((0, 2)),
        "{log}"
    );
    let file = fixtures.crate_dir("bad-config").join("niceeval.toml");
    let location = format!(
        "  error: {}:4:11: string values must be quoted",
        file.display()
    );
    for name in ["first", "second"] {
        let output = libtest
            .failure_output(name)
            .unwrap_or_else(|| panic!("no output for {name}\n{log}"));
        assert!(
            output.starts_with(&format!("eval {name} FAILED (error)\n")),
            "{log}"
        );
        assert!(output.contains(&location), "expected {location:?}\n{log}");
        // Every error of the file, not only the first.
        let second = format!(
            "\n         {}:5:8: string values must be quoted",
            file.display()
        );
        assert!(output.contains(&second), "expected {second:?}\n{log}");
        assert!(output.contains("  0 assertion(s)"), "{log}");
    }
}

#[test]
fn cargo_test_runs_the_evals_as_a_user_would() {
    let fixtures = Fixtures::get();

    let out = fixtures.cargo_test("outcomes", &[], &[]);
    let log = out.dump();
    assert_eq!(out.code(), FAILED, "{log}");
    let libtest = out.libtest();
    for name in EVALS {
        let expected = if PASSING.contains(&name) {
            "ok"
        } else {
            "FAILED"
        };
        assert_eq!(libtest.result_of(name), Some(expected), "{name}\n{log}");
    }
    assert_eq!(
        libtest.summary().map(|s| (s.ok, s.passed, s.failed)),
        Some((false, 4, 9)),
        "{log}"
    );
    assert!(
        out.stderr
            .contains("error: test failed, to rerun pass `--test evals`"),
        "{log}"
    );
    assert!(
        out.stderr
            .contains("niceeval: SKIPPED skipped: no API key in this environment"),
        "{log}"
    );
    let failure = libtest.failure_output("failing_gate").unwrap_or_default();
    assert!(
        failure.contains("FAIL  gate includes(\"refund\") — score 0.00"),
        "{log}"
    );

    // A name filter, and strict mode from the environment.
    let out = fixtures.cargo_test(
        "outcomes",
        &["soft_below_threshold"],
        &[("NICEEVAL_STRICT", "1")],
    );
    let log = out.dump();
    assert_eq!(out.code(), FAILED, "{log}");
    let libtest = out.libtest();
    assert_eq!(
        libtest.failures(),
        vec!["soft_below_threshold", "soft_below_threshold_strict"],
        "{log}"
    );
    assert_eq!(
        libtest
            .summary()
            .map(|s| (s.passed, s.failed, s.filtered_out)),
        Some((0, 2, 11)),
        "{log}"
    );

    let out = fixtures.cargo_test("outcomes", &["passing"], &[]);
    assert_eq!(out.code(), Some(0), "{}", out.dump());
    assert_eq!(
        out.libtest().result_of("passing"),
        Some("ok"),
        "{}",
        out.dump()
    );
}
