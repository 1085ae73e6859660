//! What libtest's summary hides, said once more when a plain `cargo test` process exits.
//!
//! libtest has no runtime skip and no "passed with a warning": it counts a skipped eval and an
//! eval that passed with soft assertions below their threshold as plain passes, and captures
//! their reports. This module keeps both kinds for the test process and, when the process exits
//! (after libtest's `test result:` line), lists them with their reasons.
//!
//! The suite runner (`niceeval::main!()`) shows skips and marks itself and never comes here.

use std::sync::Mutex;

use crate::output::reporter::Reporter;
use crate::run::report::{DatasetSummary, EvalReport, SuiteReport};

/// What the notice lists.
#[derive(Debug, Default)]
pub(crate) struct Notes {
    /// `(eval id, reason)` of every skipped eval (listed by id: libtest runs tests in
    /// parallel, so the order they finished in changes from run to run).
    skipped: Vec<(String, String)>,
    /// `(eval id, the soft assertions below their threshold)` of every marked pass.
    below: Vec<(String, Vec<String>)>,
    /// Datasets with `min_case_pass_rate`, with their failing cases.
    datasets: Vec<DatasetTally>,
    /// `(dataset id, case id, why it failed)` of every failed case of a dataset with
    /// `min_case_pass_rate`, until the datasets are tallied at exit.
    failed_cases: Vec<(String, String, String)>,
}

/// The cases of one dataset with `min_case_pass_rate` that ran in this process: its summary
/// (whose [`DatasetSummary::passes`] is the one pass rule) and why each failing case failed.
#[derive(Debug)]
pub(crate) struct DatasetTally {
    summary: DatasetSummary,
    /// `(case id, why it failed)`: its execution error, or its first failing assertion.
    failed: Vec<(String, String)>,
}

impl DatasetTally {
    fn passes(&self) -> bool {
        self.summary.passes()
    }
}

static NOTES: Mutex<Notes> = Mutex::new(Notes {
    skipped: Vec::new(),
    below: Vec::new(),
    datasets: Vec::new(),
    failed_cases: Vec::new(),
});

/// The exit notice as a reporter of the `cargo test` front end's outputs: it hears every
/// finished eval (skips, marked passes, failing dataset cases) and, at the end, the
/// [`DatasetSummary`] of each dataset with `min_case_pass_rate` (under nextest, one process
/// per test, each case decides alone and no dataset is tallied).
pub(crate) struct ExitNotice;

impl Reporter for ExitNotice {
    fn on_eval_complete(&mut self, report: &EvalReport) -> std::io::Result<()> {
        match report.outcome {
            crate::base::outcome::Outcome::Skipped => skipped(
                super::name(&report.id),
                report.skip_reason.as_deref().unwrap_or("no reason given"),
            ),
            crate::base::outcome::Outcome::Passed if report.below_threshold => {
                below_threshold(report)
            }
            crate::base::outcome::Outcome::Failed if decides_as_a_whole(report) => {
                if let Some(dataset) = &report.dataset {
                    let case = super::name(&report.id).to_string();
                    let why = why(report);
                    with_notes(|notes| {
                        notes.failed_cases.push((dataset.clone(), case, why));
                    });
                }
            }
            _ => {}
        }
        Ok(())
    }

    fn on_run_complete(&mut self, suite: &SuiteReport) -> std::io::Result<()> {
        if crate::output::results::under_nextest() {
            return Ok(());
        }
        let mut notes = NOTES
            .try_lock()
            .map_err(|_| std::io::Error::other("the exit notice's notes are locked"))?;
        for summary in suite
            .datasets
            .iter()
            .filter(|d| d.min_case_pass_rate.is_some())
        {
            let mut summary = summary.clone();
            let failed: Vec<(String, String)> = notes
                .failed_cases
                .iter()
                .filter(|(dataset, _, _)| *dataset == summary.id)
                .map(|(_, case, why)| (case.clone(), why.clone()))
                .collect();
            summary.id = super::name(&summary.id).to_string();
            notes.datasets.push(DatasetTally { summary, failed });
        }
        Ok(())
    }
}

/// Whether the case's dataset, not the case's test, decides (`min_case_pass_rate`, outside
/// nextest).
fn decides_as_a_whole(report: &EvalReport) -> bool {
    report.min_case_pass_rate.is_some() && !crate::output::results::under_nextest()
}

/// Why a failed case failed, on one line: its execution error, else its first failing gate
/// (or failing assertion) with its reason, as pytest's short summary gives the first error.
fn why(report: &EvalReport) -> String {
    let text = if let Some(error) = &report.error {
        format!("error: {error}")
    } else {
        let failing = report
            .assertions
            .iter()
            .filter(|a| !a.passed)
            .min_by_key(|a| a.severity != crate::base::assertion::Severity::Gate);
        match failing {
            Some(a) if a.reason.is_empty() => a.name.clone(),
            Some(a) => format!("{}: {}", a.name, a.reason),
            None => "failed".to_string(),
        }
    };
    let line = text.split_whitespace().collect::<Vec<_>>().join(" ");
    crate::base::excerpt::elide(&line, 200)
}

/// Records a skipped eval.
fn skipped(id: &str, reason: &str) {
    with_notes(|notes| notes.skipped.push((id.to_string(), reason.to_string())));
}

/// Records an eval that passed with soft assertions below their threshold.
fn below_threshold(report: &EvalReport) {
    let below = report
        .assertions
        .iter()
        .filter(|a| a.is_below_threshold())
        .map(|a| match a.threshold {
            Some(threshold) => format!("{} scored {:.2} (needs ≥ {threshold:.2})", a.name, a.score),
            None => format!("{} scored {:.2}", a.name, a.score),
        })
        .collect();
    with_notes(|notes| {
        notes
            .below
            .push((super::name(&report.id).to_string(), below))
    });
}

fn with_notes(add: impl FnOnce(&mut Notes)) {
    let mut notes = NOTES.lock().unwrap_or_else(|p| p.into_inner());
    add(&mut notes);
}

/// The text printed at exit, or `None` when there is nothing to say.
///
/// ```text
/// niceeval: 1 of the tests counted as passed above was a skipped eval (libtest has no runtime skip):
///   evals::needs_key: no API key in this environment
/// niceeval: 1 of the tests counted as passed above was an eval that passed with soft assertions below their threshold (strict mode would fail it):
///   evals::tone: similarity("..") scored 0.41 (needs ≥ 0.60)
/// ```
pub(crate) fn notice(notes: &Notes) -> Option<String> {
    let mut text = String::new();
    if !notes.skipped.is_empty() {
        text.push_str(&header(
            notes.skipped.len(),
            "a skipped eval (libtest has no runtime skip)",
            "skipped evals (libtest has no runtime skip)",
        ));
        let mut skipped: Vec<&(String, String)> = notes.skipped.iter().collect();
        skipped.sort();
        for (id, reason) in skipped {
            text.push_str(&format!("  {id}: {reason}\n"));
        }
    }
    if !notes.below.is_empty() {
        text.push_str(&header(
            notes.below.len(),
            "an eval that passed with soft assertions below their threshold (strict mode would fail it)",
            "evals that passed with soft assertions below their threshold (strict mode would fail them)",
        ));
        let mut below_list: Vec<&(String, Vec<String>)> = notes.below.iter().collect();
        below_list.sort();
        for (id, below) in below_list {
            text.push_str(&format!("  {id}: {}\n", below.join("; ")));
        }
    }
    for tally in &notes.datasets {
        let counted = tally.summary.passed + tally.summary.failed;
        let verdict = if tally.passes() {
            "passes"
        } else {
            // libtest's `test result: ok` above counted the failing cases as passed: say why
            // the process fails all the same.
            "FAILED (the tests above counted its failing cases as passed: a dataset with \
             min_case_pass_rate decides as a whole, and this process exits with status 101)"
        };
        text.push_str(&format!(
            "niceeval: dataset {}: {} of {counted} cases passed; needs {:.2} of them: {verdict}\n",
            tally.summary.id,
            tally.summary.passed,
            tally.summary.min_case_pass_rate.unwrap_or_default()
        ));
        for (id, why) in &tally.failed {
            text.push_str(&format!("  FAILED {id} - {why}\n"));
        }
    }
    (!text.is_empty()).then_some(text)
}

/// Whether a dataset with `min_case_pass_rate` fell below it (the process then exits 101).
fn a_dataset_failed(notes: &Notes) -> bool {
    notes.datasets.iter().any(|d| !d.passes())
}

fn header(count: usize, one: &str, many: &str) -> String {
    if count == 1 {
        format!("niceeval: 1 of the tests counted as passed above was {one}:\n")
    } else {
        format!("niceeval: {count} of the tests counted as passed above were {many}:\n")
    }
}

/// The process's one exit hook: `finish` (the front end ending its outputs, which tallies the
/// datasets here), then the notice, then the datasets' verdict on the exit status.
static FINISH: std::sync::OnceLock<fn()> = std::sync::OnceLock::new();

/// Arranges for `finish` and the notice at exit (once per process; later calls do nothing).
#[cfg(unix)]
pub(crate) fn at_exit(finish: fn()) {
    extern "C" fn at_exit() {
        if let Some(finish) = FINISH.get() {
            finish();
        }
        // Never block while the process is going away: a thread that died holding the lock
        // would otherwise hang the exit.
        let Ok(notes) = NOTES.try_lock() else {
            return;
        };
        if let Some(text) = notice(&notes) {
            write_stderr(text.as_bytes());
        }
        if a_dataset_failed(&notes) {
            // libtest counted the dataset's failing cases as passes; its verdict decides.
            // SAFETY: `_exit` ends the process at once, as `exit` was already doing.
            unsafe { libc::_exit(101) };
        }
    }
    if FINISH.set(finish).is_err() {
        return;
    }
    // SAFETY: `at_exit` is a plain `extern "C" fn()` that lives for the whole program; `atexit`
    // only stores the pointer. A non-zero return (no room for more handlers) loses the notice,
    // not the reports and announcements already printed.
    unsafe {
        libc::atexit(at_exit);
    }
}

/// Writes straight to file descriptor 2: at exit the standard library's handles may already be
/// torn down.
#[cfg(unix)]
fn write_stderr(mut bytes: &[u8]) {
    while !bytes.is_empty() {
        // SAFETY: the pointer and length describe the live slice `bytes`.
        let written = unsafe { libc::write(2, bytes.as_ptr().cast(), bytes.len()) };
        if written <= 0 {
            return;
        }
        bytes = &bytes[written.unsigned_abs().min(bytes.len())..];
    }
}

/// Elsewhere only the per-eval announcement of a skip is printed.
#[cfg(not(unix))]
pub(crate) fn at_exit(_finish: fn()) {}

#[cfg(test)]
mod tests {
    use super::{DatasetTally, Notes, notice};
    use crate::run::report::EvalReport;

    #[test]
    fn nothing_to_say_prints_nothing() {
        assert_eq!(notice(&Notes::default()), None);
    }

    #[test]
    fn one_skip_is_named_with_its_reason() {
        let notes = Notes {
            skipped: vec![("evals::a".into(), "no key".into())],
            ..Notes::default()
        };
        assert_eq!(
            notice(&notes).as_deref(),
            Some(
                "niceeval: 1 of the tests counted as passed above was a skipped eval (libtest has no runtime skip):\n  evals::a: no key\n"
            )
        );
    }

    #[test]
    fn several_skips_and_marked_passes_are_counted_and_listed_by_id_whatever_order_they_finished_in()
     {
        let notes = Notes {
            skipped: vec![
                ("evals::b".into(), "later".into()),
                ("evals::a".into(), "no key".into()),
            ],
            below: vec![
                (
                    "evals::d".into(),
                    vec!["a scored 0.20".into(), "b scored 0.30".into()],
                ),
                (
                    "evals::c".into(),
                    vec!["similarity(\"x\") scored 0.10 (needs ≥ 0.90)".into()],
                ),
            ],
            ..Notes::default()
        };
        let text = notice(&notes).unwrap_or_default();
        assert_eq!(
            text,
            "niceeval: 2 of the tests counted as passed above were skipped evals (libtest has no runtime skip):\n  \
             evals::a: no key\n  evals::b: later\n\
             niceeval: 2 of the tests counted as passed above were evals that passed with soft assertions below their threshold (strict mode would fail them):\n  \
             evals::c: similarity(\"x\") scored 0.10 (needs ≥ 0.90)\n  evals::d: a scored 0.20; b scored 0.30\n"
        );
    }

    #[test]
    fn a_dataset_below_its_case_pass_rate_fails_the_process() {
        let tally = |passed, failed: &[&str]| DatasetTally {
            summary: crate::run::report::DatasetSummary {
                id: "evals::capitals".into(),
                cases: passed + failed.len(),
                passed,
                failed: failed.len(),
                skipped: 0,
                mean_score: None,
                metrics: Default::default(),
                min_case_pass_rate: Some(0.6),
            },
            failed: failed
                .iter()
                .map(|f| (f.to_string(), "equals(\"Paris\"): got \"Lyon\"".to_string()))
                .collect(),
        };
        let passing = Notes {
            datasets: vec![tally(2, &["evals::capitals::atlantis"])],
            ..Notes::default()
        };
        assert!(!super::a_dataset_failed(&passing));
        assert_eq!(
            notice(&passing).unwrap_or_default(),
            "niceeval: dataset evals::capitals: 2 of 3 cases passed; needs 0.60 of them: passes\n  \
             FAILED evals::capitals::atlantis - equals(\"Paris\"): got \"Lyon\"\n"
        );
        let failing = Notes {
            datasets: vec![tally(1, &["evals::capitals::a", "evals::capitals::b"])],
            ..Notes::default()
        };
        assert!(super::a_dataset_failed(&failing));
        let text = notice(&failing).unwrap_or_default();
        assert!(
            text.starts_with(
                "niceeval: dataset evals::capitals: 1 of 3 cases passed; needs 0.60 of them: FAILED"
            ),
            "{text}"
        );
        assert!(text.contains("exits with status 101"), "{text}");
        assert!(
            text.contains("  FAILED evals::capitals::b - equals(\"Paris\"): got \"Lyon\"\n"),
            "{text}"
        );
    }

    #[test]
    fn a_failed_case_is_explained_by_its_error_or_first_failing_gate() {
        use crate::base::assertion::{AssertionKind, AssertionResult, Grade, Settings};
        let mut report: EvalReport = serde_json::from_value(serde_json::json!({
            "id": "evals::capitals::lyon", "file": "t.rs", "line": 1, "outcome": "failed",
            "assertions": [], "duration_ms": 0.0,
            "usage": {"input_tokens": 0, "output_tokens": 0, "cache_read_tokens": 0},
            "runs": [], "reliability": {"n": 0, "c": 0, "pass_rate": 1.0, "pass_at_k": [], "pass_hat_k": []},
            "min_pass_rate": 1.0
        }))
        .unwrap_or_else(|e| panic!("{e}"));
        let soft = AssertionResult::from_grade(
            "similarity(\"Paris\")".into(),
            AssertionKind::Value,
            &Settings::soft(Some(0.9)),
            Grade::score(0.1, "far"),
        );
        let gate = AssertionResult::from_grade(
            "equals(\"Paris\")".into(),
            AssertionKind::Value,
            &Settings::gate(),
            Grade::fail("expected \"Paris\",\n got \"Lyon\""),
        );
        report.assertions = vec![soft, gate];
        assert_eq!(
            super::why(&report),
            "equals(\"Paris\"): expected \"Paris\", got \"Lyon\""
        );
        report.error = Some(crate::base::outcome::RunError::new(
            crate::base::outcome::RunErrorKind::Timeout,
            "timed out after 30s",
        ));
        assert_eq!(super::why(&report), "error: timed out after 30s");
    }
}
