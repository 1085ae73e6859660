//! A list of assertions as data as one assertion of the Rust API: [`assertions`] grades a value
//! with every item of a list (a dataset case's `assert:` / `assertions:`), one report line per
//! item, the run's cost and latency filled in for `cost` and `latency` items.

use std::cell::Cell;

use super::{AssertSpec, SpecContext};
use crate::assertion::{Assertion, Grade, Subject};

thread_local! {
    /// The cost and latency of the run whose `t.check` is evaluating on this thread.
    static RUN: Cell<(Option<f64>, Option<f64>)> = const { Cell::new((None, None)) };
}

/// Runs `f` with the run's cost (USD) and latency (ms) visible to [`assertions`] evaluated in
/// it on this thread; the eval handle wraps its checks in it.
pub(crate) fn with_run_facts<R>(
    cost_usd: Option<f64>,
    latency_ms: f64,
    f: impl FnOnce() -> R,
) -> R {
    struct Restore((Option<f64>, Option<f64>));
    impl Drop for Restore {
        fn drop(&mut self) {
            RUN.with(|run| run.set(self.0));
        }
    }
    let _restore = Restore(RUN.with(|run| run.replace((cost_usd, Some(latency_ms)))));
    f()
}

/// An assertion grading a value with a list of assertions as data: one report line (a nested
/// result) per item, passing when every item passes, scored with the items' weighted mean (as
/// [`evaluate`](super::evaluate)). Checked with `t.check`, `cost` and `latency` items read the
/// run's cost (reported, else estimated from the price table) and its agent time; `.context(..)`
/// sets the rest (variables, a base directory, a reference answer). An invalid list is an
/// execution error naming the item.
pub fn assertions(specs: &[AssertSpec]) -> SpecAssertions {
    SpecAssertions {
        specs: specs.to_vec(),
        context: SpecContext::default(),
    }
}

/// See [`assertions`].
#[derive(Debug, Clone)]
pub struct SpecAssertions {
    specs: Vec<AssertSpec>,
    context: SpecContext,
}

impl SpecAssertions {
    /// The context the items see (cost and latency left unset are filled in from the run).
    pub fn context(mut self, context: SpecContext) -> Self {
        self.context = context;
        self
    }
}

impl Assertion for SpecAssertions {
    fn describe(&self) -> String {
        format!(
            "assertions({} item{})",
            self.specs.len(),
            if self.specs.len() == 1 { "" } else { "s" }
        )
    }

    fn evaluate(&self, value: &Subject<'_>) -> Grade {
        if value.text().is_none() {
            return Grade::score(0.0, "no value to grade (None)");
        }
        let mut context = self.context.clone();
        let (cost, latency) = RUN.with(Cell::get);
        context.cost_usd = context.cost_usd.or(cost);
        context.latency_ms = context.latency_ms.or(latency);
        match super::evaluate_subject(&self.specs, value, &context) {
            Err(e) => Grade::error(e.to_string()),
            Ok(outcome) => {
                let passed = outcome.results.iter().filter(|r| r.passed).count();
                Grade::score(
                    outcome.score,
                    format!("{passed} of {} item(s) passed", outcome.results.len()),
                )
                .with_verdict(outcome.pass)
                .with_children(outcome.results)
            }
        }
    }
}

#[cfg(test)]
mod doc_examples {
    //! The examples that were this file's doc tests while its items were public.

    #[test]
    fn example_1() {
        use crate::prelude::*;
        use crate::spec::{self, AssertSpec};

        // What a dataset case carries in its `assert` field.
        let items: Vec<AssertSpec> = serde_json::from_value(json!([
            {"type": "icontains", "value": "paris"},
            {"type": "not-contains", "value": "sorry"},
        ]))
        .unwrap();
        let t = Eval::detached(None);
        let result = t.check("The capital is Paris.", spec::assertions(&items));
        assert!(result.passed);
        assert_eq!(result.children.len(), 2);
    }
}
