//! The types that read what the run produced beyond its output — the provider's response
//! (`finish-reason`, `perplexity`, `perplexity-score`, `guardrails`, the function-call
//! validators, `tool-call-f1`) and its trace (`trace-span-count`, `trace-span-duration`,
//! `trace-error-spans`) — or ask a service to grade it (`webhook`, `classifier`, `moderation`,
//! `pi`): each item's `value`, `threshold` and `provider` read and checked when it is loaded,
//! and its matcher built from the [`SpecContext`] for each evaluation.
//!
//! Each matcher reaches promptfoo's verdict and score itself, `not-` included. Where promptfoo
//! 0.123.1's handler ignores `not-` (the function-call validators, `pi`, the trace types), the
//! `not-` form is refused rather than graded as the plain type.

use std::borrow::Cow;
use std::collections::BTreeSet;

use serde_json::Value;

use crate::base::assertion::{Assertion, Grade, Subject};

use crate::checks::expect::response::finish_reason::FinishReason;
#[cfg(feature = "json-schema")]
use crate::checks::expect::response::function_call::{self, FunctionCall};
use crate::checks::expect::response::guardrails::Guardrails;
use crate::checks::expect::response::perplexity::{self, Perplexity};
use crate::checks::expect::response::skill_used::{self, SkillUsed};
use crate::checks::expect::response::tool_call_f1::ToolCallF1;
use crate::checks::expect::trace_spans::{Pattern, Rule, TraceCheck};
use crate::checks::expect::type_names::{self as types, Builtin};
use crate::checks::expect::{BoxedAssertion, IntoBoxed};
use crate::checks::spec::values::js_string;
use crate::checks::spec::{AssertSpec, ItemProblem, ProviderResponse, SpecContext};

#[cfg(feature = "providers")]
use crate::checks::expect::service::{self, Env, ProviderSpec};

/// A prepared item of one of these types.
pub(crate) enum Fact {
    FinishReason {
        expected: String,
        inverse: bool,
    },
    SkillUsed {
        expected: skill_used::Expected,
        inverse: bool,
    },
    #[cfg(feature = "json-schema")]
    FunctionCall(function_call::Kind),
    ToolCallF1 {
        expected: BTreeSet<String>,
        threshold: Option<f64>,
        inverse: bool,
    },
    Perplexity {
        form: perplexity::Form,
        threshold: Option<f64>,
        inverse: bool,
    },
    Guardrails {
        inverse: bool,
    },
    Trace(Rule),
    #[cfg(feature = "providers")]
    Webhook {
        url: String,
        inverse: bool,
    },
    #[cfg(feature = "providers")]
    Classifier {
        model: String,
        provider: ProviderSpec,
        label: Option<String>,
        threshold: f64,
        inverse: bool,
    },
    #[cfg(feature = "providers")]
    Moderation {
        model: String,
        provider: Option<ProviderSpec>,
        categories: Vec<String>,
        inverse: bool,
    },
    #[cfg(feature = "providers")]
    Pi {
        question: String,
        threshold: f64,
    },
}

fn invalid(message: impl Into<String>) -> ItemProblem {
    ItemProblem::invalid(message)
}

/// A number field of `value`, if present (`null` counts as absent).
fn number(value: &Value, key: &str, type_name: &str) -> Result<Option<f64>, ItemProblem> {
    match value.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(v) => v.as_f64().map(Some).ok_or_else(|| {
            invalid(format!(
                "`value.{key}` of `{type_name}` must be a number, got {v}"
            ))
        }),
    }
}

/// Reads and checks an item of one of these types.
pub(super) fn prepare(b: Builtin, spec: &AssertSpec) -> Result<Fact, ItemProblem> {
    let inverse = types::normalize(&spec.kind).starts_with("not-");
    let refuse_not = |name: &str| {
        if inverse {
            Err(invalid(format!(
                "`not-{name}` is not supported: promptfoo 0.123.1 ignores `not-` on `{name}` (it grades it as `{name}`), so niceeval refuses it rather than guess which you meant"
            )))
        } else {
            Ok(())
        }
    };
    let threshold = spec.threshold;
    Ok(match b {
        Builtin::FinishReason => match &spec.value {
            Some(Value::String(expected)) => Fact::FinishReason {
                expected: expected.clone(),
                inverse,
            },
            _ => {
                return Err(invalid(
                    "`finish-reason` needs a string `value`: the expected reason (stop, length, tool_calls, content_filter, ...)",
                ));
            }
        },
        Builtin::SkillUsed => Fact::SkillUsed {
            expected: skill_used::Expected::read(spec.value.as_ref(), inverse).map_err(invalid)?,
            inverse,
        },
        #[cfg(not(feature = "json-schema"))]
        Builtin::IsValidFunctionCall
        | Builtin::IsValidOpenAiFunctionCall
        | Builtin::IsValidOpenAiToolsCall => {
            return Err(invalid(format!(
                "the `{}` assertion type validates calls against JSON Schemas, which needs niceeval's `json-schema` feature; enable it in Cargo.toml (it is on by default)",
                types::normalize(&spec.kind).trim_start_matches("not-")
            )));
        }
        #[cfg(feature = "json-schema")]
        Builtin::IsValidFunctionCall => {
            refuse_not("is-valid-function-call")?;
            Fact::FunctionCall(function_call::Kind::FunctionCall)
        }
        #[cfg(feature = "json-schema")]
        Builtin::IsValidOpenAiFunctionCall => {
            refuse_not("is-valid-openai-function-call")?;
            Fact::FunctionCall(function_call::Kind::FunctionCall)
        }
        #[cfg(feature = "json-schema")]
        Builtin::IsValidOpenAiToolsCall => {
            refuse_not("is-valid-openai-tools-call")?;
            Fact::FunctionCall(function_call::Kind::ToolsCall)
        }
        Builtin::ToolCallF1 => Fact::ToolCallF1 {
            expected: expected_tools(spec)?,
            threshold,
            inverse,
        },
        Builtin::Perplexity => Fact::Perplexity {
            form: perplexity::Form::Perplexity,
            threshold,
            inverse,
        },
        Builtin::PerplexityScore => Fact::Perplexity {
            form: perplexity::Form::Score,
            threshold,
            inverse,
        },
        Builtin::Guardrails => Fact::Guardrails { inverse },
        Builtin::TraceSpanCount => {
            refuse_not("trace-span-count")?;
            let value = spec.value.clone().unwrap_or(Value::Null);
            let pattern = match value.get("pattern") {
                Some(Value::String(p)) if !p.is_empty() => p.clone(),
                _ => {
                    return Err(invalid(
                        "trace-span-count assertion must have a value object with pattern property",
                    ));
                }
            };
            Fact::Trace(Rule::Count {
                pattern: Pattern::new(&pattern),
                min: number(&value, "min", "trace-span-count")?,
                max: number(&value, "max", "trace-span-count")?,
            })
        }
        Builtin::TraceSpanDuration => {
            refuse_not("trace-span-duration")?;
            let value = spec.value.clone().unwrap_or(Value::Null);
            let Some(max) = value.get("max").and_then(Value::as_f64) else {
                return Err(invalid(
                    "trace-span-duration assertion must have a value object with max property",
                ));
            };
            let pattern = match value.get("pattern") {
                None | Some(Value::Null) => "*".to_string(),
                Some(Value::String(p)) => p.clone(),
                Some(other) => {
                    return Err(invalid(format!(
                        "`value.pattern` of `trace-span-duration` must be a string, got {other}"
                    )));
                }
            };
            let percentile = number(&value, "percentile", "trace-span-duration")?;
            if percentile.is_some_and(|p| !(0.0..=100.0).contains(&p)) {
                return Err(invalid(
                    "trace-span-duration assertion percentile must be a number between 0 and 100",
                ));
            }
            Fact::Trace(Rule::Duration {
                pattern: Pattern::new(&pattern),
                max,
                percentile,
            })
        }
        Builtin::TraceErrorSpans => {
            refuse_not("trace-error-spans")?;
            let (max_count, max_percentage, pattern) = match &spec.value {
                Some(Value::Number(n)) => (n.as_f64(), None, "*".to_string()),
                Some(object @ Value::Object(_)) => (
                    number(object, "max_count", "trace-error-spans")?,
                    number(object, "max_percentage", "trace-error-spans")?,
                    match object.get("pattern") {
                        Some(Value::String(p)) if !p.is_empty() => p.clone(),
                        _ => "*".to_string(),
                    },
                ),
                _ => (None, None, "*".to_string()),
            };
            Fact::Trace(Rule::Errors {
                pattern: Pattern::new(&pattern),
                max_count,
                max_percentage,
            })
        }
        #[cfg(feature = "providers")]
        Builtin::Webhook => match &spec.value {
            Some(Value::String(url)) if !url.trim().is_empty() => Fact::Webhook {
                url: url.clone(),
                inverse,
            },
            _ => return Err(invalid("`webhook` needs a `value`: the webhook's URL")),
        },
        #[cfg(feature = "providers")]
        Builtin::Classifier => {
            let label = match &spec.value {
                None | Some(Value::Null) => None,
                Some(Value::String(label)) => Some(label.clone()),
                Some(_) => {
                    return Err(invalid(
                        "\"classifier\" assertion type must have a string value or be undefined",
                    ));
                }
            };
            let provider = provider(spec, "classification")?.ok_or_else(|| {
                invalid("`classifier` needs a `provider`: huggingface:text-classification:<model>")
            })?;
            Fact::Classifier {
                model: service::classifier::model_of(&provider.id).map_err(invalid)?,
                provider,
                label,
                threshold: threshold.unwrap_or(service::classifier::DEFAULT_THRESHOLD),
                inverse,
            }
        }
        #[cfg(feature = "providers")]
        Builtin::Moderation => {
            let categories = match &spec.value {
                None | Some(Value::Null) => Vec::new(),
                Some(Value::Array(items)) if items.first().is_some_and(Value::is_string) => items
                    .iter()
                    .map(|v| v.as_str().map(str::to_string))
                    .collect::<Option<Vec<_>>>()
                    .ok_or_else(|| {
                        invalid("moderation assertion value must be a string array if set")
                    })?,
                Some(_) => {
                    return Err(invalid(
                        "moderation assertion value must be a string array if set",
                    ));
                }
            };
            let provider = provider(spec, "moderation")?;
            let model = match &provider {
                Some(p) => service::moderation::model_of(&p.id).map_err(invalid)?,
                None => service::moderation::DEFAULT_MODEL.to_string(),
            };
            Fact::Moderation {
                model,
                provider,
                categories,
                inverse,
            }
        }
        #[cfg(feature = "providers")]
        Builtin::Pi => {
            refuse_not("pi")?;
            match &spec.value {
                Some(Value::String(question)) => Fact::Pi {
                    question: question.clone(),
                    threshold: threshold.unwrap_or(service::pi::DEFAULT_THRESHOLD),
                },
                _ => return Err(invalid("\"pi\" assertion type must have a string value")),
            }
        }
        #[cfg(not(feature = "providers"))]
        Builtin::Webhook | Builtin::Classifier | Builtin::Moderation | Builtin::Pi => {
            return Err(invalid(format!(
                "the `{}` assertion type calls a service over HTTP, which needs niceeval's `providers` feature; enable it in Cargo.toml (it is on by default)",
                types::normalize(&spec.kind).trim_start_matches("not-")
            )));
        }
        other => {
            return Err(invalid(format!(
                "internal: {other:?} is not a run-facts type"
            )));
        }
    })
}

/// The item's `provider`, read for a grader of `kind`.
#[cfg(feature = "providers")]
fn provider(spec: &AssertSpec, kind: &str) -> Result<Option<ProviderSpec>, ItemProblem> {
    match spec.extra.get("provider") {
        None | Some(Value::Null) => Ok(None),
        Some(value) => ProviderSpec::read(value, kind).map(Some).map_err(invalid),
    }
}

/// The expected tools of `tool-call-f1`: a list, or a comma-separated string, of names.
fn expected_tools(spec: &AssertSpec) -> Result<BTreeSet<String>, ItemProblem> {
    let names: Vec<String> = match &spec.value {
        Some(Value::Array(items)) => items
            .iter()
            .map(|item| {
                js_string(item).ok_or_else(|| {
                    invalid(format!(
                        "every expected tool of `tool-call-f1` must be a name, got {item}"
                    ))
                })
            })
            .collect::<Result<_, _>>()?,
        Some(Value::String(list)) => list.split(',').map(str::to_string).collect(),
        _ => {
            return Err(invalid(
                "\"tool-call-f1\" assertion requires a value: array of tool names or comma-separated string",
            ));
        }
    };
    let names: BTreeSet<String> = names
        .iter()
        .map(|n| n.trim().to_string())
        .filter(|n| !n.is_empty())
        .collect();
    if names.is_empty() {
        return Err(invalid(
            "\"tool-call-f1\" assertion requires at least one expected tool name",
        ));
    }
    Ok(names)
}

/// The matcher of a transformed item: the transform's JSON text read back as data (a JSONPath
/// transform writes a selected object or list as its JSON text).
struct TransformedData(BoxedAssertion);

impl Assertion for TransformedData {
    fn describe(&self) -> String {
        self.0.describe()
    }

    fn evaluate(&self, value: &Subject<'_>) -> Grade {
        match value {
            Subject::Text(text) => match serde_json::from_str::<Value>(text) {
                Ok(data) if !data.is_string() => self.0.evaluate(&Subject::Json(Cow::Owned(data))),
                _ => self.0.evaluate(value),
            },
            other => self.0.evaluate(other),
        }
    }
}

impl Fact {
    /// The matcher for one evaluation, with what `context` knows of the run. An item with a
    /// `transform` grades what the transform made, never the provider's raw output.
    pub(super) fn instantiate(&self, context: &SpecContext, transformed: bool) -> BoxedAssertion {
        let mut response = context.response.clone();
        if transformed {
            response.output = None;
        }
        let matcher = self.matcher(context, &response);
        if transformed {
            TransformedData(matcher).boxed()
        } else {
            matcher
        }
    }

    fn matcher(&self, context: &SpecContext, response: &ProviderResponse) -> BoxedAssertion {
        match self {
            Fact::FinishReason { expected, inverse } => FinishReason {
                expected: expected.clone(),
                actual: response.finish_reason.clone(),
                inverse: *inverse,
            }
            .boxed(),
            Fact::SkillUsed { expected, inverse } => SkillUsed {
                expected: expected.clone(),
                calls: skill_used::calls_in(response.metadata.as_ref()),
                inverse: *inverse,
            }
            .boxed(),
            #[cfg(feature = "json-schema")]
            Fact::FunctionCall(kind) => FunctionCall {
                kind: *kind,
                output: response.output.clone(),
                provider_id: response.provider_id.clone(),
                provider_config: response.provider_config.clone(),
            }
            .boxed(),
            Fact::ToolCallF1 {
                expected,
                threshold,
                inverse,
            } => ToolCallF1 {
                expected: expected.clone(),
                threshold: *threshold,
                inverse: *inverse,
                output: response.output.clone(),
            }
            .boxed(),
            Fact::Perplexity {
                form,
                threshold,
                inverse,
            } => Perplexity {
                form: *form,
                logprobs: response.logprobs.clone(),
                threshold: *threshold,
                inverse: *inverse,
            }
            .boxed(),
            Fact::Guardrails { inverse } => Guardrails {
                guardrails: response.guardrails.clone(),
                metadata: response.metadata.clone(),
                inverse: *inverse,
            }
            .boxed(),
            Fact::Trace(rule) => TraceCheck {
                rule: rule.clone(),
                spans: context.trace_spans.clone(),
            }
            .boxed(),
            #[cfg(feature = "providers")]
            Fact::Webhook { url, inverse } => service::webhook::Webhook {
                url: url.clone(),
                prompt: context.prompt.clone(),
                vars: context
                    .vars
                    .iter()
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect(),
                inverse: *inverse,
                output: response.output.clone(),
                env: Env::process(),
                retries: 4,
            }
            .boxed(),
            #[cfg(feature = "providers")]
            Fact::Classifier {
                model,
                provider,
                label,
                threshold,
                inverse,
            } => service::classifier::Classifier {
                model: model.clone(),
                provider: provider.clone(),
                label: label.clone(),
                threshold: *threshold,
                inverse: *inverse,
                env: Env::process(),
                retries: 4,
            }
            .boxed(),
            #[cfg(feature = "providers")]
            Fact::Moderation {
                model,
                provider,
                categories,
                inverse,
            } => service::moderation::Moderation {
                model: model.clone(),
                provider: provider.clone(),
                categories: categories.clone(),
                prompt: context.prompt.clone(),
                inverse: *inverse,
                env: Env::process(),
            }
            .boxed(),
            #[cfg(feature = "providers")]
            Fact::Pi {
                question,
                threshold,
            } => service::pi::Pi {
                question: question.clone(),
                prompt: context.prompt.clone(),
                threshold: *threshold,
                env: Env::process(),
                url: service::pi::PI_URL.to_string(),
                retries: 4,
            }
            .boxed(),
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use crate::base::event::Event;
    use crate::checks::expect::type_names;
    use crate::checks::spec::{self, ProviderResponse, SpecContext, SpecOutcome};

    fn evaluate(items: serde_json::Value, output: &str, context: &SpecContext) -> SpecOutcome {
        let specs = spec::from_json(&items.to_string()).expect("items that read");
        spec::evaluate(&specs, output, context).expect("valid items")
    }

    fn load_error(item: serde_json::Value) -> String {
        match spec::from_json(&json!([item]).to_string()) {
            Err(e) => e.to_string(),
            Ok(specs) => spec::validate(&specs)
                .expect_err("an invalid item")
                .to_string(),
        }
    }

    fn with_response(response: ProviderResponse) -> SpecContext {
        SpecContext {
            response,
            prompt: Some("the prompt".into()),
            ..SpecContext::default()
        }
    }

    #[test]
    fn the_new_types_are_listed_in_the_error_message() {
        let names = type_names::canonical_names();
        for name in [
            "finish-reason",
            "is-valid-function-call",
            "is-valid-openai-function-call",
            "is-valid-openai-tools-call",
            "tool-call-f1",
            "perplexity",
            "perplexity-score",
            "guardrails",
            "webhook",
            "classifier",
            "moderation",
            "pi",
            "trace-span-count",
            "trace-span-duration",
            "trace-error-spans",
        ] {
            assert!(names.contains(&name), "{name} missing from {names:?}");
            assert!(type_names::is_builtin_type(&format!("not-{name}")));
        }
        let err = load_error(json!({"type": "finish-reasons", "value": "stop"}));
        assert!(err.contains("did you mean `finish-reason`?"), "{err}");
    }

    #[test]
    fn items_are_checked_when_loaded() {
        let cases = [
            (json!({"type": "finish-reason"}), "needs a string `value`"),
            (
                json!({"type": "finish-reason", "value": 1}),
                "needs a string `value`",
            ),
            (json!({"type": "tool-call-f1"}), "requires a value"),
            (
                json!({"type": "tool-call-f1", "value": " , , "}),
                "at least one expected tool name",
            ),
            (
                json!({"type": "tool-call-f1", "value": [" ", ""]}),
                "at least one expected tool name",
            ),
            (
                json!({"type": "not-trace-span-count", "value": {"pattern": "*"}}),
                "is not supported",
            ),
            (
                json!({"type": "trace-span-count", "value": {"max": 5}}),
                "must have a value object with pattern property",
            ),
            (
                json!({"type": "trace-span-count", "value": "invalid"}),
                "must have a value object with pattern property",
            ),
            (
                json!({"type": "trace-span-duration", "value": {"pattern": "*"}}),
                "must have a value object with max property",
            ),
            (
                json!({"type": "trace-span-duration", "value": {"max": 1, "percentile": 150}}),
                "between 0 and 100",
            ),
            (
                json!({"type": "trace-error-spans", "value": {"max_count": "two"}}),
                "must be a number",
            ),
        ];
        for (item, expected) in cases {
            let err = load_error(item.clone());
            assert!(err.contains(expected), "{item}: {err}");
        }
        #[cfg(feature = "json-schema")]
        for (item, expected) in [
            (
                json!({"type": "not-is-valid-openai-tools-call"}),
                "`not-is-valid-openai-tools-call` is not supported",
            ),
            (
                json!({"type": "not-is-valid-function-call"}),
                "promptfoo 0.123.1 ignores `not-`",
            ),
        ] {
            let err = load_error(item.clone());
            assert!(err.contains(expected), "{item}: {err}");
        }
    }

    #[cfg(feature = "providers")]
    #[test]
    fn service_items_are_checked_when_loaded() {
        let cases = [
            (json!({"type": "webhook"}), "the webhook's URL"),
            (
                json!({"type": "classifier", "value": "toxic"}),
                "needs a `provider`",
            ),
            (
                json!({"type": "classifier", "value": {"label": "safe"}, "provider": "hf:text-classification:m"}),
                "must have a string value or be undefined",
            ),
            (
                json!({"type": "classifier", "provider": "openai:gpt-4o"}),
                "is not a classification provider",
            ),
            (
                json!({"type": "moderation", "value": "violence"}),
                "must be a string array if set",
            ),
            (
                json!({"type": "moderation", "value": []}),
                "must be a string array if set",
            ),
            (
                json!({"type": "moderation", "provider": "azure:moderation"}),
                "not a moderation provider niceeval calls",
            ),
            (json!({"type": "pi"}), "must have a string value"),
            (json!({"type": "not-pi", "value": "q"}), "is not supported"),
        ];
        for (item, expected) in cases {
            let err = load_error(item.clone());
            assert!(err.contains(expected), "{item}: {err}");
        }
        let ok = [
            json!({"type": "classifier", "provider": {"id": "huggingface:text-classification:m", "config": {"apiKey": "k"}}}),
            json!({"type": "not-classifier", "value": "toxic", "provider": {"classification": "hf:text-classification:m"}, "threshold": 0.5}),
            json!({"type": "moderation", "value": ["violence"], "provider": "openai:moderation:omni-moderation-latest"}),
            json!({"type": "not-webhook", "value": "http://127.0.0.1:9/hook"}),
        ];
        for item in ok {
            let specs = spec::from_json(&json!([item]).to_string());
            assert!(specs.is_ok(), "{item}: {specs:?}");
        }
    }

    #[test]
    fn response_types_read_the_context() {
        let response = ProviderResponse {
            finish_reason: Some("end_turn".into()),
            logprobs: Some(vec![-0.1, -0.2]),
            guardrails: Some(json!({"flagged": false})),
            ..ProviderResponse::default()
        };
        let context = with_response(response);
        let outcome = evaluate(
            json!([
                {"type": "finish-reason", "value": "stop"},
                {"type": "not-finish-reason", "value": "length"},
                {"type": "perplexity", "threshold": 2},
                {"type": "perplexity-score", "threshold": 0.4},
                {"type": "guardrails"},
            ]),
            "Hello",
            &context,
        );
        assert!(outcome.pass, "{:#?}", outcome.results);
        let outcome = evaluate(
            json!([{"type": "finish-reason", "value": "length"}]),
            "Hello",
            &context,
        );
        assert!(!outcome.pass);
        assert_eq!(
            outcome.results[0].reason,
            r#"Expected finish reason "length" but got "stop""#
        );
        // Without log-probabilities, perplexity is an error; weight 0 does not pass an error.
        let outcome = evaluate(
            json!([{"type": "perplexity", "weight": 0}]),
            "x",
            &SpecContext::default(),
        );
        assert!(!outcome.pass);
        assert!(outcome.results[0].error.is_some());
        // weight 0 passes a failed verdict and keeps its score, as promptfoo does.
        let outcome = evaluate(
            json!([{"type": "finish-reason", "value": "length", "weight": 0}]),
            "x",
            &context,
        );
        assert!(outcome.pass);
        assert_eq!(outcome.results[0].score, 0.0);
    }

    #[test]
    fn tool_call_items_read_the_raw_output_and_the_config() {
        let response = ProviderResponse {
            output: Some(json!({"content": null, "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "get_weather", "arguments": "{\"city\": \"Paris\"}"}}
            ]})),
            provider_id: Some("openai:gpt-4o-mini".into()),
            provider_config: Some(json!({"tools": [{"type": "function", "function": {
                "name": "get_weather",
                "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
            }}]})),
            ..ProviderResponse::default()
        };
        let context = with_response(response);
        let outcome = evaluate(
            json!([
                {"type": "tool-call-f1", "value": "get_weather"},
                {"type": "tool-call-f1", "value": ["get_weather", "book_flight"], "threshold": 0.6},
                {"type": "not-tool-call-f1", "value": ["book_flight"]},
            ]),
            "the reply's text",
            &context,
        );
        assert!(outcome.pass, "{:#?}", outcome.results);
        assert!((outcome.results[1].score - 2.0 / 3.0).abs() < 1e-9);
        #[cfg(feature = "json-schema")]
        {
            let outcome = evaluate(
                json!([{"type": "is-valid-openai-tools-call"}]),
                "text",
                &context,
            );
            assert!(outcome.pass, "{:#?}", outcome.results);
            // A transform that makes data is read instead of the raw output.
            let outcome = evaluate(
                json!([{"type": "is-valid-openai-tools-call", "transform": "$.calls"}]),
                r#"{"calls": [{"type": "function", "function": {"name": "get_weather", "arguments": "{}"}}]}"#,
                &context,
            );
            assert!(!outcome.pass, "{:#?}", outcome.results);
            assert!(
                outcome.results[0].reason.contains("does not match schema"),
                "{}",
                outcome.results[0].reason
            );
        }
    }

    #[test]
    fn trace_items_read_the_spans_of_the_events() {
        let span = |name: &str, start: u64, end: u64, code: &str| Event::Custom {
            name: "otel.span".into(),
            data: json!({
                "trace_id": "00", "span_id": "01", "name": name,
                "start_unix_nano": start, "end_unix_nano": end,
                "status": {"code": code, "message": null}, "attributes": {}
            }),
        };
        let events = [
            span("llm.chat", 0, 1_200_000_000, "ok"),
            span("tool.lookup", 0, 50_000_000, "error"),
        ];
        let context = SpecContext::default().with_events(&events);
        let outcome = evaluate(
            json!([
                {"type": "trace-span-count", "value": {"pattern": "llm.*", "min": 1, "max": 1}},
                {"type": "trace-span-duration", "value": {"max": 2000}},
                {"type": "trace-error-spans", "value": {"pattern": "llm*"}},
            ]),
            "x",
            &context,
        );
        assert!(outcome.pass, "{:#?}", outcome.results);
        let outcome = evaluate(
            json!([{"type": "trace-error-spans"}, {"type": "trace-span-duration", "value": {"max": 1000}}]),
            "x",
            &context,
        );
        assert_eq!(
            outcome.results[0].reason,
            "Found 1 error spans, expected at most 0. Errors: tool.lookup (status: 2)"
        );
        assert_eq!(
            outcome.results[1].reason,
            "1 span(s) exceed duration threshold 1000ms. Slowest: llm.chat (1200ms)"
        );
        // No spans: no trace data.
        let outcome = evaluate(
            json!([{"type": "trace-span-count", "value": {"pattern": "*"}}]),
            "x",
            &SpecContext::default(),
        );
        assert_eq!(
            outcome.results[0].error.as_deref(),
            Some("No trace data available for trace-span-count assertion")
        );
    }

    #[cfg(feature = "providers")]
    #[test]
    fn a_webhook_item_sends_the_prompt_vars_and_output() {
        let (url, received) = crate::checks::expect::service::fake::serve(vec![(
            200,
            r#"{"pass": true, "score": 0.75}"#.into(),
        )]);
        let mut context = SpecContext::default().with_var("city", "Paris");
        context.prompt = Some("Weather in {{city}}?".into());
        let outcome = evaluate(
            json!([{"type": "webhook", "value": format!("{url}/grade")}]),
            "Sunny",
            &context,
        );
        assert!(outcome.pass, "{:#?}", outcome.results);
        assert_eq!(outcome.score, 0.75);
        let sent = received.lock().unwrap()[0].clone();
        assert_eq!(
            sent.body,
            json!({"output": "Sunny", "context": {"prompt": "Weather in {{city}}?", "vars": {"city": "Paris"}}})
        );
    }
}
