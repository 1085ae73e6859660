//! The JUnit XML reporter: one `<testcase>` per eval, failures and errors carrying the rendered
//! assertion report, skips carrying their reason — the dialect Jenkins, GitLab and GitHub
//! Actions test-report actions read. The `<testsuite>` carries every attribute Ant's schema
//! requires (`name`, `tests`, `failures`, `errors`, `time`, `timestamp`, `hostname`, `id`,
//! `package`), for the strictest consumers.

use std::fmt::Write as _;
use std::io::Write;

use super::{Reporter, SuiteReport, SuiteStart};
use crate::outcome::Outcome;
use crate::report::EvalReport;

/// Writes a JUnit XML document when the suite completes.
///
/// ```
/// use niceeval::reporter::{Junit, Reporter, SuiteReport};
///
/// let mut junit = Junit::new(Vec::new());
/// junit.on_run_complete(&SuiteReport::new(vec![], 0, false, 1.0)).unwrap();
/// let xml = String::from_utf8(junit.into_inner()).unwrap();
/// assert!(xml.contains(r#"<testsuites name="niceeval" tests="0""#));
/// ```
pub struct Junit<W: Write + Send> {
    out: W,
    cases: String,
    tests: usize,
    failures: usize,
    errors: usize,
    skipped: usize,
    started: std::time::SystemTime,
}

impl<W: Write + Send> Junit<W> {
    /// A reporter writing to `out`.
    pub fn new(out: W) -> Self {
        Junit {
            out,
            cases: String::new(),
            tests: 0,
            failures: 0,
            errors: 0,
            skipped: 0,
            started: std::time::SystemTime::now(),
        }
    }

    /// The writer back.
    pub fn into_inner(self) -> W {
        self.out
    }
}

impl Junit<std::fs::File> {
    /// A reporter writing to a new file at `path` (parent directories created).
    pub fn create(path: impl AsRef<std::path::Path>) -> std::io::Result<Self> {
        Ok(Junit::new(super::create_file(path.as_ref())?))
    }
}

/// Escapes text for XML attributes and content, dropping characters XML 1.0 forbids.
pub(crate) fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\t' | '\n' | '\r' => out.push(c),
            c if (c as u32) < 0x20 || c == '\u{FFFE}' || c == '\u{FFFF}' => {
                let _ = write!(out, "\\u{{{:x}}}", c as u32);
            }
            c => out.push(c),
        }
    }
    out
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

impl<W: Write + Send> Reporter for Junit<W> {
    fn on_run_start(&mut self, _start: &SuiteStart) -> std::io::Result<()> {
        self.started = std::time::SystemTime::now();
        Ok(())
    }

    fn on_eval_complete(&mut self, report: &EvalReport) -> std::io::Result<()> {
        self.tests += 1;
        let (classname, name) = report
            .id
            .rsplit_once("::")
            .unwrap_or(("niceeval", report.id.as_str()));
        let _ = write!(
            self.cases,
            "    <testcase name=\"{}\" classname=\"{}\" time=\"{:.3}\" file=\"{}\" line=\"{}\"",
            escape(name),
            escape(classname),
            report.duration_ms / 1000.0,
            escape(&report.file),
            report.line
        );
        match report.outcome {
            Outcome::Passed => self.cases.push_str("/>\n"),
            Outcome::Skipped => {
                self.skipped += 1;
                let _ = write!(
                    self.cases,
                    ">\n      <skipped message=\"{}\"/>\n    </testcase>\n",
                    escape(report.skip_reason.as_deref().unwrap_or("skipped"))
                );
            }
            Outcome::Failed => {
                let (tag, message) = match &report.error {
                    Some(error) => {
                        self.errors += 1;
                        ("error", error.message.clone())
                    }
                    None => {
                        self.failures += 1;
                        let failed: Vec<&str> = report
                            .assertions
                            .iter()
                            .filter(|a| !a.passed)
                            .map(|a| a.name.as_str())
                            .collect();
                        ("failure", format!("did not pass: {}", failed.join(", ")))
                    }
                };
                let _ = write!(
                    self.cases,
                    ">\n      <{tag} message=\"{}\" type=\"{tag}\">{}</{tag}>\n    </testcase>\n",
                    escape(&message),
                    escape(&report.render())
                );
            }
        }
        Ok(())
    }

    fn on_run_complete(&mut self, suite: &SuiteReport) -> std::io::Result<()> {
        let counts = format!(
            "tests=\"{}\" failures=\"{}\" errors=\"{}\" skipped=\"{}\" time=\"{:.3}\"",
            self.tests,
            self.failures,
            self.errors,
            self.skipped,
            suite.duration_ms / 1000.0
        );
        let timestamp = iso8601(
            self.started
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_secs()),
        );
        write!(
            self.out,
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"niceeval\" {counts}>\n  <testsuite name=\"niceeval\" {counts} timestamp=\"{timestamp}\" hostname=\"{}\" id=\"0\" package=\"niceeval\">\n{}  </testsuite>\n</testsuites>\n",
            escape(&hostname()),
            self.cases
        )?;
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

    #[test]
    fn escapes_markup_and_control_characters() {
        assert_eq!(
            escape("a<b & \"c\"\u{1}"),
            "a&lt;b &amp; &quot;c&quot;\\u{1}"
        );
    }
}
