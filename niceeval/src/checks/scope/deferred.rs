//! The one grading path after the body. Every check an eval body registers — a scoped check, a
//! budget, a judge call — is a [`Check`], registered through the one builder
//! [`Scoped`](super::Scoped) as a [`Deferred`] item of the run's list, and graded by
//! [`perform`] once the body is done. The record keeps the list and the engine calls
//! [`perform`]; neither knows what a check is.
//!
//! A check may be async and may be *costly* (a judge call: a model asked over HTTP). Checks that
//! are not costly are graded first, one after the other in registration order, whatever the
//! run's outcome. Costly checks are graded after them, concurrently with each other, and only
//! when the run did not already end in an execution error or a skip: those decide the outcome
//! whatever a costly check says, and a costly check costs money.

use std::future::Future;
use std::ops::Range;
use std::pin::Pin;

use crate::base::assertion::{AssertionKind, AssertionResult, Grade, Settings};
use crate::base::event::Usage;

use super::{RunView, ScopedCheck};

/// A boxed future, as an async check returns it.
pub type BoxFuture<T> = Pin<Box<dyn Future<Output = T> + Send + 'static>>;

/// A grade and what grading spent itself (a model call's tokens and cost), if anything.
pub type Graded = (Grade, Option<Usage>);

/// Any check graded after the body: every [`ScopedCheck`] (through the blanket impl below) and
/// the judge's.
pub trait Check: Send + Sync + 'static {
    /// A short name for reports.
    fn describe(&self) -> String;
    /// Which mechanism this is.
    fn kind(&self) -> AssertionKind;
    /// Default severity and threshold.
    fn settings(&self) -> Settings;
    /// A costly check is skipped when the run already ended in an execution error or a skip,
    /// and is graded concurrently with the run's other costly checks, after the rest.
    fn costly(&self) -> bool {
        false
    }
    /// Grades the run (the events in the check's scope). Neither this call nor its future may
    /// panic out: a failure is an error grade.
    fn grade(self: Box<Self>, run: &RunView<'_>) -> BoxFuture<Graded>;
}

impl<C: ScopedCheck + 'static> Check for C {
    fn describe(&self) -> String {
        ScopedCheck::describe(self)
    }

    fn kind(&self) -> AssertionKind {
        ScopedCheck::kind(self)
    }

    fn settings(&self) -> Settings {
        ScopedCheck::settings(self)
    }

    fn grade(self: Box<Self>, run: &RunView<'_>) -> BoxFuture<Graded> {
        let grade = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| self.evaluate(run)))
            .unwrap_or_else(|panic| {
                Grade::error(format!(
                    "the check panicked: {}",
                    crate::base::panic::message(&*panic)
                ))
            });
        Box::pin(std::future::ready((grade, None)))
    }
}

/// One check registered for after the body: the check, its settings, the slice of the log it
/// reads (a turn's range, or the whole run) and the label its name is reported under.
pub struct Deferred {
    pub(super) check: Box<dyn Check>,
    pub(super) settings: Settings,
    pub(super) range: Option<Range<usize>>,
    pub(super) label: Option<String>,
}

impl Deferred {
    /// Grades the check over its scope of `run` into its assertion result.
    fn perform(self, run: &RunView<'_>) -> BoxFuture<AssertionResult> {
        let Deferred {
            check,
            settings,
            range,
            label,
        } = self;
        let log = run.events;
        let events = match range {
            Some(r) => &log[r.start.min(log.len())..r.end.min(log.len())],
            None => log,
        };
        let view = RunView {
            events,
            config: run.config,
        };
        let name = match label {
            Some(label) => format!("{label}: {}", check.describe()),
            None => check.describe(),
        };
        let kind = check.kind();
        let graded = check.grade(&view);
        Box::pin(async move {
            let (grade, usage) = graded.await;
            let mut result = AssertionResult::from_grade(name, kind, &settings, grade);
            result.usage = usage;
            result
        })
    }
}

impl Deferred {
    /// The same work with its check replaced by what `f` makes of it: a suite file's `not-`
    /// form of a judged item wraps the judge's check in one that turns its verdict over.
    pub fn map_check(self, f: impl FnOnce(Box<dyn Check>) -> Box<dyn Check>) -> Deferred {
        Deferred {
            check: f(self.check),
            ..self
        }
    }
}

/// Where the builder registers its check: the run's record.
pub trait Defer: Send + Sync {
    /// Adds `work` to the run's list, after everything registered before it.
    fn defer(&self, work: Deferred);
}

/// `check` registered on `target` (the run's list, [`crate::run::eval::checks_of`], or a collector
/// that grades what it gathers itself), configured with the builder's options until it drops.
pub fn register<C: Check>(target: std::sync::Arc<dyn Defer>, check: C) -> super::Scoped<C> {
    super::Scoped::new(target, check, None)
}

/// Starts grading each of `deferred` over `run`; the futures give their results (a check that
/// gathers others, such as a suite file's test threshold, awaits them as it likes).
pub fn start(deferred: Vec<Deferred>, run: &RunView<'_>) -> Vec<BoxFuture<AssertionResult>> {
    deferred.into_iter().map(|work| work.perform(run)).collect()
}

/// Grades every check of the run's list: those that are not costly one after the other, then,
/// when `costly` (the run has no execution error and no skip), the costly ones concurrently.
/// Results keep registration order within each group.
pub(crate) async fn perform(
    deferred: Vec<Deferred>,
    run: &RunView<'_>,
    costly: bool,
) -> Vec<AssertionResult> {
    let (costly_checks, checks): (Vec<_>, Vec<_>) =
        deferred.into_iter().partition(|work| work.check.costly());
    let mut results = Vec::with_capacity(checks.len() + costly_checks.len());
    for work in checks {
        results.push(work.perform(run).await);
    }
    if costly && !costly_checks.is_empty() {
        let mut set = tokio::task::JoinSet::new();
        for (index, work) in costly_checks.into_iter().enumerate() {
            let future = work.perform(run);
            set.spawn(async move { (index, future.await) });
        }
        let mut graded: Vec<(usize, AssertionResult)> = Vec::with_capacity(set.len());
        while let Some(joined) = set.join_next().await {
            // A check turns its own panics into error grades; a join error here would be a bug
            // in niceeval, and the missing result shows up as fewer assertions.
            if let Ok(done) = joined {
                graded.push(done);
            }
        }
        graded.sort_by_key(|(index, _)| *index);
        results.extend(graded.into_iter().map(|(_, result)| result));
    }
    results
}
