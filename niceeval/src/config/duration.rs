//! Durations as `niceeval.toml` and `#[eval(timeout = ..)]` write them: `"500ms"`, `"30s"`,
//! `"2m"`, `"1h"`, `"1m30s"`. The grammar lives in the `niceeval-duration` crate, which the
//! `#[eval]` macro shares.

use std::time::Duration;

/// Parses a duration such as `"500ms"`, `"30s"`, `"1.5s"`, `"2m"`, `"1h"` or `"1m30s"`; the
/// error says what is wrong and how to write one. Settings hold a [`DurationSetting`], parsed
/// by this once when the file is read (its example shows both).
pub fn parse_duration(text: &str) -> Result<Duration, niceeval_duration::DurationError> {
    niceeval_duration::parse(text)
}

/// A duration of `niceeval.toml` (`timeout = "30s"`), parsed once when the file is read: an
/// invalid one is an error at its place in the file, and what uses it gets a [`Duration`]. It
/// keeps the text it was written as, to write the file back the same way.
///
/// ```
/// use std::time::Duration;
/// use niceeval::__workspace::config::DurationSetting;
///
/// let setting: DurationSetting = "1m30s".parse().unwrap();
/// assert_eq!(setting.get(), Duration::from_secs(90));
/// assert_eq!(setting.text(), "1m30s");
/// assert!("30".parse::<DurationSetting>().unwrap_err().to_string().contains("unit"));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DurationSetting {
    text: String,
    value: Duration,
}

impl DurationSetting {
    /// The duration.
    pub fn get(&self) -> Duration {
        self.value
    }

    /// The text it was written as.
    pub fn text(&self) -> &str {
        &self.text
    }
}

impl std::str::FromStr for DurationSetting {
    type Err = niceeval_duration::DurationError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        Ok(DurationSetting {
            value: parse_duration(text)?,
            text: text.to_string(),
        })
    }
}

impl serde::Serialize for DurationSetting {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.text)
    }
}

impl<'de> serde::Deserialize<'de> for DurationSetting {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_follow_the_shared_table() {
        for &(text, millis) in niceeval_duration::TABLE {
            match millis {
                Some(ms) => assert_eq!(
                    parse_duration(text),
                    Ok(Duration::from_millis(ms)),
                    "{text:?}"
                ),
                None => assert!(parse_duration(text).is_err(), "{text:?}"),
            }
        }
    }

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
        assert!(
            parse_duration(&huge)
                .unwrap_err()
                .to_string()
                .contains("too long")
        );
        assert!(
            parse_duration("99999999999999999999h1s")
                .unwrap_err()
                .to_string()
                .contains("too long")
        );
    }
}
