//! The one grading path after the body, with no judge: checks registered through `Scoped` in
//! one list, the plain ones graded in order, the costly ones after them, concurrently, and
//! only when the run may still pass.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::base::assertion::{AssertionKind, Chain, Grade, Settings};
use crate::base::event::{Event, Usage};
use crate::checks::scope::deferred::{BoxFuture, Graded};
use crate::checks::scope::{Check, Defer, Deferred, RunView, Scoped, Succeeded, perform};
use crate::config::Config;

/// A run's list, as the record keeps it.
#[derive(Default)]
struct List(Mutex<Vec<Deferred>>);

impl Defer for List {
    fn defer(&self, work: Deferred) {
        self.0.lock().unwrap().push(work);
    }
}

impl List {
    fn take(&self) -> Vec<Deferred> {
        std::mem::take(&mut *self.0.lock().unwrap())
    }
}

/// A costly check that finishes only once `barrier` has as many waiters as costly checks:
/// graded one after the other, they would never finish.
struct Costly {
    name: &'static str,
    barrier: Arc<tokio::sync::Barrier>,
}

impl Check for Costly {
    fn describe(&self) -> String {
        self.name.to_string()
    }

    fn kind(&self) -> AssertionKind {
        AssertionKind::Judge
    }

    fn settings(&self) -> Settings {
        Settings::soft(None)
    }

    fn costly(&self) -> bool {
        true
    }

    fn grade(self: Box<Self>, _run: &RunView<'_>) -> BoxFuture<Graded> {
        Box::pin(async move {
            self.barrier.wait().await;
            let spent = Usage {
                input_tokens: 10,
                ..Usage::default()
            };
            (Grade::pass(self.name), Some(spent))
        })
    }
}

fn register(list: &Arc<List>, barrier: &Arc<tokio::sync::Barrier>) {
    let costly = |name| Costly {
        name,
        barrier: barrier.clone(),
    };
    Scoped::new(list.clone(), costly("first costly"), None).gate();
    Scoped::new(list.clone(), Succeeded, None);
    Scoped::new(list.clone(), costly("second costly"), None);
    Scoped::in_turn(list.clone(), Succeeded, 0..1, "turn 1".to_string()).at_least(0.5);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn plain_checks_first_in_order_then_costly_ones_concurrently() {
    let list = Arc::new(List::default());
    let barrier = Arc::new(tokio::sync::Barrier::new(2));
    register(&list, &barrier);
    let events = [Event::user("hi"), Event::assistant("hello")];
    let config = Config::default();
    let view = RunView {
        events: &events,
        config: &config,
    };
    let results = tokio::time::timeout(Duration::from_secs(10), perform(list.take(), &view, true))
        .await
        .expect("costly checks are graded concurrently");
    let names: Vec<&str> = results.iter().map(|r| r.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "succeeded()",
            "turn 1: succeeded()",
            "first costly",
            "second costly"
        ]
    );
    assert!(results.iter().all(|r| r.passed), "{results:?}");
    // the builder's settings, the check's kind and what grading spent reach the result
    assert_eq!(results[2].severity, crate::base::assertion::Severity::Gate);
    assert_eq!(results[3].severity, crate::base::assertion::Severity::Soft);
    assert_eq!(results[1].threshold, Some(0.5));
    assert_eq!(results[2].kind, AssertionKind::Judge);
    assert_eq!(results[2].usage.as_ref().map(|u| u.input_tokens), Some(10));
    assert_eq!(results[0].usage, None);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn costly_checks_are_not_graded_for_a_run_that_cannot_pass() {
    let list = Arc::new(List::default());
    // a barrier no one else reaches: grading a costly check would hang
    let barrier = Arc::new(tokio::sync::Barrier::new(3));
    register(&list, &barrier);
    let config = Config::default();
    let view = RunView {
        events: &[],
        config: &config,
    };
    let results = tokio::time::timeout(Duration::from_secs(10), perform(list.take(), &view, false))
        .await
        .expect("no costly check is graded");
    let names: Vec<&str> = results.iter().map(|r| r.name.as_str()).collect();
    assert_eq!(names, ["succeeded()", "turn 1: succeeded()"]);
}
