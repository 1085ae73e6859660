//! How the run (or a turn) ended and what the agent said: `succeeded`, `parked` and
//! `message_includes`.
//!
//! "The last exchange" of a scope is everything after its last user message (a `t.send` or a
//! `t.respond`); it is parked when it contains an `input.requested` event and no `error` event,
//! the same rule that gives a [`crate::Turn`] the status `Waiting`.

use std::fmt::Write as _;

use serde_json::Value;

use crate::base::assertion::Grade;
use crate::base::event::{Event, Role};
use crate::base::excerpt;
use crate::checks::expect::Pattern;
use crate::checks::scope::calls::LISTED;
use crate::checks::scope::{RunView, ScopedCheck};

/// The check behind [`Eval::succeeded`](crate::Eval::succeeded).
#[derive(Debug, Clone, Copy, Default)]
pub struct Succeeded;

/// The check behind [`Eval::parked`](crate::Eval::parked).
#[derive(Debug, Clone, Copy, Default)]
pub struct Parked;

/// The check behind [`Eval::message_includes`](crate::Eval::message_includes).
#[derive(Debug, Clone)]
pub struct MessageIncludes {
    pattern: Pattern,
}

impl MessageIncludes {
    /// Looks for `pattern` in assistant messages.
    pub fn new(pattern: impl Into<Pattern>) -> Self {
        MessageIncludes {
            pattern: pattern.into(),
        }
    }
}

/// Where the last exchange starts: just after the last user message (0 when there is none).
fn last_exchange(events: &[Event]) -> usize {
    events
        .iter()
        .rposition(|e| {
            matches!(
                e,
                Event::Message {
                    role: Role::User,
                    ..
                }
            )
        })
        .map_or(0, |i| i + 1)
}

/// The `error` events from `from` on, listed one per line.
fn errors(events: &[Event], from: usize) -> (usize, String) {
    let mut count = 0;
    let mut listed = String::new();
    for (at, event) in events.iter().enumerate().skip(from) {
        if let Event::Error { message } = event {
            if count < LISTED {
                let _ = write!(listed, "\n  #{at} {}", excerpt::quote_width(message, 120));
            }
            count += 1;
        }
    }
    if count > LISTED {
        let _ = write!(listed, "\n  … and {} more", count - LISTED);
    }
    (count, listed)
}

/// The last `input.requested` event from `from` on.
fn open_request(events: &[Event], from: usize) -> Option<(usize, &Value)> {
    events
        .iter()
        .enumerate()
        .skip(from)
        .rev()
        .find_map(|(at, e)| match e {
            Event::InputRequested { request } => Some((at, request)),
            _ => None,
        })
}

impl ScopedCheck for Succeeded {
    fn describe(&self) -> String {
        "succeeded()".to_string()
    }

    fn evaluate(&self, run: &RunView<'_>) -> Grade {
        let events = run.events;
        if events.is_empty() {
            return Grade::fail("there are no events: nothing was sent to the agent");
        }
        let (count, listed) = errors(events, 0);
        if count > 0 {
            return Grade::fail(format!("the agent failed: {count} error event(s):{listed}"));
        }
        if let Some((at, request)) = open_request(events, last_exchange(events)) {
            return Grade::fail(format!(
                "the run is parked: the agent asked for input at #{at} ({}) and nothing answered it; answer with t.respond(..) or assert t.parked()",
                excerpt::json(request)
            ));
        }
        Grade::pass(format!(
            "completed: {} event(s), no error, not waiting for input",
            events.len()
        ))
    }
}

impl ScopedCheck for Parked {
    fn describe(&self) -> String {
        "parked()".to_string()
    }

    fn evaluate(&self, run: &RunView<'_>) -> Grade {
        let events = run.events;
        if events.is_empty() {
            return Grade::fail("there are no events: nothing was sent to the agent");
        }
        let from = last_exchange(events);
        let (count, listed) = errors(events, from);
        if count > 0 {
            return Grade::fail(format!(
                "not parked: the last exchange failed with {count} error event(s):{listed}"
            ));
        }
        if let Some((at, request)) = open_request(events, from) {
            return Grade::pass(format!(
                "parked at #{at}, waiting for input: {}",
                excerpt::json(request)
            ));
        }
        Grade::fail(match open_request(events, 0) {
            Some((at, _)) => format!(
                "not parked: the input request at #{at} was answered (user message at #{}) and the agent asked nothing after it",
                from - 1
            ),
            None => "not parked: there is no input.requested event".to_string(),
        })
    }
}

impl ScopedCheck for MessageIncludes {
    fn describe(&self) -> String {
        format!("message_includes({})", self.pattern.display())
    }

    fn evaluate(&self, run: &RunView<'_>) -> Grade {
        let messages = run.events.iter().enumerate().filter_map(|(at, e)| match e {
            Event::Message {
                role: Role::Assistant,
                text,
            } => Some((at, text.as_str())),
            _ => None,
        });
        let mut seen = 0;
        let mut listed = String::new();
        for (at, text) in messages {
            if let Some(range) = self.pattern.find(text) {
                return Grade::pass(format!(
                    "found in the assistant message at #{at}: {}",
                    around(text, range)
                ));
            }
            if seen < LISTED {
                let _ = write!(listed, "\n  #{at} {}", excerpt::quote_width(text, 120));
            }
            seen += 1;
        }
        if seen == 0 {
            return Grade::fail(format!(
                "no assistant message to search for {}: the agent said nothing",
                self.pattern.display()
            ));
        }
        if seen > LISTED {
            let _ = write!(listed, "\n  … and {} more", seen - LISTED);
        }
        let verb = match self.pattern {
            Pattern::Regex(_) => "matches",
            _ => "contains",
        };
        Grade::fail(format!(
            "no assistant message {verb} {}; {seen} assistant message(s) seen:{listed}",
            self.pattern.display()
        ))
    }
}

/// The text around a match, so a reason points at it inside a long message.
fn around(text: &str, range: std::ops::Range<usize>) -> String {
    const AROUND: usize = 40;
    let start = text[..range.start]
        .char_indices()
        .rev()
        .nth(AROUND - 1)
        .map_or(0, |(i, _)| i);
    let end = text[range.end..]
        .char_indices()
        .nth(AROUND)
        .map_or(text.len(), |(i, _)| range.end + i);
    let mut shown = String::new();
    if start > 0 {
        shown.push('…');
    }
    shown.push_str(&text[start..end]);
    if end < text.len() {
        shown.push('…');
    }
    excerpt::quote(&shown)
}

#[cfg(test)]
mod doc_examples {
    //! The examples that were this file's doc tests while its items were public.

    #[test]
    fn example_1() {
        use crate::checks::scope::{RunView, ScopedCheck, Succeeded};
        use crate::{Event, config::Config};

        let events = vec![
            Event::user("hi"),
            Event::Error {
                message: "model overloaded".into(),
            },
        ];
        let grade = Succeeded.evaluate(&RunView {
            events: &events,
            config: &Config::default(),
        });
        assert_eq!(grade.score, 0.0);
        assert!(
            grade.reason.contains(r#"#1 "model overloaded""#),
            "{}",
            grade.reason
        );
    }

    #[test]
    fn example_2() {
        use crate::checks::scope::{Parked, RunView, ScopedCheck};
        use crate::{Event, config::Config, json};

        let events = vec![
            Event::user("delete it"),
            Event::InputRequested {
                request: json!({ "confirm": "delete?" }),
            },
        ];
        let grade = Parked.evaluate(&RunView {
            events: &events,
            config: &Config::default(),
        });
        assert_eq!(grade.score, 1.0);
    }
}
