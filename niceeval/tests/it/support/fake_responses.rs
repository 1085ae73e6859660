//! A loopback fake of the OpenAI Responses API as the Codex CLI uses it: `POST /v1/responses`
//! with `stream: true`, answered with the real server-sent events (`response.created`,
//! `response.output_item.added` / `.done`, `response.output_text.delta`, `response.completed`
//! with usage, or `response.failed`).
//!
//! Replies are scripted per conversation step: [`step`] counts the tool outputs the request
//! carries after its last user message, so the n-th model call of a turn gets the n-th reply
//! whatever the earlier turns of the thread contained; [`last_user_text`] tells turns apart.
//! [`finishing`] waits for commands that outlive Codex's wait for them (a loaded machine), by
//! polling them, before the script goes on.
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
    respond_using(items, [INPUT_TOKENS, CACHED_TOKENS, OUTPUT_TOKENS])
}

/// A streamed response whose output is `items`, reporting `[input, cached, output]` tokens.
fn respond_using(items: Vec<Value>, [input, cached, output]: [u64; 3]) -> Reply {
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
                "input_tokens": input,
                "input_tokens_details": { "cached_tokens": cached },
                "output_tokens": output,
                "output_tokens_details": { "reasoning_tokens": 0 },
                "total_tokens": input + output,
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
/// parallel calls). The fake's own polls of running commands ([`finishing`]) do not count.
pub fn step(seen: &Seen) -> usize {
    let items = input(seen);
    let start = items
        .iter()
        .rposition(is_user_text)
        .map(|i| i + 1)
        .unwrap_or(0);
    let polls = polls(seen);
    items[start..]
        .iter()
        .filter(|item| is_tool_output(item) && !polls.contains_key(call_id(item)))
        .count()
}

/// How many polls [`finishing`] makes of the commands of a turn at most (each waits up to
/// [`POLL_MS`] for them to end) before it lets the script go on.
pub const MAX_POLLS: usize = 18;

/// How long one poll waits for a running command to end.
pub const POLL_MS: u64 = 10_000;

/// `script`, with the commands Codex left running waited for. Codex's `exec_command` waits
/// for its command up to the call's `yield_time_ms` and then answers with the output so far
/// and a session; the command goes on, and its item stays open in Codex's stream. While a
/// command of the turn is still running, the answer polls its session (`write_stdin` with no
/// input, waiting up to [`POLL_MS`]) until it has ended — so a command a loaded machine slows
/// down still finishes before the script goes on, and the script sees the conversation as if
/// every command had finished at once: [`step`] skips the polls, the answers that make them
/// report no tokens, and [`scripted`] tells the requests the script answered. After
/// [`MAX_POLLS`] polls the script goes on anyway (and the test fails on the missing output).
pub fn finishing(
    script: impl Fn(&Seen) -> Reply + Send + Sync + 'static,
) -> impl Fn(&Seen) -> Reply + Send + Sync + 'static {
    move |seen| {
        if scripted(seen) {
            return script(seen);
        }
        let polled = polls(seen).len();
        respond_using(
            running_sessions(seen)
                .iter()
                .map(|session| poll(&format!("call_poll_{polled}_{session}"), *session))
                .collect(),
            [0, 0, 0],
        )
    }
}

/// Whether [`finishing`] hands this request to the script: no command of the turn is still
/// running, or it has been polled [`MAX_POLLS`] times.
pub fn scripted(seen: &Seen) -> bool {
    let running = running_sessions(seen);
    running.is_empty() || polls(seen).len() >= MAX_POLLS * running.len()
}

/// A call of Codex's `write_stdin` that sends nothing and waits up to [`POLL_MS`] for more
/// output of the command running in `session` (or its end).
pub fn poll(call_id: &str, session: u64) -> Value {
    json!({
        "type": "function_call",
        "id": format!("fc_{call_id}"),
        "call_id": call_id,
        "name": "write_stdin",
        "arguments": json!({ "session_id": session, "chars": "", "yield_time_ms": POLL_MS })
            .to_string(),
        "status": "completed",
    })
}

/// The `write_stdin` calls of the request: call id → the session it polls.
fn polls(seen: &Seen) -> std::collections::HashMap<String, u64> {
    input(seen)
        .iter()
        .filter(|item| item["type"] == "function_call" && item["name"] == "write_stdin")
        .filter_map(|item| {
            let arguments: Value = serde_json::from_str(item["arguments"].as_str()?).ok()?;
            Some((call_id(item).to_string(), arguments["session_id"].as_u64()?))
        })
        .collect()
}

/// The sessions of commands still running after the request's last tool outputs: named by an
/// output ("Process running with session ID N") and not ended by a later poll of theirs.
pub fn running_sessions(seen: &Seen) -> Vec<u64> {
    let polls = polls(seen);
    let mut running: Vec<u64> = Vec::new();
    for item in input(seen).iter().filter(|item| is_tool_output(item)) {
        if let Some(session) = polls.get(call_id(item)) {
            running.retain(|s| s != session);
        }
        let output = item["output"].as_str().unwrap_or_default();
        if let Some(session) = output
            .split("Process running with session ID ")
            .nth(1)
            .and_then(|rest| rest.split_whitespace().next())
            .and_then(|id| id.parse().ok())
            && !running.contains(&session)
        {
            running.push(session);
        }
    }
    running
}

fn call_id(item: &Value) -> &str {
    item["call_id"].as_str().unwrap_or_default()
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
