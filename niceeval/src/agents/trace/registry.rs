//! Which run a span belongs to: every run registers its trace id; received spans go to the run
//! of their trace (or of the run their resource names), spans of unknown traces are counted,
//! spans of runs already finished are counted as late. A run keeps at most
//! [`MAX_SPANS_PER_RUN`] spans; the rest are counted as dropped.

use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};
use std::time::{Duration, Instant};

use super::otlp::Batch;
use super::span::{Span, random_id, traceparent};

/// The most spans one run keeps.
pub(crate) const MAX_SPANS_PER_RUN: usize = 20_000;
/// How many finished runs are remembered, so their late spans are told from unknown ones.
const REMEMBERED: usize = 4096;

/// Counts of spans that reached no run.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Counts {
    /// Spans of traces no run knows.
    pub unknown: u64,
    /// Spans that arrived after their run finished.
    pub late: u64,
    /// Spans over a run's cap.
    pub dropped: u64,
    /// Requests refused as malformed or too large.
    pub rejected: u64,
}

/// Finished runs' trace ids, oldest first, and as a set.
type Finished = (VecDeque<[u8; 16]>, HashSet<[u8; 16]>);

#[derive(Default)]
pub(crate) struct Registry {
    runs: Mutex<HashMap<[u8; 16], Arc<Collector>>>,
    finished: Mutex<Finished>,
    unknown: AtomicU64,
    late: AtomicU64,
    dropped: AtomicU64,
    rejected: AtomicU64,
    last_rejection: Mutex<Option<String>>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// The process's registry.
pub(crate) fn registry() -> &'static Registry {
    static REGISTRY: OnceLock<Registry> = OnceLock::new();
    REGISTRY.get_or_init(Registry::default)
}

impl Registry {
    /// Hands every span of `batch` to its run; returns how many reached one.
    pub(crate) fn ingest(&self, batch: Batch) -> usize {
        let runs = lock(&self.runs);
        let mut placed = 0;
        let mut missed: Vec<[u8; 16]> = Vec::new();
        for (hint, spans) in batch.groups {
            let by_hint = hint.and_then(|h| runs.get(&h));
            let mut last: Option<([u8; 16], Arc<Collector>)> = None;
            let mut pending: Vec<Span> = Vec::new();
            for span in spans {
                let collector = match &last {
                    Some((id, c)) if *id == span.trace_id => Some(c.clone()),
                    _ => runs.get(&span.trace_id).or(by_hint).cloned(),
                };
                match collector {
                    Some(c) => {
                        if let Some((_, prev)) = &last
                            && !Arc::ptr_eq(prev, &c)
                        {
                            placed += prev.push(std::mem::take(&mut pending));
                        }
                        last = Some((span.trace_id, c));
                        pending.push(span);
                    }
                    None => missed.push(hint.unwrap_or(span.trace_id)),
                }
            }
            if let Some((_, c)) = last {
                placed += c.push(pending);
            }
        }
        drop(runs);
        if !missed.is_empty() {
            let finished = lock(&self.finished);
            for id in missed {
                if finished.1.contains(&id) {
                    self.late.fetch_add(1, Ordering::Relaxed);
                } else {
                    self.unknown.fetch_add(1, Ordering::Relaxed);
                }
            }
        }
        placed
    }

    /// Counts a refused request.
    pub(crate) fn reject(&self, message: String) {
        self.rejected.fetch_add(1, Ordering::Relaxed);
        *lock(&self.last_rejection) = Some(message);
    }

    /// What reached no run so far.
    pub(crate) fn counts(&self) -> Counts {
        Counts {
            unknown: self.unknown.load(Ordering::Relaxed),
            late: self.late.load(Ordering::Relaxed),
            dropped: self.dropped.load(Ordering::Relaxed),
            rejected: self.rejected.load(Ordering::Relaxed),
        }
    }

    /// The message of the last refused request.
    pub(crate) fn last_rejection(&self) -> Option<String> {
        lock(&self.last_rejection).clone()
    }

    fn finish(&self, trace_id: [u8; 16]) {
        lock(&self.runs).remove(&trace_id);
        let mut finished = lock(&self.finished);
        if finished.1.insert(trace_id) {
            finished.0.push_back(trace_id);
        }
        while finished.0.len() > REMEMBERED {
            if let Some(old) = finished.0.pop_front() {
                finished.1.remove(&old);
            }
        }
    }
}

/// The spans received for one run, not yet taken into its events.
pub(crate) struct Collector {
    state: Mutex<Collected>,
    arrived: tokio::sync::Notify,
}

#[derive(Default)]
struct Collected {
    spans: Vec<Span>,
    kept: usize,
    /// The span ids niceeval gave this run's turns (their spans' parents).
    turns: HashSet<[u8; 8]>,
}

impl Collector {
    fn push(&self, spans: Vec<Span>) -> usize {
        if spans.is_empty() {
            return 0;
        }
        let mut state = lock(&self.state);
        let room = MAX_SPANS_PER_RUN.saturating_sub(state.kept);
        let n = spans.len();
        let taken = n.min(room);
        state.spans.extend(spans.into_iter().take(taken));
        state.kept += taken;
        drop(state);
        if taken < n {
            registry()
                .dropped
                .fetch_add((n - taken) as u64, Ordering::Relaxed);
        }
        self.arrived.notify_waiters();
        taken
    }
}

/// One run's trace: registered while it lives, finished when dropped.
pub(crate) struct RunTrace {
    trace_id: [u8; 16],
    collector: Arc<Collector>,
}

impl std::fmt::Debug for RunTrace {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&super::span::hex(&self.trace_id))
    }
}

impl RunTrace {
    /// Registers a new run with a fresh trace id.
    pub(crate) fn start() -> Arc<RunTrace> {
        let trace_id = random_id();
        let collector = Arc::new(Collector {
            state: Mutex::new(Collected::default()),
            arrived: tokio::sync::Notify::new(),
        });
        lock(&registry().runs).insert(trace_id, collector.clone());
        Arc::new(RunTrace {
            trace_id,
            collector,
        })
    }

    /// The run's trace id.
    pub(crate) fn trace_id(&self) -> [u8; 16] {
        self.trace_id
    }

    /// A trace context for a new turn: its `traceparent`.
    pub(crate) fn turn(&self) -> String {
        let span_id = random_id();
        lock(&self.collector.state).turns.insert(span_id);
        traceparent(&self.trace_id, &span_id)
    }

    /// Hands spans to this run directly (the `tracing` layer).
    pub(crate) fn push(&self, spans: Vec<Span>) {
        self.collector.push(spans);
    }

    /// Takes the spans received so far, sorted by start time, after waiting up to `settle` for
    /// the ones still on their way: while a received span names a parent that is neither
    /// received nor one of the run's turns.
    pub(crate) async fn take(&self, settle: Duration) -> Vec<Span> {
        let deadline = Instant::now() + settle;
        loop {
            let arrived = self.collector.arrived.notified();
            {
                let mut state = lock(&self.collector.state);
                if complete(&state) || Instant::now() >= deadline {
                    let mut spans = std::mem::take(&mut state.spans);
                    spans.sort_by_key(|s| (s.start, s.end));
                    return spans;
                }
            }
            let left = deadline.saturating_duration_since(Instant::now());
            let _ = tokio::time::timeout(left, arrived).await;
        }
    }
}

fn complete(state: &Collected) -> bool {
    let ids: HashSet<[u8; 8]> = state.spans.iter().map(|s| s.span_id).collect();
    state
        .spans
        .iter()
        .filter(|s| !s.log)
        .all(|s| match s.parent {
            None => true,
            Some(p) => ids.contains(&p) || state.turns.contains(&p),
        })
}

impl Drop for RunTrace {
    fn drop(&mut self) {
        registry().finish(self.trace_id);
    }
}

#[cfg(test)]
mod tests {
    use super::super::span::{Kind, Status};
    use super::*;

    fn span(trace_id: [u8; 16], span_id: u8, parent: Option<[u8; 8]>) -> Span {
        Span {
            trace_id,
            span_id: [span_id; 8],
            parent,
            name: "s".into(),
            kind: Kind::Internal,
            start: span_id as u64,
            end: 0,
            status: Status::Unset,
            status_message: None,
            service: None,
            attributes: Default::default(),
            log: false,
        }
    }

    #[tokio::test]
    async fn spans_reach_their_run_and_unknown_or_late_ones_are_counted() {
        let a = RunTrace::start();
        let b = RunTrace::start();
        let before = registry().counts();
        let stranger = random_id();
        let batch = Batch {
            groups: vec![
                (
                    None,
                    vec![span(a.trace_id(), 2, None), span(b.trace_id(), 3, None)],
                ),
                (None, vec![span(stranger, 4, None)]),
                (Some(a.trace_id()), vec![span(stranger, 1, None)]),
            ],
        };
        assert_eq!(registry().ingest(batch), 3);
        let taken = a.take(Duration::ZERO).await;
        assert_eq!(
            taken.iter().map(|s| s.span_id[0]).collect::<Vec<_>>(),
            [1, 2]
        );
        assert_eq!(b.take(Duration::ZERO).await.len(), 1);
        assert!(registry().counts().unknown > before.unknown);
        let late_id = a.trace_id();
        drop(a);
        let late_before = registry().counts().late;
        registry().ingest(Batch {
            groups: vec![(None, vec![span(late_id, 9, None)])],
        });
        assert_eq!(registry().counts().late, late_before + 1);
    }

    #[tokio::test]
    async fn take_waits_for_a_missing_parent_up_to_settle() {
        let run = RunTrace::start();
        let tp = run.turn();
        let turn = super::super::span::span_of(&tp).unwrap();
        run.push(vec![span(run.trace_id(), 2, Some([1; 8]))]);
        let late_parent = span(run.trace_id(), 1, Some(turn));
        let waiting = Instant::now();
        let pusher = {
            let run = run.clone();
            tokio::spawn(async move {
                tokio::time::sleep(Duration::from_millis(50)).await;
                run.push(vec![late_parent]);
            })
        };
        let taken = run.take(Duration::from_secs(30)).await;
        pusher.await.unwrap();
        assert_eq!(taken.len(), 2, "waited for the parent");
        assert!(waiting.elapsed() < Duration::from_secs(20));
        // Nothing complete is waited for.
        run.push(vec![span(run.trace_id(), 5, Some([7; 8]))]);
        assert_eq!(run.take(Duration::from_millis(10)).await.len(), 1);
    }
}
