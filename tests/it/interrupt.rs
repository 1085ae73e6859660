//! A suite stopped mid-way keeps everything that finished: killed with SIGKILL (no chance to
//! clean up), every finished eval is a whole line in the JSONL and results files and no report
//! file is left partial; interrupted with SIGINT (Ctrl-C) or SIGTERM (`timeout`, CI runners,
//! `docker stop`), the runner stops, writes every report whole, names the evals that did not
//! finish, and exits with 130 or 143.
//!
//! The fixture's `slow::*` evals (12 of them) wait `FIXTURE_SLOW_MS` each; at concurrency 2 the
//! batch takes six rounds, and the test stops it once two evals are on disk.

use std::path::Path;
use std::time::Duration;

use niceeval::{EvalReport, Outcome};
use niceeval_tests::child::{self, Output, Running};
use niceeval_tests::fixture::{Fixtures, RUN_DEADLINE};

/// Lines of a file that end with a newline (a line being written does not count).
fn finished_lines(path: &Path) -> usize {
    std::fs::read_to_string(path)
        .map(|text| text.matches('\n').count())
        .unwrap_or(0)
}

/// Every line of a JSONL file, each of which must be a whole report of a passed slow eval.
fn read_complete(path: &Path) -> Vec<EvalReport> {
    let text = std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    assert!(
        text.ends_with('\n'),
        "{} ends mid-line:\n{text}",
        path.display()
    );
    text.lines()
        .map(|line| {
            let report: EvalReport = serde_json::from_str(line)
                .unwrap_or_else(|e| panic!("not a whole report ({e}): {line}"));
            assert!(report.id.starts_with("suite::slow::e"), "{}", report.id);
            assert_eq!(report.outcome, Outcome::Passed, "{line}");
            report
        })
        .collect()
}

/// Every `slow::*` eval of the fixture.
fn all_slow_ids() -> Vec<String> {
    (0..12).map(|i| format!("suite::slow::e{i:02}")).collect()
}

/// The evals of the slow batch that are not among `finished`, sorted.
fn unfinished(finished: &[EvalReport]) -> Vec<String> {
    all_slow_ids()
        .into_iter()
        .filter(|id| !finished.iter().any(|r| &r.id == id))
        .collect()
}

/// The report files the slow batch writes whole at its end, and no temporary file left
/// beside them: each is absent or complete.
fn whole_file_reports(dir: &Path) -> [std::path::PathBuf; 3] {
    let strays: Vec<_> = std::fs::read_dir(dir)
        .expect("the directory exists")
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|name| name.ends_with(".tmp"))
        .collect();
    assert!(strays.is_empty(), "temporary files left behind: {strays:?}");
    ["junit.xml", "report.html", "summary.md"].map(|name| dir.join(name))
}

/// Starts the slow batch writing `jsonl`, `junit`, `html` and `markdown`, results into
/// `results`, and waits until two evals are in the JSONL file.
fn start_slow_batch(dir: &Path) -> Running {
    let fixtures = Fixtures::get();
    let arg = |name: &str| dir.join(name).to_str().expect("UTF-8").to_string();
    let mut command = fixtures.command(
        "suite",
        "suite",
        &[
            "slow::",
            "--concurrency",
            "2",
            "--jsonl",
            &arg("r.jsonl"),
            "--junit",
            &arg("junit.xml"),
            "--html",
            &arg("report.html"),
            "--markdown",
            &arg("summary.md"),
        ],
    );
    command
        .env("FIXTURE_SLOW_MS", "400")
        .env("NICEEVAL_RESULTS_DIR", dir.join("results"));
    let mut running = child::spawn(&mut command);
    let jsonl = dir.join("r.jsonl");
    child::wait_until(RUN_DEADLINE, "two evals finished", || {
        assert!(!running.exited(), "the suite ended before it was stopped");
        finished_lines(&jsonl) >= 2
    });
    running
}

/// The results file (beside its run manifest).
fn results_file(dir: &Path) -> std::path::PathBuf {
    let files: Vec<_> = std::fs::read_dir(dir.join("results"))
        .expect("the results directory exists")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
        .collect();
    assert_eq!(files.len(), 1, "{files:?}");
    files[0].clone()
}

fn ids(reports: &[EvalReport]) -> Vec<&str> {
    let mut ids: Vec<&str> = reports.iter().map(|r| r.id.as_str()).collect();
    ids.sort();
    ids
}

#[test]
fn a_killed_suite_leaves_every_finished_eval_complete_on_disk() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let running = start_slow_batch(dir.path());
    let out: Output = running.kill();
    assert_eq!(out.code(), None, "killed by a signal\n{}", out.dump());

    let reports = read_complete(&dir.path().join("r.jsonl"));
    assert!(
        (2..12).contains(&reports.len()),
        "killed mid-way, yet {} evals finished\n{}",
        reports.len(),
        out.dump()
    );
    // Every eval the console announced as finished is on disk (files are written first).
    let announced: Vec<&str> = out
        .libtest()
        .results()
        .into_iter()
        .map(|(name, _)| name)
        .collect();
    for name in &announced {
        assert!(
            reports.iter().any(|r| r.id == format!("suite::{name}")),
            "{name} was announced but is not in the JSONL file"
        );
    }
    // The results file holds the same evals, each whole. A finished eval is written to the
    // results file first, then to the JSONL file (`harness/outputs.rs`), so a kill between the
    // two leaves at most one eval in the results file alone.
    let results = read_complete(&results_file(dir.path()));
    let (results_ids, jsonl_ids) = (ids(&results), ids(&reports));
    for id in &jsonl_ids {
        assert!(
            results_ids.contains(id),
            "{id} is in the JSONL file, not the results file"
        );
    }
    assert!(
        results_ids.len() <= jsonl_ids.len() + 1,
        "results file {results_ids:?}, JSONL file {jsonl_ids:?}"
    );
    // The whole-file reports are written at the end, which never came: none is there, not
    // even an empty one.
    for path in whole_file_reports(dir.path()) {
        assert!(!path.exists(), "{} exists after SIGKILL", path.display());
    }
}

#[cfg(unix)]
#[test]
fn ctrl_c_stops_the_suite_reports_what_finished_and_exits_130() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let running = start_slow_batch(dir.path());
    running.signal(libc::SIGINT);
    let out = running.wait(Duration::from_secs(30));
    let log = out.dump();
    assert_eq!(out.code(), Some(130), "{log}");

    let reports = read_complete(&dir.path().join("r.jsonl"));
    assert!((2..12).contains(&reports.len()), "{log}");
    let summary = out
        .libtest()
        .summary()
        .unwrap_or_else(|| panic!("no `test result:` line\n{log}"));
    assert!(!summary.ok, "an interrupted run is not ok\n{log}");
    assert_eq!(summary.passed as usize, reports.len(), "{log}");
    let not_run = 12 - reports.len();
    assert!(
        out.stdout.contains(&format!(
            "interrupted by Ctrl-C (SIGINT): {not_run} eval(s) did not finish; finished results were reported"
        )),
        "{log}"
    );
    check_reports_name_the_unfinished(dir.path(), &reports, &out.stdout, "Ctrl-C (SIGINT)");
}

#[cfg(unix)]
#[test]
fn sigterm_stops_the_suite_writes_every_report_whole_and_exits_143() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let running = start_slow_batch(dir.path());
    running.signal(libc::SIGTERM);
    let out = running.wait(Duration::from_secs(30));
    let log = out.dump();
    assert_eq!(out.code(), Some(143), "{log}");

    let reports = read_complete(&dir.path().join("r.jsonl"));
    assert!((2..12).contains(&reports.len()), "{log}");
    let results = read_complete(&results_file(dir.path()));
    assert_eq!(ids(&results), ids(&reports));
    let summary = out
        .libtest()
        .summary()
        .unwrap_or_else(|| panic!("no `test result:` line\n{log}"));
    assert!(!summary.ok, "an interrupted run is not ok\n{log}");
    assert_eq!(summary.passed as usize, reports.len(), "{log}");
    let not_run = 12 - reports.len();
    assert!(
        out.stdout.contains(&format!(
            "interrupted by SIGTERM: {not_run} eval(s) did not finish; finished results were reported"
        )),
        "{log}"
    );
    check_reports_name_the_unfinished(dir.path(), &reports, &out.stdout, "SIGTERM");
}

/// After an interruption: the console lists the evals that did not finish, and the JUnit, HTML
/// and Markdown files are complete, hold every finished eval and name every unfinished one.
fn check_reports_name_the_unfinished(
    dir: &Path,
    finished: &[EvalReport],
    stdout: &str,
    signal: &str,
) {
    let unfinished = unfinished(finished);
    assert_eq!(unfinished.len() + finished.len(), 12);
    // The console: `did not finish:` and one indented name per line, in id order.
    let listed: Vec<&str> = stdout
        .split_once("\ndid not finish:\n")
        .unwrap_or_else(|| panic!("no list of unfinished evals:\n{stdout}"))
        .1
        .lines()
        .map_while(|line| line.strip_prefix("    "))
        .collect();
    let expected: Vec<String> = unfinished
        .iter()
        .map(|id| id.trim_start_matches("suite::").to_string())
        .collect();
    assert_eq!(listed, expected, "{stdout}");

    let [junit, html, markdown] = whole_file_reports(dir);
    // JUnit: a well-formed document with a test case per eval of the batch; the finished ones
    // passed, each unfinished one is an error saying it was interrupted.
    let xml = std::fs::read_to_string(&junit).expect("junit written");
    let doc = roxmltree::Document::parse(&xml).unwrap_or_else(|e| panic!("{e}\n{xml}"));
    let cases: Vec<roxmltree::Node> = doc
        .descendants()
        .filter(|n| n.has_tag_name("testcase"))
        .collect();
    assert_eq!(cases.len(), 12, "{xml}");
    let mut errored: Vec<String> = Vec::new();
    for case in &cases {
        let id = format!(
            "{}::{}",
            case.attribute("classname").unwrap_or_default(),
            case.attribute("name").unwrap_or_default()
        );
        match case.children().find(|n| n.is_element()) {
            None => assert!(finished.iter().any(|r| r.id == id), "{id} passed?\n{xml}"),
            Some(error) => {
                assert!(error.has_tag_name("error"), "{xml}");
                assert_eq!(
                    error.attribute("message"),
                    Some("interrupted before it finished"),
                    "{xml}"
                );
                assert_eq!(error.attribute("type"), Some("interrupted"), "{xml}");
                assert!(error.text().unwrap_or_default().contains(signal), "{xml}");
                errored.push(id);
            }
        }
    }
    errored.sort();
    assert_eq!(errored, unfinished, "{xml}");
    let testsuite = doc
        .descendants()
        .find(|n| n.has_tag_name("testsuite"))
        .expect("a testsuite");
    assert_eq!(testsuite.attribute("tests"), Some("12"), "{xml}");
    assert_eq!(
        testsuite.attribute("errors"),
        Some(unfinished.len().to_string().as_str()),
        "{xml}"
    );

    // HTML: the whole page, its summary with every finished eval, and the unfinished named.
    let page = std::fs::read_to_string(&html).expect("html written");
    assert!(page.starts_with("<!DOCTYPE html>"), "{page}");
    assert!(page.ends_with("</html>\n"), "the page is cut short");
    assert!(page.contains(&format!("interrupted by {signal}")), "{page}");
    let (_, listed) = page
        .split_once("<h2>Did not finish</h2>")
        .unwrap_or_else(|| panic!("no list of unfinished evals:\n{page}"));
    let listed = &listed[..listed.find("</ul>").expect("the list ends")];
    // Evals are named as the console names them: one target, so without it.
    let name = |id: &str| id.trim_start_matches("suite::").to_string();
    for id in &unfinished {
        assert!(
            listed.contains(&format!("<li><code>{}</code></li>", name(id))),
            "{id}: {listed}"
        );
    }
    let listed_in_page = niceeval_tests::page::ids(&page);
    for report in finished {
        assert!(listed_in_page.contains(&report.id), "{}", report.id);
        assert!(
            !listed.contains(&name(&report.id)),
            "{}: {listed}",
            report.id
        );
    }

    // Markdown: the totals, the table of finished evals and the list of unfinished ones.
    let md = std::fs::read_to_string(&markdown).expect("markdown written");
    assert!(md.starts_with("## niceeval\n"), "{md}");
    assert!(
        md.contains(&format!(
            ", {} not run (interrupted by {signal})",
            unfinished.len()
        )),
        "{md}"
    );
    let (table, listed) = md
        .split_once("### Did not finish\n")
        .unwrap_or_else(|| panic!("no list of unfinished evals:\n{md}"));
    for id in &unfinished {
        assert!(
            listed.contains(&format!("- `{}`\n", name(id))),
            "{id}: {md}"
        );
        assert!(!table.contains(&name(id)), "{id}: {md}");
    }
    for report in finished {
        assert!(
            table.contains(&format!("| `{}` |", name(&report.id))),
            "{md}"
        );
    }
}

/// Every record of a results file, by line (each a JSON object).
fn records(path: &Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()))
        .lines()
        .map(|line| serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}")))
        .collect()
}

#[test]
fn a_killed_suite_resumes_under_its_run_id_and_reruns_only_what_did_not_finish() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let out = start_slow_batch(dir.path()).kill();
    assert_eq!(out.code(), None, "killed by a signal\n{}", out.dump());
    let results = results_file(dir.path());
    let before = records(&results);
    assert!((2..12).contains(&before.len()), "{}", out.dump());
    let run = before[0]["run"].clone();
    // SIGKILL in the middle of a write: the next record cut short, no newline. Its eval did
    // not finish, so it runs again.
    let finished: Vec<&str> = before.iter().filter_map(|r| r["id"].as_str()).collect();
    let cut_id = all_slow_ids()
        .into_iter()
        .find(|id| !finished.contains(&id.as_str()))
        .expect("an unfinished eval");
    let mut cut = before[0].clone();
    cut["id"] = cut_id.clone().into();
    let cut = cut.to_string();
    let mut text = std::fs::read_to_string(&results).expect("readable");
    text.push_str(&cut[..cut.len() / 2]);
    std::fs::write(&results, &text).expect("writable");
    let cut_line = before.len() + 1;

    let fixtures = Fixtures::get();
    let out = fixtures.run(
        "suite",
        "suite",
        &["slow::", "--concurrency", "4", "--resume"],
        &[
            ("FIXTURE_SLOW_MS", "20"),
            (
                "NICEEVAL_RESULTS_DIR",
                dir.path().join("results").to_str().expect("UTF-8"),
            ),
        ],
    );
    let log = out.dump();
    assert_eq!(out.code(), Some(0), "{log}");
    assert!(
        out.stdout.contains(&format!(
            "--resume: continuing run {}",
            run["id"].as_str().expect("a run id")
        )),
        "{log}"
    );
    assert!(
        out.stderr.contains(&format!(
            "warning: {}:{cut_line}: skipped a record cut short",
            results.display()
        )),
        "the cut record is named by file and line\n{log}"
    );
    // The summary covers the whole run: what finished before the kill and what ran now.
    let summary = out.libtest().summary().expect("a `test result:` line");
    assert!(summary.ok && summary.passed == 12, "{log}");

    let after = records(&results);
    let mut ids: Vec<&str> = after.iter().filter_map(|r| r["id"].as_str()).collect();
    ids.sort_unstable();
    assert_eq!(ids, all_slow_ids(), "every eval once, none twice");
    for record in &after {
        assert_eq!(record["run"], run, "the run keeps its id: {record}");
    }
    // What finished before the kill keeps its record, unchanged.
    for record in &before {
        assert!(after.contains(record), "{record} was rewritten or lost");
    }
}
