//! The event-stream primitives: `event(kind)`, `not_event(kind)`, `event_order([..])` and
//! `events_satisfy(label, f)`. Kinds are the wire names of [`Event::KINDS`]; an unknown kind is
//! an execution error on the assertion that lists the valid ones, never a silent failure.

use std::fmt::Write as _;

use crate::base::assertion::Grade;
use crate::base::event::Event;
use crate::base::excerpt;
use crate::checks::scope::calls::{self, LISTED};
use crate::checks::scope::{RunView, Scoped, ScopedCheck};

/// The option of `event`, chained on the registration builder.
impl Scoped<EventCheck> {
    /// Asks for exactly `n` events of the kind.
    pub fn count(self, n: usize) -> Self {
        self.map_check(|c| c.count(n))
    }
}

/// `Err` with an execution error naming the valid kinds when `kind` is not one of them.
fn known(kind: &str) -> Result<(), Grade> {
    if Event::KINDS.contains(&kind) {
        Ok(())
    } else {
        Err(Grade::error(format!(
            "unknown event kind {}; valid kinds: {}",
            excerpt::quote(kind),
            Event::KINDS.join(", ")
        )))
    }
}

/// `message ×4, action.called ×2, ...` or `no events`.
fn kinds_seen(events: &[Event]) -> String {
    calls::histogram(events.iter().map(Event::kind))
        .map_or("there are no events".to_string(), |h| {
            format!("events seen: {h}")
        })
}

/// The events of `kind`, one per line as compact JSON, at most [`LISTED`].
fn list_events(events: &[Event], kind: &str, count: usize) -> String {
    let mut out = String::new();
    for (at, event) in events
        .iter()
        .enumerate()
        .filter(|(_, e)| e.kind() == kind)
        .take(LISTED)
    {
        let json = serde_json::to_string(event).unwrap_or_else(|e| format!("<{e}>"));
        let _ = write!(out, "\n  #{at} {}", excerpt::elide(&json, 120));
    }
    if count > LISTED {
        let _ = write!(out, "\n  … and {} more", count - LISTED);
    }
    out
}

/// The check behind [`Eval::event`](crate::Eval::event).
#[derive(Debug, Clone)]
pub struct EventCheck {
    kind: String,
    count: Option<usize>,
}

impl EventCheck {
    /// Events of `kind`.
    pub fn new(kind: impl Into<String>) -> Self {
        EventCheck {
            kind: kind.into(),
            count: None,
        }
    }

    /// Exactly `n` of them.
    pub fn count(mut self, n: usize) -> Self {
        self.count = Some(n);
        self
    }
}

impl ScopedCheck for EventCheck {
    fn describe(&self) -> String {
        let mut name = format!("event({})", excerpt::quote(&self.kind));
        if let Some(n) = self.count {
            let _ = write!(name, ".count({n})");
        }
        name
    }

    fn evaluate(&self, run: &RunView<'_>) -> Grade {
        if let Err(error) = known(&self.kind) {
            return error;
        }
        let mut found = 0usize;
        let mut first = None;
        for (at, event) in run.events.iter().enumerate() {
            if event.kind() == self.kind {
                found += 1;
                first.get_or_insert(at);
            }
        }
        let kind = excerpt::quote(&self.kind);
        match (self.count, first) {
            (None, Some(at)) => Grade::pass(format!("{found} {kind} event(s), first at #{at}")),
            (None, None) => Grade::fail(format!("no {kind} event; {}", kinds_seen(run.events))),
            (Some(n), _) if n == found => Grade::pass(format!("exactly {n} {kind} event(s)")),
            (Some(n), None) => Grade::fail(format!(
                "expected exactly {n} {kind} event(s), found none; {}",
                kinds_seen(run.events)
            )),
            (Some(n), Some(_)) => Grade::fail(format!(
                "expected exactly {n} {kind} event(s), found {found}:{}",
                list_events(run.events, &self.kind, found)
            )),
        }
    }
}

/// The check behind [`Eval::not_event`](crate::Eval::not_event).
#[derive(Debug, Clone)]
pub struct NoEvent {
    kind: String,
}

impl NoEvent {
    /// No event of `kind`.
    pub fn new(kind: impl Into<String>) -> Self {
        NoEvent { kind: kind.into() }
    }
}

impl ScopedCheck for NoEvent {
    fn describe(&self) -> String {
        format!("not_event({})", excerpt::quote(&self.kind))
    }

    fn evaluate(&self, run: &RunView<'_>) -> Grade {
        if let Err(error) = known(&self.kind) {
            return error;
        }
        let found = run.events.iter().filter(|e| e.kind() == self.kind).count();
        let kind = excerpt::quote(&self.kind);
        if found == 0 {
            return Grade::pass(format!("no {kind} event in {} event(s)", run.events.len()));
        }
        Grade::fail(format!(
            "found {found} {kind} event(s):{}",
            list_events(run.events, &self.kind, found)
        ))
    }
}

/// The check behind [`Eval::event_order`](crate::Eval::event_order).
#[derive(Debug, Clone)]
pub struct EventOrder {
    kinds: Vec<String>,
}

impl EventOrder {
    /// Events of these kinds, in this relative order.
    pub fn new(kinds: impl IntoIterator<Item = impl Into<String>>) -> Self {
        EventOrder {
            kinds: kinds.into_iter().map(Into::into).collect(),
        }
    }
}

impl ScopedCheck for EventOrder {
    fn describe(&self) -> String {
        let kinds: Vec<String> = self.kinds.iter().map(|k| excerpt::quote(k)).collect();
        format!("event_order([{}])", kinds.join(", "))
    }

    fn evaluate(&self, run: &RunView<'_>) -> Grade {
        if self.kinds.is_empty() {
            return Grade::error(
                "event_order([]) has no kinds to order; list at least one event kind",
            );
        }
        for kind in &self.kinds {
            if let Err(error) = known(kind) {
                return error;
            }
        }
        let mut found: Vec<usize> = Vec::with_capacity(self.kinds.len());
        for (at, event) in run.events.iter().enumerate() {
            if event.kind() == self.kinds[found.len()] {
                found.push(at);
                if found.len() == self.kinds.len() {
                    break;
                }
            }
        }
        let steps = |n: usize| {
            self.kinds[..n]
                .iter()
                .zip(&found)
                .map(|(kind, at)| format!("{kind} (#{at})"))
                .collect::<Vec<_>>()
                .join(" → ")
        };
        if found.len() == self.kinds.len() {
            return Grade::pass(format!("in order: {}", steps(found.len())));
        }
        let missing = &self.kinds[found.len()];
        let head = match found.last() {
            None => format!("no {missing} event"),
            Some(_) => format!(
                "found {} but no {missing} event after it",
                steps(found.len())
            ),
        };
        let sequence = calls::sequence(run.events.iter().map(Event::kind));
        Grade::fail(if sequence.is_empty() {
            format!("{head}; there are no events")
        } else {
            format!("{head}; events in order: {sequence}")
        })
    }
}

/// A boxed predicate over a scope's events.
type EventPredicate = Box<dyn Fn(&[Event]) -> bool + Send + Sync>;

/// The check behind [`Eval::events_satisfy`](crate::Eval::events_satisfy).
pub struct EventsSatisfy {
    label: String,
    predicate: EventPredicate,
}

impl EventsSatisfy {
    /// `predicate` over the events, named `label` in reports.
    pub fn new(
        label: impl Into<String>,
        predicate: impl Fn(&[Event]) -> bool + Send + Sync + 'static,
    ) -> Self {
        EventsSatisfy {
            label: label.into(),
            predicate: Box::new(predicate),
        }
    }
}

impl std::fmt::Debug for EventsSatisfy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EventsSatisfy")
            .field("label", &self.label)
            .finish_non_exhaustive()
    }
}

impl ScopedCheck for EventsSatisfy {
    fn describe(&self) -> String {
        format!("events_satisfy({})", excerpt::quote(&self.label))
    }

    fn evaluate(&self, run: &RunView<'_>) -> Grade {
        let holds = (self.predicate)(run.events);
        let over = format!("over {} event(s)", run.events.len());
        if holds {
            Grade::pass(format!("{} holds {over}", excerpt::quote(&self.label)))
        } else {
            Grade::fail(format!(
                "{} does not hold {over}; {}",
                excerpt::quote(&self.label),
                kinds_seen(run.events)
            ))
        }
    }
}

#[cfg(test)]
mod doc_examples {
    //! The examples that were this file's doc tests while its items were public.

    #[test]
    fn example_1() {
        use crate::checks::scope::{EventCheck, RunView, ScopedCheck};
        use crate::{Event, config::Config};

        let events = vec![Event::user("hi"), Event::assistant("hello")];
        let view = RunView {
            events: &events,
            config: &Config::default(),
        };
        assert_eq!(
            EventCheck::new("message").count(2).evaluate(&view).score,
            1.0
        );
        let typo = EventCheck::new("tool.called").evaluate(&view);
        assert!(
            typo.error
                .unwrap()
                .contains("valid kinds: message, action.called")
        );
    }
}
