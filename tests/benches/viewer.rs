//! The HTML viewer at scale, in real headless Chromium (`scripts/install-chromium.sh`):
//! writes the page of a run of `VIEWER_CASES` synthetic dataset cases (default 100,000)
//! through the `--html` reporter, then prints the file's size, the time to write it, the time
//! the page takes to open (summary and first rows painted, the page's own `performance.now()`
//! from navigation start, median of three fresh tabs), when the distributions were drawn after
//! it (`data-plots-ms`), and the time filtering and sorting all rows take (the page's own
//! measure of one `apply`).
//!
//! `VIEWER_KEEP=FILE` keeps a copy of the page. `VIEWER_SCRAMBLED=1` writes the cases in a
//! scrambled order (case `k × 7919 mod n` finishes `k`-th, as a concurrent run finishes them),
//! so the list's sort by name has work to do. `VIEWER_OPEN=FILE` writes nothing and measures
//! that page instead (two versions of the viewer on one page: keep it, swap the script).
//!
//! `cargo bench -p niceeval-tests --bench viewer` (targets: open < 2 s, file < 30 MB, filter
//! or sort < 100 ms).

use std::time::Instant;

use niceeval::__workspace::reporter::Html;
use niceeval::EvalReport;
use niceeval::reporter::{EvalSummary, Reporter, SuiteReport, SuiteStart};
use niceeval_tests::chromium::Browser;
use niceeval_tests::synthetic;

fn main() {
    let cases: usize = std::env::var("VIEWER_CASES")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(100_000);
    let dir = tempfile::tempdir().expect("a temporary directory");
    let page = match std::env::var_os("VIEWER_OPEN") {
        Some(page) => std::path::PathBuf::from(page),
        None => write(cases, &dir.path().join("viewer.html")),
    };
    open(cases, &page);
}

/// Writes the page of `cases` synthetic cases at `page`, saying how long it took and how large
/// it is.
fn write(cases: usize, page: &std::path::Path) -> std::path::PathBuf {
    let scrambled = std::env::var_os("VIEWER_SCRAMBLED").is_some();
    assert!(
        !cases.is_multiple_of(7919),
        "7919 is prime: a permutation of the cases"
    );
    let case = |k: usize| if scrambled { (k * 7919) % cases } else { k };
    let started = Instant::now();
    let mut html = Html::new(std::io::BufWriter::new(
        std::fs::File::create(page).expect("the page's file"),
    ));
    let ids: Vec<String> = (0..cases)
        .map(|k| format!("{}::case_{:06}", synthetic::DATASET, case(k)))
        .collect();
    html.on_run_start(&SuiteStart {
        evals: ids.into(),
        concurrency: 8,
    })
    .expect("start");
    let mut summaries = Vec::with_capacity(cases);
    let mut making = std::time::Duration::ZERO;
    for k in 0..cases {
        let made = Instant::now();
        let report: EvalReport =
            serde_json::from_value(synthetic::case(case(k))).expect("a report");
        making += made.elapsed();
        html.on_eval_complete(&report).expect("written");
        summaries.push(EvalSummary::from(&report));
    }
    html.on_run_complete(&SuiteReport::new(summaries, 0, false, 1.0))
        .expect("written");
    let writing = started.elapsed() - making;
    let size = std::fs::metadata(page).expect("the page").len();
    // The process's peak memory: the reports were made one at a time and dropped; what stays
    // is one summary per eval (the suite's) and the reporter's compressed rows.
    let peak = std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("VmHWM:").map(|v| v.trim().to_string()))
        })
        .unwrap_or_else(|| "unknown".to_string());
    println!(
        "viewer: {cases} cases{}, page {:.1} MB, written in {:.2} s (reporter only), peak RSS {peak}",
        if scrambled { " (scrambled)" } else { "" },
        size as f64 / 1e6,
        writing.as_secs_f64()
    );

    if let Some(keep) = std::env::var_os("VIEWER_KEEP") {
        std::fs::copy(page, &keep).expect("the page copied to VIEWER_KEEP");
    }
    page.to_path_buf()
}

/// Opens `page` (of `cases` rows) three times, then filters and sorts it, saying how long each
/// took by the page's own measure.
fn open(cases: usize, page: &std::path::Path) {
    let mut browser =
        Browser::launch().expect("the benchmark needs Chromium: run scripts/install-chromium.sh");
    let url = format!("file://{}", page.display());
    let mut loads = Vec::new();
    let mut tab = None;
    for _ in 0..3 {
        let t = browser.open(&url);
        let ready = browser.wait_for(&t, "document.body && document.body.dataset.ready");
        loads.push(
            ready
                .as_str()
                .and_then(|s| s.parse::<f64>().ok())
                .expect("a time"),
        );
        tab = Some(t);
    }
    loads.sort_by(f64::total_cmp);
    println!(
        "viewer: opened (summary and first rows painted) in {:.0} ms (median of {:?})",
        loads[1], loads
    );
    let tab = tab.expect("a tab");
    // The distributions are drawn after the first paint; when (a page without them says so).
    let plots = browser.wait_for(
        &tab,
        "new Promise((done) => setTimeout(() => done(document.body.dataset.plotsMs || 'none'), 3000))",
    );
    println!("viewer: distributions drawn at {plots} ms");
    let rendered = browser.eval(&tab, "document.body.dataset.rendered");
    assert_eq!(rendered, cases.to_string(), "every row is in the list");
    for (what, hash) in [
        ("filter by outcome", "o=failed"),
        ("filter by tag and outcome", "tag=refund&o=passed"),
        ("filter by text", "q=approved"),
        ("filter by regex", "q=/order %2399[0-9]%2B/"),
        ("sort by score", "sort=-score"),
        ("sort by duration", "sort=duration"),
        ("sort by cost", "sort=-cost"),
        ("filter and sort", "o=failed&sort=-tokens"),
    ] {
        let mut times = Vec::new();
        for round in 0..3 {
            // A different hash each round, so each one is applied.
            let value = browser.eval(
                &tab,
                &format!(
                    "new Promise((done) => {{ location.hash = '{hash}' + '&r={round}'; setTimeout(() => done([document.body.dataset.applyMs, document.body.dataset.shown]), 50); }})"
                ),
            );
            let ms: f64 = value[0]
                .as_str()
                .and_then(|s| s.parse().ok())
                .expect("a time");
            times.push((ms, value[1].clone()));
        }
        times.sort_by(|a, b| a.0.total_cmp(&b.0));
        println!(
            "viewer: {what} ({hash}): {:.1} ms, {} rows shown",
            times[1].0, times[1].1
        );
    }
    assert!(
        browser.console.is_empty(),
        "the page logged:\n{}",
        browser.console.join("\n")
    );
}
