//! Model prices and cost estimation: the [`Price`] of a model (USD per 1M tokens), the
//! [`PriceTable`] that finds one by model name (the `[prices]` of `niceeval.toml` first, then
//! the built-in list prices), and [`estimate_cost`], which turns a run's `usage` events into a
//! [`Cost`].
//!
//! A model name is looked up as given, then without its provider prefix (`openai/gpt-4o` →
//! `gpt-4o`), then without a trailing date or version (`gpt-4o-2024-08-06` → `gpt-4o`,
//! `claude-sonnet-4-20250514` → `claude-sonnet-4`, `gemini-2.0-flash-001` →
//! `gemini-2.0-flash`), case-insensitively; the whole sequence runs over the overrides before
//! the built-in table, so an override always wins. A bare name also finds a `provider/name`
//! entry, so `gpt-4o` and `azure/gpt-4o` are priced like `openai/gpt-4o`.
//!
//! ```
//! use niceeval::__workspace::price::{PriceSource, PriceTable};
//!
//! let table = PriceTable::builtin();
//! let hit = table.lookup("anthropic/claude-sonnet-4-20250514").unwrap();
//! assert_eq!(hit.key, "anthropic/claude-sonnet-4");
//! assert_eq!((hit.price.input, hit.price.output), (3.0, 15.0));
//! assert_eq!(hit.source, PriceSource::BuiltIn);
//! assert!(table.lookup("acme/unknown-model").is_none());
//! ```

mod builtin;
mod cost;

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::base::event::Usage;
use crate::base::excerpt::format_usd;
use crate::config::{Config, PriceConfig};

pub use builtin::PRICES_AS_OF;
pub use cost::estimate_cost;
pub(crate) use cost::{run_cost, token_breakdown};

/// What a model costs, in USD per 1M tokens (a `[prices."provider/model"]` entry of
/// `niceeval.toml`, or a built-in list price).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Price {
    /// USD per 1M input (prompt) tokens not served from a cache.
    pub input: f64,
    /// USD per 1M output (completion) tokens.
    pub output: f64,
    /// USD per 1M cache-read tokens; `None` charges them at the input price.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_read: Option<f64>,
}

impl From<PriceConfig> for Price {
    fn from(entry: PriceConfig) -> Price {
        Price {
            input: entry.input,
            output: entry.output,
            cache_read: entry.cache_read,
        }
    }
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
    /// use niceeval::Usage;
    /// use niceeval::__workspace::price::Price;
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

/// Where a price came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum PriceSource {
    /// A `[prices."provider/model"]` entry of `niceeval.toml`.
    Config,
    /// The built-in table of list prices (`PRICES_AS_OF`).
    BuiltIn,
}

impl fmt::Display for PriceSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PriceSource::Config => f.write_str("[prices] in niceeval.toml"),
            PriceSource::BuiltIn => write!(f, "built-in list price as of {PRICES_AS_OF}"),
        }
    }
}

/// A successful lookup: which entry matched, its price, and where it came from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PriceMatch {
    /// The entry's name: the `[prices]` key as written, or `provider/model` for a built-in.
    pub key: String,
    /// The price.
    pub price: Price,
    /// Override or built-in.
    pub source: PriceSource,
}

/// Prices by model name: `[prices]` overrides first, then the built-in list prices.
///
/// ```
/// use std::collections::BTreeMap;
/// use niceeval::__workspace::price::{Price, PriceSource, PriceTable};
///
/// let mut overrides = BTreeMap::new();
/// overrides.insert("openai/gpt-4o".to_string(), Price::new(2.0, 8.0));
/// overrides.insert("acme/brainy-1".to_string(), Price::new(1.0, 2.0));
/// let table = PriceTable::new(&overrides);
///
/// // the override wins over the built-in entry, found through the dated name too
/// let hit = table.lookup("gpt-4o-2024-08-06").unwrap();
/// assert_eq!((hit.key.as_str(), hit.price.input, hit.source), ("openai/gpt-4o", 2.0, PriceSource::Config));
/// // models only the overrides know
/// assert_eq!(table.lookup("acme/brainy-1").unwrap().price.output, 2.0);
/// // everything else falls through to the built-in table
/// assert_eq!(table.lookup("gpt-4.1-mini").unwrap().source, PriceSource::BuiltIn);
/// ```
#[derive(Debug, Clone, Copy)]
pub struct PriceTable<'a> {
    overrides: Overrides<'a>,
    config_file: Option<&'a Path>,
}

impl PriceTable<'static> {
    /// The built-in list prices only.
    pub fn builtin() -> Self {
        PriceTable {
            overrides: Overrides::None,
            config_file: None,
        }
    }

    /// Every built-in entry as `(provider/model, price)`, aliases included.
    ///
    /// ```
    /// let entries: Vec<_> = niceeval::__workspace::price::PriceTable::builtin_entries().collect();
    /// assert!(entries.iter().any(|(name, _)| name == "google/gemini-2.5-flash"));
    /// ```
    pub fn builtin_entries() -> impl Iterator<Item = (String, Price)> {
        builtin::BUILTIN.iter().flat_map(|entry| {
            entry
                .names
                .iter()
                .map(move |name| (format!("{}/{name}", entry.provider), entry.price))
        })
    }
}

impl<'a> PriceTable<'a> {
    /// The built-in prices with `overrides` (keys `provider/model` or bare model names) on top.
    pub fn new(overrides: &'a BTreeMap<String, Price>) -> Self {
        PriceTable {
            overrides: Overrides::Prices(overrides),
            config_file: None,
        }
    }

    /// The built-in prices with the `[prices]` of `config` on top.
    pub fn from_config(config: &'a Config) -> Self {
        PriceTable {
            overrides: Overrides::Config(&config.prices),
            config_file: config.source.as_deref(),
        }
    }

    /// The `niceeval.toml` the overrides came from, if any (named in errors).
    pub fn config_file(&self) -> Option<PathBuf> {
        self.config_file.map(Path::to_path_buf)
    }

    /// Finds the price of `model`; see the module docs for the lookup order.
    pub fn lookup(&self, model: &str) -> Option<PriceMatch> {
        let candidates = candidates(model);
        for candidate in &candidates {
            let found = match self.overrides {
                Overrides::None => None,
                Overrides::Prices(map) => find_override(map, candidate).map(|(k, p)| (k, *p)),
                Overrides::Config(map) => {
                    find_override(map, candidate).map(|(k, p)| (k, Price::from(*p)))
                }
            };
            if let Some((key, price)) = found {
                return Some(PriceMatch {
                    key: key.clone(),
                    price,
                    source: PriceSource::Config,
                });
            }
        }
        candidates.iter().find_map(|candidate| {
            find_builtin(candidate).map(|(entry, _)| PriceMatch {
                key: format!("{}/{}", entry.provider, entry.names[0]),
                price: entry.price,
                source: PriceSource::BuiltIn,
            })
        })
    }
}

/// The model part of `provider/model` (the text after the last `/`).
fn bare(name: &str) -> &str {
    name.rsplit('/').next().unwrap_or(name)
}

/// The names to try for `model`, in order: as given, without provider, without date/version.
fn candidates(model: &str) -> Vec<String> {
    let name = model.trim().to_ascii_lowercase();
    let mut out: Vec<String> = Vec::with_capacity(4);
    let mut push = |candidate: &str| {
        if !candidate.is_empty() && !out.iter().any(|c| c == candidate) {
            out.push(candidate.to_string());
        }
    };
    push(&name);
    push(bare(&name));
    if let Some(undated) = undated(&name) {
        push(undated);
    }
    if let Some(undated) = undated(bare(&name)) {
        push(undated);
    }
    out
}

/// `name` without a trailing date (`-20250514`, `@20250514`, `-2024-08-06`) or numeric version
/// (`-001`).
fn undated(name: &str) -> Option<&str> {
    let bytes = name.as_bytes();
    let digits = |range: std::ops::Range<usize>| bytes[range].iter().all(u8::is_ascii_digit);
    let len = bytes.len();
    // -YYYY-MM-DD (every byte checked is ASCII, so the cut is a char boundary)
    if len > 11 {
        let at = len - 11;
        if bytes[at] == b'-'
            && bytes[at + 5] == b'-'
            && bytes[at + 8] == b'-'
            && digits(at + 1..at + 5)
            && digits(at + 6..at + 8)
            && digits(at + 9..len)
        {
            return Some(&name[..at]);
        }
    }
    // -YYYYMMDD, @YYYYMMDD, -NNN
    let cut = name.rfind(['-', '@'])?;
    let tail = len - cut - 1;
    let dated = tail == 8 && digits(cut + 1..len);
    let versioned = tail == 3 && bytes[cut] == b'-' && digits(cut + 1..len);
    (cut > 0 && (dated || versioned)).then(|| &name[..cut])
}

/// The `[prices]` a table looks in before the built-in list.
#[derive(Debug, Clone, Copy)]
enum Overrides<'a> {
    None,
    Prices(&'a BTreeMap<String, Price>),
    Config(&'a BTreeMap<String, PriceConfig>),
}

fn find_override<'m, P>(
    overrides: &'m BTreeMap<String, P>,
    candidate: &str,
) -> Option<(&'m String, &'m P)> {
    let exact = overrides
        .iter()
        .find(|(key, _)| key.trim().eq_ignore_ascii_case(candidate));
    exact.or_else(|| {
        (!candidate.contains('/'))
            .then(|| {
                overrides
                    .iter()
                    .find(|(key, _)| bare(key.trim()).eq_ignore_ascii_case(candidate))
            })
            .flatten()
    })
}

fn find_builtin(candidate: &str) -> Option<(&'static builtin::Entry, &'static str)> {
    let (provider, model) = match candidate.rsplit_once('/') {
        Some((provider, model)) => (Some(provider), model),
        None => (None, candidate),
    };
    builtin::BUILTIN.iter().find_map(|entry| {
        if provider.is_some_and(|p| p != entry.provider) {
            return None;
        }
        entry
            .names
            .iter()
            .find(|name| **name == model)
            .map(|name| (entry, *name))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::event::Usage;

    fn price_of(table: &PriceTable<'_>, model: &str) -> Option<(String, f64, f64)> {
        table
            .lookup(model)
            .map(|m| (m.key, m.price.input, m.price.output))
    }

    #[test]
    fn builtin_lookup_order_table() {
        let table = PriceTable::builtin();
        let cases: &[(&str, Option<&str>)] = &[
            ("gpt-4o", Some("openai/gpt-4o")),
            ("openai/gpt-4o", Some("openai/gpt-4o")),
            ("OpenAI/GPT-4o", Some("openai/gpt-4o")),
            ("azure/gpt-4o", Some("openai/gpt-4o")),
            ("gpt-4o-2024-08-06", Some("openai/gpt-4o")),
            ("openai/gpt-4o-2024-08-06", Some("openai/gpt-4o")),
            ("gpt-4o-2024-05-13", Some("openai/gpt-4o-2024-05-13")),
            ("gpt-4o-mini-2024-07-18", Some("openai/gpt-4o-mini")),
            ("gpt-4.1-nano", Some("openai/gpt-4.1-nano")),
            ("o4-mini-2025-04-16", Some("openai/o4-mini")),
            ("gpt-5-mini-2025-08-07", Some("openai/gpt-5-mini")),
            (
                "claude-sonnet-4-20250514",
                Some("anthropic/claude-sonnet-4"),
            ),
            (
                "anthropic/claude-sonnet-4-5",
                Some("anthropic/claude-sonnet-4-5"),
            ),
            (
                "anthropic/claude-sonnet-4.5",
                Some("anthropic/claude-sonnet-4-5"),
            ),
            (
                "claude-haiku-4-5-20251001",
                Some("anthropic/claude-haiku-4-5"),
            ),
            (
                "claude-3-5-haiku-latest",
                Some("anthropic/claude-3-5-haiku"),
            ),
            (
                "claude-opus-4-1-20250805",
                Some("anthropic/claude-opus-4-1"),
            ),
            (
                "vertex_ai/claude-3-5-sonnet@20240620",
                Some("anthropic/claude-3-5-sonnet"),
            ),
            ("models/gemini-2.5-flash", Some("google/gemini-2.5-flash")),
            (
                "gemini/gemini-2.5-flash-lite",
                Some("google/gemini-2.5-flash-lite"),
            ),
            (
                "google/gemini-2.0-flash-001",
                Some("google/gemini-2.0-flash"),
            ),
            ("gemini-2.5-pro", Some("google/gemini-2.5-pro")),
            // a provider prefix that contradicts the table does not match the full name, but the
            // bare name still does
            ("anthropic/gpt-4o", Some("openai/gpt-4o")),
            ("acme/brainy-1", None),
            ("gpt-4o-ultra", None),
            ("", None),
        ];
        for (model, expected) in cases {
            let got = table.lookup(model).map(|m| m.key);
            assert_eq!(got.as_deref(), *expected, "lookup({model:?})");
        }
    }

    #[test]
    fn overrides_win_over_builtin_at_every_step() {
        let mut overrides = BTreeMap::new();
        overrides.insert("gpt-4o".to_string(), Price::new(1.0, 1.0));
        overrides.insert("acme/brainy-1".to_string(), Price::new(0.5, 0.7));
        overrides.insert(
            "anthropic/claude-sonnet-4".to_string(),
            Price::new(9.0, 9.0),
        );
        let table = PriceTable::new(&overrides);
        // exact built-in name, but a bare override key beats it
        assert_eq!(
            price_of(&table, "openai/gpt-4o"),
            Some(("gpt-4o".into(), 1.0, 1.0))
        );
        // dated name reaches the override before the built-in entry
        assert_eq!(
            price_of(&table, "claude-sonnet-4-20250514"),
            Some(("anthropic/claude-sonnet-4".into(), 9.0, 9.0))
        );
        assert_eq!(
            price_of(&table, "brainy-1-20250101"),
            Some(("acme/brainy-1".into(), 0.5, 0.7))
        );
        assert_eq!(
            table.lookup("gpt-5").map(|m| m.source),
            Some(PriceSource::BuiltIn)
        );
    }

    #[test]
    fn undated_strips_only_dates_and_versions() {
        let cases = [
            ("gpt-4o-2024-08-06", Some("gpt-4o")),
            ("claude-3-5-sonnet-20241022", Some("claude-3-5-sonnet")),
            ("claude-3-5-sonnet@20240620", Some("claude-3-5-sonnet")),
            ("gemini-2.0-flash-001", Some("gemini-2.0-flash")),
            ("gpt-4o", None),
            ("o3", None),
            ("gpt-4.1-mini", None),
            ("model-12", None),
            ("-20240101", None),
            ("x@001", None),
            ("é-2024-08-06", Some("é")),
            ("ééééééééééé", None),
        ];
        for (name, expected) in cases {
            assert_eq!(undated(name), expected, "{name}");
        }
    }

    #[test]
    fn cost_splits_cached_input_and_saturates() {
        let price = Price::new(3.0, 15.0).with_cache_read(0.3);
        let usage = Usage {
            input_tokens: 10_000,
            output_tokens: 1_000,
            cache_read_tokens: 4_000,
            cost_usd: None,
        };
        let expected = (6_000.0 * 3.0 + 4_000.0 * 0.3 + 1_000.0 * 15.0) / 1e6;
        assert!((price.cost(&usage) - expected).abs() < 1e-12);
        // more cache reads than input (an adapter that did not fold them in): never negative
        let odd = Usage {
            cache_read_tokens: 50_000,
            ..usage
        };
        let capped = (10_000.0 * 0.3 + 1_000.0 * 15.0) / 1e6;
        assert!((price.cost(&odd) - capped).abs() < 1e-12);
        // no cache price: cache reads cost the input price
        let plain = Price::new(3.0, 15.0);
        assert!((plain.cost(&usage) - (10_000.0 * 3.0 + 15_000.0) / 1e6).abs() < 1e-12);
    }

    #[test]
    fn price_display_shows_all_parts() {
        assert_eq!(
            Price::new(2.5, 10.0).with_cache_read(1.25).to_string(),
            "$2.50 input / $10.00 output per 1M tokens (cache-read $1.25)"
        );
    }
}
