//! Durations as `niceeval.toml` and `#[eval(timeout = ..)]` write them: `"500ms"`, `"30s"`,
//! `"2m"`, `"1h"`, `"1m30s"`.

use std::time::Duration;

/// Parses a duration such as `"500ms"`, `"30s"`, `"2m"`, `"1h"` or `"1m30s"`.
///
/// ```
/// use std::time::Duration;
/// use niceeval::config::parse_duration;
///
/// assert_eq!(parse_duration("1m30s"), Ok(Duration::from_secs(90)));
/// assert_eq!(parse_duration("250ms"), Ok(Duration::from_millis(250)));
/// assert!(parse_duration("30").unwrap_err().contains("unit"));
/// ```
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let text = text.trim();
    if text.is_empty() {
        return Err("empty duration; write e.g. \"30s\", \"2m\" or \"500ms\"".into());
    }
    let mut total = Duration::ZERO;
    let mut rest = text;
    while !rest.is_empty() {
        let digits = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        if digits == 0 {
            return Err(format!(
                "{text:?} is not a duration; write e.g. \"30s\", \"2m\" or \"500ms\""
            ));
        }
        let number: f64 = rest[..digits]
            .parse()
            .map_err(|_| format!("{text:?} has a bad number"))?;
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
            "" => {
                return Err(format!(
                    "{text:?} has no unit; add one of ms, s, m, h (e.g. \"30s\")"
                ));
            }
            other => {
                return Err(format!(
                    "{text:?} has an unknown unit {other:?}; use ms, s, m or h"
                ));
            }
        };
        total = Duration::try_from_secs_f64(seconds)
            .ok()
            .and_then(|part| total.checked_add(part))
            .ok_or_else(|| format!("{text:?} is too long a duration"))?;
    }
    if total.is_zero() {
        return Err(format!("{text:?} is zero; a timeout must be positive"));
    }
    Ok(total)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_add_up_and_never_panic() {
        let ok = [
            ("1h30m", 5400.0),
            ("1.5s", 1.5),
            (" 2m ", 120.0),
            ("500ms", 0.5),
        ];
        for (text, seconds) in ok {
            assert_eq!(
                parse_duration(text),
                Ok(Duration::from_secs_f64(seconds)),
                "{text}"
            );
        }
        for bad in ["", "s", "1.2.3s", "-5s", "5 s", "1e9999s", "30"] {
            assert!(parse_duration(bad).is_err(), "{bad:?}");
        }
        let huge = format!("{}h", "9".repeat(400));
        assert!(parse_duration(&huge).unwrap_err().contains("too long"));
        assert!(
            parse_duration("99999999999999999999h1s")
                .unwrap_err()
                .contains("too long")
        );
    }
}
