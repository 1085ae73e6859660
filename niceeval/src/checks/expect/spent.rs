//! Budget matchers: [`cost`] and [`latency`], which check what a run spent rather than what it
//! said, and the [`Checkable`] forms that carry those numbers ([`Usage`], [`Duration`]).

use std::borrow::Cow;
use std::time::Duration;

use serde_json::Value;

use crate::base::assertion::{Assertion, Checkable, Grade, Subject};
use crate::base::event::Usage;

/// A usage total is checked as its JSON object (`input_tokens`, `output_tokens`,
/// `cache_read_tokens`, and `cost_usd` when the agent reported one), which [`cost`] reads.
impl Checkable for Usage {
    fn subject(&self) -> Subject<'_> {
        Subject::Json(Cow::Owned(
            serde_json::to_value(self).unwrap_or(Value::Null),
        ))
    }
}

/// A duration is checked as its number of milliseconds (fractional), which [`latency`] reads.
impl Checkable for Duration {
    fn subject(&self) -> Subject<'_> {
        Subject::Json(Cow::Owned(Value::from(self.as_secs_f64() * 1000.0)))
    }
}

/// The score of a budget: 1 within the limit, `limit / actual` over it (0 for a zero limit).
/// Budgets on values ([`cost`], [`latency`]) and on runs (`max_tokens`, `max_cost`,
/// `max_tool_calls`) all score this way.
pub(crate) fn budget_score(limit: f64, actual: f64) -> f64 {
    if actual <= limit {
        1.0
    } else if limit <= 0.0 {
        0.0
    } else {
        limit / actual
    }
}

/// Why a value holds no measurement.
#[derive(Debug, thiserror::Error)]
enum NoMeasurement {
    #[error("{0} is not a number")]
    NotANumber(serde_json::Number),
    #[error("the value has no {keys} ({shown})")]
    NoKey { keys: String, shown: String },
    #[error("expected a number or an object with {keys}, got {shown}")]
    NotAnObject { keys: String, shown: String },
    #[error("expected a number, got the text {shown}")]
    NotNumericText {
        shown: String,
        #[source]
        source: std::num::ParseFloatError,
    },
    #[error("nothing was measured (None)")]
    Missing,
}

/// Reads a measurement: a bare number, or the first of `keys` in a JSON object.
fn measurement(value: &Subject<'_>, keys: &[&str]) -> Result<f64, NoMeasurement> {
    match value {
        Subject::Json(v) => match v.as_ref() {
            Value::Number(n) => n
                .as_f64()
                .ok_or_else(|| NoMeasurement::NotANumber(n.clone())),
            Value::Object(map) => keys
                .iter()
                .find_map(|k| map.get(*k).and_then(Value::as_f64))
                .ok_or_else(|| NoMeasurement::NoKey {
                    keys: keys.join(" or "),
                    shown: crate::base::excerpt::json(v),
                }),
            other => Err(NoMeasurement::NotAnObject {
                keys: keys.join(" or "),
                shown: crate::base::excerpt::json(other),
            }),
        },
        Subject::Text(text) => {
            text.trim()
                .parse::<f64>()
                .map_err(|source| NoMeasurement::NotNumericText {
                    shown: value.preview(),
                    source,
                })
        }
        Subject::Missing => Err(NoMeasurement::Missing),
    }
}

/// Which budget a [`Budget`] checks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Cost,
    Latency,
}

/// The matcher returned by [`cost`] and [`latency`].
#[derive(Debug, Clone)]
pub struct Budget {
    kind: Kind,
    limit: f64,
}

/// What was spent, in USD, is at most `max_usd`. Gate by default.
///
/// The checked value carries the cost: a number (USD), or an object with `cost_usd` (or `cost`)
/// such as [`Usage`] (`t.check(t.usage(), cost(0.05))`) — in assertions as data it is the
/// context's `cost_usd`. Within budget scores 1; over budget scores `limit / actual` and fails,
/// so `.at_least(0.8)` turns it into a soft check that tolerates 25% over. A value with no cost
/// (the agent reported none) is an execution error, never a silent pass; a negative or NaN
/// limit is one too.
///
/// ```
/// use niceeval::prelude::*;
/// use niceeval::{AssertionResult, Usage};
///
/// let usage = Usage { cost_usd: Some(0.10), ..Usage::default() };
/// let r = AssertionResult::evaluate(&cost(0.05), &usage.subject());
/// assert!(!r.passed);
/// assert_eq!(r.score, 0.5);
/// assert_eq!(r.reason, "cost $0.10 is over the budget $0.05");
/// assert!(AssertionResult::evaluate(&cost(0.05), &0.01.subject()).passed);
/// let none = AssertionResult::evaluate(&cost(0.05), &Usage::default().subject());
/// assert!(none.error.is_some());
/// ```
pub fn cost(max_usd: f64) -> Budget {
    Budget {
        kind: Kind::Cost,
        limit: max_usd,
    }
}

/// The time taken, in milliseconds, is at most `max_ms`. Gate by default.
///
/// The checked value carries the latency: a [`Duration`] (`t.check(started.elapsed(),
/// latency(2000.0))`), a number of milliseconds, or an object with `latency_ms` (or
/// `duration_ms`) — in assertions as data it is the context's `latency_ms`. Scores like
/// [`cost`]: 1 within budget, `limit / actual` over it.
///
/// ```
/// use std::time::Duration;
/// use niceeval::prelude::*;
/// use niceeval::AssertionResult;
///
/// assert!(AssertionResult::evaluate(&latency(500.0), &Duration::from_millis(120).subject()).passed);
/// let r = AssertionResult::evaluate(&latency(500.0), &Duration::from_secs(1).subject());
/// assert_eq!((r.passed, r.score), (false, 0.5));
/// ```
pub fn latency(max_ms: f64) -> Budget {
    Budget {
        kind: Kind::Latency,
        limit: max_ms,
    }
}

impl Budget {
    fn show(&self, amount: f64) -> String {
        match self.kind {
            Kind::Cost => crate::base::excerpt::format_usd(amount),
            Kind::Latency => format!("{amount:.0} ms"),
        }
    }
}

impl Budget {
    /// The grade, before it is marked as a measurement.
    fn measure(&self, value: &Subject<'_>) -> Grade {
        let (what, keys): (&str, &[&str]) = match self.kind {
            Kind::Cost => ("cost", &["cost_usd", "cost"]),
            Kind::Latency => ("latency", &["latency_ms", "duration_ms"]),
        };
        if self.limit.is_nan() || self.limit < 0.0 {
            return Grade::error(format!(
                "the {what} budget must be a number ≥ 0, got {}",
                self.limit
            ));
        }
        let actual = match measurement(value, keys) {
            Ok(a) if a.is_finite() && a >= 0.0 => a,
            Ok(a) => {
                return Grade::error(format!("the measured {what} {a} is not a number ≥ 0"));
            }
            Err(why) => return Grade::error(format!("no {what} to check: {why}")),
        };
        if actual <= self.limit {
            Grade::pass(format!(
                "{what} {} is within the budget {}",
                self.show(actual),
                self.show(self.limit)
            ))
            .with_verdict(true)
        } else {
            Grade::score(
                budget_score(self.limit, actual),
                format!(
                    "{what} {} is over the budget {}",
                    self.show(actual),
                    self.show(self.limit)
                ),
            )
            .with_verdict(false)
        }
    }
}

impl Assertion for Budget {
    fn describe(&self) -> String {
        match self.kind {
            Kind::Cost => format!("cost(max ${})", self.limit),
            Kind::Latency => format!("latency(max {} ms)", self.limit),
        }
    }

    fn evaluate(&self, value: &Subject<'_>) -> Grade {
        // a measurement, whatever the verdict: snapshots redact its numbers
        self.measure(value).measured()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::assertion::AssertionResult;
    use crate::base::assertion::Chain;
    use serde_json::json;

    #[test]
    fn reads_numbers_objects_and_rejects_missing() {
        let ok = |a: &Budget, v: &Subject<'_>| AssertionResult::evaluate(a, v);
        assert!(ok(&latency(100.0), &json!({"latency_ms": 99}).subject()).passed);
        assert!(ok(&latency(100.0), &json!({"duration_ms": 100}).subject()).passed);
        assert!(ok(&cost(0.5), &json!({"cost": 0.5}).subject()).passed);
        assert!(ok(&cost(0.5), &"0.25".subject()).passed);
        assert!(ok(&cost(0.5), &Subject::Missing).error.is_some());
        assert!(ok(&cost(-1.0), &0.0.subject()).error.is_some());
        assert!(ok(&cost(f64::NAN), &0.0.subject()).error.is_some());
        let zero = ok(&cost(0.0), &0.01.subject());
        assert!(!zero.passed && zero.score == 0.0);
        assert!(ok(&cost(0.0), &0.0.subject()).passed);
    }

    #[test]
    fn soft_threshold_tolerates_overrun() {
        let r = AssertionResult::evaluate(&cost(0.04).at_least(0.75), &0.05.subject());
        assert!(r.passed, "0.8 of the budget passes at_least(0.75)");
    }
}
