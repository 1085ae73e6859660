//! The JSONL reporter: one [`EvalReport`] per line, written and flushed as each eval finishes,
//! so a crash loses nothing that finished.

use std::io::Write;

use super::Reporter;
use crate::run::report::{EvalReport, Versioned};

/// Writes one JSON line per finished eval.
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
        let mut line =
            serde_json::to_vec(&Versioned::new(report)).map_err(std::io::Error::other)?;
        line.push(b'\n');
        self.out.write_all(&line)?;
        self.out.flush()
    }

    /// Each report is written as it comes.
    fn reads_evals(&self) -> bool {
        false
    }
}

#[cfg(test)]
mod doc_examples {
    //! The examples that were this file's doc tests while its items were public.

    #[test]
    fn example_1() {
        use crate::output::reporter::{Jsonl, Reporter};
        let report: crate::run::report::EvalReport = serde_json::from_value(serde_json::json!({
          "id": "demo::refund", "file": "tests/demo.rs", "line": 3, "outcome": "passed",
          "assertions": [], "duration_ms": 12.5,
          "usage": {"input_tokens": 0, "output_tokens": 0, "cache_read_tokens": 0},
          "runs": [], "reliability": {"n": 1, "c": 1, "pass_rate": 1.0, "pass_at_k": [1.0], "pass_hat_k": [1.0]},
          "min_pass_rate": 1.0 })).unwrap();

        let mut jsonl = Jsonl::new(Vec::new());
        jsonl.on_eval_complete(&report).unwrap(); // written and flushed right away
        let text = String::from_utf8(jsonl.into_inner()).unwrap();
        let back: crate::run::report::EvalReport = serde_json::from_str(text.trim_end()).unwrap();
        assert_eq!(back, report);
    }
}
