//! Executing an eval: builds the handle, runs the body on a Tokio runtime under a timeout with
//! panics contained, evaluates the assertions registered for after the body, folds every run
//! into an [`EvalReport`], and (under `cargo test`) turns the report into a pass, a visible skip,
//! or a failure whose message is the assertion report.

use std::collections::HashMap;
use std::io::Write as _;
use std::path::Path;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use crate::agent::Agent;
use crate::config::Config;
use crate::definition::EvalDefinition;
use crate::error::Error;
use crate::eval::Eval;
use crate::event::Usage;
use crate::outcome::{fold, mean_score, Outcome};
use crate::record::Record;
use crate::report::{EvalReport, RunSummary};

/// The text of a panic payload.
pub(crate) fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "panic with a non-string payload".to_string()
    }
}

/// The configuration for evals of the crate at `manifest_dir`, loaded once per process.
pub(crate) fn config_for(manifest_dir: &str) -> Result<Arc<Config>, Error> {
    static CACHE: OnceLock<Mutex<HashMap<String, Result<Arc<Config>, String>>>> = OnceLock::new();
    let cache = CACHE.get_or_init(Default::default);
    let mut cache = cache.lock().unwrap_or_else(|p| p.into_inner());
    let entry = cache.entry(manifest_dir.to_string()).or_insert_with(|| {
        Config::discover(Path::new(manifest_dir))
            .map(Arc::new)
            .map_err(|e| e.to_string())
    });
    entry.clone().map_err(Error::Message)
}

/// Runs every run of an eval and reports.
pub fn run_eval(def: &'static EvalDefinition) -> EvalReport {
    let started = Instant::now();
    let config = config_for(def.manifest_dir);
    let strict = def.strict || config.as_ref().is_ok_and(|c| c.run.strict);
    let min_pass_rate = def.min_pass_rate.unwrap_or(1.0);
    let mut runs: Vec<(RunSummary, RunDetail)> = Vec::new();
    match config {
        Err(e) => runs.push(failed_before_start(e.to_string())),
        Ok(config) => {
            let count = def.runs.or(config.run.runs).unwrap_or(1).max(1);
            let timeout = def.timeout.unwrap_or_else(|| config.timeout());
            match runtime() {
                Err(e) => runs.push(failed_before_start(format!(
                    "cannot start the Tokio runtime: {e}"
                ))),
                Ok(rt) => {
                    for _ in 0..count {
                        runs.push(run_once(def, &rt, &config, strict, timeout));
                    }
                    rt.shutdown_background();
                }
            }
        }
    }
    assemble(def, runs, strict, min_pass_rate, started.elapsed())
}

fn runtime() -> std::io::Result<tokio::runtime::Runtime> {
    // Two workers: a body that blocks its worker thread cannot stop the timer that enforces
    // the timeout.
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .thread_name("niceeval-eval")
        .enable_all()
        .build()
}

/// What the report keeps of a run beyond its summary.
struct RunDetail {
    assertions: Vec<crate::assertion::AssertionResult>,
    events: Vec<crate::event::Event>,
}

fn failed_before_start(error: String) -> (RunSummary, RunDetail) {
    (
        RunSummary {
            outcome: Outcome::Failed,
            error: Some(error),
            below_threshold: false,
            skip_reason: None,
            score: None,
            duration_ms: 0.0,
            usage: Usage::default(),
            cost_usd: None,
        },
        RunDetail {
            assertions: Vec::new(),
            events: Vec::new(),
        },
    )
}

fn make_agent(def: &EvalDefinition, config: &Config) -> Result<Option<Arc<dyn Agent>>, String> {
    if let Some(factory) = def.agent {
        return std::panic::catch_unwind(factory)
            .map(Some)
            .map_err(|p| format!("creating the agent panicked: {}", panic_message(&*p)));
    }
    match &config.agent {
        None => Ok(None),
        Some(agent) => crate::agent::from_config(agent, config.source.as_deref()).map(Some),
    }
}

fn run_once(
    def: &'static EvalDefinition,
    rt: &tokio::runtime::Runtime,
    config: &Arc<Config>,
    strict: bool,
    timeout: Duration,
) -> (RunSummary, RunDetail) {
    let started = Instant::now();
    let record = Arc::new(Record::default());
    let error = match make_agent(def, config) {
        Err(e) => Some(e),
        Ok(agent) => {
            let eval = Eval::new(def.id(), agent, config.clone(), record.clone());
            let task = rt.spawn(async move {
                let mut t = eval;
                (def.body)(&mut t).await
            });
            let abort = task.abort_handle();
            let joined = rt.block_on(async { tokio::time::timeout(timeout, task).await });
            match joined {
                Err(_elapsed) => {
                    abort.abort();
                    Some(format!(
                        "timed out after {}; raise it with #[eval(timeout = \"..\")] or [run] timeout in niceeval.toml",
                        format_duration(timeout)
                    ))
                }
                Ok(Err(join)) if join.is_panic() => Some(format!(
                    "the eval body panicked: {}",
                    panic_message(&*join.into_panic())
                )),
                Ok(Err(join)) => Some(format!("the eval body was cancelled: {join}")),
                Ok(Ok(Err(e))) if e.is_execution_error() => Some(e.to_string()),
                Ok(Ok(_)) => None,
            }
        }
    };
    let taken = record.take();
    let mut assertions = taken.results;
    assertions.extend(crate::scope::evaluate_all(
        taken.pending,
        &taken.log,
        config,
    ));
    let folded = fold(error.as_deref(), &assertions, taken.skip.as_deref(), strict);
    let usage = Usage::from_events(&taken.log);
    let summary = RunSummary {
        outcome: folded.outcome,
        error: folded.error,
        below_threshold: folded.below_threshold,
        skip_reason: taken.skip,
        score: mean_score(&assertions),
        duration_ms: started.elapsed().as_secs_f64() * 1000.0,
        usage,
        cost_usd: usage.cost_usd,
    };
    (
        summary,
        RunDetail {
            assertions,
            events: taken.log,
        },
    )
}

fn assemble(
    def: &'static EvalDefinition,
    runs: Vec<(RunSummary, RunDetail)>,
    strict: bool,
    min_pass_rate: f64,
    elapsed: Duration,
) -> EvalReport {
    let counted: Vec<&RunSummary> = runs
        .iter()
        .map(|(s, _)| s)
        .filter(|s| s.outcome != Outcome::Skipped)
        .collect();
    let passed = counted
        .iter()
        .filter(|s| s.outcome == Outcome::Passed)
        .count();
    let pass_rate = if counted.is_empty() {
        1.0
    } else {
        passed as f64 / counted.len() as f64
    };
    let outcome = if runs.len() == 1 {
        runs[0].0.outcome
    } else if counted.is_empty() {
        Outcome::Skipped
    } else if pass_rate >= min_pass_rate {
        Outcome::Passed
    } else {
        Outcome::Failed
    };
    let representative = runs
        .iter()
        .position(|(s, _)| s.outcome == Outcome::Failed)
        .unwrap_or(runs.len().saturating_sub(1));
    let mut summaries = Vec::with_capacity(runs.len());
    let mut detail = None;
    for (i, (summary, run_detail)) in runs.into_iter().enumerate() {
        if i == representative {
            detail = Some((summary.clone(), run_detail));
        }
        summaries.push(summary);
    }
    let (rep, RunDetail { assertions, events }) =
        detail.unwrap_or_else(|| failed_before_start("the eval did not run".to_string()));
    EvalReport {
        id: def.id(),
        file: def.file.to_string(),
        line: def.line,
        tags: def.tags.iter().map(|t| t.to_string()).collect(),
        description: def.description.map(str::to_string),
        outcome,
        strict,
        error: rep.error,
        below_threshold: rep.below_threshold,
        skip_reason: rep.skip_reason,
        metrics: crate::outcome::metric_scores(&assertions),
        assertions,
        score: rep.score,
        duration_ms: elapsed.as_secs_f64() * 1000.0,
        usage: rep.usage,
        cost_usd: rep.cost_usd,
        events,
        runs: summaries,
        pass_rate,
        min_pass_rate,
    }
}

fn format_duration(d: Duration) -> String {
    if d.subsec_millis() == 0 {
        format!("{}s", d.as_secs())
    } else {
        format!("{}ms", d.as_millis())
    }
}

/// The entry point of a `#[eval]` test under `cargo test`: runs the eval, prints its report
/// (captured by the test harness, so shown for failures and with `--nocapture`), announces a
/// skip on the terminal, and fails the test when the eval failed.
///
/// A failure unwinds with `resume_unwind`, which skips the panic hook: the report is the whole
/// failure message, with no panic location or backtrace around it.
pub fn run_test(def: &'static EvalDefinition) {
    let report = run_eval(def);
    match report.outcome {
        Outcome::Failed => {
            let text = report.render();
            println!("{text}");
            std::panic::resume_unwind(Box::new(text));
        }
        Outcome::Skipped => {
            // libtest has no runtime skip; say it where the user sees it, past output capture.
            let reason = report.skip_reason.as_deref().unwrap_or("no reason given");
            let mut stderr = std::io::stderr().lock();
            let _ = writeln!(stderr, "niceeval: SKIPPED {}: {reason}", report.id);
            println!("{}", report.render());
        }
        Outcome::Passed => println!("{}", report.render()),
    }
}
