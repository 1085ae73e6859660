//! Evals out as OpenTelemetry traces (`[trace] export`, `--otlp-endpoint`): each eval is one
//! trace — an `eval` span, a `run` span per run, a `turn` span per turn of the representative
//! run (the one whose events the report keeps) with the agent's own spans under it, and each
//! assertion result as a `gen_ai.evaluation.result` span event on its run — POSTed as
//! OTLP/HTTP protobuf, so results appear in Jaeger, Tempo, Langfuse or Phoenix.

use serde_json::{Map, Value, json};

use crate::agents::trace::internals_export::{
    Exported, Span, SpanKind, SpanStatus, TraceError, random_id, send, with_events,
};
use crate::base::event::{Event, Role};
use crate::run::report::EvalReport;

/// The OTLP request of one eval, ending now.
pub(crate) fn request(
    report: &EvalReport,
) -> opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest {
    let end = crate::agents::trace::internals_export::now_nanos();
    let total = (report.duration_ms.max(0.0) * 1e6) as u64;
    let start = end.saturating_sub(total);
    let trace_id: [u8; 16] = random_id();
    let make =
        |name: String, parent: Option<[u8; 8]>, start: u64, end: u64, attributes: Value| Span {
            trace_id,
            span_id: random_id(),
            parent,
            name,
            kind: SpanKind::Internal,
            start,
            end: end.max(start),
            status: SpanStatus::Unset,
            status_message: None,
            service: None,
            attributes: attributes.as_object().cloned().unwrap_or_default(),
            log: false,
        };
    let status = |outcome: crate::base::outcome::Outcome| match outcome {
        crate::base::outcome::Outcome::Failed => SpanStatus::Error,
        _ => SpanStatus::Ok,
    };
    let mut eval = make(
        format!("eval {}", report.id),
        None,
        start,
        end,
        json!({
            "niceeval.eval.id": report.id,
            "niceeval.eval.outcome": report.outcome.to_string(),
            "niceeval.eval.file": format!("{}:{}", report.file, report.line),
            "gen_ai.usage.input_tokens": report.usage.input_tokens,
            "gen_ai.usage.output_tokens": report.usage.output_tokens,
        }),
    );
    eval.status = status(report.outcome);
    let mut out: Vec<(Span, Vec<SpanEvent>)> = Vec::new();
    let eval_id = eval.span_id;
    out.push((eval, Vec::new()));
    let representative = report
        .runs
        .iter()
        .position(|r| r.outcome == report.outcome)
        .unwrap_or(0);
    for (index, run) in report.runs.iter().enumerate() {
        let run_end = start + (run.duration_ms.max(0.0) * 1e6) as u64;
        let mut span = make(
            format!("run {}", index + 1),
            Some(eval_id),
            start,
            run_end,
            json!({
                "niceeval.run.index": index + 1,
                "niceeval.run.outcome": run.outcome.to_string(),
                "gen_ai.usage.input_tokens": run.usage.input_tokens,
                "gen_ai.usage.output_tokens": run.usage.output_tokens,
            }),
        );
        span.status = status(run.outcome);
        if let Some(error) = &run.error {
            span.status_message = Some(error.message.clone());
        }
        let run_id = span.span_id;
        let mut events = Vec::new();
        if index == representative {
            for a in &report.assertions {
                let attributes = json!({
                    "gen_ai.evaluation.name": a.name,
                    "gen_ai.evaluation.score.value": a.score,
                    "gen_ai.evaluation.score.label": if a.passed { "pass" } else { "fail" },
                    "gen_ai.evaluation.explanation": a.reason,
                });
                events.push((
                    "gen_ai.evaluation.result".to_string(),
                    run_end,
                    attributes.as_object().cloned().unwrap_or_default(),
                ));
            }
        }
        out.push((span, events));
        if index == representative {
            turns(&report.events, run_id, start, run_end, &make, &mut out);
        }
    }
    with_events(
        out.iter().map(|(span, events)| Exported {
            span,
            events: events.clone(),
        }),
        "niceeval",
    )
}

/// A span event: name, time, attributes.
type SpanEvent = (String, u64, Map<String, Value>);

type Make<'a> = dyn Fn(String, Option<[u8; 8]>, u64, u64, Value) -> Span + 'a;

/// The turns of a run's events (each starts at a user message), with the agent's spans of each
/// under it.
fn turns(
    events: &[Event],
    run_id: [u8; 8],
    start: u64,
    end: u64,
    make: &Make<'_>,
    out: &mut Vec<(Span, Vec<SpanEvent>)>,
) {
    let mut groups: Vec<(String, Vec<Span>)> = Vec::new();
    for event in events {
        match event {
            Event::Message {
                role: Role::User,
                text,
            } => groups.push((text.to_string(), Vec::new())),
            Event::Custom { name, data } if name == crate::agents::trace::SPAN_EVENT => {
                if let (Some(group), Some(span)) = (groups.last_mut(), Span::from_json(data)) {
                    group.1.push(span);
                }
            }
            _ => {}
        }
    }
    let count = groups.len().max(1) as u64;
    let slice = end.saturating_sub(start) / count;
    for (i, (input, spans)) in groups.into_iter().enumerate() {
        let (mut turn_start, mut turn_end) =
            (start + slice * i as u64, start + slice * (i as u64 + 1));
        if let (Some(first), Some(last)) = (
            spans.iter().map(|s| s.start).min(),
            spans.iter().map(|s| s.end).max(),
        ) {
            turn_start = first;
            turn_end = last;
        }
        let mut input = input;
        if input.len() > 256 {
            let mut cut = 256;
            while !input.is_char_boundary(cut) {
                cut -= 1;
            }
            input.truncate(cut);
        }
        let turn = make(
            format!("turn {}", i + 1),
            Some(run_id),
            turn_start,
            turn_end,
            json!({ "niceeval.turn.index": i + 1, "niceeval.turn.input": input }),
        );
        let turn_id = turn.span_id;
        let trace_id = turn.trace_id;
        out.push((turn, Vec::new()));
        let ids: std::collections::HashSet<[u8; 8]> = spans.iter().map(|s| s.span_id).collect();
        for mut span in spans {
            span.trace_id = trace_id;
            if !span.parent.is_some_and(|p| ids.contains(&p)) {
                span.parent = Some(turn_id);
            }
            out.push((span, Vec::new()));
        }
    }
}

/// Sends `report` to `endpoint` as one trace, from any thread (a runtime of its own).
pub(crate) fn export(report: &EvalReport, endpoint: &str) -> Result<(), TraceError> {
    let request = request(report);
    let endpoint = endpoint.to_string();
    std::thread::scope(|scope| {
        scope
            .spawn(|| {
                let runtime = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                    .map_err(|e| TraceError::ExportRuntime(e.into()))?;
                runtime.block_on(send(&endpoint, &request))
            })
            .join()
            .unwrap_or(Err(TraceError::ExportPanicked))
    })
}

/// The reporter that exports every eval (`--otlp-endpoint`, `[trace] export`).
pub(crate) struct Otlp {
    pub(crate) endpoint: String,
}

impl super::Reporter for Otlp {
    fn on_eval_complete(&mut self, report: &EvalReport) -> std::io::Result<()> {
        export(report, &self.endpoint).map_err(std::io::Error::other)
    }

    /// Each report is exported as it comes.
    fn reads_evals(&self) -> bool {
        false
    }
}
