//! One `[prices."provider/model"]` entry of `niceeval.toml`: what a model costs, as data. The
//! price layer ([`crate::resources::price`]) turns it into a `Price` and looks prices up.

use serde::{Deserialize, Deserializer, Serialize};

/// What a model costs, in USD per 1M tokens, as `niceeval.toml` writes it:
///
/// ```toml
/// [prices."acme/brainy-1"]
/// input = 0.8        # USD per 1M input tokens
/// output = 3.2       # USD per 1M output tokens
/// cache_read = 0.08  # optional: USD per 1M cache-read tokens (default: the input price)
/// ```
///
/// Prices must be finite and not negative; anything else is an error naming the key.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
#[serde(
    deny_unknown_fields,
    expecting = "a table with `input` and `output` prices in USD per 1M tokens"
)]
pub struct PriceConfig {
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

fn check_usd(value: f64) -> Result<f64, super::validate::ValueError> {
    if value.is_finite() && value >= 0.0 {
        Ok(value)
    } else {
        Err(super::validate::ValueError::Price(value))
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
