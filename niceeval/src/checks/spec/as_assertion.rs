//! A list of assertions as data as one assertion of the Rust API: [`assertions`] grades a value
//! with every item of a list (a dataset case's `assert:` / `assertions:`), one report line per
//! item, the run's cost and latency (from `t.check`'s [`CheckContext`]) filled in for `cost` and
//! `latency` items.

use super::{AssertSpec, SpecContext};
use crate::base::assertion::{Assertion, CheckContext, Grade, Subject};

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
        self.evaluate_in(value, &CheckContext::default())
    }

    fn evaluate_in(&self, value: &Subject<'_>, run: &CheckContext) -> Grade {
        if value.text().is_none() {
            return Grade::score(0.0, "no value to grade (None)");
        }
        let mut context = self.context.clone();
        context.cost_usd = context.cost_usd.or(run.cost_usd());
        context.latency_ms = context.latency_ms.or(run.latency_ms());
        match super::evaluate_subject_in(&self.specs, value, &context, run) {
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
        use crate::checks::spec::{self, AssertSpec};
        use crate::prelude::*;

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
