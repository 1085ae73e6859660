//! Efficiency budgets: [`Eval::max_tokens`], [`Eval::max_cost`] and [`Eval::max_tool_calls`],
//! one check, [`RunBudget`], over the run's `usage` and `action.called` events (or, called on a
//! [`Turn`], over that turn's).
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
//! [`crate::resources::price`]. A run without any `usage` event cannot be checked against a token or cost
//! budget, and a cost that cannot be priced is an execution error on `max_cost` — never a pass.
//!
//! The check is a value too, for custom registration or direct evaluation:
//!
//! [`Eval::max_tokens`]: crate::Eval::max_tokens
//! [`Eval::max_cost`]: crate::Eval::max_cost
//! [`Eval::max_tool_calls`]: crate::Eval::max_tool_calls
//! [`Turn`]: crate::Turn

use std::collections::HashMap;

use crate::base::assertion::{AssertionKind, Grade, Settings};

use crate::base::event::{Event, Usage};
use crate::base::excerpt::{format_count, format_usd};
use crate::checks::expect::spent::budget_score;
use crate::checks::scope::{RunView, ScopedCheck};
use crate::resources::price::{estimate_cost, token_breakdown};

/// A budget on what a run (or one turn) spends: its tokens ([`Eval::max_tokens`]), its cost
/// ([`Eval::max_cost`]) or its tool calls ([`Eval::max_tool_calls`]). A gate needing score 1;
/// over budget it scores `limit / actual`.
///
/// [`Eval::max_tokens`]: crate::Eval::max_tokens
/// [`Eval::max_cost`]: crate::Eval::max_cost
/// [`Eval::max_tool_calls`]: crate::Eval::max_tool_calls
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RunBudget {
    limit: Limit,
}

/// What a budget limits, and by how much.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Limit {
    /// Input + output tokens, summed over `usage` events.
    Tokens(u64),
    /// USD, reported by the agent or priced from the price table.
    Cost(f64),
    /// `action.called` events.
    ToolCalls(usize),
}

/// What a run spent against its limit, as a budget's reason shows it:
/// `{spent}, within the limit of {limit}` or `{spent}, over the limit of {limit} by {excess}`,
/// then `: {detail}` when there is one.
struct Spent {
    /// The amount spent and the limit, as numbers (for the score).
    actual: f64,
    limit: f64,
    /// Whether the amount is within the limit.
    within: bool,
    /// The amount spent, as the reason opens with it (`12,000 tokens (..)`, `cost $0.05`).
    spent: String,
    /// The limit and the excess over it, as the reason shows them.
    limit_text: String,
    excess: String,
    /// What the amount is made of (the cost's source, the tools called).
    detail: Option<String>,
}

impl RunBudget {
    /// A budget of `limit` tokens (input + output).
    pub fn tokens(limit: u64) -> Self {
        RunBudget {
            limit: Limit::Tokens(limit),
        }
    }

    /// A budget of `usd` dollars. A negative or non-finite limit is an execution error when the
    /// check is evaluated.
    pub fn cost(usd: f64) -> Self {
        RunBudget {
            limit: Limit::Cost(usd),
        }
    }

    /// A budget of `limit` tool calls.
    pub fn tool_calls(limit: usize) -> Self {
        RunBudget {
            limit: Limit::ToolCalls(limit),
        }
    }

    /// What the run spent against the limit, or the error grade saying why it cannot be told.
    fn spent(&self, run: &RunView<'_>) -> Result<Spent, Grade> {
        match self.limit {
            Limit::Tokens(limit) => {
                self.require_usage(
                    run,
                    "its tokens (`request.events.usage(input, output)` or `usage` events)",
                )?;
                let usage = Usage::from_events(run.events);
                let total = usage.total_tokens();
                Ok(Spent {
                    actual: total as f64,
                    limit: limit as f64,
                    within: total <= limit,
                    spent: format!(
                        "{} tokens ({})",
                        format_count(total),
                        token_breakdown(&usage)
                    ),
                    limit_text: format_count(limit),
                    excess: format_count(total.saturating_sub(limit)),
                    detail: None,
                })
            }
            Limit::Cost(limit) => {
                if !(limit.is_finite() && limit >= 0.0) {
                    return Err(Grade::error(format!(
                        "{}: the limit must be a finite amount of USD, 0 or more",
                        self.describe()
                    )));
                }
                self.require_usage(
                    run,
                    "`usage` events with the `model` that spent the tokens (priced from the \
                     price table) or the `cost_usd` they cost",
                )?;
                let cost = estimate_cost(run.events, run.config)
                    .map_err(|e| Grade::error(format!("the cost of the run is unknown: {e}")))?;
                Ok(Spent {
                    actual: cost.usd,
                    limit,
                    // Sums of float prices drift by ulps (3 × $0.01 > $0.03): a cost within a
                    // billionth of the limit is within it.
                    within: cost.usd - limit <= (limit * 1e-9).max(1e-12),
                    spent: format!("cost {}", format_usd(cost.usd)),
                    limit_text: format_usd(limit),
                    excess: format_usd(cost.usd - limit),
                    detail: Some(cost.describe()),
                })
            }
            Limit::ToolCalls(limit) => {
                let (total, calls) = tool_calls(run.events);
                Ok(Spent {
                    actual: total as f64,
                    limit: limit as f64,
                    within: total <= limit,
                    spent: match total {
                        0 => "no tool calls".to_string(),
                        1 => "1 tool call".to_string(),
                        n => format!("{n} tool calls"),
                    },
                    limit_text: limit.to_string(),
                    excess: total.saturating_sub(limit).to_string(),
                    detail: (total > 0).then_some(calls),
                })
            }
        }
    }

    /// An error grade when the run has no `usage` event to measure, saying what the agent
    /// should report (`how`).
    fn require_usage(&self, run: &RunView<'_>, how: &str) -> Result<(), Grade> {
        if run.events.iter().any(|e| matches!(e, Event::Usage { .. })) {
            Ok(())
        } else {
            Err(Grade::error(format!(
                "the run has no `usage` events, so {} cannot be checked; have the agent report \
                 {how}",
                self.describe()
            )))
        }
    }
}

impl Spent {
    /// The score (1 within the limit, `limit / actual` over it) and the reason.
    fn grade(self) -> Grade {
        let verdict = if self.within {
            format!("within the limit of {}", self.limit_text)
        } else {
            format!("over the limit of {} by {}", self.limit_text, self.excess)
        };
        let reason = match &self.detail {
            Some(detail) => format!("{}, {verdict}: {detail}", self.spent),
            None => format!("{}, {verdict}", self.spent),
        };
        let score = if self.within {
            1.0
        } else {
            budget_score(self.limit, self.actual)
        };
        Grade::score(score, reason)
    }
}

/// How many names a reason lists before eliding the rest.
const LISTED_TOOLS: usize = 10;

/// The number of `action.called` events, and the tools called (`search ×3, lookup`) in order
/// of first call; linear in the number of events.
fn tool_calls(events: &[Event]) -> (usize, String) {
    let mut calls: Vec<(&str, usize)> = Vec::new();
    let mut index: HashMap<&str, usize> = HashMap::new();
    let mut total = 0usize;
    for event in events {
        if let Event::ActionCalled { name, .. } = event {
            total += 1;
            let slot = *index.entry(name.as_str()).or_insert_with(|| {
                calls.push((name.as_str(), 0));
                calls.len() - 1
            });
            calls[slot].1 += 1;
        }
    }
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
    (total, names.join(", "))
}

impl ScopedCheck for RunBudget {
    fn describe(&self) -> String {
        match self.limit {
            Limit::Tokens(limit) => format!("max_tokens({limit})"),
            Limit::Cost(usd) => format!("max_cost({usd})"),
            Limit::ToolCalls(limit) => format!("max_tool_calls({limit})"),
        }
    }

    fn evaluate(&self, run: &RunView<'_>) -> Grade {
        let grade = match self.spent(run) {
            Ok(spent) => spent.grade(),
            Err(error) => error,
        };
        match self.limit {
            // a measurement, whatever the verdict: snapshots redact its numbers
            Limit::Tokens(_) | Limit::Cost(_) => grade.measured(),
            // a count of calls is the agent's behaviour, not a measurement
            Limit::ToolCalls(_) => grade,
        }
    }

    fn kind(&self) -> AssertionKind {
        AssertionKind::Efficiency
    }

    /// Gate with threshold 1: a budget passes only in full unless made soft.
    fn settings(&self) -> Settings {
        Settings {
            threshold: Some(1.0),
            ..Settings::gate()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::assertion::Severity;
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
            &RunBudget::tokens(1),
            &RunBudget::cost(1.0),
            &RunBudget::tool_calls(1),
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
        let within = grade(&RunBudget::tokens(12_000), &events);
        assert_eq!(within.score, 1.0);
        assert_eq!(
            within.reason,
            "12,000 tokens (10,000 input (of which 2,000 cache-read) + 2,000 output), within the limit of 12,000"
        );
        let over = grade(&RunBudget::tokens(6_000), &events);
        assert_eq!(over.score, 0.5);
        assert!(
            over.reason.ends_with("over the limit of 6,000 by 6,000"),
            "{}",
            over.reason
        );
    }

    #[test]
    fn token_and_cost_budgets_without_usage_are_errors() {
        for check in [
            &RunBudget::tokens(10) as &dyn ScopedCheck,
            &RunBudget::cost(1.0),
        ] {
            let g = grade(check, &[Event::assistant("hi")]);
            let error = g.error.expect("no usage must not pass");
            assert!(error.contains("no `usage` events"), "{error}");
            assert!(error.contains(&check.describe()), "{error}");
        }
    }

    #[test]
    fn max_cost_explains_where_the_cost_came_from() {
        let reported = grade(
            &RunBudget::cost(0.10),
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
            &RunBudget::cost(0.5),
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
            &RunBudget::cost(0.05),
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
            &RunBudget::cost(1.0),
            &[usage(10, 10, 0, None, Some("acme/x-1"))],
        );
        let error = unknown.error.unwrap();
        assert!(error.contains("\"acme/x-1\""), "{error}");
        assert!(
            error.contains("[prices.\"acme/x-1\"]\ninput = .."),
            "{error}"
        );
        let bad_limit = grade(&RunBudget::cost(-1.0), &[usage(1, 1, 0, Some(0.1), None)]);
        assert!(bad_limit.error.unwrap().contains("max_cost(-1)"));
        let nan = grade(
            &RunBudget::cost(f64::NAN),
            &[usage(1, 1, 0, Some(0.1), None)],
        );
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
        let within = grade(&RunBudget::tool_calls(4), &events);
        assert_eq!(within.score, 1.0);
        assert_eq!(
            within.reason,
            "4 tool calls, within the limit of 4: search ×3, lookup"
        );
        let over = grade(&RunBudget::tool_calls(2), &events);
        assert_eq!(over.score, 0.5);
        assert_eq!(
            over.reason,
            "4 tool calls, over the limit of 2 by 2: search ×3, lookup"
        );
        let none = grade(&RunBudget::tool_calls(0), &[Event::assistant("hi")]);
        assert_eq!(
            (none.score, none.reason.as_str()),
            (1.0, "no tool calls, within the limit of 0")
        );
        let zero = grade(&RunBudget::tool_calls(0), &[call("x")]);
        assert_eq!(zero.score, 0.0);
        let many: Vec<Event> = (0..12).map(|i| call(&format!("t{i}"))).collect();
        let r = grade(&RunBudget::tool_calls(20), &many).reason;
        assert!(r.ends_with("t9, and 2 more tools"), "{r}");
    }
}

#[cfg(test)]
mod doc_examples {
    //! The examples that were this file's doc tests while its items were public.

    #[test]
    fn example_1() {
        use crate::checks::run_budget::RunBudget;
        use crate::checks::scope::{RunView, ScopedCheck};
        use crate::{Event, config::Config};

        let events = [Event::Usage {
            input_tokens: 9_000,
            output_tokens: 3_000,
            cache_read_tokens: 0,
            cost_usd: None,
            model: Some("openai/gpt-4o".into()),
        }];
        let config = Config::default();
        let grade = RunBudget::tokens(10_000).evaluate(&RunView {
            events: &events,
            config: &config,
        });
        assert!((grade.score - 10_000.0 / 12_000.0).abs() < 1e-9);
        assert!(grade.reason.contains("12,000 tokens"), "{}", grade.reason);
    }
}
