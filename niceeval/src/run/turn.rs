//! One exchange with the agent: the [`Turn`] that `t.send` returns, derived from the events the
//! agent emitted during it, and the link back to its run that lets assertions made on a turn
//! (`turn.called_tool(..)`, `turn.output_equals(..)`) be recorded and evaluated over the turn's
//! slice of the run's event stream.

use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::base::event::{Event, Text, Usage};
use crate::checks::scope::{Scoped, ScopedCheck};
use crate::run::record::Record;

/// How a turn ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TurnStatus {
    /// The agent answered.
    Completed,
    /// The agent failed (an `error` event, an agent error, a crash).
    Failed,
    /// The agent asked for human input (`input.requested`) and is parked until `t.respond`.
    Waiting,
}

/// The result of one `t.send` (or `t.respond`).
///
/// Besides its fields, a turn carries a hidden link to the run it belongs to: the scoped
/// assertions called on it (`turn.called_tool("x")`, `turn.succeeded()`, ...,
/// `turn.output_equals(v)`) are recorded in that run and evaluated after the body, over this
/// turn's events only. The link is not serialized and does not take part in `==`. A turn that did
/// not come from `t.send`/`t.respond` (built with [`Turn::from_events`], deserialized) has no run:
/// assertions made on it are discarded, like those of [`crate::Eval::detached`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Turn {
    /// The last assistant message of this turn (empty when there is none). Shared with the
    /// event that carries it: a long reply is stored once.
    pub message: Text,
    /// Structured output: what the agent set with `EventSink::set_data`, else the message parsed
    /// as JSON when it is a JSON object or array.
    pub data: Option<Value>,
    /// How the turn ended.
    pub status: TurnStatus,
    /// This turn's events, starting with the user's message.
    pub events: Vec<Event>,
    /// Tokens spent in this turn.
    pub usage: Usage,
    /// 0-based position of this turn in the run.
    pub index: usize,
    /// Position of this turn's first event in the run's event stream.
    pub first_event: usize,
    /// The run this turn belongs to.
    #[serde(skip)]
    run: RunLink,
}

/// A turn's link to its run's record. Invisible to serde and `==`: two turns with the same
/// content are equal wherever they came from.
#[derive(Clone, Default)]
struct RunLink(Option<Arc<Record>>, bool);

impl PartialEq for RunLink {
    fn eq(&self, _: &RunLink) -> bool {
        true
    }
}

impl std::fmt::Debug for RunLink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.0.is_some() {
            "attached"
        } else {
            "detached"
        })
    }
}

impl Turn {
    /// Derives a turn from its events.
    ///
    /// ```
    /// use niceeval::{Event, Turn, TurnStatus};
    ///
    /// let turn = Turn::from_events(0, 0, vec![Event::user("hi"), Event::assistant(r#"{"ok":true}"#)], None);
    /// assert_eq!(turn.status, TurnStatus::Completed);
    /// assert_eq!(turn.data, Some(serde_json::json!({"ok": true})));
    /// ```
    pub fn from_events(
        index: usize,
        first_event: usize,
        events: Vec<Event>,
        data: Option<Value>,
    ) -> Turn {
        let message = Event::last_reply(&events).cloned().unwrap_or_default();
        let status = if events.iter().any(|e| matches!(e, Event::Error { .. })) {
            TurnStatus::Failed
        } else if events
            .iter()
            .any(|e| matches!(e, Event::InputRequested { .. }))
        {
            TurnStatus::Waiting
        } else {
            TurnStatus::Completed
        };
        let data = data.or_else(|| {
            let trimmed = message.trim();
            if trimmed.starts_with('{') || trimmed.starts_with('[') {
                serde_json::from_str(trimmed).ok()
            } else {
                None
            }
        });
        let usage = Usage::from_events(&events);
        Turn {
            message,
            data,
            status,
            events,
            usage,
            index,
            first_event,
            run: RunLink::default(),
        }
    }

    /// Links this turn to the run that produced it.
    pub(crate) fn attach(mut self, record: Arc<Record>) -> Turn {
        self.run = RunLink(Some(record), self.run.1);
        self
    }

    /// Marks the turn as one of an eval with a working copy (its workspace assertions then
    /// grade the turn's changes instead of saying there is no workspace).
    pub(crate) fn in_workspace(mut self, yes: bool) -> Turn {
        self.run.1 = yes;
        self
    }

    /// Whether the turn's eval has a working copy.
    pub(crate) fn has_workspace(&self) -> bool {
        self.run.1
    }

    /// Registers a scoped check over this turn's events, evaluated after the body returns and
    /// reported as `turn N: <check>` (N counting from 1). The turn-level counterpart of
    /// [`crate::Eval::scoped`]; the built-in turn assertions are made this way.
    pub fn scoped<C: ScopedCheck + 'static>(&self, check: C) -> Scoped<C> {
        let record = self.run.0.clone().unwrap_or_default();
        let range = self.first_event..self.first_event + self.events.len();
        Scoped::in_turn(record, check, range, format!("turn {}", self.index + 1))
    }

    /// The former name of [`Turn::scoped`].
    #[deprecated(since = "0.2.0", note = "renamed to `scoped`: `turn.scoped(check)`")]
    pub fn expect<C: ScopedCheck + 'static>(&self, check: C) -> Scoped<C> {
        self.scoped(check)
    }

    /// The `input.requested` payload when this turn is waiting for input.
    pub fn pending_request(&self) -> Option<&Value> {
        if self.status != TurnStatus::Waiting {
            return None;
        }
        self.events.iter().rev().find_map(|e| match e {
            Event::InputRequested { request } => Some(request),
            _ => None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_beats_waiting_and_plain_text_has_no_data() {
        let turn = Turn::from_events(
            0,
            0,
            vec![
                Event::InputRequested {
                    request: Value::Null,
                },
                Event::Error {
                    message: "x".into(),
                },
            ],
            None,
        );
        assert_eq!(turn.status, TurnStatus::Failed);
        let turn = Turn::from_events(0, 0, vec![Event::assistant("hello")], None);
        assert_eq!(turn.data, None);
        assert_eq!(turn.message, "hello");
    }

    #[test]
    fn waiting_turn_exposes_its_request() {
        let turn = Turn::from_events(
            0,
            0,
            vec![Event::InputRequested {
                request: serde_json::json!({"q": "approve?"}),
            }],
            None,
        );
        assert_eq!(turn.status, TurnStatus::Waiting);
        assert_eq!(turn.pending_request().unwrap()["q"], "approve?");
    }
}
