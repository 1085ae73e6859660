//! The Anthropic Messages API wire format: `POST {base_url}/v1/messages` with headers
//! `x-api-key` and `anthropic-version`; `system`, `messages` whose content is text or blocks
//! (`text`, `tool_use`, `tool_result`), `tools` with `input_schema`, `tool_choice`, and a
//! required `max_tokens`. Answers carry `content` blocks, `stop_reason` and `usage`.

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use serde_json::{Value, json};

use super::{ChatMessage, ChatRequest, ChatResponse, ToolCall, ToolChoice, Usage};

/// The `anthropic-version` header sent with every request.
pub const API_VERSION: &str = "2023-06-01";

/// `max_tokens` when the request sets none (the API requires one).
pub const DEFAULT_MAX_TOKENS: u32 = 1024;

/// The endpoint under `base_url` (`https://api.anthropic.com`, or a base already ending in
/// `/v1`).
pub fn endpoint(base_url: &str) -> String {
    let base = base_url.trim_end_matches('/');
    if base.ends_with("/v1") {
        format!("{base}/messages")
    } else {
        format!("{base}/v1/messages")
    }
}

#[derive(Serialize)]
struct Body<'a> {
    model: &'a str,
    max_tokens: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    system: Option<&'a str>,
    messages: Vec<OutMessage>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tools: Vec<OutTool<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tool_choice: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    temperature: Option<f64>,
}

#[derive(Serialize)]
struct OutMessage {
    role: &'static str,
    content: Value,
}

#[derive(Serialize)]
struct OutTool<'a> {
    name: &'a str,
    description: &'a str,
    input_schema: &'a RawValue,
}

/// The request body for `model`. Consecutive tool results travel in one user message, as the
/// API requires.
pub fn encode(model: &str, request: &ChatRequest) -> Result<Vec<u8>, serde_json::Error> {
    let mut messages: Vec<OutMessage> = Vec::with_capacity(request.messages.len());
    for message in &request.messages {
        match message {
            ChatMessage::User(text) => messages.push(OutMessage {
                role: "user",
                content: json!(text),
            }),
            ChatMessage::Assistant { text, tool_calls } => {
                let mut blocks = Vec::new();
                if !text.is_empty() {
                    blocks.push(json!({ "type": "text", "text": text }));
                }
                for call in tool_calls {
                    blocks.push(json!({
                        "type": "tool_use",
                        "id": call.id,
                        "name": call.name,
                        "input": if call.arguments.is_object() { call.arguments.clone() } else { json!({}) },
                    }));
                }
                messages.push(OutMessage {
                    role: "assistant",
                    content: Value::Array(blocks),
                });
            }
            ChatMessage::ToolResult {
                call_id,
                output,
                is_error,
                ..
            } => {
                let mut block =
                    json!({ "type": "tool_result", "tool_use_id": call_id, "content": output });
                if *is_error {
                    block["is_error"] = json!(true);
                }
                match messages.last_mut() {
                    Some(OutMessage {
                        role: "user",
                        content: Value::Array(blocks),
                    }) if blocks.iter().all(|b| b["type"] == "tool_result") => blocks.push(block),
                    _ => messages.push(OutMessage {
                        role: "user",
                        content: json!([block]),
                    }),
                }
            }
        }
    }
    let tools: Vec<OutTool<'_>> = request
        .tools
        .iter()
        .map(|tool| OutTool {
            name: tool.name(),
            description: tool.description(),
            input_schema: tool.parameters(),
        })
        .collect();
    let tool_choice = (!tools.is_empty()).then(|| match &request.tool_choice {
        ToolChoice::Auto => json!({ "type": "auto" }),
        ToolChoice::Required => json!({ "type": "any" }),
        ToolChoice::Tool(name) => json!({ "type": "tool", "name": name }),
    });
    super::encode_with_extra(
        &Body {
            model,
            max_tokens: request.max_tokens.unwrap_or(DEFAULT_MAX_TOKENS),
            system: request.system.as_deref(),
            messages,
            tools,
            tool_choice,
            temperature: request.temperature,
        },
        request,
    )
}

#[derive(Deserialize)]
struct Answer {
    #[serde(rename = "type", default)]
    kind: Option<String>,
    #[serde(default)]
    model: Option<String>,
    #[serde(default)]
    content: Option<Vec<Block>>,
    #[serde(default)]
    stop_reason: Option<String>,
    #[serde(default)]
    usage: Option<AnswerUsage>,
    #[serde(default)]
    error: Option<Value>,
}

#[derive(Deserialize)]
struct Block {
    #[serde(rename = "type")]
    kind: String,
    #[serde(default)]
    text: Option<String>,
    #[serde(default)]
    id: Option<String>,
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    input: Option<Value>,
}

#[derive(Deserialize)]
struct AnswerUsage {
    #[serde(default)]
    input_tokens: u64,
    #[serde(default)]
    output_tokens: u64,
    #[serde(default)]
    cache_read_input_tokens: Option<u64>,
    #[serde(default)]
    cache_creation_input_tokens: Option<u64>,
}

/// Reads a response body. `Err` says what is wrong with it.
pub fn decode(body: &[u8]) -> Result<ChatResponse, super::AnswerError> {
    use super::AnswerError;
    let answer: Answer =
        serde_json::from_slice(body).map_err(AnswerError::not_an_answer("Messages API"))?;
    if answer.kind.as_deref() == Some("error") {
        let message = answer
            .error
            .as_ref()
            .and_then(|e| e.get("message"))
            .and_then(Value::as_str)
            .unwrap_or("no message");
        return Err(AnswerError::ErrorAnswer(message.to_string()));
    }
    let blocks = answer
        .content
        .ok_or(AnswerError::Missing("the answer has no `content` field"))?;
    let mut text = String::new();
    let mut tool_calls = Vec::new();
    for (i, block) in blocks.into_iter().enumerate() {
        match block.kind.as_str() {
            "text" => text.push_str(block.text.as_deref().unwrap_or_default()),
            "tool_use" => {
                let name = block.name.ok_or(AnswerError::ToolUseWithoutName(i))?;
                tool_calls.push(ToolCall {
                    id: block.id.unwrap_or_else(|| format!("toolu_{}", i + 1)),
                    name,
                    arguments: block.input.unwrap_or_else(|| json!({})),
                    arguments_error: None,
                });
            }
            // thinking, redacted_thinking, server tool blocks: not part of the answer.
            _ => {}
        }
    }
    let usage = answer.usage.map_or_else(Usage::default, |u| {
        let read = u.cache_read_input_tokens.unwrap_or(0);
        let written = u.cache_creation_input_tokens.unwrap_or(0);
        Usage {
            // Anthropic counts cached prompt tokens separately; niceeval's input count includes them.
            input_tokens: u.input_tokens + read + written,
            output_tokens: u.output_tokens,
            cache_read_tokens: read,
            cost_usd: None,
        }
    });
    Ok(ChatResponse {
        text,
        tool_calls,
        usage,
        model: answer.model,
        stop_reason: answer.stop_reason,
        cached: false,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agents::provider::ToolSpec;

    #[test]
    fn tool_use_history_and_forced_tool_encode() {
        let request = ChatRequest {
            messages: vec![
                ChatMessage::User("q".into()),
                ChatMessage::Assistant {
                    text: "let me check".into(),
                    tool_calls: vec![
                        ToolCall {
                            id: "t1".into(),
                            name: "a".into(),
                            arguments: json!({"k": 1}),
                            arguments_error: None,
                        },
                        ToolCall {
                            id: "t2".into(),
                            name: "b".into(),
                            arguments: json!({}),
                            arguments_error: None,
                        },
                    ],
                },
                ChatMessage::ToolResult {
                    call_id: "t1".into(),
                    name: "a".into(),
                    output: "1".into(),
                    is_error: false,
                },
                ChatMessage::ToolResult {
                    call_id: "t2".into(),
                    name: "b".into(),
                    output: "boom".into(),
                    is_error: true,
                },
            ],
            tools: vec![ToolSpec::new("a", "A", json!({"type": "object"}))],
            tool_choice: ToolChoice::Tool("a".into()),
            ..ChatRequest::default()
        };
        let body: Value = serde_json::from_slice(&encode("c", &request).unwrap()).unwrap();
        assert_eq!(body["tool_choice"], json!({"type": "tool", "name": "a"}));
        assert_eq!(body["tools"][0]["input_schema"], json!({"type": "object"}));
        assert_eq!(body["messages"][1]["content"][1]["type"], "tool_use");
        assert_eq!(body["messages"].as_array().unwrap().len(), 3, "{body}");
        assert_eq!(body["messages"][2]["content"][1]["is_error"], true);
        assert!(body.get("system").is_none());
    }

    #[test]
    fn endpoint_accepts_bases_with_and_without_v1() {
        assert_eq!(endpoint("http://h:1/"), "http://h:1/v1/messages");
        assert_eq!(endpoint("http://h:1/v1"), "http://h:1/v1/messages");
    }

    #[test]
    fn blocks_and_usage_decode() {
        let answer = decode(
            br#"{"type":"message","content":[{"type":"thinking","thinking":"hm"},
                {"type":"text","text":"ok"},{"type":"tool_use","id":"tu","name":"select_choice","input":{"choice":"A"}}],
                "stop_reason":"tool_use","usage":{"input_tokens":3,"output_tokens":4,"cache_read_input_tokens":10}}"#,
        )
        .unwrap();
        assert_eq!(answer.text, "ok");
        assert_eq!(answer.tool_calls[0].arguments["choice"], "A");
        assert_eq!(answer.usage.input_tokens, 13);
        assert_eq!(answer.usage.cache_read_tokens, 10);
        let err = decode(
            br#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#,
        )
        .unwrap_err();
        assert!(err.to_string().contains("Overloaded"), "{err}");
        assert!(decode(b"[1,2]").is_err());
    }
}

#[cfg(test)]
mod doc_examples {
    //! The examples that were this file's doc tests while its items were public.

    #[test]
    fn example_1() {
        use crate::agents::provider::{ChatRequest, anthropic};

        let body = anthropic::encode(
            "claude-haiku-4-5",
            &ChatRequest::new().system("Be brief.").user("Hi"),
        )
        .unwrap();
        let json: serde_json::Value = serde_json::from_slice(&body).unwrap();
        assert_eq!(json["system"], "Be brief.");
        assert_eq!(json["max_tokens"], 1024);

        let answer = anthropic::decode(
            br#"{"type":"message","role":"assistant","model":"claude-haiku-4-5",
          "content":[{"type":"text","text":"Hello!"}],"stop_reason":"end_turn",
          "usage":{"input_tokens":9,"output_tokens":3}}"#,
        )
        .unwrap();
        assert_eq!(answer.text, "Hello!");
    }
}
