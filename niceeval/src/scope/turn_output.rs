//! Assertions on one turn's structured output ([`crate::Turn::data`]): `turn.output_equals(v)`
//! and `turn.output_matches::<T>()`. They are registered like every scoped assertion (recorded
//! when the statement ends, reported as `turn N: ...`) but judge the data the turn captured.

use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::Value;

use crate::assertion::{Assertion, Checkable, Grade};
use crate::excerpt;
use crate::expect::{equals, matches, Equals, Matches};
use crate::scope::{RunView, Scoped, ScopedCheck};
use crate::turn::Turn;

impl Turn {
    /// The turn's structured output ([`Turn::data`]) deep-equals `expected` (compared as JSON:
    /// keys in any order, numbers by value). The failure names the first differing path, or says
    /// that the turn has no structured output.
    ///
    /// ```
    /// use niceeval::prelude::*;
    ///
    /// #[eval]
    /// async fn classifies(t: &mut Eval) -> niceeval::Result {
    ///     let turn = t.send("I want my money back").await?;
    ///     turn.output_equals(json!({ "intent": "refund" }));
    ///     Ok(())
    /// }
    /// # fn main() {}
    /// ```
    pub fn output_equals(&self, expected: impl Serialize) -> Scoped<OutputEquals> {
        self.expect(OutputEquals {
            expected: equals(expected),
            data: self.data.clone(),
            message: self.message.clone(),
        })
    }

    /// The turn's structured output deserializes (serde) into `T`. The failure shows serde's
    /// error, or says that the turn has no structured output.
    ///
    /// ```
    /// use niceeval::prelude::*;
    ///
    /// #[derive(serde::Deserialize)]
    /// struct Profile { id: String }
    ///
    /// #[eval]
    /// async fn returns_a_profile(t: &mut Eval) -> niceeval::Result {
    ///     let turn = t.send("Return the user profile as JSON").await?;
    ///     turn.output_matches::<Profile>();
    ///     Ok(())
    /// }
    /// # fn main() {}
    /// ```
    pub fn output_matches<T: DeserializeOwned + 'static>(&self) -> Scoped<OutputMatches<T>> {
        self.expect(OutputMatches {
            matcher: matches::<T>(),
            data: self.data.clone(),
            message: self.message.clone(),
        })
    }
}

/// The check behind [`Turn::output_equals`].
#[derive(Debug, Clone)]
pub struct OutputEquals {
    expected: Equals,
    data: Option<Value>,
    message: String,
}

/// The check behind [`Turn::output_matches`].
#[derive(Debug, Clone)]
pub struct OutputMatches<T> {
    matcher: Matches<T>,
    data: Option<Value>,
    message: String,
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
