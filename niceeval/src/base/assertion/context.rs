//! What a check may know of the run it is checked in: the [`CheckContext`] — the run's cost and
//! agent time so far, and its working copy. `t.check` gives it to [`Assertion::evaluate_in`];
//! the assertions that need it (assertions as data with `cost` and `latency` items, script
//! and custom graders given the working copy) read it there, and every other assertion ignores
//! it. A matcher never sees the run itself.
//!
//! [`Assertion::evaluate_in`]: crate::Assertion::evaluate_in

use std::path::{Path, PathBuf};
use std::sync::Arc;

/// What a check knows of its run; empty outside an eval (`AssertionResult::evaluate`).
#[derive(Clone, Default)]
pub struct CheckContext {
    cost_usd: Option<f64>,
    latency_ms: Option<f64>,
    working_copy: Option<WorkingCopy>,
}

/// A run's working copy as a check sees it: where it is, and its diff against the template,
/// taken only when a check asks.
#[derive(Clone)]
pub struct WorkingCopy {
    path: PathBuf,
    diff: Arc<dyn Fn() -> Option<String> + Send + Sync>,
}

impl WorkingCopy {
    /// The working copy at `path`, whose diff `diff` takes.
    pub(crate) fn new(
        path: PathBuf,
        diff: impl Fn() -> Option<String> + Send + Sync + 'static,
    ) -> Self {
        WorkingCopy {
            path,
            diff: Arc::new(diff),
        }
    }

    /// Where the working copy is.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The unified diff of the working copy against its template, now; `None` when it cannot
    /// be taken.
    pub fn diff(&self) -> Option<String> {
        (self.diff)()
    }
}

impl CheckContext {
    /// The context of a check in a run: its cost (USD, `None` when it cannot be priced) and
    /// agent time (ms) so far, and its working copy if it has one.
    pub(crate) fn of_run(
        cost_usd: Option<f64>,
        latency_ms: f64,
        working_copy: Option<WorkingCopy>,
    ) -> Self {
        CheckContext {
            cost_usd,
            latency_ms: Some(latency_ms),
            working_copy,
        }
    }

    /// The run's cost so far, in USD; `None` outside a run or when it cannot be priced.
    pub fn cost_usd(&self) -> Option<f64> {
        self.cost_usd
    }

    /// The run's agent time so far, in milliseconds; `None` outside a run.
    pub fn latency_ms(&self) -> Option<f64> {
        self.latency_ms
    }

    /// The run's working copy, for an eval with a workspace.
    pub fn working_copy(&self) -> Option<&WorkingCopy> {
        self.working_copy.as_ref()
    }
}

impl std::fmt::Debug for CheckContext {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CheckContext")
            .field("cost_usd", &self.cost_usd)
            .field("latency_ms", &self.latency_ms)
            .field("working_copy", &self.working_copy.as_ref().map(|w| &w.path))
            .finish()
    }
}
