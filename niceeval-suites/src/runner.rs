//! Suite files joined to niceeval's suite runner: `main!(suites = [..])` and `niceeval eval -c
//! FILE` read each file into its cases (each made when its turn to run comes, see
//! `niceeval::data_eval::Deferred`), apply what the file says about the run
//! (`maxConcurrency` unless `-j` / `--concurrency` says otherwise, `outputPath` unless a report
//! option names that report) and run them beside the registered evals.

use std::path::{Path, PathBuf};

use niceeval::__workspace::EvalDefinition;
use niceeval::__workspace::harness::{
    Args, EXIT_USAGE, process_args, run_report_of, run_with_deferred,
};
use niceeval::__workspace::registered;
use niceeval::__workspace::results::{results_dir, this_target};
use niceeval::reporter::Reporter;

/// What [`crate::main!`] calls: the registered evals plus the cases of
/// each suite file (paths relative to the crate's manifest directory), with the process's
/// arguments.
pub fn main_with_suites(
    suites: &[&str],
    manifest_dir: &str,
    module: &str,
    extra: Vec<Box<dyn Reporter>>,
) -> i32 {
    let args = match process_args() {
        Ok(args) => args,
        Err(code) => return code,
    };
    let dir = Path::new(manifest_dir);
    if args.report.is_some() {
        let own = this_target();
        return run_report_of(&args, &results_dir(dir), Some(&own), extra);
    }
    let files: Vec<PathBuf> = suites.iter().map(|s| dir.join(s)).collect();
    run_files(&files, module, dir, args, registered(), extra)
}

/// Runs the cases of `files` (and `evals`) as `args` says; `dir` holds `niceeval.toml` and
/// the results. A file that cannot be read is an error naming the place (exit 2).
pub fn run_files(
    files: &[PathBuf],
    module: &str,
    dir: &Path,
    mut args: Args,
    evals: Vec<&'static EvalDefinition>,
    extra: Vec<Box<dyn Reporter>>,
) -> i32 {
    let mut deferred = Vec::with_capacity(files.len());
    // `--strict` (or `[run] strict` in niceeval.toml): a key the file's format does not know
    // is an error, not a note.
    let strict = args.strict
        || niceeval::__workspace::config::Config::discover(dir).is_ok_and(|c| c.run.strict);
    let mut ignored = 0usize;
    for file in files {
        let (cases, summary) = match crate::deferred(file, module, dir) {
            Ok(read) => read,
            Err(e) => {
                eprintln!("error: {e}");
                return EXIT_USAGE;
            }
        };
        for notice in &summary.notices {
            eprintln!("note: {}: {notice}", file.display());
        }
        if strict && !summary.ignored_keys.is_empty() {
            for key in &summary.ignored_keys {
                eprintln!("error: {}: {key}", file.display());
            }
            eprintln!(
                "error: {}: {} unknown key(s), refused under --strict (or [run] strict); fix or remove them",
                file.display(),
                summary.ignored_keys.len()
            );
            return EXIT_USAGE;
        }
        for key in &summary.ignored_keys {
            eprintln!("note: {}: {key}", file.display());
        }
        ignored += summary.ignored_keys.len();
        if args.concurrency.is_none() {
            args.concurrency = summary.concurrency;
        }
        for path in summary.output_paths {
            let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("");
            let slot = match ext {
                "jsonl" => &mut args.jsonl,
                "xml" => &mut args.junit,
                "md" => &mut args.markdown,
                "html" => &mut args.html,
                // promptfoo's other formats (.csv, .json, .yaml, .txt): the run goes on
                // without that file, and says so.
                _ => {
                    eprintln!(
                        "warning: {}: outputPath {} is not written: niceeval writes .jsonl, .xml (JUnit), .md and .html reports",
                        file.display(),
                        path.display()
                    );
                    continue;
                }
            };
            if slot.is_none() {
                *slot = Some(path);
            }
        }
        deferred.push(cases);
    }
    let code = run_with_deferred(&args, evals, deferred, extra);
    // The closing count, so that a key written wrong is not missed above the run's output.
    if ignored > 0 {
        eprintln!(
            "note: {ignored} unknown key(s) of the suite file(s) were ignored (listed before the run); --strict makes them errors"
        );
    }
    code
}
