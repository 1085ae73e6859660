//! The OpenAI Chat Completions wire format: `POST {base_url}/chat/completions` with
//! `messages`, `tools`, `tool_choice`; answers carry `choices[0].message` (`content`,
//! `tool_calls` with JSON-text `arguments`) and `usage`. OpenAI, Ollama, vLLM, LM Studio and most
//! gateways speak it; the key goes in `Authorization: Bearer`.

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use serde_json::{Value, json};

use super::{ChatMessage, ChatRequest, ChatResponse, ToolCall, ToolChoice, Usage};

/// The endpoint under `base_url` (e.g. `https://api.openai.com/v1`).
pub fn endpoint(base_url: &str) -> String {
    format!("{}/chat/completions", base_url.trim_end_matches('/'))
}

#[derive(Serialize)]
struct Body<'a> {
    model: &'a str,
    messages: Vec<OutMessage<'a>>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tools: Vec<OutTool<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tool_choice: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    max_tokens: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    temperature: Option<f64>,
}

#[derive(Serialize)]
struct OutMessage<'a> {
    role: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    content: Option<&'a str>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tool_calls: Vec<OutCall<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tool_call_id: Option<&'a str>,
}

#[derive(Serialize)]
struct OutCall<'a> {
    id: &'a str,
    #[serde(rename = "type")]
    kind: &'static str,
    function: OutFunctionCall<'a>,
}

#[derive(Serialize)]
struct OutFunctionCall<'a> {
    name: &'a str,
    arguments: String,
}

#[derive(Serialize)]
struct OutTool<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    function: OutFunction<'a>,
}

#[derive(Serialize)]
struct OutFunction<'a> {
    name: &'a str,
    description: &'a str,
    parameters: &'a RawValue,
}

/// The request body for `model`.
pub fn encode(model: &str, request: &ChatRequest) -> Result<Vec<u8>, serde_json::Error> {
    let mut messages = Vec::with_capacity(request.messages.len() + 1);
    if let Some(system) = &request.system {
        messages.push(OutMessage {
            role: "system",
            content: Some(system),
            tool_calls: Vec::new(),
            tool_call_id: None,
        });
    }
    for message in &request.messages {
        messages.push(match message {
            ChatMessage::User(text) => OutMessage {
                role: "user",
                content: Some(text),
                tool_calls: Vec::new(),
                tool_call_id: None,
            },
            ChatMessage::Assistant { text, tool_calls } => OutMessage {
                role: "assistant",
                content: (!text.is_empty() || tool_calls.is_empty()).then_some(text.as_str()),
                tool_calls: tool_calls
                    .iter()
                    .map(|call| OutCall {
                        id: &call.id,
                        kind: "function",
                        function: OutFunctionCall {
                            name: &call.name,
                            arguments: match &call.arguments {
                                Value::String(raw) if call.arguments_error.is_some() => raw.clone(),
                                other => other.to_string(),
                            },
                        },
                    })
                    .collect(),
                tool_call_id: None,
            },
            ChatMessage::ToolResult {
                call_id, output, ..
            } => OutMessage {
                role: "tool",
                content: Some(output),
                tool_calls: Vec::new(),
                tool_call_id: Some(call_id),
            },
        });
    }
    let tools: Vec<OutTool<'_>> = request
        .tools
        .iter()
        .map(|tool| OutTool {
            kind: "function",
            function: OutFunction {
                name: tool.name(),
                description: tool.description(),
                parameters: tool.parameters(),
            },
        })
        .collect();
    let tool_choice = (!tools.is_empty()).then(|| match &request.tool_choice {
        ToolChoice::Auto => json!("auto"),
        ToolChoice::Required => json!("required"),
        ToolChoice::Tool(name) => json!({ "type": "function", "function": { "name": name } }),
    });
    super::encode_with_extra(
        &Body {
            model,
            messages,
            tools,
            tool_choice,
            max_tokens: request.max_tokens,
            temperature: request.temperature,
        },
        request,
    )
}

#[derive(Deserialize)]
struct Answer {
    #[serde(default)]
    model: Option<String>,
    #[serde(default)]
    choices: Option<Vec<Choice>>,
    #[serde(default)]
    usage: Option<AnswerUsage>,
}

#[derive(Deserialize)]
struct Choice {
    #[serde(default)]
    message: Option<AnswerMessage>,
    #[serde(default)]
    finish_reason: Option<String>,
}

#[derive(Deserialize)]
struct AnswerMessage {
    #[serde(default)]
    content: Option<Value>,
    #[serde(default)]
    tool_calls: Option<Vec<AnswerCall>>,
    /// The legacy single `function_call` some servers still send.
    #[serde(default)]
    function_call: Option<AnswerFunction>,
}

#[derive(Deserialize)]
struct AnswerCall {
    #[serde(default)]
    id: Option<String>,
    function: AnswerFunction,
}

#[derive(Deserialize)]
struct AnswerFunction {
    name: String,
    #[serde(default)]
    arguments: Option<Value>,
}

#[derive(Deserialize)]
struct AnswerUsage {
    #[serde(default)]
    prompt_tokens: u64,
    #[serde(default)]
    completion_tokens: u64,
    #[serde(default)]
    prompt_tokens_details: Option<PromptDetails>,
}

#[derive(Deserialize)]
struct PromptDetails {
    #[serde(default)]
    cached_tokens: Option<u64>,
}

/// The first embedding of an `/embeddings` answer (`{data: [{embedding: [..]}]}`).
pub(crate) fn decode_embedding(body: &[u8]) -> Result<Vec<f64>, super::AnswerError> {
    use super::AnswerError;
    let value: Value =
        serde_json::from_slice(body).map_err(|e| AnswerError::NotJson(std::sync::Arc::new(e)))?;
    let vector = value
        .pointer("/data/0/embedding")
        .and_then(Value::as_array)
        .ok_or(AnswerError::Missing("no `data[0].embedding` in the answer"))?;
    vector
        .iter()
        .map(|x| x.as_f64().ok_or_else(|| AnswerError::NotANumber(x.clone())))
        .collect()
}

/// Reads a response body. `Err` says what is wrong with it.
pub fn decode(body: &[u8]) -> Result<ChatResponse, super::AnswerError> {
    use super::AnswerError;
    let answer: Answer =
        serde_json::from_slice(body).map_err(AnswerError::not_an_answer("Chat Completions"))?;
    let choice = answer
        .choices
        .ok_or(AnswerError::Missing("the answer has no `choices` field"))?
        .into_iter()
        .next()
        .ok_or(AnswerError::Missing("the answer's `choices` is empty"))?;
    let message = choice
        .message
        .ok_or(AnswerError::Missing("the first choice has no `message`"))?;
    let text = match message.content {
        None | Some(Value::Null) => String::new(),
        Some(Value::String(s)) => s,
        // Content parts: [{"type":"text","text":"..."}]
        Some(Value::Array(parts)) => parts
            .iter()
            .filter_map(|p| p.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join(""),
        Some(other) => {
            return Err(AnswerError::Content(other));
        }
    };
    let mut calls: Vec<(Option<String>, AnswerFunction)> = message
        .tool_calls
        .unwrap_or_default()
        .into_iter()
        .map(|c| (c.id, c.function))
        .collect();
    if let Some(legacy) = message.function_call {
        calls.push((None, legacy));
    }
    let tool_calls = calls
        .into_iter()
        .enumerate()
        .map(|(i, (id, function))| {
            let (arguments, arguments_error) = parse_arguments(function.arguments);
            ToolCall {
                id: id.unwrap_or_else(|| format!("call_{}", i + 1)),
                name: function.name,
                arguments,
                arguments_error,
            }
        })
        .collect();
    let usage = answer.usage.map_or_else(Usage::default, |u| Usage {
        input_tokens: u.prompt_tokens,
        output_tokens: u.completion_tokens,
        cache_read_tokens: u
            .prompt_tokens_details
            .and_then(|d| d.cached_tokens)
            .unwrap_or(0),
        cost_usd: None,
    });
    Ok(ChatResponse {
        text,
        tool_calls,
        usage,
        model: answer.model,
        stop_reason: choice.finish_reason,
        cached: false,
    })
}

/// Arguments arrive as JSON text (the spec) or, from some servers, as a JSON object.
fn parse_arguments(arguments: Option<Value>) -> (Value, Option<String>) {
    match arguments {
        None | Some(Value::Null) => (json!({}), None),
        Some(Value::String(text)) if text.trim().is_empty() => (json!({}), None),
        Some(Value::String(text)) => match serde_json::from_str(&text) {
            Ok(value) => (value, None),
            Err(e) => (
                Value::String(text),
                Some(format!("the arguments are not JSON ({e})")),
            ),
        },
        Some(value) => (value, None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agents::provider::ToolSpec;

    #[test]
    fn extra_body_keys_are_sent_over_the_typed_ones() {
        let mut extra = serde_json::Map::new();
        extra.insert("seed".into(), json!(7));
        extra.insert("max_tokens".into(), json!(5));
        let request = ChatRequest {
            max_tokens: Some(1024),
            extra: Some(std::sync::Arc::new(extra)),
            ..ChatRequest::default()
        }
        .user("q");
        let body: Value = serde_json::from_slice(&encode("m", &request).unwrap()).unwrap();
        assert_eq!(body["seed"], 7);
        assert_eq!(body["max_tokens"], 5);
        assert_eq!(body["messages"][0]["content"], "q");
    }

    #[test]
    fn forced_tool_and_tool_history_encode_to_the_wire_format() {
        let request = ChatRequest {
            messages: vec![
                ChatMessage::User("q".into()),
                ChatMessage::Assistant {
                    text: String::new(),
                    tool_calls: vec![ToolCall {
                        id: "c1".into(),
                        name: "lookup".into(),
                        arguments: json!({"id": 1}),
                        arguments_error: None,
                    }],
                },
                ChatMessage::ToolResult {
                    call_id: "c1".into(),
                    name: "lookup".into(),
                    output: "{\"ok\":true}".into(),
                    is_error: false,
                },
            ],
            tools: vec![ToolSpec::new(
                "lookup",
                "Looks up",
                json!({"type": "object"}),
            )],
            tool_choice: ToolChoice::Tool("lookup".into()),
            temperature: Some(0.0),
            ..ChatRequest::default()
        };
        let body: Value = serde_json::from_slice(&encode("m", &request).unwrap()).unwrap();
        assert_eq!(body["model"], "m");
        assert_eq!(
            body["tool_choice"],
            json!({"type": "function", "function": {"name": "lookup"}})
        );
        assert_eq!(
            body["tools"][0]["function"]["parameters"],
            json!({"type": "object"})
        );
        assert_eq!(
            body["messages"][1]["tool_calls"][0]["function"]["arguments"],
            "{\"id\":1}"
        );
        assert!(body["messages"][1].get("content").is_none());
        assert_eq!(body["messages"][2]["role"], "tool");
        assert_eq!(body["messages"][2]["tool_call_id"], "c1");
        assert_eq!(body["temperature"], 0.0);
    }

    #[test]
    fn tool_calls_usage_and_bad_arguments_decode() {
        let answer = decode(
            br#"{"model":"gpt-x","choices":[{"message":{"content":null,"tool_calls":[
                {"id":"a","type":"function","function":{"name":"f","arguments":"{\"x\":1}"}},
                {"id":"b","type":"function","function":{"name":"g","arguments":"{oops"}},
                {"type":"function","function":{"name":"h","arguments":{"y":2}}}]},
                "finish_reason":"tool_calls"}],
               "usage":{"prompt_tokens":5,"completion_tokens":7,"prompt_tokens_details":{"cached_tokens":2}}}"#,
        )
        .unwrap();
        assert_eq!(answer.text, "");
        assert_eq!(answer.tool_calls[0].arguments, json!({"x": 1}));
        assert!(answer.tool_calls[1].arguments_error.is_some());
        assert_eq!(answer.tool_calls[2].id, "call_3");
        assert_eq!(answer.tool_calls[2].arguments, json!({"y": 2}));
        assert_eq!(answer.usage.cache_read_tokens, 2);
        assert_eq!(answer.stop_reason.as_deref(), Some("tool_calls"));
    }

    #[test]
    fn malformed_answers_are_errors() {
        assert!(
            decode(b"{not json")
                .unwrap_err()
                .to_string()
                .contains("not a Chat Completions answer")
        );
        assert!(
            decode(b"{}")
                .unwrap_err()
                .to_string()
                .contains("no `choices`")
        );
        assert!(
            decode(br#"{"choices":[]}"#)
                .unwrap_err()
                .to_string()
                .contains("empty")
        );
    }
}

#[cfg(test)]
mod doc_examples {
    //! The examples that were this file's doc tests while its items were public.

    #[test]
    fn example_1() {
        use crate::agents::provider::{ChatRequest, openai};

        let body = openai::encode(
            "gpt-4o-mini",
            &ChatRequest::new().system("Be brief.").user("Hi"),
        )
        .unwrap();
        let json: serde_json::Value = serde_json::from_slice(&body).unwrap();
        assert_eq!(json["messages"][0]["role"], "system");
        assert_eq!(json["messages"][1]["content"], "Hi");

        let answer = openai::decode(br#"{"choices":[{"message":{"role":"assistant","content":"Hello!"},"finish_reason":"stop"}],
          "usage":{"prompt_tokens":9,"completion_tokens":3}}"#).unwrap();
        assert_eq!(answer.text, "Hello!");
        assert_eq!(answer.usage.output_tokens, 3);
    }
}
