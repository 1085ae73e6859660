//! Claude Code's `stream-json` output, frame by frame, mapped to niceeval [`Event`]s.
//!
//! | frame | events |
//! |-------|--------|
//! | frame | events |
//! |-------|--------|
//! | `system` `init` | none (its `session_id` is remembered) |
//! | `system` `task_notification` of a subagent call | `subagent.completed` |
//! | other `system` subtypes | `custom` named `claude-code:system:<subtype>` |
//! | `assistant` `text` block | assistant `message` (not for API error notices: the `result` reports them) |
//! | `assistant` `thinking` block | `thinking` |
//! | `assistant` `tool_use` block | `action.called` (tool name kept); `Task`/`Agent` → `subagent.called`; `Skill` → see below |
//! | `user` `tool_result` block | `action.result` (`failed` when `is_error`, `rejected` when the permission check refused the call); a subagent call's → `subagent.completed` (unless the subagent was launched in the background: then its `task_notification`); a `Skill` call's → `skill.loaded` when it succeeded, else `custom` `claude-code:skill_failed` |
//! | `user` text blocks (the prompt, a skill's contents) | none |
//! | `result` | `usage` (below); `error` when `is_error` or its subtype is not `success` |
//! | `stream_event` | none (partial messages repeat what the `assistant` frames say) |
//! | anything else | `custom` named `claude-code:<type>`, the frame as its data |
//!
//! A subagent's own tool calls (frames with a `parent_tool_use_id`) are actions like any other;
//! its text and thinking become `custom` `claude-code:subagent_message` events, so they never
//! pass for the main agent's reply.
//!
//! Usage: Claude Code prints each assistant message once per content block, each copy with the
//! message's usage as of its start, so per-message figures undercount output tokens. The
//! `result` frame holds exact tokens and cost per model since the previous `result`
//! (`model_usage_since_last_result`); those become the `usage` events (input tokens include cache
//! writes and reads, `cache_read_tokens` the reads; the model as `anthropic/<model>`; `cost_usd`
//! as reported, so it wins over the price table). `total_cost_usd` is not used for that: it is
//! cumulative over the process and over a resumed session. Older versions without
//! `model_usage_since_last_result` give `modelUsage` (the process's totals per model), and any
//! part of `total_cost_usd` no model accounts for becomes a token-less `usage` event. Only when no `result` frame arrives (the program died or was
//! killed) are the per-message figures, deduplicated by message id, emitted instead, without a
//! cost (priced from the table).

use std::collections::{HashMap, HashSet};

use serde_json::{Map, Value};

use crate::agents::agent::subprocess::TurnError;
use crate::base::event::{ActionStatus, Event};

/// What a `tool_use` id turned into, so its `tool_result` maps to the matching event.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Call {
    Action,
    Subagent,
    /// A subagent launched in the background: it completes with a `task_notification`.
    BackgroundSubagent,
    Skill(String),
}

/// How the turn ended, according to the `result` frame.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Ending {
    /// `subtype: "success"`, not `is_error`.
    Success,
    /// The turn failed with this message.
    Failed(String),
}

/// Tokens of one assistant message.
#[derive(Debug, Clone, Default)]
struct MessageUsage {
    model: Option<String>,
    input: u64,
    output: u64,
    cache_read: u64,
}

/// The state of one turn's stream: which calls are open, which messages were counted, the
/// session and how the turn ended.
#[derive(Debug, Default)]
pub(crate) struct Stream {
    calls: HashMap<String, Call>,
    counted: HashSet<String>,
    pending_usage: Vec<MessageUsage>,
    session_id: Option<String>,
    ending: Option<Ending>,
    /// Cost already carried by `usage` events (`total_cost_usd` is cumulative).
    cost_reported: f64,
}

impl Stream {
    /// Maps one stdout line (1-based `number`) to events. A line that is not a JSON object with a
    /// `type` is an error naming the line.
    pub(crate) fn line(&mut self, line: &str, number: usize) -> Result<Vec<Event>, TurnError> {
        let line = line.trim();
        if line.is_empty() {
            return Ok(Vec::new());
        }
        let frame: Value = serde_json::from_str(line).map_err(|source| TurnError::Line {
            message: format!(
                "stdout line {number} is not JSON ({source}): {}; Claude Code was expected to \
                 print one stream-json frame per line",
                crate::base::excerpt::quote(line)
            ),
            source,
        })?;
        let Some(kind) = frame.get("type").and_then(Value::as_str) else {
            return Err(TurnError::Failed(format!(
                "stdout line {number} is not a Claude Code stream-json frame (no \"type\"): {}",
                crate::base::excerpt::quote(line)
            )));
        };
        if let Some(id) = frame.get("session_id").and_then(Value::as_str) {
            self.session_id = Some(id.to_string());
        }
        let mut events = Vec::new();
        match kind {
            "system" => self.system(frame, &mut events),
            "assistant" => self.assistant(&frame, &mut events),
            "user" => self.user(&frame, &mut events),
            "result" => self.result(&frame, &mut events),
            "stream_event" => {}
            other => events.push(custom(other, frame.clone())),
        }
        Ok(events)
    }

    /// Events still owed when the stream ends: the per-message usage, when no `result` frame
    /// reported the turn's usage.
    pub(crate) fn finish(&mut self) -> Vec<Event> {
        if self.ending.is_some() {
            return Vec::new();
        }
        self.pending_usage
            .drain(..)
            .map(|u| Event::Usage {
                input_tokens: u.input,
                output_tokens: u.output,
                cache_read_tokens: u.cache_read,
                cost_usd: None,
                model: u.model.map(|m| qualified(&m)),
            })
            .collect()
    }

    /// The Claude Code session this stream belongs to, once a frame named it.
    pub(crate) fn session_id(&self) -> Option<&str> {
        self.session_id.as_deref()
    }

    /// How the turn ended, once the `result` frame arrived.
    pub(crate) fn ending(&self) -> Option<&Ending> {
        self.ending.as_ref()
    }

    fn system(&mut self, frame: Value, events: &mut Vec<Event>) {
        let subtype = frame["subtype"].as_str().unwrap_or("").to_string();
        if subtype == "init" {
            return;
        }
        if subtype == "task_notification" {
            let call_id = frame["tool_use_id"].as_str().unwrap_or("");
            if self.calls.get(call_id) == Some(&Call::BackgroundSubagent) {
                self.calls.remove(call_id);
                let status = match frame["status"].as_str().unwrap_or("") {
                    "completed" => ActionStatus::Completed,
                    "killed" | "stopped" | "cancelled" => ActionStatus::Rejected,
                    _ => ActionStatus::Failed,
                };
                events.push(Event::SubagentCompleted {
                    call_id: call_id.to_string(),
                    status,
                });
                return;
            }
        }
        events.push(custom(&format!("system:{subtype}"), frame));
    }

    fn assistant(&mut self, frame: &Value, events: &mut Vec<Event>) {
        let message = &frame["message"];
        self.count_usage(message);
        let parent = frame
            .get("parent_tool_use_id")
            .and_then(Value::as_str)
            .filter(|p| !p.is_empty());
        let api_error = frame.get("is_api_error_message").and_then(Value::as_bool) == Some(true);
        for block in blocks(message) {
            match block.get("type").and_then(Value::as_str).unwrap_or("") {
                kind @ ("text" | "thinking") => {
                    let text = block[kind].as_str().unwrap_or("");
                    if text.trim().is_empty() || api_error {
                        continue;
                    }
                    events.push(match (parent, kind) {
                        (Some(parent), _) => Event::Custom {
                            name: "claude-code:subagent_message".to_string(),
                            data: serde_json::json!({"call_id": parent, "type": kind, "text": text}),
                        },
                        (None, "text") => Event::assistant(text),
                        (None, _) => Event::Thinking { text: text.into() },
                    });
                }
                "redacted_thinking" => {}
                "tool_use" => self.tool_use(block, events),
                other => events.push(custom(&format!("assistant:{other}"), block.clone())),
            }
        }
    }

    fn tool_use(&mut self, block: &Value, events: &mut Vec<Event>) {
        let call_id = block["id"].as_str().unwrap_or("").to_string();
        let name = block["name"].as_str().unwrap_or("").to_string();
        let input = block.get("input").cloned().unwrap_or(Value::Null);
        match name.as_str() {
            "Task" | "Agent" => {
                let subagent = ["subagent_type", "description"]
                    .iter()
                    .find_map(|k| input.get(*k).and_then(Value::as_str))
                    .filter(|s| !s.is_empty())
                    .unwrap_or(&name)
                    .to_string();
                self.calls.insert(call_id.clone(), Call::Subagent);
                events.push(Event::SubagentCalled {
                    call_id,
                    name: subagent,
                    remote_url: None,
                });
            }
            "Skill" => {
                let skill = ["skill", "command", "name"]
                    .iter()
                    .find_map(|k| input.get(*k).and_then(Value::as_str))
                    .unwrap_or("")
                    .to_string();
                self.calls.insert(call_id, Call::Skill(skill));
            }
            _ => {
                self.calls.insert(call_id.clone(), Call::Action);
                events.push(Event::ActionCalled {
                    call_id,
                    name,
                    input,
                });
            }
        }
    }

    fn user(&mut self, frame: &Value, events: &mut Vec<Event>) {
        for block in blocks(&frame["message"]) {
            if block.get("type").and_then(Value::as_str) != Some("tool_result") {
                continue;
            }
            let call_id = block["tool_use_id"].as_str().unwrap_or("").to_string();
            let failed = block.get("is_error").and_then(Value::as_bool) == Some(true);
            let status = if !failed {
                ActionStatus::Completed
            } else if rejected(frame, &call_id) {
                ActionStatus::Rejected
            } else {
                ActionStatus::Failed
            };
            let output = result_output(block.get("content"));
            match self.calls.remove(&call_id) {
                Some(Call::Subagent) if !failed && launched_in_background(frame) => {
                    self.calls.insert(call_id, Call::BackgroundSubagent);
                }
                Some(Call::Subagent | Call::BackgroundSubagent) => {
                    events.push(Event::SubagentCompleted { call_id, status })
                }
                Some(Call::Skill(name)) if !failed => events.push(Event::SkillLoaded { name }),
                Some(Call::Skill(name)) => events.push(Event::Custom {
                    name: "claude-code:skill_failed".to_string(),
                    data: serde_json::json!({"skill": name, "call_id": call_id, "output": output}),
                }),
                Some(Call::Action) | None => events.push(Event::ActionResult {
                    call_id,
                    output,
                    status,
                }),
            }
        }
    }

    fn result(&mut self, frame: &Value, events: &mut Vec<Event>) {
        events.extend(self.result_usage(frame));
        let subtype = frame["subtype"].as_str().unwrap_or("");
        let is_error = frame.get("is_error").and_then(Value::as_bool) == Some(true);
        let ending = if subtype == "success" && !is_error {
            Ending::Success
        } else {
            let message = error_message(frame, subtype);
            events.push(Event::Error {
                message: message.clone(),
            });
            Ending::Failed(message)
        };
        self.ending = Some(ending);
    }

    /// Remembers the usage of an assistant message the first time its id is seen.
    fn count_usage(&mut self, message: &Value) {
        let Some(usage) = message.get("usage").filter(|u| u.is_object()) else {
            return;
        };
        if message["model"] == "<synthetic>" {
            // A notice Claude Code made up (an API error), not a model call.
            return;
        }
        if let Some(id) = message.get("id").and_then(Value::as_str)
            && !self.counted.insert(id.to_string())
        {
            return;
        }
        let n = |k: &str| usage.get(k).and_then(Value::as_u64).unwrap_or(0);
        let cache_read = n("cache_read_input_tokens");
        self.pending_usage.push(MessageUsage {
            model: message["model"].as_str().map(str::to_string),
            input: n("input_tokens") + n("cache_creation_input_tokens") + cache_read,
            output: n("output_tokens"),
            cache_read,
        });
    }

    /// The `usage` events of a `result` frame: one per model of `modelUsage`, each with its
    /// reported cost. Without `modelUsage`, the per-message tokens with the total cost.
    fn result_usage(&mut self, frame: &Value) -> Vec<Event> {
        let total_cost = frame.get("total_cost_usd").and_then(Value::as_f64);
        let mut events = Vec::new();
        if let Some(models) = frame
            .get("model_usage_since_last_result")
            .and_then(Value::as_object)
        {
            // Exact per-model tokens and cost of this result alone.
            let (per_model, _) = model_events(models);
            events.extend(per_model);
        } else if let Some(models) = frame.get("modelUsage").and_then(Value::as_object) {
            // Older versions: the process's totals per model; `total_cost_usd` covers what no
            // model accounts for.
            let (per_model, cost) = model_events(models);
            events.extend(per_model);
            let reported = self.cost_reported + cost;
            self.cost_reported = match total_cost.filter(|total| total - reported > 1e-9) {
                Some(total) => {
                    events.push(cost_only(total - reported));
                    total
                }
                None => reported,
            };
        } else {
            let mut tokens = MessageUsage::default();
            for usage in self.pending_usage.drain(..) {
                tokens.model = usage.model.or(tokens.model);
                tokens.input += usage.input;
                tokens.output += usage.output;
                tokens.cache_read += usage.cache_read;
            }
            let cost = total_cost.map(|total| (total - self.cost_reported).max(0.0));
            self.cost_reported = total_cost.unwrap_or(self.cost_reported);
            if tokens.input + tokens.output > 0 || cost.is_some_and(|c| c > 0.0) {
                events.push(Event::Usage {
                    input_tokens: tokens.input,
                    output_tokens: tokens.output,
                    cache_read_tokens: tokens.cache_read,
                    cost_usd: cost,
                    model: tokens.model.map(|m| qualified(&m)),
                });
            }
        }
        self.pending_usage.clear();
        events
    }
}

/// One `usage` event per model of a `modelUsage`-shaped map, and the cost they carry.
fn model_events(models: &Map<String, Value>) -> (Vec<Event>, f64) {
    let mut cost_sum = 0.0;
    let events = models
        .iter()
        .map(|(model, usage)| {
            let n = |k: &str| usage.get(k).and_then(Value::as_u64).unwrap_or(0);
            let cost = usage.get("costUSD").and_then(Value::as_f64);
            cost_sum += cost.unwrap_or(0.0);
            let cache_read = n("cacheReadInputTokens");
            Event::Usage {
                input_tokens: n("inputTokens") + n("cacheCreationInputTokens") + cache_read,
                output_tokens: n("outputTokens"),
                cache_read_tokens: cache_read,
                cost_usd: cost,
                model: Some(qualified(model)),
            }
        })
        .collect();
    (events, cost_sum)
}

fn cost_only(usd: f64) -> Event {
    Event::Usage {
        input_tokens: 0,
        output_tokens: 0,
        cache_read_tokens: 0,
        cost_usd: Some(usd),
        model: None,
    }
}

/// `anthropic/<model>`, for the price table and reports.
fn qualified(model: &str) -> String {
    if model.contains('/') {
        model.to_string()
    } else {
        format!("anthropic/{model}")
    }
}

fn blocks(message: &Value) -> impl Iterator<Item = &Value> {
    message
        .get("content")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
}

/// A tool result's content: its text when it is text (a string, or text blocks), else the JSON.
fn result_output(content: Option<&Value>) -> Value {
    match content {
        None => Value::Null,
        Some(Value::Array(parts)) => {
            let texts: Option<Vec<&str>> = parts
                .iter()
                .map(|p| {
                    (p.get("type").and_then(Value::as_str) == Some("text"))
                        .then(|| p["text"].as_str())
                        .flatten()
                })
                .collect();
            match texts {
                Some(texts) => Value::String(texts.join("\n")),
                None => Value::Array(parts.clone()),
            }
        }
        Some(other) => other.clone(),
    }
}

/// Why a `result` frame says the turn failed: its `result` text, else its `errors`, else
/// nothing more, behind the reason the frame gives. Claude Code reports an API error as
/// `subtype: "success"` with `is_error: true` and `terminal_reason: "api_error"`: the reason
/// is the terminal reason, else a subtype other than `success`, so the message never calls a
/// failure a success.
pub(super) fn error_message(frame: &Value, subtype: &str) -> String {
    let text = frame
        .get("result")
        .and_then(Value::as_str)
        .filter(|s| !s.trim().is_empty())
        .map(str::to_string)
        .or_else(|| {
            let errors: Vec<String> = frame
                .get("errors")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .map(|e| e.as_str().map_or_else(|| e.to_string(), str::to_string))
                .collect();
            (!errors.is_empty()).then(|| errors.join("; "))
        });
    let reason = frame
        .get("terminal_reason")
        .and_then(Value::as_str)
        .filter(|r| !r.is_empty() && *r != "completed")
        .or((!subtype.is_empty() && subtype != "success").then_some(subtype))
        .unwrap_or("error");
    match text {
        Some(text) => format!("Claude Code's turn failed ({reason}): {text}"),
        None => format!("Claude Code's turn failed ({reason})"),
    }
}

fn custom(kind: &str, data: Value) -> Event {
    Event::Custom {
        name: format!("claude-code:{kind}"),
        data: match data {
            Value::Object(_) => data,
            other => Value::Object(Map::from_iter([("value".to_string(), other)])),
        },
    }
}

/// Whether a `Task` result says the subagent was only launched, to finish in the background.
fn launched_in_background(frame: &Value) -> bool {
    let meta = &frame["tool_use_result"];
    meta.get("isAsync").and_then(Value::as_bool) == Some(true)
        || meta.get("status").and_then(Value::as_str) == Some("async_launched")
}

/// Whether the permission check refused call `call_id` (`tool_result_meta` says so).
fn rejected(frame: &Value, call_id: &str) -> bool {
    frame
        .get("tool_result_meta")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter(|meta| meta["id"] == call_id)
        .any(|meta| {
            meta["permission_decision"]["decision"] == "reject"
                || meta["non_execution_kind"]
                    .as_str()
                    .is_some_and(|kind| kind.ends_with("rejected"))
        })
}
