//! The HTML report in a real browser: the fixture suite writes it, headless Chromium (Debian's
//! `chromium`, installed by `scripts/install-chromium.sh`) loads it from disk with networking
//! off, and the test checks that the page logged nothing to the console (no script error, no
//! blocked load — the page's Content-Security-Policy forbids every external resource), that the
//! script rendered every eval, and that the expected eval names are in the rendered DOM.
//!
//! Without Chromium the test fails under CI (`CI` set) and is skipped with a notice elsewhere.

use niceeval_tests::chromium;
use niceeval_tests::fixture::Fixtures;

#[test]
fn the_html_report_renders_offline_without_console_errors() {
    if !chromium::available() {
        return;
    }
    let dir = tempfile::tempdir().expect("a temporary directory");
    let page = dir.path().join("report.html");
    let out = Fixtures::get().run(
        "suite",
        "suite",
        &[
            "--skip",
            "slow",
            "-q",
            "--html",
            page.to_str().expect("UTF-8"),
        ],
        &[("NICEEVAL_RESULTS", "0")],
    );
    assert_eq!(out.code(), Some(101), "{}", out.dump());

    let source = std::fs::read_to_string(&page).expect("the page was written");
    for external in ["http://", "https://", "//cdn", "src=\"/"] {
        assert!(
            !source.contains(&format!("src=\"{external}"))
                && !source.contains(&format!("href=\"{external}")),
            "the page refers to {external}"
        );
    }

    let (dom, log) = chromium::dump_dom(
        &format!("file://{}", page.display()),
        &dir.path().join("profile"),
    );
    let console: Vec<&str> = log.lines().filter(|l| l.contains(":CONSOLE")).collect();
    assert!(
        console.is_empty(),
        "the page logged to the console:\n{}",
        console.join("\n")
    );

    // The script ran to its end and rendered one details box per eval.
    assert!(dom.contains("data-rendered=\"6\""), "{dom}");
    for id in [
        "suite::smoke::greets",
        "suite::smoke::counts_words",
        "suite::checkout::refund_fails",
        "suite::checkout::flaky",
        "suite::checkout::needs_key",
        "suite::checkout::expensive",
    ] {
        assert!(
            dom.contains(&format!("<details class=\"eval\" data-id=\"{id}\"")),
            "{id} not rendered:\n{dom}"
        );
    }
    // The failed eval is open, with its failed assertion and transcript.
    assert!(
        dom.contains(
            "<details class=\"eval\" data-id=\"suite::checkout::refund_fails\" open=\"\">"
        ),
        "{dom}"
    );
    assert!(dom.contains("includes(\"refund\")"), "{dom}");
    assert!(dom.contains("transcript ("), "{dom}");
    assert!(
        dom.contains("pass@2 "),
        "pass@k of the 5 runs of flaky:\n{dom}"
    );
}

/// A hand-built page in the browser: each eval's details name it as the summary table does
/// (one target: without it), a working-copy change cut at `[workspace] max_files` /
/// `max_bytes` says "partial" in the details and on its transcript line, and each dataset has
/// its line.
#[test]
fn the_page_names_evals_once_marks_partial_diffs_and_lists_datasets() {
    use niceeval::__private::reporter::Html;
    use niceeval::reporter::{EvalSummary, Reporter, SuiteReport, SuiteStart};
    use niceeval::{Change, EvalReport, Event, FileChange};

    if !chromium::available() {
        return;
    }
    let report = |id: &str, dataset: Option<&str>, outcome: &str| -> EvalReport {
        serde_json::from_value(serde_json::json!({
            "id": id, "file": "tests/evals.rs", "line": 1, "outcome": outcome,
            "assertions": [], "duration_ms": 1.0, "score": 1.0,
            "usage": {"input_tokens": 0, "output_tokens": 0, "cache_read_tokens": 0},
            "runs": [], "reliability": {"n": 1, "c": 1, "pass_rate": 1.0, "pass_at_k": [1.0], "pass_hat_k": [1.0]},
            "min_pass_rate": 1.0, "dataset": dataset,
        }))
        .expect("a report")
    };
    let mut edits = report("evals::workspace::writes_many_files", None, "passed");
    edits.events = vec![Event::WorkspaceChanged {
        files: vec![FileChange {
            path: "z00.txt".into(),
            change: Change::Created,
            binary: false,
        }],
        diff: "+a\n".into(),
        partial: true,
    }];
    let reports = [
        edits,
        report("evals::capitals::paris", Some("evals::capitals"), "passed"),
        report("evals::capitals::lima", Some("evals::capitals"), "passed"),
    ];
    let mut html = Html::new(Vec::new());
    html.on_run_start(&SuiteStart {
        evals: reports.iter().map(|r| r.id.clone()).collect(),
        concurrency: 1,
    })
    .expect("start");
    for r in &reports {
        html.on_eval_complete(r).expect("eval");
    }
    html.on_run_complete(&SuiteReport::new(
        reports.iter().map(EvalSummary::from).collect(),
        0,
        false,
        1.0,
    ))
    .expect("complete");
    let dir = tempfile::tempdir().expect("a temporary directory");
    let page = dir.path().join("report.html");
    std::fs::write(&page, html.into_inner()).expect("written");

    let (dom, log) = chromium::dump_dom(
        &format!("file://{}", page.display()),
        &dir.path().join("profile"),
    );
    let console: Vec<&str> = log.lines().filter(|l| l.contains(":CONSOLE")).collect();
    assert!(console.is_empty(), "{}", console.join("\n"));
    assert!(dom.contains("data-rendered=\"3\""), "{dom}");
    assert!(
        dom.contains("</span> workspace::writes_many_files</summary>"),
        "the details name the eval as the table does:\n{dom}"
    );
    assert!(!dom.contains("</span> evals::"), "{dom}");
    assert!(
        dom.contains(
            "partial diff: the working copy's change was over [workspace] max_files / max_bytes"
        ),
        "{dom}"
    );
    assert!(dom.contains("transcript (1 events, partial diff)"), "{dom}");
    assert!(
        dom.contains("(partial diff) {\"type\":\"workspace.changed\""),
        "{dom}"
    );
    assert!(
        dom.contains("dataset <code>capitals</code>: <span class=\"pass\">2 of 2 cases passed"),
        "{dom}"
    );
}
