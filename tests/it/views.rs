//! Every view of the HTML viewer at 1400×900 in headless Chromium, on one run that has all
//! of them: a list compared with a baseline, an eval with several runs (one failed), a suite
//! file's matrix, then and now beside an earlier run (also at 2560×1440, side by side), a
//! span waterfall. In each view the geometry holds — no two tables overlap, no word of a cell
//! breaks or sticks out of it, nothing is wider than its pane, the page itself does not scroll
//! — and what the view is for shows. Each view is photographed: `target/niceeval/viewer-*.png`,
//! and `docs/book/src/images/viewer-*.png` with `NICEEVAL_UPDATE_SCREENSHOT=1` (the ones the
//! docs show).

use std::path::{Path, PathBuf};

use niceeval::__workspace::compare::Baseline;
use niceeval::__workspace::config::CompareConfig;
use niceeval::__workspace::reporter::Html;
use niceeval::compare::{BaselineEval, Comparison};
use niceeval::reporter::{EvalSummary, Reporter, SuiteReport, SuiteStart};
use niceeval::{EvalReport, Event, Role};
use niceeval_tests::chromium::{Browser, Tab};
use niceeval_tests::synthetic;

/// The viewport every view is checked and photographed at.
const SIZE: (u32, u32) = (1400, 900);

/// The geometry of the page as shown, as a list of what is wrong (empty when nothing is):
/// no pane (list, detail, matrix), nothing in one and not the page scrolls sideways, every
/// table lies within its pane and its parent's box, no two tables overlap, no row of an
/// assertion tree is higher than its own text needs (then's and now's trees are laid out
/// apart, not padded to each other's rows), and no word of a table cell (a hyphen, `::` or
/// `/` ends a word: a line may wrap after it; up to 40 characters: a longer one is a blob
/// that has to wrap) breaks across lines or sticks out of its cell; a blob wraps but does
/// not stick out either.
const GEOMETRY: &str = r##"(() => {
  const problems = [];
  const box = (e) => e.getBoundingClientRect();
  const visible = (e) => e.getClientRects().length > 0 && box(e).width > 0 && box(e).height > 0;
  const describe = (e) => e.tagName.toLowerCase() + (e.id ? "#" + e.id : "")
    + (typeof e.className === "string" && e.className.trim() ? "." + e.className.trim().replace(/\s+/g, ".") : "")
    + ' "' + e.textContent.trim().slice(0, 50) + '"';
  if (document.documentElement.scrollWidth > innerWidth + 1) problems.push(`the page is ${document.documentElement.scrollWidth}px wide`);
  if (document.documentElement.scrollHeight > innerHeight + 1) problems.push(`the page is ${document.documentElement.scrollHeight}px high: it scrolls besides its panes`);
  const panes = ["list", "detail", "matrix"].map((id) => document.getElementById(id)).filter((p) => p && !p.hidden && visible(p));
  for (const pane of panes) {
    if (pane.scrollWidth > pane.clientWidth + 1) problems.push(`#${pane.id} holds ${pane.scrollWidth}px in ${pane.clientWidth}px`);
    if (box(pane).right > innerWidth + 1) problems.push(`#${pane.id} ends at ${box(pane).right}px`);
    if (box(pane).bottom > innerHeight + 1) problems.push(`#${pane.id} ends ${box(pane).bottom}px down`);
  }
  const tables = Array.from(document.querySelectorAll("table")).filter(visible);
  for (const t of tables) {
    const pane = panes.find((p) => p.contains(t));
    if (!pane) continue;
    const [r, p] = [box(t), box(pane)];
    if (r.left < p.left - 1 || r.right > p.right + 1) problems.push(`${describe(t)} (${r.left}..${r.right}) is wider than #${pane.id} (${p.left}..${p.right})`);
    const q = box(t.parentElement);
    if (r.left < q.left - 1 || r.right > q.right + 1) problems.push(`${describe(t)} (${r.left}..${r.right}) sticks out of its ${describe(t.parentElement)} (${q.left}..${q.right})`);
  }
  for (const pane of panes) {
    for (const e of pane.querySelectorAll("*")) {
      if (!visible(e) || !/auto|scroll/.test(getComputedStyle(e).overflowX)) continue;
      if (e.scrollWidth > e.clientWidth + 1) problems.push(`${describe(e)} scrolls sideways: ${e.scrollWidth}px in ${e.clientWidth}px`);
    }
  }
  // An assertion tree's row is as high as its tallest cell's text (plus padding and half a
  // line), not padded to the height of a row of another table.
  for (const row of tables.filter((t) => t.classList.contains("tree")).flatMap((t) => Array.from(t.rows))) {
    let bottom = -Infinity, slack = 0;
    for (const cell of row.cells) {
      const range = document.createRange();
      range.selectNodeContents(cell);
      const rects = Array.from(range.getClientRects()).filter((q) => q.height > 0);
      const style = getComputedStyle(cell);
      const line = parseFloat(style.lineHeight) || 1.5 * parseFloat(style.fontSize);
      slack = Math.max(slack, parseFloat(style.paddingBottom) + parseFloat(style.borderBottomWidth) + line / 2);
      for (const q of rects) bottom = Math.max(bottom, q.bottom);
    }
    if (bottom > -Infinity && box(row).bottom - bottom > slack + 2) problems.push(`${describe(row)} is ${Math.round(box(row).bottom - bottom)}px higher than its text: padded to another row's height`);
  }
  for (let i = 0; i < tables.length; i++) {
    for (let j = i + 1; j < tables.length; j++) {
      const [a, b] = [tables[i], tables[j]];
      if (a.contains(b) || b.contains(a)) continue;
      const [r, s] = [box(a), box(b)];
      const x = Math.min(r.right, s.right) - Math.max(r.left, s.left);
      const y = Math.min(r.bottom, s.bottom) - Math.max(r.top, s.top);
      if (x > 1 && y > 1) problems.push(`${describe(a)} overlaps ${describe(b)}`);
    }
  }
  for (const cell of tables.flatMap((t) => Array.from(t.querySelectorAll("td, th")))) {
    if (!visible(cell)) continue;
    const c = box(cell);
    const walker = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      const words = /\S+/g;
      let m;
      while ((m = words.exec(node.data))) {
        let at = m.index;
        for (const word of m[0].split(/(?<=-|::|\/)/)) {
          const start = at;
          at += word.length;
          const range = document.createRange();
          range.setStart(node, start);
          range.setEnd(node, at);
          const rects = Array.from(range.getClientRects()).filter((q) => q.width > 0);
          if (word.length > 40) {
            if (rects.some((q) => q.right > c.right + 1 || q.left < c.left - 1)) problems.push(`"${word.slice(0, 40)}…" sticks out of ${describe(cell)}`);
            continue;
          }
          if (new Set(rects.map((q) => Math.round(q.top))).size > 1) problems.push(`"${word}" breaks across lines in ${describe(cell)}`);
          else if (rects.some((q) => q.right > c.right + 1 || q.left < c.left - 1)) problems.push(`"${word}" sticks out of ${describe(cell)}`);
        }
      }
    }
  }
  return problems;
})()"##;

/// What is wrong with the geometry of `view`, each line naming the view.
pub(super) fn geometry(browser: &mut Browser, tab: &Tab, view: &str) -> Vec<String> {
    let problems: Vec<String> =
        serde_json::from_value(browser.eval(tab, GEOMETRY)).expect("a list of problems");
    problems
        .into_iter()
        .map(|p| format!("{view}: {p}"))
        .collect()
}

/// The views whose screenshots the guide shows (docs/book/src/images/).
const IN_DOCS: [&str; 6] = [
    "list",
    "runs",
    "matrix",
    "comparison",
    "then-and-now",
    "waterfall",
];

/// Saves a screenshot of the view as `viewer-NAME.png`: under target/niceeval/, and in
/// docs/book/src/images/ with `NICEEVAL_UPDATE_SCREENSHOT` set (the views of [`IN_DOCS`]).
pub(super) fn photograph(browser: &mut Browser, tab: &Tab, name: &str) {
    let png = browser.screenshot(tab);
    assert!(png.starts_with(b"\x89PNG"), "a PNG");
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let shot = root.join(format!("target/niceeval/viewer-{name}.png"));
    std::fs::create_dir_all(shot.parent().expect("a parent")).expect("target/niceeval");
    std::fs::write(&shot, &png).expect("the screenshot");
    if std::env::var_os("NICEEVAL_UPDATE_SCREENSHOT").is_some() && IN_DOCS.contains(&name) {
        std::fs::write(
            root.join(format!("docs/book/src/images/viewer-{name}.png")),
            &png,
        )
        .expect("docs/book/src/images/");
    }
}

/// A report from its JSON, with the fields every report has filled in.
fn report(fields: serde_json::Value) -> EvalReport {
    let mut json = serde_json::json!({
        "file": "tests/evals.rs", "line": 10, "assertions": [], "duration_ms": 900.0,
        "usage": {"input_tokens": 120, "output_tokens": 40, "cache_read_tokens": 0},
        "runs": [], "reliability": {"n": 1, "c": 1, "pass_rate": 1.0, "pass_at_k": [1.0], "pass_hat_k": [1.0]},
        "min_pass_rate": 1.0,
    });
    for (k, v) in fields.as_object().expect("an object") {
        json[k] = v.clone();
    }
    let mut report: EvalReport = serde_json::from_value(json).expect("a report");
    if !report.runs.is_empty() {
        report.recompute();
    }
    report
}

/// A run of a `runs = N` eval: passed, or failed with a reply and the reasons the report keeps.
fn run(passed: bool, why: Option<(&str, &str)>) -> serde_json::Value {
    let mut run = serde_json::json!({
        "outcome": if passed { "passed" } else { "failed" },
        "score": if passed { 1.0 } else { 0.0 },
        "duration_ms": 850.0,
        "usage": {"input_tokens": 300, "output_tokens": 90, "cache_read_tokens": 0},
        "cost_usd": 0.000_023,
    });
    if let Some((reply, reason)) = why {
        run["reply"] = reply.into();
        run["reasons"] = serde_json::json!([reason]);
    }
    run
}

/// An eval run `runs.len()` times whose representative run is the first that passed (or the
/// first that failed when it failed).
fn runs_eval(id: &str, runs: Vec<serde_json::Value>, min_pass_rate: f64) -> EvalReport {
    let passed = runs.iter().filter(|r| r["outcome"] == "passed").count();
    let outcome = if passed as f64 / runs.len() as f64 + 1e-9 >= min_pass_rate {
        "passed"
    } else {
        "failed"
    };
    report(serde_json::json!({
        "id": id, "outcome": outcome, "min_pass_rate": min_pass_rate, "runs": runs,
        "score": if outcome == "passed" { 1.0 } else { 0.0 },
        "assertions": [
            {"name": "includes(\"refund\")", "kind": "value", "severity": "gate",
             "score": if outcome == "passed" { 1.0 } else { 0.0 }, "passed": outcome == "passed",
             "reason": if outcome == "passed" { "found \"refund\" at 12" } else { "\"refund\" not found in the reply (96 chars)" }},
        ],
        "events": [
            {"type": "message", "role": "user", "text": "I want a refund for order #123."},
            {"type": "message", "role": "assistant", "text": if outcome == "passed" { "Your refund for order #123 is on its way." } else { "Could you tell me more about the order?" }},
        ],
    }))
}

/// The suite file's descriptions, prompts and providers.
const TESTS: [&str; 3] = [
    "the capital of France, answered in one word",
    "a refund request for an order that never arrived",
    "a question about shipping times to Canada",
];
const PROVIDERS: [&str; 2] = ["openai:gpt-4o-mini", "anthropic:claude-3-5-haiku-latest"];

/// A case of the suite file `suite::promptfooconfig`.
fn suite_case(test: usize, prompt: usize, provider: usize, passed: bool) -> EvalReport {
    let description = TESTS[test - 1];
    let label = PROVIDERS[provider - 1];
    report(serde_json::json!({
        "id": format!("suite::promptfooconfig::{description} [prompt {prompt}, {label}]"),
        "file": "promptfooconfig.yaml", "line": 8 + 4 * test,
        "description": format!("test {test}, prompt {prompt}, provider {provider}"),
        "outcome": if passed { "passed" } else { "failed" },
        "score": if passed { 1.0 } else { 0.0 },
        "usage": {"input_tokens": 40, "output_tokens": 25, "cache_read_tokens": 0, "cost_usd": 0.000_012_5},
        "cost_usd": 0.000_012_5,
        "assertions": [{"name": "llm-rubric(\"answers the question asked\")", "kind": "judge", "severity": "gate",
          "score": if passed { 0.9 } else { 0.2 }, "passed": passed,
          "reason": if passed { "The reply answers the question directly." } else { "The reply asks for the order number instead of answering." }}],
        "events": [
            {"type": "message", "role": "user", "text": format!("Prompt {prompt}: {description}?")},
            {"type": "message", "role": "assistant", "text": if passed {
                format!("Here is a direct answer about {description}, from {label} with prompt {prompt}.")
            } else {
                "I need your order number before I can answer that.".to_string()
            }},
        ],
        "dataset": "suite::promptfooconfig",
        "matrix": {"test": test, "description": description, "prompt": prompt,
          "prompt_label": format!("prompt {prompt}"), "provider": provider, "provider_label": label},
    }))
}

/// Assertions from their JSON, with the fields every assertion has filled in.
fn assertions(json: serde_json::Value) -> Vec<niceeval::AssertionResult> {
    serde_json::from_value(json).expect("assertions")
}

/// `evals::capitals::paris` now, as a real run's tree reads: nested groups, scored checks
/// with a threshold, a judge's reasons of a sentence or two, a reason with a long unbroken
/// path and one with a URL, a metric, a budget.
fn assertions_now() -> Vec<niceeval::AssertionResult> {
    assertions(serde_json::json!([
        {"name": "all_of", "kind": "value", "severity": "gate", "score": 0.5, "passed": false,
         "reason": "2 of 4 passed", "children": [
            {"name": "includes(\"Paris\")", "kind": "value", "severity": "gate", "score": 1.0, "passed": true,
             "reason": "found \"Paris\" at 0"},
            {"name": "judge(\"cites a source the reader can check\")", "kind": "judge", "severity": "soft",
             "score": 0.35, "threshold": 0.7, "passed": false,
             "reason": "The reply names the capital correctly but cites no source at all, so a reader cannot check the claim. The rubric asks for a link such as https://www.cia.gov/the-world-factbook/countries/france/#government-and-politics or the title of a reference work."},
            {"name": "similar_to(\"Paris is the capital of France.\")", "kind": "value", "severity": "gate",
             "score": 0.82, "threshold": 0.85, "passed": false,
             "reason": "cosine similarity 0.82 with the reference answer (text-embedding-3-small), below the threshold of 0.85"},
            {"name": "any_of", "kind": "value", "severity": "gate", "score": 1.0, "passed": true,
             "reason": "1 of 2 passed", "children": [
                {"name": "matches(r\"^Paris\\b\")", "kind": "value", "severity": "gate", "score": 1.0, "passed": true,
                 "reason": "matched \"Paris\" at 0..5"},
                {"name": "file_contains(\"answer.txt\", \"Paris\")", "kind": "scoped", "severity": "gate", "score": 0.0, "passed": false,
                 "reason": "/tmp/niceeval/work/evals-capitals-paris-3f9c2a71d0b84e6f/workspace/answer.txt was never written: the agent wrote to a different path"}
             ]}
         ]},
        {"name": "judge(\"answers in one short sentence, without hedging\")", "kind": "judge", "severity": "soft",
         "score": 0.6, "threshold": 0.8, "metric": "concision", "passed": false,
         "reason": "Two sentences where one was asked for; the second restates the file name. Otherwise direct, with no hedging."},
        {"name": "max_tokens(100)", "kind": "efficiency", "severity": "gate", "score": 0.5, "passed": false,
         "reason": "200 tokens, budget 100"}
    ]))
}

/// `evals::capitals::paris` in the earlier run: it passed, with a tree of other rows than
/// now's (a check since removed, none of now's nested group) so that the two sides' rows
/// differ in number and height.
fn assertions_then() -> Vec<niceeval::AssertionResult> {
    assertions(serde_json::json!([
        {"name": "all_of", "kind": "value", "severity": "gate", "score": 1.0, "passed": true,
         "reason": "3 of 3 passed", "children": [
            {"name": "includes(\"Paris\")", "kind": "value", "severity": "gate", "score": 1.0, "passed": true,
             "reason": "found \"Paris\" at 0"},
            {"name": "judge(\"cites a source the reader can check\")", "kind": "judge", "severity": "soft",
             "score": 0.9, "threshold": 0.7, "passed": true,
             "reason": "Cites the CIA World Factbook by name, which a reader can look up; a link would have been better still."},
            {"name": "similar_to(\"Paris is the capital of France.\")", "kind": "value", "severity": "gate",
             "score": 0.91, "threshold": 0.85, "passed": true,
             "reason": "cosine similarity 0.91 with the reference answer (text-embedding-3-small)"}
         ]},
        {"name": "not_includes(\"I think\")", "kind": "value", "severity": "soft", "score": 1.0, "passed": true,
         "reason": "not found"},
        {"name": "max_tokens(100)", "kind": "efficiency", "severity": "gate", "score": 1.0, "passed": true,
         "reason": "64 tokens, budget 100"}
    ]))
}

/// The run now, in the order its evals finished (not by name), and the same evals in an
/// earlier run.
fn runs_now_and_then() -> (Vec<EvalReport>, Vec<EvalReport>) {
    let mut now = Vec::new();
    let mut then = Vec::new();
    let mut rich = super::html::rich_report();
    rich.cost_usd = Some(0.000_042);
    rich.usage.cost_usd = Some(0.000_042);
    rich.assertions = assertions_now();
    let mut rich_then = rich.clone();
    rich_then.outcome = niceeval::Outcome::Passed;
    rich_then.score = Some(1.0);
    rich_then.assertions = assertions_then();
    rich_then.events = vec![
        Event::Message {
            role: Role::User,
            text: "What is the capital of France? Write it to answer.txt.".into(),
        },
        Event::Message {
            role: Role::Assistant,
            text: "Paris (source: the CIA World Factbook). I wrote it to answer.txt.".into(),
        },
    ];
    now.push(rich);
    then.push(rich_then);

    // Passed, 4 of 5; run 3 failed.
    let why = (
        "I am not able to issue refunds; please call support.",
        "includes(\"refund\"): \"refund\" not found in the reply (52 chars)",
    );
    let runs = (1..=5)
        .map(|k| run(k != 3, (k == 3).then_some(why)))
        .collect();
    now.push(runs_eval("evals::support::flaky_refund", runs, 0.8));
    then.push(runs_eval(
        "evals::support::flaky_refund",
        (0..5).map(|_| run(true, None)).collect(),
        0.8,
    ));
    // A pass rate that fell beyond chance: 10 of 10, then 3 of 10.
    let runs = (0..10)
        .map(|k| run(k % 3 == 0, (k % 3 != 0).then_some(why)))
        .collect();
    now.push(runs_eval("evals::support::tone", runs, 0.8));
    then.push(runs_eval(
        "evals::support::tone",
        (0..10).map(|_| run(true, None)).collect(),
        0.8,
    ));

    for test in 1..=3 {
        for prompt in 1..=2 {
            for provider in 1..=2 {
                let passed = (test + prompt + provider) % 4 != 0;
                now.push(suite_case(test, prompt, provider, passed));
                then.push(suite_case(test, prompt, provider, true));
            }
        }
    }
    // Dataset cases that cost little each: $0.0000229, not $0.0000.
    for i in 0..240 {
        let mut case = synthetic::case(i);
        case["cost_usd"] = 0.000_022_9.into();
        case["usage"]["cost_usd"] = 0.000_022_9.into();
        case["total_usage"]["cost_usd"] = 0.000_022_9.into();
        case["runs"][0]["cost_usd"] = 0.000_022_9.into();
        let case: EvalReport = serde_json::from_value(case).expect("a report");
        then.push(case.clone());
        now.push(case);
    }
    // As a concurrent run finishes them: not by name.
    let n = now.len();
    let order: Vec<usize> = (0..n).map(|k| (k * 97 + 13) % n).collect();
    let mut seen = order.clone();
    seen.sort_unstable();
    seen.dedup();
    assert_eq!(seen.len(), n, "a permutation");
    let mut slots: Vec<Option<EvalReport>> = now.into_iter().map(Some).collect();
    let now = order
        .into_iter()
        .map(|k| slots[k].take().expect("once"))
        .collect();
    (now, then)
}

/// The page of the run now, compared with a baseline of the earlier run (kept at a long
/// absolute path) and with the earlier run's reports beside (`niceeval view --baseline
/// --then`).
fn page(dir: &Path) -> PathBuf {
    let (now, then) = runs_now_and_then();
    let path = dir.join("view.html");
    let mut html = Html::new(std::io::BufWriter::new(
        std::fs::File::create(&path).expect("the page's file"),
    ));
    html.on_run_start(&SuiteStart {
        evals: now.iter().map(|r| r.id.clone()).collect(),
        concurrency: 8,
    })
    .expect("start");
    let baseline = Baseline::new(then.iter().map(BaselineEval::of), true, false);
    html.then(then).expect("the earlier run");
    let mut summaries = Vec::new();
    for r in &now {
        html.on_eval_complete(r).expect("eval");
        summaries.push(EvalSummary::from(r));
    }
    let mut suite = SuiteReport::new(summaries, 0, false, 61_000.0);
    let baseline_file = dir.join("baselines/main/2026-11-20/after-the-prompt-change/baseline.json");
    suite.comparison = Some(
        Comparison::new(
            &baseline,
            &suite.baseline_evals(),
            &CompareConfig::default(),
        )
        .from_file(baseline_file.display()),
    );
    html.on_run_complete(&suite).expect("complete");
    path
}

/// Opens the page at `hash` at [`SIZE`], waits until it is painted (and `ready` holds).
fn open(browser: &mut Browser, page: &Path, hash: &str, ready: &str) -> Tab {
    let tab = browser.open_sized(&format!("file://{}{hash}", page.display()), Some(SIZE));
    browser.wait_for(&tab, "document.body && document.body.dataset.ready");
    browser.wait_for(&tab, ready);
    tab
}

fn quiet(browser: &Browser) {
    assert!(
        browser.console.is_empty(),
        "the page logged:\n{}",
        browser.console.join("\n")
    );
}

#[test]
fn every_view_fits_1400_by_900_and_shows_what_it_is_for() {
    let Some(mut browser) = Browser::launch() else {
        return;
    };
    let dir = tempfile::tempdir().expect("a temporary directory");
    let page = page(dir.path());
    // Every view's geometry is checked, and what is wrong said at the end, for all of them.
    let mut wrong = Vec::new();

    // The list: on the first screen with the summary beside it, by name, costs readable,
    // a suite file's cases told apart.
    let tab = open(
        &mut browser,
        &page,
        "",
        "document.querySelector('#rows .row')",
    );
    photograph(&mut browser, &tab, "list");
    wrong.extend(geometry(&mut browser, &tab, "list"));
    let first = browser.eval(
        &tab,
        "document.querySelector('#rows .row').getBoundingClientRect().bottom",
    );
    assert!(
        first.as_f64().expect("a position") < 300.0,
        "the list starts at the top: {first}"
    );
    assert!(
        browser
            .eval(
                &tab,
                "document.querySelector('#detail #summary .changes') !== null"
            )
            .as_bool()
            .expect("a boolean"),
        "the summary, with the comparison's table, is in the detail pane"
    );
    let names = browser.eval(
        &tab,
        "Array.from(document.querySelectorAll('#rows .row'), (r) => r.dataset.id)",
    );
    let names: Vec<String> = serde_json::from_value(names).expect("ids");
    assert_eq!(
        &names[..4],
        [
            "evals::capitals::paris",
            "evals::support::flaky_refund",
            "evals::support::tone",
            "evals::support_tickets::case_000000",
        ],
        "by name, not in the order evals finished"
    );
    let mut sorted = names.clone();
    sorted.sort();
    assert_eq!(names, sorted);
    let costs = browser.eval(
        &tab,
        "Array.from(document.querySelectorAll('#rows .row .v.cost'), (c) => c.textContent)",
    );
    let costs: Vec<String> = serde_json::from_value(costs).expect("texts");
    assert!(costs.contains(&"$0.0000229".to_string()), "{costs:?}");
    assert!(!costs.iter().any(|c| c == "$0.0000"), "{costs:?}");
    // The suite file's cases, filtered: what each row shows of its name (as much of each part
    // as fits: the dataset gives way first, then the test and [prompt, provider] share the
    // rest) reads apart from every other row's.
    browser.eval(&tab, "location.hash = 'ds=suite::promptfooconfig'");
    browser.wait_for(&tab, "document.body.dataset.shown === '12'");
    let seen = browser.eval(
        &tab,
        "Array.from(document.querySelectorAll('#rows .row .n'), (n) => [n.textContent, Array.from(n.querySelectorAll('.p, .l, .t'), (part) => { const [w, full, text] = [part.clientWidth, part.scrollWidth, part.textContent]; return w >= full ? text : text.slice(0, Math.max(0, Math.floor(text.length * w / full) - 1)); })])",
    );
    let seen: Vec<(String, Vec<String>)> = serde_json::from_value(seen).expect("names and parts");
    assert_eq!(seen.len(), 12);
    assert_eq!(
        seen[0].0,
        "suite::promptfooconfig::a question about shipping times to Canada [prompt 1, anthropic:claude-3-5-haiku-latest]"
    );
    let shown: std::collections::BTreeSet<String> =
        seen.iter().map(|(_, parts)| parts[1..].join("")).collect();
    assert_eq!(shown.len(), 12, "rows read the same: {seen:#?}");
    for (name, parts) in &seen {
        assert!(
            parts[1].len() >= 10 && parts[2].starts_with(" [prompt ") && parts[2].len() >= 14,
            "{name} shows {parts:?}"
        );
    }
    photograph(&mut browser, &tab, "suite-file");
    wrong.extend(geometry(&mut browser, &tab, "list of a suite file's cases"));
    browser.eval(&tab, "location.hash = ''");
    browser.wait_for(&tab, "document.body.dataset.shown === '255'");
    browser.eval(
        &tab,
        "document.querySelector('#detail #summary .changes').scrollIntoView()",
    );
    photograph(&mut browser, &tab, "summary");
    wrong.extend(geometry(&mut browser, &tab, "summary"));
    // The summary's plots: the pass rates that changed, with their intervals (the largest
    // first), and the distributions.
    browser.wait_for(&tab, "document.body.dataset.plots === '255'");
    let forest = browser.eval(
        &tab,
        "Array.from(document.querySelectorAll('#detail section.pass-rate-changes g.interval'), (g) => [g.dataset.what, g.getAttribute('class')])",
    );
    let forest: Vec<(String, String)> = serde_json::from_value(forest).expect("rows");
    assert_eq!(
        forest.first(),
        Some(&(
            "evals::support::tone".to_string(),
            "interval worse".to_string()
        )),
        "{forest:?}"
    );
    browser.eval(
        &tab,
        "document.querySelector('#detail section.distributions').scrollIntoView()",
    );
    photograph(&mut browser, &tab, "summary-plots");
    wrong.extend(geometry(&mut browser, &tab, "summary with plots"));
    quiet(&browser);

    // An eval with several runs: which run the details are, and why the failed run failed.
    let tab = open(
        &mut browser,
        &page,
        "#open=evals::support::flaky_refund",
        "document.body.dataset.opened === 'evals::support::flaky_refund'",
    );
    browser.eval(
        &tab,
        "document.querySelector('#detail section.runs').scrollIntoView()",
    );
    photograph(&mut browser, &tab, "runs");
    wrong.extend(geometry(&mut browser, &tab, "eval with several runs"));
    let failed = browser.eval(
        &tab,
        "document.querySelector('#detail table.runs tr[data-run=\"3\"]').textContent",
    );
    let failed = failed.as_str().expect("text");
    assert!(
        failed.starts_with("3failed")
            && failed.contains("\"refund\" not found in the reply (52 chars)")
            && failed.contains("I am not able to issue refunds; please call support."),
        "{failed}"
    );
    assert!(
        browser
            .eval(
                &tab,
                "document.querySelector('#detail table.runs tr[data-run=\"1\"]').textContent"
            )
            .as_str()
            .is_some_and(|t| t.contains("shown below"))
    );
    let titles = browser.eval(
        &tab,
        "Array.from(document.querySelectorAll('#detail section > h3'), (h) => h.textContent)",
    );
    assert!(
        titles
            .as_array()
            .expect("titles")
            .contains(&"Conversation (run 1 of 5)".into()),
        "{titles}"
    );
    quiet(&browser);

    // The matrix: the test column reads as names, the table fits its pane.
    let case = format!(
        "suite::promptfooconfig::{} [prompt 2, {}]",
        TESTS[1], PROVIDERS[0]
    );
    let tab = open(
        &mut browser,
        &page,
        &format!("#view=matrix&open={case}"),
        &format!("document.body.dataset.opened === {case:?}"),
    );
    photograph(&mut browser, &tab, "matrix");
    wrong.extend(geometry(&mut browser, &tab, "matrix"));
    let test_column = browser.eval(
        &tab,
        "document.querySelector('#matrix th.t').getBoundingClientRect().width",
    );
    assert!(
        test_column.as_f64().expect("a width") >= 120.0,
        "{test_column}"
    );
    assert_eq!(
        browser.eval(&tab, "document.querySelectorAll('#matrix td.cell').length"),
        12
    );
    quiet(&browser);

    // The comparison: the statistics with their point estimate; the baseline's path apart.
    let tab = open(
        &mut browser,
        &page,
        "#open=evals::support::tone",
        "document.body.dataset.opened === 'evals::support::tone'",
    );
    browser.eval(
        &tab,
        "document.querySelector('#detail section.compared-with-the-baseline').scrollIntoView()",
    );
    photograph(&mut browser, &tab, "comparison");
    wrong.extend(geometry(&mut browser, &tab, "comparison"));
    let rows = browser.eval(
        &tab,
        "Array.from(document.querySelectorAll('#detail table.then-now tr'), (r) => Array.from(r.children, (c) => c.textContent))",
    );
    let rows: Vec<Vec<String>> = serde_json::from_value(rows).expect("rows");
    assert_eq!(rows[0][1], "then (baseline)");
    assert_eq!(rows[2][0], "pass rate", "{rows:?}");
    assert!(
        rows[2][3].starts_with("difference −0.60, 95% CI ["),
        "{rows:?}"
    );
    // The differences drawn with their intervals: the pass rate's clear of zero, worse.
    let drawn = browser.eval(
        &tab,
        "Array.from(document.querySelectorAll('#detail figure[data-plot=intervals] g.interval'), (g) => [g.dataset.what, g.getAttribute('class'), Number(g.dataset.change), g.dataset.high === undefined ? null : Number(g.dataset.high)])",
    );
    let drawn: Vec<(String, String, f64, Option<f64>)> =
        serde_json::from_value(drawn).expect("rows");
    assert_eq!(drawn[0].0, "pass rate", "{drawn:?}");
    assert_eq!(drawn[0].1, "interval worse", "{drawn:?}");
    assert!(
        (drawn[0].2 + 0.6).abs() < 1e-9 && drawn[0].3.is_some_and(|high| high < 0.0),
        "{drawn:?}"
    );
    assert!(
        browser
            .eval(
                &tab,
                "document.querySelector('#detail .baseline').textContent"
            )
            .as_str()
            .is_some_and(|t| t.ends_with("after-the-prompt-change/baseline.json"))
    );

    // Then and now, beside the earlier run: both assertion trees whole, one above the other.
    let tab = open(
        &mut browser,
        &page,
        "#open=evals::capitals::paris",
        "document.querySelector('#detail .then-and-now[data-loaded]')",
    );
    browser.eval(
        &tab,
        "document.querySelector('#detail section.then-and-now').scrollIntoView()",
    );
    photograph(&mut browser, &tab, "then-and-now");
    wrong.extend(geometry(&mut browser, &tab, "then and now"));
    assert!(
        browser
            .eval(
                &tab,
                "document.getElementById('list').getBoundingClientRect().width > 400"
            )
            .as_bool()
            .expect("a boolean"),
        "the list pane is beside the detail pane"
    );
    // Each side's tree whole: then's 6 rows, now's 9, the threshold column shown.
    let trees = browser.eval(
        &tab,
        "Array.from(document.querySelectorAll('#detail .then-and-now table.tree'), (t) => [t.rows.length - 1, t.rows[0].textContent])",
    );
    assert_eq!(
        trees,
        serde_json::json!([
            [6, "verdictseverityassertionscorethresholdreason"],
            [9, "verdictseverityassertionscorethresholdreason"]
        ])
    );

    // On a wide screen, then and now side by side, neither overlapping the other.
    let wide = browser.open_sized(
        &format!("file://{}#open=evals::capitals::paris", page.display()),
        Some((2560, 1440)),
    );
    browser.wait_for(
        &wide,
        "document.querySelector('#detail .then-and-now[data-loaded]')",
    );
    browser.eval(
        &wide,
        "document.querySelector('#detail section.then-and-now').scrollIntoView()",
    );
    photograph(&mut browser, &wide, "then-and-now-wide");
    wrong.extend(geometry(&mut browser, &wide, "then and now at 2560×1440"));
    let tops = browser.eval(
        &wide,
        "Array.from(document.querySelectorAll('#detail .then-and-now .sides > div'), (d) => d.getBoundingClientRect().top)",
    );
    if tops[0] != tops[1] {
        wrong.push(format!(
            "then and now at 2560×1440: one above the other (tops {tops}), not side by side"
        ));
    }

    // The waterfall: a time axis; tool names as written.
    browser.eval(
        &tab,
        "document.querySelector('#detail section.spans').scrollIntoView()",
    );
    photograph(&mut browser, &tab, "waterfall");
    wrong.extend(geometry(&mut browser, &tab, "waterfall"));
    let ticks = browser.eval(
        &tab,
        "Array.from(document.querySelectorAll('#detail .waterfall .axis .tick'), (t) => t.textContent)",
    );
    assert_eq!(ticks, serde_json::json!(["0", "500ms", "1s", "1.5s"]));
    let who = browser.eval(
        &tab,
        "document.querySelector('#detail .msg.tool .who').innerText",
    );
    assert_eq!(who, "tool call write_file");
    quiet(&browser);
    assert!(
        wrong.is_empty(),
        "at {}×{}:\n{}",
        SIZE.0,
        SIZE.1,
        wrong.join("\n")
    );
}
