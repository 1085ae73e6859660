//! Spans out: an OTLP/HTTP protobuf request from spans, and the POST that sends it.

use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::common::v1::{AnyValue, InstrumentationScope, KeyValue, any_value};
use opentelemetry_proto::tonic::resource::v1::Resource;
use opentelemetry_proto::tonic::trace::v1::{ResourceSpans, ScopeSpans, Status, span};

use super::otlp::to_attributes;
use super::span::Span;

/// One OTLP span with its events (name, time, attributes).
pub(crate) struct Exported<'a> {
    pub span: &'a Span,
    pub events: Vec<(String, u64, serde_json::Map<String, serde_json::Value>)>,
}

fn proto(
    span: &Span,
    events: &[(String, u64, serde_json::Map<String, serde_json::Value>)],
) -> opentelemetry_proto::tonic::trace::v1::Span {
    opentelemetry_proto::tonic::trace::v1::Span {
        trace_id: span.trace_id.to_vec(),
        span_id: span.span_id.to_vec(),
        parent_span_id: span.parent.map(|p| p.to_vec()).unwrap_or_default(),
        name: span.name.clone(),
        kind: span.kind.otlp(),
        start_time_unix_nano: span.start,
        end_time_unix_nano: span.end,
        attributes: to_attributes(&span.attributes),
        events: events
            .iter()
            .map(|(name, time, attributes)| span::Event {
                name: name.clone(),
                time_unix_nano: *time,
                attributes: to_attributes(attributes),
                ..Default::default()
            })
            .collect(),
        status: Some(Status {
            code: span.status.otlp(),
            message: span.status_message.clone().unwrap_or_default(),
        }),
        ..Default::default()
    }
}

/// A request holding `spans` under one resource named `service`.
pub(crate) fn to_request<'a>(
    spans: impl Iterator<Item = &'a Span>,
    service: &str,
) -> ExportTraceServiceRequest {
    with_events(
        spans.map(|span| Exported {
            span,
            events: Vec::new(),
        }),
        service,
    )
}

/// A request holding `spans` (with their events) under one resource named `service`.
pub(crate) fn with_events<'a>(
    spans: impl Iterator<Item = Exported<'a>>,
    service: &str,
) -> ExportTraceServiceRequest {
    ExportTraceServiceRequest {
        resource_spans: vec![ResourceSpans {
            resource: Some(Resource {
                attributes: vec![KeyValue {
                    key: "service.name".into(),
                    value: Some(AnyValue {
                        value: Some(any_value::Value::StringValue(service.to_string())),
                    }),
                    ..Default::default()
                }],
                ..Default::default()
            }),
            scope_spans: vec![ScopeSpans {
                scope: Some(InstrumentationScope {
                    name: "niceeval".into(),
                    version: env!("CARGO_PKG_VERSION").into(),
                    ..Default::default()
                }),
                spans: spans.map(|e| proto(e.span, &e.events)).collect(),
                ..Default::default()
            }],
            ..Default::default()
        }],
    }
}

/// POSTs `request` as protobuf to `endpoint` (`http://host:4318`, `/v1/traces` added unless
/// the URL already ends with it).
pub(crate) async fn send(
    endpoint: &str,
    request: &ExportTraceServiceRequest,
) -> Result<(), super::TraceError> {
    let url = if endpoint.trim_end_matches('/').ends_with("/v1/traces") {
        endpoint.to_string()
    } else {
        format!("{}/v1/traces", endpoint.trim_end_matches('/'))
    };
    let body = prost::Message::encode_to_vec(request);
    let response = reqwest::Client::new()
        .post(&url)
        .header("content-type", "application/x-protobuf")
        .body(body)
        .timeout(std::time::Duration::from_secs(10))
        .send()
        .await
        .map_err(|e| super::TraceError::Export {
            url: url.clone(),
            source: e.into(),
        })?;
    if !response.status().is_success() {
        return Err(super::TraceError::Refused {
            url,
            status: response.status(),
        });
    }
    Ok(())
}
