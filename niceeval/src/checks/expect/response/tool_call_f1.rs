//! `tool-call-f1`: the F1 score of the tools the model called against the tools expected, as
//! sets of names (order and repeats do not count): precision is the share of called tools that
//! were expected, recall the share of expected tools that were called. It passes at or over
//! `threshold` (default 1); the `not-` form flips the verdict and keeps the score, as in
//! promptfoo.
//!
//! Calls are read in every shape promptfoo reads: OpenAI's `tool_calls` (`function.name`, or
//! `name`), a Responses `function_call` item, Anthropic `tool_use` blocks, Google
//! `functionCall`s and Live `toolCall.functionCalls`, plain `[{name}]` lists, and any of these
//! as JSON text — whole, or as blocks on their own lines in prose (see `json_blocks`).

use std::collections::BTreeSet;

use serde_json::Value;

use super::json_blocks::{BlocksError, json_blocks};
use super::{described, provider_output, verdict};
use crate::base::assertion::{Assertion, Grade, Subject};

/// promptfoo's default threshold of `tool-call-f1`.
pub(crate) const DEFAULT_THRESHOLD: f64 = 1.0;

/// The matcher of a `tool-call-f1` item, for one evaluation.
pub(crate) struct ToolCallF1 {
    /// The expected tool names (non-empty, trimmed).
    pub(crate) expected: BTreeSet<String>,
    pub(crate) threshold: Option<f64>,
    pub(crate) inverse: bool,
    /// The provider's non-text output, read instead of a text subject.
    pub(crate) output: Option<Value>,
}

fn name_of(value: Option<&Value>) -> Option<String> {
    value.and_then(Value::as_str).map(str::to_string)
}

/// The object at `key` when it is one (arrays included, as JavaScript's `typeof` says).
fn object_at<'a>(value: &'a Value, key: &str) -> Option<&'a Value> {
    value.get(key).filter(|v| v.is_object() || v.is_array())
}

/// The names of the tools called in `output`.
pub(crate) fn tool_names(output: &Value) -> Result<BTreeSet<String>, BlocksError> {
    let mut names = BTreeSet::new();
    match output {
        Value::String(text) => match serde_json::from_str::<Value>(text) {
            Ok(parsed) => return tool_names(&parsed),
            Err(_) => {
                for block in json_blocks(text)? {
                    names.extend(tool_names(&block)?);
                }
            }
        },
        Value::Object(map) => {
            if let Some(Value::Array(calls)) = map.get("tool_calls") {
                for call in calls.iter().filter(|c| c.is_object() || c.is_array()) {
                    if let Some(function) = object_at(call, "function") {
                        names.extend(name_of(function.get("name")));
                    }
                    names.extend(name_of(call.get("name")));
                }
                return Ok(names);
            }
            let kind = map.get("type").and_then(Value::as_str);
            if matches!(kind, Some("tool_use" | "function_call"))
                && let Some(name) = name_of(map.get("name"))
            {
                names.insert(name);
                return Ok(names);
            }
            if let Some(call) = object_at(output, "functionCall") {
                names.extend(name_of(call.get("name")));
                return Ok(names);
            }
            if let Some(live) = object_at(output, "toolCall") {
                if let Some(Value::Array(calls)) = live.get("functionCalls") {
                    names.extend(calls.iter().filter_map(|c| name_of(c.get("name"))));
                }
                return Ok(names);
            }
        }
        Value::Array(items) => {
            for block in items.iter().filter(|b| b.is_object() || b.is_array()) {
                if block.get("type").and_then(Value::as_str) == Some("tool_use")
                    && let Some(name) = name_of(block.get("name"))
                {
                    names.insert(name);
                } else if let Some(call) = object_at(block, "functionCall") {
                    names.extend(name_of(call.get("name")));
                } else if let Some(function) = object_at(block, "function") {
                    names.extend(name_of(function.get("name")));
                } else {
                    names.extend(name_of(block.get("name")));
                }
            }
        }
        _ => {}
    }
    Ok(names)
}

impl Assertion for ToolCallF1 {
    fn describe(&self) -> String {
        let list = self.expected.iter().cloned().collect::<Vec<_>>().join(", ");
        described(self.inverse, "tool_call_f1", &list)
    }

    fn evaluate(&self, subject: &Subject<'_>) -> Grade {
        let actual = match tool_names(&provider_output(subject, self.output.as_ref())) {
            Ok(names) => names,
            // Output too malformed to read within the bounds fails either way.
            Err(e) => return verdict(false, 0.0, e.to_string()),
        };
        let hits = self.expected.intersection(&actual).count() as f64;
        let precision = if actual.is_empty() {
            0.0
        } else {
            hits / actual.len() as f64
        };
        let recall = hits / self.expected.len() as f64;
        let f1 = if precision + recall > 0.0 {
            2.0 * precision * recall / (precision + recall)
        } else {
            0.0
        };
        let threshold = self.threshold.unwrap_or(DEFAULT_THRESHOLD);
        let pass = (f1 >= threshold) != self.inverse;
        let expected = self.expected.iter().cloned().collect::<Vec<_>>().join(", ");
        let called = if actual.is_empty() {
            "(none)".to_string()
        } else {
            actual.iter().cloned().collect::<Vec<_>>().join(", ")
        };
        let reason = if pass {
            format!(
                "Tool Call F1: {f1:.3} (precision={precision:.3}, recall={recall:.3}). Expected: [{expected}], Called: [{called}]"
            )
        } else {
            format!(
                "Tool Call F1 score {f1:.3} is {} threshold {threshold}. Expected: [{expected}], Called: [{called}]. Precision={precision:.3}, Recall={recall:.3}",
                if self.inverse { "above" } else { "below" }
            )
        };
        verdict(pass, f1, reason)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::base::assertion::AssertionResult;

    fn f1(
        output: Value,
        expected: &[&str],
        threshold: Option<f64>,
        inverse: bool,
    ) -> AssertionResult {
        let a = ToolCallF1 {
            expected: expected.iter().map(|s| s.to_string()).collect(),
            threshold,
            inverse,
            output: None,
        };
        let subject = match &output {
            Value::String(s) => Subject::Text(s.clone().into()),
            other => Subject::Json(std::borrow::Cow::Owned(other.clone())),
        };
        AssertionResult::evaluate(&a, &subject)
    }

    fn calls(names: &[&str]) -> Value {
        json!({"tool_calls": names.iter().map(|n| json!({"function": {"name": n, "arguments": "{}"}})).collect::<Vec<_>>()})
    }

    fn score(output: Value, expected: &[&str]) -> f64 {
        f1(output, expected, None, false).score
    }

    // promptfoo's toolCallF1.test.ts, "F1 score calculation".
    #[test]
    fn f1_calculation() {
        let r = f1(
            calls(&["get_weather", "book_flight"]),
            &["get_weather", "book_flight"],
            None,
            false,
        );
        assert!(r.passed && r.score == 1.0);
        assert!(r.reason.contains("precision=1.000") && r.reason.contains("recall=1.000"));
        let r = f1(
            calls(&["search_web"]),
            &["get_weather", "book_flight"],
            None,
            false,
        );
        assert!(!r.passed && r.score == 0.0);
        assert!(r.reason.contains("Precision=0.000") && r.reason.contains("Recall=0.000"));
        let r = f1(
            calls(&["get_weather", "book_flight", "extra_tool"]),
            &["get_weather", "book_flight"],
            None,
            false,
        );
        assert!((r.score - 0.8).abs() < 1e-3);
        assert!(r.reason.contains("Precision=0.667") && r.reason.contains("Recall=1.000"));
        let r = f1(
            calls(&["get_weather"]),
            &["get_weather", "book_flight"],
            None,
            false,
        );
        assert!((r.score - 0.667).abs() < 1e-3);
        assert!(r.reason.contains("Precision=1.000") && r.reason.contains("Recall=0.500"));
        assert_eq!(score(json!({"tool_calls": []}), &["get_weather"]), 0.0);
        let r = f1(Value::Null, &["get_weather"], None, false);
        assert!(!r.passed && r.score == 0.0);
    }

    // toolCallF1.test.ts, "output format handling".
    #[test]
    fn output_formats() {
        let both = &["get_weather", "book_flight"];
        let one = &["get_weather"];
        assert_eq!(
            score(
                json!({"tool_calls": [{"type": "function", "function": {"name": "get_weather", "arguments": "{\"city\":\"NYC\"}"}}]}),
                one
            ),
            1.0
        );
        let responses = json!({"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "get_weather", "arguments": "{\"city\":\"NYC\"}"});
        assert_eq!(score(json!(responses.to_string()), one), 1.0);
        assert_eq!(score(responses.clone(), one), 1.0);
        assert_eq!(score(responses, &["book_flight"]), 0.0);
        let newline = "Thinking about the request.\n{\"type\":\"function_call\",\"id\":\"fc_1\",\"call_id\":\"call_1\",\"name\":\"get_weather\",\"arguments\":\"{\\\"city\\\":\\\"NYC\\\"}\"}\n{\"type\":\"function_call\",\"id\":\"fc_2\",\"call_id\":\"call_2\",\"name\":\"book_flight\",\"arguments\":\"{\\\"destination\\\":\\\"LA\\\"}\"}";
        assert_eq!(score(json!(newline), both), 1.0);
        assert_eq!(
            score(
                json!(json!({"type": "response_metadata", "name": "get_weather"}).to_string()),
                one
            ),
            0.0
        );
        assert_eq!(
            score(
                json!([{"function": {"name": "get_weather", "arguments": "{}"}}, {"function": {"name": "book_flight", "arguments": "{}"}}]),
                both
            ),
            1.0
        );
        assert_eq!(
            score(
                json!([{"name": "get_weather"}, {"name": "book_flight"}]),
                both
            ),
            1.0
        );
        assert_eq!(
            score(
                json!([{"function": {"name": "get_weather", "arguments": "{}"}}, {"name": "book_flight"}]),
                both
            ),
            1.0
        );
        assert_eq!(
            score(
                json!({"type": "tool_use", "id": "toolu_01ABC123", "name": "get_weather", "input": {"city": "NYC"}}),
                one
            ),
            1.0
        );
        assert_eq!(
            score(
                json!([
                    {"type": "text", "text": "Let me check the weather for you."},
                    {"type": "tool_use", "id": "toolu_01ABC123", "name": "get_weather", "input": {"city": "NYC"}},
                    {"type": "tool_use", "id": "toolu_01DEF456", "name": "book_flight", "input": {"dest": "LA"}}
                ]),
                both
            ),
            1.0
        );
        assert_eq!(
            score(
                json!({"functionCall": {"name": "get_weather", "args": {"city": "NYC"}}}),
                one
            ),
            1.0
        );
        assert_eq!(
            score(
                json!([{"functionCall": {"name": "get_weather", "args": {}}}, {"functionCall": {"name": "book_flight", "args": {}}}]),
                both
            ),
            1.0
        );
        assert_eq!(
            score(
                json!({"toolCall": {"functionCalls": [{"name": "get_weather", "args": {"city": "NYC"}}, {"name": "book_flight"}]}}),
                both
            ),
            1.0
        );
        assert_eq!(score(json!(calls(&["get_weather"]).to_string()), one), 1.0);
        assert_eq!(
            score(
                json!(
                    json!([{"type": "tool_use", "id": "t", "name": "get_weather", "input": {}}])
                        .to_string()
                ),
                one
            ),
            1.0
        );
        assert_eq!(
            score(
                json!(json!({"functionCall": {"name": "get_weather", "args": {}}}).to_string()),
                one
            ),
            1.0
        );
        assert_eq!(
            score(
                json!("This is just a text response with no tool calls"),
                one
            ),
            0.0
        );
        let anthropic = "Let me check the weather for you.\n\n{\"type\":\"tool_use\",\"id\":\"toolu_01ABC123\",\"name\":\"get_weather\",\"input\":{\"city\":\"NYC\"}}\n\n{\"type\":\"tool_use\",\"id\":\"toolu_01DEF456\",\"name\":\"book_flight\",\"input\":{\"dest\":\"LA\"}}";
        assert_eq!(score(json!(anthropic), both), 1.0);
        let pretty = [
            "Let me check that. Braces in prose {not JSON} are ignored.".to_string(),
            serde_json::to_string_pretty(&json!({"type": "tool_use", "name": "get_weather", "input": {"query": "a } b"}})).unwrap(),
            "And then book the flight.".to_string(),
            serde_json::to_string_pretty(&json!([{"type": "tool_use", "name": "book_flight", "input": {"destination": "LA"}}])).unwrap(),
        ]
        .join("\n\n");
        assert_eq!(score(json!(pretty), both), 1.0);
        assert_eq!(
            score(
                json!("Here is a partial call: {\"type\":\"tool_use\",\"name\":\"get_weather\""),
                one
            ),
            0.0
        );
        let three = [
            "I'll help you with that.\n\n{\"type\":\"tool_use\",\"id\":\"toolu_123\",\"name\":\"search_web\",\"input\":{\"query\":\"test\"}}",
        ];
        assert_eq!(score(json!(three[0]), &["search_web"]), 1.0);
        let partial = json!([
            {"type": "tool_use", "name": "get_weather", "input": {}},
            {"type": "tool_use", "name": "book_flight", "input": {}},
            {"type": "tool_use", "name": "search_web", "input": {}}
        ]);
        assert!((score(partial, both) - 0.8).abs() < 1e-3);
    }

    // toolCallF1.test.ts: JSON in prose and fences is an example, not a call.
    #[test]
    fn examples_are_not_calls() {
        for output in [
            "The tool payload would be {\"type\":\"tool_use\",\"name\":\"delete_account\"}",
            "{\"type\":\"tool_use\",\"name\":\"delete_account\"} is an example payload.",
            "{\n\"input\":\n{\"type\":\"tool_use\",\"name\":\"delete_account\"}\n} is an example payload.",
        ] {
            assert_eq!(score(json!(output), &["delete_account"]), 0.0, "{output}");
        }
        let weather = serde_json::to_string_pretty(
            &json!({"type": "tool_use", "name": "get_weather", "input": {"city": "NYC"}}),
        )
        .unwrap();
        for prefix in ["{", "[", "{\"broken\":", "{]", "{\"broken\":\"unfinished\\"] {
            let r = f1(
                json!(format!("{prefix}\n{weather}")),
                &["get_weather"],
                None,
                false,
            );
            assert!(r.passed && r.score == 1.0, "prefix {prefix}: {}", r.reason);
        }
        let nested = serde_json::to_string_pretty(&json!({
            "type": "tool_use", "name": "get_weather",
            "input": [{"type": "tool_use", "name": "delete_account", "query": "a \\\" } [ b"}]
        }))
        .unwrap();
        let unindented: String = nested
            .lines()
            .map(|l| l.trim_start())
            .collect::<Vec<_>>()
            .join("\n");
        assert_eq!(
            score(
                json!(format!("Calling the weather tool.\n{unindented}")),
                &["get_weather"]
            ),
            1.0
        );
        let r = f1(
            json!("{\nnot_json\n{\"type\":\"tool_use\",\"name\":\"get_weather\"}\n}"),
            &["get_weather"],
            None,
            false,
        );
        assert!(r.passed && r.score == 1.0);
        for (opening, closing) in [
            ("```json", "```"),
            ("~~~json", "~~~"),
            ("```json", " ```"),
            ("   ```json", "   ````"),
            ("   ```json", "```"),
            ("````json", "```\n~~~\n````"),
            ("```json", "~~~\n```"),
            ("```json", "```json\n```"),
        ] {
            let output = [
                "Example:",
                opening,
                "{\"type\":\"tool_use\",\"name\":\"delete_account\"}",
                closing,
                "{\"type\":\"tool_use\",\"name\":\"get_weather\"}",
            ]
            .join("\r\n");
            let r = f1(json!(output), &["get_weather"], None, false);
            assert!(
                r.passed && r.score == 1.0,
                "{opening} / {closing}: {}",
                r.reason
            );
        }
        for example in [
            "```json {\"example\":true} ```",
            "```info`invalid",
            "- ```info`invalid",
        ] {
            let output = [
                "{\"type\":\"tool_use\",\"name\":\"get_weather\"}",
                example,
                "{\"type\":\"tool_use\",\"name\":\"delete_account\"}",
            ]
            .join("\n");
            let r = f1(json!(output), &["get_weather"], None, false);
            assert!(
                !r.passed && (r.score - 2.0 / 3.0).abs() < 1e-9,
                "{example}: {}",
                r.reason
            );
            assert!(r.reason.contains("Called: [delete_account, get_weather]"));
        }
        for (opening, closing) in [("Example: {\n\"payload\":", "}"), ("Example: [", "]")] {
            let output = [
                "{\"type\":\"tool_use\",\"name\":\"get_weather\"}",
                opening,
                "{\"type\":\"tool_use\",\"name\":\"delete_account\"}",
                closing,
            ]
            .join("\n");
            let r = f1(json!(output), &["get_weather"], None, false);
            assert!(r.passed && r.score == 1.0, "{opening}: {}", r.reason);
        }
        let r = f1(
            json!("Example:\n```json\n{\"type\":\"tool_use\",\"name\":\"delete_account\"}"),
            &["delete_account"],
            None,
            false,
        );
        assert!(!r.passed && r.score == 0.0, "an unclosed fence");
        let output = [
            "```json",
            "    ```",
            "{\"type\":\"tool_use\",\"name\":\"delete_account\"}",
            "```",
        ]
        .join("\n");
        assert_eq!(
            score(json!(output), &["delete_account"]),
            0.0,
            "an indented marker does not close a top-level fence"
        );
        for indent in ["    ", "      ", "\t"] {
            let output = [
                "  - Example:".to_string(),
                format!("{indent}```json"),
                format!("{indent}{{\"type\":\"tool_use\",\"name\":\"delete_account\"}}"),
                format!("{indent}```"),
                "{\"type\":\"tool_use\",\"name\":\"get_weather\"}".to_string(),
            ]
            .join("\n");
            let r = f1(json!(output), &["get_weather"], None, false);
            assert!(
                r.passed && r.score == 1.0,
                "indent {indent:?}: {}",
                r.reason
            );
        }
        for (opening, marker, indent, closing) in [
            ("```json", "    ```", "", "```"),
            (
                "  - Example:\n    ```json",
                "        ```",
                "    ",
                "    ```",
            ),
        ] {
            let output = [
                opening.to_string(),
                marker.to_string(),
                format!("{indent}{{\"type\":\"tool_use\",\"name\":\"delete_account\"}}"),
                closing.to_string(),
                "{\"type\":\"tool_use\",\"name\":\"get_weather\"}".to_string(),
            ]
            .join("\n");
            let r = f1(json!(output), &["get_weather"], None, false);
            assert!(r.passed && r.score == 1.0, "{opening}: {}", r.reason);
        }
        for list in ["- ", "12. "] {
            let indent = " ".repeat(list.len());
            let output = [
                format!("{list}```json"),
                format!("{indent}{{\"type\":\"tool_use\",\"name\":\"delete_account\"}}"),
                format!("{indent}```"),
                "{\"type\":\"tool_use\",\"name\":\"get_weather\"}".to_string(),
            ]
            .join("\n");
            let r = f1(json!(output), &["get_weather"], None, false);
            assert!(r.passed && r.score == 1.0, "list {list:?}: {}", r.reason);
        }
        for (opening, closing) in [("Actual call: {", "}"), ("Actual call: [\ninvalid", "]")] {
            let output = [
                opening,
                "{\"type\":\"tool_use\",\"name\":\"delete_account\"}",
                closing,
                "{\"type\":\"tool_use\",\"name\":\"get_weather\"}",
            ]
            .join("\n");
            let r = f1(json!(output), &["get_weather"], None, false);
            assert!(
                !r.passed && (r.score - 2.0 / 3.0).abs() < 1e-9,
                "{opening}: {}",
                r.reason
            );
            assert!(r.reason.contains("Called: [delete_account, get_weather]"));
        }
        let long = [
            "{".to_string(),
            "x".repeat(2000),
            "{\"type\":\"tool_use\",\"name\":\"delete_account\"}".into(),
            "}".into(),
            "{\"type\":\"tool_use\",\"name\":\"get_weather\"}".into(),
        ]
        .join("\n");
        let r = f1(json!(long), &["get_weather"], None, false);
        assert!(!r.passed && (r.score - 2.0 / 3.0).abs() < 1e-9);
    }

    // toolCallF1.test.ts: the parsing work is bounded, and running out fails either way.
    #[test]
    fn work_is_bounded() {
        let nested = format!("{}{}", "{\n".repeat(1000), "}\n".repeat(1000));
        let r = f1(json!(nested), &["get_weather"], None, false);
        assert!(!r.passed && r.score == 0.0);
        assert!(r.reason.contains("work limit"), "{}", r.reason);
        let output = format!("{{\"type\":\"tool_use\",\"name\":\"get_weather\"}}\n{nested}");
        for inverse in [false, true] {
            let r = f1(json!(output), &["get_weather"], Some(0.0), inverse);
            assert!(!r.passed && r.score == 0.0 && r.reason.contains("work limit"));
            let r = f1(
                json!(json!(output).to_string()),
                &["get_weather"],
                Some(0.0),
                inverse,
            );
            assert!(!r.passed && r.reason.contains("work limit"));
        }
        for delimiter in ["{", "[", "}", "]"] {
            let output = format!(
                "{{\"type\":\"tool_use\",\"name\":\"get_weather\"}}\n{}",
                delimiter.repeat(200_000)
            );
            for inverse in [false, true] {
                let r = f1(json!(output), &["get_weather"], Some(0.0), inverse);
                assert!(
                    !r.passed && r.score == 0.0 && r.reason.contains("delimiter limit"),
                    "{delimiter}: {}",
                    r.reason
                );
            }
        }
        let r = f1(
            json!(format!(
                "{}{{\"type\":\"tool_use\",\"name\":\"get_weather\"}}",
                "{\n".repeat(10_000)
            )),
            &["get_weather"],
            None,
            false,
        );
        assert!(r.passed && r.score == 1.0);
        // Many blocks: an early and a late call are both found.
        for prefix in ["", "{\n"] {
            let output = format!(
                "{prefix}{{\"type\":\"tool_use\",\"name\":\"book_flight\"}}\n{}{{\"type\":\"tool_use\",\"name\":\"get_weather\"}}",
                "{}\n".repeat(100_000)
            );
            let r = f1(json!(output), &["book_flight", "get_weather"], None, false);
            assert!(r.passed && r.score == 1.0, "{}", r.reason);
        }
    }

    // toolCallF1.test.ts: thresholds, `not-`, sets.
    #[test]
    fn threshold_inverse_and_sets() {
        let two = calls(&["get_weather", "extra_tool"]);
        assert!(
            !f1(two.clone(), &["get_weather"], None, false).passed,
            "default threshold 1"
        );
        assert!(f1(two, &["get_weather"], Some(0.5), false).passed);
        let r = f1(calls(&["get_weather"]), &["get_weather"], None, true);
        assert!(!r.passed && r.score == 1.0);
        let r = f1(calls(&["wrong_tool"]), &["get_weather"], None, true);
        assert!(r.passed && r.score == 0.0);
        let twice = json!({"tool_calls": [
            {"function": {"name": "get_weather", "arguments": "{\"city\":\"NYC\"}"}},
            {"function": {"name": "get_weather", "arguments": "{\"city\":\"LA\"}"}}
        ]});
        assert_eq!(score(twice, &["get_weather"]), 1.0);
    }

    #[test]
    fn the_raw_output_is_read_for_a_text_subject() {
        let a = ToolCallF1 {
            expected: ["get_weather".to_string()].into(),
            threshold: None,
            inverse: false,
            output: Some(calls(&["get_weather"])),
        };
        assert!(AssertionResult::evaluate(&a, &Subject::Text("I will check.".into())).passed);
    }
}
