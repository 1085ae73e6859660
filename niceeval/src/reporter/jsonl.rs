//! The JSONL reporter: one [`EvalReport`] per line, written and flushed as each eval finishes,
//! so a crash loses nothing that finished.

use std::io::Write;

use super::Reporter;
use crate::report::EvalReport;

/// Writes one JSON line per finished eval.
///
/// ```
/// use niceeval::reporter::{Jsonl, Reporter};
///
/// let mut out = Vec::new();
/// let reporter = Jsonl::new(&mut out);
/// # drop(reporter);
/// ```
pub struct Jsonl<W: Write + Send> {
    out: W,
}

impl<W: Write + Send> Jsonl<W> {
    /// A reporter writing to `out`.
    pub fn new(out: W) -> Self {
        Jsonl { out }
    }

    /// The writer back.
    pub fn into_inner(self) -> W {
        self.out
    }
}

impl Jsonl<std::fs::File> {
    /// A reporter writing to a new file at `path` (parent directories created).
    pub fn create(path: impl AsRef<std::path::Path>) -> std::io::Result<Self> {
        Ok(Jsonl::new(super::create_file(path.as_ref())?))
    }
}

impl<W: Write + Send> Reporter for Jsonl<W> {
    fn on_eval_complete(&mut self, report: &EvalReport) -> std::io::Result<()> {
        let mut line = serde_json::to_vec(report).map_err(std::io::Error::other)?;
        line.push(b'\n');
        self.out.write_all(&line)?;
        self.out.flush()
    }
}
