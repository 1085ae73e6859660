//! OpenTelemetry in and out: an agent's spans become the run's events, so the scoped checks
//! and budgets (`called_tool`, `tool_order`, `no_failed_actions`, `max_tokens`, …) work on
//! them unchanged.
//!
//! Three ways in:
//!
//! - **Subprocess agents** (`[agent] type = "command"`, Claude Code, Codex) get
//!   `OTEL_EXPORTER_OTLP_ENDPOINT` (niceeval's receiver on `127.0.0.1`),
//!   `OTEL_EXPORTER_OTLP_PROTOCOL`, `OTEL_TRACES_EXPORTER=otlp`, a short
//!   `OTEL_BSP_SCHEDULE_DELAY`, `TRACEPARENT` (the turn's trace context) and
//!   `niceeval.trace_id=…` added to the suite's own `OTEL_RESOURCE_ATTRIBUTES` (so spans of an
//!   agent that does not read `TRACEPARENT` still reach their run). Any OpenTelemetry SDK exporting OTLP/HTTP (protobuf
//!   or JSON) is read.
//! - **HTTP agents** (the chat agent) send a `traceparent` header; a server that continues the
//!   trace and exports to the same endpoint has its spans in the run.
//! - **In-process Rust agents** add [`layer()`] to their `tracing` subscriber: spans with GenAI
//!   field names (`gen_ai.operation.name`, `gen_ai.tool.name`, `gen_ai.usage.input_tokens`, …)
//!   created while an eval's agent runs become that run's events, concurrent evals apart.
//!
//! Each span is also kept as it came (`Event::Custom { name: "otel.span", .. }`) for checks of
//! your own. `[trace] export = "http://…"` sends each eval to a collector as a trace.

mod calls;
mod export;
pub(crate) mod internals;
mod layer;
mod normalize;
mod otlp;
mod receiver;
mod registry;
mod span;

pub use layer::layer;

pub(crate) use layer::in_turn;
pub(crate) use normalize::events;
pub(crate) use otlp::RUN_ATTRIBUTE;
pub(crate) use receiver::endpoint;

/// Why spans could not be received or an eval could not be exported; the cause is kept.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub(crate) enum TraceError {
    /// The receiver cannot listen on 127.0.0.1.
    #[error("cannot listen on 127.0.0.1 for OpenTelemetry: {0}")]
    Listen(#[source] std::sync::Arc<std::io::Error>),
    /// The receiver's thread cannot start.
    #[error("cannot start the OpenTelemetry receiver: {0}")]
    Receiver(#[source] std::sync::Arc<std::io::Error>),
    /// The export's runtime cannot start.
    #[error("cannot export the trace: {0}")]
    ExportRuntime(#[source] std::sync::Arc<std::io::Error>),
    /// The export's thread panicked.
    #[error("the trace export panicked")]
    ExportPanicked,
    /// The collector cannot be reached.
    #[error("cannot export the trace to {url}: {source}")]
    Export {
        /// Where the trace went.
        url: String,
        /// Why it did not arrive.
        #[source]
        source: std::sync::Arc<reqwest::Error>,
    },
    /// The collector refused the trace.
    #[error("exporting the trace to {url} failed: HTTP {status}")]
    Refused {
        /// Where the trace went.
        url: String,
        /// The collector's answer.
        status: reqwest::StatusCode,
    },
    /// A body the receiver cannot read.
    #[error(transparent)]
    Body(#[from] otlp::DecodeError),
}
pub(crate) use registry::RunTrace;
pub(crate) use span::{SPAN_EVENT, hex, trace_of};

/// What reached no run, for the end of a suite: `None` when every span found its run.
pub(crate) fn notice() -> Option<String> {
    notice_of(
        registry::registry().counts(),
        registry::registry().last_rejection(),
    )
}

fn notice_of(counts: registry::Counts, rejection: Option<String>) -> Option<String> {
    let mut parts = Vec::new();
    if counts.unknown > 0 {
        parts.push(format!(
            "{} span(s) of traces no eval knows (not attributed)",
            counts.unknown
        ));
    }
    if counts.late > 0 {
        parts.push(format!(
            "{} span(s) arrived after their run finished (late)",
            counts.late
        ));
    }
    if counts.dropped > 0 {
        parts.push(format!(
            "{} span(s) over a run's cap of {} (dropped)",
            counts.dropped,
            registry::MAX_SPANS_PER_RUN
        ));
    }
    if counts.rejected > 0 {
        parts.push(format!(
            "{} request(s) refused{}",
            counts.rejected,
            rejection
                .map(|m| format!(", the last: {m}"))
                .unwrap_or_default()
        ));
    }
    (!parts.is_empty()).then(|| format!("niceeval: OpenTelemetry: {}", parts.join("; ")))
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_notice_names_what_reached_no_run() {
        use super::registry::Counts;
        assert_eq!(super::notice_of(Counts::default(), None), None);
        let counts = Counts {
            unknown: 3,
            late: 1,
            dropped: 0,
            rejected: 2,
        };
        assert_eq!(
            super::notice_of(counts, Some("the body is not OTLP/JSON: x".into())).unwrap(),
            "niceeval: OpenTelemetry: 3 span(s) of traces no eval knows (not attributed); 1 span(s) arrived after their run finished (late); 2 request(s) refused, the last: the body is not OTLP/JSON: x"
        );
    }
}

/// What the exporter (`reporter/otlp.rs`) builds spans with.
pub(crate) mod internals_export {
    pub(crate) use super::TraceError;
    pub(crate) use super::export::{Exported, send, with_events};
    pub(crate) use super::span::{
        Kind as SpanKind, Span, Status as SpanStatus, now_nanos, random_id,
    };
}
