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
