//! The duration grammar of niceeval, in one place: `niceeval.toml` (`[run] timeout`,
//! `[judge] timeout`, ..) reads durations with it at run time, and `#[eval(timeout = "30s")]`
//! checks them with it at compile time.
//!
//! A duration is one or more `<number><unit>` parts, summed: the number may be fractional
//! (`1.5s`), the unit is one of `ms`, `s`, `m`, `h`, and whitespace around the whole is
//! ignored. A duration of zero, an empty text, a number without a unit and a total too large
//! for [`Duration`] are errors; parsing never panics.
//!
//! ```
//! use std::time::Duration;
//! use niceeval_duration::{parse, DurationError};
//!
//! assert_eq!(parse("1m30s"), Ok(Duration::from_secs(90)));
//! assert_eq!(parse(" 1.5s "), Ok(Duration::from_millis(1500)));
//! assert_eq!(parse("250ms"), Ok(Duration::from_millis(250)));
//! assert_eq!(
//!     parse("30"),
//!     Err(DurationError::NoUnit { text: "30".into() })
//! );
//! assert_eq!(
//!     parse("3 days").unwrap_err().to_string(),
//!     r#""3 days" has an unknown unit " days"; use ms, s, m or h"#
//! );
//! ```
//!
//! Use it through the `niceeval` crate (`niceeval::config::parse_duration`); it is a crate of
//! its own so that the procedural macros, which cannot depend on the runtime, share it.

#![deny(missing_docs)]

use std::time::Duration;

/// Why a text is not a duration. Its `Display` is the message shown to the user, quoting the
/// (trimmed) text.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum DurationError {
    /// The text is empty or only whitespace.
    #[error("empty duration; write e.g. \"30s\", \"2m\" or \"500ms\"")]
    Empty,
    /// A part does not start with a number (`"soon"`, `"-5s"`, `"s"`).
    #[error("{text:?} is not a duration; write e.g. \"30s\", \"2m\" or \"500ms\"")]
    NotADuration {
        /// The duration as written, trimmed.
        text: String,
    },
    /// A part's number does not parse (`"1.2.3s"`).
    #[error("{text:?} has a bad number")]
    BadNumber {
        /// The duration as written, trimmed.
        text: String,
    },
    /// A number has no unit after it (`"30"`, `"1h30"`).
    #[error("{text:?} has no unit; add one of ms, s, m, h (e.g. \"30s\")")]
    NoUnit {
        /// The duration as written, trimmed.
        text: String,
    },
    /// A number is followed by something other than `ms`, `s`, `m` or `h`.
    #[error("{text:?} has an unknown unit {unit:?}; use ms, s, m or h")]
    UnknownUnit {
        /// The duration as written, trimmed.
        text: String,
        /// What follows the number, up to the next digit.
        unit: String,
    },
    /// The total does not fit in a [`Duration`].
    #[error("{text:?} is too long a duration")]
    TooLong {
        /// The duration as written, trimmed.
        text: String,
    },
    /// The total is zero.
    #[error("{text:?} is zero; a timeout must be positive")]
    Zero {
        /// The duration as written, trimmed.
        text: String,
    },
}

/// Parses a duration such as `"500ms"`, `"30s"`, `"1.5s"`, `"2m"`, `"1h"` or `"1m30s"`.
///
/// ```
/// use std::time::Duration;
///
/// assert_eq!(niceeval_duration::parse("1h30m"), Ok(Duration::from_secs(5400)));
/// assert!(niceeval_duration::parse("0s").is_err());
/// ```
pub fn parse(text: &str) -> Result<Duration, DurationError> {
    let text = text.trim();
    if text.is_empty() {
        return Err(DurationError::Empty);
    }
    let owned = || text.to_string();
    let mut total = Duration::ZERO;
    let mut rest = text;
    while !rest.is_empty() {
        let digits = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        if digits == 0 {
            return Err(DurationError::NotADuration { text: owned() });
        }
        let number: f64 = rest[..digits]
            .parse()
            .map_err(|_| DurationError::BadNumber { text: owned() })?;
        rest = &rest[digits..];
        let unit_len = rest
            .find(|c: char| c.is_ascii_digit())
            .unwrap_or(rest.len());
        let unit = &rest[..unit_len];
        rest = &rest[unit_len..];
        let seconds = match unit {
            "ms" => number / 1000.0,
            "s" => number,
            "m" => number * 60.0,
            "h" => number * 3600.0,
            "" => return Err(DurationError::NoUnit { text: owned() }),
            other => {
                return Err(DurationError::UnknownUnit {
                    text: owned(),
                    unit: other.to_string(),
                });
            }
        };
        total = Duration::try_from_secs_f64(seconds)
            .ok()
            .and_then(|part| total.checked_add(part))
            .ok_or_else(|| DurationError::TooLong { text: owned() })?;
    }
    if total.is_zero() {
        return Err(DurationError::Zero { text: owned() });
    }
    Ok(total)
}

/// Every case the parsers of niceeval are tested on: a text and its length in whole
/// milliseconds, or `None` when it is not a duration. The tests of this crate, of
/// `niceeval::config::parse_duration` and of the `#[eval(timeout = ..)]` check all iterate it,
/// so the runtime and the macro cannot drift apart.
#[doc(hidden)]
pub const TABLE: &[(&str, Option<u64>)] = &[
    // Single parts and sums.
    ("500ms", Some(500)),
    ("250ms", Some(250)),
    ("1.5s", Some(1_500)),
    ("0.5m", Some(30_000)),
    ("1.25h", Some(4_500_000)),
    ("1m30s", Some(90_000)),
    ("1h30m", Some(5_400_000)),
    ("1h1m1s", Some(3_661_000)),
    // Whitespace around the whole is ignored.
    (" 2m ", Some(120_000)),
    (" 2h ", Some(7_200_000)),
    // Empty, or not starting with a number.
    ("", None),
    ("   ", None),
    ("s", None),
    ("soon", None),
    ("-5s", None),
    // A bad number.
    ("1.2.3s", None),
    // No unit, or an unknown one.
    ("30", None),
    ("1h30", None),
    ("3 days", None),
    ("5 s", None),
    ("1m 30s", None),
    ("30sec", None),
    ("5S", None),
    ("1e9999s", None),
    // Zero.
    ("0s", None),
    ("0ms", None),
    // Too long, never a panic.
    ("99999999999999999999999h", None),
    ("99999999999999999999h1s", None),
    (
        concat!(
            "9999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999",
            "9999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999",
            "9999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999",
            "9999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999",
            "h"
        ),
        None,
    ),
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_holds() {
        for &(text, millis) in TABLE {
            match millis {
                Some(ms) => assert_eq!(parse(text), Ok(Duration::from_millis(ms)), "{text:?}"),
                None => assert!(parse(text).is_err(), "{text:?} parsed as {:?}", parse(text)),
            }
        }
    }

    #[test]
    fn each_error_names_its_cause() {
        let owned = |t: &str| t.to_string();
        let cases = [
            ("", DurationError::Empty),
            ("  ", DurationError::Empty),
            (
                "soon",
                DurationError::NotADuration {
                    text: owned("soon"),
                },
            ),
            ("-5s", DurationError::NotADuration { text: owned("-5s") }),
            ("s", DurationError::NotADuration { text: owned("s") }),
            (
                "1.2.3s",
                DurationError::BadNumber {
                    text: owned("1.2.3s"),
                },
            ),
            (" 30 ", DurationError::NoUnit { text: owned("30") }),
            (
                "1h30",
                DurationError::NoUnit {
                    text: owned("1h30"),
                },
            ),
            (
                "3 days",
                DurationError::UnknownUnit {
                    text: owned("3 days"),
                    unit: owned(" days"),
                },
            ),
            (
                "1e9999s",
                DurationError::UnknownUnit {
                    text: owned("1e9999s"),
                    unit: owned("e"),
                },
            ),
            ("0s", DurationError::Zero { text: owned("0s") }),
            (
                "99999999999999999999h1s",
                DurationError::TooLong {
                    text: owned("99999999999999999999h1s"),
                },
            ),
        ];
        for (text, error) in cases {
            assert_eq!(parse(text), Err(error), "{text:?}");
        }
        let huge = format!("{}h", "9".repeat(400));
        assert_eq!(parse(&huge), Err(DurationError::TooLong { text: huge }));
    }

    #[test]
    fn messages_quote_the_text_and_say_how_to_write_it() {
        let message = |text: &str| parse(text).unwrap_err().to_string();
        assert_eq!(
            message(""),
            r#"empty duration; write e.g. "30s", "2m" or "500ms""#
        );
        assert_eq!(
            message("soon"),
            r#""soon" is not a duration; write e.g. "30s", "2m" or "500ms""#
        );
        assert_eq!(message("1.2.3s"), r#""1.2.3s" has a bad number"#);
        assert_eq!(
            message("30"),
            r#""30" has no unit; add one of ms, s, m, h (e.g. "30s")"#
        );
        assert_eq!(
            message("5x"),
            r#""5x" has an unknown unit "x"; use ms, s, m or h"#
        );
        assert_eq!(
            message("99999999999999999999h"),
            r#""99999999999999999999h" is too long a duration"#
        );
        assert_eq!(
            message(" 0ms "),
            r#""0ms" is zero; a timeout must be positive"#
        );
    }

    #[test]
    fn fractions_below_a_millisecond_are_kept() {
        assert_eq!(parse("0.5ms"), Ok(Duration::from_micros(500)));
        assert_eq!(parse("1.5ms"), Ok(Duration::from_micros(1_500)));
    }
}
