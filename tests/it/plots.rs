//! The viewer's plots in headless Chromium: a run's distributions (score, time, cost, tokens)
//! counted right bar by bar, over the rows the filters keep, with a log scale where values
//! span decades and sensible with no value or one; and the trends of the run history — 20 runs
//! of the fixture suite `trend` through the real suite runner and recorder, one eval
//! regressing at run 12: its trend is marked there and nowhere else, naming the commit, and
//! the suite's pass rate too; the home view with its plots and an eval's detail with its
//! trends fit 1400×900 (the geometry of `views.rs`).

use std::path::Path;

use niceeval_tests::chromium::{Browser, Tab};
use niceeval_tests::fixture::Fixtures;
use niceeval_tests::synthetic;

use super::views::{geometry, photograph};

const SIZE: (u32, u32) = (1400, 900);

fn open(browser: &mut Browser, page: &Path, hash: &str) -> Tab {
    let tab = browser.open_sized(&format!("file://{}{hash}", page.display()), Some(SIZE));
    browser.wait_for(&tab, "document.body && document.body.dataset.ready");
    tab
}

fn quiet(browser: &Browser) {
    assert!(
        browser.console.is_empty(),
        "the page logged:\n{}",
        browser.console.join("\n")
    );
}

/// Each bar of the distribution `plot`: `(low, high, count, last)`.
fn bars(browser: &mut Browser, tab: &Tab, plot: &str) -> Vec<(f64, f64, u64, bool)> {
    let js = format!(
        "Array.from(document.querySelectorAll('#detail figure[data-plot={plot}] rect.bar'), (b) => [Number(b.dataset.lo), Number(b.dataset.hi), Number(b.dataset.count), b.dataset.last === '1'])"
    );
    serde_json::from_value(browser.eval(tab, &js)).expect("bars")
}

/// Checks that the bars of `plot` count `values` (each in `[low, high)`, the last bin closed),
/// all of them.
fn counted_right(browser: &mut Browser, tab: &Tab, plot: &str, values: &[f64]) {
    let bars = bars(browser, tab, plot);
    assert!(!bars.is_empty() && bars.len() <= 30, "{plot}: {bars:?}");
    let mut total = 0;
    for (low, high, count, last) in &bars {
        let expected = values
            .iter()
            .filter(|v| **v >= *low && (**v < *high || (*last && **v <= *high)))
            .count() as u64;
        assert_eq!(*count, expected, "{plot}: the bar {low}..{high}");
        total += count;
    }
    assert_eq!(total, values.len() as u64, "{plot}: every value in a bar");
    let n = browser.eval(
        tab,
        &format!("document.querySelector('#detail figure[data-plot={plot}]').dataset.n"),
    );
    assert_eq!(n, values.len().to_string(), "{plot}");
}

#[test]
fn distributions_count_a_known_run_bar_by_bar_and_follow_the_filters() {
    let Some(mut browser) = Browser::launch() else {
        return;
    };
    let dir = tempfile::tempdir().expect("a temporary directory");
    let page = super::html::synthetic_page(dir.path(), 1000);
    let cases: Vec<serde_json::Value> = (0..1000).map(synthetic::case).collect();
    let values = |keep: &dyn Fn(&serde_json::Value) -> bool,
                  field: &dyn Fn(&serde_json::Value) -> Option<f64>|
     -> Vec<f64> { cases.iter().filter(|c| keep(c)).filter_map(field).collect() };
    let score = |c: &serde_json::Value| c["score"].as_f64();
    let duration =
        |c: &serde_json::Value| c["duration_ms"].as_f64().map(|d| (d * 10.0).round() / 10.0);
    let cost = |c: &serde_json::Value| c["cost_usd"].as_f64();
    let tokens = |c: &serde_json::Value| {
        Some((c["usage"]["input_tokens"].as_u64()? + c["usage"]["output_tokens"].as_u64()?) as f64)
    };

    let tab = open(&mut browser, &page, "");
    browser.wait_for(&tab, "document.body.dataset.plots === '1000'");
    let all = |_: &serde_json::Value| true;
    counted_right(&mut browser, &tab, "score", &values(&all, &score));
    counted_right(&mut browser, &tab, "duration", &values(&all, &duration));
    counted_right(&mut browser, &tab, "cost", &values(&all, &cost));
    counted_right(&mut browser, &tab, "tokens", &values(&all, &tokens));
    // The score's bins are tenths of [0, 1].
    let score_bars = bars(&mut browser, &tab, "score");
    assert_eq!(score_bars.len(), 10);
    for (k, (low, _, _, _)) in score_bars.iter().enumerate() {
        assert!((low - k as f64 / 10.0).abs() < 1e-12, "{score_bars:?}");
    }
    // Axis labels and counts: the tallest bar's count on the y axis, the caption's median.
    let text = browser.eval(
        &tab,
        "document.querySelector('#detail figure[data-plot=score]').textContent",
    );
    let text = text.as_str().expect("text");
    assert!(text.contains("980 evals · median"), "{text}");
    photograph(&mut browser, &tab, "distributions");

    // The failures only: the plots are of the rows the filters keep.
    browser.eval(&tab, "location.hash = 'o=failed'");
    browser.wait_for(&tab, "document.body.dataset.plots === '100'");
    let failed = |c: &serde_json::Value| c["outcome"] == "failed";
    counted_right(&mut browser, &tab, "score", &values(&failed, &score));
    counted_right(&mut browser, &tab, "duration", &values(&failed, &duration));

    // Values over decades: a log scale, values at 0 counted apart; no value; one value.
    let log = browser.eval(
        &tab,
        "(() => { const b = NiceevalPlots.bins([0, 0, 1, 10, 100, 1000, 10000, 99999], {log: 'auto'}); return [b.log, b.zeros, b.counts.reduce((a, c) => a + c, 0), b.counts.length]; })()",
    );
    assert_eq!(log, serde_json::json!([true, 2, 6, 3]));
    let edges = browser.eval(
        &tab,
        "NiceevalPlots.bins([1, 1000], {log: 'auto', bins: 3}).edges.map((e) => Math.round(e))",
    );
    assert_eq!(edges, serde_json::json!([1, 10, 100, 1000]));
    let empty = browser.eval(
        &tab,
        "(() => { const f = NiceevalPlots.histogram('x', 'x', new Float64Array(0)); return [f.dataset.n, f.querySelectorAll('rect').length, f.textContent]; })()",
    );
    assert_eq!(empty, serde_json::json!(["0", 0, "xno values"]));
    let one = browser.eval(
        &tab,
        "(() => { const f = NiceevalPlots.histogram('x', 'x', Float64Array.of(42)); return Array.from(f.querySelectorAll('rect.bar'), (b) => b.dataset.count); })()",
    );
    assert_eq!(one, serde_json::json!(["1"]));
    // 100,000 values: bins, not an element each.
    let many = browser.eval(
        &tab,
        "(() => { const v = new Float64Array(100000); for (let i = 0; i < v.length; i++) v[i] = 1 + (i * 7919) % 100000; const f = NiceevalPlots.histogram('x', 'x', v, null, {log: 'auto'}); return [f.querySelectorAll('rect.bar').length, f.dataset.log, Array.from(f.querySelectorAll('rect.bar'), (b) => Number(b.dataset.count)).reduce((a, c) => a + c, 0)]; })()",
    );
    assert_eq!(many, serde_json::json!([30, "true", 100000]));
    quiet(&browser);
}

/// The commit run `n` was built from (`NICEEVAL_COMMIT`, as CI's `GITHUB_SHA`): its short
/// form starts with the run's number.
fn commit(n: usize) -> String {
    format!("{n:02}c0ffee{}", "ab".repeat(16))
}

#[test]
fn twenty_runs_regressing_at_run_12_are_marked_there_with_the_commit_and_fit_the_pane() {
    let Some(mut browser) = Browser::launch() else {
        return;
    };
    let dir = tempfile::tempdir().expect("a temporary directory");
    let history = dir.path().join("history.sqlite");
    let results = dir.path().join("results");
    let page = dir.path().join("trend.html");
    let fixtures = Fixtures::get();
    for n in 1..=20 {
        let run = n.to_string();
        let commit = commit(n);
        let mut args = vec!["-q"];
        if n == 20 {
            args.extend(["--html", page.to_str().expect("UTF-8")]);
        }
        let out = fixtures.run(
            "suite",
            "trend",
            &args,
            &[
                ("FIXTURE_RUN", run.as_str()),
                ("NICEEVAL_COMMIT", commit.as_str()),
                ("NICEEVAL_HISTORY", history.to_str().expect("UTF-8")),
                ("NICEEVAL_RESULTS_DIR", results.to_str().expect("UTF-8")),
            ],
        );
        let expected = if n < 12 { 0 } else { 101 };
        assert_eq!(out.code(), Some(expected), "run {n}\n{}", out.dump());
    }
    let mut wrong = Vec::new();

    // Home: the distributions and the suite's pass rate, marked at run 12.
    let tab = open(&mut browser, &page, "");
    browser.wait_for(&tab, "document.body.dataset.suiteTrend === '1'");
    browser.wait_for(&tab, "document.body.dataset.plots === '3'");
    let suite_marks = browser.eval(
        &tab,
        "Array.from(document.querySelectorAll('#detail section.suite-trend figure[data-plot=suite-pass-rate] circle[data-mark]'), (c) => Number(c.dataset.run))",
    );
    assert_eq!(suite_marks, serde_json::json!([12]));
    let points = browser.eval(
        &tab,
        "document.querySelectorAll('#detail figure[data-plot=suite-pass-rate] circle').length",
    );
    assert_eq!(points, 20);
    photograph(&mut browser, &tab, "home-plots");
    wrong.extend(geometry(&mut browser, &tab, "home with plots"));
    browser.eval(
        &tab,
        "document.querySelector('#detail section.suite-trend').scrollIntoView()",
    );
    wrong.extend(geometry(&mut browser, &tab, "home, the suite's trend"));
    quiet(&browser);

    // The regressing eval: its trend marked at run 12 only, in every plot, naming the commit.
    let tab = open(&mut browser, &page, "#open=trend::evals::refund");
    browser.wait_for(
        &tab,
        "document.body.dataset.opened === 'trend::evals::refund'",
    );
    browser.wait_for(
        &tab,
        "document.querySelector('#detail section.across-runs[data-loaded=\"20\"]')",
    );
    let marks = browser.eval(
        &tab,
        "Array.from(document.querySelectorAll('#detail section.across-runs figure'), (f) => [f.dataset.plot, f.querySelectorAll('circle').length, Array.from(f.querySelectorAll('circle[data-mark]'), (c) => Number(c.dataset.run))])",
    );
    let marks: Vec<(String, u64, Vec<u64>)> = serde_json::from_value(marks).expect("plots");
    let pass_rate = marks
        .iter()
        .find(|(plot, _, _)| plot == "trend-pass-rate")
        .expect("a pass-rate trend");
    assert_eq!((pass_rate.1, &pass_rate.2), (20, &vec![12]), "{marks:?}");
    for (plot, _, marked) in &marks {
        assert!(marked.iter().all(|run| *run == 12), "{plot}: {marks:?}");
    }
    assert!(
        marks.iter().any(|(plot, _, _)| plot == "trend-cost")
            && marks.iter().any(|(plot, _, _)| plot == "trend-tokens"),
        "{marks:?}"
    );
    let changes = browser.eval(
        &tab,
        "Array.from(document.querySelectorAll('#detail section.across-runs ul.history-changes li'), (li) => [li.dataset.run, li.textContent])",
    );
    let changes: Vec<(String, String)> = serde_json::from_value(changes).expect("changes");
    assert_eq!(changes.len(), 1, "{changes:?}");
    assert_eq!(changes[0].0, "12");
    assert!(
        changes[0]
            .1
            .starts_with(&format!("run 12 of 20, commit {}", &commit(12)[..12]))
            && changes[0].1.contains("pass rate fell 1.00 → 0.00"),
        "{changes:?}"
    );
    let commit_label = browser.eval(
        &tab,
        "document.querySelector('#detail figure[data-plot=trend-pass-rate] text.commit').textContent",
    );
    assert_eq!(commit_label, &commit(12)[..7]);
    let hover = browser.eval(
        &tab,
        "document.querySelector('#detail figure[data-plot=trend-pass-rate] circle[data-mark] title').textContent",
    );
    assert!(
        hover.as_str().is_some_and(|t| t.starts_with("#12 · ")
            && t.contains(&commit(12)[..7])
            && t.contains("failed")),
        "{hover}"
    );
    browser.eval(
        &tab,
        "document.querySelector('#detail section.across-runs').scrollIntoView()",
    );
    photograph(&mut browser, &tab, "trends");
    wrong.extend(geometry(&mut browser, &tab, "an eval's trends"));
    quiet(&browser);

    // The steady eval: 20 points, no mark.
    let tab = open(&mut browser, &page, "#open=trend::evals::steady");
    browser.wait_for(
        &tab,
        "document.querySelector('#detail section.across-runs[data-loaded=\"20\"]')",
    );
    assert_eq!(
        browser.eval(
            &tab,
            "document.querySelectorAll('#detail section.across-runs circle[data-mark]').length"
        ),
        0
    );
    assert!(
        browser
            .eval(
                &tab,
                "document.querySelector('#detail section.across-runs .no-change').textContent"
            )
            .as_str()
            .is_some_and(|t| t.contains("no change beyond chance over these 20 runs"))
    );
    quiet(&browser);

    // The same runs served (`niceeval view`): the page asks `/api/history` for the eval's
    // trend, marked at run 12 only.
    let server =
        super::served::Server::start_with(dir.path(), &results, &[("NICEEVAL_HISTORY", &history)]);
    let tab = browser.open_sized(
        &format!("{}#open=trend::evals::refund", server.url()),
        Some(SIZE),
    );
    browser.wait_for(&tab, "document.body && document.body.dataset.ready");
    browser.wait_for(
        &tab,
        "document.querySelector('#detail section.across-runs[data-loaded=\"20\"]')",
    );
    let served = browser.eval(
        &tab,
        "Array.from(document.querySelectorAll('#detail section.across-runs figure[data-plot=trend-pass-rate] circle[data-mark]'), (c) => Number(c.dataset.run))",
    );
    assert_eq!(served, serde_json::json!([12]), "served");
    let label = browser.eval(
        &tab,
        "document.querySelector('#detail figure[data-plot=trend-pass-rate] text.commit').textContent",
    );
    assert_eq!(label, &commit(12)[..7], "served");
    wrong.extend(geometry(&mut browser, &tab, "an eval's trends, served"));
    quiet(&browser);
    assert!(
        wrong.is_empty(),
        "at {}×{}:\n{}",
        SIZE.0,
        SIZE.1,
        wrong.join("\n")
    );
}
