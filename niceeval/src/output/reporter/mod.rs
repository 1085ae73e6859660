//! Reporters: where results go. The [`Reporter`] trait receives the start of a suite, every
//! finished eval, and the suite's end; built-ins write to any `io::Write`, so tests capture them
//! in a `Vec<u8>`.
//!
//! A reporter sees each full [`EvalReport`] once, as it finishes; the suite keeps only an
//! [`EvalSummary`] per eval, so memory does not grow with transcripts.
//!
//! Reporters only render: the suite's data ([`SuiteReport`] and its parts) and its text — an
//! eval's report, the comparison with a baseline, the tables each format draws — come from the
//! report layer, so every format says the same thing.

pub(crate) mod console;
#[cfg(feature = "html")]
pub(crate) mod html;
pub(crate) mod jsonl;
pub(crate) mod junit;
pub(crate) mod markdown;
mod markup;
#[cfg(feature = "otel")]
pub(crate) mod otlp;

// The built-in reporters are the suite runner's (`--junit`, `--markdown`, `--html`, `--jsonl`);
// users write reporters of their own against `Reporter` and the suite's data.
pub(crate) use console::Console;
#[cfg(feature = "html")]
pub(crate) use html::Html;
pub(crate) use jsonl::Jsonl;
pub(crate) use junit::Junit;
pub(crate) use markdown::Markdown;

// The suite's data lives with the reports (`report/suite.rs`); reporters render it.
pub use crate::run::definition::MatrixCell;
pub use crate::run::report::{
    DatasetSummary, EvalIds, EvalSummary, Flaky, Progress, Signal, SuiteReport, SuiteStart,
};

use crate::run::report::EvalReport;

/// The most failed evals whose whole report the console and the Markdown summary keep for the
/// end of a run; past it they count the rest, so a run where everything fails holds a bounded
/// amount of text (every report is in the results file).
pub(crate) const MAX_FAILURE_DETAILS: usize = 100;

/// Creates a report file, with its parent directories.
pub(crate) fn create_file(path: &std::path::Path) -> std::io::Result<std::fs::File> {
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent)?;
    }
    std::fs::File::create(path)
}

/// A report file that appears whole or not at all: what is written goes to a temporary file
/// next to it (`.NAME.XXXXXX.tmp`, same directory, so same file system), and [`flush`] renames
/// that file into place. A reader — or a process killed or interrupted halfway — never sees
/// a partial report: the file at `path` is the previous complete one, or the new complete one.
///
/// Write the whole document, then flush once: each flush publishes what was written since
/// the last one as the new content of `path`. Dropped without a flush, nothing is published
/// and the temporary file is removed. The HTML, JUnit and Markdown reporters' `create` write
/// through one; JSONL and the results file append line by line instead, and survive a crash
/// line by line.
///
/// [`flush`]: std::io::Write::flush
#[derive(Debug)]
pub(crate) struct ReportFile {
    path: std::path::PathBuf,
    dir: std::path::PathBuf,
    temporary: Option<tempfile::NamedTempFile>,
}

impl ReportFile {
    /// A report file to be written at `path`. Creates the parent directories and checks, by
    /// creating and removing a temporary file there, that the directory is writable, so a bad
    /// path fails before the suite runs rather than after.
    pub fn create(path: impl AsRef<std::path::Path>) -> std::io::Result<Self> {
        let path = path.as_ref().to_path_buf();
        let dir = match path.parent().filter(|p| !p.as_os_str().is_empty()) {
            Some(parent) => {
                std::fs::create_dir_all(parent)?;
                parent.to_path_buf()
            }
            None => std::path::PathBuf::from("."),
        };
        let file = ReportFile {
            path,
            dir,
            temporary: None,
        };
        drop(file.temporary_file()?);
        Ok(file)
    }

    fn temporary_file(&self) -> std::io::Result<tempfile::NamedTempFile> {
        let name = self
            .path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| "report".to_string());
        let prefix = format!(".{name}.");
        let mut builder = tempfile::Builder::new();
        builder.prefix(&prefix).suffix(".tmp");
        // A report is as readable as any file the user creates (the umask applies), not
        // owner-only like a temporary file.
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            builder.permissions(std::fs::Permissions::from_mode(0o666));
        }
        builder.tempfile_in(&self.dir)
    }
}

impl std::io::Write for ReportFile {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        let file = match self.temporary.take() {
            Some(file) => file,
            None => self.temporary_file()?,
        };
        self.temporary.insert(file).write(bytes)
    }

    /// Publishes what was written: syncs the temporary file and renames it to the report's
    /// path. Without anything written since the last flush, does nothing.
    fn flush(&mut self) -> std::io::Result<()> {
        let Some(mut file) = self.temporary.take() else {
            return Ok(());
        };
        file.flush()?;
        file.as_file().sync_all()?;
        file.persist(&self.path).map_err(|e| e.error)?;
        Ok(())
    }
}

/// Receives results as a suite runs. Errors are reported on stderr by the runner and do not
/// stop the suite.
///
/// The runner calls `on_run_start` once, `on_eval_complete` once per finished eval (in the
/// order they finish; the full report, transcript included, is dropped afterwards), and
/// `on_run_complete` once at the end — also after Ctrl-C, with what finished.
///
/// ```
/// use niceeval::reporter::{Reporter, SuiteReport};
/// use niceeval::EvalReport;
///
/// /// Prints one line per eval that did not pass.
/// struct NotPassed<W: std::io::Write + Send>(W);
///
/// impl<W: std::io::Write + Send> Reporter for NotPassed<W> {
///     fn on_eval_complete(&mut self, report: &EvalReport) -> std::io::Result<()> {
///         if report.outcome != niceeval::Outcome::Passed {
///             writeln!(self.0, "{} {}", report.id, report.outcome)?;
///         }
///         Ok(())
///     }
/// }
///
/// let mut reporter = NotPassed(Vec::new());
/// reporter.on_run_complete(&SuiteReport::new(vec![], 0, false, 0.0)).unwrap();
/// assert!(reporter.0.is_empty());
/// ```
pub trait Reporter: Send {
    /// The suite is about to start.
    fn on_run_start(&mut self, start: &SuiteStart) -> std::io::Result<()> {
        let _ = start;
        Ok(())
    }

    /// One eval finished (all its runs).
    fn on_eval_complete(&mut self, report: &EvalReport) -> std::io::Result<()>;

    /// The suite finished (or was interrupted).
    fn on_run_complete(&mut self, suite: &SuiteReport) -> std::io::Result<()> {
        let _ = suite;
        Ok(())
    }

    /// While evals run, about once a second: what is running, for how long, and which evals
    /// have just passed the `[run] slow_after` mark (the console names them, as libtest does
    /// after 60 s, and redraws its progress line).
    fn on_progress(&mut self, progress: &Progress) -> std::io::Result<()> {
        let _ = progress;
        Ok(())
    }

    /// Whether `on_run_complete` reads [`SuiteReport::evals`], the summary of every finished
    /// eval (to write a table of them). The suite runner keeps the summaries only when one of
    /// its reporters reads them (or a baseline is compared or saved); otherwise the suite
    /// report has its totals, datasets and flaky evals, and no summary: a quiet run of
    /// 100,000 evals keeps no 100,000 summaries. A reporter that does not say reads them.
    fn reads_evals(&self) -> bool {
        true
    }
}

impl<R: Reporter + ?Sized> Reporter for Box<R> {
    fn on_run_start(&mut self, start: &SuiteStart) -> std::io::Result<()> {
        (**self).on_run_start(start)
    }
    fn on_eval_complete(&mut self, report: &EvalReport) -> std::io::Result<()> {
        (**self).on_eval_complete(report)
    }
    fn on_run_complete(&mut self, suite: &SuiteReport) -> std::io::Result<()> {
        (**self).on_run_complete(suite)
    }
    fn on_progress(&mut self, progress: &Progress) -> std::io::Result<()> {
        (**self).on_progress(progress)
    }
    fn reads_evals(&self) -> bool {
        (**self).reads_evals()
    }
}

#[cfg(test)]
mod doc_examples {
    //! The examples that were this file's doc tests while its items were public.

    #[test]
    fn example_1() -> Result<(), Box<dyn std::error::Error>> {
        use crate::output::reporter::ReportFile;
        use std::io::Write;

        let dir = tempfile::tempdir()?;
        let path = dir.path().join("reports/summary.md");
        let mut file = ReportFile::create(&path)?; // directories created, writability checked
        file.write_all(b"## niceeval\n")?;
        assert!(!path.exists()); // nothing is visible before the flush
        file.flush()?;
        assert_eq!(std::fs::read_to_string(&path)?, "## niceeval\n");
        Ok(())
    }
}
