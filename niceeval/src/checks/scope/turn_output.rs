//! Assertions on one turn's structured output ([`crate::Turn::data`]): `turn.output_equals(v)`
//! and `turn.output_matches::<T>()`. They are registered like every scoped assertion (recorded
//! when the statement ends, reported as `turn N: ...`) but judge the data the turn captured.

use serde::de::DeserializeOwned;

use serde_json::Value;

use crate::base::assertion::{Assertion, Checkable, Grade};
use crate::base::excerpt;
use crate::checks::expect::{Equals, Matches};
use crate::checks::scope::{RunView, ScopedCheck};

/// The check behind [`Turn::output_equals`](crate::Turn::output_equals).
#[derive(Debug, Clone)]
pub struct OutputEquals {
    pub(crate) expected: Equals,
    pub(crate) data: Option<Value>,
    pub(crate) message: crate::base::event::Text,
}

/// The check behind [`Turn::output_matches`](crate::Turn::output_matches).
#[derive(Debug, Clone)]
pub struct OutputMatches<T> {
    pub(crate) matcher: Matches<T>,
    pub(crate) data: Option<Value>,
    pub(crate) message: crate::base::event::Text,
}

fn no_output(message: &str) -> Grade {
    Grade::fail(if message.is_empty() {
        "the turn has no structured output: the agent set no data and sent no message".to_string()
    } else {
        format!(
            "the turn has no structured output: the agent set no data and its message is not a JSON object or array: {}",
            excerpt::quote_width(message, 120)
        )
    })
}

impl ScopedCheck for OutputEquals {
    fn describe(&self) -> String {
        format!("output_{}", self.expected.describe())
    }

    fn evaluate(&self, _: &RunView<'_>) -> Grade {
        let grade = self.expected.evaluate(&self.data.subject());
        if self.data.is_none() && grade.score == 0.0 {
            return no_output(&self.message);
        }
        grade
    }
}

impl<T: DeserializeOwned + 'static> ScopedCheck for OutputMatches<T> {
    fn describe(&self) -> String {
        format!("output_{}", self.matcher.describe())
    }

    fn evaluate(&self, _: &RunView<'_>) -> Grade {
        match &self.data {
            None => no_output(&self.message),
            Some(data) => self.matcher.evaluate(&data.subject()),
        }
    }
}
