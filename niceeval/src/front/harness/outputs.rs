//! The one output pipeline of a process: the list of reporters every finished eval goes to,
//! built the same way whichever front end runs the evals — the suite runner (`main!()`, from
//! its arguments) or plain `cargo test` (`libtest`, from the environment) — so a new output is
//! wired once.
//!
//! The list, in the order each finished eval reaches it: the results file
//! ([`crate::output::results::ResultsFile`]), the run history (feature `history`), the report files asked for (JSONL, JUnit, Markdown,
//! HTML), the reporters given to `main!`, the OpenTelemetry export (`--otlp-endpoint` or
//! `[trace] export`), and last the front end's own terminal reporter (the suite runner's
//! console, `cargo test`'s exit notice) — so whatever the terminal has announced is on disk.

use std::path::{Path, PathBuf};

use crate::output::reporter::{Jsonl, Junit, Markdown, Reporter};
use crate::run::definition::EvalDefinition;
use crate::run::report::{EvalReport, SuiteReport, SuiteStart};

/// A report file that cannot be created, or an output that cannot be set up.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum OutputsError {
    /// A report file asked for (`--jsonl`, `NICEEVAL_JUNIT`, …) cannot be created.
    #[error("cannot write {}: {source}", path.display())]
    ReportFile {
        /// The file asked for.
        path: PathBuf,
        /// Why it cannot be created.
        #[source]
        source: std::io::Error,
    },
}

/// The outputs asked for besides the results file: report files and a trace endpoint.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Requested {
    /// `--jsonl` / `NICEEVAL_JSONL`.
    pub jsonl: Option<PathBuf>,
    /// `--junit` / `NICEEVAL_JUNIT`.
    pub junit: Option<PathBuf>,
    /// `--markdown` / `NICEEVAL_MARKDOWN`.
    pub markdown: Option<PathBuf>,
    /// `--html` / `NICEEVAL_HTML`.
    #[cfg(feature = "html")]
    pub html: Option<PathBuf>,
    /// `--otlp-endpoint` / `NICEEVAL_OTLP_ENDPOINT`; else `[trace] export` of the crate.
    pub otlp_endpoint: Option<String>,
}

impl Requested {
    /// What the suite runner's arguments ask for.
    pub(crate) fn of_args(args: &super::Args) -> Self {
        Requested {
            jsonl: args.jsonl.clone(),
            junit: args.junit.clone(),
            markdown: args.markdown.clone(),
            #[cfg(feature = "html")]
            html: args.html.clone(),
            otlp_endpoint: args.otlp_endpoint.clone(),
        }
    }

    /// What the environment asks a plain `cargo test` process for: `NICEEVAL_JSONL`,
    /// `NICEEVAL_JUNIT`, `NICEEVAL_MARKDOWN`, `NICEEVAL_HTML` (files written as the suite
    /// runner's `--jsonl`, … write them; the whole-file ones when the process exits) and
    /// `NICEEVAL_OTLP_ENDPOINT` (as `--otlp-endpoint`).
    pub(crate) fn of_env() -> Self {
        let path = |name: &str| {
            std::env::var_os(name)
                .filter(|v| !v.is_empty())
                .map(PathBuf::from)
        };
        Requested {
            jsonl: path("NICEEVAL_JSONL"),
            junit: path("NICEEVAL_JUNIT"),
            markdown: path("NICEEVAL_MARKDOWN"),
            #[cfg(feature = "html")]
            html: path("NICEEVAL_HTML"),
            otlp_endpoint: std::env::var("NICEEVAL_OTLP_ENDPOINT")
                .ok()
                .filter(|v| !v.is_empty()),
        }
    }
}

/// The reporters of one process (one crate's evals), in delivery order.
pub(crate) struct Outputs {
    reporters: Vec<Box<dyn Reporter>>,
    /// The results file's path, when one is written.
    results: Option<PathBuf>,
    /// How many reporters at the front already hold a resumed run's records (the results file).
    written: usize,
}

impl Outputs {
    /// Builds the list for the evals of the crate at `manifest_dir` (`None`: no eval selected,
    /// no results file): the results file (compacted to what `all_defs` define and the ids
    /// `deferred` names, the deferred cases of the run), the files and
    /// trace endpoint `requested` asks for, `extra`, and `terminal` last. A results file that
    /// cannot be opened is said on stderr and left out (losing it must not stop the evals); a
    /// report file that cannot be created is an error.
    pub(crate) fn build(
        manifest_dir: Option<&str>,
        all_defs: &[&'static EvalDefinition],
        deferred: impl FnOnce() -> Vec<String>,
        requested: &Requested,
        extra: Vec<Box<dyn Reporter>>,
        terminal: Box<dyn Reporter>,
    ) -> Result<Self, OutputsError> {
        let mut reporters: Vec<Box<dyn Reporter>> = Vec::new();
        let mut results = None;
        if let Some(manifest_dir) = manifest_dir {
            match crate::output::results::ResultsFile::open_defining(
                Path::new(manifest_dir),
                all_defs,
                deferred,
            ) {
                Ok(Some(file)) => {
                    results = Some(file.path().to_path_buf());
                    reporters.push(Box::new(file));
                }
                Ok(None) => {}
                Err(e) => eprintln!("niceeval: cannot write the results file: {e}"),
            }
        }
        let written = reporters.len();
        // The run history: after the results file, so a run it records is in the file too.
        #[cfg(feature = "history")]
        if let Some(manifest_dir) = manifest_dir
            && let Some(recorder) = crate::output::history::Recorder::for_run(
                Path::new(manifest_dir),
                results.as_deref(),
            )
        {
            reporters.push(Box::new(recorder));
        }
        // The page's trends come from the history of the crate (the current directory's, in
        // report mode).
        reporters.extend(file_reporters(
            requested,
            Path::new(manifest_dir.unwrap_or(".")),
        )?);
        reporters.extend(extra);
        #[cfg(feature = "otel")]
        {
            let configured = || {
                manifest_dir.and_then(|dir| {
                    crate::config::Config::for_manifest_dir(dir)
                        .ok()
                        .and_then(|c| c.trace.export.clone())
                })
            };
            if let Some(endpoint) = requested.otlp_endpoint.clone().or_else(configured) {
                reporters.push(Box::new(crate::output::reporter::otlp::Otlp { endpoint }));
            }
        }
        reporters.push(terminal);
        Ok(Outputs {
            reporters,
            results,
            written,
        })
    }

    /// The results file written to, when there is one.
    pub(crate) fn results_path(&self) -> Option<&Path> {
        self.results.as_deref()
    }

    /// How many reporters at the front already hold a resumed run's records.
    pub(crate) fn written(&self) -> usize {
        self.written
    }

    /// The reporters, for the suite runner's loop.
    pub(crate) fn reporters(&mut self) -> &mut [Box<dyn Reporter>] {
        &mut self.reporters
    }

    /// The suite starts: every reporter hears of it.
    pub(crate) fn start(&mut self, start: &SuiteStart) {
        deliver(&mut self.reporters, |r| r.on_run_start(start));
    }

    /// One eval finished: every reporter gets it, in order.
    pub(crate) fn eval(&mut self, report: &EvalReport) {
        deliver(&mut self.reporters, |r| r.on_eval_complete(report));
    }

    /// The suite finished: every reporter gets its end.
    pub(crate) fn finish(&mut self, suite: &SuiteReport) {
        deliver(&mut self.reporters, |r| r.on_run_complete(suite));
    }
}

/// Hands one call to every reporter; a reporter's error is said on stderr and stops nothing.
pub(crate) fn deliver(
    reporters: &mut [Box<dyn Reporter>],
    mut call: impl FnMut(&mut dyn Reporter) -> std::io::Result<()>,
) {
    for reporter in reporters.iter_mut() {
        if let Err(e) = call(reporter.as_mut()) {
            eprintln!("niceeval: a reporter failed: {e}");
        }
    }
}

/// How many runs back the HTML page's trends go.
#[cfg(all(feature = "html", feature = "history"))]
pub(crate) const TREND_RUNS: usize = 30;

/// The report files `requested` names; the HTML page with the trends of the history of the
/// crate at `dir` (feature `history`).
fn file_reporters(
    requested: &Requested,
    #[cfg_attr(
        not(all(feature = "html", feature = "history")),
        allow(unused_variables)
    )]
    dir: &Path,
) -> Result<Vec<Box<dyn Reporter>>, OutputsError> {
    type Make = fn(&Path) -> std::io::Result<Box<dyn Reporter>>;
    let mut reporters: Vec<Box<dyn Reporter>> = Vec::new();
    let files: &[(&Option<PathBuf>, Make)] = &[
        (&requested.jsonl, |p| Ok(Box::new(Jsonl::create(p)?))),
        (&requested.junit, |p| Ok(Box::new(Junit::create(p)?))),
        (&requested.markdown, |p| Ok(Box::new(Markdown::create(p)?))),
    ];
    for (path, make) in files {
        if let Some(path) = *path {
            reporters.push(make(path).map_err(|source| OutputsError::ReportFile {
                path: path.clone(),
                source,
            })?);
        }
    }
    #[cfg(feature = "html")]
    if let Some(path) = &requested.html {
        let html = crate::output::reporter::Html::create(path).map_err(|source| {
            OutputsError::ReportFile {
                path: path.clone(),
                source,
            }
        })?;
        #[cfg(feature = "history")]
        let html = html.with_history(history_source(dir.to_path_buf()));
        reporters.push(Box::new(html));
    }
    Ok(reporters)
}

/// The trends of the history of the crate at `dir` for the evals of a page, over its last
/// [`TREND_RUNS`] runs, marked by its `[compare]` rule; nothing when the history is off or has
/// no file yet (a page never creates one).
#[cfg(all(feature = "html", feature = "history"))]
fn history_source(dir: PathBuf) -> crate::output::reporter::html::HistorySource {
    Box::new(move |ids| {
        use crate::output::history::{History, MarkRule, Place, store_path};
        let Place::At(path) = store_path(&dir) else {
            return None;
        };
        if !path.is_file() {
            return None;
        }
        let rule = crate::config::Config::discover(&dir)
            .map(|config| MarkRule::of(&config.compare))
            .unwrap_or_default();
        History::open(&path)
            .and_then(|history| history.for_page(ids, TREND_RUNS, &rule))
            .map_err(|e| eprintln!("niceeval: the page shows no trends: {e}"))
            .ok()
    })
}
