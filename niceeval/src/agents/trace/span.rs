//! One span as niceeval keeps it, whatever carried it (OTLP protobuf or JSON, a log record, the
//! `tracing` layer), and its JSON form in the run's events (`Event::Custom { name: "otel.span" }`).

use serde_json::{Map, Value, json};

use crate::base::event::Event;

/// The name of the custom event that keeps a received span in the run's events.
pub(crate) const SPAN_EVENT: &str = "otel.span";

/// Longest attribute text kept at ingestion (the report caps again to `[report] max_text`).
pub(crate) const MAX_ATTRIBUTE_TEXT: usize = 64 * 1024;

/// A span's kind, as OTLP numbers it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Unspecified,
    Internal,
    Server,
    Client,
    Producer,
    Consumer,
}

impl Kind {
    pub(crate) fn from_otlp(kind: i32) -> Kind {
        match kind {
            1 => Kind::Internal,
            2 => Kind::Server,
            3 => Kind::Client,
            4 => Kind::Producer,
            5 => Kind::Consumer,
            _ => Kind::Unspecified,
        }
    }

    pub(crate) fn otlp(self) -> i32 {
        match self {
            Kind::Unspecified => 0,
            Kind::Internal => 1,
            Kind::Server => 2,
            Kind::Client => 3,
            Kind::Producer => 4,
            Kind::Consumer => 5,
        }
    }

    pub(crate) fn from_name(name: &str) -> Kind {
        match name.to_ascii_lowercase().as_str() {
            "internal" => Kind::Internal,
            "server" => Kind::Server,
            "client" => Kind::Client,
            "producer" => Kind::Producer,
            "consumer" => Kind::Consumer,
            _ => Kind::Unspecified,
        }
    }

    fn name(self) -> &'static str {
        match self {
            Kind::Unspecified => "unspecified",
            Kind::Internal => "internal",
            Kind::Server => "server",
            Kind::Client => "client",
            Kind::Producer => "producer",
            Kind::Consumer => "consumer",
        }
    }
}

/// A span's status code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Status {
    Unset,
    Ok,
    Error,
}

impl Status {
    pub(crate) fn from_otlp(code: i32) -> Status {
        match code {
            1 => Status::Ok,
            2 => Status::Error,
            _ => Status::Unset,
        }
    }

    pub(crate) fn otlp(self) -> i32 {
        match self {
            Status::Unset => 0,
            Status::Ok => 1,
            Status::Error => 2,
        }
    }

    fn name(self) -> &'static str {
        match self {
            Status::Unset => "unset",
            Status::Ok => "ok",
            Status::Error => "error",
        }
    }
}

/// One received span (or log record, kept as a span without duration).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Span {
    pub trace_id: [u8; 16],
    pub span_id: [u8; 8],
    pub parent: Option<[u8; 8]>,
    pub name: String,
    pub kind: Kind,
    pub start: u64,
    pub end: u64,
    pub status: Status,
    pub status_message: Option<String>,
    pub service: Option<String>,
    /// Attributes as JSON values (strings, numbers, booleans, arrays, objects).
    pub attributes: Map<String, Value>,
    /// A log record rather than a span (kept as `otel.log`).
    pub log: bool,
}

impl Span {
    /// The span's JSON form (the data of its `otel.span` event).
    pub(crate) fn to_json(&self) -> Value {
        json!({
            "trace_id": hex(&self.trace_id),
            "span_id": hex(&self.span_id),
            "parent_span_id": self.parent.map(|p| hex(&p)),
            "name": self.name,
            "kind": self.kind.name(),
            "start_unix_nano": self.start,
            "end_unix_nano": self.end,
            "status": { "code": self.status.name(), "message": self.status_message },
            "service": self.service,
            "attributes": Value::Object(self.attributes.clone()),
        })
    }

    /// The event that keeps this span, moving its attributes.
    pub(crate) fn into_event(self) -> Event {
        let name = if self.log { "otel.log" } else { SPAN_EVENT }.to_string();
        let mut data = self.clone_without_attributes().to_json();
        data["attributes"] = Value::Object(self.attributes);
        Event::Custom { name, data }
    }

    fn clone_without_attributes(&self) -> Span {
        Span {
            trace_id: self.trace_id,
            span_id: self.span_id,
            parent: self.parent,
            name: self.name.clone(),
            kind: self.kind,
            start: self.start,
            end: self.end,
            status: self.status,
            status_message: self.status_message.clone(),
            service: self.service.clone(),
            attributes: Map::new(),
            log: self.log,
        }
    }

    /// Reads a span back from its JSON form (the export reads runs' events).
    pub(crate) fn from_json(data: &Value) -> Option<Span> {
        let id = |key: &str| data.get(key).and_then(Value::as_str).and_then(unhex);
        let text = |key: &str| data.get(key).and_then(Value::as_str).map(str::to_string);
        Some(Span {
            trace_id: id("trace_id")?.try_into().ok()?,
            span_id: id("span_id")?.try_into().ok()?,
            parent: id("parent_span_id").and_then(|p| p.try_into().ok()),
            name: text("name").unwrap_or_default(),
            kind: Kind::from_name(data.get("kind").and_then(Value::as_str).unwrap_or("")),
            start: data.get("start_unix_nano").and_then(Value::as_u64)?,
            end: data.get("end_unix_nano").and_then(Value::as_u64)?,
            status: match data.pointer("/status/code").and_then(Value::as_str) {
                Some("ok") => Status::Ok,
                Some("error") => Status::Error,
                _ => Status::Unset,
            },
            status_message: data
                .pointer("/status/message")
                .and_then(Value::as_str)
                .map(str::to_string),
            service: text("service"),
            attributes: data
                .get("attributes")
                .and_then(Value::as_object)
                .cloned()
                .unwrap_or_default(),
            log: false,
        })
    }

    /// A string attribute.
    pub(crate) fn str(&self, key: &str) -> Option<&str> {
        self.attributes.get(key).and_then(Value::as_str)
    }

    /// A whole-number attribute (numbers, or numbers written as strings).
    pub(crate) fn u64(&self, key: &str) -> Option<u64> {
        match self.attributes.get(key)? {
            Value::Number(n) => n
                .as_u64()
                .or_else(|| n.as_f64().filter(|f| *f >= 0.0).map(|f| f as u64)),
            Value::String(s) => s.trim().parse().ok(),
            _ => None,
        }
    }
}

/// Lower-case hex of `bytes`.
pub(crate) fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        out.push(DIGITS[(b >> 4) as usize] as char);
        out.push(DIGITS[(b & 15) as usize] as char);
    }
    out
}

/// Bytes of a hex string (`None` when it is not hex).
pub(crate) fn unhex(text: &str) -> Option<Vec<u8>> {
    if !text.len().is_multiple_of(2) {
        return None;
    }
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(text.get(i..i + 2)?, 16).ok())
        .collect()
}

/// A fresh random id of `N` bytes (never all zero).
pub(crate) fn random_id<const N: usize>() -> [u8; N] {
    use std::hash::{BuildHasher, Hasher};
    use std::sync::atomic::{AtomicU64, Ordering};
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let mut out = [0u8; N];
    for chunk in out.chunks_mut(8) {
        let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
        hasher.write_u64(COUNTER.fetch_add(1, Ordering::Relaxed));
        hasher.write_u128(
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos()),
        );
        let bytes = hasher.finish().to_le_bytes();
        chunk.copy_from_slice(&bytes[..chunk.len()]);
    }
    if out.iter().all(|b| *b == 0) {
        out[0] = 1;
    }
    out
}

/// A W3C `traceparent` for a span of this trace.
pub(crate) fn traceparent(trace_id: &[u8; 16], span_id: &[u8; 8]) -> String {
    format!("00-{}-{}-01", hex(trace_id), hex(span_id))
}

/// The trace id of a W3C `traceparent`.
pub(crate) fn trace_of(traceparent: &str) -> Option<[u8; 16]> {
    let mut parts = traceparent.split('-');
    let _version = parts.next()?;
    unhex(parts.next()?)?.try_into().ok()
}

/// The span id of a W3C `traceparent`.
pub(crate) fn span_of(traceparent: &str) -> Option<[u8; 8]> {
    unhex(traceparent.split('-').nth(2)?)?.try_into().ok()
}

/// Nanoseconds since the Unix epoch, now.
pub(crate) fn now_nanos() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_span_round_trips_through_its_json_form() {
        let span = Span {
            trace_id: [1; 16],
            span_id: [2; 8],
            parent: None,
            name: "chat".into(),
            kind: Kind::Client,
            start: 1,
            end: 2,
            status: Status::Error,
            status_message: Some("boom".into()),
            service: Some("agent".into()),
            attributes: Map::from_iter([("a".to_string(), json!(1))]),
            log: false,
        };
        let data = span.to_json();
        assert_eq!(data["trace_id"], "01010101010101010101010101010101");
        assert_eq!(data["parent_span_id"], Value::Null);
        assert_eq!(data["kind"], "client");
        assert_eq!(data["status"]["code"], "error");
        assert_eq!(Span::from_json(&data), Some(span));
    }

    #[test]
    fn traceparent_names_its_trace_and_span() {
        let tp = traceparent(&[0xab; 16], &[0xcd; 8]);
        assert_eq!(tp, format!("00-{}-{}-01", "ab".repeat(16), "cd".repeat(8)));
        assert_eq!(trace_of(&tp), Some([0xab; 16]));
        assert_eq!(span_of(&tp), Some([0xcd; 8]));
        assert_eq!(trace_of("garbage"), None);
        assert_ne!(random_id::<16>(), random_id::<16>());
    }
}
