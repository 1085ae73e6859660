//! Executing an eval: builds the handle, runs the body on a Tokio runtime under a timeout with
//! panics contained, evaluates the assertions registered for after the body, folds every run
//! into an [`EvalReport`], and (under `cargo test`) turns the report into a pass, a visible skip,
//! or a failure whose message is the assertion report.
//!
//! Every text a report keeps (messages, thinking, tool inputs and outputs, assertion reasons,
//! errors) is capped per value to `[report] max_text` (default 64 KiB) as each run ends, after
//! its assertions have seen the whole of it: every output (JSONL, results files, HTML, the
//! printed report) gets the capped form.

use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::agents::agent::Agent;
use crate::base::event::Usage;
use crate::base::outcome::{Outcome, RunError, RunErrorKind, fold, mean_score};
use crate::base::stats::Reliability;
use crate::checks::scope::RunView;
use crate::config::Config;
use crate::run::definition::{Def, Defined, EvalDefinition, Setup};
use crate::run::error::Error;
use crate::run::eval::Eval;
use crate::run::record::Record;
use crate::run::report::{EvalReport, RunSummary};

/// How many runs an eval gets. The most specific *invocation* setting wins over the eval's
/// own attribute, which wins over the project's file:
///
/// 1. `--runs N` on the suite runner's command line ([`RunOptions::runs`]);
/// 2. the `NICEEVAL_RUNS` environment variable;
/// 3. `#[eval(runs = N)]`;
/// 4. `[run] runs` in `niceeval.toml`;
/// 5. one run.
///
/// So `NICEEVAL_RUNS=20 cargo test` runs every eval 20 times (a nightly reliability job), and
/// `NICEEVAL_RUNS=1` makes a quick local pass over evals that normally run many times.
fn run_count(options: &RunOptions, def: &EvalDefinition, config: &Config) -> usize {
    // `apply_env` also wrote NICEEVAL_RUNS into `config.run.runs`; it has ranked above the
    // attribute by then, so the file's value is only reached when the variable is unset.
    options
        .runs
        .or_else(crate::config::env_runs)
        .or(def.runs)
        .or(config.run.runs)
        .unwrap_or(1)
        .max(1) as usize
}

/// Overrides a suite runner applies on top of the attribute and configuration.
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct RunOptions {
    /// Runs per eval (`--runs`), beating `NICEEVAL_RUNS`, `#[eval(runs)]` and the
    /// configuration (the order is documented on [`run_eval_async`]).
    pub runs: Option<u32>,
    /// Strict mode (`--strict`); strict is on when this, the attribute or the configuration says
    /// so.
    pub strict: bool,
    /// Timeout per run (`--timeout`), beating the attribute and the configuration.
    pub timeout: Option<Duration>,
    /// How many runs of one eval may run at once (default: `[run] concurrency`, else 4).
    pub run_concurrency: Option<usize>,
    /// `--retry-errors N`: how many times a run that ended in an execution error is run again
    /// (a timeout, the agent's or a judge's error); only its last attempt is a run.
    pub retry_errors: u32,
}

/// Whether a run's error is one `--retry-errors` retries: a timeout, or the agent's or a
/// judge's failure (a provider's 5xx after its own retries, a dropped connection) — what
/// another attempt may not meet. A panic, the body's own error, a failed assertion, a bad
/// configuration would fail the same way again.
fn retriable(run: &RunSummary) -> bool {
    run.error.as_ref().is_some_and(|e| {
        matches!(
            e.kind,
            RunErrorKind::Timeout | RunErrorKind::Agent | RunErrorKind::Judge
        )
    })
}

/// [`run_once`], again while it ends in a [`retriable`] error, at most `retries` more times;
/// the run that counts is the last attempt, which says how many came before it.
async fn run_attempts(
    def: Def,
    config: Arc<Config>,
    strict: bool,
    timeout: Duration,
    retries: u32,
) -> (RunSummary, RunDetail) {
    let mut attempt = 0;
    loop {
        let mut run = run_once(def.clone(), config.clone(), strict, timeout).await;
        if attempt < retries && retriable(&run.0) {
            attempt += 1;
            continue;
        }
        run.0.retries = attempt;
        return run;
    }
}

/// Runs every run of an eval on a runtime of its own and reports. This is what a `#[eval]`
/// test calls under `cargo test`.
pub fn run_eval(def: &'static EvalDefinition) -> EvalReport {
    match runtime() {
        Err(e) => assemble(
            def,
            vec![failed_before_start(RunError::new(
                RunErrorKind::Setup,
                format!("cannot start the Tokio runtime: {e}"),
            ))],
            def.strict,
            def.min_pass_rate.unwrap_or(1.0),
            Duration::ZERO,
        ),
        Ok(rt) => {
            let report = rt.block_on(run_eval_async(def, &RunOptions::default()));
            rt.shutdown_background();
            report
        }
    }
}

/// Runs every run of an eval on the current Tokio runtime (which must be multi-threaded, so a
/// body that blocks its thread cannot stop the timeout) and reports.
///
/// The number of runs comes from, in this order: `options.runs` (the suite runner's `--runs`),
/// the `NICEEVAL_RUNS` environment variable, `#[eval(runs = N)]`, `[run] runs` in
/// `niceeval.toml`, else 1. Runs of one eval run concurrently, at most `options.run_concurrency`
/// (else `[run] concurrency`, else 4) at a time; each gets a fresh handle and record.
pub async fn run_eval_async(def: &'static EvalDefinition, options: &RunOptions) -> EvalReport {
    run_def(Def::Static(def), options).await
}

/// [`run_eval_async`] for a definition the suite runner holds: one of the process's, or one
/// made for this run (a deferred data eval's case), dropped when its report is made.
pub(crate) async fn run_def(def: Def, options: &RunOptions) -> EvalReport {
    let started = Instant::now();
    let config = Config::for_manifest_dir(def.manifest_dir);
    let strict = options.strict || def.strict || config.as_ref().is_ok_and(|c| c.run.strict);
    let min_pass_rate = def.min_pass_rate.unwrap_or(1.0);
    let runs = match config {
        Err(e) => vec![failed_before_start(RunError::new(
            RunErrorKind::Config,
            e.to_string(),
        ))],
        Ok(config) => {
            // What the body's assertions cut from a value (their reasons' excerpts) masks the
            // secrets these rules name before it cuts, as the run's report masks them after.
            crate::base::redact::note_rules(config.report.redact.as_deref().unwrap_or_default());
            let count = run_count(options, &def, &config);
            let timeout = options
                .timeout
                .or(def.timeout)
                .unwrap_or_else(|| config.timeout());
            let parallel = options
                .run_concurrency
                .or(config.run.concurrency)
                .unwrap_or(4)
                .clamp(1, count);
            let retries = options.retry_errors;
            run_many(&def, &config, strict, timeout, count, parallel, retries).await
        }
    };
    assemble(&def, runs, strict, min_pass_rate, started.elapsed())
}

/// The report of an eval that was not run because of `error` (the suite runner's verdict on
/// evals whose configuration it found invalid before starting): one failed run, no body.
pub(crate) fn not_run(def: &EvalDefinition, options: &RunOptions, error: RunError) -> EvalReport {
    assemble(
        def,
        vec![failed_before_start(error)],
        options.strict || def.strict,
        def.min_pass_rate.unwrap_or(1.0),
        Duration::ZERO,
    )
}

async fn run_many(
    def: &Def,
    config: &Arc<Config>,
    strict: bool,
    timeout: Duration,
    count: usize,
    parallel: usize,
    retries: u32,
) -> Vec<(RunSummary, RunDetail)> {
    if count == 1 {
        return vec![run_attempts(def.clone(), config.clone(), strict, timeout, retries).await];
    }
    let mut results: Vec<Option<(RunSummary, RunDetail)>> = (0..count).map(|_| None).collect();
    let mut set = tokio::task::JoinSet::new();
    let mut next = 0;
    while next < count || !set.is_empty() {
        while next < count && set.len() < parallel {
            let config = config.clone();
            let index = next;
            let def = def.clone();
            set.spawn(async move {
                (
                    index,
                    run_attempts(def, config, strict, timeout, retries).await,
                )
            });
            next += 1;
        }
        match set.join_next().await {
            Some(Ok((index, run))) => results[index] = Some(run),
            Some(Err(e)) => {
                // run_once contains its own panics; reaching this is a bug in niceeval.
                let slot = results.iter_mut().find(|r| r.is_none());
                if let Some(slot) = slot {
                    *slot = Some(failed_before_start(RunError::new(
                        RunErrorKind::Setup,
                        format!("a run was lost: {e}"),
                    )));
                }
            }
            None => break,
        }
    }
    results
        .into_iter()
        .map(|r| {
            r.unwrap_or_else(|| {
                failed_before_start(RunError::new(RunErrorKind::Setup, "a run was lost"))
            })
        })
        .collect()
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
    assertions: Vec<crate::base::assertion::AssertionResult>,
    events: Vec<crate::base::event::Event>,
    /// The body ended early at a failed `t.require`.
    stopped: Option<String>,
}

fn failed_before_start(error: RunError) -> (RunSummary, RunDetail) {
    (
        RunSummary {
            outcome: Outcome::Failed,
            error: Some(error),
            below_threshold: false,
            skip_reason: None,
            score: None,
            metrics: Default::default(),
            duration_ms: 0.0,
            usage: Usage::default(),
            cost_usd: None,
            judge_usage: Usage::default(),
            workspace: None,
            retries: 0,
            reply: None,
            reasons: Vec::new(),
        },
        RunDetail {
            assertions: Vec::new(),
            events: Vec::new(),
            stopped: None,
        },
    )
}

fn make_agent(def: &EvalDefinition, config: &Config) -> Result<Option<Arc<dyn Agent>>, RunError> {
    if let Some(factory) = def.agent {
        return std::panic::catch_unwind(factory).map(Some).map_err(|p| {
            RunError::new(
                RunErrorKind::Panic,
                format!(
                    "creating the agent panicked: {}",
                    crate::base::panic::message(&*p)
                ),
            )
        });
    }
    match &config.agent {
        None => Ok(None),
        Some(agent) => crate::agents::agent::from_config(agent, config.source.as_deref())
            .map(Some)
            .map_err(|e| RunError::new(RunErrorKind::Config, e.to_string())),
    }
}

/// The run's working copy, for an eval with `#[eval(workspace = ..)]`: the template copied and
/// its baseline recorded (on a blocking thread: a large template takes a moment).
async fn make_workspace(
    def: &EvalDefinition,
    config: &Config,
) -> Result<Option<Arc<crate::resources::workspace::Workspace>>, RunError> {
    let Some(dir) = def.workspace else {
        return Ok(None);
    };
    let base = std::path::Path::new(def.manifest_dir);
    let template = base.join(dir);
    let settings =
        crate::resources::workspace::Settings::from_config(&config.workspace, Some(base));
    let created = tokio::task::spawn_blocking(move || {
        crate::resources::workspace::Workspace::create(&template, &settings)
    })
    .await;
    match created {
        Ok(Ok(ws)) => Ok(Some(Arc::new(ws))),
        Ok(Err(e)) => Err(RunError::new(
            RunErrorKind::Setup,
            format!("cannot make the working copy of workspace {dir:?}: {e}"),
        )),
        Err(e) => Err(RunError::new(
            RunErrorKind::Setup,
            format!("making the working copy of workspace {dir:?} failed: {e}"),
        )),
    }
}

/// What the handle of a run is made of, before its agent is known.
struct Handle {
    def: Def,
    config: Arc<Config>,
    record: Arc<Record>,
    workspace: Option<Arc<crate::resources::workspace::Workspace>>,
    #[cfg(feature = "otel")]
    trace: Arc<crate::agents::trace::RunTrace>,
}

impl Handle {
    /// The run's handle, sending to `agent`; `config` replaces the run's configuration (a data
    /// eval's judge).
    fn eval(self, agent: Option<Arc<dyn Agent>>, config: Option<Arc<Config>>) -> Eval {
        let def = &self.def;
        let eval = Eval::new(def.id(), agent, config.unwrap_or(self.config), self.record)
            .with_judge_model(def.judge_model)
            .with_manifest_dir(def.manifest_dir)
            .with_case(def.own_case().map(|c| (c.id.as_str(), c.name.as_str())))
            .with_workspace(self.workspace);
        #[cfg(feature = "otel")]
        let eval = eval.with_trace(self.trace);
        eval
    }
}

/// A run of an eval defined from data: its start names the agent, the judge and the earlier
/// turns, from which the handle is made; then its body runs.
async fn run_data(handle: Handle, data: Defined) -> Result<(), Error> {
    let setup = Setup {
        configured_judge: handle.config.judge.model.clone(),
    };
    let start = data.0.start(&setup).await?;
    let agent = match start.agent {
        Some(agent) => Some(agent),
        None => make_agent(&handle.def, &handle.config).map_err(|e| match e.kind {
            RunErrorKind::Panic => Error::msg(e.message),
            _ => Error::Data(e.message.into()),
        })?,
    };
    let config = start.judge.map(|judge| {
        let mut config = Config::clone(&handle.config);
        config.judge.model = Some(judge.model);
        config.judge.base_url = judge.base_url;
        config.judge.api_key_env = judge.api_key_env;
        Arc::new(config)
    });
    let mut t = handle.eval(agent, config);
    t.seed_history(start.history);
    data.0.run(&mut t, start.run).await
}

async fn run_once(
    def: Def,
    config: Arc<Config>,
    strict: bool,
    timeout: Duration,
) -> (RunSummary, RunDetail) {
    let started = Instant::now();
    let record = Arc::new(Record::default());
    let mut stopped = None;
    let workspace = make_workspace(&def, &config).await;
    let kept_workspace = workspace.as_ref().ok().cloned().flatten();
    #[cfg(feature = "otel")]
    let run_trace = crate::agents::trace::RunTrace::start();
    // A data eval names its agent when it starts (inside the run's task): the configured one
    // is made only for it, and only when it names none.
    let agent = match &def.data {
        Some(_) => Ok(None),
        None => make_agent(&def, &config),
    };
    let error = match agent.and_then(|agent| Ok((agent, workspace?))) {
        Err(e) => Some(e),
        Ok((agent, workspace)) => {
            let handle = Handle {
                def: def.clone(),
                config: config.clone(),
                record: record.clone(),
                workspace,
                #[cfg(feature = "otel")]
                trace: run_trace.clone(),
            };
            let body = def.clone();
            let task = tokio::spawn(async move {
                if let Some(data) = body.data.clone() {
                    return run_data(handle, data).await;
                }
                let mut t = handle.eval(agent, None);
                match (body.dataset, body.own_case()) {
                    (Some(dataset), Some(case)) => (dataset.body)(&mut t, case).await,
                    // A dataset eval runs as its cases; here only when they could not be read.
                    (Some(_), None) => match &body {
                        Def::Static(def) => crate::run::dataset::cases(def).transpose(),
                        Def::Made(_) => Ok(None),
                    }
                    .and_then(|_| {
                        Err(crate::run::error::Error::Case(format!(
                            "{} is a dataset eval: it runs as one eval per case",
                            body.id()
                        )))
                    }),
                    (None, _) => (body.body)(&mut t).await,
                }
            });
            let abort = task.abort_handle();
            match tokio::time::timeout(timeout, task).await {
                Err(_elapsed) => {
                    abort.abort();
                    Some(RunError::new(
                        RunErrorKind::Timeout,
                        format!(
                            "timed out after {}; raise it with #[eval(timeout = \"..\")] or [run] timeout in niceeval.toml",
                            format_duration(timeout)
                        ),
                    ))
                }
                Ok(Err(join)) if join.is_panic() => Some(RunError::new(
                    RunErrorKind::Panic,
                    format!(
                        "the eval body panicked: {}",
                        crate::base::panic::message(&*join.into_panic())
                    ),
                )),
                Ok(Err(join)) => Some(RunError::new(
                    RunErrorKind::Cancelled,
                    format!("the eval body was cancelled: {join}"),
                )),
                Ok(Ok(Err(e))) if e.is_execution_error() => {
                    Some(RunError::new(e.run_error_kind(), e.to_string()))
                }
                Ok(Ok(Err(Error::Required { name, .. }))) => {
                    stopped = Some(format!(
                        "t.require({name}) did not pass; the rest of the body did not run"
                    ));
                    None
                }
                Ok(Ok(_)) => None,
            }
        }
    };
    // A turn cut short still records what it changed in the working copy.
    if def.workspace.is_some() {
        let settling = record.clone();
        let _ = tokio::task::spawn_blocking(move || settling.settle_workspace()).await;
    }
    // Spans that came after the run's last turn are the run's too; later ones are late.
    #[cfg(feature = "otel")]
    {
        let spans = run_trace.take(Duration::ZERO).await;
        if !spans.is_empty() {
            record.append(crate::agents::trace::events(spans, &[]));
        }
        drop(run_trace);
    }
    let taken = record.take();
    let mut assertions = taken.results;
    let view = RunView {
        events: &taken.log,
        config: &config,
    };
    // Costly checks cannot change the outcome of a run that already ended in an execution error
    // or a skip: they are not graded then.
    let costly = error.is_none() && taken.skip.is_none();
    assertions.extend(crate::checks::scope::perform(taken.deferred, &view, costly).await);
    let folded = fold(error, &assertions, taken.skip.as_deref(), strict);
    let usage = Usage::from_events(&taken.log);
    let workspace = match kept_workspace {
        None => None,
        Some(ws) => {
            let passed = folded.outcome != Outcome::Failed;
            tokio::task::spawn_blocking(move || ws.finish(passed))
                .await
                .ok()
                .flatten()
                .map(|p| p.display().to_string())
        }
    };
    let summary = RunSummary {
        outcome: folded.outcome,
        error: folded.error,
        below_threshold: folded.below_threshold,
        skip_reason: taken.skip,
        score: mean_score(&assertions),
        metrics: crate::base::outcome::metric_scores(&assertions),
        duration_ms: started.elapsed().as_secs_f64() * 1000.0,
        usage,
        // agent-reported where given, else estimated from the price table; None when unknown
        cost_usd: crate::resources::price::run_cost(&taken.log, &config),
        judge_usage: spent_by_assertions(&assertions),
        workspace,
        retries: 0,
        reply: None,
        reasons: Vec::new(),
    };
    let mut run = (
        summary,
        RunDetail {
            assertions,
            events: taken.log,
            stopped,
        },
    );
    // Every assertion has seen the whole run by now: the report keeps each text with its
    // secrets masked, and capped.
    redact_run(
        &mut run,
        &redactor(config.report.redact.as_deref().unwrap_or_default()),
    );
    cap_run(&mut run, config.max_text());
    run
}

/// What the assertions of a run spent themselves (the model calls of costly checks), summed.
fn spent_by_assertions(assertions: &[crate::base::assertion::AssertionResult]) -> Usage {
    let mut total = Usage::default();
    // Each judge call is priced on its own: an unpriced one makes the total unknown.
    for usage in assertions.iter().filter_map(|a| a.usage.as_ref()) {
        total.add_call(usage);
    }
    total
}

/// The redactor of this process's environment and of the `[report] redact` rules (checked when
/// the configuration was loaded, so an invalid rule cannot reach here; were one to, the
/// environment's secrets are still masked).
fn redactor(rules: &[String]) -> std::sync::Arc<crate::base::redact::Redactor> {
    crate::base::redact::Redactor::for_rules(rules)
        .or_else(|_| crate::base::redact::Redactor::for_rules(&[]))
        .unwrap_or_else(|_| std::sync::Arc::new(crate::base::redact::Redactor::none()))
}

/// Masks the secrets of the environment and of `[report] redact` in every text the report
/// keeps of a run (see [`crate::base::redact`]), before anything prints or writes it.
fn redact_run(
    (summary, detail): &mut (RunSummary, RunDetail),
    redactor: &crate::base::redact::Redactor,
) {
    if redactor.is_empty() {
        return;
    }
    if let Some(error) = &mut summary.error {
        error.redact_texts(redactor);
    }
    for text in [&mut summary.skip_reason, &mut detail.stopped]
        .into_iter()
        .flatten()
    {
        redactor.in_place(text);
    }
    for event in &mut detail.events {
        event.redact_texts(redactor);
    }
    for assertion in &mut detail.assertions {
        assertion.redact_texts(redactor);
    }
}

/// Caps every text the report keeps of a run to about `max` bytes per value (`[report]
/// max_text`): event texts and JSON values, assertion names, reasons and errors, the run's
/// error, skip reason and where it stopped. Texts that fit are not copied; a long reply's
/// only full copy is dropped here.
fn cap_run((summary, detail): &mut (RunSummary, RunDetail), max: usize) {
    let cap = |text: &mut String| {
        if let std::borrow::Cow::Owned(kept) = crate::base::excerpt::cap(text, max) {
            *text = kept;
        }
    };
    if let Some(error) = &mut summary.error {
        error.cap_texts(max);
    }
    if let Some(reason) = &mut summary.skip_reason {
        cap(reason);
    }
    if let Some(stopped) = &mut detail.stopped {
        cap(stopped);
    }
    for event in &mut detail.events {
        event.cap_texts(max);
    }
    for assertion in &mut detail.assertions {
        assertion.cap_texts(max);
    }
}

fn assemble(
    def: &EvalDefinition,
    runs: Vec<(RunSummary, RunDetail)>,
    strict: bool,
    min_pass_rate: f64,
    elapsed: Duration,
) -> EvalReport {
    let mut summaries: Vec<RunSummary> = runs.iter().map(|(s, _)| s.clone()).collect();
    let (outcome, _) = crate::run::report::fold_runs(&summaries, min_pass_rate);
    let representative = crate::run::report::representative(&summaries, outcome);
    // The report keeps the events and assertions of one run: the first few other runs that
    // failed keep why (their reply and reasons) in their summary.
    for (summary, (_, detail)) in summaries
        .iter_mut()
        .zip(&runs)
        .enumerate()
        .filter(|(i, (s, _))| *i != representative && s.outcome == Outcome::Failed)
        .map(|(_, pair)| pair)
        .take(RunSummary::FAILED_RUNS_KEPT)
    {
        summary.keep_failure(&detail.assertions, &detail.events);
    }
    let (
        rep,
        RunDetail {
            assertions,
            events,
            stopped,
        },
    ) = runs.into_iter().nth(representative).unwrap_or_else(|| {
        failed_before_start(RunError::new(RunErrorKind::Setup, "the eval did not run"))
    });
    let mut report = EvalReport {
        id: def.id(),
        file: def.file.to_string(),
        line: def.line,
        tags: def.tags.iter().map(|t| t.to_string()).collect(),
        description: def.own_description().map(str::to_string),
        outcome: rep.outcome,
        strict,
        error: rep.error,
        below_threshold: rep.below_threshold,
        skip_reason: rep.skip_reason,
        stopped,
        metrics: crate::base::outcome::metric_scores(&assertions),
        assertions,
        score: rep.score,
        duration_ms: elapsed.as_secs_f64() * 1000.0,
        usage: rep.usage,
        cost_usd: rep.cost_usd,
        total_usage: Usage::default(),
        judge_usage: Usage::default(),
        events,
        runs: summaries,
        reliability: Reliability::new(0, 0),
        mean_run_ms: 0.0,
        max_run_ms: 0.0,
        min_pass_rate,
        dataset: def.dataset_id(),
        min_case_pass_rate: def.min_case_pass_rate(),
        matrix: def.own_case().and_then(|c| c.matrix.clone()),
        run: None,
    };
    report.recompute();
    report
}

fn format_duration(d: Duration) -> String {
    if d.subsec_millis() == 0 {
        format!("{}s", d.as_secs())
    } else {
        format!("{}ms", d.as_millis())
    }
}

#[cfg(test)]
mod retry_tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::*;
    use crate::agents::agent::{AgentError, Request, agent_fn};
    use crate::run::definition::BoxFuture;

    /// Calls of the flaky agent so far: it fails (as a provider's 503 would) the first two.
    static CALLS: AtomicUsize = AtomicUsize::new(0);

    fn flaky_agent() -> Arc<dyn Agent> {
        Arc::new(agent_fn(|request: Request| async move {
            if CALLS.fetch_add(1, Ordering::SeqCst) < 2 {
                return Err(AgentError::new("503 Service Unavailable"));
            }
            request.events.say("ok");
            Ok(())
        }))
    }

    fn body(t: &mut Eval) -> BoxFuture<'_, crate::run::error::Result> {
        Box::pin(async move {
            t.send("hello").await?;
            Ok(())
        })
    }

    fn def() -> &'static EvalDefinition {
        let dir = tempfile::tempdir().expect("a temporary directory").keep();
        std::fs::write(dir.join("niceeval.toml"), "# retries\n").expect("writable");
        let dir: &'static str = Box::leak(dir.display().to_string().into_boxed_str());
        Box::leak(Box::new(
            EvalDefinition::new("flaky", "engine::retry", file!(), line!(), dir, body)
                .with_agent(flaky_agent),
        ))
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn execution_errors_are_retried_and_the_retries_are_not_runs() {
        let def = def();
        let options = |retry_errors| RunOptions {
            runs: Some(1),
            retry_errors,
            ..RunOptions::default()
        };
        // One retry is not enough: the second attempt fails too, and is the run.
        let report = run_eval_async(def, &options(1)).await;
        assert_eq!(report.outcome, Outcome::Failed);
        assert_eq!(report.runs.len(), 1);
        assert_eq!(report.runs[0].retries, 1);
        assert_eq!(
            report.runs[0].error.as_ref().map(|e| e.kind),
            Some(RunErrorKind::Agent)
        );
        // The third call succeeds: with retries left, the run passes, and only it counts.
        CALLS.store(0, Ordering::SeqCst);
        let report = run_eval_async(def, &options(2)).await;
        assert_eq!(report.outcome, Outcome::Passed, "{report:?}");
        assert_eq!(report.runs.len(), 1);
        assert_eq!(report.runs[0].retries, 2);
        assert_eq!(report.reliability.n, 1);
        assert_eq!(report.reliability.c, 1);
        assert_eq!(report.reliability.pass_at_k, [1.0]);
        // Without --retry-errors an error is the run.
        CALLS.store(0, Ordering::SeqCst);
        let report = run_eval_async(def, &options(0)).await;
        assert_eq!(report.outcome, Outcome::Failed);
        assert_eq!(report.runs[0].retries, 0);
    }
}

#[cfg(test)]
mod failed_runs_tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::*;
    use crate::agents::agent::{Request, agent_fn};
    use crate::run::definition::BoxFuture;

    /// Calls so far: every fifth reply is right.
    static CALLS: AtomicUsize = AtomicUsize::new(0);

    fn agent() -> Arc<dyn Agent> {
        Arc::new(agent_fn(|request: Request| async move {
            let call = CALLS.fetch_add(1, Ordering::SeqCst);
            request.events.say(if call.is_multiple_of(5) {
                "ok".to_string()
            } else {
                format!("no, call {call}")
            });
            Ok(())
        }))
    }

    fn body(t: &mut Eval) -> BoxFuture<'_, crate::run::error::Result> {
        Box::pin(async move {
            t.send("hello").await?;
            t.check(t.reply(), crate::checks::expect::includes("ok"));
            Ok(())
        })
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn the_first_failed_runs_keep_their_reply_and_reasons() {
        let dir = tempfile::tempdir().expect("a temporary directory").keep();
        std::fs::write(dir.join("niceeval.toml"), "# runs\n").expect("writable");
        let dir: &'static str = Box::leak(dir.display().to_string().into_boxed_str());
        let def: &'static EvalDefinition = Box::leak(Box::new(
            EvalDefinition::new("runs", "engine::failed", file!(), line!(), dir, body)
                .with_agent(agent),
        ));
        let options = RunOptions {
            runs: Some(10),
            ..RunOptions::default()
        };
        let report = run_eval_async(def, &options).await;
        // 2 of 10 passed: failed, showing the first failed run, whose summary keeps nothing
        // more (the report is that run).
        assert_eq!(report.outcome, Outcome::Failed);
        assert_eq!(report.reliability.c, 2);
        let shown = crate::run::report::representative(&report.runs, report.outcome);
        assert!(report.runs[shown].reply.is_none());
        let kept: Vec<usize> = (0..report.runs.len())
            .filter(|k| report.runs[*k].reply.is_some())
            .collect();
        let failed: Vec<usize> = (0..report.runs.len())
            .filter(|k| *k != shown && report.runs[*k].outcome == Outcome::Failed)
            .collect();
        assert_eq!(
            kept,
            failed[..RunSummary::FAILED_RUNS_KEPT],
            "the first three"
        );
        for k in kept {
            let run = &report.runs[k];
            assert!(
                run.reply
                    .as_deref()
                    .is_some_and(|r| r.starts_with("no, call ")),
                "{run:?}"
            );
            assert_eq!(run.reasons.len(), 1, "{run:?}");
            assert!(run.reasons[0].starts_with("includes(\"ok\"): "), "{run:?}");
        }
        assert!(
            report.runs.iter().all(
                |r| r.outcome == Outcome::Failed || (r.reply.is_none() && r.reasons.is_empty())
            )
        );
    }
}
