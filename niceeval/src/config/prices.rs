//! One `[prices."provider/model"]` entry of `niceeval.toml`: what a model costs. The table
//! that looks prices up, with the built-in list prices, is [`crate::price`].

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize};

use crate::event::Usage;
use crate::excerpt::format_usd;

/// What a model costs, in USD per 1M tokens. In `niceeval.toml`:
///
/// ```toml
/// [prices."acme/brainy-1"]
/// input = 0.8        # USD per 1M input tokens
/// output = 3.2       # USD per 1M output tokens
/// cache_read = 0.08  # optional: USD per 1M cache-read tokens (default: the input price)
/// ```
///
/// Prices must be finite and not negative; anything else is an error naming the key.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(
    deny_unknown_fields,
    expecting = "a table with `input` and `output` prices in USD per 1M tokens"
)]
pub struct Price {
    /// USD per 1M input (prompt) tokens not served from a cache.
    #[serde(deserialize_with = "usd_per_million")]
    pub input: f64,
    /// USD per 1M output (completion) tokens.
    #[serde(deserialize_with = "usd_per_million")]
    pub output: f64,
    /// USD per 1M cache-read tokens; `None` charges them at the input price.
    #[serde(
        default,
        deserialize_with = "optional_usd_per_million",
        skip_serializing_if = "Option::is_none"
    )]
    pub cache_read: Option<f64>,
}

impl Price {
    /// A price without a separate cache-read price.
    pub const fn new(input: f64, output: f64) -> Price {
        Price {
            input,
            output,
            cache_read: None,
        }
    }

    /// Sets the cache-read price.
    pub const fn with_cache_read(mut self, cache_read: f64) -> Price {
        self.cache_read = Some(cache_read);
        self
    }

    /// The cost of `usage` at this price, in USD.
    ///
    /// Cache-read tokens are part of `input_tokens` (the convention of [`Usage`]): they are
    /// charged at the cache-read price and the rest of the input at the input price.
    ///
    /// ```
    /// use niceeval::{price::Price, Usage};
    ///
    /// let price = Price::new(2.0, 8.0).with_cache_read(0.5);
    /// let usage = Usage { input_tokens: 1_000_000, output_tokens: 500_000, cache_read_tokens: 200_000, cost_usd: None };
    /// // 800k uncached × $2 + 200k cached × $0.5 + 500k output × $8
    /// assert!((price.cost(&usage) - (1.6 + 0.1 + 4.0)).abs() < 1e-9);
    /// ```
    pub fn cost(&self, usage: &Usage) -> f64 {
        let cached = usage.cache_read_tokens.min(usage.input_tokens);
        let uncached = usage.input_tokens - cached;
        let cache_price = self.cache_read.unwrap_or(self.input);
        (uncached as f64 * self.input
            + cached as f64 * cache_price
            + usage.output_tokens as f64 * self.output)
            / 1_000_000.0
    }
}

impl fmt::Display for Price {
    /// `$2.50 input / $10.00 output per 1M tokens (cache-read $1.25)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} input / {} output per 1M tokens",
            format_usd(self.input),
            format_usd(self.output)
        )?;
        if let Some(cache) = self.cache_read {
            write!(f, " (cache-read {})", format_usd(cache))?;
        }
        Ok(())
    }
}

fn check_usd(value: f64) -> Result<f64, String> {
    if value.is_finite() && value >= 0.0 {
        Ok(value)
    } else {
        Err(format!(
            "a price must be a number of USD per 1M tokens, 0 or more; got {value}"
        ))
    }
}

fn usd_per_million<'de, D: Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
    check_usd(f64::deserialize(d)?).map_err(serde::de::Error::custom)
}

fn optional_usd_per_million<'de, D: Deserializer<'de>>(d: D) -> Result<Option<f64>, D::Error> {
    match Option::<f64>::deserialize(d)? {
        Some(value) => check_usd(value).map(Some).map_err(serde::de::Error::custom),
        None => Ok(None),
    }
}
