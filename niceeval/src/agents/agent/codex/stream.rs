//! `codex exec --json` output → niceeval [`Event`]s.
//!
//! Codex prints one JSON object per line, tagged by `type`: `thread.started` (the thread id
//! to resume), `turn.started`, `item.started` / `item.updated` / `item.completed` (each
//! carrying an `item` with an `id` and an item `type`), `turn.completed` (with the turn's
//! usage), `turn.failed`, and `error`. [`Stream`] turns them into events as they arrive and
//! keeps what decides the turn's outcome.

use std::collections::HashSet;

use serde_json::{Value, json};

use crate::agents::agent::EventSink;
use crate::agents::agent::subprocess::TurnError;
use crate::base::event::{ActionStatus, Event};

/// Why a Codex turn did not complete, in Codex's own words when it gave any.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum Unfinished {
    /// `turn.failed`, with its message (or the last `error` before it).
    #[error("codex: the turn failed: {0}")]
    Failed(String),
    /// The output ended after an `error` and without `turn.completed`.
    #[error("codex: {0}")]
    Error(String),
    /// The output ended without `turn.completed` or an error.
    #[error("codex ended without finishing the turn (no `turn.completed`)")]
    NoCompletion,
}

/// Token counts as Codex reports them in `turn.completed`: totals for the whole thread, so
/// a resumed thread's counts include the earlier turns'.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Totals {
    pub(crate) input: u64,
    pub(crate) cached: u64,
    pub(crate) output: u64,
}

impl Totals {
    /// What was spent since `earlier`; all of `self` when a count went down (Codex started
    /// counting afresh).
    fn since(self, earlier: Totals) -> Totals {
        if self.input < earlier.input
            || self.cached < earlier.cached
            || self.output < earlier.output
        {
            return self;
        }
        Totals {
            input: self.input - earlier.input,
            cached: self.cached - earlier.cached,
            output: self.output - earlier.output,
        }
    }
}

/// The state of one `codex exec` run's output.
#[derive(Debug, Default)]
pub(crate) struct Stream {
    /// `openai/<model>` for the usage events, when the model is known.
    model: Option<String>,
    /// The thread's totals before this turn (zero for a new thread).
    before: Totals,
    /// The thread's totals after this turn, once it completed.
    after: Option<Totals>,
    /// Call ids whose `action.called` was emitted.
    called: HashSet<String>,
    thread_id: Option<String>,
    outcome: Outcome,
    /// The message of the last `error` frame: the reason if the turn never completes.
    last_error: Option<String>,
}

#[derive(Debug, Default, PartialEq)]
enum Outcome {
    #[default]
    Running,
    Completed,
    Failed(String),
}

/// Which frame an item came in.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Phase {
    Started,
    Updated,
    Completed,
}

impl Stream {
    /// A stream whose usage events name `model` (`openai/<model>`) when it is known, for a
    /// thread that had spent `before` in earlier turns.
    pub(crate) fn new(model: Option<&str>, before: Totals) -> Stream {
        Stream {
            before,
            model: model.map(|m| {
                if m.contains('/') {
                    m.to_string()
                } else {
                    format!("openai/{m}")
                }
            }),
            ..Stream::default()
        }
    }

    /// The thread id from `thread.started`, once seen.
    pub(crate) fn thread_id(&self) -> Option<&str> {
        self.thread_id.as_deref()
    }

    /// The thread's token totals after this turn, once it completed.
    pub(crate) fn totals(&self) -> Option<Totals> {
        self.after
    }

    /// Reads stdout line `number`; a line that is not a JSON object with a `type` fails the
    /// turn, naming the line.
    pub(crate) fn line(
        &mut self,
        line: &[u8],
        number: usize,
        sink: &EventSink,
    ) -> Result<(), TurnError> {
        let text = String::from_utf8_lossy(line);
        let text = text.trim();
        if text.is_empty() {
            return Ok(());
        }
        let frame: Value = serde_json::from_str(text).map_err(|source| TurnError::Line {
            message: format!(
                "codex stdout line {number} is not JSON ({source}): {}",
                crate::base::excerpt::quote(text)
            ),
            source,
        })?;
        if !frame.get("type").is_some_and(Value::is_string) {
            return Err(TurnError::Failed(format!(
                "codex stdout line {number} is not a codex event (no \"type\"): {}",
                crate::base::excerpt::quote(text)
            )));
        }
        self.frame(frame, sink);
        Ok(())
    }

    /// Maps one frame to events.
    pub(crate) fn frame(&mut self, frame: Value, sink: &EventSink) {
        let kind = frame["type"].as_str().unwrap_or_default().to_string();
        match kind.as_str() {
            "thread.started" => {
                if let Some(id) = frame["thread_id"].as_str() {
                    self.thread_id = Some(id.to_string());
                }
            }
            "turn.started" => {}
            "item.started" => self.item(&frame["item"], Phase::Started, sink),
            "item.updated" => self.item(&frame["item"], Phase::Updated, sink),
            "item.completed" => self.item(&frame["item"], Phase::Completed, sink),
            "turn.completed" => {
                let usage = &frame["usage"];
                let count = |key: &str| usage[key].as_u64().unwrap_or(0);
                let totals = Totals {
                    input: count("input_tokens"),
                    cached: count("cached_input_tokens"),
                    output: count("output_tokens"),
                };
                let turn = totals.since(self.before);
                self.after = Some(totals);
                sink.emit(Event::Usage {
                    // Codex's input count includes the cached tokens, as niceeval's does.
                    input_tokens: turn.input,
                    output_tokens: turn.output,
                    cache_read_tokens: turn.cached,
                    cost_usd: None,
                    model: self.model.clone(),
                });
                self.outcome = Outcome::Completed;
            }
            "turn.failed" => {
                let message = frame["error"]["message"]
                    .as_str()
                    .map(str::to_string)
                    .or_else(|| self.last_error.clone())
                    .unwrap_or_else(|| "the turn failed".to_string());
                self.outcome = Outcome::Failed(message);
            }
            "error" => {
                // Also sent for errors codex retries; the turn fails only if it never completes.
                if let Some(message) = frame["message"].as_str() {
                    self.last_error = Some(message.to_string());
                }
                custom(sink, &kind, frame);
            }
            _ => custom(sink, &kind, frame),
        }
    }

    /// The turn's outcome once the output ended: `Err` with the reason unless it completed.
    pub(crate) fn finish(&self) -> Result<(), Unfinished> {
        match &self.outcome {
            Outcome::Completed => Ok(()),
            Outcome::Failed(message) => Err(Unfinished::Failed(message.clone())),
            Outcome::Running => Err(match &self.last_error {
                Some(message) => Unfinished::Error(message.clone()),
                None => Unfinished::NoCompletion,
            }),
        }
    }

    fn item(&mut self, item: &Value, phase: Phase, sink: &EventSink) {
        let id = item["id"].as_str().unwrap_or("item").to_string();
        let kind = item["type"].as_str().unwrap_or("unknown");
        match kind {
            "command_execution" => {
                let input = json!({ "command": item["command"] });
                self.call(sink, &id, "command_execution", input);
                if phase == Phase::Completed {
                    let exit_code = item["exit_code"].as_i64();
                    let status = match item["status"].as_str() {
                        Some("declined") => ActionStatus::Rejected,
                        Some("failed") => ActionStatus::Failed,
                        _ if exit_code.is_some_and(|c| c != 0) => ActionStatus::Failed,
                        _ => ActionStatus::Completed,
                    };
                    let output = json!({
                        "exit_code": item["exit_code"],
                        "output": item["aggregated_output"],
                    });
                    result(sink, &id, output, status);
                }
            }
            "file_change" => {
                let changes = item["changes"].as_array().map(Vec::as_slice).unwrap_or(&[]);
                for (i, change) in changes.iter().enumerate() {
                    let call_id = format!("{id}.{i}");
                    self.call(sink, &call_id, "file_change", change.clone());
                    if phase == Phase::Completed {
                        let status = match item["status"].as_str() {
                            Some("failed" | "declined") => ActionStatus::Failed,
                            _ => ActionStatus::Completed,
                        };
                        result(sink, &call_id, json!({ "status": item["status"] }), status);
                    }
                }
            }
            "mcp_tool_call" => {
                let server = item["server"].as_str().unwrap_or("unknown");
                let tool = item["tool"].as_str().unwrap_or("unknown");
                let name = format!("mcp__{server}__{tool}");
                self.call(sink, &id, &name, item["arguments"].clone());
                if phase == Phase::Completed {
                    let error = item["error"]["message"].as_str();
                    let failed = error.is_some() || item["status"] == "failed";
                    let output = match error {
                        Some(message) => json!({ "error": message }),
                        None => item["result"].clone(),
                    };
                    let status = if failed {
                        ActionStatus::Failed
                    } else {
                        ActionStatus::Completed
                    };
                    result(sink, &id, output, status);
                }
            }
            "web_search" => {
                let input = json!({ "query": item["query"], "action": item["action"] });
                self.call(sink, &id, "web_search", input);
                if phase == Phase::Completed {
                    result(sink, &id, Value::Null, ActionStatus::Completed);
                }
            }
            "agent_message" if phase == Phase::Completed => {
                sink.say(item["text"].as_str().unwrap_or_default());
            }
            "reasoning" if phase == Phase::Completed => {
                sink.emit(Event::Thinking {
                    text: item["text"].as_str().unwrap_or_default().into(),
                });
            }
            // Messages and reasoning are taken whole, when they complete; other items (to-do
            // lists, plans, non-fatal `error` notices, collab calls, ...) are kept as they
            // ended.
            _ if phase == Phase::Completed => custom(sink, kind, item.clone()),
            _ => {}
        }
    }

    /// Emits `action.called` for `call_id` unless it was emitted already.
    fn call(&mut self, sink: &EventSink, call_id: &str, name: &str, input: Value) {
        if self.called.insert(call_id.to_string()) {
            sink.emit(Event::ActionCalled {
                call_id: call_id.to_string(),
                name: name.to_string(),
                input,
            });
        }
    }
}

fn result(sink: &EventSink, call_id: &str, output: Value, status: ActionStatus) {
    sink.emit(Event::ActionResult {
        call_id: call_id.to_string(),
        output,
        status,
    });
}

fn custom(sink: &EventSink, kind: &str, data: Value) {
    sink.emit(Event::Custom {
        name: format!("codex:{kind}"),
        data,
    });
}
