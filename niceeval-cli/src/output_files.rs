//! `niceeval eval -o FILE` (repeatable): which report each extension writes. `.jsonl`, `.xml`
//! (JUnit), `.md` and `.html` are the runner's own reports (`--jsonl`, `--junit`,
//! `--markdown`, `--html`; a second file of one kind is a copy of the first); `.json`,
//! `.yaml` / `.yml` (promptfoo's output file) and `.csv` are written here when the run ends,
//! by a reporter of the run.

use std::path::{Path, PathBuf};

use niceeval::__workspace::harness::Args;
use niceeval::EvalReport;
use niceeval::reporter::{Reporter, SuiteReport, SuiteStart};

use crate::promptfoo_output;

/// A bad `-o`.
#[derive(Debug, thiserror::Error)]
pub enum OutputError {
    /// An extension niceeval writes nothing for.
    #[error(
        "-o {0}: niceeval writes .json, .jsonl, .csv, .yaml, .yml, .html, .xml (JUnit) and .md files"
    )]
    Extension(PathBuf),
    /// A file that could not be written.
    #[error("-o {path}: cannot write it: {source}")]
    Write {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
}

/// promptfoo's formats, written here.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Format {
    Json,
    Yaml,
    Csv,
}

/// What the `-o` files of a run need: the runner's report slots filled in `Args`, the copies
/// to make afterwards, and the reporter of promptfoo's formats.
#[derive(Debug, Default)]
pub struct Outputs {
    copies: Vec<(PathBuf, PathBuf)>,
    written: Vec<(PathBuf, Format)>,
}

impl Outputs {
    /// Sorts `files` by extension; the runner's reports go into `args`.
    pub fn plan(files: &[PathBuf], args: &mut Args) -> Result<Outputs, OutputError> {
        let mut outputs = Outputs::default();
        for file in files {
            let ext = file
                .extension()
                .and_then(|e| e.to_str())
                .map(str::to_ascii_lowercase)
                .unwrap_or_default();
            let slot = match ext.as_str() {
                "jsonl" => &mut args.jsonl,
                "xml" => &mut args.junit,
                "md" => &mut args.markdown,
                "html" => &mut args.html,
                "json" => {
                    outputs.written.push((file.clone(), Format::Json));
                    continue;
                }
                "yaml" | "yml" => {
                    outputs.written.push((file.clone(), Format::Yaml));
                    continue;
                }
                "csv" => {
                    outputs.written.push((file.clone(), Format::Csv));
                    continue;
                }
                _ => return Err(OutputError::Extension(file.clone())),
            };
            match slot {
                Some(first) => outputs.copies.push((first.clone(), file.clone())),
                None => *slot = Some(file.clone()),
            }
        }
        Ok(outputs)
    }

    /// The reporter writing promptfoo's formats, when any was asked for; `config` is the
    /// first suite file.
    pub fn reporter(&self, config: Option<&Path>) -> Option<Box<dyn Reporter>> {
        (!self.written.is_empty()).then(|| {
            Box::new(PromptfooFiles {
                files: self.written.clone(),
                config: config.map(Path::to_path_buf),
                reports: Vec::new(),
                started: String::new(),
                began: std::time::Instant::now(),
            }) as Box<dyn Reporter>
        })
    }

    /// Makes the copies, once the run wrote the first file of each kind.
    pub fn finish(&self) -> Result<(), OutputError> {
        for (from, to) in &self.copies {
            if from.exists() {
                std::fs::copy(from, to).map_err(|source| OutputError::Write {
                    path: to.clone(),
                    source,
                })?;
            }
        }
        Ok(())
    }
}

/// Collects the run's reports and writes the `.json` / `.yaml` / `.csv` files at its end.
struct PromptfooFiles {
    files: Vec<(PathBuf, Format)>,
    config: Option<PathBuf>,
    reports: Vec<EvalReport>,
    started: String,
    began: std::time::Instant,
}

impl Reporter for PromptfooFiles {
    fn on_run_start(&mut self, _start: &SuiteStart) -> std::io::Result<()> {
        self.began = std::time::Instant::now();
        Ok(())
    }

    fn on_eval_complete(&mut self, report: &EvalReport) -> std::io::Result<()> {
        if self.started.is_empty()
            && let Some(run) = &report.run
        {
            self.started = run.started.clone();
        }
        self.reports.push(report.clone());
        Ok(())
    }

    fn on_run_complete(&mut self, _suite: &SuiteReport) -> std::io::Result<()> {
        // The order of the file: test, then prompt × provider column.
        self.reports.sort_by_key(|r| {
            r.matrix
                .as_ref()
                .map(|m| (m.test, m.prompt, m.provider))
                .unwrap_or_default()
        });
        let config = self
            .config
            .as_deref()
            .and_then(|p| std::fs::read_to_string(p).ok())
            .and_then(|text| yaml_serde::from_str::<serde_json::Value>(&text).ok())
            .unwrap_or(serde_json::Value::Null);
        let duration = self.began.elapsed().as_secs_f64() * 1000.0;
        let document =
            promptfoo_output::output_file(&self.reports, config, &self.started, duration);
        for (path, format) in &self.files {
            let text = match format {
                Format::Json => {
                    serde_json::to_string_pretty(&document).map_err(std::io::Error::other)?
                }
                Format::Yaml => yaml_serde::to_string(&document).map_err(std::io::Error::other)?,
                Format::Csv => promptfoo_output::csv(&self.reports),
            };
            if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
                std::fs::create_dir_all(parent)?;
            }
            std::fs::write(path, text).map_err(|e| {
                std::io::Error::new(e.kind(), format!("-o {}: {e}", path.display()))
            })?;
        }
        Ok(())
    }
}
