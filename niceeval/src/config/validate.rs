//! Validation of `niceeval.toml` values (each error raised inside the value, so the parser
//! points at it), and naming the key at fault the way the file writes it.

use serde::{Deserialize, Deserializer};

/// What is wrong with one value of `niceeval.toml` or of an environment override; raised
/// inside the value, so the parser says where it is.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub(crate) enum ValueError {
    /// A judge model that is not `provider/model`.
    #[error(
        "{0:?} is not \"provider/model\"; write e.g. \"openai/gpt-4o-mini\" or \"anthropic/claude-haiku-4-5\""
    )]
    NotProviderModel(String),
    /// A base URL that is not an http(s) URL.
    #[error(
        "{0:?} is not an http(s) URL; write e.g. \"https://api.openai.com/v1\" or \"http://127.0.0.1:11434/v1\""
    )]
    NotHttpUrl(String),
    /// `api_key_env` that is not a variable's name (the value is not echoed: it may be a key).
    #[error(
        "must be the name of the environment variable that holds the API key \
         (letters, digits and `_`, e.g. \"OPENAI_API_KEY\"), never the key itself; \
         the value is not shown in case it is a key"
    )]
    NotEnvName,
    /// A `[report] redact` rule that does not compile.
    #[error(transparent)]
    Redact(#[from] crate::base::redact::RuleError),
    /// A count below 1.
    #[error("{what} must be a whole number, 1 or more; got {got}")]
    BelowOne {
        /// What the number counts.
        what: String,
        /// The number written.
        got: i64,
    },
    /// A size that does not read as one.
    #[error("{0:?} is not a size; {SIZE_HINT}")]
    NotASize(String),
    /// A size under one byte.
    #[error("{0:?} is less than one byte; {SIZE_HINT}")]
    LessThanAByte(String),
    /// A size too large to hold.
    #[error("{0:?} is too large; {SIZE_HINT}")]
    TooLarge(String),
    /// A name of a list that is not in it.
    #[error("unknown value {name:?}; {}", match near {
        Some(near) => format!("did you mean \"{near}\"? (one of {options})"),
        None => format!("write any of {options}"),
    })]
    UnknownName {
        /// The name written.
        name: String,
        /// The valid name nearest to it.
        near: Option<String>,
        /// The valid names, quoted.
        options: String,
    },
    /// `[compare] alpha` outside (0, 0.5).
    #[error(
        "alpha is the level of the pass-rate test, strictly between 0 and 0.5 (0.05 is usual, 0.01 stricter); got {0}"
    )]
    Alpha(f64),
    /// `[compare] metric_margin` outside [0, 1].
    #[error(
        "metric_margin is how far a score in [0, 1] may fall, from 0 to 1 (e.g. 0.05); got {0}"
    )]
    Margin(f64),
    /// A margin of rise below 0.
    #[error(
        "{key} is how far {what} may rise, as a fraction of the baseline's: 0 or more (0.1 lets 10% more pass); got {got}"
    )]
    RiseMargin {
        /// The key.
        key: &'static str,
        /// What rises.
        what: &'static str,
        /// The margin written.
        got: f64,
    },
    /// A price that is not a number of USD, 0 or more.
    #[error("a price must be a number of USD per 1M tokens, 0 or more; got {0}")]
    Price(f64),
}

/// How to write a size.
const SIZE_HINT: &str =
    "write a number of bytes (65536) or a size such as \"64KiB\", \"1MiB\" or \"500KB\"";

/// A serde path as the key is written in the file: the table header in brackets, then the key.
pub(super) fn key_name(path: &serde_path_to_error::Path) -> Option<String> {
    use serde_path_to_error::Segment;
    let segments: Vec<String> = path
        .iter()
        .filter_map(|segment| match segment {
            Segment::Map { key } => Some(toml_key(key)),
            Segment::Seq { index } => Some(format!("[{index}]")),
            Segment::Enum { variant } => Some(toml_key(variant)),
            Segment::Unknown => None,
        })
        .collect();
    let table_len = match segments.first().map(String::as_str) {
        None => return None,
        Some("prices") => segments.len().min(2),
        Some(_) => 1,
    };
    let table = format!("[{}]", segments[..table_len].join("."));
    let rest = segments[table_len..].join(".");
    Some(if rest.is_empty() {
        table
    } else {
        format!("{table} {rest}")
    })
}

/// The path of a key inside a table, as the file writes it: `env.HOME`, `args[0]`.
pub(super) fn sub_key(path: &serde_path_to_error::Path) -> String {
    use serde_path_to_error::Segment;
    path.iter()
        .filter_map(|segment| match segment {
            Segment::Map { key } => Some(toml_key(key)),
            Segment::Seq { index } => Some(format!("[{index}]")),
            Segment::Enum { variant } => Some(toml_key(variant)),
            Segment::Unknown => None,
        })
        .collect::<Vec<_>>()
        .join(".")
}

/// A key as TOML writes it: bare when it can be, quoted otherwise.
pub(super) fn toml_key(key: &str) -> String {
    let bare = !key.is_empty()
        && key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    if bare {
        key.to_string()
    } else {
        format!("{key:?}")
    }
}

pub(super) fn check_judge_model(model: &str) -> Result<(), ValueError> {
    match model.split_once('/') {
        Some((provider, name)) if !provider.trim().is_empty() && !name.trim().is_empty() => Ok(()),
        _ => Err(ValueError::NotProviderModel(model.to_string())),
    }
}

pub(super) fn check_base_url(url: &str) -> Result<(), ValueError> {
    let rest = url
        .strip_prefix("http://")
        .or_else(|| url.strip_prefix("https://"));
    match rest {
        Some(host) if !host.is_empty() && !host.starts_with('/') => Ok(()),
        _ => Err(ValueError::NotHttpUrl(url.to_string())),
    }
}

fn check_env_name(name: &str) -> Result<(), ValueError> {
    let mut chars = name.chars();
    let valid = chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_');
    if valid {
        Ok(())
    } else {
        // The value is not echoed: it may be a key pasted by mistake.
        Err(ValueError::NotEnvName)
    }
}

fn validated<'de, D, T, F>(d: D, check: F) -> Result<Option<T>, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de>,
    F: FnOnce(&T) -> Result<(), ValueError>,
{
    let value = Option::<T>::deserialize(d)?;
    if let Some(value) = &value {
        check(value).map_err(serde::de::Error::custom)?;
    }
    Ok(value)
}

/// `[report] redact`: variable names, or regular expressions between slashes that compile.
pub(super) fn redact_rules<'de, D: Deserializer<'de>>(
    d: D,
) -> Result<Option<Vec<String>>, D::Error> {
    validated(d, |rules: &Vec<String>| {
        crate::base::redact::Redactor::new(std::iter::empty(), rules)
            .map(|_| ())
            .map_err(ValueError::from)
    })
}

pub(super) fn judge_model<'de, D: Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    validated(d, |m: &String| check_judge_model(m))
}

pub(super) fn base_url<'de, D: Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    validated(d, |u: &String| check_base_url(u))
}

pub(super) fn api_key_env<'de, D: Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    validated(d, |n: &String| check_env_name(n))
}

fn at_least_one<'de, D: Deserializer<'de>>(d: D, what: &str) -> Result<Option<i64>, D::Error> {
    validated(d, |n: &i64| {
        if *n >= 1 {
            Ok(())
        } else {
            Err(ValueError::BelowOne {
                what: what.to_string(),
                got: *n,
            })
        }
    })
}

pub(super) fn max_files<'de, D: Deserializer<'de>>(d: D) -> Result<Option<u64>, D::Error> {
    Ok(at_least_one(d, "max_files")?.map(|n| n as u64))
}

pub(super) fn concurrency<'de, D: Deserializer<'de>>(d: D) -> Result<Option<usize>, D::Error> {
    at_least_one(d, "the number of evals run at once")?
        .map(|n| usize::try_from(n).map_err(serde::de::Error::custom))
        .transpose()
}

pub(super) fn per_minute<'de, D: Deserializer<'de>>(d: D) -> Result<Option<u32>, D::Error> {
    at_least_one(d, "the number of requests per minute")?
        .map(|n| {
            u32::try_from(n).map_err(|_| {
                serde::de::Error::custom(format!("{n} requests per minute is too many"))
            })
        })
        .transpose()
}

pub(super) fn keep_runs<'de, D: Deserializer<'de>>(d: D) -> Result<Option<usize>, D::Error> {
    at_least_one(d, "the number of earlier runs a results file keeps")?
        .map(|n| usize::try_from(n).map_err(serde::de::Error::custom))
        .transpose()
}

pub(super) fn runs<'de, D: Deserializer<'de>>(d: D) -> Result<Option<u32>, D::Error> {
    at_least_one(d, "the number of runs per eval")?
        .map(|n| {
            u32::try_from(n).map_err(|_| {
                serde::de::Error::custom(format!("{n} runs is too many; use at most {}", u32::MAX))
            })
        })
        .transpose()
}

/// A size in bytes: a whole number, or a number with a unit — `B`, `KB`/`MB`/`GB` (powers of
/// 1000) or `KiB`/`MiB`/`GiB` (powers of 1024), any case, spaces allowed — at least 1 byte.
pub(super) fn parse_size(text: &str) -> Result<u64, ValueError> {
    let trimmed = text.trim();
    let split = trimmed
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(trimmed.len());
    let (number, unit) = trimmed.split_at(split);
    let multiplier: u64 = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "kb" => 1_000,
        "mb" => 1_000_000,
        "gb" => 1_000_000_000,
        "kib" => 1 << 10,
        "mib" => 1 << 20,
        "gib" => 1 << 30,
        _ => return Err(ValueError::NotASize(text.to_string())),
    };
    let value: f64 = number
        .parse()
        .ok()
        .filter(|v: &f64| v.is_finite())
        .ok_or_else(|| ValueError::NotASize(text.to_string()))?;
    let bytes = (value * multiplier as f64).floor();
    if bytes < 1.0 {
        return Err(ValueError::LessThanAByte(text.to_string()));
    }
    if bytes >= u64::MAX as f64 {
        return Err(ValueError::TooLarge(text.to_string()));
    }
    Ok(bytes as u64)
}

pub(super) fn size<'de, D: Deserializer<'de>>(d: D) -> Result<Option<u64>, D::Error> {
    struct Size;
    impl serde::de::Visitor<'_> for Size {
        type Value = u64;
        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("a number of bytes (65536) or a size such as \"64KiB\"")
        }
        fn visit_i64<E: serde::de::Error>(self, n: i64) -> Result<u64, E> {
            u64::try_from(n)
                .ok()
                .filter(|n| *n >= 1)
                .ok_or_else(|| E::custom(format!("the size must be 1 byte or more; got {n}")))
        }
        fn visit_u64<E: serde::de::Error>(self, n: u64) -> Result<u64, E> {
            self.visit_i64(i64::try_from(n).unwrap_or(i64::MAX))
        }
        fn visit_str<E: serde::de::Error>(self, text: &str) -> Result<u64, E> {
            parse_size(text).map_err(E::custom)
        }
    }
    d.deserialize_any(Size).map(Some)
}

/// A list of names each of which must be in `valid`: a wrong one gets a "did you mean".
fn names<'de, D: Deserializer<'de>>(
    d: D,
    valid: &'static [&'static str],
) -> Result<Option<Vec<String>>, D::Error> {
    validated(d, |list: &Vec<String>| {
        for name in list {
            if !valid.contains(&name.as_str()) {
                let options = valid
                    .iter()
                    .map(|k| format!("\"{k}\""))
                    .collect::<Vec<_>>()
                    .join(", ");
                return Err(ValueError::UnknownName {
                    name: name.clone(),
                    near: crate::base::suggest::closest(name, valid.iter().copied())
                        .map(str::to_string),
                    options,
                });
            }
        }
        Ok(())
    })
}

pub(super) fn fail_on<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Vec<String>>, D::Error> {
    names(d, super::FAIL_ON)
}

pub(super) fn baseline_include<'de, D: Deserializer<'de>>(
    d: D,
) -> Result<Option<Vec<String>>, D::Error> {
    names(d, super::BASELINE_INCLUDE)
}

pub(super) fn alpha<'de, D: Deserializer<'de>>(d: D) -> Result<Option<f64>, D::Error> {
    validated(d, |a: &f64| {
        if *a > 0.0 && *a < 0.5 {
            Ok(())
        } else {
            Err(ValueError::Alpha(*a))
        }
    })
}

pub(super) fn margin<'de, D: Deserializer<'de>>(d: D) -> Result<Option<f64>, D::Error> {
    validated(d, |m: &f64| {
        if (0.0..=1.0).contains(m) {
            Ok(())
        } else {
            Err(ValueError::Margin(*m))
        }
    })
}

pub(super) fn tokens_margin<'de, D: Deserializer<'de>>(d: D) -> Result<Option<f64>, D::Error> {
    rise_margin(d, "tokens_margin", "tokens per run")
}

pub(super) fn cost_margin<'de, D: Deserializer<'de>>(d: D) -> Result<Option<f64>, D::Error> {
    rise_margin(d, "cost_margin", "the cost per run")
}

/// A margin of rise: a fraction of the baseline's value, 0 or more.
fn rise_margin<'de, D: Deserializer<'de>>(
    d: D,
    key: &'static str,
    what: &'static str,
) -> Result<Option<f64>, D::Error> {
    validated(d, move |m: &f64| {
        if m.is_finite() && *m >= 0.0 {
            Ok(())
        } else {
            Err(ValueError::RiseMargin { key, what, got: *m })
        }
    })
}

/// What a name that is not one of `valid` gets: a "did you mean" when one is near.
pub(super) fn not_one_of(name: &str, valid: &[&str], what: &str) -> String {
    let options = valid
        .iter()
        .map(|k| format!("\"{k}\""))
        .collect::<Vec<_>>()
        .join(", ");
    match crate::base::suggest::closest(name, valid.iter().copied()) {
        Some(near) => {
            format!("{name:?} is not {what}; did you mean \"{near}\"? (valid: {options})")
        }
        None => format!("{name:?} is not {what}; valid: {options}"),
    }
}

/// A whole number, 1 or more (any other value, a string included, says so).
fn positive_number<'de, D: Deserializer<'de>>(d: D) -> Result<Option<u64>, D::Error> {
    let value = Option::<toml::Value>::deserialize(d)?;
    value
        .map(|value| match &value {
            toml::Value::Integer(n) if *n >= 1 => Ok(*n as u64),
            other => Err(serde::de::Error::custom(format!(
                "must be a positive whole number; got {other}"
            ))),
        })
        .transpose()
}

pub(super) fn positive<'de, D: Deserializer<'de>>(d: D) -> Result<Option<u64>, D::Error> {
    positive_number(d)
}

pub(super) fn max_turns<'de, D: Deserializer<'de>>(d: D) -> Result<Option<u32>, D::Error> {
    positive_number(d)?
        .map(|n| {
            u32::try_from(n).map_err(|_| {
                serde::de::Error::custom(format!("{n} turns is too many; use at most {}", u32::MAX))
            })
        })
        .transpose()
}

/// A list of strings (`args = ["--x"]`): anything else says what is expected.
pub(super) fn strings<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<String>, D::Error> {
    struct Strings;
    impl<'de> serde::de::Visitor<'de> for Strings {
        type Value = Vec<String>;
        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("an array of strings, e.g. [\"Bash\", \"Edit\"]")
        }
        fn visit_seq<A: serde::de::SeqAccess<'de>>(
            self,
            mut seq: A,
        ) -> Result<Vec<String>, A::Error> {
            let mut items = Vec::new();
            while let Some(item) = seq.next_element::<String>()? {
                items.push(item);
            }
            Ok(items)
        }
    }
    d.deserialize_seq(Strings)
}

pub(super) fn optional_strings<'de, D: Deserializer<'de>>(
    d: D,
) -> Result<Option<Vec<String>>, D::Error> {
    strings(d).map(Some)
}
