//! Spans to niceeval's events: tool calls and their results, token usage, each span kept as
//! `otel.span`. Reads the GenAI semantic conventions as they stand and their older names,
//! OpenInference, OpenLLMetry, the Vercel AI SDK, and Claude Code's log events, with their
//! traps: a call's tokens are counted once (usage on a span with a descendant carrying usage is
//! dropped; log records count only when no span carried usage), tool arguments come from where
//! they are real (`input.value` over an OpenInference schema), tool calls found only in a model
//! span's output messages (rig-core) count, a tool call the agent's adapter already
//! reported (same call id) is one event, and log records (Claude Code's) add tool calls and
//! usage only when no span carried them.

use std::collections::{HashMap, HashSet};

use serde_json::Value;

use super::span::{Span, Status, hex};
use crate::event::{ActionStatus, Event};

/// The events of one turn's spans, given the events the agent's adapter emitted itself
/// (`existing`: its tool calls and usage win over the trace's).
pub(crate) fn events(spans: Vec<Span>, existing: &[Event]) -> Vec<Event> {
    let adapter_ids: HashSet<&str> = existing
        .iter()
        .filter_map(|e| match e {
            Event::ActionCalled { call_id, .. } => Some(call_id.as_str()),
            _ => None,
        })
        .collect();
    let adapter_tools = !adapter_ids.is_empty();
    let adapter_usage = existing.iter().any(|e| matches!(e, Event::Usage { .. }));

    let with_usage: HashSet<[u8; 8]> = spans
        .iter()
        .filter(|s| !s.log && usage(s).is_some())
        .map(|s| s.span_id)
        .collect();
    let parents: HashMap<[u8; 8], Option<[u8; 8]>> =
        spans.iter().map(|s| (s.span_id, s.parent)).collect();
    // Spans with usage whose ancestor also carries usage: the ancestor's is dropped.
    let mut shadowed: HashSet<[u8; 8]> = HashSet::new();
    for id in &with_usage {
        let mut seen = 0;
        let mut at = parents.get(id).copied().flatten();
        while let Some(p) = at {
            if with_usage.contains(&p) {
                shadowed.insert(p);
            }
            seen += 1;
            if seen > spans.len() {
                break; // a cycle in bad input
            }
            at = parents.get(&p).copied().flatten();
        }
    }
    let span_usage = !with_usage.is_empty();
    // Claude Code logs each tool result besides its execute_tool span: a log's tool call
    // counts only when no span reported one.
    let span_tools = spans
        .iter()
        .any(|s| !s.log && (tool(s).is_some() || !message_tool_calls(s).is_empty()));

    let mut out = Vec::with_capacity(spans.len() * 2);
    let mut called: HashSet<String> = HashSet::new();
    for span in spans {
        // The span's own event first, then what it means; the span is moved into its event
        // afterwards (no copy of its attributes).
        let at = out.len();
        normalize_one(
            &span,
            &adapter_ids,
            adapter_tools,
            adapter_usage,
            span_usage,
            span_tools,
            &shadowed,
            &mut called,
            &mut out,
        );
        out.insert(at, span.into_event());
    }
    out
}

/// The events one span means (not its own `otel.span` event).
#[allow(clippy::too_many_arguments)]
fn normalize_one(
    span: &Span,
    adapter_ids: &HashSet<&str>,
    adapter_tools: bool,
    adapter_usage: bool,
    span_usage: bool,
    span_tools: bool,
    shadowed: &HashSet<[u8; 8]>,
    called: &mut HashSet<String>,
    out: &mut Vec<Event>,
) {
    {
        if span.log {
            log_events(
                span,
                adapter_tools || span_tools,
                adapter_usage || span_usage,
                out,
            );
            return;
        }
        if !adapter_usage
            && !shadowed.contains(&span.span_id)
            && let Some(event) = usage(span)
        {
            out.push(event);
        }
        for (id, name, input) in message_tool_calls(span) {
            if adapter_ids.contains(id.as_str()) || !called.insert(id.clone()) {
                continue;
            }
            out.push(Event::ActionCalled {
                call_id: id,
                name,
                input,
            });
        }
        if let Some(tool) = tool(span) {
            let real_id = tool.id.is_some();
            let id = tool
                .id
                .unwrap_or_else(|| format!("span-{}", hex(&span.span_id)));
            if adapter_ids.contains(id.as_str()) || (!real_id && adapter_tools) {
                return;
            }
            if called.insert(id.clone()) {
                out.push(Event::ActionCalled {
                    call_id: id.clone(),
                    name: tool.name,
                    input: tool.input,
                });
            }
            out.push(Event::ActionResult {
                call_id: id,
                output: tool.output,
                status: tool.status,
            });
        }
    }
}

/// The first attribute present among `keys`.
fn first<'a>(span: &'a Span, keys: &[&str]) -> Option<&'a Value> {
    keys.iter()
        .find_map(|k| span.attributes.get(*k).filter(|v| !v.is_null()))
}

fn first_u64(span: &Span, keys: &[&str]) -> Option<u64> {
    keys.iter().find_map(|k| span.u64(k))
}

/// A JSON text as the JSON it holds; any other value as is.
fn parsed(value: &Value) -> Value {
    match value {
        Value::String(s) => serde_json::from_str(s).unwrap_or_else(|_| value.clone()),
        other => other.clone(),
    }
}

fn operation(span: &Span) -> Option<&str> {
    span.str("gen_ai.operation.name")
}

/// The model that spent a span's tokens, as `provider/model` when the provider is known.
fn model(span: &Span) -> Option<String> {
    let model = first(
        span,
        &[
            "gen_ai.response.model",
            "gen_ai.request.model",
            "llm.model_name",
            "ai.response.model",
            "ai.model.id",
        ],
    )?
    .as_str()?;
    if model.contains('/') {
        return Some(model.to_string());
    }
    let provider = first(
        span,
        &[
            "gen_ai.provider.name",
            "gen_ai.system",
            "llm.provider",
            "llm.system",
            "ai.model.provider",
        ],
    )
    .and_then(Value::as_str)
    .map(|p| p.split('.').next().unwrap_or(p).to_ascii_lowercase());
    Some(match provider {
        Some(p) => format!("{p}/{model}"),
        None => model.to_string(),
    })
}

fn usage(span: &Span) -> Option<Event> {
    let input = first_u64(
        span,
        &[
            "gen_ai.usage.input_tokens",
            "gen_ai.usage.prompt_tokens",
            "llm.token_count.prompt",
            "ai.usage.inputTokens",
            "ai.usage.promptTokens",
        ],
    );
    let output = first_u64(
        span,
        &[
            "gen_ai.usage.output_tokens",
            "gen_ai.usage.completion_tokens",
            "llm.token_count.completion",
            "ai.usage.outputTokens",
            "ai.usage.completionTokens",
        ],
    );
    if input.is_none() && output.is_none() {
        return None;
    }
    Some(Event::Usage {
        input_tokens: input.unwrap_or(0),
        output_tokens: output.unwrap_or(0),
        cache_read_tokens: first_u64(
            span,
            &[
                "gen_ai.usage.cache_read.input_tokens",
                "gen_ai.usage.cache_read_input_tokens",
                "llm.token_count.prompt_details.cache_read",
                "ai.usage.cachedInputTokens",
            ],
        )
        .unwrap_or(0),
        cost_usd: None,
        model: model(span),
    })
}

struct Tool {
    id: Option<String>,
    name: String,
    input: Value,
    output: Value,
    status: ActionStatus,
}

fn tool(span: &Span) -> Option<Tool> {
    let openinference = span.str("openinference.span.kind");
    let is_tool = operation(span) == Some("execute_tool")
        || openinference.is_some_and(|k| k.eq_ignore_ascii_case("tool"))
        || span
            .str("traceloop.span.kind")
            .is_some_and(|k| k.eq_ignore_ascii_case("tool"))
        || span.name == "ai.toolCall"
        || span.name.starts_with("execute_tool ");
    if !is_tool {
        return None;
    }
    let name = first(
        span,
        &[
            "gen_ai.tool.name",
            "tool.name",
            "ai.toolCall.name",
            "traceloop.entity.name",
        ],
    )
    .and_then(Value::as_str)
    .map(str::to_string)
    .or_else(|| span.name.strip_prefix("execute_tool ").map(str::to_string))
    .unwrap_or_else(|| span.name.clone());
    let id = first(span, &["gen_ai.tool.call.id", "ai.toolCall.id"]).and_then(|v| match v {
        Value::String(s) if !s.is_empty() => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    });
    // OpenInference puts the tool's schema in gen_ai.tool.call.arguments in one version: its
    // real arguments are in input.value.
    let input = first(
        span,
        &[
            "input.value",
            "gen_ai.tool.call.arguments",
            "ai.toolCall.args",
            "traceloop.entity.input",
        ],
    )
    .map(parsed)
    .unwrap_or(Value::Null);
    let output = first(
        span,
        &[
            "gen_ai.tool.call.result",
            "output.value",
            "ai.toolCall.result",
            "traceloop.entity.output",
        ],
    )
    .map(parsed)
    .unwrap_or(Value::Null);
    let failed = span.status == Status::Error || span.attributes.contains_key("error.type");
    Some(Tool {
        id,
        name,
        input,
        output,
        status: if failed {
            ActionStatus::Failed
        } else {
            ActionStatus::Completed
        },
    })
}

/// Tool calls a model span reports in its output (call id, name, arguments): the GenAI
/// `gen_ai.output.messages` parts, the older flattened `gen_ai.completion.N.tool_calls.M.*`,
/// OpenInference's `llm.output_messages.N.message.tool_calls.M.tool_call.*`.
fn message_tool_calls(span: &Span) -> Vec<(String, String, Value)> {
    let mut calls = Vec::new();
    if let Some(messages) = span.attributes.get("gen_ai.output.messages").map(parsed)
        && let Value::Array(messages) = messages
    {
        for message in &messages {
            for part in message
                .get("parts")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                let kind = part.get("type").and_then(Value::as_str).unwrap_or("");
                if !matches!(
                    kind,
                    "tool_call" | "tool-call" | "tool_use" | "function_call"
                ) {
                    continue;
                }
                let Some(name) = part.get("name").and_then(Value::as_str) else {
                    continue;
                };
                let id = part
                    .get("id")
                    .and_then(Value::as_str)
                    .map(str::to_string)
                    .unwrap_or_else(|| format!("span-{}-{}", hex(&span.span_id), calls.len()));
                let args = part.get("arguments").map(parsed).unwrap_or(Value::Null);
                calls.push((id, name.to_string(), args));
            }
        }
    }
    for (prefix, id_key, name_key, args_key) in [
        ("gen_ai.completion.", "id", "name", "arguments"),
        (
            "llm.output_messages.",
            "tool_call.id",
            "tool_call.function.name",
            "tool_call.function.arguments",
        ),
    ] {
        if !span.attributes.keys().any(|k| k.starts_with(prefix)) {
            continue;
        }
        for m in 0..16 {
            let base = if prefix == "gen_ai.completion." {
                format!("{prefix}{m}.tool_calls.")
            } else {
                format!("{prefix}{m}.message.tool_calls.")
            };
            for n in 0..64 {
                let key = |k: &str| format!("{base}{n}.{k}");
                let Some(name) = span.str(&key(name_key)) else {
                    break;
                };
                let id = span
                    .str(&key(id_key))
                    .map(str::to_string)
                    .unwrap_or_else(|| format!("span-{}-{}", hex(&span.span_id), calls.len()));
                let args = span
                    .attributes
                    .get(&key(args_key))
                    .map(parsed)
                    .unwrap_or(Value::Null);
                calls.push((id, name.to_string(), args));
            }
        }
    }
    calls
}

/// Claude Code's log events: `claude_code.api_request` (usage) and `claude_code.tool_result`.
fn log_events(span: &Span, adapter_tools: bool, usage_known: bool, out: &mut Vec<Event>) {
    let name = span.name.strip_prefix("claude_code.").unwrap_or(&span.name);
    match name {
        "api_request" if !usage_known => {
            let model = span.str("model").map(|m| format!("anthropic/{m}"));
            out.push(Event::Usage {
                input_tokens: span.u64("input_tokens").unwrap_or(0),
                output_tokens: span.u64("output_tokens").unwrap_or(0),
                cache_read_tokens: span.u64("cache_read_tokens").unwrap_or(0),
                cost_usd: span
                    .attributes
                    .get("cost_usd")
                    .and_then(|v| v.as_f64().or_else(|| v.as_str()?.parse().ok())),
                model,
            });
        }
        "tool_result" if !adapter_tools => {
            let Some(tool) = span.str("tool_name") else {
                return;
            };
            let id = format!("log-{}", hex(&span.span_id));
            let success = match span.attributes.get("success") {
                Some(Value::Bool(b)) => *b,
                Some(Value::String(s)) => s != "false",
                _ => true,
            };
            out.push(Event::ActionCalled {
                call_id: id.clone(),
                name: tool.to_string(),
                input: span
                    .attributes
                    .get("tool_parameters")
                    .map(parsed)
                    .unwrap_or(Value::Null),
            });
            out.push(Event::ActionResult {
                call_id: id,
                output: Value::Null,
                status: if success {
                    ActionStatus::Completed
                } else {
                    ActionStatus::Failed
                },
            });
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{Map, json};

    use super::super::span::Kind;
    use super::*;

    fn span(id: u8, parent: Option<u8>, name: &str, attributes: Value) -> Span {
        let Value::Object(attributes) = attributes else {
            panic!("attributes are an object")
        };
        Span {
            trace_id: [9; 16],
            span_id: [id; 8],
            parent: parent.map(|p| [p; 8]),
            name: name.into(),
            kind: Kind::Internal,
            start: id as u64,
            end: id as u64 + 1,
            status: Status::Unset,
            status_message: None,
            service: None,
            attributes,
            log: false,
        }
    }

    fn normalized(spans: &[Span]) -> Vec<Event> {
        events(spans.to_vec(), &[])
            .into_iter()
            .filter(|e| !matches!(e, Event::Custom { .. }))
            .collect()
    }

    #[test]
    fn current_genai_chat_and_tool_spans() {
        let spans = [
            span(
                1,
                None,
                "chat gpt-4o",
                json!({"gen_ai.operation.name": "chat", "gen_ai.provider.name": "openai",
                       "gen_ai.request.model": "gpt-4o", "gen_ai.usage.input_tokens": 100,
                       "gen_ai.usage.output_tokens": 7, "gen_ai.usage.cache_read.input_tokens": 50}),
            ),
            span(
                2,
                None,
                "execute_tool lookup",
                json!({"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "lookup",
                       "gen_ai.tool.call.id": "c1", "gen_ai.tool.call.arguments": "{\"id\":1}",
                       "gen_ai.tool.call.result": "\"paid\""}),
            ),
        ];
        assert_eq!(
            normalized(&spans),
            [
                Event::Usage {
                    input_tokens: 100,
                    output_tokens: 7,
                    cache_read_tokens: 50,
                    cost_usd: None,
                    model: Some("openai/gpt-4o".into()),
                },
                Event::ActionCalled {
                    call_id: "c1".into(),
                    name: "lookup".into(),
                    input: json!({"id": 1}),
                },
                Event::ActionResult {
                    call_id: "c1".into(),
                    output: json!("paid"),
                    status: ActionStatus::Completed,
                },
            ]
        );
        let all = events(spans.to_vec(), &[]);
        assert!(matches!(&all[0], Event::Custom { name, .. } if name == "otel.span"));
    }

    #[test]
    fn usage_is_counted_once_when_a_descendant_repeats_it() {
        let spans = [
            span(
                1,
                None,
                "agent",
                json!({"gen_ai.usage.input_tokens": 30, "gen_ai.usage.output_tokens": 3}),
            ),
            span(
                2,
                Some(1),
                "chat",
                json!({"gen_ai.usage.prompt_tokens": 30, "gen_ai.usage.completion_tokens": 3, "gen_ai.system": "anthropic", "gen_ai.request.model": "claude"}),
            ),
            span(
                3,
                Some(2),
                "anthropic.messages",
                json!({"llm.token_count.prompt": 30, "llm.token_count.completion": 3}),
            ),
        ];
        let usage: Vec<_> = normalized(&spans);
        assert_eq!(usage.len(), 1, "{usage:?}");
        assert!(matches!(
            &usage[0],
            Event::Usage {
                input_tokens: 30,
                output_tokens: 3,
                ..
            }
        ));
    }

    #[test]
    fn older_names_openinference_and_vercel_tool_calls() {
        let spans = [
            span(
                1,
                None,
                "search",
                json!({"openinference.span.kind": "TOOL", "tool.name": "search",
                "gen_ai.tool.call.arguments": "{\"type\":\"object\",\"properties\":{}}",
                "input.value": "{\"q\":\"rust\"}", "output.value": "found"}),
            ),
            span(
                2,
                None,
                "ai.toolCall",
                json!({"ai.toolCall.name": "weather", "ai.toolCall.id": "v1",
                "ai.toolCall.args": "{\"city\":\"Paris\"}", "ai.toolCall.result": "{\"t\":20}"}),
            ),
            span(
                3,
                None,
                "ai.generateText.doGenerate",
                json!({"ai.usage.inputTokens": 11, "ai.usage.outputTokens": 2, "ai.model.id": "gpt-4o-mini", "ai.model.provider": "openai.chat"}),
            ),
            span(
                4,
                None,
                "openai.chat",
                json!({"llm.request.type": "chat",
                "gen_ai.completion.0.tool_calls.0.id": "x1", "gen_ai.completion.0.tool_calls.0.name": "lookup",
                "gen_ai.completion.0.tool_calls.0.arguments": "{\"id\":2}"}),
            ),
        ];
        let events = normalized(&spans);
        assert!(
            matches!(&events[0], Event::ActionCalled { name, input, .. } if name == "search" && input == &json!({"q": "rust"})),
            "{events:?}"
        );
        assert!(matches!(&events[1], Event::ActionResult { output, .. } if output == "found"));
        assert!(
            matches!(&events[2], Event::ActionCalled { call_id, input, .. } if call_id == "v1" && input == &json!({"city": "Paris"}))
        );
        assert!(
            matches!(&events[4], Event::Usage { input_tokens: 11, model: Some(m), .. } if m == "openai/gpt-4o-mini")
        );
        assert!(
            matches!(&events[5], Event::ActionCalled { call_id, name, .. } if call_id == "x1" && name == "lookup")
        );
    }

    #[test]
    fn rig_tool_calls_in_output_messages_and_adapter_duplicates_are_one_event() {
        let messages = json!([{"role": "assistant", "parts": [
            {"type": "tool_call", "id": "r1", "name": "add", "arguments": {"a": 1}}]}]);
        let spans = [
            span(
                1,
                None,
                "chat",
                json!({"gen_ai.operation.name": "chat",
                "gen_ai.output.messages": messages.to_string()}),
            ),
            span(
                2,
                None,
                "execute_tool add",
                json!({"gen_ai.operation.name": "execute_tool",
                "gen_ai.tool.name": "add", "gen_ai.tool.call.id": "r1", "gen_ai.tool.call.result": "2"}),
            ),
            span(
                3,
                None,
                "execute_tool mul",
                json!({"gen_ai.operation.name": "execute_tool",
                "gen_ai.tool.name": "mul", "gen_ai.tool.call.id": "known"}),
            ),
        ];
        let adapter = [Event::ActionCalled {
            call_id: "known".into(),
            name: "mul".into(),
            input: Value::Null,
        }];
        let events: Vec<_> = events(spans.to_vec(), &adapter)
            .into_iter()
            .filter(|e| !matches!(e, Event::Custom { .. }))
            .collect();
        assert_eq!(
            events,
            [
                Event::ActionCalled {
                    call_id: "r1".into(),
                    name: "add".into(),
                    input: json!({"a": 1})
                },
                Event::ActionResult {
                    call_id: "r1".into(),
                    output: json!(2),
                    status: ActionStatus::Completed
                },
            ]
        );
    }

    #[test]
    fn a_failed_tool_span_and_missing_arguments_read_what_can_be_read() {
        let mut failed = span(
            1,
            None,
            "execute_tool rm",
            json!({"gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": 42, "error.type": "PermissionError"}),
        );
        failed.status = Status::Error;
        let events = normalized(&[failed]);
        assert!(
            matches!(&events[0], Event::ActionCalled { name, input: Value::Null, .. } if name == "rm")
        );
        assert!(matches!(
            &events[1],
            Event::ActionResult {
                status: ActionStatus::Failed,
                ..
            }
        ));
    }

    #[test]
    fn claude_code_log_events_feed_usage_and_tools_unless_known() {
        let mut api = span(
            1,
            None,
            "claude_code.api_request",
            json!({"model": "claude-sonnet-4-5",
            "input_tokens": "120", "output_tokens": "9", "cost_usd": "0.01"}),
        );
        api.log = true;
        let mut tool = span(
            2,
            None,
            "claude_code.tool_result",
            json!({"tool_name": "Bash", "success": "false"}),
        );
        tool.log = true;
        let events = normalized(&[api.clone(), tool.clone()]);
        assert!(matches!(
            &events[0],
            Event::Usage {
                input_tokens: 120,
                output_tokens: 9,
                cost_usd: Some(_),
                ..
            }
        ));
        assert!(matches!(
            &events[2],
            Event::ActionResult {
                status: ActionStatus::Failed,
                ..
            }
        ));
        let adapter = [
            Event::Usage {
                input_tokens: 1,
                output_tokens: 1,
                cache_read_tokens: 0,
                cost_usd: None,
                model: None,
            },
            Event::ActionCalled {
                call_id: "t".into(),
                name: "Bash".into(),
                input: Value::Null,
            },
        ];
        assert!(events_of(&[api, tool], &adapter).is_empty());
    }

    fn events_of(spans: &[Span], adapter: &[Event]) -> Vec<Event> {
        events(spans.to_vec(), adapter)
            .into_iter()
            .filter(|e| !matches!(e, Event::Custom { .. }))
            .collect()
    }

    #[test]
    fn wrongly_typed_attributes_are_kept_raw() {
        let s = span(
            1,
            None,
            "chat",
            json!({"gen_ai.usage.input_tokens": "many", "other": {"x": 1}}),
        );
        assert!(normalized(std::slice::from_ref(&s)).is_empty());
        let all = events(vec![s], &[]);
        let Event::Custom { data, .. } = &all[0] else {
            panic!()
        };
        assert_eq!(data["attributes"]["gen_ai.usage.input_tokens"], "many");
        let _ = Map::<String, Value>::new();
    }
}
