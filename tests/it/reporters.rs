//! The built-in reporters' output on hand-built reports, as insta snapshots (durations redacted
//! the way a real run needs): the console's progress lines, failures, summary table and closing
//! line; JUnit XML (also parsed, with its testcase count); the Markdown summary. Review changes
//! with `cargo insta review`.

use niceeval::__workspace::reporter::{Console, Junit, Markdown};
use niceeval::reporter::{EvalSummary, Reporter, SuiteReport, SuiteStart};
use niceeval::{
    AssertionKind, AssertionResult, EvalReport, Event, Grade, Outcome, Role, RunSummary, Settings,
    Usage,
};

fn assertion(name: &str, settings: Settings, score: f64, reason: &str) -> AssertionResult {
    AssertionResult::from_grade(
        name.to_string(),
        AssertionKind::Value,
        &settings,
        Grade::score(score, reason),
    )
}

fn run(outcome: Outcome, duration_ms: f64) -> RunSummary {
    serde_json::from_value(serde_json::json!({
        "outcome": outcome,
        "duration_ms": duration_ms,
        "usage": Usage::default(),
    }))
    .expect("a run summary")
}

/// A report with the given runs and assertions, statistics recomputed.
fn report(id: &str, runs: Vec<RunSummary>, assertions: Vec<AssertionResult>) -> EvalReport {
    let mut report: EvalReport = serde_json::from_value(serde_json::json!({
        "id": id,
        "file": "tests/evals.rs",
        "line": 12,
        "outcome": Outcome::Failed,
        "score": niceeval::__workspace::mean_score(&assertions),
        "assertions": assertions,
        "duration_ms": runs.iter().map(|r| r.duration_ms).sum::<f64>(),
        "usage": Usage::default(),
        "runs": runs,
        "reliability": niceeval::__workspace::stats::Reliability::new(0, 0),
        "min_pass_rate": 1.0,
    }))
    .expect("a report");
    report.recompute();
    report
}

/// Five evals covering every outcome and mark, plus many runs with pass@k.
fn reports() -> Vec<EvalReport> {
    let mut refund = report(
        "evals::support::refund_flow",
        vec![run(Outcome::Passed, 1234.5)],
        vec![
            assertion(
                "includes(\"refund\")",
                Settings::gate(),
                1.0,
                "found \"refund\" at 14",
            ),
            assertion(
                "similarity(\"Your refund is on its way\")",
                Settings::soft(Some(0.6)),
                0.82,
                "distance 5 of 28 characters",
            ),
        ],
    );
    refund.usage = Usage {
        input_tokens: 1200,
        output_tokens: 340,
        cache_read_tokens: 0,
        cost_usd: None,
    };
    refund.cost_usd = Some(0.0123);
    // The tables show usage over every run: the one run spent it.
    refund.runs[0].usage = refund.usage;
    refund.runs[0].cost_usd = refund.cost_usd;
    refund.recompute();
    refund.tags = vec!["smoke".into()];
    refund.events = vec![Event::Message {
        role: Role::Assistant,
        text: "Your refund for order #123 is on its way.".into(),
    }];

    let failing = report(
        "evals::support::escalates",
        vec![run(Outcome::Failed, 2500.0)],
        vec![
            assertion(
                "called_tool(\"escalate\")",
                Settings::gate(),
                0.0,
                "never called; tools called: lookup_order",
            ),
            assertion(
                "includes(\"<manager>\")",
                Settings::gate(),
                1.0,
                "found & kept",
            ),
        ],
    );

    let mut errored = report(
        "evals::billing::invoice",
        vec![run(Outcome::Failed, 30_000.0)],
        vec![],
    );
    errored.error = Some(niceeval::RunError::new(
        niceeval::RunErrorKind::Timeout,
        "timed out after 30s; raise it with #[eval(timeout = \"..\")]",
    ));
    errored.runs[0].error = errored.error.clone();

    let mut skipped = report(
        "evals::billing::needs_key",
        vec![run(Outcome::Skipped, 1.0)],
        vec![],
    );
    skipped.skip_reason = Some("no API key in this environment".into());

    let mut below = report(
        "evals::tone::polite",
        vec![run(Outcome::Passed, 800.0)],
        vec![assertion(
            "similarity(\"Thank you!\")",
            Settings::soft(Some(0.9)),
            0.5,
            "distance 6 of 10 characters",
        )],
    );
    below.below_threshold = true;

    let mut flaky = report(
        "evals::search::flaky",
        [
            Outcome::Passed,
            Outcome::Failed,
            Outcome::Passed,
            Outcome::Passed,
            Outcome::Failed,
        ]
        .into_iter()
        .map(|o| run(o, 100.0))
        .collect(),
        vec![assertion(
            "includes(\"42\")",
            Settings::gate(),
            1.0,
            "found",
        )],
    );
    flaky.min_pass_rate = 0.6;
    flaky.recompute();
    assert_eq!(flaky.outcome, Outcome::Passed);
    assert_eq!(failing.outcome, Outcome::Failed);
    vec![refund, failing, errored, skipped, below, flaky]
}

/// Runs a reporter over the reports as the suite runner would.
fn feed(reporter: &mut dyn Reporter, reports: &[EvalReport]) -> SuiteReport {
    let start = SuiteStart {
        evals: reports.iter().map(|r| r.id.clone()).collect(),
        concurrency: 4,
    };
    reporter.on_run_start(&start).expect("run start");
    for r in reports {
        reporter.on_eval_complete(r).expect("eval complete");
    }
    let suite = SuiteReport::new(
        reports.iter().map(EvalSummary::from).collect(),
        0,
        false,
        36_512.25,
    );
    reporter.on_run_complete(&suite).expect("run complete");
    suite
}

/// Redacts what changes from run to run: durations (`1.23s`, `time="1.234"`, `mean 12 ms`).
fn redact(text: &str) -> String {
    let rules = [
        (r#"time="[0-9.]+""#, r#"time="[duration]""#),
        (r#"timestamp="[0-9T:-]+""#, r#"timestamp="[timestamp]""#),
        (r#"hostname="[^"]*""#, r#"hostname="[hostname]""#),
        (r"\b\d+\.\d+s\b", "[duration]"),
        (r"\b\d+ ms\b", "[ms]"),
    ];
    rules
        .iter()
        .fold(text.to_string(), |text, (pattern, with)| {
            niceeval::Regex::new(pattern)
                .expect("a valid regex")
                .replace_all(&text, *with)
                .into_owned()
        })
}

#[test]
fn console_progress_failures_summary_and_result_line() {
    let mut console = Console::new(Vec::new(), false).filtered_out(3);
    feed(&mut console, &reports());
    let text = String::from_utf8(console.into_inner()).expect("UTF-8");
    insta::assert_snapshot!("console", redact(&text));
}

#[test]
fn console_on_a_terminal_draws_a_progress_bar() {
    let mut console = Console::new(Vec::new(), true);
    let reports = reports();
    feed(&mut console, &reports[..2]);
    let text = String::from_utf8(console.into_inner()).expect("UTF-8");
    // The bar is drawn, then erased before each line and at the end.
    assert!(
        text.contains(
            "[                            ] 0/2 evals, 0 running, 0 failed, 0:00 elapsed, ETA -"
        ),
        "{text:?}"
    );
    assert!(
        text.contains("\r\x1b[2Ktest support::escalates ... FAILED"),
        "{text:?}"
    );
    assert!(
        text.contains("[==============              ] 1/2 evals, 0 running, 0 failed,"),
        "{text:?}"
    );
    // A plain console never writes escape codes.
    let mut plain = Console::new(Vec::new(), false);
    feed(&mut plain, &reports[..2]);
    assert!(
        !String::from_utf8(plain.into_inner())
            .expect("UTF-8")
            .contains('\x1b')
    );
}

#[test]
fn junit_xml_has_one_testcase_per_eval_and_parses() {
    let mut junit = Junit::new(Vec::new());
    let reports = reports();
    feed(&mut junit, &reports);
    let xml = String::from_utf8(junit.into_inner()).expect("UTF-8");
    let doc = roxmltree::Document::parse(&xml).unwrap_or_else(|e| panic!("{e}\n{xml}"));
    let root = doc.root_element();
    assert_eq!(root.tag_name().name(), "testsuites");
    let cases: Vec<_> = doc
        .descendants()
        .filter(|n| n.has_tag_name("testcase"))
        .collect();
    assert_eq!(cases.len(), reports.len());
    assert_eq!(root.attribute("tests"), Some("6"));
    assert_eq!(root.attribute("failures"), Some("1"));
    assert_eq!(root.attribute("errors"), Some("1"));
    assert_eq!(root.attribute("skipped"), Some("1"));
    let failure = doc
        .descendants()
        .find(|n| n.has_tag_name("failure"))
        .expect("a failure element");
    // The failure carries the whole report, unescaped back by the parser.
    assert!(
        failure
            .text()
            .unwrap_or_default()
            .contains("FAIL  gate called_tool(\"escalate\")")
    );
    assert!(
        failure
            .text()
            .unwrap_or_default()
            .contains("includes(\"<manager>\")")
    );
    insta::assert_snapshot!("junit", redact(&xml));
}

#[test]
fn junit_xml_shows_characters_xml_forbids_and_still_parses() {
    let mut skipped = report(
        "evals::odd::controls",
        vec![run(Outcome::Skipped, 1.0)],
        vec![],
    );
    skipped.skip_reason = Some("bell\u{7} & <tag> \u{FFFF}".into());
    let mut errored = report(
        "evals::odd::colours",
        vec![run(Outcome::Failed, 1.0)],
        vec![],
    );
    errored.error = Some(niceeval::RunError::new(
        niceeval::RunErrorKind::Body,
        "\u{1b}[31mred\u{1b}[0m",
    ));
    let mut junit = Junit::new(Vec::new());
    feed(&mut junit, &[skipped, errored]);
    let xml = String::from_utf8(junit.into_inner()).expect("UTF-8");
    let doc = roxmltree::Document::parse(&xml).unwrap_or_else(|e| panic!("{e}\n{xml}"));
    let message = |tag: &str| {
        doc.descendants()
            .find(|n| n.has_tag_name(tag))
            .and_then(|n| n.attribute("message"))
            .unwrap_or_else(|| panic!("a <{tag} message=..> in {xml}"))
            .to_string()
    };
    assert_eq!(message("skipped"), "bell\\u{7} & <tag> \\u{ffff}");
    assert_eq!(message("error"), "\\u{1b}[31mred\\u{1b}[0m");
}

#[test]
fn markdown_summary_with_table_and_failures() {
    let mut md = Markdown::new(Vec::new());
    feed(&mut md, &reports());
    let text = String::from_utf8(md.into_inner()).expect("UTF-8");
    insta::assert_snapshot!("markdown", redact(&text));
}

#[test]
fn an_interrupted_suite_says_so() {
    let mut console = Console::new(Vec::new(), false);
    let reports = reports();
    console
        .on_run_start(&SuiteStart {
            evals: Default::default(),
            concurrency: 2,
        })
        .expect("start");
    console.on_eval_complete(&reports[0]).expect("eval");
    let suite = SuiteReport::new(vec![EvalSummary::from(&reports[0])], 5, true, 1000.0);
    console.on_run_complete(&suite).expect("complete");
    let text = String::from_utf8(console.into_inner()).expect("UTF-8");
    assert!(text.contains("interrupted: 5 eval(s) did not finish; finished results were reported"));
    assert!(
        text.contains("test result: FAILED. 1 passed; 0 failed; 0 ignored;"),
        "{text}"
    );
}

#[test]
fn an_interrupted_suite_names_what_did_not_finish_in_every_report() {
    use niceeval::__workspace::reporter::Html;
    use niceeval::reporter::Signal;
    let reports = reports();
    let unfinished = vec![
        "evals::support::slow_b".to_string(),
        "evals::support::slow_a".to_string(),
    ];
    let suite = SuiteReport::new(vec![EvalSummary::from(&reports[0])], 0, false, 1000.0)
        .interrupted_by(Signal::Terminate, unfinished);
    assert_eq!(suite.not_run, 2);
    assert_eq!(Signal::Terminate.exit_code(), 143);
    assert_eq!(Signal::Interrupt.exit_code(), 130);

    let mut console = Console::new(Vec::new(), false);
    console.on_eval_complete(&reports[0]).expect("eval");
    console.on_run_complete(&suite).expect("complete");
    let text = String::from_utf8(console.into_inner()).expect("UTF-8");
    assert!(
        text.contains(
            "\ninterrupted by SIGTERM: 2 eval(s) did not finish; finished results were reported\n\ndid not finish:\n    support::slow_a\n    support::slow_b\n"
        ),
        "{text}"
    );

    let mut md = Markdown::new(Vec::new());
    md.on_eval_complete(&reports[0]).expect("eval");
    md.on_run_complete(&suite).expect("complete");
    let text = String::from_utf8(md.into_inner()).expect("UTF-8");
    assert!(
        text.contains(", 2 not run (interrupted by SIGTERM) in"),
        "{text}"
    );
    assert!(
        text.contains(
            "### Did not finish\n\nThe run was interrupted by SIGTERM before these evals finished:\n\n- `support::slow_a`\n- `support::slow_b`\n"
        ),
        "{text}"
    );

    let mut junit = Junit::new(Vec::new());
    junit.on_eval_complete(&reports[0]).expect("eval");
    junit.on_run_complete(&suite).expect("complete");
    // A second call writes the same document, without doubling the unfinished cases.
    let first = String::from_utf8(junit.into_inner()).expect("UTF-8");
    let mut again = Junit::new(Vec::new());
    again.on_eval_complete(&reports[0]).expect("eval");
    again.on_run_complete(&suite).expect("complete");
    again.on_run_complete(&suite).expect("complete");
    let twice = String::from_utf8(again.into_inner()).expect("UTF-8");
    assert_eq!(twice.matches("<testsuites").count(), 2);
    assert_eq!(twice.matches("slow_a").count(), 2, "{twice}");
    let doc = roxmltree::Document::parse(&first).unwrap_or_else(|e| panic!("{e}\n{first}"));
    let errors: Vec<(&str, &str)> = doc
        .descendants()
        .filter(|n| n.has_tag_name("error"))
        .map(|n| {
            let case = n.parent().expect("in a testcase");
            (
                case.attribute("name").unwrap_or_default(),
                n.attribute("message").unwrap_or_default(),
            )
        })
        .collect();
    assert_eq!(
        errors,
        [
            ("slow_a", "interrupted before it finished"),
            ("slow_b", "interrupted before it finished")
        ],
        "{first}"
    );

    let mut html = Html::new(Vec::new());
    html.on_eval_complete(&reports[0]).expect("eval");
    html.on_run_complete(&suite).expect("complete");
    let page = String::from_utf8(html.into_inner()).expect("UTF-8");
    assert!(page.contains("interrupted by SIGTERM: 2 not run"), "{page}");
    assert!(
        page.contains(
            "<ul class=\"unfinished\"><li><code>support::slow_a</code></li><li><code>support::slow_b</code></li></ul>"
        ),
        "{page}"
    );
}

#[test]
fn a_quiet_console_is_libtest_terse() {
    // Off a terminal; on one, the status line stands in for the characters (unit tests).
    let mut console = Console::new(Vec::new(), false).quiet(true);
    feed(&mut console, &reports());
    let text = String::from_utf8(console.into_inner()).expect("UTF-8");
    assert!(
        text.starts_with("\nrunning 6 evals (concurrency 4)\n.FFi..\n"),
        "{text}"
    );
    assert!(
        !text.contains('\x1b'),
        "quiet never draws a status line: {text:?}"
    );
    assert!(
        text.contains("\nfailures:\n\neval support::escalates FAILED\n"),
        "{text}"
    );
    assert!(!text.contains("pass@k"), "no table: {text}");
    assert!(
        text.contains("test result: FAILED. 3 passed; 2 failed; 1 ignored;"),
        "{text}"
    );
}

/// Runs a reporter over the reports as the suite runner would, `finish` completing the suite
/// report (a comparison with a baseline) before the reporter gets it.
fn feed_with(
    reporter: &mut dyn Reporter,
    reports: &[EvalReport],
    finish: impl FnOnce(&mut SuiteReport),
) {
    let start = SuiteStart {
        evals: reports.iter().map(|r| r.id.clone()).collect(),
        concurrency: 4,
    };
    reporter.on_run_start(&start).expect("run start");
    for r in reports {
        reporter.on_eval_complete(r).expect("eval complete");
    }
    let mut suite = SuiteReport::new(
        reports.iter().map(EvalSummary::from).collect(),
        0,
        false,
        1000.0,
    );
    finish(&mut suite);
    reporter.on_run_complete(&suite).expect("run complete");
}

/// Every output of a run, with a dataset case and a comparison in which `escalates` broke:
/// the console's, the Markdown summary, the HTML page and the JUnit XML.
fn every_output(reports: &[EvalReport]) -> [String; 4] {
    use niceeval::__workspace::compare::Baseline;
    use niceeval::__workspace::config::CompareConfig;
    use niceeval::__workspace::reporter::Html;
    use niceeval::compare::{BaselineEval, Comparison};

    let before: Vec<EvalReport> = reports
        .iter()
        .cloned()
        .map(|mut r| {
            if r.id.ends_with("escalates") {
                r.runs[0].outcome = Outcome::Passed;
                r.recompute();
            }
            r
        })
        .collect();
    let baseline = Baseline::of_reports(&before, false, false);
    let now: Vec<BaselineEval> = reports.iter().map(BaselineEval::of).collect();
    let comparison = Comparison::new(&baseline, &now, &CompareConfig::default());
    let text = |bytes: Vec<u8>| String::from_utf8(bytes).expect("UTF-8");
    let finish = |suite: &mut SuiteReport| suite.comparison = Some(comparison.clone());

    let mut console = Console::new(Vec::new(), false);
    feed_with(&mut console, reports, finish);
    let mut md = Markdown::new(Vec::new());
    feed_with(&mut md, reports, finish);
    let mut html = Html::new(Vec::new());
    feed_with(&mut html, reports, finish);
    let mut junit = Junit::new(Vec::new());
    feed_with(&mut junit, reports, finish);
    [
        text(console.into_inner()),
        text(md.into_inner()),
        text(html.into_inner()),
        text(junit.into_inner()),
    ]
}

/// What a reader of the HTML page sees: the page without its keys (`data-id`) and the data
/// its script reads.
fn visible(page: &str) -> String {
    let page = page.split("<script id=\"data\"").next().unwrap_or_default();
    niceeval::Regex::new(r#" data-id="[^"]*""#)
        .expect("a valid regex")
        .replace_all(page, "")
        .into_owned()
}

/// The reports of [`reports`] and a failed case of the dataset `evals::capitals`.
fn reports_with_a_dataset() -> Vec<EvalReport> {
    let mut reports = reports();
    let mut lima = report(
        "evals::capitals::lima",
        vec![run(Outcome::Failed, 10.0)],
        vec![assertion(
            "includes(\"Lima\")",
            Settings::gate(),
            0.0,
            "not found",
        )],
    );
    lima.dataset = Some("evals::capitals".into());
    reports.push(lima);
    reports
}

#[test]
fn a_run_of_one_target_names_every_eval_without_it_in_every_output() {
    let [console, md, html, junit] = every_output(&reports_with_a_dataset());
    for (what, text) in [("console", &console), ("markdown", &md)] {
        assert!(!text.contains("evals::"), "{what}:\n{text}");
    }
    for line in [
        "test support::escalates ... FAILED\n",
        "\neval support::escalates FAILED\n",
        "\nsupport::escalates    failed ",
        "\ndataset capitals: 0 of 1 cases passed",
        "\n    search::flaky: 3 of 5 runs passed",
        "\n    broke          support::escalates",
        "\n    broken-gate support::escalates: passed in the baseline",
    ] {
        assert!(console.contains(line), "{line:?} in:\n{console}");
    }
    for line in [
        "| `support::escalates` | ❌ failed |",
        "<summary><code>support::escalates</code></summary>",
        "eval support::escalates FAILED",
        "- dataset `capitals`: 0 of 1 cases passed",
        "| `search::flaky` | 3 of 5 |",
        "- broken-gate `support::escalates`: passed in the baseline",
        "| `support::escalates` | 🔴 broke |",
    ] {
        assert!(md.contains(line), "{line:?} in:\n{md}");
    }
    let shown = visible(&html);
    assert!(!shown.contains("evals::"), "{shown}");
    assert!(shown.contains("<code>support::escalates</code>"), "{shown}");
    assert!(
        niceeval_tests::page::ids(&html).contains(&"evals::support::escalates".to_string()),
        "keys stay whole"
    );
    let suite = niceeval_tests::page::data(&html, "suite-data").expect("the suite's data");
    assert_eq!(
        suite["several"], false,
        "the script names evals without their target"
    );
    // JUnit's classname is a key CI dashboards track: whole; the report in it reads as above.
    assert!(junit.contains("classname=\"evals::support\""), "{junit}");
    assert!(junit.contains("eval support::escalates FAILED"), "{junit}");
    assert!(!junit.contains("eval evals::"), "{junit}");
}

#[test]
fn a_run_of_several_targets_names_every_eval_with_it_in_every_output() {
    let mut reports = reports_with_a_dataset();
    reports.push(report(
        "smoke::ping",
        vec![run(Outcome::Passed, 1.0)],
        vec![assertion(
            "includes(\"pong\")",
            Settings::gate(),
            1.0,
            "found",
        )],
    ));
    let [console, md, html, _] = every_output(&reports);
    for line in [
        "test evals::support::escalates ... FAILED\n",
        "\neval evals::support::escalates FAILED\n",
        "\nevals::support::escalates    failed ",
        "\nsmoke::ping ",
        "\ndataset evals::capitals: 0 of 1 cases passed",
        "\n    evals::search::flaky: 3 of 5 runs passed",
        "\n    broke          evals::support::escalates",
        "\n    broken-gate evals::support::escalates: passed in the baseline",
    ] {
        assert!(console.contains(line), "{line:?} in:\n{console}");
    }
    for line in [
        "| `evals::support::escalates` | ❌ failed |",
        "<summary><code>evals::support::escalates</code></summary>",
        "eval evals::support::escalates FAILED",
        "- dataset `evals::capitals`: 0 of 1 cases passed",
        "| `evals::search::flaky` | 3 of 5 |",
        "- broken-gate `evals::support::escalates`: passed in the baseline",
    ] {
        assert!(md.contains(line), "{line:?} in:\n{md}");
    }
    let shown = visible(&html);
    assert!(
        shown.contains("<code>evals::support::escalates</code>"),
        "{shown}"
    );
    assert!(niceeval_tests::page::ids(&html).contains(&"smoke::ping".to_string()));
    let suite = niceeval_tests::page::data(&html, "suite-data").expect("the suite's data");
    assert_eq!(
        suite["several"], true,
        "the script names evals with their target"
    );
}
