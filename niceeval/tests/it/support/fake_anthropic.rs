//! A loopback fake of the Anthropic Messages API for the real `claude` program: it answers
//! `POST /v1/messages` with the streaming SSE format (`message_start`, `content_block_start`/
//! `delta`/`stop` with `text_delta`, `thinking_delta` and `input_json_delta`, `message_delta`
//! with usage and stop reason, `message_stop`), and each reply is chosen by a script that looks
//! at the conversation the program sent (how many tool results it holds, what the first user
//! message says). Side requests get plausible answers: `count_tokens`, non-streaming messages,
//! the `HEAD /api/hello` connectivity check.
#![allow(dead_code)]

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::{Value, json};

use super::{FakeProvider, Reply, Seen};

/// Input tokens of every scripted message (not cached).
pub const INPUT_TOKENS: u64 = 40;
/// Prompt tokens written to the cache, per message.
pub const CACHE_CREATION_TOKENS: u64 = 20;
/// Prompt tokens read from the cache, per message.
pub const CACHE_READ_TOKENS: u64 = 300;
/// Output tokens per content block of a scripted message.
pub const OUTPUT_TOKENS_PER_BLOCK: u64 = 7;

/// The conversation of one `/v1/messages` request, as the script sees it.
pub struct Conversation<'a> {
    pub body: &'a Value,
}

impl Conversation<'_> {
    /// Every `tool_result` block of the conversation, oldest first.
    pub fn tool_results(&self) -> Vec<&Value> {
        self.blocks()
            .filter(|b| b["type"] == "tool_result")
            .collect()
    }

    /// How many tool results the conversation holds (the step of a scripted run).
    pub fn step(&self) -> usize {
        self.tool_results().len()
    }

    /// Whether the latest tool result is an error.
    pub fn last_result_failed(&self) -> bool {
        self.tool_results()
            .last()
            .is_some_and(|r| r["is_error"] == true)
    }

    /// The text of every user message, joined (to tell a subagent's conversation from the main
    /// one, or a resumed session from a fresh one).
    pub fn user_text(&self) -> String {
        let mut out = String::new();
        for message in self.messages() {
            if message["role"] != "user" {
                continue;
            }
            match &message["content"] {
                Value::String(s) => out.push_str(s),
                Value::Array(blocks) => {
                    for block in blocks {
                        if let Some(text) = block["text"].as_str() {
                            out.push_str(text);
                            out.push('\n');
                        }
                    }
                }
                _ => {}
            }
        }
        out
    }

    /// The number of messages sent.
    pub fn len(&self) -> usize {
        self.messages().count()
    }

    /// The working directory Claude Code states in its prompt (`Primary working directory:
    /// /path` in 2.1, `Working directory: /path` before), so
    /// a script can give its tools absolute paths inside a working copy made per run.
    pub fn working_directory(&self) -> Option<String> {
        let mut texts: Vec<String> = Vec::new();
        match &self.body["system"] {
            Value::String(s) => texts.push(s.clone()),
            Value::Array(blocks) => texts.extend(
                blocks
                    .iter()
                    .filter_map(|b| b["text"].as_str().map(str::to_string)),
            ),
            _ => {}
        }
        texts.push(self.user_text());
        texts.iter().find_map(|text| {
            let at = text.find("orking directory: ").filter(|at| *at > 0)?;
            let rest = &text[at + "orking directory: ".len()..];
            Some(rest.lines().next()?.trim().to_string())
        })
    }

    fn messages(&self) -> impl Iterator<Item = &Value> {
        self.body["messages"].as_array().into_iter().flatten()
    }

    fn blocks(&self) -> impl Iterator<Item = &Value> {
        self.messages()
            .flat_map(|m| m["content"].as_array().into_iter().flatten())
    }
}

/// One content block of a scripted assistant message.
#[derive(Debug, Clone)]
pub enum Block {
    Text(String),
    Thinking(String),
    ToolUse { name: String, input: Value },
}

/// A text block.
pub fn text(text: &str) -> Block {
    Block::Text(text.to_string())
}

/// A thinking block.
pub fn thinking(text: &str) -> Block {
    Block::Thinking(text.to_string())
}

/// A `tool_use` block calling `name` with `input`.
pub fn tool(name: &str, input: Value) -> Block {
    Block::ToolUse {
        name: name.to_string(),
        input,
    }
}

/// What the fake answers one conversation with.
#[derive(Debug, Clone)]
pub enum Step {
    /// An assistant message with these blocks (stop reason `tool_use` when any block is one).
    Reply(Vec<Block>),
    /// An HTTP error with an Anthropic error body.
    Fail { status: u16, message: String },
}

/// An assistant message with these blocks.
pub fn reply(blocks: Vec<Block>) -> Step {
    Step::Reply(blocks)
}

/// An HTTP error.
pub fn fail(status: u16, message: &str) -> Step {
    Step::Fail {
        status,
        message: message.to_string(),
    }
}

/// The running fake.
pub struct FakeAnthropic {
    server: FakeProvider,
}

impl FakeAnthropic {
    /// Starts the fake; `script` picks the answer to each streamed `/v1/messages` request.
    pub fn start(script: impl Fn(&Conversation) -> Step + Send + Sync + 'static) -> FakeAnthropic {
        let messages = Arc::new(AtomicUsize::new(0));
        let server = FakeProvider::start(move |_, seen| answer(seen, &script, &messages));
        FakeAnthropic { server }
    }

    /// The base URL (`ANTHROPIC_BASE_URL`).
    pub fn url(&self) -> &str {
        &self.server.url
    }

    /// The streamed `/v1/messages` requests received so far.
    pub fn conversations(&self) -> Vec<Value> {
        self.server
            .seen()
            .into_iter()
            .filter(|s| s.path == "/v1/messages" && s.body["stream"] == true)
            .map(|s| s.body)
            .collect()
    }

    /// Every request received so far (side requests included).
    pub fn seen(&self) -> Vec<Seen> {
        self.server.seen()
    }
}

fn answer(
    seen: &Seen,
    script: &(impl Fn(&Conversation) -> Step + Send + Sync),
    messages: &AtomicUsize,
) -> Reply {
    let path = seen.path.as_str();
    if path.ends_with("/count_tokens") {
        return Reply::json(json!({"input_tokens": INPUT_TOKENS}));
    }
    if path != "/v1/messages" {
        // `HEAD /api/hello` and anything else the program probes: an empty success.
        return Reply::json(json!({}));
    }
    let n = messages.fetch_add(1, Ordering::SeqCst) + 1;
    let model = seen.body["model"]
        .as_str()
        .unwrap_or("claude-fake")
        .to_string();
    let step = if seen.body["stream"] == true {
        script(&Conversation { body: &seen.body })
    } else {
        // A side query (a title, a summary): a short text answer.
        reply(vec![text("ok")])
    };
    let blocks = match step {
        Step::Fail { status, message } => {
            let kind = if status == 400 {
                "invalid_request_error"
            } else {
                "api_error"
            };
            return Reply::status(
                status,
                &json!({"type": "error", "error": {"type": kind, "message": message}}).to_string(),
            );
        }
        Step::Reply(blocks) => blocks,
    };
    let id = format!("msg_fake_{n:03}");
    if seen.body["stream"] == true {
        Reply::raw(&sse(&id, &model, &blocks)).header("content-type", "text/event-stream")
    } else {
        Reply::json(message_json(&id, &model, &blocks))
    }
}

fn usage(output_tokens: u64) -> Value {
    json!({
        "input_tokens": INPUT_TOKENS,
        "cache_creation_input_tokens": CACHE_CREATION_TOKENS,
        "cache_read_input_tokens": CACHE_READ_TOKENS,
        "output_tokens": output_tokens,
    })
}

fn stop_reason(blocks: &[Block]) -> &'static str {
    if blocks.iter().any(|b| matches!(b, Block::ToolUse { .. })) {
        "tool_use"
    } else {
        "end_turn"
    }
}

fn tool_id(message: &str, index: usize) -> String {
    format!("toolu_{}_{index}", message.trim_start_matches("msg_"))
}

fn output_tokens(blocks: &[Block]) -> u64 {
    OUTPUT_TOKENS_PER_BLOCK * blocks.len().max(1) as u64
}

/// The blocks as a non-streamed message.
fn message_json(id: &str, model: &str, blocks: &[Block]) -> Value {
    let content: Vec<Value> = blocks
        .iter()
        .enumerate()
        .map(|(i, block)| match block {
            Block::Text(t) => json!({"type": "text", "text": t}),
            Block::Thinking(t) => json!({"type": "thinking", "thinking": t, "signature": "sig"}),
            Block::ToolUse { name, input } => {
                json!({"type": "tool_use", "id": tool_id(id, i), "name": name, "input": input})
            }
        })
        .collect();
    json!({
        "id": id, "type": "message", "role": "assistant", "model": model, "content": content,
        "stop_reason": stop_reason(blocks), "stop_sequence": null,
        "usage": usage(output_tokens(blocks)),
    })
}

/// The blocks as a Messages API event stream.
fn sse(id: &str, model: &str, blocks: &[Block]) -> String {
    let mut events = vec![json!({
        "type": "message_start",
        "message": {
            "id": id, "type": "message", "role": "assistant", "model": model, "content": [],
            "stop_reason": null, "stop_sequence": null, "usage": usage(1),
        }
    })];
    for (index, block) in blocks.iter().enumerate() {
        let (start, deltas) = match block {
            Block::Text(t) => (
                json!({"type": "text", "text": ""}),
                split(t)
                    .into_iter()
                    .map(|part| json!({"type": "text_delta", "text": part}))
                    .collect::<Vec<_>>(),
            ),
            Block::Thinking(t) => (
                json!({"type": "thinking", "thinking": "", "signature": ""}),
                vec![
                    json!({"type": "thinking_delta", "thinking": t}),
                    json!({"type": "signature_delta", "signature": "c2lnbmF0dXJl"}),
                ],
            ),
            Block::ToolUse { name, input } => (
                json!({"type": "tool_use", "id": tool_id(id, index), "name": name, "input": {}}),
                split(&input.to_string())
                    .into_iter()
                    .map(|part| json!({"type": "input_json_delta", "partial_json": part}))
                    .collect(),
            ),
        };
        events.push(json!({"type": "content_block_start", "index": index, "content_block": start}));
        for delta in deltas {
            events.push(json!({"type": "content_block_delta", "index": index, "delta": delta}));
        }
        events.push(json!({"type": "content_block_stop", "index": index}));
    }
    events.push(json!({
        "type": "message_delta",
        "delta": {"stop_reason": stop_reason(blocks), "stop_sequence": null},
        "usage": {"output_tokens": output_tokens(blocks)},
    }));
    events.push(json!({"type": "message_stop"}));
    let mut out = String::new();
    for event in events {
        let kind = event["type"].as_str().unwrap_or("ping").to_string();
        out.push_str(&format!("event: {kind}\ndata: {event}\n\n"));
    }
    out
}

/// Splits text in two deltas (so the program has to join them), on a character boundary.
fn split(text: &str) -> Vec<String> {
    let middle = text
        .char_indices()
        .map(|(i, _)| i)
        .find(|i| *i >= text.len() / 2)
        .unwrap_or(text.len());
    let (a, b) = text.split_at(middle);
    [a, b]
        .into_iter()
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .collect()
}
