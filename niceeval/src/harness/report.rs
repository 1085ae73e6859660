//! Report mode (`--report`): runs no eval, but reads results files (from `cargo test`, from
//! this runner, from the shards of a partitioned CI run), merges them
//! ([`crate::results::merge`]) and replays them through the console and the report files the
//! arguments ask for. The suite binary of a user's crate does it, so
//! `cargo test --test evals -- --report --markdown summary.md` works from any crate, with the
//! niceeval it was built with; the `niceeval report` command is the same code.

use std::path::{Path, PathBuf};

use super::{Args, EXIT_USAGE, file_reporters};
use crate::reporter::{Console, Reporter};
use crate::results::{from_earlier_runs, latest, merge, read_reports, replay_with};

/// Merges the results files `args.report` names (else `default_dir`): each eval's latest run
/// ([`crate::results::latest`], naming on stderr the evals whose latest run is older than their
/// target's), or with `--combine` every record ([`crate::results::merge`]); replays them through the
/// report files of `args`, `extra` and the console, and returns the exit code: 0 when every
/// eval passed or was skipped, 101 when one failed, 3 when `--baseline` found a regression
/// (`[compare] fail_on` of the `niceeval.toml` found from the current directory), 2 when the command line is wrong, a report file or the baseline cannot
/// be read or written, the baseline is another suite's (none of its evals belongs to a test
/// target of the reports read), or there is nothing to read. `--save-baseline FILE` writes the baseline
/// of the reports read.
///
/// ```no_run
/// use niceeval::__private::harness::{Args, run_report};
///
/// let args = Args::parse(["--report", "shard1/", "shard2/", "--junit", "junit.xml"]).unwrap().unwrap();
/// let code = run_report(&args, std::path::Path::new("target/niceeval/results"), Vec::new());
/// std::process::exit(code);
/// ```
pub fn run_report(args: &Args, default_dir: &Path, extra: Vec<Box<dyn Reporter>>) -> i32 {
    // `cargo test` runs a suite binary in its crate's directory; `niceeval report` where it
    // is started.
    let comparing = match super::compare::Compare::prepare(args, Path::new(".")) {
        Ok(comparing) => comparing,
        Err(message) => {
            eprintln!("error: {message}");
            return EXIT_USAGE;
        }
    };
    let paths: Vec<PathBuf> = match &args.report {
        Some(paths) if !paths.is_empty() => paths.clone(),
        _ => vec![default_dir.to_path_buf()],
    };
    // A default directory nothing was written to yet holds no reports; a path given that does
    // not exist is an error naming it.
    let read = if paths == [default_dir] && !default_dir.exists() {
        Ok(Vec::new())
    } else {
        read_reports(&paths)
    };
    // `--merge`: the shards of one run, checked against their manifests; only the records of
    // the runs the manifests name.
    let read = match (read, args.merge) {
        (Ok(reports), true) => match check_shards(&paths, reports, args.allow_mismatch) {
            Ok(reports) => Ok(reports),
            Err(message) => {
                eprintln!("error: {message}");
                return EXIT_USAGE;
            }
        },
        (read, _) => read,
    };
    let reports = match read {
        Ok(reports) if reports.is_empty() => {
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
        Ok(reports) if args.combine => merge(reports),
        Ok(reports) => latest(reports),
        Err(e) => {
            eprintln!("error: {e}");
            return EXIT_USAGE;
        }
    };
    // A baseline of another suite than the results' is an error, as in the suite runner.
    let targets: std::collections::BTreeSet<String> = reports
        .iter()
        .filter_map(|r| r.run.as_ref().map(|run| run.target.clone()))
        .collect();
    if let Err(message) = comparing.check(&targets) {
        eprintln!("error: {message}");
        return EXIT_USAGE;
    }
    let earlier = from_earlier_runs(&reports);
    if !earlier.is_empty() {
        // Not an error: a filtered run refreshes only what it selected. Said, so an old
        // result is never taken for a new one.
        eprintln!(
            "note: {} eval(s) come from an earlier run than their target's latest (rerun them to refresh; --combine merges every record instead):",
            earlier.len()
        );
        for report in &earlier {
            if let Some(run) = &report.run {
                eprintln!("    {} (run of {})", report.id, run.started);
            }
        }
    }
    let mut reporters = match file_reporters(args) {
        Ok(reporters) => reporters,
        Err(message) => {
            eprintln!("error: {message}");
            return EXIT_USAGE;
        }
    };
    reporters.extend(extra);
    reporters.push(Box::new(
        Console::stdout()
            .quiet(args.quiet)
            .show_output(args.show_output),
    ));
    let suite = replay_with(&reports, &mut reporters, |suite| {
        comparing.finish(suite, None, None);
    });
    let saved = comparing.save(&suite, None);
    super::exit_code(&suite, saved.is_ok())
}

/// `--merge`: checks the shards' records against the run manifests among `paths` (see
/// [`crate::results::manifest`]) and keeps the records of the runs they name. Missing or
/// duplicated evals are an error, and so are shards of other commits, configurations or
/// niceeval versions unless `allow_mismatch`; each finding is named on stderr.
fn check_shards(
    paths: &[PathBuf],
    reports: Vec<crate::EvalReport>,
    allow_mismatch: bool,
) -> Result<Vec<crate::EvalReport>, String> {
    use std::collections::{BTreeMap, BTreeSet};
    let manifests = crate::results::manifest::read_all(paths)?;
    if manifests.is_empty() {
        return Err(format!(
            "--merge: no run manifest (*.manifest.json) in {}; the suite runner (niceeval::main!()) writes one next to each results file",
            paths
                .iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    let runs: BTreeSet<&str> = manifests.iter().map(|(_, m)| m.run.as_str()).collect();
    let reports: Vec<crate::EvalReport> = reports
        .into_iter()
        .filter(|r| {
            r.run
                .as_ref()
                .is_some_and(|run| runs.contains(run.id.as_str()))
        })
        .collect();
    let mut reported: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for report in &reports {
        if let Some(run) = &report.run {
            reported
                .entry(report.id.clone())
                .or_default()
                .insert(run.id.clone());
        }
    }
    let findings = crate::results::manifest::check(&manifests, &reported);
    for line in findings.describe() {
        eprintln!("niceeval merge: {line}");
    }
    if !findings.ok(allow_mismatch) {
        let why = if !findings.mismatches.is_empty() && !allow_mismatch {
            " (--allow-mismatch merges shards of other commits or configurations)"
        } else {
            ""
        };
        return Err(format!(
            "--merge: the shards do not make one whole run{why}"
        ));
    }
    eprintln!(
        "niceeval merge: {} shard(s), {} eval(s), every one reported once",
        manifests.len(),
        reported.len()
    );
    Ok(reports)
}
