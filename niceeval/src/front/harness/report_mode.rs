//! Report mode (`--report`): runs no eval, but reads results files (from `cargo test`, from
//! this runner, from the shards of a partitioned CI run), merges them in two streamed passes
//! (`history::Index`: the records are read again an eval at a time, never held) and replays
//! them through the console and the report files the arguments ask for. The suite binary of a user's crate does it, so
//! `cargo test --test evals -- --report --markdown summary.md` works from any crate, with the
//! niceeval it was built with; the `niceeval report` command is the same code.

use std::path::{Path, PathBuf};

use super::{Args, EXIT_USAGE};
use crate::output::reporter::{Console, Reporter};
use crate::output::results::Index;

/// Merges the results files `args.report` names (else `default_dir`): each eval's latest run
/// ([`crate::output::results::latest`], naming on stderr the evals whose latest run is older than their
/// target's), or with `--combine` every record ([`crate::output::results::merge`]); replays them through the
/// report files of `args`, `extra` and the console, and returns the exit code: 0 when every
/// eval passed or was skipped, 101 when one failed, 3 when `--baseline` found a regression
/// (`[compare] fail_on` of the `niceeval.toml` found from the current directory), 2 when the command line is wrong, a report file or the baseline cannot
/// be read or written, the baseline is another suite's (none of its evals belongs to a test
/// target of the reports read), or there is nothing to read. `--save-baseline FILE` writes the baseline
/// of the reports read.
///
/// ```no_run
/// use niceeval::__workspace::harness::{Args, run_report};
///
/// let args = Args::parse(["--report", "shard1/", "shard2/", "--junit", "junit.xml"]).unwrap().unwrap();
/// let code = run_report(&args, std::path::Path::new("target/niceeval/results"), Vec::new());
/// std::process::exit(code);
/// ```
pub fn run_report(args: &Args, default_dir: &Path, extra: Vec<Box<dyn Reporter>>) -> i32 {
    run_report_of(args, default_dir, None, extra)
}

/// [`run_report`] for the suite binary of test target `own`: without PATHs it reports its own
/// target's evals only (the results directory holds every test target's files; naming it,
/// `--report target/niceeval/results`, reports them all).
pub fn run_report_of(
    args: &Args,
    default_dir: &Path,
    own: Option<&str>,
    #[cfg_attr(not(feature = "history"), allow(unused_mut))] mut extra: Vec<Box<dyn Reporter>>,
) -> i32 {
    // `cargo test` runs a suite binary in its crate's directory; `niceeval report` where it
    // is started.
    let comparing = match super::baseline_options::Compare::prepare(args, Path::new(".")) {
        Ok(comparing) => comparing,
        Err(message) => {
            eprintln!("error: {message}");
            return EXIT_USAGE;
        }
    };
    let (paths, own): (Vec<PathBuf>, Option<&str>) = match &args.report {
        Some(paths) if !paths.is_empty() => (paths.clone(), None),
        _ => (vec![default_dir.to_path_buf()], own),
    };
    // A default directory nothing was written to yet holds no reports; a path given that does
    // not exist is an error naming it.
    let read = if paths == [default_dir] && !default_dir.exists() {
        Ok(Index::empty())
    } else {
        Index::read(&paths)
    };
    let mut index = match read {
        Ok(index) => index,
        Err(e) => {
            eprintln!("error: {e}");
            return EXIT_USAGE;
        }
    };
    // `--merge`: the shards of one run, checked against their manifests; only the records of
    // the runs the manifests name.
    if args.merge
        && let Err(message) = check_shards(&paths, &mut index, args.allow_mismatch)
    {
        eprintln!("error: {message}");
        return EXIT_USAGE;
    }
    // A merge is a run of the history: the shards' runs become one (the crate's history,
    // found from the current directory as the baseline's `niceeval.toml` is).
    #[cfg(feature = "history")]
    if args.merge
        && let Ok(manifests) = crate::output::results::manifest::read_all(&paths)
    {
        let manifests: Vec<_> = manifests.into_iter().map(|(_, m)| m).collect();
        if let Some(recorder) =
            crate::output::history::Recorder::for_merge(Path::new("."), &manifests)
        {
            extra.insert(0, Box::new(recorder));
        }
    }
    if let Some(own) = own {
        let others = index.keep_target(own);
        if others > 0 {
            eprintln!(
                "note: reporting `{own}` only; {others} eval(s) of other test targets in {} are left out (--report {} reports every target)",
                default_dir.display(),
                default_dir.display()
            );
        }
    }
    if index.is_empty() {
        eprintln!(
            "error: no eval reports in {}; run the evals first (cargo test writes them to target/niceeval/results)",
            paths
                .iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        );
        return EXIT_USAGE;
    }
    let merged = index.view(args.combine);
    // A baseline of another suite than the results' is an error, as in the suite runner.
    if let Err(message) = comparing.check(&merged.targets()) {
        eprintln!("error: {message}");
        return EXIT_USAGE;
    }
    let earlier = merged.earlier_runs();
    if !earlier.is_empty() {
        // Not an error: a filtered run refreshes only what it selected. Said, so an old
        // result is never taken for a new one.
        eprintln!(
            "note: {} eval(s) come from an earlier run than their target's latest (rerun them to refresh; --combine merges every record instead):",
            earlier.len()
        );
        for (id, started) in &earlier {
            eprintln!("    {id} (run of {started})");
        }
    }
    drop(earlier);
    let console = Box::new(
        Console::stdout()
            .quiet(args.quiet)
            .show_output(args.show_output)
            .replay(true),
    );
    // Replayed records were exported when they ran: no results file, no trace export.
    let requested = super::outputs::Requested {
        otlp_endpoint: None,
        ..super::outputs::Requested::of_args(args)
    };
    let mut outputs =
        match super::outputs::Outputs::build(None, &[], Vec::new, &requested, extra, console) {
            Ok(outputs) => outputs,
            Err(e) => {
                eprintln!("error: {e}");
                return EXIT_USAGE;
            }
        };
    let keep_baseline = args.baseline.is_some() || args.save_baseline.is_some();
    // Every eval the binaries define, from the run manifests beside the results: a baseline
    // eval a filtered run did not select is "not run", not "removed".
    let defined = if args.baseline.is_some() {
        crate::output::results::manifest::read_all(&paths)
            .ok()
            .and_then(|manifests| crate::output::results::manifest::defined(&manifests, own))
    } else {
        None
    };
    let mut suite = match merged.replay(outputs.reporters(), keep_baseline, |suite| {
        comparing.finish(suite, defined.as_ref(), own);
    }) {
        Ok(suite) => suite,
        Err(e) => {
            eprintln!("error: {e}");
            return EXIT_USAGE;
        }
    };
    let saved = comparing.save(&mut suite, own);
    super::exit_code(&suite, saved.is_ok())
}

/// Why `--merge` refuses the shards.
#[derive(Debug, thiserror::Error)]
enum MergeError {
    /// The manifests could not be read.
    #[error(transparent)]
    Manifest(#[from] crate::output::results::manifest::ManifestError),
    /// No manifest among the paths (listed).
    #[error(
        "--merge: no run manifest (*.manifest.json) in {0}; the suite runner (niceeval::main!()) writes one next to each results file"
    )]
    NoManifest(String),
    /// Evals are missing or twice, or shards differ; the findings are on stderr.
    #[error("--merge: the shards do not make one whole run{0}")]
    NotWhole(&'static str),
}

/// `--merge`: checks the shards' records against the run manifests among `paths` (see
/// [`crate::output::results::manifest`]) and keeps the records of the runs they name. Missing or
/// duplicated evals are an error, and so are shards of other commits, configurations or
/// niceeval versions unless `allow_mismatch`; each finding is named on stderr.
fn check_shards(
    paths: &[PathBuf],
    index: &mut Index,
    allow_mismatch: bool,
) -> Result<(), MergeError> {
    let manifests = crate::output::results::manifest::read_all(paths)?;
    if manifests.is_empty() {
        return Err(MergeError::NoManifest(
            paths
                .iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(", "),
        ));
    }
    let findings = index.check_shards(&manifests);
    for line in findings.describe() {
        eprintln!("niceeval merge: {line}");
    }
    if !findings.ok(allow_mismatch) {
        let why = if !findings.mismatches.is_empty() && !allow_mismatch {
            " (--allow-mismatch merges shards of other commits or configurations)"
        } else if !findings.hints.is_empty() {
            " (--allow-mismatch does not excuse missing evals; see above for the filter to record)"
        } else {
            ""
        };
        return Err(MergeError::NotWhole(why));
    }
    eprintln!(
        "niceeval merge: {} shard(s), {} eval(s), every one reported once",
        manifests.len(),
        index.evals()
    );
    Ok(())
}
