//! Running a selection of evals: bounded concurrency on the current runtime, ignored evals
//! reported as skipped, snapshot checks, Ctrl-C and SIGTERM, and every finished eval streamed
//! to the reporters while the suite keeps only its [`EvalSummary`].

use std::collections::{BTreeSet, HashMap, HashSet};
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::Args;
use super::listed::Listed;
use crate::base::outcome::{Outcome, RunError, RunErrorKind};
use crate::config::Config;
use crate::output::reporter::Reporter;
use crate::run::definition::{Def, EvalDefinition};
use crate::run::engine::{RunOptions, not_run, run_def};
use crate::run::report::{
    EvalReport, EvalSummary, Progress, Signal, SuiteReport, SuiteStart, Totals,
};

/// Default number of evals run at once.
pub const DEFAULT_CONCURRENCY: usize = 4;

/// Runs the selected evals on the current (multi-threaded) Tokio runtime and feeds the
/// reporters; returns the suite report.
///
/// At most `--concurrency` evals run at once (else `[run] concurrency` from the first eval's
/// `niceeval.toml`, else `DEFAULT_CONCURRENCY`). `#[ignore]`d evals are reported as skipped
/// unless `--ignored`/`--include-ignored` runs them. Each finished report goes to every
/// reporter, in order, then is dropped: the suite keeps one [`EvalSummary`] per eval. Ctrl-C
/// (SIGINT) or, on Unix, SIGTERM stops the run: running evals are abandoned, and the reporters
/// still get `on_run_complete` with everything that finished, the signal, and the ids of the
/// evals that did not finish ([`SuiteReport::unfinished`]).
///
/// Each crate's configuration (`niceeval.toml` and the `NICEEVAL_*` variables) is checked
/// before any eval starts. An invalid one is printed once, on stderr, with all its errors; the
/// evals of that crate fail without running, their reports saying where the errors were
/// printed rather than repeating them for every eval.
///
/// ```no_run
/// use niceeval::__workspace::harness::{run_suite, Args};
///
/// # async fn demo() {
/// let args = Args::parse(["--concurrency", "16"]).unwrap().unwrap();
/// let suite = run_suite(&args, niceeval::__workspace::registered(), &mut []).await;
/// println!("{} passed, {} failed", suite.passed, suite.failed);
/// # }
/// ```
pub async fn run_suite(
    args: &Args,
    selected: Vec<&'static EvalDefinition>,
    reporters: &mut [Box<dyn Reporter>],
) -> SuiteReport {
    let selected = selected.into_iter().map(Listed::Defined).collect();
    run_suite_with(args, selected, reporters, &|_| {}, None, true).await
}

/// A run `--resume` continues: the results file holding its finished evals, and how many of
/// the first reporters wrote them already (the results file itself), so they do not get them
/// again.
pub(crate) struct Resume {
    pub(crate) file: std::path::PathBuf,
    pub(crate) written: usize,
}

/// [`run_suite`], with `finish` completing the suite report (the comparison with a baseline)
/// before the reporters get it. The report has every eval's summary with `every_summary`;
/// otherwise only when a reporter reads them ([`Reporter::reads_evals`]) or a baseline is
/// compared or saved, and the totals alone when none does.
pub(crate) async fn run_suite_with(
    args: &Args,
    selected: Vec<Listed>,
    reporters: &mut [Box<dyn Reporter>],
    finish: &(dyn Fn(&mut SuiteReport) + Sync),
    resume: Option<Resume>,
    every_summary: bool,
) -> SuiteReport {
    let started = Instant::now();
    let first_config = selected
        .first()
        .and_then(|d| crate::config::Config::for_manifest_dir(d.manifest_dir()).ok());
    let concurrency = args
        .concurrency
        .or_else(|| first_config.as_ref().and_then(|c| c.run.concurrency))
        .unwrap_or(DEFAULT_CONCURRENCY)
        .max(1);
    let slow_after = first_config
        .as_ref()
        .map_or(Duration::from_secs(60), |c| c.slow_after());
    let options = Arc::new(RunOptions {
        runs: args.runs,
        strict: args.strict,
        timeout: args.timeout,
        run_concurrency: None,
        retry_errors: args.retry_errors,
    });
    // Split in place: a million listed cases are not copied into a second list.
    let mut to_run = selected;
    let mut ignored = Vec::new();
    to_run.retain(|d| {
        let runs = if args.ignored {
            d.ignored()
        } else {
            args.include_ignored || !d.ignored()
        };
        if !runs {
            ignored.push(d.clone());
        }
        runs
    });
    // Listening from here on: a signal that arrives while the first evals start is not lost.
    let mut signals = Signals::listen();
    let invalid = Arc::new(check_configs(&to_run));
    let start = SuiteStart {
        evals: super::listed::eval_ids(&to_run),
        concurrency,
    };
    super::outputs::deliver(reporters, |r| r.on_run_start(&start));
    drop(start);
    // What the run keeps of each eval: its summary when a reporter reads it (without what a
    // baseline keeps unless the run compares with one or saves one), and its part of the
    // totals.
    let keep_baseline = args.baseline.is_some() || args.save_baseline.is_some();
    let keep = every_summary || keep_baseline || reporters.iter().any(|r| r.reads_evals());
    let mut kept = Kept {
        totals: Totals::default(),
        summaries: Vec::with_capacity(if keep {
            to_run.len() + ignored.len()
        } else {
            0
        }),
        keep,
        keep_baseline,
    };
    for listed in ignored.into_iter().filter(|_| !args.ignored) {
        let report = ignored_report(&listed.named());
        deliver(&report, reporters);
        kept.add(&report);
    }
    if let Some(resume) = resume {
        let finished = replay_finished(&resume, &to_run, reporters, &mut |report| kept.add(report));
        if !finished.is_empty() {
            to_run.retain(|d| !finished.contains(&d.id()));
        }
    }
    let mut pending = to_run.into_iter();
    let mut running = tokio::task::JoinSet::new();
    // The id of the eval each running task runs and when it started: to name those an
    // interruption abandons, and those running long.
    let mut running_ids: HashMap<tokio::task::Id, (String, Instant)> = HashMap::new();
    let mut named_slow: HashSet<tokio::task::Id> = HashSet::new();
    let mut ticker = tokio::time::interval_at(
        tokio::time::Instant::now() + Duration::from_secs(1),
        Duration::from_secs(1),
    );
    ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
    let mut interrupted = None;
    loop {
        while running.len() < concurrency {
            let Some(listed) = pending.next() else { break };
            let options = options.clone();
            let id = listed.id();
            if invalid.contains(listed.manifest_dir()) {
                let report = not_run(
                    &listed.named(),
                    &options,
                    RunError::new(RunErrorKind::Config, CONFIG_REPORTED),
                );
                let task = running.spawn(async move { report });
                running_ids.insert(task.id(), (id, Instant::now()));
                continue;
            }
            // A deferred case is made in its task, and its definition dropped with the task.
            let task = running.spawn(async move {
                match listed.definition() {
                    Ok(def) => run_one(def, &options).await,
                    Err(e) => not_run(
                        &listed.named(),
                        &options,
                        RunError::new(RunErrorKind::Setup, format!("cannot make the case: {e}")),
                    ),
                }
            });
            running_ids.insert(task.id(), (id, Instant::now()));
        }
        if running.is_empty() {
            break;
        }
        tokio::select! {
            joined = running.join_next_with_id() => match joined {
                Some(Ok((task, report))) => {
                    running_ids.remove(&task);
                    named_slow.remove(&task);
                    deliver(&report, reporters);
                    kept.add(&report);
                }
                // run_eval_async contains the eval's panics; this is a bug in niceeval.
                Some(Err(e)) => {
                    named_slow.remove(&e.id());
                    let id = running_ids.remove(&e.id()).map(|(id, _)| id).unwrap_or_default();
                    eprintln!("niceeval: the task running eval {id} was lost: {e}");
                }
                None => break,
            },
            signal = signals.recv() => {
                // The running evals' processes first (an agent may be spending): their own
                // process groups keep the terminal's Ctrl-C from them.
                let _ = tokio::task::spawn_blocking(crate::base::process::end_all).await;
                interrupted = Some(signal);
                break;
            }
            _ = ticker.tick() => {
                let progress = progress(started, &running_ids, &mut named_slow, slow_after);
                super::outputs::deliver(reporters, |r| r.on_progress(&progress));
            }
        }
    }
    running.abort_all();
    let mut suite = kept.totals.report(
        kept.summaries,
        0,
        false,
        started.elapsed().as_secs_f64() * 1000.0,
    );
    if let Some(signal) = interrupted {
        let unfinished = running_ids
            .into_values()
            .map(|(id, _)| id)
            .chain(pending.map(|d| d.id()));
        suite = suite.interrupted_by(signal, unfinished.collect());
    }
    finish(&mut suite);
    super::outputs::deliver(reporters, |r| r.on_run_complete(&suite));
    suite
}

/// What a run keeps of its finished evals.
struct Kept {
    totals: Totals,
    /// Every eval's summary, when `keep`.
    summaries: Vec<EvalSummary>,
    keep: bool,
    /// Whether a summary keeps what a baseline needs.
    keep_baseline: bool,
}

impl Kept {
    fn add(&mut self, report: &EvalReport) {
        let summary = if self.keep_baseline {
            EvalSummary::from(report)
        } else {
            EvalSummary::without_baseline(report)
        };
        self.totals.add(&summary);
        if self.keep {
            self.summaries.push(summary);
        }
    }
}

/// Hands the records the resumed run already wrote (for evals of `to_run`) to the reporters
/// past the first `resume.written`, and each to `keep`, one at a time from the file; returns
/// the ids of those evals, which do not run again. A record cut short by the kill is skipped
/// (with a warning): its eval runs again.
fn replay_finished(
    resume: &Resume,
    to_run: &[Listed],
    reporters: &mut [Box<dyn Reporter>],
    keep: &mut dyn FnMut(&EvalReport),
) -> HashSet<String> {
    let run = &crate::output::results::this_run().id;
    let mut wanted: HashSet<String> = to_run.iter().map(Listed::id).collect();
    let mut finished = HashSet::new();
    let skip = resume.written.min(reporters.len());
    let read = (|| -> Result<(), crate::output::results::ReadError> {
        let mut records = crate::output::results::Records::open(&resume.file)?;
        while let Some((_, report)) = records.next_record::<EvalReport>()? {
            if report.run.as_ref().is_none_or(|r| &r.id != run) {
                continue;
            }
            // Once per eval: a record of it in this run is its result.
            let Some(id) = wanted.take(&report.id) else {
                continue;
            };
            deliver(&report, &mut reporters[skip..]);
            keep(&report);
            finished.insert(id);
        }
        Ok(())
    })();
    if let Err(e) = read {
        eprintln!("niceeval: --resume: {e}; the evals not read run again");
    }
    finished
}

/// What is running and for how long; marks (in `named_slow`) the evals newly past `slow_after`.
fn progress(
    started: Instant,
    running: &HashMap<tokio::task::Id, (String, Instant)>,
    named_slow: &mut HashSet<tokio::task::Id>,
    slow_after: Duration,
) -> Progress {
    let mut progress = Progress {
        elapsed: started.elapsed(),
        slow_after,
        ..Progress::default()
    };
    for (task, (id, since)) in running {
        let elapsed = since.elapsed();
        if elapsed >= slow_after && named_slow.insert(*task) {
            progress.newly_slow.push(id.clone());
        }
        progress.running.push((id.clone(), elapsed));
    }
    progress
        .running
        .sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    progress.newly_slow.sort();
    progress
}

/// The signals that interrupt a suite: Ctrl-C everywhere, and SIGTERM on Unix (what
/// `timeout`, CI runners cancelling a job and `docker stop` send). Listening replaces the
/// default action (ending the process on the spot) for the rest of the process's life, so a
/// second signal while the reports are written does not cut them short.
struct Signals {
    #[cfg(unix)]
    interrupt: Option<tokio::signal::unix::Signal>,
    #[cfg(unix)]
    terminate: Option<tokio::signal::unix::Signal>,
}

impl Signals {
    /// Starts listening (must run inside the runtime). A signal that cannot be listened to is
    /// reported on stderr and otherwise ignored: it keeps its default action.
    fn listen() -> Self {
        #[cfg(unix)]
        {
            use tokio::signal::unix::{SignalKind, signal};
            let listen = |kind: SignalKind, name: &str| {
                signal(kind)
                    .map_err(|e| eprintln!("niceeval: cannot listen for {name}: {e}"))
                    .ok()
            };
            Signals {
                interrupt: listen(SignalKind::interrupt(), "SIGINT"),
                terminate: listen(SignalKind::terminate(), "SIGTERM"),
            }
        }
        #[cfg(not(unix))]
        {
            Signals {}
        }
    }

    /// The next signal received; pending forever when none can arrive.
    async fn recv(&mut self) -> Signal {
        #[cfg(unix)]
        {
            async fn next(signal: &mut Option<tokio::signal::unix::Signal>) {
                if let Some(signal) = signal
                    && signal.recv().await.is_some()
                {
                    return;
                }
                std::future::pending().await
            }
            tokio::select! {
                () = next(&mut self.interrupt) => Signal::Interrupt,
                () = next(&mut self.terminate) => Signal::Terminate,
            }
        }
        #[cfg(not(unix))]
        {
            match tokio::signal::ctrl_c().await {
                Ok(()) => Signal::Interrupt,
                // Cannot listen: never interrupted.
                Err(_) => std::future::pending().await,
            }
        }
    }
}

/// The error of an eval whose configuration [`check_configs`] printed.
const CONFIG_REPORTED: &str =
    "the configuration is invalid; its errors are printed once, before the results";

/// Loads the configuration of every crate the evals come from (once per crate, cached for
/// the evals that run), prints each invalid one on stderr, and returns their manifest
/// directories.
fn check_configs(evals: &[Listed]) -> BTreeSet<String> {
    let dirs: BTreeSet<&str> = evals.iter().map(Listed::manifest_dir).collect();
    let mut invalid = BTreeSet::new();
    for dir in dirs {
        if let Err(error) = Config::for_manifest_dir(dir) {
            let count = error.errors().len();
            let mut text = format!(
                "error: the niceeval configuration of {dir} is invalid ({count} error{}); its evals fail without running:\n",
                if count == 1 { "" } else { "s" }
            );
            for line in error.to_string().lines() {
                text.push_str("  ");
                text.push_str(line);
                text.push('\n');
            }
            eprint!("{text}");
            invalid.insert(dir.to_string());
        }
    }
    invalid
}

/// Runs one eval and, when it asks for one, checks its snapshot.
async fn run_one(def: Def, options: &RunOptions) -> EvalReport {
    let mut report = run_def(def.clone(), options).await;
    if def.snapshot {
        // insta compares and writes files: keep that off the runtime's worker threads.
        let checked = def.clone();
        report = match tokio::task::spawn_blocking(move || {
            crate::output::snapshot::check_in_suite(&checked, &mut report);
            report
        })
        .await
        {
            Ok(report) => report,
            Err(e) => {
                let mut failed = EvalReport::empty(&def);
                failed.error = Some(crate::base::outcome::RunError::new(
                    crate::base::outcome::RunErrorKind::Assertion,
                    format!("checking the snapshot failed: {e}"),
                ));
                failed
            }
        };
    }
    report
}

fn deliver(report: &EvalReport, reporters: &mut [Box<dyn Reporter>]) {
    super::outputs::deliver(reporters, |r| r.on_eval_complete(report));
}

fn ignored_report(def: &EvalDefinition) -> EvalReport {
    let mut report = EvalReport::empty(def);
    report.outcome = Outcome::Skipped;
    report.skip_reason = Some("#[ignore]d; run with --ignored or --include-ignored".into());
    report
}
