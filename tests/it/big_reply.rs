//! A 100 MiB reply (the fixture suite's `big` target): the assertions see all of it while the
//! eval runs, every report stores each text capped (`[report] max_text = "32KiB"` in the
//! fixture's niceeval.toml) with its full size stated, and the suite process stays under
//! 350 MiB at its peak, measured from outside with `wait4(2)`.

use std::path::Path;

use niceeval::{EvalReport, Event, Outcome, Role};
use niceeval_tests::child;
use niceeval_tests::fixture::{Fixtures, RUN_DEADLINE};

const MIB: usize = 1024 * 1024;
/// The fixture's `[report] max_text`.
const MAX_TEXT: usize = 32 * 1024;
/// The marker and its sizes on top of the kept head and tail.
const MARKER: usize = 64;

/// The lines of a JSONL file, each a whole report no larger than 5 MiB.
fn read_reports(path: &Path) -> Vec<EvalReport> {
    let text = std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    text.lines()
        .map(|line| {
            assert!(
                line.len() < 5 * MIB,
                "a record of {} bytes in {}",
                line.len(),
                path.display()
            );
            serde_json::from_str(line).unwrap_or_else(|e| panic!("not a report ({e})"))
        })
        .collect()
}

/// A text kept as the fixture's values are: head, marker with the sizes, tail.
fn assert_capped(text: &str, full: &str, what: &str) {
    assert!(
        text.len() <= MAX_TEXT + MARKER,
        "{what}: {} bytes stored",
        text.len()
    );
    assert!(text.starts_with("BEGIN héllo"), "{what}: {}", &text[..40]);
    assert!(text.ends_with("✓ END"), "{what}");
    assert!(
        text.contains(&format!("…[elided {full}]…")),
        "{what}: no marker `…[elided {full}]…`"
    );
}

fn assistant_message(report: &EvalReport) -> &str {
    report
        .events
        .iter()
        .find_map(|e| match e {
            Event::Message {
                role: Role::Assistant,
                text,
            } => Some(text.as_str()),
            _ => None,
        })
        .expect("the reply is in the transcript")
}

#[cfg(unix)]
#[test]
fn a_100_mib_reply_is_checked_whole_stored_capped_and_fits_in_350_mib() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let arg = |name: &str| dir.path().join(name).to_str().expect("UTF-8").to_string();
    let fixtures = Fixtures::get();
    let mut command = fixtures.command(
        "suite",
        "big",
        &[
            "--concurrency",
            "1",
            "--jsonl",
            &arg("r.jsonl"),
            "--html",
            &arg("report.html"),
            "--junit",
            &arg("junit.xml"),
            "--markdown",
            &arg("summary.md"),
        ],
    );
    command
        .env("FIXTURE_BIG_MB", "100")
        .env("NICEEVAL_RESULTS_DIR", dir.path().join("results"));
    let (out, peak) = child::spawn(&mut command).wait_with_peak_rss(RUN_DEADLINE);
    let log = out.dump();
    assert_eq!(out.code(), Some(0), "{log}");

    let jsonl = std::fs::metadata(dir.path().join("r.jsonl"))
        .expect("jsonl")
        .len();
    let html = std::fs::read_to_string(dir.path().join("report.html")).expect("html");
    eprintln!(
        "100 MiB reply: peak RSS {:.1} MiB, JSONL {:.1} KiB, HTML {:.1} KiB",
        peak as f64 / MIB as f64,
        jsonl as f64 / 1024.0,
        html.len() as f64 / 1024.0
    );
    assert!(
        peak < 350 * MIB as u64,
        "peak RSS {:.1} MiB\n{log}",
        peak as f64 / MIB as f64
    );
    assert!(
        html.len() < 5 * MIB,
        "the HTML report has {} bytes",
        html.len()
    );
    assert!(html.ends_with("</html>\n"));

    let reports = read_reports(&dir.path().join("r.jsonl"));
    // The results file, beside its run manifest.
    let results: Vec<_> = std::fs::read_dir(dir.path().join("results"))
        .expect("the results directory")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
        .collect();
    assert_eq!(results.len(), 1, "{results:?}");
    // The results file's records also say which run wrote them.
    let stored: Vec<_> = read_reports(&results[0])
        .into_iter()
        .map(|mut report| {
            assert!(report.run.is_some(), "a results record names its run");
            report.run = None;
            report
        })
        .collect();
    assert!(stored == reports, "the results file holds the same records");
    assert_eq!(reports.len(), 2, "{log}");

    // The assertions saw the whole reply (its length, both ends) while the eval ran.
    let hundred = reports
        .iter()
        .find(|r| r.id == "big::big::hundred_megabyte_reply")
        .expect("the 100 MiB eval is reported");
    assert_eq!(hundred.outcome, Outcome::Passed, "{}", hundred.render());
    assert_eq!(hundred.assertions.len(), 3);
    assert!(hundred.assertions.iter().all(|a| a.passed));
    assert_capped(
        assistant_message(hundred),
        "100.0 MiB of 100.0 MiB",
        "100 MiB reply",
    );

    let ten = reports
        .iter()
        .find(|r| r.id == "big::big::ten_megabytes_everywhere")
        .expect("the 10 MiB eval is reported");
    assert_eq!(ten.outcome, Outcome::Passed, "{}", ten.render());
    let full = "10.0 MiB of 10.0 MiB";
    assert_capped(assistant_message(ten), full, "reply");
    let reason = &ten.assertions[0].reason;
    assert_capped(reason, full, "reason");
    for event in &ten.events {
        match event {
            Event::Thinking { text } => assert_capped(text, full, "thinking"),
            Event::ActionCalled { input, .. } => {
                let query = input["query"].as_str().expect("the input keeps its shape");
                assert_capped(query, full, "tool input");
            }
            Event::ActionResult { output, .. } => {
                assert_capped(output.as_str().expect("a string"), full, "tool output")
            }
            _ => {}
        }
    }
    // The page wraps reasons and transcripts instead of overflowing sideways.
    assert!(html.contains(".tree td.reason{white-space:pre-wrap;overflow-wrap:anywhere;"));
    assert!(html.contains(".msg{border-radius:8px;padding:.4rem .6rem;margin:.35rem 0;white-space:pre-wrap;overflow-wrap:anywhere;"));
    assert!(html.contains("pre{white-space:pre-wrap;overflow-wrap:anywhere;"));
}
