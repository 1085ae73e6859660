//! The suite runner of a `harness = false` target (`niceeval::main!()`), proven on the fixture
//! `fixtures/suite`: libtest's arguments (filters, `--exact`, `--skip`, `--list`, `--format
//! terse`, `--ignored`, `--include-ignored`), niceeval's (`--tag`, `--runs`, report files), the
//! exit codes, the `test NAME ... RESULT` lines and the `test result:` line that cargo and
//! nextest read; and plain `cargo test` of `#[eval]` functions writing the results file.

use std::path::Path;

use niceeval::{EvalReport, Outcome};
use niceeval_tests::child::{self, Output};
use niceeval_tests::fixture::{Fixtures, RUN_DEADLINE};
use niceeval_tests::libtest::Summary;

/// Every eval of the suite fixture, as libtest names them, sorted.
const ALL: [&str; 18] = [
    "checkout::expensive",
    "checkout::flaky",
    "checkout::needs_key",
    "checkout::refund_fails",
    "slow::e00",
    "slow::e01",
    "slow::e02",
    "slow::e03",
    "slow::e04",
    "slow::e05",
    "slow::e06",
    "slow::e07",
    "slow::e08",
    "slow::e09",
    "slow::e10",
    "slow::e11",
    "smoke::counts_words",
    "smoke::greets",
];

/// Runs the suite binary with `args`; results files off unless `env` turns them on.
fn suite(args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut all_env = vec![("NICEEVAL_RESULTS", "0")];
    all_env.extend_from_slice(env);
    Fixtures::get().run("suite", "suite", args, &all_env)
}

fn summary(out: &Output) -> Summary {
    out.libtest()
        .summary()
        .unwrap_or_else(|| panic!("no `test result:` line\n{}", out.dump()))
}

fn counts(s: Summary) -> (bool, u32, u32, u32, u32) {
    (s.ok, s.passed, s.failed, s.ignored, s.filtered_out)
}

/// Reads a JSONL report file: every line must be a whole report.
fn read_jsonl(path: &Path) -> Vec<EvalReport> {
    let text = std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    assert!(
        text.is_empty() || text.ends_with('\n'),
        "{text}\nends mid-line"
    );
    text.lines()
        .map(|line| serde_json::from_str(line).unwrap_or_else(|e| panic!("bad line {line:?}: {e}")))
        .collect()
}

#[test]
fn list_prints_every_eval_in_libtest_format() {
    let out = suite(&["--list"], &[]);
    assert_eq!(out.code(), Some(0), "{}", out.dump());
    let mut expected: String = ALL.iter().map(|n| format!("{n}: test\n")).collect();
    expected.push_str("\n18 tests, 0 benchmarks\n");
    assert_eq!(out.stdout, expected);

    // What nextest runs to discover tests.
    let out = suite(&["--list", "--format", "terse"], &[]);
    let expected: String = ALL.iter().map(|n| format!("{n}: test\n")).collect();
    assert_eq!(out.stdout, expected, "{}", out.dump());

    let out = suite(&["--list", "--format", "terse", "--ignored"], &[]);
    assert_eq!(out.stdout, "checkout::expensive: test\n", "{}", out.dump());

    let out = suite(&["--list", "smoke", "--tag", "fast"], &[]);
    assert_eq!(
        out.stdout,
        "smoke::counts_words: test\n\n1 test, 0 benchmarks\n"
    );
}

#[test]
fn a_name_filter_runs_the_matching_evals() {
    let out = suite(&["smoke"], &[]);
    assert_eq!(out.code(), Some(0), "{}", out.dump());
    let libtest = out.libtest();
    let mut results = libtest.results();
    results.sort();
    assert_eq!(
        results,
        [("smoke::counts_words", "ok"), ("smoke::greets", "ok")],
        "{}",
        out.dump()
    );
    assert_eq!(counts(summary(&out)), (true, 2, 0, 0, 16));
    assert!(
        out.stdout.contains("\nrunning 2 evals (concurrency 3)\n"),
        "{}",
        out.dump()
    );
}

#[test]
fn exact_skip_and_tag_select_like_libtest() {
    let out = suite(&["--exact", "smoke::greets"], &[]);
    assert_eq!(counts(summary(&out)), (true, 1, 0, 0, 17), "{}", out.dump());

    // --exact needs the whole name: `smoke` alone matches nothing, which is an error of its
    // own (nothing was checked), unless NICEEVAL_ALLOW_EMPTY=1 says it is expected.
    let out = suite(&["--exact", "smoke"], &[]);
    assert_eq!(out.code(), Some(4), "{}", out.dump());
    assert!(
        out.stderr
            .contains("error: the filter \"smoke\" selected no eval of the 18"),
        "{}",
        out.dump()
    );
    let out = suite(&["--exact", "smoke"], &[("NICEEVAL_ALLOW_EMPTY", "1")]);
    assert_eq!(out.code(), Some(0), "{}", out.dump());
    assert_eq!(counts(summary(&out)), (true, 0, 0, 0, 18), "{}", out.dump());
    // A mistyped tag likewise.
    let out = suite(&["--tag", "fsat"], &[]);
    assert_eq!(out.code(), Some(4), "{}", out.dump());
    assert!(
        out.stderr.contains("--tag fsat selected no eval"),
        "{}",
        out.dump()
    );
    // ... naming the tag it is close to, as every other typo is.
    assert!(
        out.stderr
            .contains("(no eval is tagged \"fsat\"; did you mean `fast`?)"),
        "{}",
        out.dump()
    );

    let out = suite(&["--skip", "slow", "--skip", "checkout"], &[]);
    assert_eq!(counts(summary(&out)), (true, 2, 0, 0, 16), "{}", out.dump());

    let out = suite(&["--tag", "fast"], &[]);
    assert_eq!(out.libtest().results(), [("smoke::counts_words", "ok")]);

    // Several filters: any of them.
    let out = suite(&["counts_words", "greets"], &[]);
    assert_eq!(counts(summary(&out)), (true, 2, 0, 0, 16), "{}", out.dump());
}

#[test]
fn a_failed_eval_fails_the_binary_with_its_report() {
    let out = suite(&["checkout"], &[]);
    let log = out.dump();
    assert_eq!(out.code(), Some(101), "{log}");
    let libtest = out.libtest();
    assert_eq!(
        libtest.result_of("checkout::refund_fails"),
        Some("FAILED"),
        "{log}"
    );
    assert_eq!(libtest.result_of("checkout::flaky"), Some("ok"), "{log}");
    assert_eq!(
        libtest.result_of("checkout::needs_key"),
        Some("ignored, no API key in this environment"),
        "{log}"
    );
    assert_eq!(
        libtest.result_of("checkout::expensive"),
        Some("ignored, #[ignore]d; run with --ignored or --include-ignored"),
        "{log}"
    );
    assert_eq!(counts(summary(&out)), (false, 1, 1, 2, 14), "{log}");
    // The failure's report, then the summary table.
    assert!(
        out.stdout
            .contains("\nfailures:\n\neval checkout::refund_fails FAILED\n"),
        "{log}"
    );
    assert!(
        out.stdout.contains("FAIL  gate includes(\"refund\")"),
        "{log}"
    );
    let header = out
        .stdout
        .lines()
        .find(|l| l.starts_with("eval ") && l.contains(" outcome "))
        .unwrap_or_else(|| panic!("no summary table\n{log}"));
    let columns: Vec<&str> = header
        .split("  ")
        .map(str::trim)
        .filter(|c| !c.is_empty())
        .collect();
    assert_eq!(
        columns,
        [
            "eval",
            "outcome",
            "runs",
            "pass rate",
            "pass@k",
            "pass^k",
            "score",
            "tokens",
            "cost",
            "time"
        ],
        "{log}"
    );
    let flaky = out
        .stdout
        .lines()
        .find(|l| l.starts_with("checkout::flaky "))
        .unwrap_or_else(|| panic!("no row for flaky\n{log}"));
    // 3 of 5 runs pass: pass@3 = 1 − C(2,3)/C(5,3) = 1, pass^3 = C(3,3)/C(5,3) = 0.1.
    assert!(flaky.contains(" passed "), "{flaky}");
    assert!(flaky.contains(" 5 "), "{flaky}");
    assert!(flaky.contains("0.60  1.00 (k=3)  0.10 (k=3)"), "{flaky}");
}

#[test]
fn a_malformed_config_is_printed_once_and_fails_every_eval() {
    let fixtures = Fixtures::get();
    let out = fixtures.run("bad-config", "suite", &[], &[("NICEEVAL_RESULTS", "0")]);
    let log = out.dump();
    assert_eq!(out.code(), Some(101), "{log}");
    assert_eq!(counts(summary(&out)), (false, 0, 3, 0, 0), "{log}");
    let file = fixtures.crate_dir("bad-config").join("niceeval.toml");
    let errors = [
        format!("{}:4:11: string values must be quoted", file.display()),
        format!("{}:5:8: string values must be quoted", file.display()),
    ];
    let everything = format!("{}{}", out.stdout, out.stderr);
    for error in &errors {
        assert_eq!(
            everything.matches(error.as_str()).count(),
            1,
            "{error:?} once\n{log}"
        );
    }
    // Printed before the results, on stderr, with every error.
    let header = format!(
        "error: the niceeval configuration of {} is invalid (2 errors); its evals fail without running:\n",
        fixtures.crate_dir("bad-config").display()
    );
    assert!(
        out.stderr.starts_with(&format!("{header}  {}", errors[0])),
        "{log}"
    );
    // Each eval fails, pointing there.
    let libtest = out.libtest();
    for name in ["first", "second", "third"] {
        assert_eq!(libtest.result_of(name), Some("FAILED"), "{log}");
    }
    assert_eq!(
        out.stdout
            .matches("error: the configuration is invalid; its errors are printed once, before the results")
            .count(),
        3,
        "{log}"
    );
}

#[test]
fn ignored_evals_run_on_request() {
    let out = suite(&["--ignored"], &[]);
    assert_eq!(
        out.libtest().results(),
        [("checkout::expensive", "ok")],
        "{}",
        out.dump()
    );
    assert_eq!(counts(summary(&out)), (true, 1, 0, 0, 17), "{}", out.dump());

    let out = suite(&["--include-ignored", "checkout::expensive"], &[]);
    assert_eq!(counts(summary(&out)), (true, 1, 0, 0, 17), "{}", out.dump());
}

#[test]
fn bad_arguments_exit_with_2_and_name_the_problem() {
    let out = suite(&["--bogus"], &[]);
    assert_eq!(out.code(), Some(2), "{}", out.dump());
    assert!(
        out.stderr.contains("unknown option --bogus"),
        "{}",
        out.dump()
    );

    let out = suite(&["--runs", "zero"], &[]);
    assert_eq!(out.code(), Some(2), "{}", out.dump());
    assert!(
        out.stderr
            .contains("--runs takes a positive number, got \"zero\""),
        "{}",
        out.dump()
    );

    let out = suite(&["--help"], &[]);
    assert_eq!(out.code(), Some(0), "{}", out.dump());
    assert!(out.stdout.contains("--concurrency N"), "{}", out.dump());
}

#[test]
fn runs_come_from_the_command_line_then_the_environment_then_the_attribute() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let jsonl = dir.path().join("runs.jsonl");
    let jsonl_arg = jsonl.to_str().expect("a UTF-8 path");
    let runs_of = |args: &[&str], env: &[(&str, &str)]| -> Vec<(String, usize)> {
        let mut all = vec!["--jsonl", jsonl_arg, "-q"];
        all.extend_from_slice(args);
        let out = suite(&all, env);
        assert!(matches!(out.code(), Some(0 | 101)), "{}", out.dump());
        let mut runs: Vec<(String, usize)> = read_jsonl(&jsonl)
            .into_iter()
            .map(|r| (r.id, r.runs.len()))
            .collect();
        runs.sort();
        runs
    };
    let evals = ["checkout::flaky", "smoke::counts_words"];
    let ids = |a: usize, b: usize| {
        vec![
            ("suite::checkout::flaky".to_string(), a),
            ("suite::smoke::counts_words".to_string(), b),
        ]
    };
    // The attribute (runs = 5) against the default of one run.
    assert_eq!(runs_of(&evals, &[]), ids(5, 1));
    // NICEEVAL_RUNS beats the attribute.
    assert_eq!(runs_of(&evals, &[("NICEEVAL_RUNS", "2")]), ids(2, 2));
    // --runs beats the environment.
    let mut with_flag = evals.to_vec();
    with_flag.extend(["--runs", "3"]);
    assert_eq!(runs_of(&with_flag, &[("NICEEVAL_RUNS", "2")]), ids(3, 3));
}

#[test]
fn report_files_are_written_and_the_console_can_be_quiet() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let path = |name: &str| dir.path().join(name).to_str().expect("UTF-8").to_string();
    let (jsonl, junit, markdown, html) = (
        path("out/r.jsonl"),
        path("out/junit.xml"),
        path("out/summary.md"),
        path("out/report.html"),
    );
    let out = suite(
        &[
            "--skip",
            "slow",
            "-q",
            "--jsonl",
            &jsonl,
            "--junit",
            &junit,
            "--markdown",
            &markdown,
            "--html",
            &html,
        ],
        &[],
    );
    assert_eq!(out.code(), Some(101), "{}", out.dump());
    // --quiet (what `cargo test -q` passes) is libtest's terse form: a mark per eval, the
    // failures, the closing line; no per-eval lines and no table.
    let log = out.dump();
    let marks = out
        .stdout
        .lines()
        .find(|l| !l.is_empty() && l.chars().all(|c| matches!(c, '.' | 'F' | 'i')))
        .unwrap_or_else(|| panic!("no progress marks\n{log}"));
    let mut sorted: Vec<char> = marks.chars().collect();
    sorted.sort_unstable();
    assert_eq!(sorted.into_iter().collect::<String>(), "...Fii", "{log}");
    assert!(out.libtest().results().is_empty(), "{log}");
    assert!(!out.stdout.contains(" pass@k "), "{log}");
    assert!(
        out.stdout
            .contains("\nfailures:\n\neval checkout::refund_fails FAILED\n"),
        "{log}"
    );
    assert_eq!(counts(summary(&out)), (false, 3, 1, 2, 12), "{log}");

    let reports = read_jsonl(Path::new(&jsonl));
    let mut outcomes: Vec<(&str, Outcome)> =
        reports.iter().map(|r| (r.id.as_str(), r.outcome)).collect();
    outcomes.sort_by_key(|(id, _)| *id);
    assert_eq!(
        outcomes,
        [
            ("suite::checkout::expensive", Outcome::Skipped),
            ("suite::checkout::flaky", Outcome::Passed),
            ("suite::checkout::needs_key", Outcome::Skipped),
            ("suite::checkout::refund_fails", Outcome::Failed),
            ("suite::smoke::counts_words", Outcome::Passed),
            ("suite::smoke::greets", Outcome::Passed),
        ]
    );
    let greets = reports
        .iter()
        .find(|r| r.id == "suite::smoke::greets")
        .expect("greets");
    assert!(
        greets.events.iter().any(|e| serde_json::to_string(e)
            .unwrap_or_default()
            .contains("\"lookup\"")),
        "transcript kept: {:?}",
        greets.events
    );
    assert_eq!(greets.tags, ["smoke"]);

    let xml = std::fs::read_to_string(&junit).expect("junit written");
    let doc = roxmltree::Document::parse(&xml).unwrap_or_else(|e| panic!("{e}\n{xml}"));
    let cases = doc
        .descendants()
        .filter(|n| n.has_tag_name("testcase"))
        .count();
    assert_eq!(cases, 6, "{xml}");

    let md = std::fs::read_to_string(&markdown).expect("markdown written");
    assert!(
        md.contains("| `checkout::refund_fails` | ❌ failed |"),
        "{md}"
    );

    let page = std::fs::read_to_string(&html).expect("html written");
    assert!(niceeval_tests::page::ids(&page).contains(&"suite::smoke::greets".to_string()));
}

#[test]
fn the_suite_writes_the_results_file_under_the_target_directory() {
    let fixtures = Fixtures::get();
    let dir = tempfile::tempdir().expect("a temporary directory");
    let results = dir.path().to_str().expect("UTF-8");
    let out = fixtures.run(
        "suite",
        "suite",
        &["smoke", "-q"],
        &[("NICEEVAL_RESULTS_DIR", results)],
    );
    assert_eq!(out.code(), Some(0), "{}", out.dump());
    let binary = fixtures.test_binary("suite", "suite");
    let stem = binary.file_stem().and_then(|s| s.to_str()).expect("a name");
    let reports = read_jsonl(&dir.path().join(format!("{stem}.jsonl")));
    assert_eq!(reports.len(), 2);
}

#[test]
fn plain_cargo_test_of_evals_keeps_working_and_writes_results() {
    let fixtures = Fixtures::get();
    let binary = fixtures.test_binary("suite", "plain");
    let stem = binary.file_stem().and_then(|s| s.to_str()).expect("a name");
    // The default location: <target dir>/niceeval/results/<binary>.jsonl, the target directory
    // being the one the binary was built in (the fixtures' build directory).
    let file = fixtures
        .build_dir()
        .join("niceeval")
        .join("results")
        .join(format!("{stem}.jsonl"));
    let _ = std::fs::remove_file(&file);
    let plain = |args: &[&str]| {
        let mut command = fixtures.command("suite", "plain", args);
        // Where the results go is what this test checks: no override from the outer run.
        command.env_remove("CARGO_TARGET_DIR");
        child::run(&mut command, RUN_DEADLINE)
    };
    let out = plain(&[]);
    let log = out.dump();
    assert_eq!(out.code(), Some(101), "{log}");
    let libtest = out.libtest();
    assert_eq!(libtest.result_of("plain_passes"), Some("ok"), "{log}");
    assert_eq!(libtest.result_of("plain_fails"), Some("FAILED"), "{log}");
    assert_eq!(counts(summary(&out)), (false, 1, 1, 0, 0), "{log}");
    let mut reports: Vec<(String, Outcome)> = read_jsonl(&file)
        .into_iter()
        .map(|r| (r.id, r.outcome))
        .collect();
    reports.sort_by(|a, b| a.0.cmp(&b.0));
    assert_eq!(
        reports,
        [
            ("plain::plain_fails".to_string(), Outcome::Failed),
            ("plain::plain_passes".to_string(), Outcome::Passed),
        ]
    );

    // A filtered rerun refreshes what it ran and keeps the other eval's latest result: the
    // file is compacted to one record per eval, then appended to.
    let first_run = read_jsonl(&file)[0]
        .run
        .clone()
        .expect("records carry their run");
    assert_eq!(first_run.target, "plain");
    let out = plain(&["--exact", "plain_passes"]);
    assert_eq!(out.code(), Some(0), "{}", out.dump());
    let records = read_jsonl(&file);
    assert_eq!(records.len(), 3, "{records:#?}");
    let latest = niceeval::__workspace::results::latest(records);
    let runs: Vec<(&str, &str, usize)> = latest
        .iter()
        .map(|r| {
            let run = r.run.as_ref().expect("a run");
            (r.id.as_str(), run.id.as_str(), r.runs.len())
        })
        .collect();
    assert_eq!(runs.len(), 2, "{runs:?}");
    assert_eq!(runs[0], ("plain::plain_fails", first_run.id.as_str(), 1));
    assert_eq!(runs[1].0, "plain::plain_passes");
    assert_ne!(runs[1].1, first_run.id, "the rerun has a run id of its own");
    assert_eq!(
        runs[1].2, 1,
        "the rerun replaces the earlier run, it is not added to it"
    );
    let earlier: Vec<&str> = niceeval::__workspace::results::from_earlier_runs(&latest)
        .iter()
        .map(|r| r.id.as_str())
        .collect();
    assert_eq!(earlier, ["plain::plain_fails"]);

    // Another whole run: the file stays bounded (compacted to 2, then 2 appended).
    let out = plain(&[]);
    assert_eq!(out.code(), Some(101), "{}", out.dump());
    assert_eq!(read_jsonl(&file).len(), 4);
}

#[test]
fn evals_running_past_slow_after_are_named_while_they_run() {
    // The fixture's niceeval.toml sets `[run] slow_after = "1s"`; slow::e00 waits 2.5 s.
    let out = suite(
        &["--exact", "slow::e00", "slow::e01"],
        &[("FIXTURE_SLOW_MS", "2500")],
    );
    assert_eq!(out.code(), Some(0), "{}", out.dump());
    for name in ["slow::e00", "slow::e01"] {
        let notice = format!("test {name} has been running for over 1 second\n");
        assert_eq!(out.stdout.matches(&notice).count(), 1, "{}", out.dump());
        let notice_at = out.stdout.find(&notice).expect("named");
        let done_at = out
            .stdout
            .find(&format!("test {name} ... ok"))
            .expect("finished");
        assert!(notice_at < done_at, "named while running\n{}", out.dump());
    }
}

/// `niceeval_suites::main!(suites = [..])`: a promptfoo file's cases run beside the Rust evals,
/// named `<file stem>::<description>`, with the same exit code.
#[test]
fn suite_files_join_the_rust_evals() {
    let fixtures = Fixtures::get();
    let out = fixtures.run("suite", "suites", &["--list"], &[]);
    assert!(out.stdout.contains("rust_side: test"), "{}", out.stdout);
    assert!(
        out.stdout.contains("promptfooconfig::one: test"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.contains("promptfooconfig::two: test"),
        "{}",
        out.stdout
    );
    let out = fixtures.run("suite", "suites", &[], &[("NICEEVAL_RESULTS", "0")]);
    let log = format!("{}\n{}", out.stdout, out.stderr);
    assert_eq!(out.code(), Some(101), "{log}");
    assert!(log.contains("2 passed; 1 failed"), "{log}");
    assert!(
        log.contains("\"ping 2\" does not contain \"pong\""),
        "{log}"
    );
}
