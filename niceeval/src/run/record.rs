//! The shared record of one run: assertion results, the checks registered for after the body
//! (one list, whatever each check is), the event log (including a turn still in flight), and a
//! skip request.
//!
//! The record lives behind an `Arc` shared by the [`crate::Eval`] handle, its [`crate::Turn`]s
//! and the engine, so a panic or a timeout in the body loses nothing recorded before it.

use std::sync::{Arc, Mutex, MutexGuard};

use crate::agents::agent::EventSink;
use crate::base::assertion::AssertionResult;
use crate::base::event::Event;
use crate::checks::scope::{Defer, Deferred};
use crate::resources::workspace::{Tree, Workspace};

/// Everything one run recorded; see the module docs.
#[derive(Default)]
pub(crate) struct Record {
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    results: Vec<AssertionResult>,
    deferred: Vec<Deferred>,
    log: Vec<Event>,
    inflight: Option<EventSink>,
    /// The working copy and its snapshot from before the turn in flight, so a turn cut short
    /// (a timeout, a panic) still records what it changed.
    workspace_before: Option<(Arc<Workspace>, Tree)>,
    skip: Option<String>,
}

/// What the engine takes out of the record once the body is done.
pub(crate) struct Taken {
    /// Value-assertion results, in the order they were recorded.
    pub results: Vec<AssertionResult>,
    /// The checks registered for after the body, in registration order.
    pub deferred: Vec<Deferred>,
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
        state.workspace_before = None;
        state.log.extend_from_slice(events);
    }

    /// Logs events that came after the last turn (spans received late in the run).
    #[cfg(feature = "otel")]
    pub fn append(&self, events: Vec<Event>) {
        let mut state = self.lock();
        match &state.inflight {
            Some(sink) => events.into_iter().for_each(|e| sink.emit(e)),
            None => state.log.extend(events),
        }
    }

    /// Remembers the working copy's snapshot from before the turn now starting.
    pub fn turn_workspace(&self, workspace: Arc<Workspace>, before: Tree) {
        self.lock().workspace_before = Some((workspace, before));
    }

    /// For a turn that never ended (the body timed out or panicked in it): records what it
    /// changed in the working copy as its last event. Blocks on git; call it off the runtime.
    pub fn settle_workspace(&self) {
        let pending = {
            let mut state = self.lock();
            let pending = state.workspace_before.take();
            match (state.inflight.clone(), pending) {
                (Some(sink), Some(pending)) => Some((sink, pending)),
                _ => None,
            }
        };
        if let Some((sink, (workspace, before))) = pending {
            let event = workspace
                .snapshot()
                .and_then(|after| workspace.change_event(&before, &after));
            match event {
                Ok(Some(event)) => sink.emit(event),
                Ok(None) => {}
                Err(e) => sink.emit(Event::Error {
                    message: format!("cannot tell what the turn changed in the working copy: {e}"),
                }),
            }
        }
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
    fn defer(&self, work: Deferred) {
        self.lock().deferred.push(work);
    }
}
