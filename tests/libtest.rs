//! Reading the output of a libtest harness (`cargo test`'s default test runner): the
//! `test NAME ... RESULT` lines, the final `test result:` counts, and the captured output of
//! each failed test.

/// libtest's stdout, parsed on demand.
#[derive(Debug, Clone, Copy)]
pub struct Libtest<'a> {
    stdout: &'a str,
}

/// The final `test result:` line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Summary {
    /// `ok` (true) or `FAILED` (false).
    pub ok: bool,
    /// Tests that passed.
    pub passed: u32,
    /// Tests that failed.
    pub failed: u32,
    /// Tests marked `#[ignore]`.
    pub ignored: u32,
    /// Tests the filter left out.
    pub filtered_out: u32,
}

impl<'a> Libtest<'a> {
    /// Wraps a harness's stdout.
    pub fn new(stdout: &'a str) -> Self {
        Libtest { stdout }
    }

    /// Every `test NAME ... RESULT` line, in the order printed, as `(NAME, RESULT)`.
    pub fn results(&self) -> Vec<(&'a str, &'a str)> {
        self.stdout
            .lines()
            .filter_map(|line| line.strip_prefix("test "))
            .filter_map(|rest| rest.rsplit_once(" ... "))
            .collect()
    }

    /// The result (`ok`, `FAILED`, `ignored`) of the test named exactly `name`.
    pub fn result_of(&self, name: &str) -> Option<&'a str> {
        self.results()
            .into_iter()
            .find(|(n, _)| *n == name)
            .map(|(_, result)| result)
    }

    /// The final `test result:` line, parsed. `None` when there is none (the harness crashed).
    pub fn summary(&self) -> Option<Summary> {
        let line = self
            .stdout
            .lines()
            .rev()
            .find_map(|l| l.strip_prefix("test result: "))?;
        let (verdict, counts) = line.split_once(". ")?;
        let count = |label: &str| -> Option<u32> {
            counts
                .split("; ")
                .find_map(|part| part.strip_suffix(label))
                .and_then(|n| n.trim().parse().ok())
        };
        Some(Summary {
            ok: verdict == "ok",
            passed: count(" passed")?,
            failed: count(" failed")?,
            ignored: count(" ignored")?,
            filtered_out: count(" filtered out")?,
        })
    }

    /// What the failed test `name` printed, as libtest shows it under `---- NAME stdout ----`.
    pub fn failure_output(&self, name: &str) -> Option<&'a str> {
        let header = format!("---- {name} stdout ----\n");
        let start = self.stdout.find(&header)? + header.len();
        let rest = &self.stdout[start..];
        let end = [rest.find("\n---- "), rest.find("\nfailures:\n")]
            .into_iter()
            .flatten()
            .min()
            .unwrap_or(rest.len());
        Some(&rest[..end])
    }

    /// The names listed under the final `failures:` heading.
    pub fn failures(&self) -> Vec<&'a str> {
        let Some(start) = self.stdout.rfind("\nfailures:\n") else {
            return Vec::new();
        };
        self.stdout[start + "\nfailures:\n".len()..]
            .lines()
            .take_while(|l| l.starts_with("    "))
            .map(str::trim)
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const FAILED_RUN: &str = "\nrunning 2 tests\ntest a ... ok\ntest b ... FAILED\n\nfailures:\n\n---- b stdout ----\nreport of b\n  line 2\n\n\nfailures:\n    b\n\ntest result: FAILED. 1 passed; 1 failed; 0 ignored; 0 measured; 3 filtered out; finished in 0.01s\n\n";

    #[test]
    fn reads_lines_summary_and_failures() {
        let out = Libtest::new(FAILED_RUN);
        assert_eq!(out.results(), vec![("a", "ok"), ("b", "FAILED")]);
        assert_eq!(out.result_of("b"), Some("FAILED"));
        assert_eq!(out.result_of("c"), None);
        assert_eq!(
            out.summary(),
            Some(Summary {
                ok: false,
                passed: 1,
                failed: 1,
                ignored: 0,
                filtered_out: 3
            })
        );
        assert_eq!(out.failure_output("b"), Some("report of b\n  line 2\n\n"));
        assert_eq!(out.failure_output("a"), None);
        assert_eq!(out.failures(), vec!["b"]);
    }

    #[test]
    fn a_crashed_harness_has_no_summary() {
        assert_eq!(Libtest::new("running 1 test\n").summary(), None);
    }
}
