//! The run's trace as a turn sees it: the `traceparent` a send gets, the send inside the
//! turn's span context, and the spans that came for the turn as events. One type whatever the
//! features: without `otel` it holds nothing and each step does nothing, so the turn's path
//! (`Eval::run_turn`) has no `#[cfg]`.

#[cfg(feature = "otel")]
use std::sync::Arc;
use std::time::Duration;

use crate::agents::agent::{Agent, AgentError, Request};
use crate::base::event::Event;

/// The run's trace, when it has one (`otel`, a run the engine gave a trace).
#[derive(Clone, Default)]
pub(crate) struct Traced {
    #[cfg(feature = "otel")]
    run: Option<Arc<crate::agents::trace::RunTrace>>,
}

impl Traced {
    /// The run's trace.
    #[cfg(feature = "otel")]
    pub(crate) fn new(run: Arc<crate::agents::trace::RunTrace>) -> Self {
        Traced { run: Some(run) }
    }

    /// A fresh `traceparent` for a turn's send (a new span of the run's trace); `None` without
    /// a trace.
    pub(crate) fn traceparent(&self) -> Option<String> {
        #[cfg(feature = "otel")]
        {
            self.run.as_ref().map(|run| run.turn())
        }
        #[cfg(not(feature = "otel"))]
        {
            None
        }
    }

    /// Sends `request` to `agent`, inside the turn's span context when the run has a trace (so
    /// the agent's own `tracing` spans join it).
    pub(crate) async fn send(&self, agent: &dyn Agent, request: Request) -> Result<(), AgentError> {
        #[cfg(feature = "otel")]
        if let (Some(run), Some(traceparent)) = (&self.run, request.traceparent.clone()) {
            return crate::agents::trace::in_turn(run.clone(), &traceparent, agent.send(request))
                .await;
        }
        agent.send(request).await
    }

    /// Appends the turn's spans, as events, to what the agent emitted (`emitted`), waiting up to
    /// `settle` for those still on their way.
    #[cfg_attr(
        not(feature = "otel"),
        allow(unused_variables, clippy::unused_async, clippy::ptr_arg)
    )]
    pub(crate) async fn add_spans(&self, emitted: &mut Vec<Event>, settle: Duration) {
        #[cfg(feature = "otel")]
        if let Some(run) = &self.run {
            let spans = run.take(settle).await;
            if !spans.is_empty() {
                let from_trace = crate::agents::trace::events(spans, emitted);
                emitted.extend(from_trace);
            }
        }
    }
}
