//! The suite runner behind [`crate::main!`]: selects the registered evals of a `harness = false`
//! test target with libtest-style arguments ([`Args`]), runs them concurrently on one Tokio
//! runtime with bounded concurrency ([`run_suite`]), streams every finished eval to the
//! reporters, and exits non-zero when any eval failed.
//!
//! Exit codes: 0 when every selected eval passed or was skipped, 101 when any failed (libtest's
//! code), 3 when none failed but the comparison with `--baseline` found a regression that
//! `[compare] fail_on` names ([`EXIT_REGRESSION`], see [`crate::run::compare`]), 2 for a bad command
//! line, a report file that cannot be created, a baseline that cannot be read or that is
//! another suite's (none of its evals belongs to this test target), 130 when
//! interrupted by Ctrl-C (SIGINT) and 143 when terminated by SIGTERM (what `timeout`, CI runners
//! cancelling a job and `docker stop` send; Unix) — 128 plus the signal's number, as a shell
//! reports a process the signal killed. On either signal the runner stops starting evals,
//! abandons the running ones, and still hands everything that finished to the reporters, with
//! the ids of the evals that did not finish: the console lists them, the Markdown and HTML
//! reports name them, JUnit has an `<error>` test case for each. The JSONL and results files
//! already hold each finished eval (they are written as each one finishes); the HTML, JUnit
//! and Markdown files are written to a temporary file and renamed into place
//! ([`crate::output::reporter::ReportFile`]), so even a SIGKILL never leaves a partial one.
//!
//! Reporters, in the order they hear of each finished eval: the results file
//! ([`crate::output::results::ResultsFile`]), the report files asked for on the command line
//! (`--jsonl`, `--junit`, `--markdown`, `--html`), the reporters given to `main!`, and last
//! the console — so whatever the console has announced is already on disk.
//!
//! With `--report`, the runner runs no eval: it merges results files and writes reports from
//! them ([`run_report`]).
//!
//! `--baseline FILE` compares the run with a baseline and puts the comparison into the suite
//! report before the reporters see its end; `--save-baseline FILE` writes the baseline of the
//! evals this run ran (a filtered run saves what it selected); `--rerun-failed` selects the
//! evals whose latest record in this target's results file failed.
//!
//! Evals marked `#[eval(snapshot)]` are checked against their insta snapshot after they finish
//! (see [`crate::output::snapshot::check_in_suite`]): the same `.snap` file their `#[test]` uses under
//! plain `cargo test`, so `cargo insta test` and `cargo insta review` work with either.

mod args;
mod baseline_options;
mod listed;
mod nextest;
pub(crate) mod outputs;
mod report_mode;
mod suite;

pub use args::Args;
pub use report_mode::{run_report, run_report_of};
pub use suite::run_suite;

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::output::reporter::{Console, Reporter};
use crate::run::data_eval::Deferred;
use crate::run::definition::{EvalDefinition, registered};
use listed::Listed;

/// Exit code when every eval passed or was skipped.
pub const EXIT_OK: i32 = 0;
/// Exit code when an eval failed (libtest's).
pub const EXIT_FAILED: i32 = 101;
/// Exit code for a bad command line.
pub const EXIT_USAGE: i32 = 2;
/// Exit code when every eval passed (or was skipped) but the comparison with the `--baseline`
/// found a regression that `[compare] fail_on` names. A failed eval's 101 wins over it.
pub const EXIT_REGRESSION: i32 = 3;
/// Exit code when the arguments select no eval at all (a mistyped `--tag` or filter): nothing
/// ran, so nothing passed. `NICEEVAL_ALLOW_EMPTY=1` makes an empty selection a success.
pub const EXIT_NOTHING_SELECTED: i32 = 4;
/// Exit code when Ctrl-C interrupted the run (128 + SIGINT).
pub const EXIT_INTERRUPTED: i32 = 130;

/// The process's arguments, or the exit code when they ask for help (printed) or are wrong
/// (the error printed).
pub fn process_args() -> Result<Args, i32> {
    match Args::parse(std::env::args().skip(1)) {
        Ok(Some(args)) => Ok(args),
        Ok(None) => {
            print!("{}", Args::help());
            Err(EXIT_OK)
        }
        Err(e) => {
            eprintln!("error: {e}");
            Err(EXIT_USAGE)
        }
    }
}

/// Runs the suite with the process's arguments and returns the exit code (see the module
/// docs). This is what [`crate::main!`] calls.
pub fn main_with(extra: Vec<Box<dyn Reporter>>) -> i32 {
    let args = match process_args() {
        Ok(args) => args,
        Err(code) => return code,
    };
    let evals: Vec<Listed> = registered().into_iter().map(Listed::Defined).collect();
    if args.report.is_some() {
        let own = crate::output::results::this_target();
        return report_mode::run_report_of(&args, &default_results_dir(&evals), Some(&own), extra);
    }
    match run_steps(&args, evals, extra) {
        Ok(code) | Err(code) => code,
    }
}

/// Where this test binary's crate keeps its results files: the directory of the first eval's
/// crate, else the crate cargo runs the binary for (`CARGO_MANIFEST_DIR`), else the current
/// directory.
fn default_results_dir(evals: &[Listed]) -> PathBuf {
    let manifest_dir = evals
        .first()
        .map(|d| PathBuf::from(d.manifest_dir()))
        .or_else(|| std::env::var_os("CARGO_MANIFEST_DIR").map(PathBuf::from))
        .unwrap_or_else(|| PathBuf::from("."));
    crate::output::results::results_dir(&manifest_dir)
}

/// Runs `evals` as `args` says, with the built-in reporters the arguments ask for plus `extra`,
/// and returns the exit code.
///
/// ```no_run
/// use niceeval::__workspace::harness::{run_with_args, Args};
///
/// let args = Args::parse(["--concurrency", "8", "smoke"]).unwrap().unwrap();
/// let code = run_with_args(&args, niceeval::__workspace::registered(), Vec::new());
/// std::process::exit(code);
/// ```
pub fn run_with_args(
    args: &Args,
    evals: Vec<&'static EvalDefinition>,
    extra: Vec<Box<dyn Reporter>>,
) -> i32 {
    run_with_deferred(args, evals, Vec::new(), extra)
}

/// [`run_with_args`] with the cases of `deferred` after `evals`, each made when its turn to
/// run comes and dropped with its report ([`Deferred`]): a suite file's 100,000 cases are
/// listed by name and never all held at once.
pub fn run_with_deferred(
    args: &Args,
    evals: Vec<&'static EvalDefinition>,
    deferred: Vec<Arc<dyn Deferred>>,
    extra: Vec<Box<dyn Reporter>>,
) -> i32 {
    let listed = evals
        .into_iter()
        .map(Listed::Defined)
        .chain(deferred.into_iter().flat_map(Listed::cases))
        .collect();
    match run_steps(args, listed, extra) {
        Ok(code) | Err(code) => code,
    }
}

/// [`run_with_deferred`] as its steps; `Err` is an exit code that ends the run early (a usage
/// error, or nothing to do).
fn run_steps(args: &Args, evals: Vec<Listed>, extra: Vec<Box<dyn Reporter>>) -> Result<i32, i32> {
    let mut selection = Selection::of(args, evals);
    // The target without fixing the run: `--resume` may continue an earlier one.
    let target = crate::output::results::this_target();
    if args.rerun_failed {
        selection.keep_last_failures(&target)?;
    }
    if args.list {
        list(args, &selection.selected);
        return Err(EXIT_OK);
    }
    selection.refuse_an_empty_one(args)?;
    let Selection {
        all_defs,
        defined,
        selected,
        filtered_out,
        ..
    } = selection;
    let resume = resume(args, &selected, &target).map_err(|message| {
        eprintln!("error: --resume: {message}");
        EXIT_USAGE
    })?;
    let config_dir = selected
        .first()
        .map(|d| PathBuf::from(d.manifest_dir()))
        .unwrap_or_else(|| PathBuf::from("."));
    let comparing = baseline_options::Compare::prepare(args, &config_dir)
        .and_then(|comparing| {
            comparing.check(&std::collections::BTreeSet::from([target.clone()]))?;
            Ok(comparing)
        })
        .map_err(|message| {
            eprintln!("error: {message}");
            EXIT_USAGE
        })?;
    let console = Box::new(
        Console::stdout()
            .filtered_out(filtered_out)
            .quiet(args.quiet)
            .show_output(args.show_output),
    );
    let defs: Vec<&'static EvalDefinition> = all_defs
        .iter()
        .filter_map(|listed| match listed {
            Listed::Defined(def) => Some(*def),
            Listed::Case(..) | Listed::Deferred(..) => None,
        })
        .collect();
    let deferred = || {
        all_defs
            .iter()
            .filter(|listed| matches!(listed, Listed::Deferred(..)))
            .map(Listed::id)
            .collect()
    };
    let mut outputs = outputs::Outputs::build(
        selected.first().map(|def| def.manifest_dir()),
        &defs,
        deferred,
        &outputs::Requested::of_args(args),
        extra,
        console,
    )
    .map_err(|e| {
        eprintln!("error: {e}");
        EXIT_USAGE
    })?;
    if let (Some(path), Some(def)) = (outputs.results_path(), selected.first()) {
        write_manifest(path, def, &all_defs, args);
    }
    // The reporters that already have the resumed run's records: the results file.
    let written = outputs.written();
    let runtime = suite_runtime().map_err(|e| {
        eprintln!("error: cannot start the Tokio runtime: {e}");
        1
    })?;
    let finish = |suite: &mut crate::run::report::SuiteReport| {
        comparing.finish(suite, defined.as_ref(), Some(&target));
    };
    let resume = resume.map(|file| suite::Resume { file, written });
    let mut suite = runtime.block_on(suite::run_suite_with(
        args,
        selected,
        outputs.reporters(),
        &finish,
        resume,
        false,
    ));
    // Abandoned evals (after Ctrl-C or SIGTERM, or bodies that ignore their timeout) must not
    // hold the process open.
    runtime.shutdown_background();
    #[cfg(feature = "otel")]
    if let Some(notice) = crate::agents::trace::notice() {
        eprintln!("{notice}");
    }
    let saved = comparing.save(&mut suite, Some(&target));
    Ok(if suite.interrupted {
        suite.signal.map_or(EXIT_INTERRUPTED, |s| s.exit_code())
    } else {
        exit_code(&suite, saved.is_ok())
    })
}

/// The suite's runtime: a worker per core, at least two.
fn suite_runtime() -> std::io::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(
            std::thread::available_parallelism()
                .map(|n| n.get())
                .unwrap_or(2)
                .max(2),
        )
        .thread_name("niceeval-suite")
        // A main thread's 8 MiB rather than tokio's 2 MiB: evals run in debug builds (`cargo
        // test`), whose futures are large, and an overflow aborts the whole suite.
        .thread_stack_size(8 * 1024 * 1024)
        .enable_all()
        .build()
}

/// The evals a run selects, and what the reports need to know of the others.
struct Selection {
    /// Every eval before the selection, for the results file's compaction and the run
    /// manifest.
    all_defs: Vec<Listed>,
    /// Every eval the binary defines, each case of each dataset included, when a baseline is
    /// compared: a baseline eval among them that this run did not select (a filter, `--limit`,
    /// `--sample`) is "not run", not "removed". (A large dataset's ids are not held otherwise.)
    defined: Option<std::collections::BTreeSet<String>>,
    /// The evals to run.
    selected: Vec<Listed>,
    /// How many the arguments left out (libtest's "filtered out").
    filtered_out: usize,
    /// How many there were before filtering.
    total: usize,
    /// The tags the evals carry, for "did you mean" when `--tag` selects nothing.
    known_tags: std::collections::BTreeSet<&'static str>,
}

impl Selection {
    /// Dataset evals listed as one eval per case, their files read now (an edited file runs
    /// without a rebuild; one that cannot be read stays as itself and fails saying why), `--limit` / `--sample` applied to each dataset's cases, then the filters. A
    /// sample without `--seed` draws one and says which, so the same sample can be run again.
    fn of(args: &Args, evals: Vec<Listed>) -> Selection {
        let seed = match (args.sample, args.seed) {
            (Some(n), None) => {
                let seed = drawn_seed();
                println!("--sample {n}: drew seed {seed}; rerun this sample with --seed {seed}");
                seed
            }
            (_, seed) => seed.unwrap_or(0),
        };
        let all_defs = evals;
        // Each dataset eval becomes its cases, listed by index: a case is read from the file
        // and made when it runs. A dataset that cannot be read stays as itself.
        let mut defined = args
            .baseline
            .is_some()
            .then(std::collections::BTreeSet::new);
        let mut evals: Vec<Listed> = Vec::with_capacity(all_defs.len());
        for listed in all_defs.iter().cloned() {
            let cases = match &listed {
                Listed::Defined(def) => crate::run::dataset::cases(def).and_then(Result::ok),
                Listed::Case(..) | Listed::Deferred(..) => None,
            };
            let Some(cases) = cases else {
                if let Some(defined) = &mut defined {
                    defined.insert(listed.id());
                }
                evals.push(listed);
                continue;
            };
            if let Some(defined) = &mut defined {
                defined.extend((0..cases.len()).map(|i| cases.id(i)));
            }
            let chosen: Box<dyn Iterator<Item = usize>> = match (args.limit, args.sample) {
                (Some(n), _) => Box::new((0..cases.len()).take(n)),
                (None, Some(n)) => Box::new(
                    crate::run::dataset::sample((0..cases.len()).collect(), n, seed).into_iter(),
                ),
                _ => Box::new(0..cases.len()),
            };
            evals.extend(chosen.map(|i| Listed::Case(cases.clone(), i)));
        }
        let total = evals.len();
        let known_tags = evals
            .iter()
            .flat_map(|d| d.tags().iter().copied())
            .collect();
        // Names are made only when a filter reads them (a million cases' names otherwise).
        let by_name = !args.filters.is_empty() || !args.skip.is_empty();
        let mut selected = evals;
        selected.retain(|d| {
            let name = if by_name {
                d.test_name()
            } else {
                String::new()
            };
            args.selects(&name, d.tags())
                // libtest counts the evals --ignored leaves out as filtered out.
                && (!args.ignored || d.ignored())
        });
        Selection {
            all_defs,
            defined,
            filtered_out: total - selected.len(),
            selected,
            total,
            known_tags,
        }
    }

    /// `--rerun-failed`: keeps the evals that failed in the last run of `target`; `Err` ends
    /// the run (nothing to rerun, or no last run).
    fn keep_last_failures(&mut self, target: &str) -> Result<(), i32> {
        let dir = default_results_dir(&self.selected);
        match baseline_options::last_failures(&dir, target) {
            Err(e) => {
                eprintln!("error: --rerun-failed: {e}");
                Err(EXIT_USAGE)
            }
            Ok(baseline_options::LastRun::None) => {
                eprintln!(
                    "error: --rerun-failed: there is no last run of `{target}` to rerun the failures of (no results in {}); run the suite once without --rerun-failed",
                    dir.display()
                );
                Err(EXIT_USAGE)
            }
            Ok(baseline_options::LastRun::Failed(failed, started)) => {
                let before = self.selected.len();
                self.selected.retain(|d| failed.contains(&d.id()));
                self.filtered_out += before - self.selected.len();
                if self.selected.is_empty() {
                    println!(
                        "--rerun-failed: nothing failed in the last run (started {started}); nothing to rerun"
                    );
                    return Err(EXIT_OK);
                }
                println!(
                    "--rerun-failed: rerunning {} eval(s) that failed in the last run (started {started})",
                    self.selected.len()
                );
                Ok(())
            }
        }
    }

    /// A selection of nothing is an error saying why, unless `NICEEVAL_ALLOW_EMPTY=1` expects
    /// it (`--rerun-failed` says so itself).
    fn refuse_an_empty_one(&self, args: &Args) -> Result<(), i32> {
        if !self.selected.is_empty() || args.rerun_failed {
            return Ok(());
        }
        let allowed = std::env::var("NICEEVAL_ALLOW_EMPTY").is_ok_and(|v| v == "1");
        let why = nothing_selected(args, self.total, &self.known_tags);
        if allowed {
            println!("niceeval: {why}; NICEEVAL_ALLOW_EMPTY=1 accepts that");
            Ok(())
        } else {
            eprintln!(
                "error: {why}, so nothing was checked; run with --list to see the evals and their \
             names (set NICEEVAL_ALLOW_EMPTY=1 when an empty selection is expected)"
            );
            Err(EXIT_NOTHING_SELECTED)
        }
    }
}

/// Why `--resume` cannot continue a run.
#[derive(Debug, thiserror::Error)]
enum ResumeError {
    /// The results file cannot be read.
    #[error(transparent)]
    Read(#[from] crate::output::results::ReadError),
    /// This process's run was fixed before `--resume` could make it the earlier one.
    #[error("the run was fixed before it could be continued (a bug in niceeval)")]
    Fixed,
}

/// `--resume`: finds the last run of `target` in this binary's results file and makes it this
/// process's run (same id, same start), so what runs now is written as part of it; returns the
/// file to take its finished evals from. `None` without `--resume`, or when there is no run to
/// continue (a new one starts, and says so).
fn resume(args: &Args, selected: &[Listed], target: &str) -> Result<Option<PathBuf>, ResumeError> {
    if !args.resume {
        return Ok(None);
    }
    let Some(def) = selected.first() else {
        return Ok(None);
    };
    let file = crate::output::results::this_file(Path::new(def.manifest_dir()));
    match crate::output::results::last_run(&file, target)? {
        None => {
            println!(
                "--resume: no earlier run of `{target}` in {}; starting a new run",
                file.display()
            );
            Ok(None)
        }
        Some(run) => {
            println!(
                "--resume: continuing run {} (started {}): its finished evals keep their records, the rest run",
                run.id, run.started
            );
            if !crate::output::results::continue_run(run) {
                return Err(ResumeError::Fixed);
            }
            Ok(Some(file))
        }
    }
}

/// Writes the run manifest next to the results file at `results` (see
/// [`crate::output::results::manifest`]): every eval and dataset case id this binary defines,
/// named from the datasets' indexes one at a time as they are written. A manifest that cannot be written is said on
/// stderr and fails nothing.
fn write_manifest(results: &Path, def: &Listed, all_defs: &[Listed], args: &Args) {
    let source = crate::config::Config::for_manifest_dir(def.manifest_dir())
        .ok()
        .and_then(|c| c.source.clone());
    let ids = || {
        all_defs.iter().flat_map(|listed| {
            let ids: Box<dyn Iterator<Item = (String, bool)>> = match listed {
                Listed::Defined(def) => match crate::run::dataset::cases(def) {
                    Some(Ok(cases)) => {
                        Box::new((0..cases.len()).map(move |i| (cases.id(i), def.ignored)))
                    }
                    _ => Box::new(std::iter::once((def.id(), def.ignored))),
                },
                Listed::Case(..) | Listed::Deferred(..) => {
                    Box::new(std::iter::once((listed.id(), listed.ignored())))
                }
            };
            ids
        })
    };
    let written = crate::output::results::manifest::write(
        results,
        Path::new(def.manifest_dir()),
        source.as_deref(),
        ids,
        filter(args),
        crate::output::results::under_nextest(),
    );
    if let Err(e) = written {
        eprintln!("niceeval: cannot write the run manifest: {e}");
    }
}

/// The filter a run selected its evals with, for its manifest: `NICEEVAL_FILTER` when set,
/// else under nextest (which runs each eval as a process of its own with `--exact NAME`) the
/// `-E` expressions on nextest's own command line ([`nextest::filter`]), else the runner's own
/// selection (`--skip bad:: --tag smoke`); `None` when every eval was selected.
fn filter(args: &Args) -> Option<String> {
    if let Ok(filter) = std::env::var("NICEEVAL_FILTER")
        && !filter.trim().is_empty()
    {
        return Some(filter.trim().to_string());
    }
    if crate::output::results::under_nextest() {
        return nextest::filter();
    }
    let mut parts: Vec<String> = Vec::new();
    if args.exact {
        parts.push("--exact".into());
    }
    parts.extend(args.filters.iter().map(|f| format!("{f:?}")));
    for (flag, values) in [("--skip", &args.skip), ("--tag", &args.tags)] {
        parts.extend(values.iter().map(|v| format!("{flag} {v:?}")));
    }
    if args.ignored {
        parts.push("--ignored".into());
    }
    if let Some(n) = args.limit {
        parts.push(format!("--limit {n}"));
    }
    if let Some(n) = args.sample {
        parts.push(format!("--sample {n}"));
        if let Some(seed) = args.seed {
            parts.push(format!("--seed {seed}"));
        }
    }
    if args.rerun_failed {
        parts.push("--rerun-failed".into());
    }
    (parts.len() > usize::from(args.exact)).then(|| parts.join(" "))
}

/// A seed for `--sample` without `--seed`: different from run to run.
fn drawn_seed() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher.write_u128(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos()),
    );
    // Short enough to type again.
    hasher.finish() % 1_000_000
}

/// What an empty selection was made of, in the user's words, with the tag meant when a
/// `--tag` no eval carries is close to one that some eval does (`known_tags`).
fn nothing_selected(
    args: &Args,
    total: usize,
    known_tags: &std::collections::BTreeSet<&'static str>,
) -> String {
    let mut what = Vec::new();
    if !args.filters.is_empty() {
        what.push(format!(
            "the filter{} {}",
            if args.filters.len() == 1 { "" } else { "s" },
            args.filters
                .iter()
                .map(|f| format!("{f:?}"))
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    if !args.skip.is_empty() {
        what.push(format!("--skip {}", args.skip.join(", --skip ")));
    }
    if !args.tags.is_empty() {
        what.push(format!("--tag {}", args.tags.join(", --tag ")));
    }
    if args.ignored {
        what.push("--ignored".to_string());
    }
    let mut unknown_tags = Vec::new();
    for tag in args
        .tags
        .iter()
        .filter(|t| !known_tags.contains(t.as_str()))
    {
        unknown_tags.push(
            match crate::base::suggest::closest(tag, known_tags.iter().copied()) {
                Some(meant) => format!("no eval is tagged {tag:?}; did you mean `{meant}`?"),
                None => format!("no eval is tagged {tag:?}"),
            },
        );
    }
    let unknown = if unknown_tags.is_empty() || total == 0 {
        String::new()
    } else {
        format!(" ({})", unknown_tags.join("; "))
    };
    if total == 0 {
        "this test binary defines no eval".to_string()
    } else if what.is_empty() {
        format!("no eval of the {total} selected")
    } else {
        format!(
            "{} selected no eval of the {total} this binary defines{unknown}",
            what.join(" and ")
        )
    }
}

/// 101 when an eval failed, else 3 on a regression, else 2 when the baseline could not be
/// saved, else 0.
fn exit_code(suite: &crate::run::report::SuiteReport, saved: bool) -> i32 {
    if !suite.success() {
        EXIT_FAILED
    } else if suite.regressed() {
        EXIT_REGRESSION
    } else if !saved {
        EXIT_USAGE
    } else {
        EXIT_OK
    }
}

/// `--list`: libtest's format, `NAME: test` per line, then a count unless `--format terse`.
/// With `--ignored`, only `#[ignore]`d evals.
fn list(args: &Args, selected: &[Listed]) {
    let mut out = std::io::stdout().lock();
    let mut count = 0;
    for def in selected {
        let _ = writeln!(out, "{}: test", def.test_name());
        count += 1;
    }
    if !args.terse() {
        let _ = writeln!(
            out,
            "\n{count} test{}, 0 benchmarks",
            if count == 1 { "" } else { "s" }
        );
    }
}
