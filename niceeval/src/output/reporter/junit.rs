//! The JUnit XML reporter: one `<testcase>` per eval, failures and errors carrying the rendered
//! assertion report, skips carrying their reason — the dialect Jenkins, GitLab and GitHub
//! Actions test-report actions read, written with [`quick_junit`] (the writer of
//! cargo-nextest). The `<testsuite>` carries every attribute Ant's schema requires (`name`,
//! `tests`, `failures`, `errors`, `time`, `timestamp`, `hostname`, `id`, `package`), for the
//! strictest consumers.
//!
//! After an interruption (Ctrl-C, SIGTERM) every eval that did not finish gets a `<testcase>`
//! with `<error message="interrupted before it finished" type="interrupted">`. An error rather
//! than `<skipped>`: consumers (Jenkins, GitLab, the GitHub test-report actions) list errors
//! with failures, in red, and count them against the run, whereas skipped cases are folded
//! away and a job whose report shows "0 failures, 10 skipped" looks green — an interrupted run
//! did not pass, and the exit code (130/143) says so too.

use std::io::Write;
use std::time::{Duration, SystemTime};

use quick_junit::{NonSuccessKind, Report, TestCase, TestCaseStatus, TestSuite};

use super::Reporter;
use super::markup::xml_safe;
use crate::base::outcome::Outcome;
use crate::run::report::{EvalReport, SuiteReport, SuiteStart};

/// The name of the report (`<testsuites>`) and of its one `<testsuite>`.
const NAME: &str = "niceeval";

/// Writes a JUnit XML document when the suite completes. Each finished eval's `<testcase>` is
/// written as it finishes to a temporary spool file (only the counts stay in memory), and the
/// document is put together from it at the end: a suite of 100,000 evals holds no test case.
pub struct Junit<W: Write + Send> {
    out: W,
    /// The counts of the finished evals (no test case: those are in `spool`).
    counts: TestSuite,
    /// The finished evals' `<testcase>` elements, as the document has them.
    spool: Option<std::fs::File>,
    /// The line that closes the `<testsuite>` element, as the document has it.
    closing: String,
    started: SystemTime,
}

impl<W: Write + Send> Junit<W> {
    /// A reporter writing to `out`.
    pub fn new(out: W) -> Self {
        Junit {
            out,
            counts: TestSuite::new(NAME),
            spool: None,
            closing: String::new(),
            started: SystemTime::now(),
        }
    }

    /// The writer back.
    pub fn into_inner(self) -> W {
        self.out
    }
}

impl Junit<super::ReportFile> {
    /// A reporter writing the file at `path` when the suite completes, whole or not at all
    /// (see [`super::ReportFile`]): parent directories are created and the directory's
    /// writability checked now.
    pub fn create(path: impl AsRef<std::path::Path>) -> std::io::Result<Self> {
        Ok(Junit::new(super::ReportFile::create(path)?))
    }
}

/// quick-junit's serialization error as an I/O error, with its cause.
fn serialize_error(error: quick_junit::SerializeError) -> std::io::Error {
    let cause = std::error::Error::source(&error)
        .map(|cause| format!(": {cause}"))
        .unwrap_or_default();
    std::io::Error::other(format!("{error}{cause}"))
}

/// `milliseconds` as a [`Duration`]; zero when negative or not a number.
fn duration(milliseconds: f64) -> Duration {
    Duration::try_from_secs_f64(milliseconds / 1000.0).unwrap_or_default()
}

/// `seconds` since the Unix epoch as an ISO 8601 UTC date and time without zone, the form
/// Ant's `timestamp` uses: `2026-11-22T21:58:13`.
fn iso8601(seconds: u64) -> String {
    let (days, rest) = (seconds / 86_400, seconds % 86_400);
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}",
        rest / 3_600,
        rest % 3_600 / 60,
        rest % 60
    )
}

/// The machine's name, for the `hostname` attribute.
fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .or_else(|| std::env::var("HOSTNAME").ok())
        .or_else(|| std::env::var("COMPUTERNAME").ok())
        .map(|h| h.trim().to_string())
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "localhost".to_string())
}

/// The `classname` and `name` of an eval's `<testcase>`: its id split at the last `::`.
fn split_id(id: &str) -> (&str, &str) {
    id.rsplit_once("::").unwrap_or((NAME, id))
}

/// The `<testcase>` of an eval an interruption stopped before it finished.
fn unfinished_case(id: &str, suite: &SuiteReport) -> TestCase {
    let (classname, name) = split_id(id);
    let mut status = TestCaseStatus::non_success(NonSuccessKind::Error);
    status
        .set_message("interrupted before it finished")
        .set_type("interrupted")
        .set_description(xml_safe(&format!(
            "The run was {} before this eval finished; it has no result.",
            suite.interruption()
        )));
    let mut case = TestCase::new(xml_safe(name), status);
    case.set_classname(xml_safe(classname));
    case
}

/// The `<testcase>` of one eval.
fn test_case(report: &EvalReport) -> TestCase {
    let (classname, name) = split_id(&report.id);
    let status = match report.outcome {
        Outcome::Passed => TestCaseStatus::success(),
        Outcome::Skipped => {
            let mut status = TestCaseStatus::skipped();
            status.set_message(xml_safe(report.skip_reason.as_deref().unwrap_or("skipped")));
            status
        }
        Outcome::Failed => {
            let (kind, ty, message) = match &report.error {
                Some(error) => (NonSuccessKind::Error, "error", error.message.clone()),
                None => {
                    let failed: Vec<&str> = report
                        .assertions
                        .iter()
                        .filter(|a| !a.passed)
                        .map(|a| a.name.as_str())
                        .collect();
                    (
                        NonSuccessKind::Failure,
                        "failure",
                        format!("did not pass: {}", failed.join(", ")),
                    )
                }
            };
            let mut status = TestCaseStatus::non_success(kind);
            status
                .set_message(xml_safe(&message))
                .set_type(ty)
                .set_description(xml_safe(&report.render()));
            status
        }
    };
    let mut case = TestCase::new(xml_safe(name), status);
    case.set_classname(xml_safe(classname))
        .set_time(duration(report.duration_ms));
    case.extra
        .insert("file".into(), xml_safe(&report.file).into());
    case.extra
        .insert("line".into(), report.line.to_string().into());
    // A flaky eval says so, with its pass rate and interval (CI dashboards show system-out).
    let (runs, passed) = (report.reliability.n, report.reliability.c);
    if passed > 0 && passed < runs {
        let flaky = super::Flaky::new(report.id.clone(), runs, passed);
        case.set_system_out(format!("flaky: {}", flaky.describe()));
    }
    case
}

impl<W: Write + Send> Reporter for Junit<W> {
    fn on_run_start(&mut self, _start: &SuiteStart) -> std::io::Result<()> {
        self.started = SystemTime::now();
        Ok(())
    }

    /// The finished evals are spooled as they come; the end reads the unfinished ones.
    fn reads_evals(&self) -> bool {
        false
    }

    fn on_eval_complete(&mut self, report: &EvalReport) -> std::io::Result<()> {
        // The case as the whole document would have it: a document of this one case, from
        // the line of its `<testcase` to the line of `</testsuite>`.
        let mut one = TestSuite::new(NAME);
        one.add_test_case(test_case(report));
        self.counts.tests += one.tests;
        self.counts.failures += one.failures;
        self.counts.errors += one.errors;
        self.counts.skipped += one.skipped;
        let mut document = Report::new(NAME);
        document.add_test_suite(one);
        let xml = document.to_string().map_err(serialize_error)?;
        let line_start = |at: usize| xml[..at].rfind('\n').map_or(0, |n| n + 1);
        let (Some(case), Some(end)) = (xml.find("<testcase"), xml.rfind("</testsuite>")) else {
            return Err(std::io::Error::other("quick-junit wrote no <testcase>"));
        };
        let (from, to) = (line_start(case), line_start(end));
        if self.closing.is_empty() {
            self.closing = xml[to..end + "</testsuite>".len()].to_string();
        }
        let spool = match &mut self.spool {
            Some(spool) => spool,
            None => self.spool.insert(tempfile::tempfile()?),
        };
        spool.write_all(&xml.as_bytes()[from..to])
    }

    fn on_run_complete(&mut self, suite: &SuiteReport) -> std::io::Result<()> {
        let time = duration(suite.duration_ms);
        // Ant's schema wants the timestamp without zone or fraction, which quick-junit's own
        // (RFC 3339) `timestamp` does not give; it goes in as an extra attribute instead.
        let timestamp = iso8601(
            self.started
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_secs()),
        );
        // The finished evals stay in the spool, so a second call writes the same document.
        let mut testsuite = self.counts.clone();
        for id in &suite.unfinished {
            testsuite.add_test_case(unfinished_case(id, suite));
        }
        testsuite.set_time(time);
        for (key, value) in [
            ("timestamp", timestamp),
            ("hostname", xml_safe(&hostname()).into_owned()),
            ("id", "0".to_string()),
            ("package", NAME.to_string()),
        ] {
            testsuite.extra.insert(key.into(), value.into());
        }
        let mut report = Report::new(NAME);
        report.set_time(time).add_test_suite(testsuite);
        let xml = report.to_string().map_err(serialize_error)?;
        let Some(spool) = &mut self.spool else {
            // One write, then the flush that publishes a report file.
            self.out.write_all(xml.as_bytes())?;
            return self.out.flush();
        };
        // The spooled cases go first, before the unfinished ones: where the first
        // `<testcase` line starts, or, in a `<testsuite .../>` without any, into it opened.
        let suite_tag = xml.find("<testsuite ").unwrap_or(0);
        let (head, tail): (String, &str) = match xml.find("<testcase") {
            Some(case) => {
                let at = xml[..case].rfind('\n').map_or(0, |n| n + 1);
                (xml[..at].to_string(), &xml[at..])
            }
            None => {
                let close = xml[suite_tag..]
                    .find("/>")
                    .map(|n| suite_tag + n)
                    .ok_or_else(|| std::io::Error::other("quick-junit wrote no <testsuite>"))?;
                let rest = &xml[close + 2..];
                (format!("{}>\n", &xml[..close]), rest)
            }
        };
        self.out.write_all(head.as_bytes())?;
        use std::io::{Seek as _, SeekFrom};
        spool.seek(SeekFrom::Start(0))?;
        std::io::copy(spool, &mut self.out)?;
        spool.seek(SeekFrom::End(0))?;
        if xml.contains("<testcase") {
            self.out.write_all(tail.as_bytes())?;
        } else {
            self.out.write_all(self.closing.as_bytes())?;
            self.out.write_all(tail.as_bytes())?;
        }
        self.out.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_are_iso_8601_utc() {
        assert_eq!(iso8601(0), "1970-01-01T00:00:00");
        assert_eq!(iso8601(951_782_400), "2000-02-29T00:00:00");
        assert_eq!(iso8601(1_795_384_693), "2026-11-22T21:58:13");
    }

    fn report(id: &str, outcome: &str) -> EvalReport {
        serde_json::from_value(serde_json::json!({
            "id": id, "file": "tests/demo.rs", "line": 3, "outcome": outcome,
            "assertions": [{"name": "includes(\"refund\")", "kind": "value", "severity": "gate",
              "score": 0.0, "passed": outcome != "failed", "reason": "not <found> & \"quoted\""}],
            "duration_ms": 12.5,
            "skip_reason": (outcome == "skipped").then_some("no key"),
            "usage": {"input_tokens": 0, "output_tokens": 0, "cache_read_tokens": 0},
            "runs": [], "reliability": {"n": 1, "c": 1, "pass_rate": 1.0, "pass_at_k": [1.0], "pass_hat_k": [1.0]},
            "min_pass_rate": 1.0
        }))
        .expect("a report")
    }

    /// The document quick-junit writes of the whole suite at once, as the reporter did before
    /// it spooled its cases.
    fn whole(junit: &Junit<Vec<u8>>, reports: &[EvalReport], suite: &SuiteReport) -> String {
        let mut testsuite = TestSuite::new(NAME);
        for report in reports {
            testsuite.add_test_case(test_case(report));
        }
        for id in &suite.unfinished {
            testsuite.add_test_case(unfinished_case(id, suite));
        }
        let time = duration(suite.duration_ms);
        testsuite.set_time(time);
        let timestamp = iso8601(
            junit
                .started
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_secs()),
        );
        for (key, value) in [
            ("timestamp", timestamp),
            ("hostname", xml_safe(&hostname()).into_owned()),
            ("id", "0".to_string()),
            ("package", NAME.to_string()),
        ] {
            testsuite.extra.insert(key.into(), value.into());
        }
        let mut document = Report::new(NAME);
        document.set_time(time).add_test_suite(testsuite);
        document.to_string().expect("serializable")
    }

    #[test]
    fn the_spooled_document_is_the_one_quick_junit_writes_whole() {
        let reports = [
            report("demo::a", "passed"),
            report("demo::b", "failed"),
            report("demo::c", "skipped"),
        ];
        for (reports, unfinished) in [
            (&reports[..], vec![]),
            (&reports[..], vec!["demo::d".to_string()]),
            (&reports[..0], vec![]),
            (&reports[..0], vec!["demo::d".to_string()]),
        ] {
            let mut junit = Junit::new(Vec::new());
            for report in reports {
                junit.on_eval_complete(report).expect("spooled");
            }
            let mut suite = SuiteReport::new(vec![], 0, false, 1500.0);
            if !unfinished.is_empty() {
                suite = suite.interrupted_by(crate::run::report::Signal::Terminate, unfinished);
            }
            junit.on_run_complete(&suite).expect("written");
            let expected = whole(&junit, reports, &suite);
            // A second call writes the same document again.
            junit.on_run_complete(&suite).expect("written");
            let written = String::from_utf8(junit.into_inner()).expect("UTF-8");
            assert_eq!(written, format!("{expected}{expected}"));
        }
    }

    #[test]
    fn durations_never_panic() {
        assert_eq!(duration(1234.0), Duration::from_millis(1234));
        assert_eq!(duration(-1.0), Duration::ZERO);
        assert_eq!(duration(f64::NAN), Duration::ZERO);
        assert_eq!(duration(f64::INFINITY), Duration::ZERO);
    }
}

#[cfg(test)]
mod doc_examples {
    //! The examples that were this file's doc tests while its items were public.

    #[test]
    fn example_1() {
        use crate::output::reporter::{Junit, Reporter, SuiteReport};

        let mut junit = Junit::new(Vec::new());
        junit
            .on_run_complete(&SuiteReport::new(vec![], 0, false, 1.0))
            .unwrap();
        let xml = String::from_utf8(junit.into_inner()).unwrap();
        assert!(xml.contains(r#"<testsuites name="niceeval" tests="0""#));
    }
}
