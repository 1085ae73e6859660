//! Doors for the benchmark and the crate's own integration tests (`niceeval::__workspace::trace`):
//! the receiver's endpoint and counts, runs to attribute to, OTLP bodies to ingest.

use std::sync::Arc;

use serde_json::{Map, Value, json};

use super::otlp::{Signal, decode, decompress};
use super::registry::{RunTrace, registry};
use super::span::{Kind, Span, Status, hex, random_id};

/// The receiver's base URL, starting it.
pub fn endpoint() -> Result<&'static str, Box<dyn std::error::Error + Send + Sync>> {
    Ok(super::receiver::endpoint()?)
}

/// Spans that reached no run: `(unknown, late, dropped, rejected requests)`.
pub fn counts() -> (u64, u64, u64, u64) {
    let c = registry().counts();
    (c.unknown, c.late, c.dropped, c.rejected)
}

/// The message of the last request the receiver refused.
pub fn last_rejection() -> Option<String> {
    registry().last_rejection()
}

/// A registered run (finished when dropped).
pub struct Run(Arc<RunTrace>);

impl Default for Run {
    fn default() -> Self {
        Run::start()
    }
}

impl Run {
    /// Registers a run.
    pub fn start() -> Run {
        Run(RunTrace::start())
    }

    /// Its trace id, in hex.
    pub fn trace_id(&self) -> String {
        hex(&self.0.trace_id())
    }

    /// A turn's `traceparent`.
    pub fn turn(&self) -> String {
        self.0.turn()
    }

    /// Takes the spans received so far (without waiting), as their JSON form.
    pub async fn take(&self) -> Vec<Value> {
        self.0
            .take(std::time::Duration::ZERO)
            .await
            .iter()
            .map(Span::to_json)
            .collect()
    }

    /// Takes the spans received so far, normalized into events.
    pub async fn events(&self) -> Vec<crate::base::event::Event> {
        let spans = self.0.take(std::time::Duration::ZERO).await;
        super::normalize::events(spans, &[])
    }
}

/// An OTLP/HTTP protobuf body of `count` spans spread over `trace_ids` (hex): chat spans with
/// usage and `execute_tool` spans, as an instrumented agent sends them.
pub fn protobuf_batch(trace_ids: &[String], count: usize) -> Vec<u8> {
    let ids: Vec<[u8; 16]> = trace_ids
        .iter()
        .filter_map(|id| super::span::unhex(id)?.try_into().ok())
        .collect();
    let spans: Vec<Span> = (0..count)
        .map(|i| {
            let tool = i % 2 == 1;
            let attributes: Map<String, Value> = if tool {
                json!({"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "lookup_order",
                       "gen_ai.tool.call.id": format!("call_{i}"), "gen_ai.tool.call.arguments": "{\"id\":\"123\"}"})
            } else {
                json!({"gen_ai.operation.name": "chat", "gen_ai.provider.name": "openai",
                       "gen_ai.request.model": "gpt-4o-mini", "gen_ai.usage.input_tokens": 100,
                       "gen_ai.usage.output_tokens": 20})
            }
            .as_object()
            .cloned()
            .unwrap_or_default();
            Span {
                trace_id: ids.get(i % ids.len().max(1)).copied().unwrap_or_else(random_id),
                span_id: random_id(),
                parent: None,
                name: if tool { "execute_tool lookup_order" } else { "chat gpt-4o-mini" }.into(),
                kind: if tool { Kind::Internal } else { Kind::Client },
                start: i as u64,
                end: i as u64 + 1,
                status: Status::Unset,
                status_message: None,
                service: Some("bench".into()),
                attributes,
                log: false,
            }
        })
        .collect();
    prost::Message::encode_to_vec(&super::export::to_request(spans.iter(), "bench"))
}

/// Reads a body as the receiver does (`logs` for `/v1/logs`) and hands its spans to their runs;
/// returns how many reached one.
pub fn ingest(
    logs: bool,
    content_type: &str,
    encoding: Option<&str>,
    body: Vec<u8>,
) -> Result<usize, Box<dyn std::error::Error + Send + Sync>> {
    let signal = if logs { Signal::Logs } else { Signal::Traces };
    let body =
        decompress(body, encoding, super::receiver::MAX_BODY).map_err(super::TraceError::from)?;
    let batch = decode(signal, Some(content_type), &body).map_err(super::TraceError::from)?;
    Ok(registry().ingest(batch))
}

/// The most spans one run keeps.
pub const MAX_SPANS_PER_RUN: usize = super::registry::MAX_SPANS_PER_RUN;
