//! Plain HTTP exchanges for agents that are not chat models (a suite file's HTTP target):
//! through the process's connection pool of the endpoint's origin, under the `[provider]`
//! limits of that origin (requests in flight, requests per minute, across the machine), retried
//! as model calls are ([`RetryPolicy`]: 429, 408, 5xx and connection errors, `Retry-After`
//! honoured), and failing with the transport error's whole chain of causes.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, LazyLock, Mutex};
use std::time::{Duration, SystemTime};

use tokio::sync::Semaphore;

use super::limit::MachineLimit;
use super::pool::{self, ExchangeError};
use super::retry::{parse_retry_after, retryable_status};
use super::{DEFAULT_MAX_CONCURRENCY, DEFAULT_TIMEOUT, RetryPolicy};

/// One request, whole.
#[derive(Debug, Clone)]
pub struct HttpRequest {
    /// `GET`, `POST`, ...
    pub method: String,
    /// The whole URL.
    pub url: String,
    /// The headers, in order.
    pub headers: Vec<(String, String)>,
    /// The body, if any.
    pub body: Option<Vec<u8>>,
}

/// What came back: the body of a success, as text.
#[derive(Debug, Clone)]
pub(crate) struct HttpAnswer {
    pub text: String,
}

/// Why an exchange failed, with the URL and the cause.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub(crate) enum HttpError {
    /// The request cannot be made (a bad method, URL or header).
    #[error("cannot send the request to {url}: {message}")]
    Invalid { url: String, message: String },
    /// The server could not be reached.
    #[error("cannot reach {url}{after}: {message}")]
    Connect {
        url: String,
        message: String,
        after: String,
    },
    /// The server answered with a status that was still an error after the retries.
    #[error("{url} answered HTTP {status}{after}: {body}")]
    Status {
        url: String,
        status: u16,
        body: String,
        after: String,
    },
    /// No answer in time.
    #[error("{url} did not answer within {seconds}s")]
    Timeout { url: String, seconds: f64 },
    /// The server asked to wait longer than the retry policy allows.
    #[error("{url} asked to retry after {seconds}s, longer than the {max}s niceeval waits")]
    RetryTooLate { url: String, seconds: u64, max: u64 },
}

/// The limits and retries of one endpoint origin.
#[derive(Debug, Clone)]
pub(crate) struct HttpEndpoint {
    limiter: Arc<Semaphore>,
    machine: MachineLimit,
    retry: RetryPolicy,
    timeout: Duration,
}

static LIMITERS: LazyLock<Mutex<HashMap<String, Arc<Semaphore>>>> = LazyLock::new(Default::default);

impl HttpEndpoint {
    /// The endpoint of `url`'s origin under `[provider]` of the crate under test (its
    /// niceeval.toml, when there is one): the first endpoint made for an origin sets its cap.
    pub(crate) fn new(url: &str) -> HttpEndpoint {
        let manifest = std::env::var_os("CARGO_MANIFEST_DIR").map(PathBuf::from);
        let config = manifest
            .as_ref()
            .and_then(|dir| crate::config::Config::for_manifest_dir(&dir.to_string_lossy()).ok())
            .map(|c| c.provider.clone())
            .unwrap_or_default();
        let max = config
            .max_concurrency
            .unwrap_or(DEFAULT_MAX_CONCURRENCY)
            .max(1);
        let origin = reqwest::Url::parse(url)
            .map(|u| u.origin().ascii_serialization())
            .unwrap_or_else(|_| url.to_string());
        let endpoint = format!("http {origin}");
        let limiter = LIMITERS
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .entry(endpoint.clone())
            .or_insert_with(|| Arc::new(Semaphore::new(max)))
            .clone();
        let target_dir = manifest
            .map(|m| crate::resources::cache::target_dir(&m))
            .unwrap_or_else(super::limit::default_dir);
        HttpEndpoint {
            limiter,
            machine: MachineLimit::new(&target_dir, &endpoint, max, config.requests_per_minute),
            retry: RetryPolicy::default(),
            timeout: DEFAULT_TIMEOUT,
        }
    }

    /// Sets the retry policy.
    #[cfg(test)]
    pub(crate) fn retry(mut self, retry: RetryPolicy) -> Self {
        self.retry = retry;
        self
    }

    /// Sends `request`, retrying transient failures; a status that is not a success after the
    /// retries is an error.
    pub(crate) async fn send(&self, request: &HttpRequest) -> Result<HttpAnswer, HttpError> {
        let method = reqwest::Method::from_bytes(request.method.as_bytes()).map_err(|e| {
            HttpError::Invalid {
                url: request.url.clone(),
                message: format!("HTTP method {:?}: {e}", request.method),
            }
        })?;
        let client = pool::client(&request.url).map_err(|e| HttpError::Invalid {
            url: request.url.clone(),
            message: e.to_string(),
        })?;
        let mut attempt: u32 = 0;
        loop {
            let outcome = {
                let _permit = self.limiter.acquire().await;
                let _slot = self.machine.acquire().await;
                let mut builder = client
                    .request(method.clone(), &request.url)
                    .timeout(self.timeout);
                for (name, value) in &request.headers {
                    builder = builder.header(name.as_str(), value.as_str());
                }
                if let Some(body) = &request.body {
                    builder = builder.body(body.clone());
                }
                pool::exchange(builder).await
            };
            let url = request.url.clone();
            let (error, wait) = match outcome {
                Ok(exchange) if exchange.status.is_success() => {
                    return Ok(HttpAnswer {
                        text: String::from_utf8_lossy(&exchange.body).into_owned(),
                    });
                }
                Ok(exchange) => {
                    let status = exchange.status.as_u16();
                    let error = HttpError::Status {
                        url,
                        status,
                        body: crate::base::excerpt::elide(
                            &String::from_utf8_lossy(&exchange.body),
                            500,
                        ),
                        after: String::new(),
                    };
                    if !retryable_status(status) {
                        return Err(error);
                    }
                    let wait = exchange
                        .retry_after
                        .as_deref()
                        .and_then(|v| parse_retry_after(v, SystemTime::now()));
                    (error, wait)
                }
                Err(ExchangeError::Timeout) => {
                    return Err(HttpError::Timeout {
                        url,
                        seconds: self.timeout.as_secs_f64(),
                    });
                }
                Err(ExchangeError::Transport(message)) => (
                    HttpError::Connect {
                        url,
                        message,
                        after: String::new(),
                    },
                    None,
                ),
                Err(ExchangeError::Io(e)) => {
                    return Err(HttpError::Connect {
                        url,
                        message: e.to_string(),
                        after: String::new(),
                    });
                }
            };
            if attempt >= self.retry.max_retries {
                return Err(after_attempts(error, attempt + 1));
            }
            let wait = match wait {
                Some(w) if w > self.retry.max_retry_after => {
                    return Err(HttpError::RetryTooLate {
                        url: request.url.clone(),
                        seconds: w.as_secs(),
                        max: self.retry.max_retry_after.as_secs(),
                    });
                }
                Some(w) => w,
                None => self.retry.backoff(attempt),
            };
            tokio::time::sleep(wait).await;
            attempt += 1;
        }
    }
}

fn after_attempts(error: HttpError, attempts: u32) -> HttpError {
    let note = if attempts > 1 {
        format!(" after {attempts} attempts")
    } else {
        String::new()
    };
    match error {
        HttpError::Connect { url, message, .. } => HttpError::Connect {
            url,
            message,
            after: note,
        },
        HttpError::Status {
            url, status, body, ..
        } => HttpError::Status {
            url,
            status,
            body,
            after: note,
        },
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn an_unreachable_endpoint_is_retried_and_names_its_cause() {
        // A port nothing listens on: bound, then closed.
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let url = format!("http://127.0.0.1:{port}/chat");
        let endpoint = HttpEndpoint::new(&url).retry(
            RetryPolicy::default()
                .retries(2)
                .backoff_between(Duration::from_millis(1), Duration::from_millis(2)),
        );
        let err = endpoint
            .send(&HttpRequest {
                method: "POST".into(),
                url: url.clone(),
                headers: Vec::new(),
                body: Some(b"{}".to_vec()),
            })
            .await
            .unwrap_err()
            .to_string();
        assert!(
            err.contains(&url) && err.contains("after 3 attempts"),
            "{err}"
        );
        assert!(
            err.to_lowercase().contains("connect") || err.contains("refused"),
            "no cause in {err}"
        );
    }
}
