//! The built-in price table: list prices of current OpenAI, Anthropic and Google models, in USD
//! per 1M tokens, as the providers publish them for their standard (pay-as-you-go, text,
//! non-batch) tier.
//!
//! Where a provider charges more past a prompt size (Gemini 2.5 Pro and Gemini 3 Pro above 200k
//! prompt tokens, Claude Sonnet 4/4.5 above 200k with the long-context beta), the table holds
//! the base tier. Entries for which the provider publishes no cache-read price leave it unset,
//! and cache reads are then charged at the input price. Any entry is replaced by a
//! `[prices."provider/model"]` entry in `niceeval.toml`.

use super::Price;

/// When the built-in prices were taken from the providers' pricing pages.
pub const PRICES_AS_OF: &str = "2025-11";

/// One model of the built-in table: its provider, the names it is known by (API id first, then
/// aliases), and its price.
pub(super) struct Entry {
    pub provider: &'static str,
    pub names: &'static [&'static str],
    pub price: Price,
}

const fn p(input: f64, output: f64, cache_read: f64) -> Price {
    Price {
        input,
        output,
        cache_read: Some(cache_read),
    }
}

const fn p_uncached(input: f64, output: f64) -> Price {
    Price {
        input,
        output,
        cache_read: None,
    }
}

const fn e(provider: &'static str, names: &'static [&'static str], price: Price) -> Entry {
    Entry {
        provider,
        names,
        price,
    }
}

/// The table. Names are lowercase; a dated id (`gpt-4o-2024-08-06`,
/// `claude-sonnet-4-20250514`) finds its undated entry unless it has one of its own, like
/// `gpt-4o-2024-05-13`, which kept its launch price.
pub(super) static BUILTIN: &[Entry] = &[
    // OpenAI
    e(
        "openai",
        &["gpt-5.1", "gpt-5.1-chat-latest"],
        p(1.25, 10.0, 0.125),
    ),
    e(
        "openai",
        &["gpt-5", "gpt-5-chat-latest", "gpt-5-codex"],
        p(1.25, 10.0, 0.125),
    ),
    e("openai", &["gpt-5-mini"], p(0.25, 2.0, 0.025)),
    e("openai", &["gpt-5-nano"], p(0.05, 0.40, 0.005)),
    e("openai", &["gpt-5-pro"], p_uncached(15.0, 120.0)),
    e("openai", &["gpt-4.1"], p(2.0, 8.0, 0.50)),
    e("openai", &["gpt-4.1-mini"], p(0.40, 1.60, 0.10)),
    e("openai", &["gpt-4.1-nano"], p(0.10, 0.40, 0.025)),
    e("openai", &["gpt-4o"], p(2.50, 10.0, 1.25)),
    e(
        "openai",
        &["gpt-4o-2024-05-13", "chatgpt-4o-latest"],
        p_uncached(5.0, 15.0),
    ),
    e("openai", &["gpt-4o-mini"], p(0.15, 0.60, 0.075)),
    e("openai", &["o3"], p(2.0, 8.0, 0.50)),
    e("openai", &["o3-pro"], p_uncached(20.0, 80.0)),
    e("openai", &["o3-mini"], p(1.10, 4.40, 0.55)),
    e("openai", &["o4-mini"], p(1.10, 4.40, 0.275)),
    e("openai", &["o1"], p(15.0, 60.0, 7.50)),
    e("openai", &["o1-mini"], p(1.10, 4.40, 0.55)),
    e("openai", &["gpt-4-turbo"], p_uncached(10.0, 30.0)),
    e("openai", &["gpt-4"], p_uncached(30.0, 60.0)),
    e("openai", &["gpt-3.5-turbo"], p_uncached(0.50, 1.50)),
    // Anthropic (cache reads at a tenth of the input price)
    e(
        "anthropic",
        &["claude-opus-4-5", "claude-opus-4.5"],
        p(5.0, 25.0, 0.50),
    ),
    e(
        "anthropic",
        &["claude-opus-4-1", "claude-opus-4.1"],
        p(15.0, 75.0, 1.50),
    ),
    e(
        "anthropic",
        &["claude-opus-4", "claude-opus-4-0", "claude-opus-4.0"],
        p(15.0, 75.0, 1.50),
    ),
    e(
        "anthropic",
        &["claude-sonnet-4-5", "claude-sonnet-4.5"],
        p(3.0, 15.0, 0.30),
    ),
    e(
        "anthropic",
        &["claude-sonnet-4", "claude-sonnet-4-0", "claude-sonnet-4.0"],
        p(3.0, 15.0, 0.30),
    ),
    e(
        "anthropic",
        &[
            "claude-3-7-sonnet",
            "claude-3-7-sonnet-latest",
            "claude-3.7-sonnet",
        ],
        p(3.0, 15.0, 0.30),
    ),
    e(
        "anthropic",
        &[
            "claude-3-5-sonnet",
            "claude-3-5-sonnet-latest",
            "claude-3.5-sonnet",
        ],
        p(3.0, 15.0, 0.30),
    ),
    e(
        "anthropic",
        &["claude-haiku-4-5", "claude-haiku-4.5"],
        p(1.0, 5.0, 0.10),
    ),
    e(
        "anthropic",
        &[
            "claude-3-5-haiku",
            "claude-3-5-haiku-latest",
            "claude-3.5-haiku",
        ],
        p(0.80, 4.0, 0.08),
    ),
    e(
        "anthropic",
        &["claude-3-opus", "claude-3-opus-latest"],
        p(15.0, 75.0, 1.50),
    ),
    e("anthropic", &["claude-3-haiku"], p(0.25, 1.25, 0.03)),
    // Google (text input; prompts up to 200k tokens where the price is tiered)
    e(
        "google",
        &["gemini-3-pro-preview", "gemini-3-pro"],
        p(2.0, 12.0, 0.20),
    ),
    e("google", &["gemini-2.5-pro"], p(1.25, 10.0, 0.125)),
    e("google", &["gemini-2.5-flash"], p(0.30, 2.50, 0.03)),
    e("google", &["gemini-2.5-flash-lite"], p(0.10, 0.40, 0.01)),
    e("google", &["gemini-2.0-flash"], p(0.10, 0.40, 0.025)),
    e(
        "google",
        &["gemini-2.0-flash-lite"],
        p_uncached(0.075, 0.30),
    ),
    e("google", &["gemini-1.5-pro"], p_uncached(1.25, 5.0)),
    e("google", &["gemini-1.5-flash"], p_uncached(0.075, 0.30)),
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_lowercase_unique_and_prices_sane() {
        let mut seen = std::collections::HashSet::new();
        for entry in BUILTIN {
            assert!(!entry.names.is_empty());
            for name in entry.names {
                assert_eq!(*name, name.to_ascii_lowercase(), "{name}");
                assert!(!name.contains('/'), "{name}");
                assert!(seen.insert(*name), "duplicate built-in name {name}");
            }
            let price = entry.price;
            assert!(
                price.input > 0.0 && price.output >= price.input,
                "{:?}",
                entry.names
            );
            if let Some(cache) = price.cache_read {
                assert!(cache < price.input, "{:?}", entry.names);
            }
        }
    }
}
