//! The shared record of one run: assertion results, assertions waiting to be evaluated after
//! the body, the event log (including a turn still in flight), and a skip request.
//!
//! The record lives behind an `Arc` shared by the [`crate::Eval`] handle, its [`crate::Turn`]s
//! and the runner, so a panic or a timeout in the body loses nothing recorded before it.

use std::sync::{Mutex, MutexGuard};

use crate::agent::EventSink;
use crate::assertion::AssertionResult;
use crate::event::Event;
use crate::scope::Pending;

/// See the module docs.
#[derive(Default)]
pub(crate) struct Record {
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    results: Vec<AssertionResult>,
    pending: Vec<Pending>,
    log: Vec<Event>,
    inflight: Option<EventSink>,
    skip: Option<String>,
    /// Judge assertions, graded after the body by the judge pass.
    judges: Vec<crate::judge::PendingJudge>,
}

/// Everything recorded, taken out at the end of a run.
pub(crate) struct Taken {
    pub results: Vec<AssertionResult>,
    pub pending: Vec<Pending>,
    pub log: Vec<Event>,
    pub skip: Option<String>,
    /// Judge assertions waiting for the judge pass.
    pub judges: Vec<crate::judge::PendingJudge>,
}

impl Record {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub fn push_result(&self, result: AssertionResult) {
        self.lock().results.push(result);
    }

    pub fn push_pending(&self, pending: Pending) {
        self.lock().pending.push(pending);
    }

    pub fn push_judge(&self, judge: crate::judge::PendingJudge) {
        self.lock().judges.push(judge);
    }

    pub fn skip(&self, reason: String) {
        self.lock().skip.get_or_insert(reason);
    }

    /// Starts a turn: logs the user's message and remembers the sink so a crash mid-turn keeps
    /// what the agent emitted so far. Returns the index of the turn's first event.
    pub fn begin_turn(&self, user: Event, sink: EventSink) -> usize {
        let mut state = self.lock();
        let first = state.log.len();
        state.log.push(user);
        state.inflight = Some(sink);
        first
    }

    /// Ends a turn, appending its events to the log.
    pub fn end_turn(&self, events: &[Event]) {
        let mut state = self.lock();
        state.inflight = None;
        state.log.extend_from_slice(events);
    }

    /// Takes everything out, folding in a turn still in flight.
    pub fn take(&self) -> Taken {
        let mut state = self.lock();
        if let Some(sink) = state.inflight.take() {
            let (events, _) = sink.drain();
            state.log.extend(events);
        }
        Taken {
            results: std::mem::take(&mut state.results),
            pending: std::mem::take(&mut state.pending),
            log: std::mem::take(&mut state.log),
            skip: state.skip.take(),
            judges: std::mem::take(&mut state.judges),
        }
    }
}
