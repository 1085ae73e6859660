//! The suite runner behind [`crate::main!`]: selects the registered evals of a `harness = false`
//! test target with libtest-style arguments, runs them concurrently on one Tokio runtime with
//! bounded concurrency, streams every finished eval to the reporters, and exits non-zero when
//! any eval failed. Ctrl-C stops the run; what finished is still reported.

mod args;

pub use args::{Args, ArgsError};

use std::io::Write as _;
use std::path::Path;
use std::time::Instant;

use crate::definition::{registered, EvalDefinition};
use crate::outcome::Outcome;
use crate::report::EvalReport;
use crate::reporter::{
    Console, EvalSummary, Html, Jsonl, Junit, Markdown, Reporter, SuiteReport, SuiteStart,
};
use crate::run::{run_eval_async, RunOptions};

type FileReporter = fn(&Path) -> std::io::Result<Box<dyn Reporter>>;

/// Default number of evals run at once.
pub const DEFAULT_CONCURRENCY: usize = 4;

/// Runs the suite with the process's arguments and returns the exit code: 0 when every eval
/// passed or was skipped, 101 when any failed (libtest's code), 2 for a bad command line, 130
/// when interrupted.
pub fn main_with(extra: Vec<Box<dyn Reporter>>) -> i32 {
    let args = match Args::parse(std::env::args().skip(1)) {
        Ok(Some(args)) => args,
        Ok(None) => {
            print!("{}", Args::help());
            return 0;
        }
        Err(e) => {
            eprintln!("error: {e}");
            return 2;
        }
    };
    run_with_args(&args, registered(), extra)
}

/// Runs `evals` as `args` says, with the built-in reporters the arguments ask for plus `extra`.
pub fn run_with_args(
    args: &Args,
    evals: Vec<&'static EvalDefinition>,
    extra: Vec<Box<dyn Reporter>>,
) -> i32 {
    let total = evals.len();
    let selected: Vec<&'static EvalDefinition> = evals
        .into_iter()
        .filter(|d| args.selects(&d.test_name(), d.tags))
        .collect();
    let filtered_out = total - selected.len();
    if args.list {
        list(args, &selected);
        return 0;
    }
    let mut reporters: Vec<Box<dyn Reporter>> = Vec::new();
    if !args.quiet {
        reporters.push(Box::new(Console::stdout().filtered_out(filtered_out)));
    }
    let files: [(&Option<std::path::PathBuf>, FileReporter); 4] = [
        (&args.html, |p| Ok(Box::new(Html::create(p)?))),
        (&args.jsonl, |p| Ok(Box::new(Jsonl::create(p)?))),
        (&args.junit, |p| Ok(Box::new(Junit::create(p)?))),
        (&args.markdown, |p| Ok(Box::new(Markdown::create(p)?))),
    ];
    for (path, make) in files {
        if let Some(path) = path {
            match make(path) {
                Ok(r) => reporters.push(r),
                Err(e) => {
                    eprintln!("error: cannot write {}: {e}", path.display());
                    return 2;
                }
            }
        }
    }
    reporters.extend(extra);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(
            std::thread::available_parallelism()
                .map(|n| n.get())
                .unwrap_or(2)
                .max(2),
        )
        .thread_name("niceeval-suite")
        .enable_all()
        .build();
    let runtime = match runtime {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("error: cannot start the Tokio runtime: {e}");
            return 1;
        }
    };
    let suite = runtime.block_on(run_suite(args, selected, &mut reporters));
    runtime.shutdown_background();
    if suite.interrupted {
        130
    } else if suite.success() {
        0
    } else {
        101
    }
}

fn list(args: &Args, selected: &[&'static EvalDefinition]) {
    let terse = args.format.as_deref() == Some("terse");
    let mut out = std::io::stdout().lock();
    let mut count = 0;
    for def in selected {
        let runs_it = if args.ignored { def.ignored } else { true };
        if runs_it {
            let _ = writeln!(out, "{}: test", def.test_name());
            count += 1;
        }
    }
    if !terse {
        let _ = writeln!(out, "\n{count} tests, 0 benchmarks");
    }
}

/// Runs the selected evals and feeds the reporters; returns the suite report.
pub async fn run_suite(
    args: &Args,
    selected: Vec<&'static EvalDefinition>,
    reporters: &mut [Box<dyn Reporter>],
) -> SuiteReport {
    let started = Instant::now();
    let concurrency = args
        .concurrency
        .or_else(|| {
            selected
                .first()
                .and_then(|d| crate::run::config_for(d.manifest_dir).ok())
                .and_then(|c| c.run.concurrency)
        })
        .unwrap_or(DEFAULT_CONCURRENCY)
        .max(1);
    let options = RunOptions {
        runs: args.runs,
        strict: args.strict,
        timeout: args.timeout,
        run_concurrency: None,
    };
    let (to_run, ignored): (Vec<_>, Vec<_>) = selected.into_iter().partition(|d| {
        if args.ignored {
            d.ignored
        } else {
            args.include_ignored || !d.ignored
        }
    });
    let start = SuiteStart {
        evals: to_run.iter().map(|d| d.id()).collect(),
        concurrency,
    };
    for reporter in reporters.iter_mut() {
        report_error(reporter.on_run_start(&start));
    }
    let mut summaries: Vec<EvalSummary> = Vec::with_capacity(to_run.len() + ignored.len());
    for def in ignored {
        let report = ignored_report(def);
        deliver(def, &report, reporters);
        summaries.push(EvalSummary::from(&report));
    }
    let mut pending = to_run.into_iter();
    let mut running = tokio::task::JoinSet::new();
    let mut interrupted = false;
    let ctrl_c = tokio::signal::ctrl_c();
    tokio::pin!(ctrl_c);
    loop {
        while running.len() < concurrency {
            let Some(def) = pending.next() else { break };
            let options = options.clone();
            running.spawn(async move { (def, run_eval_async(def, &options).await) });
        }
        if running.is_empty() {
            break;
        }
        tokio::select! {
            joined = running.join_next() => match joined {
                Some(Ok((def, report))) => {
                    deliver(def, &report, reporters);
                    summaries.push(EvalSummary::from(&report));
                }
                Some(Err(e)) => eprintln!("niceeval: an eval task was lost: {e}"),
                None => break,
            },
            _ = &mut ctrl_c => {
                interrupted = true;
                running.abort_all();
                break;
            }
        }
    }
    let not_run = pending.len() + running.len();
    let suite = SuiteReport::new(
        summaries,
        not_run,
        interrupted,
        started.elapsed().as_secs_f64() * 1000.0,
    );
    for reporter in reporters.iter_mut() {
        report_error(reporter.on_run_complete(&suite));
    }
    suite
}

fn deliver(def: &EvalDefinition, report: &EvalReport, reporters: &mut [Box<dyn Reporter>]) {
    if let Err(e) = crate::results::append(report, Path::new(def.manifest_dir)) {
        eprintln!(
            "niceeval: could not write the results file for {}: {e}",
            report.id
        );
    }
    for reporter in reporters.iter_mut() {
        report_error(reporter.on_eval_complete(report));
    }
}

fn report_error(result: std::io::Result<()>) {
    if let Err(e) = result {
        eprintln!("niceeval: a reporter failed: {e}");
    }
}

fn ignored_report(def: &'static EvalDefinition) -> EvalReport {
    let mut report = EvalReport::empty(def);
    report.outcome = Outcome::Skipped;
    report.skip_reason = Some("#[ignore]d; run with --ignored or --include-ignored".into());
    report.runs.clear();
    report
}
