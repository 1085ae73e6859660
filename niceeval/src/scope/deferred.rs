//! Work an eval body registers and the engine performs after the body returns: scoped checks
//! (over the final event log) and, from layers above, judge calls. The record keeps one list
//! of it; this module owns the seam, so the record and the engine need not know what each item
//! is.

use std::future::Future;
use std::pin::Pin;

use crate::assertion::AssertionResult;

use super::RunView;

/// A boxed future producing one deferred item's result.
pub(crate) type BoxFuture<T> = Pin<Box<dyn Future<Output = T> + Send + 'static>>;

/// When deferred work runs, in this order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Stage {
    /// Evaluated over the event log as soon as the body is done, whatever its outcome.
    Scoped,
    /// Graded concurrently after the scoped checks, and only when the run did not already end
    /// in an execution error or a skip (judge calls cost money and cannot change that outcome).
    /// Only the judge (feature `providers`) registers work of this stage.
    #[cfg_attr(not(feature = "providers"), allow(dead_code))]
    Judge,
}

/// One piece of deferred work: it reports its stage and yields one assertion result. It must
/// not panic out of `perform` or its future; a failure is an error grade on its result.
pub(crate) trait Deferred: Send {
    /// When it runs.
    fn stage(&self) -> Stage;
    /// Performs the work over the finished run.
    fn perform(self: Box<Self>, run: &RunView<'_>) -> BoxFuture<AssertionResult>;
}

/// Where builders register deferred work: the run's record.
pub(crate) trait Defer: Send + Sync {
    /// Adds `work` to the run's list, after everything registered before it.
    fn defer(&self, work: Box<dyn Deferred>);
}
