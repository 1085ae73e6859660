//! When to retry a model call and how long to wait: exponential backoff with jitter, and the
//! server's `Retry-After` (seconds or an HTTP date) when it sends one.

use std::time::{Duration, SystemTime};

/// How failed model calls are retried.
///
/// Retried: HTTP 429, HTTP 5xx, and connection errors. Not retried: other 4xx (the request is
/// wrong and will stay wrong), timeouts (the call already took the whole timeout), and answers
/// that cannot be decoded. The wait before retry `n` (0-based) is a random duration between half
/// and all of `initial_backoff * 2^n`, capped at `max_backoff`; a `Retry-After` header replaces
/// it, and one longer than `max_retry_after` ends the call with an error instead of waiting.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct RetryPolicy {
    /// Retries after the first attempt.
    pub max_retries: u32,
    /// The base wait before the first retry.
    pub initial_backoff: Duration,
    /// The longest computed wait.
    pub max_backoff: Duration,
    /// The longest `Retry-After` honoured.
    pub max_retry_after: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy {
            max_retries: 3,
            initial_backoff: Duration::from_millis(500),
            max_backoff: Duration::from_secs(20),
            max_retry_after: Duration::from_secs(60),
        }
    }
}

impl RetryPolicy {
    /// No retries at all.
    pub fn none() -> Self {
        RetryPolicy {
            max_retries: 0,
            ..RetryPolicy::default()
        }
    }

    /// Sets the number of retries.
    pub fn retries(mut self, max_retries: u32) -> Self {
        self.max_retries = max_retries;
        self
    }

    /// Sets the base and the cap of the computed wait.
    pub fn backoff_between(mut self, initial: Duration, max: Duration) -> Self {
        self.initial_backoff = initial;
        self.max_backoff = max.max(initial);
        self
    }

    /// The wait before retry `attempt` (0-based), with jitter.
    pub fn backoff(&self, attempt: u32) -> Duration {
        let factor = 2u32.saturating_pow(attempt.min(30));
        let full = self
            .initial_backoff
            .saturating_mul(factor)
            .min(self.max_backoff);
        // "Equal jitter": half fixed, half random, so waits never collapse to zero.
        let half = full / 2;
        half + half.mul_f64(fastrand::f64())
    }
}

/// Whether an HTTP status is worth retrying.
pub(crate) fn retryable_status(status: u16) -> bool {
    status == 429 || status == 408 || (500..=599).contains(&status)
}

/// Parses a `Retry-After` value: a number of seconds, or an HTTP date (a date in the past means
/// "now").
pub(crate) fn parse_retry_after(value: &str, now: SystemTime) -> Option<Duration> {
    let value = value.trim();
    if let Ok(seconds) = value.parse::<u64>() {
        return Some(Duration::from_secs(seconds));
    }
    if let Ok(seconds) = value.parse::<f64>()
        && seconds.is_finite()
        && seconds >= 0.0
    {
        return Some(Duration::from_secs_f64(seconds));
    }
    let date = httpdate::parse_http_date(value).ok()?;
    Some(date.duration_since(now).unwrap_or(Duration::ZERO))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retry_after_seconds_and_dates() {
        let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1_000_000);
        assert_eq!(parse_retry_after("7", now), Some(Duration::from_secs(7)));
        assert_eq!(
            parse_retry_after("0.5", now),
            Some(Duration::from_millis(500))
        );
        let later = httpdate::fmt_http_date(now + Duration::from_secs(30));
        assert_eq!(
            parse_retry_after(&later, now),
            Some(Duration::from_secs(30))
        );
        let earlier = httpdate::fmt_http_date(now - Duration::from_secs(30));
        assert_eq!(parse_retry_after(&earlier, now), Some(Duration::ZERO));
        assert_eq!(parse_retry_after("soon", now), None);
        assert_eq!(parse_retry_after("-3", now), None);
    }

    #[test]
    fn backoff_grows_with_jitter_and_is_capped() {
        let policy = RetryPolicy::default()
            .backoff_between(Duration::from_millis(100), Duration::from_millis(1000));
        for attempt in 0..10 {
            let full =
                Duration::from_millis(100 * 2u64.pow(attempt)).min(Duration::from_millis(1000));
            let wait = policy.backoff(attempt);
            assert!(
                wait >= full / 2 && wait <= full,
                "attempt {attempt}: {wait:?}"
            );
        }
    }

    #[test]
    fn which_statuses_retry() {
        for s in [429, 500, 502, 503, 529] {
            assert!(retryable_status(s), "{s}");
        }
        for s in [400, 401, 403, 404, 422] {
            assert!(!retryable_status(s), "{s}");
        }
    }
}

#[cfg(test)]
mod doc_examples {
    //! The examples that were this file's doc tests while its items were public.

    #[test]
    fn example_1() {
        use crate::agents::provider::RetryPolicy;
        use std::time::Duration;

        let policy = RetryPolicy::default();
        assert_eq!(policy.max_retries, 3);
        let wait = policy.backoff(2);
        assert!(
            wait <= Duration::from_secs(2) && wait >= Duration::from_secs(1),
            "{wait:?}"
        );
    }
}
