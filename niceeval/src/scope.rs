//! Assertions evaluated after the eval body, over the run's event stream: the [`ScopedCheck`]
//! trait, the registration builder [`Scoped`], and the evaluation pass the runner calls.
//!
//! A scoped assertion is registered when called (`t.succeeded()`), configured by chaining on the
//! returned [`Scoped`] builder, and recorded when the builder is dropped. After the body
//! returns, the runner evaluates every registered check once over the final event log (or over
//! one turn's slice of it, for assertions made on a [`crate::Turn`]).

use std::ops::Range;
use std::sync::Arc;

use crate::assertion::{AssertionKind, AssertionResult, Grade, Settings};
use crate::config::Config;
use crate::event::Event;
use crate::record::Record;

/// What a scoped check sees: the events in its scope and the run's configuration.
#[derive(Debug, Clone, Copy)]
pub struct RunView<'a> {
    /// The events in scope (the whole run, or one turn).
    pub events: &'a [Event],
    /// The configuration (price table, ...).
    pub config: &'a Config,
}

/// A check over a run's events, evaluated after the body returns.
pub trait ScopedCheck: Send + Sync {
    /// A short name for reports, e.g. `called_tool("lookup_order")`.
    fn describe(&self) -> String;
    /// Grades the run.
    fn evaluate(&self, run: &RunView<'_>) -> Grade;
    /// Which mechanism this is (scoped or efficiency).
    fn kind(&self) -> AssertionKind {
        AssertionKind::Scoped
    }
    /// Default severity and threshold: a gate without threshold.
    fn settings(&self) -> Settings {
        Settings::gate()
    }
}

/// An assertion registered during the body and evaluated after it.
pub(crate) enum Pending {
    /// A synchronous check over the events in `range` (all events when `None`).
    Scoped {
        check: Box<dyn ScopedCheck>,
        settings: Settings,
        range: Option<Range<usize>>,
    },
}

/// Evaluates pending scoped checks in registration order.
pub(crate) fn evaluate_all(
    pending: Vec<Pending>,
    log: &[Event],
    config: &Config,
) -> Vec<AssertionResult> {
    pending
        .into_iter()
        .map(|p| match p {
            Pending::Scoped {
                check,
                settings,
                range,
            } => {
                let events = match range {
                    Some(r) => &log[r.start.min(log.len())..r.end.min(log.len())],
                    None => log,
                };
                let view = RunView { events, config };
                let grade = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    check.evaluate(&view)
                }))
                .unwrap_or_else(|panic| {
                    Grade::error(format!(
                        "the check panicked: {}",
                        crate::run::panic_message(&*panic)
                    ))
                });
                AssertionResult::from_grade(check.describe(), check.kind(), &settings, grade)
            }
        })
        .collect()
}

/// Registration handle for a scoped assertion; recorded when dropped. Chain `.at_least(x)`,
/// `.gate()`, `.weight(w)`, `.metric(name)` (and the check's own options) before the `;`.
pub struct Scoped<C: ScopedCheck + 'static> {
    check: Option<C>,
    settings: Settings,
    range: Option<Range<usize>>,
    record: Arc<Record>,
}

impl<C: ScopedCheck + 'static> Scoped<C> {
    pub(crate) fn new(record: Arc<Record>, check: C, range: Option<Range<usize>>) -> Self {
        let settings = check.settings();
        Scoped {
            check: Some(check),
            settings,
            range,
            record,
        }
    }

    /// Soft, passing at `score >= threshold`.
    pub fn at_least(mut self, threshold: f64) -> Self {
        self.settings.at_least(threshold);
        self
    }

    /// A gate; keeps the threshold.
    pub fn gate(mut self) -> Self {
        self.settings.make_gate();
        self
    }

    /// Weight in the eval's mean score.
    pub fn weight(mut self, weight: f64) -> Self {
        self.settings.weight = weight;
        self
    }

    /// Named metric.
    pub fn metric(mut self, name: impl Into<String>) -> Self {
        self.settings.metric = Some(name.into());
        self
    }

    /// The check being configured.
    pub fn check_mut(&mut self) -> &mut C {
        self.check
            .as_mut()
            .expect("a Scoped builder holds its check until dropped")
    }
}

impl<C: ScopedCheck + 'static> Drop for Scoped<C> {
    fn drop(&mut self) {
        if let Some(check) = self.check.take() {
            self.record.push_pending(Pending::Scoped {
                check: Box::new(check),
                settings: self.settings.clone(),
                range: self.range.clone(),
            });
        }
    }
}
