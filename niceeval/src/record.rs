//! The shared record of one run: assertion results, the work deferred until the body returns
//! (scoped checks, judge calls), the event log (including a turn still in flight), and a skip
//! request.
//!
//! The record lives behind an `Arc` shared by the [`crate::Eval`] handle, its [`crate::Turn`]s
//! and the engine, so a panic or a timeout in the body loses nothing recorded before it.

use std::sync::{Mutex, MutexGuard};

use crate::agent::EventSink;
use crate::assertion::AssertionResult;
use crate::event::Event;
use crate::scope::{Defer, Deferred};

/// Everything one run recorded; see the module docs.
#[derive(Default)]
pub(crate) struct Record {
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    results: Vec<AssertionResult>,
    deferred: Vec<Box<dyn Deferred>>,
    log: Vec<Event>,
    inflight: Option<EventSink>,
    skip: Option<String>,
}

/// What the engine takes out of the record once the body is done.
pub(crate) struct Taken {
    /// Value-assertion results, in the order they were recorded.
    pub results: Vec<AssertionResult>,
    /// Deferred work, in registration order.
    pub deferred: Vec<Box<dyn Deferred>>,
    /// The run's event log.
    pub log: Vec<Event>,
    /// The first skip reason given, if any.
    pub skip: Option<String>,
}

impl Record {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Records a value assertion's result.
    pub fn push_result(&self, result: AssertionResult) {
        self.lock().results.push(result);
    }

    /// Records a skip; the first reason wins.
    pub fn skip(&self, reason: String) {
        self.lock().skip.get_or_insert(reason);
    }

    /// Starts a turn: logs the user's message and remembers the sink receiving the agent's
    /// events, so a turn cut short by a panic or a timeout keeps what it emitted. Returns the
    /// index of the turn's first event in the log.
    pub fn begin_turn(&self, user: Event, sink: EventSink) -> usize {
        let mut state = self.lock();
        let first = state.log.len();
        state.log.push(user);
        state.inflight = Some(sink);
        first
    }

    /// Ends the turn in flight, logging the events it emitted.
    pub fn end_turn(&self, events: &[Event]) {
        let mut state = self.lock();
        state.inflight = None;
        state.log.extend_from_slice(events);
    }

    /// Takes everything recorded (draining a turn still in flight into the log).
    pub fn take(&self) -> Taken {
        let mut state = self.lock();
        if let Some(sink) = state.inflight.take() {
            let (events, _) = sink.drain();
            state.log.extend(events);
        }
        Taken {
            results: std::mem::take(&mut state.results),
            deferred: std::mem::take(&mut state.deferred),
            log: std::mem::take(&mut state.log),
            skip: state.skip.take(),
        }
    }
}

impl Defer for Record {
    fn defer(&self, work: Box<dyn Deferred>) {
        self.lock().deferred.push(work);
    }
}
