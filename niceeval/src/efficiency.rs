//! Efficiency budgets: [`Eval::max_tokens`], [`Eval::max_cost`] and [`Eval::max_tool_calls`],
//! scoped checks over the run's `usage` and `action.called` events (or, called on a
//! [`Turn`](crate::Turn), over that turn's).
//!
//! A budget scores 1 within its limit and `limit / actual` over it, so a run twice over budget
//! scores 0.5. Budgets are gates that need the full score (threshold 1.0): any overrun fails
//! the eval. `.at_least(x)` makes one soft with threshold `x`, so `t.max_tokens(10_000)
//! .at_least(0.8)` tolerates up to 12,500 tokens and only marks the eval (fails it under
//! strict) beyond that.
//!
//! Tokens are summed over `usage` events: total = input + output, where input already includes
//! cache-read tokens (they count once, as input). Cost is what the agent reported on each
//! `usage` event (`cost_usd`), else that event's tokens at the price of its `model`; see
//! [`crate::price`]. A run without any `usage` event cannot be checked against a token or cost
//! budget, and a cost that cannot be priced is an execution error on `max_cost` — never a pass.
//!
//! The checks are values too, for custom registration or direct evaluation:
//!
//! ```
//! use niceeval::efficiency::MaxTokens;
//! use niceeval::scope::{RunView, ScopedCheck};
//! use niceeval::{Event, config::Config};
//!
//! let events = [Event::Usage {
//!     input_tokens: 9_000, output_tokens: 3_000, cache_read_tokens: 0,
//!     cost_usd: None, model: Some("openai/gpt-4o".into()),
//! }];
//! let config = Config::default();
//! let grade = MaxTokens::new(10_000).evaluate(&RunView { events: &events, config: &config });
//! assert!((grade.score - 10_000.0 / 12_000.0).abs() < 1e-9);
//! assert!(grade.reason.contains("12,000 tokens"), "{}", grade.reason);
//! ```

use std::collections::HashMap;

use crate::assertion::{AssertionKind, Grade, Settings};

use crate::event::{Event, Usage};
use crate::excerpt::{format_count, format_usd};
use crate::price::{estimate_cost, token_breakdown};
use crate::scope::{RunView, ScopedCheck};

/// Gate with threshold 1: a budget passes only in full unless made soft.
fn budget_settings() -> Settings {
    Settings {
        threshold: Some(1.0),
        ..Settings::gate()
    }
}

/// 1 within the limit, `limit / actual` over it (0 for a zero limit).
fn budget_score(limit: f64, actual: f64) -> f64 {
    if actual <= limit {
        1.0
    } else if limit <= 0.0 {
        0.0
    } else {
        limit / actual
    }
}

fn no_usage(check: &str, how: &str) -> Grade {
    Grade::error(format!(
        "the run has no `usage` events, so {check} cannot be checked; have the agent report \
         {how}"
    ))
}

fn has_usage(events: &[Event]) -> bool {
    events.iter().any(|e| matches!(e, Event::Usage { .. }))
}

/// `within the limit of X` or `over the limit of X by Y`.
fn verdict(within: bool, limit: &str, excess: &str) -> String {
    if within {
        format!("within the limit of {limit}")
    } else {
        format!("over the limit of {limit} by {excess}")
    }
}

/// [`Eval::max_tokens`]: a budget on input + output tokens.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MaxTokens {
    limit: u64,
}

impl MaxTokens {
    /// A budget of `limit` tokens.
    pub fn new(limit: u64) -> Self {
        MaxTokens { limit }
    }

    /// The limit.
    pub fn limit(&self) -> u64 {
        self.limit
    }
}

impl MaxTokens {
    /// The grade, before it is marked as a measurement.
    fn measure(&self, run: &RunView<'_>) -> Grade {
        if !has_usage(run.events) {
            return no_usage(
                &self.describe(),
                "its tokens (`request.events.usage(input, output)` or `usage` events)",
            );
        }
        let usage = Usage::from_events(run.events);
        let total = usage.total_tokens();
        let reason = format!(
            "{} tokens ({}), {}",
            format_count(total),
            token_breakdown(&usage),
            verdict(
                total <= self.limit,
                &format_count(self.limit),
                &format_count(total.saturating_sub(self.limit))
            )
        );
        Grade::score(budget_score(self.limit as f64, total as f64), reason)
    }
}

impl ScopedCheck for MaxTokens {
    fn describe(&self) -> String {
        format!("max_tokens({})", self.limit)
    }

    fn evaluate(&self, run: &RunView<'_>) -> Grade {
        // a measurement, whatever the verdict: snapshots redact its numbers
        self.measure(run).measured()
    }

    fn kind(&self) -> AssertionKind {
        AssertionKind::Efficiency
    }

    fn settings(&self) -> Settings {
        budget_settings()
    }
}

/// [`Eval::max_cost`]: a budget in USD.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MaxCost {
    limit_usd: f64,
}

impl MaxCost {
    /// A budget of `usd` dollars. A negative or non-finite limit is an execution error when the
    /// check is evaluated.
    pub fn new(usd: f64) -> Self {
        MaxCost { limit_usd: usd }
    }

    /// The limit in USD.
    pub fn limit_usd(&self) -> f64 {
        self.limit_usd
    }
}

impl MaxCost {
    /// The grade, before it is marked as a measurement.
    fn measure(&self, run: &RunView<'_>) -> Grade {
        let limit = self.limit_usd;
        if !(limit.is_finite() && limit >= 0.0) {
            return Grade::error(format!(
                "{}: the limit must be a finite amount of USD, 0 or more",
                self.describe()
            ));
        }
        if !has_usage(run.events) {
            return no_usage(
                &self.describe(),
                "`usage` events with the `model` that spent the tokens (priced from the price \
                     table) or the `cost_usd` they cost",
            );
        }
        let cost = match estimate_cost(run.events, run.config) {
            Ok(cost) => cost,
            Err(e) => return Grade::error(format!("the cost of the run is unknown: {e}")),
        };
        // Sums of float prices drift by ulps (3 × $0.01 > $0.03): a cost within a billionth of
        // the limit is within it.
        let within = cost.usd - limit <= (limit * 1e-9).max(1e-12);
        let reason = format!(
            "cost {}, {}: {}",
            format_usd(cost.usd),
            verdict(within, &format_usd(limit), &format_usd(cost.usd - limit)),
            cost.describe()
        );
        let score = if within {
            1.0
        } else {
            budget_score(limit, cost.usd)
        };
        Grade::score(score, reason)
    }
}

impl ScopedCheck for MaxCost {
    fn describe(&self) -> String {
        format!("max_cost({})", self.limit_usd)
    }

    fn evaluate(&self, run: &RunView<'_>) -> Grade {
        // a measurement, whatever the verdict: snapshots redact its numbers
        self.measure(run).measured()
    }

    fn kind(&self) -> AssertionKind {
        AssertionKind::Efficiency
    }

    fn settings(&self) -> Settings {
        budget_settings()
    }
}

/// [`Eval::max_tool_calls`]: a budget on `action.called` events.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MaxToolCalls {
    limit: usize,
}

impl MaxToolCalls {
    /// A budget of `limit` tool calls.
    pub fn new(limit: usize) -> Self {
        MaxToolCalls { limit }
    }

    /// The limit.
    pub fn limit(&self) -> usize {
        self.limit
    }
}

/// How many names a reason lists before eliding the rest.
const LISTED_TOOLS: usize = 10;

impl ScopedCheck for MaxToolCalls {
    fn describe(&self) -> String {
        format!("max_tool_calls({})", self.limit)
    }

    fn evaluate(&self, run: &RunView<'_>) -> Grade {
        // (name, count) in order of first call; linear in the number of events
        let mut calls: Vec<(&str, usize)> = Vec::new();
        let mut index: HashMap<&str, usize> = HashMap::new();
        let mut total = 0usize;
        for event in run.events {
            if let Event::ActionCalled { name, .. } = event {
                total += 1;
                let slot = *index.entry(name.as_str()).or_insert_with(|| {
                    calls.push((name.as_str(), 0));
                    calls.len() - 1
                });
                calls[slot].1 += 1;
            }
        }
        let verdict = verdict(
            total <= self.limit,
            &self.limit.to_string(),
            &total.saturating_sub(self.limit).to_string(),
        );
        let reason = if total == 0 {
            format!("no tool calls, {verdict}")
        } else {
            let mut names: Vec<String> = calls
                .iter()
                .take(LISTED_TOOLS)
                .map(|(name, count)| match count {
                    1 => name.to_string(),
                    n => format!("{name} ×{n}"),
                })
                .collect();
            if calls.len() > LISTED_TOOLS {
                names.push(format!("and {} more tools", calls.len() - LISTED_TOOLS));
            }
            format!(
                "{total} tool call{}, {verdict}: {}",
                if total == 1 { "" } else { "s" },
                names.join(", ")
            )
        };
        Grade::score(budget_score(self.limit as f64, total as f64), reason)
    }

    fn kind(&self) -> AssertionKind {
        AssertionKind::Efficiency
    }

    fn settings(&self) -> Settings {
        budget_settings()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::assertion::Severity;
    use crate::config::Config;
    use serde_json::json;

    fn usage(input: u64, output: u64, cache: u64, cost: Option<f64>, model: Option<&str>) -> Event {
        Event::Usage {
            input_tokens: input,
            output_tokens: output,
            cache_read_tokens: cache,
            cost_usd: cost,
            model: model.map(str::to_string),
        }
    }

    fn call(name: &str) -> Event {
        Event::ActionCalled {
            call_id: name.into(),
            name: name.into(),
            input: json!({}),
        }
    }

    fn grade(check: &dyn ScopedCheck, events: &[Event]) -> Grade {
        check.evaluate(&RunView {
            events,
            config: &Config::default(),
        })
    }

    #[test]
    fn budgets_are_efficiency_gates_needing_a_full_score() {
        let checks: [&dyn ScopedCheck; 3] = [
            &MaxTokens::new(1),
            &MaxCost::new(1.0),
            &MaxToolCalls::new(1),
        ];
        for check in checks {
            assert_eq!(check.kind(), AssertionKind::Efficiency);
            let settings = check.settings();
            assert_eq!(settings.severity, Severity::Gate);
            assert_eq!(settings.threshold, Some(1.0));
        }
    }

    #[test]
    fn score_table() {
        let cases = [
            (100.0, 0.0, 1.0),
            (100.0, 100.0, 1.0),
            (100.0, 200.0, 0.5),
            (100.0, 400.0, 0.25),
            (0.0, 0.0, 1.0),
            (0.0, 5.0, 0.0),
        ];
        for (limit, actual, score) in cases {
            assert_eq!(budget_score(limit, actual), score, "{limit} {actual}");
        }
    }

    #[test]
    fn max_tokens_sums_usage_events_and_counts_cache_reads_once() {
        let events = [
            Event::user("hi"),
            usage(6_000, 1_000, 2_000, None, None),
            usage(4_000, 1_000, 0, None, None),
        ];
        let within = grade(&MaxTokens::new(12_000), &events);
        assert_eq!(within.score, 1.0);
        assert_eq!(
            within.reason,
            "12,000 tokens (10,000 input (of which 2,000 cache-read) + 2,000 output), within the limit of 12,000"
        );
        let over = grade(&MaxTokens::new(6_000), &events);
        assert_eq!(over.score, 0.5);
        assert!(
            over.reason.ends_with("over the limit of 6,000 by 6,000"),
            "{}",
            over.reason
        );
    }

    #[test]
    fn token_and_cost_budgets_without_usage_are_errors() {
        for check in [&MaxTokens::new(10) as &dyn ScopedCheck, &MaxCost::new(1.0)] {
            let g = grade(check, &[Event::assistant("hi")]);
            let error = g.error.expect("no usage must not pass");
            assert!(error.contains("no `usage` events"), "{error}");
            assert!(error.contains(&check.describe()), "{error}");
        }
    }

    #[test]
    fn max_cost_explains_where_the_cost_came_from() {
        let reported = grade(
            &MaxCost::new(0.10),
            &[
                usage(10, 10, 0, Some(0.04), None),
                usage(10, 10, 0, Some(0.01), None),
            ],
        );
        assert_eq!(reported.score, 1.0);
        assert_eq!(
            reported.reason,
            "cost $0.05, within the limit of $0.10: $0.05 reported by the agent (2 usage events)"
        );
        let estimated = grade(
            &MaxCost::new(0.5),
            &[usage(1_000_000, 0, 0, None, Some("gpt-4o-mini-2024-07-18"))],
        );
        assert_eq!(estimated.score, 1.0);
        let r = &estimated.reason;
        assert!(r.starts_with("cost $0.15, within the limit of $0.50: $0.15 estimated for gpt-4o-mini-2024-07-18 (priced as openai/gpt-4o-mini)"), "{r}");
        assert!(
            r.contains("$0.15 input / $0.60 output per 1M tokens"),
            "{r}"
        );
        assert!(r.contains("built-in list price"), "{r}");
        let over = grade(
            &MaxCost::new(0.05),
            &[usage(1_000_000, 0, 0, None, Some("gpt-4o-mini"))],
        );
        assert!((over.score - 0.05 / 0.15).abs() < 1e-9);
        assert!(
            over.reason.contains("over the limit of $0.05 by $0.10"),
            "{}",
            over.reason
        );
    }

    #[test]
    fn max_cost_errors_name_the_problem() {
        let unknown = grade(
            &MaxCost::new(1.0),
            &[usage(10, 10, 0, None, Some("acme/x-1"))],
        );
        let error = unknown.error.unwrap();
        assert!(error.contains("\"acme/x-1\""), "{error}");
        assert!(
            error.contains("[prices.\"acme/x-1\"]\ninput = .."),
            "{error}"
        );
        let bad_limit = grade(&MaxCost::new(-1.0), &[usage(1, 1, 0, Some(0.1), None)]);
        assert!(bad_limit.error.unwrap().contains("max_cost(-1)"));
        let nan = grade(&MaxCost::new(f64::NAN), &[usage(1, 1, 0, Some(0.1), None)]);
        assert!(nan.error.is_some());
    }

    #[test]
    fn max_tool_calls_lists_calls_by_name() {
        let events = [
            call("search"),
            call("lookup"),
            call("search"),
            call("search"),
        ];
        let within = grade(&MaxToolCalls::new(4), &events);
        assert_eq!(within.score, 1.0);
        assert_eq!(
            within.reason,
            "4 tool calls, within the limit of 4: search ×3, lookup"
        );
        let over = grade(&MaxToolCalls::new(2), &events);
        assert_eq!(over.score, 0.5);
        assert_eq!(
            over.reason,
            "4 tool calls, over the limit of 2 by 2: search ×3, lookup"
        );
        let none = grade(&MaxToolCalls::new(0), &[Event::assistant("hi")]);
        assert_eq!(
            (none.score, none.reason.as_str()),
            (1.0, "no tool calls, within the limit of 0")
        );
        let zero = grade(&MaxToolCalls::new(0), &[call("x")]);
        assert_eq!(zero.score, 0.0);
        let many: Vec<Event> = (0..12).map(|i| call(&format!("t{i}"))).collect();
        let r = grade(&MaxToolCalls::new(20), &many).reason;
        assert!(r.ends_with("t9, and 2 more tools"), "{r}");
    }
}
