//! The HTML viewer in a real browser: headless Chromium (Debian's `chromium`, installed by
//! `scripts/install-chromium.sh`; a test fails naming the script when it is missing), driven
//! through the DevTools protocol (`niceeval_tests::chromium::Browser`), loads pages from disk
//! with networking off. Each test checks that the page logged nothing (no script error, no
//! blocked load: the page's content-security policy forbids every external resource) and what
//! the page shows: the suite runner's page, a conversation, a workspace diff and a span
//! waterfall, filters and the URL's hash on a dataset's cases, and a 100,000-case page.
//! (The comparison view, then and now, is tested with the comparison: `compare.rs`.)

use std::path::{Path, PathBuf};

use niceeval::__workspace::reporter::Html;
use niceeval::reporter::{EvalSummary, Reporter, SuiteReport, SuiteStart};
use niceeval::{Change, EvalReport, Event, FileChange, Role};
use niceeval_tests::chromium::{Browser, Tab};
use niceeval_tests::fixture::Fixtures;
use niceeval_tests::synthetic;

/// Writes the page of `reports` (in order) with the `--html` reporter, at `path`.
fn write_page(reports: impl IntoIterator<Item = EvalReport>, ids: Vec<String>, path: &Path) {
    let mut html = Html::new(std::io::BufWriter::new(
        std::fs::File::create(path).expect("the page's file"),
    ));
    html.on_run_start(&SuiteStart {
        evals: ids.into(),
        concurrency: 1,
    })
    .expect("start");
    let mut summaries = Vec::new();
    for r in reports {
        html.on_eval_complete(&r).expect("eval");
        summaries.push(EvalSummary::from(&r));
    }
    html.on_run_complete(&SuiteReport::new(summaries, 0, false, 1.0))
        .expect("complete");
}

/// Opens `page` (with `hash`) and waits until the summary and the first rows are painted.
fn open(browser: &mut Browser, page: &Path, hash: &str) -> Tab {
    let tab = browser.open(&format!("file://{}{hash}", page.display()));
    browser.wait_for(&tab, "document.body && document.body.dataset.ready");
    tab
}

/// The text of the first element matching `selector` (`""` when none).
fn text(browser: &mut Browser, tab: &Tab, selector: &str) -> String {
    let js = format!(
        "(document.querySelector({}) || {{textContent: ''}}).textContent",
        serde_json::to_string(selector).expect("JSON")
    );
    browser.eval(tab, &js).as_str().unwrap_or("").to_string()
}

/// How many elements match `selector`.
fn count(browser: &mut Browser, tab: &Tab, selector: &str) -> u64 {
    let js = format!(
        "document.querySelectorAll({}).length",
        serde_json::to_string(selector).expect("JSON")
    );
    browser.eval(tab, &js).as_u64().expect("a count")
}

/// Fails when the page logged anything.
fn quiet(browser: &Browser) {
    assert!(
        browser.console.is_empty(),
        "the page logged:\n{}",
        browser.console.join("\n")
    );
}

#[test]
fn the_suite_runners_page_opens_offline_and_shows_each_eval() {
    let Some(mut browser) = Browser::launch() else {
        return;
    };
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
    for external in ["http:", "https:", "//"] {
        assert!(
            !source.contains(&format!("src=\"{external}"))
                && !source.contains(&format!("href=\"{external}")),
            "the page refers to {external}"
        );
    }

    let tab = open(&mut browser, &page, "");
    assert_eq!(browser.eval(&tab, "document.body.dataset.rendered"), "6");
    let names = browser.eval(
        &tab,
        "Array.from(document.querySelectorAll('#rows .row .n'), (n) => n.textContent).sort().join(' ')",
    );
    assert_eq!(
        names,
        "checkout::expensive checkout::flaky checkout::needs_key checkout::refund_fails smoke::counts_words smoke::greets",
        "one row per eval, named without the target"
    );
    // The failed eval's details: its failed assertion and its conversation.
    browser.eval(&tab, "location.hash = 'open=suite::checkout::refund_fails'");
    browser.wait_for(
        &tab,
        "document.body.dataset.opened === 'suite::checkout::refund_fails'",
    );
    let detail = text(&mut browser, &tab, "#detail");
    assert!(detail.contains("includes(\"refund\")"), "{detail}");
    assert!(
        count(&mut browser, &tab, "#detail .msg.assistant") > 0,
        "{detail}"
    );
    // The flaky eval's runs side by side, with pass@k.
    browser.eval(&tab, "location.hash = 'open=suite::checkout::flaky'");
    browser.wait_for(
        &tab,
        "document.body.dataset.opened === 'suite::checkout::flaky'",
    );
    let runs = text(&mut browser, &tab, "#detail .runs");
    assert!(runs.contains("pass@2 "), "pass@k of the 5 runs: {runs}");
    assert_eq!(count(&mut browser, &tab, "#detail table.runs tr.run"), 5);
    quiet(&browser);
}

/// An eval with everything the details show: a conversation of two turns (with thinking, a
/// tool call and its result, an error), the working copy's changes of each turn, a budget,
/// spans, and the dataset it is a case of.
pub(super) fn rich_report() -> EvalReport {
    let mut report: EvalReport = serde_json::from_value(serde_json::json!({
        "id": "evals::capitals::paris", "file": "tests/evals.rs", "line": 7, "outcome": "failed",
        "tags": ["geo"], "dataset": "evals::capitals",
        "assertions": [
            {"name": "all_of", "kind": "value", "severity": "gate", "score": 0.5, "passed": false,
             "reason": "1 of 2 passed", "children": [
                {"name": "includes(\"Paris\")", "kind": "value", "severity": "gate", "score": 1.0, "passed": true, "reason": "found"},
                {"name": "judge(\"cites a source\")", "kind": "judge", "severity": "soft", "score": 0.2, "threshold": 0.7, "passed": false, "reason": "no source cited"}
             ]},
            {"name": "max_tokens(100)", "kind": "efficiency", "severity": "gate", "score": 0.5, "passed": false, "reason": "200 tokens, budget 100"}
        ],
        "duration_ms": 1234.0, "score": 0.5,
        "usage": {"input_tokens": 150, "output_tokens": 50, "cache_read_tokens": 0},
        "runs": [], "reliability": {"n": 1, "c": 0, "pass_rate": 0.0, "pass_at_k": [0.0], "pass_hat_k": [0.0]},
        "min_pass_rate": 1.0,
    }))
    .expect("a report");
    let span = |id: &str, parent: Option<&str>, name: &str, start: u64, end: u64, code: &str| {
        Event::Custom {
            name: "otel.span".into(),
            data: serde_json::json!({
                "trace_id": "t1", "span_id": id, "parent_span_id": parent, "name": name,
                "kind": "client", "start_unix_nano": start.to_string(), "end_unix_nano": end.to_string(),
                "status": {"code": code, "message": if code == "error" { "timed out" } else { "" }},
                "service": "agent", "attributes": {"gen_ai.request.model": "m"},
            }),
        }
    };
    report.events = vec![
        Event::Message {
            role: Role::User,
            text: "What is the capital of France? Write it to answer.txt.".into(),
        },
        Event::Thinking {
            text: "The user wants a file.".into(),
        },
        Event::ActionCalled {
            call_id: "c1".into(),
            name: "write_file".into(),
            input: serde_json::json!({"path": "answer.txt", "text": "Paris"}),
        },
        Event::ActionResult {
            call_id: "c1".into(),
            output: serde_json::json!("ok"),
            status: niceeval::ActionStatus::Completed,
        },
        Event::Message {
            role: Role::Assistant,
            text: "Paris. I wrote it to answer.txt.".into(),
        },
        Event::WorkspaceChanged {
            files: vec![
                FileChange {
                    path: "answer.txt".into(),
                    change: Change::Created,
                    binary: false,
                },
                FileChange {
                    path: "notes.md".into(),
                    change: Change::Modified,
                    binary: false,
                },
            ],
            diff: "diff --git a/answer.txt b/answer.txt\nnew file mode 100644\n--- /dev/null\n+++ b/answer.txt\n@@ -0,0 +1 @@\n+Paris\ndiff --git a/notes.md b/notes.md\n--- a/notes.md\n+++ b/notes.md\n@@ -1,2 +1,2 @@\n # Notes\n-todo\n+done\n".into(),
            partial: false,
        },
        Event::Message {
            role: Role::User,
            text: "And of Peru?".into(),
        },
        Event::Error {
            message: "model overloaded".into(),
        },
        Event::WorkspaceChanged {
            files: vec![FileChange {
                path: "answer.txt".into(),
                change: Change::Modified,
                binary: false,
            }],
            diff: "diff --git a/answer.txt b/answer.txt\n--- a/answer.txt\n+++ b/answer.txt\n@@ -1 +1 @@\n-Paris\n+Lima\n".into(),
            partial: true,
        },
        span("a", None, "agent.run", 1_000_000_000, 3_000_000_000, "ok"),
        span("b", Some("a"), "chat m", 1_100_000_000, 2_000_000_000, "ok"),
        span("c", Some("b"), "tool write_file", 1_500_000_000, 1_600_000_000, "error"),
    ];
    report
}

#[test]
fn a_conversation_a_workspace_diff_and_a_span_waterfall_render() {
    let Some(mut browser) = Browser::launch() else {
        return;
    };
    let dir = tempfile::tempdir().expect("a temporary directory");
    let page = dir.path().join("report.html");
    let mut lima = rich_report();
    lima.id = "evals::capitals::lima".into();
    lima.outcome = niceeval::Outcome::Passed;
    lima.events.clear();
    write_page(
        [rich_report(), lima],
        vec![
            "evals::capitals::paris".into(),
            "evals::capitals::lima".into(),
        ],
        &page,
    );
    let tab = open(&mut browser, &page, "#open=evals::capitals::paris");
    browser.wait_for(
        &tab,
        "document.body.dataset.opened === 'evals::capitals::paris'",
    );

    // The conversation, as a conversation.
    assert_eq!(count(&mut browser, &tab, "#detail .msg.user"), 2);
    assert_eq!(
        text(&mut browser, &tab, "#detail .msg.assistant"),
        "assistantParis. I wrote it to answer.txt."
    );
    assert_eq!(count(&mut browser, &tab, "#detail .msg.thinking"), 1);
    let call = text(&mut browser, &tab, "#detail .msg.tool");
    assert!(
        call.contains("tool call write_file") && call.contains("\"path\": \"answer.txt\""),
        "{call}"
    );
    assert!(text(&mut browser, &tab, "#detail .msg.result").contains("ok"));
    assert!(text(&mut browser, &tab, "#detail .msg.error").contains("model overloaded"));

    // The working copy's changes: per turn, a diff per file, lines marked.
    let turns = browser.eval(
        &tab,
        "Array.from(document.querySelectorAll('#detail .changes h4'), (h) => h.textContent)",
    );
    assert_eq!(
        turns,
        serde_json::json!([
            "Changes of turn 1",
            "Changes of turn 2 (partial diff: cut at [workspace] max_files / max_bytes)"
        ])
    );
    let files = browser.eval(
        &tab,
        "Array.from(document.querySelectorAll('#detail .diff'), (d) => d.dataset.path)",
    );
    assert_eq!(
        files,
        serde_json::json!(["answer.txt", "notes.md", "answer.txt"])
    );
    assert_eq!(
        text(
            &mut browser,
            &tab,
            "#detail .diff[data-path='notes.md'] .del"
        ),
        "-todo\n"
    );
    assert_eq!(
        text(
            &mut browser,
            &tab,
            "#detail .diff[data-path='notes.md'] .add"
        ),
        "+done\n"
    );

    // The assertion tree and the budget with its figures.
    assert_eq!(
        count(&mut browser, &tab, "#detail .assertions tr.assertion"),
        3
    );
    assert!(
        text(&mut browser, &tab, "#detail .assertions").contains("no source cited"),
        "reasons are shown"
    );
    assert!(text(&mut browser, &tab, "#detail .budgets").contains("200 tokens, budget 100"));

    // The waterfall: three spans, nested, the failed one marked, bars placed on one axis.
    assert_eq!(count(&mut browser, &tab, "#detail .waterfall .span"), 3);
    assert_eq!(
        count(&mut browser, &tab, "#detail .waterfall .bar.error"),
        1
    );
    let bar = browser.eval(
        &tab,
        "(() => { const b = document.querySelector(\"#detail [data-span='b'] .bar\"); return [b.style.left, b.style.width]; })()",
    );
    assert_eq!(bar, serde_json::json!(["5%", "45%"]));
    assert!(
        text(&mut browser, &tab, "#detail [data-span='c'] .label")
            .starts_with("\u{a0}\u{a0}\u{a0}\u{a0}tool")
    );

    // The case's dataset line, with its verdict.
    let line = text(&mut browser, &tab, "#detail .dataset");
    assert_eq!(
        line,
        "dataset capitals: 1 of 2 cases passed, mean score 0.50"
    );
    quiet(&browser);
}

/// A page of `n` synthetic dataset cases (`niceeval_tests::synthetic`) in `dir`, written in
/// a scrambled order (case `k × 7919 mod n` finishes `k`-th), as a concurrent run finishes
/// them.
pub(super) fn synthetic_page(dir: &Path, n: usize) -> PathBuf {
    assert!(
        !n.is_multiple_of(7919),
        "7919 is prime: a permutation of 0..n"
    );
    let page = dir.join(format!("cases-{n}.html"));
    let order = move || (0..n).map(move |k| (k * 7919) % n);
    let ids = order()
        .map(|i| format!("{}::case_{i:06}", synthetic::DATASET))
        .collect();
    write_page(
        order().map(|i| serde_json::from_value(synthetic::case(i)).expect("a report")),
        ids,
        &page,
    );
    page
}

/// The rows painted in the list: each one's position and id.
fn painted(browser: &mut Browser, tab: &Tab) -> Vec<(usize, String)> {
    let rows = browser.eval(
        tab,
        "Array.from(document.querySelectorAll('#rows .row'), (r) => [Number(r.dataset.p), r.dataset.id])",
    );
    serde_json::from_value(rows).expect("positions and ids")
}

#[test]
fn filters_sorting_keys_and_the_url_hash_find_cases() {
    let Some(mut browser) = Browser::launch() else {
        return;
    };
    let dir = tempfile::tempdir().expect("a temporary directory");
    let page = synthetic_page(dir.path(), 1000);

    // A link to "failures of dataset X" opens filtered; the controls show the filter.
    let tab = open(&mut browser, &page, "#o=failed&ds=evals::support_tickets");
    assert_eq!(browser.eval(&tab, "document.body.dataset.shown"), "100");
    assert_eq!(
        browser.eval(&tab, "document.getElementById('o').value"),
        "failed"
    );
    assert_eq!(text(&mut browser, &tab, "#count"), "100 of 1000 evals");
    assert_eq!(text(&mut browser, &tab, "#counts"), "100 failed");

    // Typing text filters replies and reasons, and the hash keeps it.
    browser.eval(
        &tab,
        "(() => { const q = document.getElementById('q'); q.value = 'cannot find order #13.'; q.dispatchEvent(new Event('input')); })()",
    );
    assert_eq!(
        browser.eval(&tab, "document.body.dataset.shown"),
        "1",
        "case 13 only"
    );
    let hash = browser.eval(&tab, "location.hash");
    assert!(
        hash.as_str()
            .is_some_and(|h| h.contains("q=cannot+find+order")),
        "{hash}"
    );

    // A regex over names, a tag, and sorting by score (highest first).
    browser.eval(&tab, "location.hash = 'q=/case_00000[0-9]/&tag=billing'");
    browser.wait_for(&tab, "document.body.dataset.shown === '3'");
    browser.eval(&tab, "location.hash = 'o=passed&sort=-score'");
    browser.wait_for(&tab, "document.getElementById('sort').value === '-score'");
    let scores = browser.eval(
        &tab,
        "Array.from(document.querySelectorAll('#rows .row'), (r) => Number(r.querySelector('.v').textContent)).slice(0, 5)",
    );
    let scores: Vec<f64> = serde_json::from_value(scores).expect("numbers");
    assert!(scores.windows(2).all(|w| w[0] >= w[1]), "{scores:?}");
    assert_eq!(scores[0], 1.0);

    // Keys: down twice selects the second row and opens it; the hash names it.
    browser.eval(&tab, "location.hash = ''");
    browser.wait_for(&tab, "document.body.dataset.shown === '1000'");
    for _ in 0..2 {
        browser.eval(
            &tab,
            "document.dispatchEvent(new KeyboardEvent('keydown', {key: 'ArrowDown'}))",
        );
    }
    let second = format!("{}::case_000001", synthetic::DATASET);
    browser.wait_for(
        &tab,
        &format!("document.body.dataset.opened === '{second}'"),
    );
    assert_eq!(
        browser.eval(&tab, "document.querySelector('#rows .row.sel').dataset.id"),
        second.as_str()
    );
    assert!(
        browser
            .eval(&tab, "location.hash")
            .as_str()
            .is_some_and(|h| h.contains("open=evals%3A%3Asupport_tickets%3A%3Acase_000001")),
    );
    // A link with `open=` opens that eval.
    let tab = open(
        &mut browser,
        &page,
        &format!("#open={}::case_000042", synthetic::DATASET),
    );
    browser.wait_for(
        &tab,
        "(document.body.dataset.opened || '').endsWith('case_000042')",
    );
    assert!(text(&mut browser, &tab, "#detail").contains("order #42"));

    // The screenshot of the guide's viewer page (docs/book/src/viewer.md): failures of the dataset, one open.
    let tab = open(
        &mut browser,
        &page,
        &format!(
            "#o=failed&sort=-tokens&open={}::case_000023",
            synthetic::DATASET
        ),
    );
    browser.wait_for(
        &tab,
        "(document.body.dataset.opened || '').endsWith('case_000023')",
    );
    let png = browser.screenshot(&tab);
    assert!(png.starts_with(b"\x89PNG"), "a PNG");
    let shot = Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/niceeval/viewer.png");
    std::fs::create_dir_all(shot.parent().expect("a parent")).expect("target/niceeval");
    std::fs::write(&shot, &png).expect("the screenshot");
    if std::env::var_os("NICEEVAL_UPDATE_SCREENSHOT").is_some() {
        std::fs::write(
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/book/src/images/viewer.png"),
            &png,
        )
        .expect("docs/book/src/images/viewer.png");
    }
    quiet(&browser);
}

/// The 100,000-case page: under 30 MB, every row in the list, filters answer. How fast it
/// opens and filters is the benchmark's to measure (`cargo bench -p niceeval-tests --bench
/// viewer`), with the page's own timing.
#[test]
fn a_page_of_100_000_cases_is_under_30_mb_and_opens_whole() {
    let Some(mut browser) = Browser::launch() else {
        return;
    };
    let dir = tempfile::tempdir().expect("a temporary directory");
    let page = synthetic_page(dir.path(), 100_000);
    let size = std::fs::metadata(&page).expect("the page").len();
    assert!(size < 30_000_000, "{size} bytes");

    let tab = open(&mut browser, &page, "");
    assert_eq!(
        browser.eval(&tab, "document.body.dataset.rendered"),
        "100000"
    );
    let ready: f64 = browser
        .eval(&tab, "Number(document.body.dataset.ready)")
        .as_f64()
        .expect("a time");
    assert!(ready > 0.0);
    assert!(
        count(&mut browser, &tab, "#rows .row") < 200,
        "the list is virtualized"
    );
    // Sorted by name, though written in another order: the row at position p is case p, at the
    // top, in the middle and at the end.
    for top in [0, 50_000, 99_980] {
        browser.eval(
            &tab,
            &format!("new Promise((done) => {{ document.getElementById('list').scrollTop = {top} * 26; requestAnimationFrame(() => requestAnimationFrame(done)); }})"),
        );
        let rows = painted(&mut browser, &tab);
        assert!(rows.iter().any(|(p, _)| *p == top), "{top}: {rows:?}");
        for (p, id) in rows {
            assert_eq!(id, format!("{}::case_{p:06}", synthetic::DATASET));
        }
    }
    browser.eval(&tab, "location.hash = 'o=failed&sort=-duration'");
    browser.wait_for(&tab, "document.body.dataset.shown === '10000'");
    quiet(&browser);
}

/// `niceeval view DIR --out target/niceeval/view.html` where there is no display: writes the page,
/// prints its path, and the page shows the results read; with `--then`, an earlier run's
/// report beside each eval's.
#[test]
fn niceeval_view_writes_the_page_and_prints_its_path_without_a_display() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let results = dir.path().join("results");
    std::fs::create_dir_all(&results).expect("results directory");
    let lines: String = (0..300)
        .map(|i| format!("{}\n", synthetic::case(i)))
        .collect();
    std::fs::write(results.join("evals.jsonl"), lines).expect("results file");

    let mut command = std::process::Command::new(Fixtures::get().niceeval_cli());
    niceeval_tests::child::clean_env(&mut command)
        .current_dir(dir.path())
        .env_remove("DISPLAY")
        .env_remove("WAYLAND_DISPLAY")
        // Without --out it serves the page (niceeval-cli's tests/it/serve.rs); with it, the
        // one-file page.
        .args(["view", "results", "--out", "target/niceeval/view.html"]);
    let out = niceeval_tests::child::run(&mut command, niceeval_tests::fixture::RUN_DEADLINE);
    assert_eq!(
        out.code(),
        Some(0),
        "failed evals do not fail the view\n{}",
        out.dump()
    );
    let page = std::fs::canonicalize(dir.path().join("target/niceeval/view.html"))
        .expect("the page is under target/niceeval");
    assert!(
        out.stdout.contains(&format!("wrote {}\n", page.display())),
        "{}",
        out.dump()
    );

    let Some(mut browser) = Browser::launch() else {
        return;
    };
    let tab = open(&mut browser, &page, "#o=skipped");
    assert_eq!(browser.eval(&tab, "document.body.dataset.rendered"), "300");
    assert_eq!(browser.eval(&tab, "document.body.dataset.shown"), "6");
    quiet(&browser);

    // With --then: an earlier run's reply, score and assertions beside this run's.
    let then = dir.path().join("then");
    std::fs::create_dir_all(&then).expect("then directory");
    let mut earlier = synthetic::case(3);
    earlier["outcome"] = "passed".into();
    earlier["runs"][0]["outcome"] = "passed".into();
    earlier["score"] = 0.9.into();
    earlier["events"][1]["text"] = "Your refund for order #3 was approved yesterday.".into();
    std::fs::write(then.join("evals.jsonl"), format!("{earlier}\n")).expect("then results");
    let mut command = std::process::Command::new(Fixtures::get().niceeval_cli());
    niceeval_tests::child::clean_env(&mut command)
        .current_dir(dir.path())
        .args([
            "view",
            "results",
            "--then",
            "then",
            "--no-open",
            "--out",
            "then.html",
        ]);
    let out = niceeval_tests::child::run(&mut command, niceeval_tests::fixture::RUN_DEADLINE);
    assert_eq!(out.code(), Some(0), "{}", out.dump());
    let page = dir.path().join("then.html");
    let tab = open(
        &mut browser,
        &page,
        &format!("#open={}::case_000003", synthetic::DATASET),
    );
    browser.wait_for(
        &tab,
        "document.querySelector('#detail .then-and-now[data-loaded]')",
    );
    let then_side = text(&mut browser, &tab, "#detail .then-and-now .then");
    assert!(
        then_side.starts_with("then: passed · score 0.90")
            && then_side.contains("Your refund for order #3 was approved yesterday."),
        "{then_side}"
    );
    let now_side = text(&mut browser, &tab, "#detail .then-and-now .now");
    assert!(
        now_side.starts_with("now: failed") && now_side.contains("cannot find order #3."),
        "{now_side}"
    );
    assert!(
        now_side.contains("\"refund\" not found"),
        "the assertions now: {now_side}"
    );
    quiet(&browser);

    let mut command = std::process::Command::new(Fixtures::get().niceeval_cli());
    niceeval_tests::child::clean_env(&mut command)
        .current_dir(dir.path())
        .args(["view", "--bogus"]);
    let out = niceeval_tests::child::run(&mut command, niceeval_tests::fixture::RUN_DEADLINE);
    assert_eq!(out.code(), Some(2), "{}", out.dump());
    assert!(
        out.stderr.contains("unexpected argument '--bogus'"),
        "{}",
        out.dump()
    );
}

/// A case of `suite::promptfooconfig`: test `test` with prompt `p` and provider `q`.
fn suite_case(test: usize, p: usize, q: usize, passed: bool, reply: &str) -> EvalReport {
    let description = ["capital of France", "capital of Italy"][test - 1];
    let provider = ["gpt-4o-mini", "claude-haiku"][q - 1];
    serde_json::from_value(serde_json::json!({
        "id": format!("suite::promptfooconfig::{description} [prompt {p}, {provider}]"),
        "file": "promptfooconfig.yaml", "line": 3 + test,
        "outcome": if passed { "passed" } else { "failed" },
        "assertions": [{"name": "icontains(\"capital\")", "kind": "value", "severity": "gate",
          "score": if passed { 1.0 } else { 0.0 }, "passed": passed, "reason": "checked"}],
        "score": if passed { 1.0 } else { 0.0 },
        "duration_ms": 5.0,
        "usage": {"input_tokens": 10, "output_tokens": 5, "cache_read_tokens": 0},
        "events": [
            {"type": "message", "role": "user", "text": format!("About {description}?")},
            {"type": "message", "role": "assistant", "text": reply},
        ],
        "runs": [], "reliability": {"n": 1, "c": 1, "pass_rate": 1.0, "pass_at_k": [1.0], "pass_hat_k": [1.0]},
        "min_pass_rate": 1.0,
        "dataset": "suite::promptfooconfig",
        "matrix": {"test": test, "description": description, "prompt": p,
          "prompt_label": format!("prompt {p}"), "provider": q, "provider_label": provider},
    }))
    .expect("a report")
}

#[test]
fn a_suite_files_cases_are_a_matrix_and_a_cell_opens_its_output() {
    let Some(mut browser) = Browser::launch() else {
        return;
    };
    let dir = tempfile::tempdir().expect("a temporary directory");
    let page = dir.path().join("matrix.html");
    let mut reports = Vec::new();
    for test in 1..=2 {
        for p in 1..=2 {
            for q in 1..=2 {
                let failed = (test, p, q) == (2, 2, 1);
                let reply = if failed {
                    "I do not know.".to_string()
                } else {
                    format!("The capital, case {test}{p}{q}.")
                };
                reports.push(suite_case(test, p, q, !failed, &reply));
            }
        }
    }
    let ids = reports.iter().map(|r| r.id.clone()).collect();
    write_page(reports, ids, &page);

    let tab = open(&mut browser, &page, "#view=matrix");
    browser.wait_for(&tab, "document.querySelector('#matrix table')");
    assert_eq!(
        browser.eval(&tab, "document.getElementById('list').hidden"),
        true
    );
    assert_eq!(
        text(&mut browser, &tab, "#matrix h3"),
        "promptfooconfig — 2 tests × 4 prompt/provider columns"
    );
    let headers = browser.eval(
        &tab,
        "Array.from(document.querySelectorAll('#matrix tr:first-child th'), (h) => h.textContent).join(' | ')",
    );
    assert_eq!(
        headers,
        "test | prompt 1 · gpt-4o-mini | prompt 1 · claude-haiku | prompt 2 · gpt-4o-mini | prompt 2 · claude-haiku"
    );
    // One row per test, one cell per prompt × provider: verdict, score, the output's start.
    let second = browser.eval(
        &tab,
        "Array.from(document.querySelectorAll('#matrix tr:nth-child(3) > *'), (c) => c.textContent).join(' | ')",
    );
    assert_eq!(
        second,
        "capital of Italy | pass1.00 The capital, case 211. | pass1.00 The capital, case 212. | FAIL0.00 I do not know. | pass1.00 The capital, case 222."
    );
    // A click on a cell opens the case: its output in the conversation, its assertions.
    browser.eval(
        &tab,
        "document.querySelector('#matrix td.cell[data-status=failed]').click()",
    );
    let failed = "suite::promptfooconfig::capital of Italy [prompt 2, gpt-4o-mini]";
    browser.wait_for(
        &tab,
        &format!("document.body.dataset.opened === {failed:?}"),
    );
    assert_eq!(
        text(&mut browser, &tab, "#detail .msg.assistant"),
        "assistantI do not know."
    );
    assert!(
        browser
            .eval(&tab, "location.hash")
            .as_str()
            .is_some_and(|h| h.contains("view=matrix"))
    );
    // Filters apply: the failures alone leave one test with one case.
    browser.eval(&tab, "location.hash = 'view=matrix&o=failed'");
    browser.wait_for(&tab, "document.body.dataset.shown === '1'");
    assert_eq!(count(&mut browser, &tab, "#matrix tr"), 2);
    assert_eq!(count(&mut browser, &tab, "#matrix td.cell"), 1);
    // The list view is one choice away.
    browser.eval(&tab, "location.hash = ''");
    browser.wait_for(&tab, "document.body.dataset.shown === '8'");
    assert_eq!(
        browser.eval(&tab, "document.getElementById('matrix').hidden"),
        true
    );
    assert_eq!(count(&mut browser, &tab, "#rows .row"), 8);
    quiet(&browser);

    // A run without suite files offers no matrix.
    let plain = synthetic_page(dir.path(), 3);
    let tab = open(&mut browser, &plain, "#view=matrix");
    assert_eq!(
        browser.eval(&tab, "document.getElementById('view') === null"),
        true
    );
    assert_eq!(
        browser.eval(&tab, "document.getElementById('list').hidden"),
        false
    );
    quiet(&browser);
}
