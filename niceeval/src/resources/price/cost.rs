//! The cost of a run: agent-reported costs summed, everything else estimated from the price
//! table per model, and the errors that make a cost unknowable.

use std::fmt;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::{PriceMatch, PriceTable};
use crate::base::event::{Event, Usage};
use crate::base::excerpt::{format_count, format_usd};
use crate::config::Config;

/// What a run cost, and where each part of the figure came from.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Cost {
    /// Total in USD: reported plus estimated.
    pub usd: f64,
    /// The part reported by the agent (`cost_usd` on `usage` events).
    pub reported_usd: f64,
    /// How many `usage` events carried a reported cost.
    pub reported_events: usize,
    /// The estimated part, one entry per model, in order of first use.
    pub estimates: Vec<Estimate>,
    /// How many `usage` events the run had.
    pub usage_events: usize,
}

/// The estimated cost of the tokens one model spent.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Estimate {
    /// The model as the agent named it.
    pub model: String,
    /// The price entry it was priced at.
    pub priced_as: PriceMatch,
    /// The tokens priced (summed over its `usage` events without a reported cost).
    pub usage: Usage,
    /// How many `usage` events were priced.
    pub events: usize,
    /// The estimate in USD.
    pub usd: f64,
}

impl Cost {
    /// Whether any part of the cost is an estimate.
    pub fn is_estimated(&self) -> bool {
        !self.estimates.is_empty()
    }

    /// Where the figure came from, for reasons and reports: each reported or estimated part with
    /// its tokens, model, price and price source.
    pub fn describe(&self) -> String {
        let mut parts = Vec::new();
        if self.reported_events > 0 {
            parts.push(format!(
                "{} reported by the agent ({} usage event{})",
                format_usd(self.reported_usd),
                self.reported_events,
                plural(self.reported_events)
            ));
        }
        for estimate in &self.estimates {
            let matched = &estimate.priced_as;
            let priced_as = if matched.key.eq_ignore_ascii_case(&estimate.model) {
                String::new()
            } else {
                format!(" (priced as {})", matched.key)
            };
            parts.push(format!(
                "{} estimated for {}{priced_as}: {} at {} ({})",
                format_usd(estimate.usd),
                estimate.model,
                describe_tokens(&estimate.usage),
                matched.price,
                matched.source
            ));
        }
        if parts.is_empty() {
            if self.usage_events == 0 {
                "no usage events".to_string()
            } else {
                "no tokens were used".to_string()
            }
        } else {
            parts.join("; ")
        }
    }
}

impl fmt::Display for Cost {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({})", format_usd(self.usd), self.describe())
    }
}

/// Why the cost of a run cannot be known.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum PriceError {
    /// Tokens were spent by models that have no price.
    #[error("{}", unknown_models(.models, .config_file.as_deref()))]
    UnknownModel {
        /// The models without a price, as the agent named them.
        models: Vec<String>,
        /// The `niceeval.toml` in effect, if one was found.
        config_file: Option<PathBuf>,
    },
    /// A `usage` event spent tokens but names neither its cost nor its model.
    #[error(
        "usage event {event} of the run spent {tokens} tokens but has neither `cost_usd` nor \
         `model`, so its cost cannot be known; have the agent report `model` on usage events \
         (priced from the built-in table or [prices.\"provider/model\"] input = .., output = .. \
         in niceeval.toml) or report `cost_usd` itself"
    )]
    MissingModel {
        /// 1-based position among the run's `usage` events.
        event: usize,
        /// Input plus output tokens of that event.
        tokens: u64,
    },
    /// The agent reported a negative or non-finite cost.
    #[error(
        "usage event {event} of the run reports cost_usd = {value}; a reported cost must be a \
         finite number of USD, 0 or more"
    )]
    InvalidReportedCost {
        /// 1-based position among the run's `usage` events.
        event: usize,
        /// The value reported.
        value: f64,
    },
}

fn unknown_models(models: &[String], config_file: Option<&Path>) -> String {
    let names = models
        .iter()
        .map(|m| format!("{m:?}"))
        .collect::<Vec<_>>()
        .join(", ");
    let (s, it) = if models.len() == 1 {
        ("", "its")
    } else {
        ("s", "their")
    };
    let file = match config_file {
        Some(path) => format!("[prices] of {}", path.display()),
        None => "[prices] of a niceeval.toml (none was found)".to_string(),
    };
    let target = match config_file {
        Some(path) => path.display().to_string(),
        None => "niceeval.toml (next to Cargo.toml or in a parent directory)".to_string(),
    };
    let mut out = format!(
        "no price for model{s} {names}: not in the built-in price table nor in {file}. \
         Add {it} prices (USD per 1M tokens) to {target}:"
    );
    for model in models {
        out.push_str(&format!(
            "\n\n[prices.{model:?}]\ninput = ..    # USD per 1M input tokens\noutput = ..   # USD per 1M output tokens"
        ));
    }
    out
}

impl PriceTable<'_> {
    /// The cost of `events`: every `usage` event's reported `cost_usd` when it has one, else its
    /// tokens at the price of its `model`. A `usage` event without tokens costs nothing.
    ///
    /// ```
    /// use niceeval::Event;
    /// use niceeval::__workspace::price::PriceTable;
    ///
    /// let usage = |model: &str, input, output| Event::Usage {
    ///     input_tokens: input, output_tokens: output, cache_read_tokens: 0,
    ///     cost_usd: None, model: Some(model.to_string()),
    /// };
    /// let cost = PriceTable::builtin()
    ///     .estimate(&[usage("gpt-4o-mini", 1_000_000, 0), usage("gpt-4o-mini", 0, 1_000_000)])
    ///     .unwrap();
    /// assert!((cost.usd - 0.75).abs() < 1e-9); // $0.15 input + $0.60 output
    /// assert_eq!(cost.estimates.len(), 1);
    ///
    /// let err = PriceTable::builtin().estimate(&[usage("acme/brainy-1", 10, 10)]).unwrap_err();
    /// assert!(err.to_string().contains("[prices.\"acme/brainy-1\"]"));
    /// ```
    pub fn estimate(&self, events: &[Event]) -> Result<Cost, PriceError> {
        let mut cost = Cost::default();
        let mut unknown: Vec<String> = Vec::new();
        for event in events {
            let Event::Usage {
                input_tokens,
                output_tokens,
                cache_read_tokens,
                cost_usd,
                model,
            } = event
            else {
                continue;
            };
            cost.usage_events += 1;
            let index = cost.usage_events;
            if let Some(value) = *cost_usd {
                if !(value.is_finite() && value >= 0.0) {
                    return Err(PriceError::InvalidReportedCost {
                        event: index,
                        value,
                    });
                }
                cost.reported_usd += value;
                cost.reported_events += 1;
                continue;
            }
            let usage = Usage {
                input_tokens: *input_tokens,
                output_tokens: *output_tokens,
                cache_read_tokens: *cache_read_tokens,
                cost_usd: None,
            };
            if usage.total_tokens() == 0 && usage.cache_read_tokens == 0 {
                continue;
            }
            let Some(model) = model.as_deref().map(str::trim).filter(|m| !m.is_empty()) else {
                return Err(PriceError::MissingModel {
                    event: index,
                    tokens: usage.total_tokens(),
                });
            };
            if let Some(estimate) = cost.estimates.iter_mut().find(|e| e.model == model) {
                let usd = estimate.priced_as.price.cost(&usage);
                estimate.usage.add(&usage);
                estimate.events += 1;
                estimate.usd += usd;
                continue;
            }
            match self.lookup(model) {
                Some(priced_as) => cost.estimates.push(Estimate {
                    model: model.to_string(),
                    usd: priced_as.price.cost(&usage),
                    priced_as,
                    usage,
                    events: 1,
                }),
                None => {
                    if !unknown.iter().any(|m| m == model) {
                        unknown.push(model.to_string());
                    }
                }
            }
        }
        if !unknown.is_empty() {
            return Err(PriceError::UnknownModel {
                models: unknown,
                config_file: self.config_file(),
            });
        }
        cost.usd = cost.reported_usd + cost.estimates.iter().map(|e| e.usd).sum::<f64>();
        Ok(cost)
    }
}

/// The cost of `events` under the prices of `config` (its `[prices]` over the built-in table);
/// see [`PriceTable::estimate`].
///
/// ```
/// use niceeval::Event;
/// use niceeval::__workspace::{config::Config, price::estimate_cost};
///
/// let config = Config::parse("[prices.\"acme/brainy-1\"]\ninput = 1.0\noutput = 4.0\n", "niceeval.toml")?;
/// let events = [
///     Event::Usage { input_tokens: 500_000, output_tokens: 250_000, cache_read_tokens: 0, cost_usd: None, model: Some("acme/brainy-1".into()) },
///     Event::Usage { input_tokens: 10, output_tokens: 10, cache_read_tokens: 0, cost_usd: Some(0.25), model: None },
/// ];
/// let cost = estimate_cost(&events, &config)?;
/// assert!((cost.usd - (0.5 + 1.0 + 0.25)).abs() < 1e-9);
/// assert_eq!(cost.reported_usd, 0.25);
/// assert!(cost.describe().contains("[prices] in niceeval.toml"));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn estimate_cost(events: &[Event], config: &Config) -> Result<Cost, PriceError> {
    PriceTable::from_config(config).estimate(events)
}

/// The cost a report shows: `None` when the run has no `usage` events or its cost is unknowable.
pub(crate) fn run_cost(events: &[Event], config: &Config) -> Option<f64> {
    estimate_cost(events, config)
        .ok()
        .filter(|cost| cost.usage_events > 0)
        .map(|cost| cost.usd)
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

fn describe_tokens(usage: &Usage) -> String {
    format!("{} tokens", token_breakdown(usage))
}

/// `1,200 input (of which 300 cache-read) + 80 output`: how a usage splits, for reasons.
pub(crate) fn token_breakdown(usage: &Usage) -> String {
    let cache = if usage.cache_read_tokens > 0 {
        format!(
            " (of which {} cache-read)",
            format_count(usage.cache_read_tokens)
        )
    } else {
        String::new()
    };
    format!(
        "{} input{cache} + {} output",
        format_count(usage.input_tokens),
        format_count(usage.output_tokens)
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resources::price::Price;
    use std::collections::BTreeMap;

    fn usage(input: u64, output: u64, cost: Option<f64>, model: Option<&str>) -> Event {
        Event::Usage {
            input_tokens: input,
            output_tokens: output,
            cache_read_tokens: 0,
            cost_usd: cost,
            model: model.map(str::to_string),
        }
    }

    #[test]
    fn formats() {
        let cases = [
            (0.0, "$0.00"),
            (0.5, "$0.50"),
            (0.5004, "$0.5004"),
            (0.0123, "$0.0123"),
            (0.00004567, "$0.00004567"),
            (12.3456, "$12.35"),
            (1.0, "$1.00"),
        ];
        for (usd, text) in cases {
            assert_eq!(format_usd(usd), text, "{usd}");
        }
        assert_eq!(format_count(0), "0");
        assert_eq!(format_count(999), "999");
        assert_eq!(format_count(1_000), "1,000");
        assert_eq!(format_count(12_345_678), "12,345,678");
    }

    #[test]
    fn reported_cost_wins_per_event_and_the_rest_is_estimated_per_model() {
        let events = [
            Event::user("hi"),
            usage(1_000_000, 0, Some(0.01), Some("gpt-4o")),
            usage(1_000_000, 0, None, Some("gpt-4o")),
            usage(0, 1_000_000, None, Some("openai/gpt-4o-2024-08-06")),
            usage(0, 1_000_000, None, Some("gpt-4o")),
            usage(0, 0, None, None),
        ];
        let cost = PriceTable::builtin().estimate(&events).unwrap();
        assert_eq!(cost.usage_events, 5);
        assert_eq!(cost.reported_events, 1);
        assert_eq!(cost.estimates.len(), 2, "{cost:?}");
        let gpt4o = &cost.estimates[0];
        assert_eq!(gpt4o.events, 2);
        assert!((gpt4o.usd - 12.5).abs() < 1e-9);
        assert!((cost.estimates[1].usd - 10.0).abs() < 1e-9);
        assert!((cost.usd - 22.51).abs() < 1e-9);
        let text = cost.describe();
        assert!(
            text.contains("$0.01 reported by the agent (1 usage event)"),
            "{text}"
        );
        assert!(
            text.contains("$12.50 estimated for gpt-4o (priced as openai/gpt-4o)"),
            "{text}"
        );
        assert!(
            text.contains("estimated for openai/gpt-4o-2024-08-06 (priced as openai/gpt-4o)"),
            "{text}"
        );
        assert!(text.contains("built-in list price as of"), "{text}");
    }

    #[test]
    fn unknown_models_are_listed_with_the_lines_to_add() {
        let events = [
            usage(5, 5, None, Some("acme/brainy-1")),
            usage(5, 5, None, Some("gpt-4o")),
            usage(5, 5, None, Some("acme/brainy-1")),
            usage(5, 5, None, Some("local-llama")),
        ];
        let config = Config {
            source: Some(PathBuf::from("/repo/niceeval.toml")),
            ..Config::default()
        };
        let err = estimate_cost(&events, &config).unwrap_err();
        assert_eq!(
            err,
            PriceError::UnknownModel {
                models: vec!["acme/brainy-1".into(), "local-llama".into()],
                config_file: Some(PathBuf::from("/repo/niceeval.toml")),
            }
        );
        let text = err.to_string();
        assert!(
            text.starts_with("no price for models \"acme/brainy-1\", \"local-llama\""),
            "{text}"
        );
        assert!(text.contains("/repo/niceeval.toml"), "{text}");
        assert!(
            text.contains("[prices.\"acme/brainy-1\"]\ninput = .."),
            "{text}"
        );
        assert!(
            text.contains("[prices.\"local-llama\"]\ninput = .."),
            "{text}"
        );
        assert!(text.contains("output = .."), "{text}");
    }

    #[test]
    fn overrides_price_unknown_models() {
        let mut prices = BTreeMap::new();
        prices.insert("acme/brainy-1".to_string(), Price::new(1.0, 2.0));
        let cost = PriceTable::new(&prices)
            .estimate(&[usage(1_000_000, 1_000_000, None, Some("brainy-1"))])
            .unwrap();
        assert!((cost.usd - 3.0).abs() < 1e-9);
        assert!(cost.describe().contains("[prices] in niceeval.toml"));
    }

    #[test]
    fn missing_model_and_bad_reported_cost_are_errors() {
        let err = PriceTable::builtin()
            .estimate(&[usage(0, 0, None, None), usage(7, 3, None, None)])
            .unwrap_err();
        assert_eq!(
            err,
            PriceError::MissingModel {
                event: 2,
                tokens: 10
            }
        );
        assert!(err.to_string().contains("neither `cost_usd` nor `model`"));
        let err = PriceTable::builtin()
            .estimate(&[usage(1, 1, Some(-0.5), None)])
            .unwrap_err();
        assert!(matches!(
            err,
            PriceError::InvalidReportedCost { event: 1, .. }
        ));
        assert!(err.to_string().contains("-0.5"));
    }

    #[test]
    fn run_cost_is_none_without_usage_or_when_unknowable() {
        let config = Config::default();
        assert_eq!(run_cost(&[Event::user("hi")], &config), None);
        assert_eq!(run_cost(&[usage(1, 1, None, Some("nope"))], &config), None);
        assert_eq!(
            run_cost(&[usage(1, 1, Some(0.2), None)], &config),
            Some(0.2)
        );
        assert_eq!(run_cost(&[usage(0, 0, None, None)], &config), Some(0.0));
    }
}
