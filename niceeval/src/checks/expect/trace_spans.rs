//! promptfoo's trace assertions on the spans a run recorded: `trace-span-count` (how many spans
//! match a name pattern, within `min`/`max`), `trace-span-duration` (no matching span, or the
//! given percentile of them, takes longer than `max` milliseconds) and `trace-error-spans` (how
//! many matching spans failed, within `max_count` and `max_percentage`). A pattern is a glob
//! matched against the whole span name without regard to case: `*` any run, `?` one character.
//! A run without trace data is an execution error, as promptfoo's handlers throw.

use std::sync::LazyLock;

use serde_json::{Map, Value};

use crate::base::assertion::{Assertion, Grade, Subject};
use crate::checks::expect::response::{described, verdict};

/// One span of a run's trace, as the trace assertions read it.
#[derive(Debug, Clone, Default, PartialEq)]
#[non_exhaustive]
pub struct TraceSpan {
    /// The span's name (`llm.completion`, `tool.lookup`, ...).
    pub name: String,
    /// When it started, in milliseconds (any origin shared by the run's spans).
    pub start_ms: Option<f64>,
    /// When it ended, in milliseconds; `None` for a span still open.
    pub end_ms: Option<f64>,
    /// Its status code: OpenTelemetry's (0 unset, 1 ok, 2 error), or an HTTP status some
    /// exporters put there.
    pub status_code: Option<i64>,
    /// Its status message.
    pub status_message: Option<String>,
    /// Its attributes.
    pub attributes: Map<String, Value>,
}

impl TraceSpan {
    /// A span with a name and nothing else.
    pub fn new(name: impl Into<String>) -> TraceSpan {
        TraceSpan {
            name: name.into(),
            ..TraceSpan::default()
        }
    }

    /// Reads the JSON form niceeval keeps a received span in (the data of an `otel.span`
    /// event: `name`, `start_unix_nano`, `end_unix_nano`, `status: {code, message}`,
    /// `attributes`); `None` for data without a name.
    pub(crate) fn from_event_data(data: &Value) -> Option<TraceSpan> {
        let nanos = |key: &str| data.get(key).and_then(Value::as_f64).map(|n| n / 1e6);
        Some(TraceSpan {
            name: data.get("name")?.as_str()?.to_string(),
            start_ms: nanos("start_unix_nano"),
            end_ms: nanos("end_unix_nano"),
            status_code: match data.pointer("/status/code").and_then(Value::as_str) {
                Some("ok") => Some(1),
                Some("error") => Some(2),
                Some(_) => Some(0),
                None => None,
            },
            status_message: data
                .pointer("/status/message")
                .and_then(Value::as_str)
                .filter(|m| !m.is_empty())
                .map(str::to_string),
            attributes: data
                .get("attributes")
                .and_then(Value::as_object)
                .cloned()
                .unwrap_or_default(),
        })
    }

    fn duration(&self) -> Option<f64> {
        Some(self.end_ms? - self.start_ms?)
    }
}

/// A glob pattern over span names.
#[derive(Debug, Clone)]
pub(crate) struct Pattern {
    text: String,
    regex: Option<regex::Regex>,
}

impl Pattern {
    /// `*` matches any run, `?` one character, the rest itself, without regard to case.
    pub(crate) fn new(text: &str) -> Pattern {
        let mut source = String::from("(?i)^");
        for c in text.chars() {
            match c {
                '*' => source.push_str(".*"),
                '?' => source.push('.'),
                other => source.push_str(&regex::escape(other.encode_utf8(&mut [0; 4]))),
            }
        }
        source.push('$');
        Pattern {
            text: text.to_string(),
            // Escaped text always compiles (a pattern too large to compile matches nothing).
            regex: regex::Regex::new(&source).ok(),
        }
    }

    fn matches(&self, name: &str) -> bool {
        self.regex.as_ref().is_some_and(|r| r.is_match(name))
    }
}

/// The rule of a trace item.
#[derive(Debug, Clone)]
pub(crate) enum Rule {
    /// `trace-span-count`: `{pattern, min, max}`.
    Count {
        pattern: Pattern,
        min: Option<f64>,
        max: Option<f64>,
    },
    /// `trace-span-duration`: `{pattern, max, percentile}`.
    Duration {
        pattern: Pattern,
        max: f64,
        percentile: Option<f64>,
    },
    /// `trace-error-spans`: a number (`max_count`), or `{max_count, max_percentage, pattern}`.
    Errors {
        pattern: Pattern,
        max_count: Option<f64>,
        max_percentage: Option<f64>,
    },
}

/// The matcher of a trace item, for one evaluation.
pub(crate) struct TraceCheck {
    pub(crate) rule: Rule,
    /// The run's spans; `None` when the run has no trace data.
    pub(crate) spans: Option<Vec<TraceSpan>>,
}

impl Rule {
    fn type_name(&self) -> &'static str {
        match self {
            Rule::Count { .. } => "trace-span-count",
            Rule::Duration { .. } => "trace-span-duration",
            Rule::Errors { .. } => "trace-error-spans",
        }
    }
}

/// Whether a span failed, by promptfoo's signs: an error status (2, or an HTTP status of 400
/// or more), a true or object `error`/`exception`/`failed`/`failure` attribute, an
/// `http.status_code` of 400 or more, an `ERROR` `otel.status_code`/`status.code`, or a status
/// message that speaks of an error, failure, exception, timeout or abort.
pub(crate) fn is_error_span(span: &TraceSpan) -> bool {
    if span.status_code.is_some_and(|c| c == 2 || c >= 400) {
        return true;
    }
    let attributes = &span.attributes;
    for key in ["error", "exception", "failed", "failure"] {
        match attributes.get(key) {
            Some(Value::Bool(true) | Value::Object(_) | Value::Array(_)) => return true,
            Some(Value::String(s)) if s == "true" => return true,
            _ => {}
        }
    }
    let http_status = match attributes.get("http.status_code") {
        Some(Value::Number(n)) => n.as_f64(),
        Some(Value::String(s)) => match s.trim() {
            "" => Some(0.0),
            text => text.parse::<f64>().ok(),
        },
        Some(Value::Bool(b)) => Some(if *b { 1.0 } else { 0.0 }),
        _ => None,
    };
    if http_status.is_some_and(|n| n >= 400.0) {
        return true;
    }
    let error_text = |key: &str| attributes.get(key).and_then(Value::as_str) == Some("ERROR");
    if error_text("otel.status_code") || error_text("status.code") {
        return true;
    }
    static ERROR_WORDS: LazyLock<regex::Regex> = LazyLock::new(|| {
        regex::Regex::new("(?i)error|failed|failure|exception|timeout|abort")
            .expect("a valid pattern")
    });
    span.status_message
        .as_deref()
        .is_some_and(|m| ERROR_WORDS.is_match(m))
}

/// promptfoo's percentile: the value at rank `ceil(p/100 · n)` of the sorted durations.
fn percentile_of(durations: &[f64], percentile: f64) -> f64 {
    if durations.is_empty() {
        return 0.0;
    }
    let mut sorted = durations.to_vec();
    sorted.sort_by(f64::total_cmp);
    let rank = (percentile / 100.0 * sorted.len() as f64).ceil() as i64 - 1;
    sorted[rank.clamp(0, sorted.len() as i64 - 1) as usize]
}

/// `name (12ms), ...` for the slowest (at most three) of `spans`.
fn slowest(mut spans: Vec<(&str, f64)>) -> String {
    spans.sort_by(|a, b| b.1.total_cmp(&a.1));
    spans
        .iter()
        .take(3)
        .map(|(name, ms)| format!("{name} ({ms}ms)"))
        .collect::<Vec<_>>()
        .join(", ")
}

impl Assertion for TraceCheck {
    fn describe(&self) -> String {
        let pattern = match &self.rule {
            Rule::Count { pattern, .. }
            | Rule::Duration { pattern, .. }
            | Rule::Errors { pattern, .. } => &pattern.text,
        };
        described(
            false,
            &self.rule.type_name().replace('-', "_"),
            &format!("{pattern:?}"),
        )
    }

    fn evaluate(&self, _output: &Subject<'_>) -> Grade {
        let Some(spans) = &self.spans else {
            return Grade::error(format!(
                "No trace data available for {} assertion",
                self.rule.type_name()
            ));
        };
        let (pass, reason) = match &self.rule {
            Rule::Count { pattern, min, max } => count(spans, pattern, *min, *max),
            Rule::Duration {
                pattern,
                max,
                percentile,
            } => duration(spans, pattern, *max, *percentile),
            Rule::Errors {
                pattern,
                max_count,
                max_percentage,
            } => errors(spans, pattern, *max_count, *max_percentage),
        };
        verdict(pass, if pass { 1.0 } else { 0.0 }, reason)
    }
}

fn count(
    spans: &[TraceSpan],
    pattern: &Pattern,
    min: Option<f64>,
    max: Option<f64>,
) -> (bool, String) {
    let matching: Vec<&TraceSpan> = spans.iter().filter(|s| pattern.matches(&s.name)).collect();
    let n = matching.len() as f64;
    let p = &pattern.text;
    let (pass, mut reason) = match (min, max) {
        (Some(min), _) if n < min => (
            false,
            format!("Found {n} spans matching pattern \"{p}\", expected at least {min}"),
        ),
        (_, Some(max)) if n > max => (
            false,
            format!("Found {n} spans matching pattern \"{p}\", expected at most {max}"),
        ),
        _ => {
            let expected = match (min, max) {
                (Some(min), Some(max)) => format!(" (expected {min}-{max})"),
                (Some(min), None) => format!(" (expected at least {min})"),
                (None, Some(max)) => format!(" (expected at most {max})"),
                (None, None) => String::new(),
            };
            (
                true,
                format!("Found {n} spans matching pattern \"{p}\"{expected}"),
            )
        }
    };
    if !matching.is_empty() {
        let mut names: Vec<&str> = Vec::new();
        for span in &matching {
            if !names.contains(&span.name.as_str()) {
                names.push(&span.name);
            }
        }
        reason.push_str(&format!(". Matched spans: {}", names.join(", ")));
    }
    (pass, reason)
}

fn duration(
    spans: &[TraceSpan],
    pattern: &Pattern,
    max: f64,
    percentile: Option<f64>,
) -> (bool, String) {
    let timed: Vec<(&str, f64)> = spans
        .iter()
        .filter(|s| pattern.matches(&s.name))
        .filter_map(|s| Some((s.name.as_str(), s.duration()?)))
        .collect();
    let p = &pattern.text;
    if timed.is_empty() {
        return (
            true,
            format!("No spans found matching pattern \"{p}\" with complete timing data"),
        );
    }
    match percentile {
        None => {
            let slow: Vec<(&str, f64)> = timed.iter().copied().filter(|(_, d)| *d > max).collect();
            if slow.is_empty() {
                let longest = timed
                    .iter()
                    .map(|(_, d)| *d)
                    .fold(f64::NEG_INFINITY, f64::max);
                (
                    true,
                    format!(
                        "All {} spans matching pattern \"{p}\" completed within {max}ms (max: {longest}ms)",
                        timed.len()
                    ),
                )
            } else {
                (
                    false,
                    format!(
                        "{} span(s) exceed duration threshold {max}ms. Slowest: {}",
                        slow.len(),
                        slowest(slow)
                    ),
                )
            }
        }
        Some(percentile) => {
            let durations: Vec<f64> = timed.iter().map(|(_, d)| *d).collect();
            let value = percentile_of(&durations, percentile);
            if value > max {
                let slow = timed.iter().copied().filter(|(_, d)| *d >= value).collect();
                (
                    false,
                    format!(
                        "{percentile}th percentile duration ({value}ms) exceeds threshold {max}ms. Slowest spans: {}",
                        slowest(slow)
                    ),
                )
            } else {
                (
                    true,
                    format!(
                        "{percentile}th percentile duration ({value}ms) is within threshold {max}ms"
                    ),
                )
            }
        }
    }
}

fn errors(
    spans: &[TraceSpan],
    pattern: &Pattern,
    max_count: Option<f64>,
    max_percentage: Option<f64>,
) -> (bool, String) {
    let max_count = match (max_count, max_percentage) {
        (None, None) => Some(0.0),
        (count, _) => count,
    };
    let p = &pattern.text;
    let matching: Vec<&TraceSpan> = spans.iter().filter(|s| pattern.matches(&s.name)).collect();
    if matching.is_empty() {
        return (true, format!("No spans found matching pattern \"{p}\""));
    }
    let failed: Vec<&&TraceSpan> = matching.iter().filter(|s| is_error_span(s)).collect();
    let n = failed.len();
    let share = n as f64 / matching.len() as f64 * 100.0;
    if let Some(limit) = max_count
        && n as f64 > limit
    {
        let details: Vec<String> = failed
            .iter()
            .take(3)
            .map(|s| match (&s.status_message, s.status_code) {
                (Some(message), _) if !message.is_empty() => format!("{} ({message})", s.name),
                (None, Some(code)) if code != 0 => format!("{} (status: {code})", s.name),
                _ => s.name.clone(),
            })
            .collect();
        let mut reason = format!(
            "Found {n} error spans, expected at most {limit}. Errors: {}",
            details.join(", ")
        );
        if n > 3 {
            reason.push_str(&format!(" and {} more", n - 3));
        }
        return (false, reason);
    }
    if let Some(limit) = max_percentage
        && share > limit
    {
        return (
            false,
            format!(
                "Error rate {share:.1}% exceeds threshold {limit}% ({n} errors out of {} spans)",
                matching.len()
            ),
        );
    }
    if n == 0 {
        return (
            true,
            format!(
                "No errors found in {} spans matching pattern \"{p}\"",
                matching.len()
            ),
        );
    }
    let mut reason = format!(
        "Found {n} error(s) in {} spans ({share:.1}%)",
        matching.len()
    );
    if let Some(limit) = max_count {
        reason.push_str(&format!(", within threshold of {limit}"));
    }
    if let Some(limit) = max_percentage {
        reason.push_str(&format!(", within threshold of {limit}%"));
    }
    (true, reason)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::base::assertion::AssertionResult;

    fn span(name: &str, start: f64, end: Option<f64>) -> TraceSpan {
        TraceSpan {
            start_ms: Some(start),
            end_ms: end,
            ..TraceSpan::new(name)
        }
    }

    fn run(rule: Rule, spans: Option<Vec<TraceSpan>>) -> AssertionResult {
        AssertionResult::evaluate(
            &TraceCheck { rule, spans },
            &Subject::Text("test output".into()),
        )
    }

    fn count_rule(pattern: &str, min: Option<f64>, max: Option<f64>) -> Rule {
        Rule::Count {
            pattern: Pattern::new(pattern),
            min,
            max,
        }
    }

    fn five_spans() -> Vec<TraceSpan> {
        vec![
            span("llm.completion", 1000.0, Some(1500.0)),
            span("llm.chat", 1600.0, Some(2000.0)),
            span("database.query", 2100.0, Some(2200.0)),
            span("retrieval.search", 2300.0, Some(2400.0)),
            span("api.external_call", 2500.0, Some(2600.0)),
        ]
    }

    // promptfoo's traceSpanCount.test.ts.
    #[test]
    fn span_count_vectors() {
        let s = Some(five_spans());
        let r = run(count_rule("*llm*", None, Some(3.0)), s.clone());
        assert!(r.passed && r.score == 1.0);
        assert_eq!(
            r.reason,
            "Found 2 spans matching pattern \"*llm*\" (expected at most 3). Matched spans: llm.completion, llm.chat"
        );
        let r = run(count_rule("*llm*", None, Some(1.0)), s.clone());
        assert!(!r.passed && r.score == 0.0);
        assert_eq!(
            r.reason,
            "Found 2 spans matching pattern \"*llm*\", expected at most 1. Matched spans: llm.completion, llm.chat"
        );
        let r = run(count_rule("*retrieval*", Some(1.0), None), s.clone());
        assert_eq!(
            r.reason,
            "Found 1 spans matching pattern \"*retrieval*\" (expected at least 1). Matched spans: retrieval.search"
        );
        let r = run(count_rule("*retrieval*", Some(2.0), None), s.clone());
        assert!(!r.passed);
        assert_eq!(
            r.reason,
            "Found 1 spans matching pattern \"*retrieval*\", expected at least 2. Matched spans: retrieval.search"
        );
        let r = run(count_rule("*", Some(3.0), Some(10.0)), s.clone());
        assert_eq!(
            r.reason,
            "Found 5 spans matching pattern \"*\" (expected 3-10). Matched spans: llm.completion, llm.chat, database.query, retrieval.search, api.external_call"
        );
        let r = run(count_rule("llm.c?at", None, Some(1.0)), s.clone());
        assert_eq!(
            r.reason,
            "Found 1 spans matching pattern \"llm.c?at\" (expected at most 1). Matched spans: llm.chat"
        );
        let r = run(count_rule("*LLM*", None, Some(5.0)), s);
        assert!(r.passed && r.reason.contains("Found 2 spans"));
        let r = run(count_rule("*", Some(1.0), None), None);
        assert_eq!(
            r.error.as_deref(),
            Some("No trace data available for trace-span-count assertion")
        );
        let r = run(count_rule("*", None, Some(0.0)), Some(vec![]));
        assert!(r.passed);
        assert_eq!(
            r.reason,
            "Found 0 spans matching pattern \"*\" (expected at most 0)"
        );
    }

    fn duration_rule(pattern: &str, max: f64, percentile: Option<f64>) -> Rule {
        Rule::Duration {
            pattern: Pattern::new(pattern),
            max,
            percentile,
        }
    }

    // promptfoo's traceSpanDuration.test.ts.
    #[test]
    fn span_duration_vectors() {
        let timed = Some(vec![
            span("llm.completion", 1000.0, Some(1500.0)),
            span("llm.chat", 1600.0, Some(2800.0)),
            span("database.query", 2900.0, Some(2950.0)),
            span("api.external", 3000.0, Some(6000.0)),
            span("cache.lookup", 6100.0, Some(6105.0)),
        ]);
        let fast = Some(vec![
            span("fast.op1", 0.0, Some(100.0)),
            span("fast.op2", 100.0, Some(500.0)),
            span("fast.op3", 500.0, Some(1000.0)),
        ]);
        let r = run(duration_rule("*", 1500.0, None), fast);
        assert!(r.passed);
        assert_eq!(
            r.reason,
            "All 3 spans matching pattern \"*\" completed within 1500ms (max: 500ms)"
        );
        let r = run(duration_rule("*", 1000.0, None), timed.clone());
        assert!(!r.passed);
        assert_eq!(
            r.reason,
            "2 span(s) exceed duration threshold 1000ms. Slowest: api.external (3000ms), llm.chat (1200ms)"
        );
        let r = run(duration_rule("*llm*", 1000.0, None), timed.clone());
        assert_eq!(
            r.reason,
            "1 span(s) exceed duration threshold 1000ms. Slowest: llm.chat (1200ms)"
        );
        let r = run(duration_rule("*", 2000.0, Some(90.0)), timed.clone());
        assert!(!r.passed);
        assert_eq!(
            r.reason,
            "90th percentile duration (3000ms) exceeds threshold 2000ms. Slowest spans: api.external (3000ms)"
        );
        let r = run(duration_rule("*", 1500.0, Some(50.0)), timed.clone());
        assert!(r.passed);
        assert_eq!(
            r.reason,
            "50th percentile duration (500ms) is within threshold 1500ms"
        );
        let r = run(
            duration_rule("*", 1000.0, None),
            Some(vec![
                span("complete.op", 0.0, Some(500.0)),
                span("incomplete.op", 600.0, None),
            ]),
        );
        assert_eq!(
            r.reason,
            "All 1 spans matching pattern \"*\" completed within 1000ms (max: 500ms)"
        );
        let r = run(duration_rule("*", 1000.0, None), Some(vec![]));
        assert!(r.passed);
        assert_eq!(
            r.reason,
            "No spans found matching pattern \"*\" with complete timing data"
        );
        assert!(run(duration_rule("*", 1000.0, None), None).error.is_some());
        let r = run(duration_rule("*", 100.0, None), timed);
        assert_eq!(
            r.reason,
            "3 span(s) exceed duration threshold 100ms. Slowest: api.external (3000ms), llm.chat (1200ms), llm.completion (500ms)"
        );
        let r = run(
            duration_rule("*", 1000.0, Some(95.0)),
            Some(vec![span("single.op", 0.0, Some(750.0))]),
        );
        assert_eq!(
            r.reason,
            "95th percentile duration (750ms) is within threshold 1000ms"
        );
    }

    fn error_rule(pattern: &str, max_count: Option<f64>, max_percentage: Option<f64>) -> Rule {
        Rule::Errors {
            pattern: Pattern::new(pattern),
            max_count,
            max_percentage,
        }
    }

    fn with_status(name: &str, code: Option<i64>, message: Option<&str>) -> TraceSpan {
        TraceSpan {
            status_code: code,
            status_message: message.map(str::to_string),
            ..TraceSpan::new(name)
        }
    }

    fn with_attributes(name: &str, attributes: Value) -> TraceSpan {
        TraceSpan {
            attributes: attributes.as_object().cloned().unwrap_or_default(),
            ..TraceSpan::new(name)
        }
    }

    fn spans_with_errors() -> Vec<TraceSpan> {
        vec![
            with_status("http.request", Some(200), None),
            with_status("api.call", Some(500), Some("Internal Server Error")),
            with_attributes(
                "database.query",
                json!({"error": true, "error.message": "Connection timeout"}),
            ),
            with_attributes("cache.get", json!({"http.status_code": 404})),
            with_attributes("service.process", json!({"otel.status_code": "ERROR"})),
            with_status("llm.completion", Some(200), None),
        ]
    }

    // promptfoo's traceErrorSpans.test.ts (the cases 0.123.1's handler has: no
    // `requirePresence`, and `not-` is refused at load time).
    #[test]
    fn error_span_vectors() {
        let r = run(
            error_rule("*", Some(0.0), None),
            Some(vec![
                with_status("op1", Some(200), None),
                with_status("op2", Some(201), None),
            ]),
        );
        assert!(r.passed);
        assert_eq!(
            r.reason,
            "No errors found in 2 spans matching pattern \"*\""
        );
        let all = Some(spans_with_errors());
        let r = run(error_rule("*", Some(2.0), None), all.clone());
        assert!(!r.passed);
        assert_eq!(
            r.reason,
            "Found 4 error spans, expected at most 2. Errors: api.call (Internal Server Error), database.query, cache.get and 1 more"
        );
        let r = run(
            error_rule("*", Some(0.0), None),
            Some(vec![
                with_status("api.call", Some(500), None),
                with_status("api.call", Some(403), None),
            ]),
        );
        assert_eq!(
            r.reason,
            "Found 2 error spans, expected at most 0. Errors: api.call (status: 500), api.call (status: 403)"
        );
        let r = run(
            error_rule("*", Some(0.0), None),
            Some(vec![with_status(
                "tool.lookup",
                Some(2),
                Some("Tool failed"),
            )]),
        );
        assert_eq!(
            r.reason,
            "Found 1 error spans, expected at most 0. Errors: tool.lookup (Tool failed)"
        );
        let r = run(
            error_rule("*", Some(0.0), None),
            Some(vec![
                with_attributes("op1", json!({"error": true})),
                with_attributes(
                    "op2",
                    json!({"exception": {"type": "RuntimeError", "message": "Failed"}}),
                ),
            ]),
        );
        assert_eq!(
            r.reason,
            "Found 2 error spans, expected at most 0. Errors: op1, op2"
        );
        let r = run(error_rule("*", None, Some(50.0)), all.clone());
        assert_eq!(
            r.reason,
            "Error rate 66.7% exceeds threshold 50% (4 errors out of 6 spans)"
        );
        let r = run(error_rule("*", None, Some(70.0)), all.clone());
        assert!(r.passed);
        assert_eq!(
            r.reason,
            "Found 4 error(s) in 6 spans (66.7%), within threshold of 70%"
        );
        let r = run(error_rule("*api*", Some(0.0), None), all.clone());
        assert_eq!(
            r.reason,
            "Found 1 error spans, expected at most 0. Errors: api.call (Internal Server Error)"
        );
        let r = run(error_rule("*", Some(1.0), None), all.clone());
        assert!(
            r.reason
                .starts_with("Found 4 error spans, expected at most 1.")
        );
        let r = run(
            error_rule("*", Some(0.0), None),
            Some(vec![
                with_status("op1", None, Some("Operation failed due to timeout")),
                with_status("op2", None, Some("Exception: NullPointerException")),
            ]),
        );
        assert_eq!(
            r.reason,
            "Found 2 error spans, expected at most 0. Errors: op1 (Operation failed due to timeout), op2 (Exception: NullPointerException)"
        );
        assert_eq!(
            run(error_rule("*", Some(0.0), None), None).error.as_deref(),
            Some("No trace data available for trace-error-spans assertion")
        );
        let r = run(error_rule("*", Some(0.0), None), Some(vec![]));
        assert!(r.passed);
        assert_eq!(r.reason, "No spans found matching pattern \"*\"");
        // No limit given: at most 0.
        let r = run(error_rule("*", None, None), all.clone());
        assert!(
            r.reason
                .starts_with("Found 4 error spans, expected at most 0.")
        );
        let r = run(error_rule("*", Some(5.0), Some(50.0)), all);
        assert_eq!(
            r.reason,
            "Error rate 66.7% exceeds threshold 50% (4 errors out of 6 spans)"
        );
    }

    #[test]
    fn spans_are_read_from_their_event_form() {
        let data = json!({
            "name": "tool.lookup", "start_unix_nano": 1_000_000_000u64, "end_unix_nano": 1_250_000_000u64,
            "status": {"code": "error", "message": "boom"}, "attributes": {"k": 1}
        });
        let span = TraceSpan::from_event_data(&data).unwrap();
        assert_eq!(span.duration(), Some(250.0));
        assert_eq!(span.status_code, Some(2));
        assert!(is_error_span(&span));
        assert_eq!(span.attributes["k"], 1);
    }
}
