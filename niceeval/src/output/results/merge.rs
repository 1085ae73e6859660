//! Choosing and combining what results files hold: the latest run of each eval ([`latest`],
//! the default view), or every record as shards of one run ([`merge`], `--combine`), and
//! replaying the result through reporters.

use std::collections::BTreeMap;

use crate::base::outcome::Outcome;
use crate::output::reporter::Reporter;
use crate::run::report::{EvalReport, EvalSummary, RunInfo, SuiteReport, SuiteStart};

/// Merges reports by eval id (sorted by id), combining every record as a shard of one run
/// (`--combine`; [`latest`] is the default view): an eval reported more than once (by several
/// shards, or by reruns of one failing eval) gets all its runs, in file order, its statistics
/// and outcome recomputed ([`crate::run::report::fold_runs`]), its durations added up, and as
/// representative the first report whose own outcome is the merged outcome (else the first
/// failed one, else the last) — the same rule a single run of all of them uses.
///
/// ```
/// use niceeval::__workspace::results::merge;
/// use niceeval::Outcome;
/// # let report = |outcome: &str| -> niceeval::EvalReport { serde_json::from_value(serde_json::json!({
/// #   "id": "demo::flaky", "file": "tests/demo.rs", "line": 3, "outcome": outcome,
/// #   "assertions": [], "duration_ms": 10.0,
/// #   "usage": {"input_tokens": 0, "output_tokens": 0, "cache_read_tokens": 0},
/// #   "runs": [{"outcome": outcome, "duration_ms": 10.0,
/// #             "usage": {"input_tokens": 0, "output_tokens": 0, "cache_read_tokens": 0}}],
/// #   "reliability": {"n": 1, "c": 0, "pass_rate": 0.0, "pass_at_k": [], "pass_hat_k": []},
/// #   "min_pass_rate": 0.5 })).unwrap() };
///
/// // One shard ran the eval once and it passed; another ran it once and it failed.
/// let merged = merge(vec![report("passed"), report("failed")]);
/// assert_eq!(merged.len(), 1);
/// assert_eq!(merged[0].runs.len(), 2);
/// assert_eq!(merged[0].reliability.pass_rate, 0.5);
/// assert_eq!(merged[0].outcome, Outcome::Passed); // 0.5 meets min_pass_rate 0.5
/// assert_eq!(merged[0].duration_ms, 20.0);
/// ```
pub fn merge(reports: Vec<EvalReport>) -> Vec<EvalReport> {
    let mut by_id: BTreeMap<String, Vec<EvalReport>> = BTreeMap::new();
    for report in reports {
        by_id.entry(report.id.clone()).or_default().push(report);
    }
    by_id.into_values().filter_map(merge_group).collect()
}

/// Merges the reports of one eval.
pub(super) fn merge_group(mut group: Vec<EvalReport>) -> Option<EvalReport> {
    if group.len() == 1 {
        let mut report = group.pop()?;
        report.recompute();
        return Some(report);
    }
    let runs: Vec<_> = group.iter().flat_map(|r| r.runs.iter().cloned()).collect();
    let duration: f64 = group.iter().map(|r| r.duration_ms).sum();
    let min_pass_rate = group.last()?.min_pass_rate;
    let (outcome, _) = crate::run::report::fold_runs(&runs, min_pass_rate);
    let outcomes: Vec<Outcome> = group.iter().map(|r| r.outcome).collect();
    let mut report = group.swap_remove(pick(&outcomes, outcome));
    report.runs = runs;
    report.duration_ms = duration;
    report.min_pass_rate = min_pass_rate;
    report.recompute();
    Some(report)
}

/// Which of an eval's records (their own `outcomes`, in file order) is the representative of
/// the merged eval whose outcome is `merged`: the first whose outcome is the merged one, else
/// the first failed one, else the last.
pub(super) fn pick(outcomes: &[Outcome], merged: Outcome) -> usize {
    outcomes
        .iter()
        .position(|o| *o == merged)
        .or_else(|| outcomes.iter().position(|o| *o == Outcome::Failed))
        .unwrap_or(outcomes.len().saturating_sub(1))
}

/// The order of runs: a run is as late as the latest start among its records (the processes
/// of one nextest run share a run id and start apart), ties broken by id; a record of an older
/// version (no run) is older than any run.
struct RunOrder<'a>(BTreeMap<&'a str, &'a str>);

impl<'a> RunOrder<'a> {
    fn of(reports: &'a [EvalReport]) -> Self {
        let mut latest: BTreeMap<&str, &str> = BTreeMap::new();
        for run in reports.iter().filter_map(|r| r.run.as_ref()) {
            let started = latest
                .entry(run.id.as_str())
                .or_insert(run.started.as_str());
            *started = (*started).max(run.started.as_str());
        }
        RunOrder(latest)
    }

    fn key(&self, run: Option<&'a RunInfo>) -> Option<(&'a str, &'a str)> {
        run.map(|r| {
            let started = self.0.get(r.id.as_str()).copied().unwrap_or(&r.started);
            (started, r.id.as_str())
        })
    }
}

/// Keeps, for each eval, only the records of the latest run that reported it: a results file
/// that holds an earlier build's passing run and a new failing one shows the failing one, and
/// an eval a filtered run did not select keeps its latest record from an earlier run. Records
/// keep their order.
///
/// ```
/// use niceeval::__workspace::results::latest_records;
/// # let report = |run: &str, outcome: &str| -> niceeval::EvalReport { serde_json::from_value(serde_json::json!({
/// #   "id": "evals::order_status", "file": "tests/evals.rs", "line": 3, "outcome": outcome,
/// #   "assertions": [], "duration_ms": 10.0,
/// #   "usage": {"input_tokens": 0, "output_tokens": 0, "cache_read_tokens": 0},
/// #   "runs": [], "reliability": {"n": 1, "c": 0, "pass_rate": 0.0, "pass_at_k": [], "pass_hat_k": []},
/// #   "min_pass_rate": 1.0,
/// #   "run": {"id": run, "started": run, "target": "evals"} })).unwrap() };
///
/// let kept = latest_records(vec![
///     report("2026-11-20T08:00:00.000Z", "passed"),
///     report("2026-11-23T08:00:00.000Z", "failed"),
/// ]);
/// assert_eq!(kept.len(), 1);
/// assert_eq!(kept[0].outcome, niceeval::Outcome::Failed);
/// ```
pub fn latest_records(reports: Vec<EvalReport>) -> Vec<EvalReport> {
    let order = RunOrder::of(&reports);
    let mut newest: BTreeMap<&str, Option<(&str, &str)>> = BTreeMap::new();
    for report in &reports {
        let key = order.key(report.run.as_ref());
        let entry = newest.entry(report.id.as_str()).or_insert(key);
        if key > *entry {
            *entry = key;
        }
    }
    let keep: Vec<bool> = reports
        .iter()
        .map(|r| newest.get(r.id.as_str()) == Some(&order.key(r.run.as_ref())))
        .collect();
    reports
        .into_iter()
        .zip(keep)
        .filter_map(|(report, keep)| keep.then_some(report))
        .collect()
}

/// The latest view of results: [`latest_records`], then [`merge`] (the shards of one run, or a
/// nextest run's processes, combine).
pub fn latest(reports: Vec<EvalReport>) -> Vec<EvalReport> {
    merge(latest_records(reports))
}

/// The reports (of a latest view) that come from an earlier run than their target's latest
/// one: evals the latest run did not select. Reporting them says so, so nothing is mixed in
/// silently.
///
/// ```
/// # let report = |id: &str, run: &str| -> niceeval::EvalReport { serde_json::from_value(serde_json::json!({
/// #   "id": id, "file": "tests/evals.rs", "line": 3, "outcome": "passed",
/// #   "assertions": [], "duration_ms": 10.0,
/// #   "usage": {"input_tokens": 0, "output_tokens": 0, "cache_read_tokens": 0},
/// #   "runs": [], "reliability": {"n": 1, "c": 1, "pass_rate": 1.0, "pass_at_k": [], "pass_hat_k": []},
/// #   "min_pass_rate": 1.0,
/// #   "run": {"id": run, "started": run, "target": "evals"} })).unwrap() };
/// let reports = niceeval::__workspace::results::latest(vec![
///     report("evals::refund", "2026-11-20T08:00:00.000Z"),
///     report("evals::order_status", "2026-11-20T08:00:00.000Z"),
///     report("evals::order_status", "2026-11-23T08:00:00.000Z"), // a filtered run
/// ]);
/// let earlier = niceeval::__workspace::results::from_earlier_runs(&reports);
/// assert_eq!(earlier.len(), 1);
/// assert_eq!(earlier[0].id, "evals::refund");
/// ```
pub fn from_earlier_runs(reports: &[EvalReport]) -> Vec<&EvalReport> {
    let order = RunOrder::of(reports);
    let mut newest: BTreeMap<&str, Option<(&str, &str)>> = BTreeMap::new();
    for run in reports.iter().filter_map(|r| r.run.as_ref()) {
        let key = order.key(Some(run));
        let entry = newest.entry(run.target.as_str()).or_insert(key);
        if key > *entry {
            *entry = key;
        }
    }
    reports
        .iter()
        .filter(|r| {
            r.run
                .as_ref()
                .is_some_and(|run| newest.get(run.target.as_str()) != Some(&order.key(Some(run))))
        })
        .collect()
}

/// Replays merged reports through reporters as if they had just run; returns the suite report.
pub fn replay(reports: &[EvalReport], reporters: &mut [Box<dyn Reporter>]) -> SuiteReport {
    replay_with(reports, reporters, |_| {})
}

/// [`replay`], with `finish` completing the suite report (e.g. with the comparison with a
/// baseline, [`SuiteReport::comparison`]) before the reporters get it.
pub fn replay_with(
    reports: &[EvalReport],
    reporters: &mut [Box<dyn Reporter>],
    finish: impl FnOnce(&mut SuiteReport),
) -> SuiteReport {
    let start = SuiteStart {
        evals: reports.iter().map(|r| r.id.clone()).collect(),
        concurrency: 1,
    };
    for reporter in reporters.iter_mut() {
        let _ = reporter.on_run_start(&start);
    }
    let mut summaries = Vec::with_capacity(reports.len());
    for report in reports {
        for reporter in reporters.iter_mut() {
            let _ = reporter.on_eval_complete(report);
        }
        summaries.push(EvalSummary::from(report));
    }
    let duration = reports.iter().map(|r| r.duration_ms).sum();
    let mut suite = SuiteReport::new(summaries, 0, false, duration);
    finish(&mut suite);
    for reporter in reporters.iter_mut() {
        let _ = reporter.on_run_complete(&suite);
    }
    suite
}
