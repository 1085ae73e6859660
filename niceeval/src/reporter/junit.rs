//! The JUnit XML reporter: one `<testcase>` per eval, failures and errors carrying the rendered
//! assertion report, skips carrying their reason — the dialect Jenkins, GitLab and GitHub
//! Actions test-report actions read.

use std::fmt::Write as _;
use std::io::Write;

use super::{Reporter, SuiteReport};
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

impl<W: Write + Send> Reporter for Junit<W> {
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
                        ("error", error.clone())
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
        write!(
            self.out,
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"niceeval\" {counts}>\n  <testsuite name=\"niceeval\" {counts}>\n{}  </testsuite>\n</testsuites>\n",
            self.cases
        )?;
        self.out.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_markup_and_control_characters() {
        assert_eq!(
            escape("a<b & \"c\"\u{1}"),
            "a&lt;b &amp; &quot;c&quot;\\u{1}"
        );
    }
}
