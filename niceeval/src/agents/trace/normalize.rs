//! Spans to niceeval's events: tool calls and their results, token usage, each span kept as
//! `otel.span` (log records as `otel.log`). Reads the GenAI semantic conventions as they stand
//! and their older names, OpenInference, OpenLLMetry, the Vercel AI SDK, and Claude Code's log
//! events, with their traps: a call's tokens are counted once (usage on a span with a
//! descendant carrying usage is dropped; log records count only when no span carried usage), a
//! tool call named by a model span and run by a tool span is one call (`calls.rs` pairs them),
//! a tool call the agent's adapter already reported (same call id) is one event, and log
//! records (Claude Code's) add tool calls and usage only when no span carried them.

use std::collections::{HashMap, HashSet};

use serde_json::Value;

use super::calls::{self, parsed};
use super::span::{Span, hex};
use crate::base::event::{ActionStatus, Event};

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
    let plan = calls::plan(&spans, &adapter_ids);
    // Claude Code logs each tool result besides its execute_tool span: a log's tool call
    // counts only when no span reported one.
    let span_tools = plan.any();
    let calls::Plan {
        named,
        tools,
        mut inputs,
    } = plan;
    let context = Context {
        adapter_ids: &adapter_ids,
        adapter_tools,
        adapter_usage,
        span_usage,
        span_tools,
        shadowed: &shadowed,
    };

    let mut out = Vec::with_capacity(spans.len() * 2);
    let mut called: HashSet<String> = HashSet::new();
    for ((span, named), tool) in spans.into_iter().zip(named).zip(tools) {
        // The span's own event first, then what it means; the span is moved into its event
        // afterwards (no copy of its attributes).
        let at = out.len();
        normalize_one(
            &span,
            named,
            tool,
            &context,
            &mut inputs,
            &mut called,
            &mut out,
        );
        out.insert(at, span.into_event());
    }
    out
}

/// What every span of a turn is normalized against.
struct Context<'a> {
    /// Call ids the agent's adapter reported.
    adapter_ids: &'a HashSet<&'a str>,
    /// Whether the adapter reported tool calls.
    adapter_tools: bool,
    /// Whether the adapter reported usage.
    adapter_usage: bool,
    /// Whether a span (not a log record) carries usage.
    span_usage: bool,
    /// Whether a span reports a tool call.
    span_tools: bool,
    /// Spans whose usage a descendant repeats.
    shadowed: &'a HashSet<[u8; 8]>,
}

/// The events one span means (not its own `otel.span` event): its usage, the calls it names
/// (`named`), its tool run (`tool`, with the call id it belongs to).
fn normalize_one(
    span: &Span,
    named: Vec<calls::Call>,
    tool: Option<(calls::Tool, Option<String>)>,
    cx: &Context<'_>,
    inputs: &mut HashMap<String, Value>,
    called: &mut HashSet<String>,
    out: &mut Vec<Event>,
) {
    if span.log {
        log_events(
            span,
            cx.adapter_tools || cx.span_tools,
            cx.adapter_usage || cx.span_usage,
            out,
        );
    } else if !cx.adapter_usage
        && !cx.shadowed.contains(&span.span_id)
        && let Some(event) = usage(span)
    {
        out.push(event);
    }
    for call in named {
        if cx.adapter_ids.contains(call.id.as_str()) || !called.insert(call.id.clone()) {
            continue;
        }
        let input = inputs.remove(&call.id).unwrap_or(call.input);
        out.push(Event::ActionCalled {
            call_id: call.id,
            name: call.name,
            input,
        });
    }
    let Some((tool, id)) = tool else {
        return;
    };
    // A tool span no model call names and that carries no id of its own has a made-up id.
    let known = id.is_some();
    let id = id.unwrap_or_else(|| format!("span-{}", hex(&span.span_id)));
    if cx.adapter_ids.contains(id.as_str()) || (!known && cx.adapter_tools) {
        return;
    }
    if called.insert(id.clone()) {
        let input = inputs.remove(&id).unwrap_or(tool.input);
        out.push(Event::ActionCalled {
            call_id: id.clone(),
            name: tool.name,
            input,
        });
    }
    out.push(Event::ActionResult {
        call_id: id,
        output: tool.output,
        status: tool.status,
    });
}

/// The first attribute present among `keys`.
fn first<'a>(span: &'a Span, keys: &[&str]) -> Option<&'a Value> {
    keys.iter()
        .find_map(|k| span.attributes.get(*k).filter(|v| !v.is_null()))
}

fn first_u64(span: &Span, keys: &[&str]) -> Option<u64> {
    keys.iter().find_map(|k| span.u64(k))
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

    use super::super::span::{Kind, Status};
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

    /// A call as (call id, tool name, input).
    type Called = (String, String, Value);

    /// The tool calls and results of `spans`, as calls and (call id, output).
    fn calls_of(spans: &[Span]) -> (Vec<Called>, Vec<(String, Value)>) {
        let mut called = Vec::new();
        let mut results = Vec::new();
        for event in normalized(spans) {
            match event {
                Event::ActionCalled {
                    call_id,
                    name,
                    input,
                } => called.push((call_id, name, input)),
                Event::ActionResult {
                    call_id, output, ..
                } => results.push((call_id, output)),
                _ => {}
            }
        }
        (called, results)
    }

    /// A model span naming `get_weather` calls in each convention, and the tool spans (no call
    /// id) that run them, under one agent span: one call each, the result on the model's id.
    #[test]
    fn a_tool_span_without_an_id_runs_the_call_its_model_span_named() {
        let agent = || span(1, None, "agent", json!({}));
        let conventions: [(&str, Value, Value); 4] = [
            (
                "openllmetry",
                json!({"gen_ai.completion.0.tool_calls.0.id": "call_1",
                       "gen_ai.completion.0.tool_calls.0.name": "get_weather",
                       "gen_ai.completion.0.tool_calls.0.arguments": "{\"city\":\"Paris\"}"}),
                json!({"traceloop.span.kind": "tool", "traceloop.entity.name": "get_weather",
                       "traceloop.entity.input": "{\"args\":[],\"kwargs\":{\"city\":\"Paris\"}}",
                       "traceloop.entity.output": "\"sunny\""}),
            ),
            (
                "openinference",
                json!({"openinference.span.kind": "LLM",
                       "llm.output_messages.0.message.tool_calls.0.tool_call.id": "call_1",
                       "llm.output_messages.0.message.tool_calls.0.tool_call.function.name": "get_weather",
                       "llm.output_messages.0.message.tool_calls.0.tool_call.function.arguments": "{\"city\":\"Paris\"}"}),
                json!({"openinference.span.kind": "TOOL", "tool.name": "get_weather",
                       "input.value": "{\"city\":\"Paris\"}", "output.value": "\"sunny\""}),
            ),
            (
                "genai",
                json!({"gen_ai.operation.name": "chat", "gen_ai.output.messages":
                       "[{\"role\":\"assistant\",\"parts\":[{\"type\":\"tool_call\",\"id\":\"call_1\",\"name\":\"get_weather\",\"arguments\":{\"city\":\"Paris\"}}]}]"}),
                json!({"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "get_weather",
                       "gen_ai.tool.call.result": "\"sunny\""}),
            ),
            (
                "older genai",
                json!({"gen_ai.system": "openai",
                       "gen_ai.completion.0.tool_calls.0.id": "call_1",
                       "gen_ai.completion.0.tool_calls.0.name": "get_weather",
                       "gen_ai.completion.0.tool_calls.0.arguments": "{\"city\":\"Paris\"}"}),
                json!({"gen_ai.tool.name": "get_weather", "gen_ai.tool.call.result": "\"sunny\""}),
            ),
        ];
        for (convention, model, tool) in conventions {
            let name = if convention == "older genai" {
                "execute_tool get_weather"
            } else {
                "get_weather.tool"
            };
            let spans = [
                agent(),
                span(2, Some(1), "chat", model),
                span(3, Some(1), name, tool),
            ];
            let (called, results) = calls_of(&spans);
            assert_eq!(
                called,
                [(
                    "call_1".to_string(),
                    "get_weather".to_string(),
                    json!({"city": "Paris"})
                )],
                "{convention}"
            );
            assert_eq!(
                results,
                [("call_1".to_string(), json!("sunny"))],
                "{convention}"
            );
        }
    }

    fn chat_calling(id: u8, parent: u8, calls: &[(&str, &str)]) -> Span {
        let parts: Vec<Value> = calls
            .iter()
            .map(|(id, city)| {
                json!({"type": "tool_call", "id": id, "name": "get_weather",
                       "arguments": {"city": city}})
            })
            .collect();
        span(
            id,
            Some(parent),
            "chat",
            json!({"gen_ai.output.messages":
                   json!([{"role": "assistant", "parts": parts}]).to_string()}),
        )
    }

    fn weather_tool(id: u8, parent: u8, city: &str) -> Span {
        span(
            id,
            Some(parent),
            "get_weather.tool",
            json!({"traceloop.span.kind": "tool", "traceloop.entity.name": "get_weather",
                   "traceloop.entity.input": json!({"args": [], "kwargs": {"city": city}}).to_string(),
                   "traceloop.entity.output": json!(format!("sunny in {city}")).to_string()}),
        )
    }

    #[test]
    fn time_order_pairs_each_tool_span_with_the_call_named_before_it() {
        // Two calls in one message, then a third from the next model call; a fourth model call
        // names one that never runs.
        let spans = [
            span(1, None, "agent", json!({})),
            chat_calling(2, 1, &[("a", "Paris"), ("b", "Rome")]),
            weather_tool(3, 1, "Paris"),
            weather_tool(4, 1, "Rome"),
            chat_calling(5, 1, &[("c", "Oslo")]),
            weather_tool(6, 1, "Oslo"),
            chat_calling(7, 1, &[("d", "Lima")]),
        ];
        let (called, results) = calls_of(&spans);
        let ids: Vec<&str> = called.iter().map(|(id, ..)| id.as_str()).collect();
        assert_eq!(ids, ["a", "b", "c", "d"]);
        assert_eq!(
            results,
            [
                ("a".to_string(), json!("sunny in Paris")),
                ("b".to_string(), json!("sunny in Rome")),
                ("c".to_string(), json!("sunny in Oslo")),
            ]
        );
    }

    #[test]
    fn the_parent_chain_pairs_concurrent_agents_tool_spans_with_their_own_calls() {
        // Two sub-agents under one root, interleaved in time: B's model call starts last, yet
        // A's tool span runs A's call.
        let spans = [
            span(1, None, "root", json!({})),
            span(2, Some(1), "agent a", json!({})),
            span(3, Some(1), "agent b", json!({})),
            chat_calling(4, 2, &[("a", "Paris")]),
            chat_calling(5, 3, &[("b", "Rome")]),
            weather_tool(6, 2, "Paris"),
            weather_tool(7, 3, "Rome"),
        ];
        let (_, results) = calls_of(&spans);
        assert_eq!(
            results,
            [
                ("a".to_string(), json!("sunny in Paris")),
                ("b".to_string(), json!("sunny in Rome")),
            ]
        );
    }

    #[test]
    fn tool_spans_of_other_names_traces_or_own_ids_are_not_paired() {
        let mut other_trace = weather_tool(4, 1, "Rome");
        other_trace.trace_id = [7; 16];
        let spans = [
            span(1, None, "agent", json!({})),
            chat_calling(2, 1, &[("a", "Paris")]),
            span(
                3,
                Some(1),
                "execute_tool get_time",
                json!({"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "get_time"}),
            ),
            other_trace,
            span(
                5,
                Some(1),
                "execute_tool get_weather",
                json!({"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "get_weather",
                       "gen_ai.tool.call.id": "z"}),
            ),
        ];
        let (called, results) = calls_of(&spans);
        let names: Vec<(&str, &str)> = called
            .iter()
            .map(|(id, name, _)| (id.as_str(), name.as_str()))
            .collect();
        assert_eq!(names.len(), 4, "{called:?}");
        assert_eq!(names[0], ("a", "get_weather"));
        assert!(names[1].0.starts_with("span-") && names[1].1 == "get_time");
        assert!(names[2].0.starts_with("span-") && names[2].1 == "get_weather");
        assert_eq!(names[3], ("z", "get_weather"));
        assert_eq!(results.len(), 3);
    }

    #[test]
    fn openllmetry_inputs_are_the_keyword_arguments_with_positional_ones_when_any() {
        let input = |raw: Value| {
            let s = span(
                1,
                None,
                "t.tool",
                json!({"traceloop.span.kind": "tool", "traceloop.entity.name": "t",
                       "traceloop.entity.input": raw.to_string()}),
            );
            calls_of(&[s]).0.remove(0).2
        };
        assert_eq!(
            input(json!({"args": [], "kwargs": {"city": "Paris"}})),
            json!({"city": "Paris"})
        );
        assert_eq!(
            input(json!({"args": ["Paris"], "kwargs": {"unit": "C"}})),
            json!({"args": ["Paris"], "unit": "C"})
        );
        assert_eq!(
            input(json!({"args": [1], "kwargs": {"args": 2}})),
            json!({"args": [1], "kwargs": {"args": 2}})
        );
        assert_eq!(input(json!({"city": "Paris"})), json!({"city": "Paris"}));
    }

    #[test]
    fn arguments_only_in_an_operation_details_log_record_reach_the_call() {
        // openai-v2 with content on events only: the chat span names nothing, its log record
        // carries the messages (structured, not JSON text), the tool span has the id.
        let chat = span(
            2,
            Some(1),
            "chat gpt-4o-mini",
            json!({"gen_ai.operation.name": "chat", "gen_ai.usage.input_tokens": 20,
                   "gen_ai.usage.output_tokens": 6}),
        );
        let mut details = span(
            3,
            Some(2),
            "gen_ai.client.inference.operation.details",
            json!({"gen_ai.usage.input_tokens": 20, "gen_ai.output.messages": [{"role": "assistant",
                   "parts": [{"type": "tool_call", "id": "call_1", "name": "get_weather",
                              "arguments": {"city": "Paris"}}]}]}),
        );
        details.log = true;
        let tool = span(
            4,
            Some(1),
            "execute_tool get_weather",
            json!({"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "get_weather",
                   "gen_ai.tool.call.id": "call_1"}),
        );
        let all = normalized(&[span(1, None, "agent", json!({})), chat, details, tool]);
        let usage: Vec<_> = all
            .iter()
            .filter(|e| matches!(e, Event::Usage { .. }))
            .collect();
        assert_eq!(usage.len(), 1, "the record's usage repeats the span's");
        let called: Vec<_> = all
            .iter()
            .filter_map(|e| match e {
                Event::ActionCalled { call_id, input, .. } => Some((call_id.as_str(), input)),
                _ => None,
            })
            .collect();
        assert_eq!(called, [("call_1", &json!({"city": "Paris"}))]);
        // A record whose span is not in the turn names its calls itself.
        let mut orphan = span(
            5,
            Some(9),
            "gen_ai.client.inference.operation.details",
            json!({"gen_ai.output.messages": [{"role": "assistant",
                   "parts": [{"type": "tool_call", "id": "call_2", "name": "get_time"}]}]}),
        );
        orphan.log = true;
        let (called, _) = calls_of(&[orphan]);
        assert_eq!(called[0].0, "call_2");
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
