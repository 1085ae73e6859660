//! OTLP/HTTP bodies to spans: protobuf or JSON (`Content-Type`), gzip or not
//! (`Content-Encoding`), ids in hex or base64, 64-bit integers as strings or numbers, with the
//! protocol's published types (`opentelemetry-proto`). Log records become spans without
//! duration (`log: true`).

use opentelemetry_proto::tonic::collector::logs::v1::ExportLogsServiceRequest;
use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::common::v1::{AnyValue, KeyValue, any_value};
use opentelemetry_proto::tonic::resource::v1::Resource;
use serde_json::{Map, Value};

use super::span::{Kind, MAX_ATTRIBUTE_TEXT, Span, Status, hex, unhex};

/// The resource attribute niceeval gives a subprocess agent (`OTEL_RESOURCE_ATTRIBUTES`): the
/// trace of the run it belongs to, so its spans are attributed even when it does not read
/// `TRACEPARENT`.
pub(crate) const RUN_ATTRIBUTE: &str = "niceeval.trace_id";

/// What one request carried: per resource, the run it names (if any) and its spans.
#[derive(Debug, Default)]
pub(crate) struct Batch {
    pub groups: Vec<(Option<[u8; 16]>, Vec<Span>)>,
}

impl Batch {
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.groups.iter().map(|(_, spans)| spans.len()).sum()
    }
}

/// Which signal a request carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Signal {
    Traces,
    Logs,
}

/// Why a body could not be read (the receiver answers 400 with this message).
#[derive(Debug, Clone, thiserror::Error, PartialEq, Eq)]
pub(crate) enum DecodeError {
    #[error("the body is not valid gzip: {0}")]
    Gzip(String),
    #[error("unsupported Content-Encoding {0:?}: send identity or gzip")]
    Encoding(String),
    #[error("unsupported Content-Type {0:?}: send application/x-protobuf or application/json")]
    ContentType(String),
    #[error("the body is not an OTLP protobuf message: {0}")]
    Protobuf(String),
    #[error("the body is not OTLP/JSON: {0}")]
    Json(String),
    #[error("the body is over the size limit of {0} bytes")]
    TooLarge(usize),
}

/// Ungzips `body` when `encoding` says so, refusing to grow past `limit` bytes.
pub(crate) fn decompress(
    body: Vec<u8>,
    encoding: Option<&str>,
    limit: usize,
) -> Result<Vec<u8>, DecodeError> {
    match encoding.map(|e| e.trim().to_ascii_lowercase()).as_deref() {
        None | Some("") | Some("identity") => Ok(body),
        Some("gzip") => {
            use std::io::Read;
            let mut out = Vec::new();
            flate2::read::GzDecoder::new(body.as_slice())
                .take(limit as u64 + 1)
                .read_to_end(&mut out)
                .map_err(|e| DecodeError::Gzip(e.to_string()))?;
            if out.len() > limit {
                return Err(DecodeError::TooLarge(limit));
            }
            Ok(out)
        }
        Some(other) => Err(DecodeError::Encoding(other.to_string())),
    }
}

/// Decodes an uncompressed body.
pub(crate) fn decode(
    signal: Signal,
    content_type: Option<&str>,
    body: &[u8],
) -> Result<Batch, DecodeError> {
    let kind = content_type
        .unwrap_or("application/x-protobuf")
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase();
    let json = match kind.as_str() {
        "application/x-protobuf" | "application/protobuf" | "application/octet-stream" | "" => {
            false
        }
        "application/json" => true,
        other => return Err(DecodeError::ContentType(other.to_string())),
    };
    match (signal, json) {
        (Signal::Traces, false) => {
            let message = <ExportTraceServiceRequest as prost::Message>::decode(body)
                .map_err(|e| DecodeError::Protobuf(e.to_string()))?;
            Ok(from_traces(message))
        }
        (Signal::Logs, false) => {
            let message = <ExportLogsServiceRequest as prost::Message>::decode(body)
                .map_err(|e| DecodeError::Protobuf(e.to_string()))?;
            Ok(from_logs(message))
        }
        (signal, true) => {
            let mut value: Value =
                serde_json::from_slice(body).map_err(|e| DecodeError::Json(e.to_string()))?;
            hex_ids(&mut value);
            let fail = |e: serde_path_to_error::Error<serde_json::Error>| {
                DecodeError::Json(format!("at {}: {}", e.path(), e.inner()))
            };
            match signal {
                Signal::Traces => serde_path_to_error::deserialize(value)
                    .map(from_traces)
                    .map_err(fail),
                Signal::Logs => serde_path_to_error::deserialize(value)
                    .map(from_logs)
                    .map_err(fail),
            }
        }
    }
}

/// OTLP/JSON writes ids in hex; some clients write protobuf's JSON mapping (base64). Rewrites
/// every id that is not hex of its length into hex.
fn hex_ids(value: &mut Value) {
    match value {
        Value::Object(map) => {
            for (key, v) in map.iter_mut() {
                let len = match key.as_str() {
                    "traceId" => 16,
                    "spanId" | "parentSpanId" => 8,
                    _ => {
                        hex_ids(v);
                        continue;
                    }
                };
                if let Value::String(s) = v {
                    if s.len() == len * 2 && unhex(s).is_some() {
                        continue;
                    }
                    use base64::Engine;
                    if let Ok(bytes) = base64::engine::general_purpose::STANDARD.decode(s.trim()) {
                        *s = hex(&bytes);
                    }
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(hex_ids),
        _ => {}
    }
}

fn service(resource: Option<&Resource>) -> (Option<String>, Option<[u8; 16]>) {
    let mut service = None;
    let mut run = None;
    for kv in resource
        .map(|r| r.attributes.as_slice())
        .unwrap_or_default()
    {
        match (
            kv.key.as_str(),
            kv.value.as_ref().and_then(|v| v.value.as_ref()),
        ) {
            ("service.name", Some(any_value::Value::StringValue(s))) => service = Some(s.clone()),
            (RUN_ATTRIBUTE, Some(any_value::Value::StringValue(s))) => {
                run = unhex(s).and_then(|b| b.try_into().ok());
            }
            _ => {}
        }
    }
    (service, run)
}

fn from_traces(message: ExportTraceServiceRequest) -> Batch {
    let mut batch = Batch::default();
    for resource in message.resource_spans {
        let (service, run) = service(resource.resource.as_ref());
        let mut spans = Vec::new();
        for scope in resource.scope_spans {
            for span in scope.spans {
                let (Ok(trace_id), Ok(span_id)) = (
                    <[u8; 16]>::try_from(span.trace_id.as_slice()),
                    <[u8; 8]>::try_from(span.span_id.as_slice()),
                ) else {
                    continue; // no valid ids: nothing can place it
                };
                let parent = <[u8; 8]>::try_from(span.parent_span_id.as_slice())
                    .ok()
                    .filter(|p| p.iter().any(|b| *b != 0));
                let status = span.status.as_ref();
                spans.push(Span {
                    trace_id,
                    span_id,
                    parent,
                    name: span.name,
                    kind: Kind::from_otlp(span.kind),
                    start: span.start_time_unix_nano,
                    end: span.end_time_unix_nano,
                    status: status.map_or(Status::Unset, |s| Status::from_otlp(s.code)),
                    status_message: status.map(|s| s.message.clone()).filter(|m| !m.is_empty()),
                    service: service.clone(),
                    attributes: attributes(span.attributes),
                    log: false,
                });
            }
        }
        batch.groups.push((run, spans));
    }
    batch
}

fn from_logs(message: ExportLogsServiceRequest) -> Batch {
    let mut batch = Batch::default();
    for resource in message.resource_logs {
        let (service, run) = service(resource.resource.as_ref());
        let mut spans = Vec::new();
        for scope in resource.scope_logs {
            for record in scope.log_records {
                let trace_id = <[u8; 16]>::try_from(record.trace_id.as_slice()).unwrap_or([0; 16]);
                let parent = <[u8; 8]>::try_from(record.span_id.as_slice())
                    .ok()
                    .filter(|p| p.iter().any(|b| *b != 0));
                let mut attrs = attributes(record.attributes);
                let body = record.body.map(any);
                let name = if !record.event_name.is_empty() {
                    record.event_name
                } else if let Some(Value::String(name)) = attrs.get("event.name") {
                    name.clone()
                } else if let Some(Value::String(body)) = &body {
                    body.clone()
                } else {
                    "log".to_string()
                };
                if let Some(body) = body {
                    attrs.entry("log.body").or_insert(body);
                }
                let time = if record.time_unix_nano > 0 {
                    record.time_unix_nano
                } else {
                    record.observed_time_unix_nano
                };
                spans.push(Span {
                    trace_id,
                    span_id: super::span::random_id(),
                    parent,
                    name,
                    kind: Kind::Internal,
                    start: time,
                    end: time,
                    status: Status::Unset,
                    status_message: None,
                    service: service.clone(),
                    attributes: attrs,
                    log: true,
                });
            }
        }
        batch.groups.push((run, spans));
    }
    batch
}

fn attributes(list: Vec<KeyValue>) -> Map<String, Value> {
    list.into_iter()
        .map(|kv| (kv.key, kv.value.map_or(Value::Null, any)))
        .collect()
}

/// An OTLP value as JSON (texts longer than the ingestion cap are cut).
pub(crate) fn any(value: AnyValue) -> Value {
    match value.value {
        None => Value::Null,
        Some(any_value::Value::StringValue(mut s)) => {
            if s.len() > MAX_ATTRIBUTE_TEXT {
                let mut end = MAX_ATTRIBUTE_TEXT;
                while !s.is_char_boundary(end) {
                    end -= 1;
                }
                s.truncate(end);
            }
            Value::String(s)
        }
        Some(any_value::Value::BoolValue(b)) => Value::Bool(b),
        Some(any_value::Value::IntValue(i)) => Value::from(i),
        Some(any_value::Value::DoubleValue(d)) => {
            serde_json::Number::from_f64(d).map_or(Value::Null, Value::Number)
        }
        Some(any_value::Value::ArrayValue(a)) => {
            Value::Array(a.values.into_iter().map(any).collect())
        }
        Some(any_value::Value::KvlistValue(kv)) => Value::Object(attributes(kv.values)),
        Some(any_value::Value::BytesValue(b)) => Value::String(hex(&b)),
        #[allow(unreachable_patterns)]
        Some(_) => Value::Null,
    }
}

/// A JSON value as an OTLP value.
pub(crate) fn to_any(value: &Value) -> AnyValue {
    use any_value::Value as V;
    let inner = match value {
        Value::Null => None,
        Value::Bool(b) => Some(V::BoolValue(*b)),
        Value::Number(n) => Some(match n.as_i64() {
            Some(i) => V::IntValue(i),
            None => V::DoubleValue(n.as_f64().unwrap_or_default()),
        }),
        Value::String(s) => Some(V::StringValue(s.clone())),
        Value::Array(items) => Some(V::ArrayValue(
            opentelemetry_proto::tonic::common::v1::ArrayValue {
                values: items.iter().map(to_any).collect(),
            },
        )),
        Value::Object(map) => Some(V::KvlistValue(
            opentelemetry_proto::tonic::common::v1::KeyValueList {
                values: to_attributes(map),
            },
        )),
    };
    AnyValue { value: inner }
}

/// JSON attributes as OTLP key-values.
pub(crate) fn to_attributes(map: &Map<String, Value>) -> Vec<KeyValue> {
    map.iter()
        .map(|(k, v)| KeyValue {
            key: k.clone(),
            value: Some(to_any(v)),
            ..Default::default()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const JSON: &str = r#"{"resourceSpans":[{"resource":{"attributes":[
        {"key":"service.name","value":{"stringValue":"agent"}}]},
      "scopeSpans":[{"spans":[
        {"traceId":"0af7651916cd43dd8448eb211c80319c","spanId":"b7ad6b7169203331",
         "name":"chat","kind":3,"startTimeUnixNano":"1700000000000000000",
         "endTimeUnixNano":1700000000500000000,
         "attributes":[{"key":"gen_ai.usage.input_tokens","value":{"intValue":"12"}},
                       {"key":"gen_ai.usage.output_tokens","value":{"intValue":5}}],
         "status":{"code":2,"message":"boom"}},
        {"traceId":"CvdlGRbNQ92ESOshHIAxnA==","spanId":"t61rcWkgMzI=","parentSpanId":"t61rcWkgMzE=",
         "name":"execute_tool x","startTimeUnixNano":"1","endTimeUnixNano":"2"}]}]}]}"#;

    #[test]
    fn json_with_string_or_number_integers_and_hex_or_base64_ids_is_read() {
        let batch = decode(Signal::Traces, Some("application/json"), JSON.as_bytes()).unwrap();
        let spans = &batch.groups[0].1;
        assert_eq!(spans.len(), 2);
        assert_eq!(hex(&spans[0].trace_id), "0af7651916cd43dd8448eb211c80319c");
        assert_eq!(
            spans[1].trace_id, spans[0].trace_id,
            "base64 ids read as the same id"
        );
        assert_eq!(hex(&spans[1].span_id), "b7ad6b7169203332");
        assert_eq!(spans[0].u64("gen_ai.usage.input_tokens"), Some(12));
        assert_eq!(spans[0].u64("gen_ai.usage.output_tokens"), Some(5));
        assert_eq!(spans[0].start, 1_700_000_000_000_000_000);
        assert_eq!(spans[0].end, 1_700_000_000_500_000_000);
        assert_eq!(spans[0].kind, Kind::Client);
        assert_eq!(spans[0].status, Status::Error);
        assert_eq!(spans[0].service.as_deref(), Some("agent"));
    }

    #[test]
    fn protobuf_and_gzip_bodies_are_read_and_bad_ones_are_errors() {
        let batch = decode(Signal::Traces, Some("application/json"), JSON.as_bytes()).unwrap();
        let proto = super::super::export::to_request(
            batch.groups.iter().flat_map(|(_, s)| s.iter()),
            "agent",
        );
        let bytes = prost::Message::encode_to_vec(&proto);
        use std::io::Write;
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        gz.write_all(&bytes).unwrap();
        let unzipped = decompress(gz.finish().unwrap(), Some("gzip"), 1 << 20).unwrap();
        let back = decode(Signal::Traces, Some("application/x-protobuf"), &unzipped).unwrap();
        assert_eq!(back.len(), 2);
        assert_eq!(
            back.groups[0].1[0].u64("gen_ai.usage.input_tokens"),
            Some(12)
        );

        assert!(matches!(
            decode(Signal::Traces, Some("application/json"), b"{not json"),
            Err(DecodeError::Json(_))
        ));
        assert!(matches!(
            decode(
                Signal::Traces,
                Some("application/x-protobuf"),
                b"\xff\xff\xff"
            ),
            Err(DecodeError::Protobuf(_))
        ));
        assert!(matches!(
            decode(Signal::Traces, Some("text/plain"), b""),
            Err(DecodeError::ContentType(_))
        ));
        assert!(matches!(
            decompress(b"not gzip".to_vec(), Some("gzip"), 100),
            Err(DecodeError::Gzip(_))
        ));
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        gz.write_all(&[0u8; 10_000]).unwrap();
        assert_eq!(
            decompress(gz.finish().unwrap(), Some("gzip"), 1000),
            Err(DecodeError::TooLarge(1000))
        );
    }

    #[test]
    fn a_log_record_becomes_a_span_named_by_its_event() {
        let json = r#"{"resourceLogs":[{"resource":{"attributes":[
            {"key":"niceeval.trace_id","value":{"stringValue":"0af7651916cd43dd8448eb211c80319c"}}]},
          "scopeLogs":[{"logRecords":[{"timeUnixNano":"5","body":{"stringValue":"claude_code.tool_result"},
            "attributes":[{"key":"tool_name","value":{"stringValue":"Bash"}}]}]}]}]}"#;
        let batch = decode(Signal::Logs, Some("application/json"), json.as_bytes()).unwrap();
        let (run, spans) = &batch.groups[0];
        assert_eq!(hex(&run.unwrap()), "0af7651916cd43dd8448eb211c80319c");
        assert_eq!(spans[0].name, "claude_code.tool_result");
        assert!(spans[0].log);
        assert_eq!(spans[0].str("tool_name"), Some("Bash"));
    }
}
