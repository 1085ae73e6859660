//! Comparing runs with a baseline, on two real runs of the fixture suite `suite/tests/compare.rs`
//! whose agent changes between them (`FIXTURE_COMPARE=after`): one eval fixed, one broken, one
//! still failing, a metric down, a flaky eval of 20 runs whose pass rate drops beyond chance,
//! another whose drop is noise, a dataset case broken, a new eval. Checks each classification
//! and its statistics, byte-stable baselines, the exit code of each `[compare] fail_on` policy,
//! `--rerun-failed`, and the Markdown and HTML reports (insta snapshots; the HTML page in
//! headless Chromium).

use std::path::{Path, PathBuf};
use std::process::Command;

use niceeval_tests::child::{self, Output};
use niceeval_tests::fixture::{Fixtures, RUN_DEADLINE};

/// Runs the compare suite as version `phase` (`before` or `after`), its results going to
/// `results`.
fn suite(results: &Path, phase: &str, args: &[&str]) -> Output {
    Fixtures::get().run(
        "suite",
        "compare",
        args,
        &[
            ("NICEEVAL_RESULTS_DIR", results.to_str().expect("UTF-8")),
            ("FIXTURE_COMPARE", phase),
        ],
    )
}

/// A temporary directory and the paths the tests use in it.
struct Dir(tempfile::TempDir);

impl Dir {
    fn new() -> Self {
        Dir(tempfile::tempdir().expect("a temporary directory"))
    }

    fn path(&self, name: &str) -> PathBuf {
        self.0.path().join(name)
    }

    fn arg(&self, name: &str) -> String {
        self.path(name).to_str().expect("UTF-8").to_string()
    }
}

/// The first version's baseline, saved without `evals::added` (so it is new in the second).
fn save_baseline(dir: &Dir, name: &str) -> String {
    let out = suite(
        &dir.path("results-before"),
        "before",
        &["-q", "--skip", "added", "--save-baseline", &dir.arg(name)],
    );
    assert_eq!(
        out.code(),
        Some(101),
        "fixed and still_failing fail\n{}",
        out.dump()
    );
    assert!(
        out.stderr.contains(&format!(
            "saved the baseline of 10 eval(s) to {}",
            dir.arg(name)
        )),
        "{}",
        out.dump()
    );
    std::fs::read_to_string(dir.path(name)).expect("the baseline is written")
}

#[test]
fn baselines_are_sorted_stable_and_hold_no_timing_paths_or_costs() {
    let dir = Dir::new();
    let first = save_baseline(&dir, "baseline.json");
    let second = save_baseline(&dir, "again.json");
    assert_eq!(
        first, second,
        "two runs of the same suite give the same bytes"
    );
    // Saving over an unchanged file leaves it as it was.
    let modified = std::fs::metadata(dir.path("baseline.json"))
        .and_then(|m| m.modified())
        .expect("mtime");
    save_baseline(&dir, "baseline.json");
    let after = std::fs::metadata(dir.path("baseline.json"))
        .and_then(|m| m.modified())
        .expect("mtime");
    assert_eq!(modified, after, "an unchanged baseline is not rewritten");

    for absent in ["duration", "_ms", "cost", "started", "tmp", "/", "2026-"] {
        assert!(
            !first.replace("\"compare\"", "").contains(absent),
            "{absent:?} in the baseline:\n{first}"
        );
    }
    let baseline: serde_json::Value = serde_json::from_str(&first).expect("JSON");
    let evals = baseline["evals"].as_array().expect("a list");
    let ids: Vec<&str> = evals.iter().filter_map(|e| e["id"].as_str()).collect();
    let mut sorted = ids.clone();
    sorted.sort_unstable();
    assert_eq!(ids, sorted);
    assert_eq!(ids.len(), 10);
    assert!(!ids.contains(&"compare::evals::added"));
    let flaky = &evals[ids
        .iter()
        .position(|i| *i == "compare::evals::flaky")
        .unwrap()];
    assert_eq!(
        (flaky["runs"].as_u64(), flaky["passed"].as_u64()),
        (Some(20), Some(18))
    );
    assert_eq!(flaky["pass_rate"].as_f64(), Some(0.9));
    assert_eq!(flaky["target"].as_str(), Some("compare"));
    let metric = &evals[ids
        .iter()
        .position(|i| *i == "compare::evals::metric")
        .unwrap()];
    assert_eq!(metric["metrics"]["accuracy"].as_f64(), Some(0.9));
    let lima = &evals[ids
        .iter()
        .position(|i| *i == "compare::evals::capitals::lima")
        .unwrap()];
    assert_eq!(lima["dataset"].as_str(), Some("compare::evals::capitals"));
}

/// The console's comparison block: from `compared with baseline` to the result line.
fn comparison_block(stdout: &str) -> Vec<&str> {
    stdout
        .lines()
        .skip_while(|l| !l.starts_with("compared with baseline"))
        .take_while(|l| !l.starts_with("test result:"))
        .filter(|l| !l.is_empty())
        .collect()
}

#[test]
fn a_changed_agent_is_compared_with_its_baseline_in_every_report() {
    let dir = Dir::new();
    save_baseline(&dir, "baseline.json");
    let out = suite(
        &dir.path("results-after"),
        "after",
        &[
            "--baseline",
            &dir.arg("baseline.json"),
            "--markdown",
            &dir.arg("after.md"),
            "--html",
            &dir.arg("after.html"),
        ],
    );
    assert_eq!(
        out.code(),
        Some(101),
        "failed evals win over 3\n{}",
        out.dump()
    );
    let block = comparison_block(&out.stdout);
    let path = dir.arg("baseline.json");
    assert_eq!(
        block,
        [
            format!("compared with baseline {path}: 2 broke, 2 worse, 1 still failing, 1 new, 1 fixed, 4 unchanged").as_str(),
            "    new            evals::added",
            "    broke          evals::broken — failed: includes(\"refund\"); score 1.00 → 0.00 (−1.00)",
            "    broke          evals::capitals::lima — failed: includes(\"Lima\"); score 1.00 → 0.00 (−1.00)",
            "    fixed          evals::fixed — score 0.00 → 1.00 (+1.00)",
            // Its score is each run's pass/fail: the pass rate, said and tested once.
            "    worse          evals::flaky — pass rate 0.90 → 0.30 (−0.60, 95% CI [−0.77, −0.30], p = 0.0002)",
            "    worse          evals::metric — score 0.90 → 0.60 (−0.30); accuracy 0.90 → 0.60 (−0.30)",
            "    still failing  evals::still_failing — failed: includes(\"refund\")",
            "    dataset evals::capitals: 3 of 3 → 2 of 3 cases passed, mean score 1.00 → 0.67 (−0.33); 1 broke",
            "REGRESSION: 4 (fail_on: broken-gate, pass-rate-drop, metric-drop):",
            "    broken-gate evals::broken: passed in the baseline, fails now (includes(\"refund\") failed)",
            "    broken-gate evals::capitals::lima: passed in the baseline, fails now (includes(\"Lima\") failed)",
            "    pass-rate-drop evals::flaky: pass rate fell beyond chance: 0.90 → 0.30 (−0.60, 95% CI [−0.77, −0.30], p = 0.0002)",
            "    metric-drop evals::metric: fell by more than 0.05: score 0.90 → 0.60 (−0.30); accuracy 0.90 → 0.60 (−0.30)",
        ],
        "{}",
        out.dump()
    );
    // The noisy eval (16/20 → 14/20, Fisher p = 0.72) is unchanged: not worse, not listed.
    assert!(!block.iter().any(|l| l.contains("noisy")), "{block:#?}");
    // Flaky evals are listed apart, with their interval, in every report.
    assert!(
        out.stdout.contains(
            "flaky: 2 eval(s) whose runs disagree:\n    evals::flaky: 6 of 20 runs passed, pass rate 0.30, 95% CI [0.15, 0.52]\n    evals::noisy: 14 of 20 runs passed, pass rate 0.70, 95% CI [0.48, 0.85]\n"
        ),
        "{}",
        out.dump()
    );

    let markdown = redact(
        &std::fs::read_to_string(dir.path("after.md")).expect("markdown written"),
        &path,
    );
    insta::assert_snapshot!("comparison_markdown", markdown);

    let html = std::fs::read_to_string(dir.path("after.html")).expect("html written");
    let summary = html
        .split_once("<section id=\"summary\">")
        .and_then(|(_, rest)| rest.split_once("<div class=\"charts\">"))
        .map(|(summary, _)| summary)
        .expect("the summary and the comparison");
    insta::assert_snapshot!(
        "comparison_html",
        redact(summary, &path).replace("</tr>", "</tr>\n")
    );
    browser_check(&dir.path("after.html"));
}

/// Durations (`0.12s`) and the temporary baseline path out.
fn redact(text: &str, baseline: &str) -> String {
    let text = text.replace(baseline, "[baseline]");
    let mut out = String::with_capacity(text.len());
    let mut rest = text.as_str();
    while let Some(at) = rest.find(|c: char| c.is_ascii_digit()) {
        out.push_str(&rest[..at]);
        rest = &rest[at..];
        let digits = rest
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(rest.len());
        let tail = &rest[digits..];
        let is_time = tail.len() >= 4
            && tail.as_bytes()[0] == b'.'
            && tail.as_bytes()[1..3].iter().all(u8::is_ascii_digit)
            && tail.as_bytes()[3] == b's'
            && !tail
                .as_bytes()
                .get(4)
                .is_some_and(u8::is_ascii_alphanumeric);
        let preceded = out
            .chars()
            .last()
            .is_some_and(|c| c.is_ascii_alphanumeric() || c == '.');
        if is_time && !preceded {
            out.push_str("[time]");
            rest = &tail[4..];
        } else {
            out.push_str(&rest[..digits]);
            rest = tail;
        }
    }
    out.push_str(rest);
    out
}

/// The page in headless Chromium: nothing logged to the console, every eval in the list with
/// its change since the baseline; opened at `#changed-only` (the old link) or `#change=changed`,
/// only what changed; a changed eval's details show then and now with the comparison's
/// statistics.
fn browser_check(page: &Path) {
    use niceeval_tests::chromium::Browser;
    let Some(mut browser) = Browser::launch() else {
        return;
    };
    let url = format!("file://{}", page.display());
    let tab = browser.open(&url);
    browser.wait_for(&tab, "document.body && document.body.dataset.ready");
    assert_eq!(browser.eval(&tab, "document.body.dataset.shown"), "11");
    let changes = browser.eval(
        &tab,
        "Object.fromEntries(Array.from(document.querySelectorAll('#rows .row'), (r) => [r.dataset.id, r.querySelector('.c').textContent]))",
    );
    assert_eq!(changes["compare::evals::broken"], "broke", "{changes}");
    assert_eq!(changes["compare::evals::fixed"], "fixed", "{changes}");
    assert_eq!(changes["compare::evals::steady"], "unchanged", "{changes}");

    for hash in ["#changed-only", "#change=changed"] {
        let tab = browser.open(&format!("{url}{hash}"));
        browser.wait_for(&tab, "document.body && document.body.dataset.ready");
        let shown = browser.eval(
            &tab,
            "Array.from(document.querySelectorAll('#rows .row'), (r) => r.dataset.id).sort()",
        );
        assert_eq!(
            shown,
            serde_json::json!([
                "compare::evals::added",
                "compare::evals::broken",
                "compare::evals::capitals::lima",
                "compare::evals::fixed",
                "compare::evals::flaky",
                "compare::evals::metric",
                "compare::evals::still_failing"
            ]),
            "steady, noisy and two capitals are hidden"
        );
    }

    // Then and now: the outcome and score of the broken eval, and its reply now.
    browser.eval(&tab, "location.hash = 'open=compare::evals::broken'");
    browser.wait_for(
        &tab,
        "document.body.dataset.opened === 'compare::evals::broken'",
    );
    let rows = browser.eval(
        &tab,
        "Array.from(document.querySelectorAll('#detail table.then-now tr'), (r) => Array.from(r.children, (c) => c.textContent))",
    );
    let rows: Vec<Vec<String>> = serde_json::from_value(rows).expect("rows");
    assert!(rows[0][1].starts_with("then (baseline"), "{rows:?}");
    assert_eq!(rows[1][..3], ["outcome", "passed", "failed"], "{rows:?}");
    assert_eq!(rows[2][..3], ["score", "1.00", "0.00"], "{rows:?}");
    let now = browser.eval(
        &tab,
        "document.querySelector('#detail .sides .now').textContent",
    );
    assert!(
        now.as_str()
            .is_some_and(|n| n.contains("includes(\"refund\")")),
        "{now}"
    );
    // The flaky eval's pass rates, with Fisher's exact test.
    browser.eval(&tab, "location.hash = 'open=compare::evals::flaky'");
    browser.wait_for(
        &tab,
        "document.body.dataset.opened === 'compare::evals::flaky'",
    );
    let stats = browser.eval(
        &tab,
        "document.querySelector('#detail table.then-now').textContent",
    );
    assert!(
        stats
            .as_str()
            .is_some_and(|s| s.contains("0.90 (18 of 20") && s.contains("p = 0.0002")),
        "{stats}"
    );
    assert!(browser.console.is_empty(), "{}", browser.console.join("\n"));
}

/// Runs `niceeval ARGS` in `cwd` (where it looks for niceeval.toml).
fn cli(cwd: &Path, args: &[&str]) -> Output {
    let mut command = Command::new(Fixtures::get().niceeval_cli());
    child::clean_env(&mut command).current_dir(cwd).args(args);
    child::run(&mut command, RUN_DEADLINE)
}

#[test]
fn each_policy_decides_the_exit_code() {
    let dir = Dir::new();
    save_baseline(&dir, "baseline.json");
    let baseline = dir.arg("baseline.json");
    // The second version without the evals that fail: what is left passes, so only the
    // comparison can fail the run.
    let passing = dir.path("passing");
    let out = suite(
        &passing,
        "after",
        &[
            "-q",
            "--skip",
            "broken",
            "--skip",
            "still_failing",
            "--skip",
            "capitals",
        ],
    );
    assert_eq!(out.code(), Some(0), "{}", out.dump());
    let passing = passing.to_str().expect("UTF-8").to_string();

    let policy = |toml: Option<&str>| -> (Option<i32>, Output) {
        let cwd = tempfile::tempdir().expect("a temporary directory");
        if let Some(toml) = toml {
            std::fs::write(cwd.path().join("niceeval.toml"), toml).expect("writable");
        }
        let out = cli(cwd.path(), &["compare", &baseline, &passing, "--quiet"]);
        (out.code(), out)
    };
    let cases: &[(Option<&str>, i32, &[&str])] = &[
        (
            None,
            3,
            &["pass-rate-drop evals::flaky", "metric-drop evals::metric"],
        ),
        (
            Some("[compare]\nfail_on = []\n"),
            0,
            &["no regression (fail_on: nothing"],
        ),
        (
            Some("[compare]\nfail_on = [\"pass-rate-drop\"]\n"),
            3,
            &["REGRESSION: 1 (fail_on: pass-rate-drop)"],
        ),
        // p = 0.000244 is not below 0.0001.
        (
            Some("[compare]\nfail_on = [\"pass-rate-drop\"]\nalpha = 0.0001\n"),
            0,
            &["no regression"],
        ),
        (
            Some("[compare]\nfail_on = [\"metric-drop\"]\n"),
            3,
            &[
                "metric-drop evals::metric: fell by more than 0.05: score 0.90 → 0.60 (−0.30); accuracy 0.90 → 0.60 (−0.30)",
            ],
        ),
        (
            Some("[compare]\nfail_on = [\"metric-drop\"]\nmetric_margin = 0.7\n"),
            0,
            &["no regression"],
        ),
        // The flaky eval's score is each run's pass/fail: at alpha = 0.0001 Fisher's test calls
        // its drop (p = 0.000244) chance, and the same drop of its score (Welch's p < 0.0001)
        // is not a second verdict through metric-drop. The metric eval's 0.30 is within 0.4.
        (
            Some("[compare]\nalpha = 0.0001\nmetric_margin = 0.4\n"),
            0,
            &[
                "no regression (fail_on: broken-gate, pass-rate-drop, metric-drop; alpha 0.0001, metric margin 0.4)",
            ],
        ),
        // The broken evals did not run here: not run (the run manifest beside the results
        // says the binary defines them), not broken.
        (
            Some("[compare]\nfail_on = [\"broken-gate\"]\n"),
            0,
            &["no regression", "baseline evals not run)"],
        ),
    ];
    for (toml, code, expected) in cases {
        let (got, out) = policy(*toml);
        assert_eq!(got, Some(*code), "{toml:?}\n{}", out.dump());
        for text in *expected {
            assert!(
                out.stdout.contains(text),
                "{toml:?}: {text:?}\n{}",
                out.dump()
            );
        }
    }
    // A broken gate in a run whose evals fail: the failure's exit code (1 from the CLI) wins,
    // and the regression is named.
    let after = dir.path("after");
    suite(&after, "after", &["-q"]);
    let cwd = tempfile::tempdir().expect("a temporary directory");
    std::fs::write(
        cwd.path().join("niceeval.toml"),
        "[compare]\nfail_on = [\"broken-gate\"]\n",
    )
    .expect("writable");
    let out = cli(
        cwd.path(),
        &[
            "compare",
            &baseline,
            after.to_str().expect("UTF-8"),
            "--quiet",
        ],
    );
    assert_eq!(out.code(), Some(1), "{}", out.dump());
    assert!(
        out.stdout.contains("REGRESSION: 2 (fail_on: broken-gate):"),
        "{}",
        out.dump()
    );
    // Reading results runs nothing, and says nothing of running: no `running N evals`, no
    // `finished in`, no failure dump.
    for said in ["running", "finished in", "failures:"] {
        assert!(!out.stdout.contains(said), "{said:?}\n{}", out.dump());
    }
    assert!(
        out.stdout.contains("read from results (nothing ran)"),
        "{}",
        out.dump()
    );
    // A policy with a typo is an error naming the file, line and the right value.
    std::fs::write(
        cwd.path().join("niceeval.toml"),
        "[compare]\nfail_on = [\"broken-gates\"]\n",
    )
    .expect("writable");
    let out = cli(cwd.path(), &["compare", &baseline, &passing]);
    assert_eq!(out.code(), Some(2), "{}", out.dump());
    assert!(
        out.stderr.contains("niceeval.toml:2:")
            && out.stderr.contains("did you mean \"broken-gate\"?"),
        "{}",
        out.dump()
    );
    // The suite runner itself: the metric eval alone exits 3 under the fixture's default
    // policy; the noisy eval alone exits 0 (its drop is within chance).
    let out = suite(
        &dir.path("metric"),
        "after",
        &["-q", "metric", "--baseline", &baseline],
    );
    assert_eq!(out.code(), Some(3), "{}", out.dump());
    assert!(
        out.stdout.contains("(9 baseline evals not run)"),
        "{}",
        out.dump()
    );
    // Compared from its results file, the filtered run reads the same: the run manifest
    // beside the results lists every eval the binary defines, so what it did not select is
    // not run, not removed.
    let metric = dir.arg("metric");
    let cwd = tempfile::tempdir().expect("a temporary directory");
    for out in [
        cli(cwd.path(), &["compare", &baseline, &metric, "--quiet"]),
        suite(
            &dir.path("metric"),
            "after",
            &["--report", "-q", "--baseline", &baseline],
        ),
    ] {
        let block = comparison_block(&out.stdout);
        assert!(
            block
                .first()
                .is_some_and(|l| l.ends_with("(9 baseline evals not run)")),
            "{}",
            out.dump()
        );
        assert!(
            !block
                .iter()
                .any(|l| l.contains("removed") || l.contains("dataset")),
            "{block:#?}"
        );
    }
    // A suite binary's report mode reports its own test target: another target's results in
    // the same directory are left out (and named), unless the directory is named.
    let shared = dir.path("metric");
    let other = Fixtures::get().run(
        "suite",
        "suite",
        &["-q", "--exact", "smoke::greets"],
        &[("NICEEVAL_RESULTS_DIR", shared.to_str().expect("UTF-8"))],
    );
    assert_eq!(other.code(), Some(0), "{}", other.dump());
    let own = suite(
        &shared,
        "after",
        &["--report", "-q", "--baseline", &baseline],
    );
    assert!(
        own.stderr
            .contains("note: reporting `compare` only; 1 eval(s) of other test targets"),
        "{}",
        own.dump()
    );
    assert!(!own.stdout.contains("1 new"), "{}", own.dump());
    assert!(
        own.stdout.contains("test result: ok. 1 passed;"),
        "{}",
        own.dump()
    );
    assert!(!own.stdout.contains("smoke::greets"), "{}", own.dump());
    let all = suite(&shared, "after", &["--report", &metric, "-q"]);
    assert!(
        all.stdout.contains("test result: ok. 2 passed; 0 failed"),
        "{}",
        all.dump()
    );
    let out = suite(
        &dir.path("noisy"),
        "after",
        &["-q", "noisy", "--baseline", &baseline],
    );
    assert_eq!(out.code(), Some(0), "{}", out.dump());
    // `--limit` chooses among a dataset's cases as a filter chooses among evals: a run that
    // selects no case of the dataset (and only one of any) says the cases were not run, not
    // that the dataset went from 3 of 3 to 0 of 0 cases with 3 removed.
    let out = suite(
        &dir.path("limited"),
        "after",
        &["-q", "--limit", "1", "steady", "--baseline", &baseline],
    );
    assert_eq!(out.code(), Some(0), "{}", out.dump());
    let block = comparison_block(&out.stdout);
    assert_eq!(
        block.first().copied(),
        Some(
            format!("compared with baseline {baseline}: 1 unchanged (9 baseline evals not run)")
                .as_str()
        ),
        "{}",
        out.dump()
    );
    assert!(
        !block
            .iter()
            .any(|l| l.contains("removed") || l.contains("dataset")),
        "{block:#?}"
    );
    // A missing baseline is a usage error before anything runs.
    let out = suite(
        &dir.path("none"),
        "after",
        &["--baseline", &dir.arg("missing.json")],
    );
    assert_eq!(out.code(), Some(2), "{}", out.dump());
    assert!(
        out.stderr.contains("cannot read the baseline"),
        "{}",
        out.dump()
    );
    assert!(!out.stdout.contains("running"), "{}", out.dump());
}

#[test]
fn niceeval_baseline_save_writes_the_same_baseline_as_the_suite_runner() {
    let dir = Dir::new();
    let from_suite = save_baseline(&dir, "baseline.json");
    let out = cli(
        dir.0.path(),
        &[
            "baseline",
            "save",
            &dir.arg("from-results.json"),
            &dir.arg("results-before"),
        ],
    );
    assert_eq!(
        out.code(),
        Some(1),
        "the results hold failed evals\n{}",
        out.dump()
    );
    let from_results = std::fs::read_to_string(dir.path("from-results.json")).expect("written");
    assert_eq!(from_suite, from_results);
}

#[test]
fn rerun_failed_runs_only_what_failed_in_the_last_run() {
    let dir = Dir::new();
    let results = dir.path("results");
    // No last run yet.
    let out = suite(&results, "after", &["--rerun-failed"]);
    assert_eq!(out.code(), Some(2), "{}", out.dump());
    assert!(
        out.stderr
            .contains("there is no last run of `compare` to rerun the failures of"),
        "{}",
        out.dump()
    );
    // The second version fails three evals.
    let out = suite(&results, "after", &["-q"]);
    assert_eq!(out.code(), Some(101), "{}", out.dump());
    let out = suite(&results, "after", &["--rerun-failed"]);
    assert_eq!(out.code(), Some(101), "{}", out.dump());
    assert!(
        out.stdout
            .contains("--rerun-failed: rerunning 3 eval(s) that failed in the last run"),
        "{}",
        out.dump()
    );
    let ran: Vec<&str> = out
        .stdout
        .lines()
        .filter_map(|l| l.strip_prefix("test "))
        .filter_map(|l| l.split_once(" ... ").map(|(name, _)| name))
        .collect();
    assert_eq!(
        ran.iter()
            .copied()
            .collect::<std::collections::BTreeSet<_>>(),
        [
            "evals::broken",
            "evals::capitals::lima",
            "evals::still_failing"
        ]
        .into_iter()
        .collect(),
        "{}",
        out.dump()
    );
    assert!(out.stdout.contains("8 filtered out"), "{}", out.dump());
    // The first version fixes two of them, the rerun records it, and the next rerun runs the
    // one still failing.
    let out = suite(&results, "before", &["--rerun-failed", "-q"]);
    assert_eq!(
        out.code(),
        Some(101),
        "still_failing still fails\n{}",
        out.dump()
    );
    let out = suite(&results, "before", &["--rerun-failed"]);
    assert!(
        out.stdout.contains("rerunning 1 eval(s)")
            && out.stdout.contains("test evals::still_failing ... FAILED"),
        "{}",
        out.dump()
    );
    // Nothing failed: nothing to rerun.
    let clean = dir.path("clean");
    suite(&clean, "before", &["-q", "steady"]);
    let out = suite(&clean, "before", &["--rerun-failed"]);
    assert_eq!(out.code(), Some(0), "{}", out.dump());
    assert!(
        out.stdout.contains("nothing failed in the last run"),
        "{}",
        out.dump()
    );
}

#[test]
fn a_baseline_of_another_suite_is_an_error_before_anything_runs() {
    let dir = Dir::new();
    let text = save_baseline(&dir, "baseline.json");
    // The same evals, saved by the test targets `smoke` and `api`: another suite's baseline.
    let mut other: serde_json::Value = serde_json::from_str(&text).expect("JSON");
    for (i, e) in other["evals"]
        .as_array_mut()
        .expect("a list")
        .iter_mut()
        .enumerate()
    {
        e["target"] = serde_json::json!(if i % 2 == 0 { "smoke" } else { "api" });
    }
    std::fs::write(
        dir.path("other.json"),
        serde_json::to_string_pretty(&other).expect("JSON"),
    )
    .expect("writable");
    let other = dir.arg("other.json");
    let message = format!(
        "error: {other}: the baseline of another suite: its evals belong to the test targets `api` and `smoke`, none to `compare`; pass this suite's baseline (save one with --save-baseline FILE)"
    );
    let out = suite(&dir.path("results"), "after", &["--baseline", &other]);
    assert_eq!(out.code(), Some(2), "{}", out.dump());
    assert!(out.stderr.contains(&message), "{}", out.dump());
    assert!(!out.stdout.contains("running"), "{}", out.dump());
    // From results, the same: the results are of `compare`.
    suite(&dir.path("results"), "after", &["-q"]);
    let out = cli(
        dir.0.path(),
        &["compare", &other, &dir.arg("results"), "--quiet"],
    );
    assert_eq!(out.code(), Some(2), "{}", out.dump());
    assert!(out.stderr.contains(&message), "{}", out.dump());
    // A baseline holding evals of this suite among others' is compared (per target).
    let mut both: serde_json::Value = serde_json::from_str(&text).expect("JSON");
    both["evals"][0]["target"] = serde_json::json!("smoke");
    std::fs::write(dir.path("both.json"), both.to_string()).expect("writable");
    let out = suite(
        &dir.path("both"),
        "before",
        &["-q", "steady", "--baseline", &dir.arg("both.json")],
    );
    assert_eq!(out.code(), Some(0), "{}", out.dump());
    assert!(
        out.stdout
            .contains("1 unchanged (8 baseline evals not run)"),
        "{}",
        out.dump()
    );
}

/// Sets the tokens and cost of eval `id` (run once) in every results file of `dir`.
fn set_usage(dir: &Path, id: &str, input: u64, output: u64, cost: f64) {
    for entry in std::fs::read_dir(dir).expect("a results directory") {
        let path = entry.expect("an entry").path();
        // Results files only, not their run manifests.
        if path.extension().is_none_or(|e| e != "jsonl") {
            continue;
        }
        let text = std::fs::read_to_string(&path).expect("readable");
        let lines: Vec<String> = text
            .lines()
            .map(|line| {
                let mut record: serde_json::Value = serde_json::from_str(line).expect("JSON");
                if record["id"] == id {
                    // The report's totals are recomputed from its (one) run.
                    let usage = serde_json::json!({
                        "input_tokens": input, "output_tokens": output, "cache_read_tokens": 0,
                    });
                    record["runs"][0]["usage"] = usage.clone();
                    record["runs"][0]["cost_usd"] = serde_json::json!(cost);
                    record["total_usage"] = usage;
                    record["total_usage"]["cost_usd"] = serde_json::json!(cost);
                }
                record.to_string()
            })
            .collect();
        std::fs::write(&path, lines.join("\n") + "\n").expect("writable");
    }
}

#[test]
fn tokens_and_cost_rises_fail_the_run_under_their_policy() {
    let dir = Dir::new();
    // The same passing run twice, the second one's agent spending 50% more tokens and 20%
    // more.
    for name in ["before", "after"] {
        let out = suite(&dir.path(name), "after", &["-q", "steady"]);
        assert_eq!(out.code(), Some(0), "{}", out.dump());
    }
    set_usage(
        &dir.path("before"),
        "compare::evals::steady",
        600,
        400,
        0.01,
    );
    set_usage(
        &dir.path("after"),
        "compare::evals::steady",
        900,
        600,
        0.012,
    );
    let cwd = dir.path("cwd");
    std::fs::create_dir(&cwd).expect("writable");
    let toml = |text: &str| std::fs::write(cwd.join("niceeval.toml"), text).expect("writable");
    let baseline = dir.arg("baseline.json");
    // A policy failing on cost-rise needs a baseline that records cost.
    toml("[compare]\n");
    let out = cli(&cwd, &["baseline", "save", &baseline, &dir.arg("before")]);
    assert_eq!(out.code(), Some(0), "{}", out.dump());
    toml("[compare]\nfail_on = [\"cost-rise\"]\n");
    let out = cli(&cwd, &["compare", &baseline, &dir.arg("after"), "--quiet"]);
    assert_eq!(out.code(), Some(2), "{}", out.dump());
    assert!(
        out.stderr
            .contains("[compare] fail_on names \"cost-rise\", but the baseline records no cost"),
        "{}",
        out.dump()
    );
    toml("[compare]\nbaseline_include = [\"cost\"]\n");
    let out = cli(&cwd, &["baseline", "save", &baseline, &dir.arg("before")]);
    assert_eq!(out.code(), Some(0), "{}", out.dump());

    let cases: &[(&str, i32, &[&str])] = &[
        // The default policy does not fail on rises.
        (
            "",
            0,
            &["no regression (fail_on: broken-gate, pass-rate-drop, metric-drop;"],
        ),
        (
            "fail_on = [\"tokens-rise\", \"cost-rise\"]\n",
            3,
            &[
                "worse          evals::steady — tokens/run 1000 → 1500 (+500); cost/run 0.0100 → 0.0120 (+0.0020)",
                "REGRESSION: 2 (fail_on: tokens-rise, cost-rise):",
                "    tokens-rise evals::steady: rose by more than 10%: tokens/run 1000 → 1500 (+500, +50%)",
                "    cost-rise evals::steady: rose by more than 10%: cost/run 0.0100 → 0.0120 (+0.0020, +20%)",
            ],
        ),
        (
            "fail_on = [\"tokens-rise\"]\ntokens_margin = 0.6\n",
            0,
            &[
                "no regression (fail_on: tokens-rise; alpha 0.05, metric margin 0.05, tokens margin 60%)",
            ],
        ),
        (
            "fail_on = [\"cost-rise\"]\ncost_margin = 0.15\n",
            3,
            &["REGRESSION: 1 (fail_on: cost-rise):"],
        ),
    ];
    for (policy, code, expected) in cases {
        toml(&format!(
            "[compare]\nbaseline_include = [\"cost\"]\n{policy}"
        ));
        let out = cli(&cwd, &["compare", &baseline, &dir.arg("after"), "--quiet"]);
        assert_eq!(out.code(), Some(*code), "{policy}\n{}", out.dump());
        for text in *expected {
            assert!(
                out.stdout.contains(text),
                "{policy}: {text:?}\n{}",
                out.dump()
            );
        }
    }
}
