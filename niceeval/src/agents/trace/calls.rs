//! Tool calls across a turn's spans: the calls a model span names (output messages, the older
//! flattened attributes, OpenInference's, and the messages of a log record such as openai-v2's
//! `gen_ai.client.inference.operation.details`), the tool spans that run them, and which tool
//! span runs which named call, so one call is one call. A tool span with a call id belongs to
//! that id; one without (OpenLLMetry, OpenInference, older conventions) takes the unclaimed call
//! of its name in the same trace that its parent chain and time order point to.

use std::collections::{HashMap, HashSet};

use serde_json::Value;

use super::span::{Span, Status, hex};
use crate::base::event::ActionStatus;

/// A tool call a model span names.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Call {
    pub id: String,
    pub name: String,
    pub input: Value,
}

/// A tool span: a tool run.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Tool {
    /// The call id the span carries (`None` for OpenLLMetry and OpenInference spans).
    pub id: Option<String>,
    pub name: String,
    pub input: Value,
    pub output: Value,
    pub status: ActionStatus,
}

/// What a turn's spans say about tool calls, by span position.
#[derive(Debug, Default)]
pub(super) struct Plan {
    /// The calls each span's position emits: a model span's own, and those of log records
    /// about it.
    pub named: Vec<Vec<Call>>,
    /// Each tool span, with the call id its run belongs to (its own, or the named call it was
    /// paired with; `None`: a call no model span named).
    pub tools: Vec<Option<(Tool, Option<String>)>>,
    /// The arguments of each call id, from where they are real: the model's call, else the
    /// tool span's.
    pub inputs: HashMap<String, Value>,
}

impl Plan {
    /// Whether any span (not a Claude Code log record) reports a tool call.
    pub(super) fn any(&self) -> bool {
        self.tools.iter().any(Option::is_some) || self.named.iter().any(|c| !c.is_empty())
    }
}

/// Reads the tool calls of `spans` (sorted by start) and pairs tool spans without a call id
/// with the named call they run. `taken` holds ids the agent's adapter reported already.
pub(super) fn plan(spans: &[Span], taken: &HashSet<&str>) -> Plan {
    let mut named: Vec<Vec<Call>> = spans
        .iter()
        .map(|s| {
            if s.log {
                Vec::new()
            } else {
                message_tool_calls(s)
            }
        })
        .collect();
    let position: HashMap<[u8; 8], usize> = spans
        .iter()
        .enumerate()
        .filter(|(_, s)| !s.log)
        .map(|(i, s)| (s.span_id, i))
        .collect();
    // A log record's messages belong to the span it was written in (openai-v2 writes a call's
    // messages only there unless content capture on spans is on); without that span in the
    // turn, to the record itself.
    for (i, span) in spans.iter().enumerate().filter(|(_, s)| s.log) {
        let calls = message_tool_calls(span);
        if calls.is_empty() {
            continue;
        }
        let owner = span
            .parent
            .and_then(|p| position.get(&p).copied())
            .unwrap_or(i);
        for call in calls {
            match named[owner].iter_mut().find(|c| c.id == call.id) {
                Some(known) if known.input.is_null() => known.input = call.input,
                Some(_) => {}
                None => named[owner].push(call),
            }
        }
    }

    let mut tools: Vec<Option<(Tool, Option<String>)>> = spans
        .iter()
        .map(|s| {
            if s.log {
                None
            } else {
                tool(s).map(|t| {
                    let id = t.id.clone();
                    (t, id)
                })
            }
        })
        .collect();

    // Pair each tool span without an id, in start order, with a named call of its name.
    let mut claimed: HashSet<String> = taken.iter().map(|s| s.to_string()).collect();
    claimed.extend(tools.iter().flatten().filter_map(|(t, _)| t.id.clone()));
    let parents: HashMap<[u8; 8], Option<[u8; 8]>> =
        spans.iter().map(|s| (s.span_id, s.parent)).collect();
    for (i, span) in spans.iter().enumerate() {
        let Some((tool, assigned)) = &mut tools[i] else {
            continue;
        };
        if tool.id.is_some() {
            continue;
        }
        let chain = ancestors(span.span_id, &parents);
        let mut best: Option<(bool, usize, u64, usize, usize)> = None;
        let mut choice: Option<(usize, usize)> = None;
        for (owner, calls) in named.iter().enumerate() {
            let model = &spans[owner];
            if model.trace_id != span.trace_id {
                continue;
            }
            for (n, call) in calls.iter().enumerate() {
                if call.name != tool.name || claimed.contains(&call.id) {
                    continue;
                }
                // A call named before the tool ran, under the closest common ancestor, by the
                // latest model span, first in its message.
                let before = model.start <= span.start;
                let depth = common_depth(model.span_id, &chain, &parents);
                let key = (
                    before,
                    depth,
                    if before {
                        model.start
                    } else {
                        u64::MAX - model.start
                    },
                    usize::MAX - owner,
                    usize::MAX - n,
                );
                if best.is_none_or(|b| key > b) {
                    best = Some(key);
                    choice = Some((owner, n));
                }
            }
        }
        if let Some((owner, n)) = choice {
            let id = named[owner][n].id.clone();
            claimed.insert(id.clone());
            *assigned = Some(id);
        }
    }

    let mut inputs: HashMap<String, Value> = HashMap::new();
    for call in named.iter().flatten() {
        if !call.input.is_null() {
            inputs.entry(call.id.clone()).or_insert(call.input.clone());
        }
    }
    for (tool, id) in tools.iter().flatten() {
        if let Some(id) = id
            && !tool.input.is_null()
        {
            inputs.entry(id.clone()).or_insert(tool.input.clone());
        }
    }
    Plan {
        named,
        tools,
        inputs,
    }
}

/// A span's chain from itself up (the last entry may be a parent outside the turn: the turn's
/// own span, which its siblings share).
fn ancestors(id: [u8; 8], parents: &HashMap<[u8; 8], Option<[u8; 8]>>) -> Vec<[u8; 8]> {
    let mut chain = vec![id];
    let mut at = parents.get(&id).copied().flatten();
    while let Some(p) = at {
        if chain.contains(&p) {
            break; // a cycle in bad input
        }
        chain.push(p);
        at = parents.get(&p).copied().flatten();
    }
    chain
}

/// How deep the closest ancestor `id` shares with `chain` (a tool span's, from itself up) is,
/// counted from the top of that chain: deeper is closer kin; 0 when none is shared.
fn common_depth(
    id: [u8; 8],
    chain: &[[u8; 8]],
    parents: &HashMap<[u8; 8], Option<[u8; 8]>>,
) -> usize {
    ancestors(id, parents)
        .iter()
        .find_map(|a| chain.iter().position(|c| c == a))
        .map_or(0, |at| chain.len() - at)
}

/// The first attribute present among `keys`, with the key it was found under.
fn first<'a>(span: &'a Span, keys: &[&'static str]) -> Option<(&'static str, &'a Value)> {
    keys.iter().find_map(|k| {
        span.attributes
            .get(*k)
            .filter(|v| !v.is_null())
            .map(|v| (*k, v))
    })
}

/// A JSON text as the JSON it holds; any other value as is.
pub(super) fn parsed(value: &Value) -> Value {
    match value {
        Value::String(s) => serde_json::from_str(s).unwrap_or_else(|_| value.clone()),
        other => other.clone(),
    }
}

/// A tool span's run, when `span` is one.
pub(super) fn tool(span: &Span) -> Option<Tool> {
    let is_tool = span.str("gen_ai.operation.name") == Some("execute_tool")
        || span
            .str("openinference.span.kind")
            .is_some_and(|k| k.eq_ignore_ascii_case("tool"))
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
    .and_then(|(_, v)| v.as_str())
    .map(str::to_string)
    .or_else(|| span.name.strip_prefix("execute_tool ").map(str::to_string))
    .unwrap_or_else(|| span.name.clone());
    let id = first(span, &["gen_ai.tool.call.id", "ai.toolCall.id"]).and_then(|(_, v)| match v {
        Value::String(s) if !s.is_empty() => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    });
    // OpenInference puts the tool's schema in gen_ai.tool.call.arguments in one version: its
    // real arguments are in input.value.
    let input = match first(
        span,
        &[
            "input.value",
            "gen_ai.tool.call.arguments",
            "ai.toolCall.args",
            "traceloop.entity.input",
        ],
    ) {
        Some(("traceloop.entity.input", v)) => python_call(parsed(v)),
        Some((_, v)) => parsed(v),
        None => Value::Null,
    };
    let output = first(
        span,
        &[
            "gen_ai.tool.call.result",
            "output.value",
            "ai.toolCall.result",
            "traceloop.entity.output",
        ],
    )
    .map(|(_, v)| parsed(v))
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

/// OpenLLMetry records a decorated function's input as `{"args": [..], "kwargs": {..}}`: the
/// call's input is its keyword arguments, with the positional ones under `"args"` only when
/// there are any. Anything else is kept as it is.
fn python_call(input: Value) -> Value {
    let Value::Object(map) = &input else {
        return input;
    };
    if map.len() != 2 {
        return input;
    }
    let (Some(Value::Array(args)), Some(Value::Object(kwargs))) =
        (map.get("args"), map.get("kwargs"))
    else {
        return input;
    };
    if args.is_empty() {
        return Value::Object(kwargs.clone());
    }
    if kwargs.contains_key("args") {
        return input; // the keyword would be overwritten: keep both as they came
    }
    let mut out = kwargs.clone();
    out.insert("args".into(), Value::Array(args.clone()));
    Value::Object(out)
}

/// Tool calls a span names in its output: the GenAI `gen_ai.output.messages` parts (a JSON
/// text on spans, structured on log records), the older flattened
/// `gen_ai.completion.N.tool_calls.M.*`, OpenInference's
/// `llm.output_messages.N.message.tool_calls.M.tool_call.*`.
pub(super) fn message_tool_calls(span: &Span) -> Vec<Call> {
    let mut calls = Vec::new();
    let synthetic = |calls: &Vec<Call>| format!("span-{}-{}", hex(&span.span_id), calls.len());
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
                    .filter(|id| !id.is_empty())
                    .map(str::to_string)
                    .unwrap_or_else(|| synthetic(&calls));
                let input = part.get("arguments").map(parsed).unwrap_or(Value::Null);
                calls.push(Call {
                    id,
                    name: name.to_string(),
                    input,
                });
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
                    .filter(|id| !id.is_empty())
                    .map(str::to_string)
                    .unwrap_or_else(|| synthetic(&calls));
                let input = span
                    .attributes
                    .get(&key(args_key))
                    .map(parsed)
                    .unwrap_or(Value::Null);
                calls.push(Call {
                    id,
                    name: name.to_string(),
                    input,
                });
            }
        }
    }
    calls
}
