//! A loopback fake of the OpenAI Responses API as the Codex CLI uses it: `POST /v1/responses`
//! with `stream: true`, answered with the real server-sent events (`response.created`,
//! `response.output_item.added` / `.done`, `response.output_text.delta`, `response.completed`
//! with usage, or `response.failed`).
//!
//! Replies are scripted per conversation step: [`step`] counts the tool outputs the request
//! carries after its last user message, so the n-th model call of a turn gets the n-th reply
//! whatever the earlier turns of the thread contained; [`last_user_text`] tells turns apart.
//!
//! Built on [`super::FakeProvider`], which records every request.

use serde_json::{Value, json};

use super::{Reply, Seen};

/// Tokens every scripted response reports: 1000 input (of which 400 cached), 50 output.
pub const INPUT_TOKENS: u64 = 1000;
/// Cached input tokens of every scripted response (part of [`INPUT_TOKENS`]).
pub const CACHED_TOKENS: u64 = 400;
/// Output tokens of every scripted response.
pub const OUTPUT_TOKENS: u64 = 50;

/// A streamed response whose output is `items`, with the fixed usage above.
pub fn respond(items: Vec<Value>) -> Reply {
    let id = "resp_fake";
    let mut frames = vec![json!({
        "type": "response.created",
        "response": { "id": id, "object": "response", "status": "in_progress", "output": [] }
    })];
    for (index, item) in items.iter().enumerate() {
        frames.push(json!({
            "type": "response.output_item.added",
            "output_index": index,
            "item": item,
        }));
        if item["type"] == "message" {
            let text = item["content"][0]["text"].clone();
            frames.push(json!({
                "type": "response.output_text.delta",
                "item_id": item["id"],
                "output_index": index,
                "content_index": 0,
                "delta": text,
            }));
        }
        frames.push(json!({
            "type": "response.output_item.done",
            "output_index": index,
            "item": item,
        }));
    }
    frames.push(json!({
        "type": "response.completed",
        "response": {
            "id": id,
            "object": "response",
            "status": "completed",
            "output": items,
            "usage": {
                "input_tokens": INPUT_TOKENS,
                "input_tokens_details": { "cached_tokens": CACHED_TOKENS },
                "output_tokens": OUTPUT_TOKENS,
                "output_tokens_details": { "reasoning_tokens": 0 },
                "total_tokens": INPUT_TOKENS + OUTPUT_TOKENS,
            }
        }
    }));
    stream(&frames)
}

/// A streamed response that fails (`response.failed`) with `message`.
pub fn failed(message: &str) -> Reply {
    stream(&[
        json!({
            "type": "response.created",
            "response": { "id": "resp_fail", "object": "response", "status": "in_progress", "output": [] }
        }),
        json!({
            "type": "response.failed",
            "response": {
                "id": "resp_fail",
                "object": "response",
                "status": "failed",
                "error": { "code": "invalid_prompt", "message": message },
            }
        }),
    ])
}

fn stream(frames: &[Value]) -> Reply {
    let mut body = String::new();
    for frame in frames {
        let kind = frame["type"].as_str().unwrap_or("message");
        body.push_str(&format!("event: {kind}\ndata: {frame}\n\n"));
    }
    Reply::raw(&body).header("content-type", "text/event-stream")
}

/// An assistant message.
pub fn message(text: &str) -> Value {
    json!({
        "type": "message",
        "id": "msg_fake",
        "role": "assistant",
        "status": "completed",
        "content": [{ "type": "output_text", "text": text, "annotations": [] }],
    })
}

/// A reasoning item with a summary (Codex shows the summary as a `reasoning` item).
pub fn reasoning(summary: &str) -> Value {
    json!({
        "type": "reasoning",
        "id": "rs_fake",
        "summary": [{ "type": "summary_text", "text": summary }],
    })
}

/// A call of Codex's shell tool (`exec_command`) running `cmd` (not as a login shell, so the
/// machine's profile scripts stay out of the output).
pub fn shell(call_id: &str, cmd: &str) -> Value {
    json!({
        "type": "function_call",
        "id": format!("fc_{call_id}"),
        "call_id": call_id,
        "name": "exec_command",
        "arguments": json!({ "cmd": cmd, "login": false, "yield_time_ms": 10000 }).to_string(),
        "status": "completed",
    })
}

/// A call of Codex's `apply_patch` tool (a freeform tool: the input is the patch text).
pub fn apply_patch(call_id: &str, patch: &str) -> Value {
    json!({
        "type": "custom_tool_call",
        "id": format!("ctc_{call_id}"),
        "call_id": call_id,
        "name": "apply_patch",
        "input": patch,
        "status": "completed",
    })
}

/// The request's input items.
fn input(seen: &Seen) -> &[Value] {
    seen.body["input"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or(&[])
}

fn is_user_text(item: &Value) -> bool {
    item["type"] == "message"
        && item["role"] == "user"
        && item["content"]
            .as_array()
            .is_some_and(|c| c.iter().any(|p| p["type"] == "input_text"))
}

/// The text of the request's last user message (this turn's prompt).
pub fn last_user_text(seen: &Seen) -> String {
    input(seen)
        .iter()
        .rev()
        .find(|item| is_user_text(item))
        .and_then(|item| item["content"].as_array())
        .map(|parts| {
            parts
                .iter()
                .filter_map(|p| p["text"].as_str())
                .collect::<Vec<_>>()
                .join("")
        })
        .unwrap_or_default()
}

/// How many tool outputs the request carries after its last user message: 0 for the first
/// model call of a turn, then one more per tool call answered (two after a response with two
/// parallel calls).
pub fn step(seen: &Seen) -> usize {
    let items = input(seen);
    let start = items
        .iter()
        .rposition(is_user_text)
        .map(|i| i + 1)
        .unwrap_or(0);
    items[start..]
        .iter()
        .filter(|item| is_tool_output(item))
        .count()
}

fn is_tool_output(item: &Value) -> bool {
    matches!(
        item["type"].as_str(),
        Some("function_call_output" | "custom_tool_call_output")
    )
}

/// The outputs of every tool call in the request, oldest first, as text.
pub fn tool_outputs(seen: &Seen) -> Vec<String> {
    input(seen)
        .iter()
        .filter(|item| is_tool_output(item))
        .map(|item| match &item["output"] {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        })
        .collect()
}
