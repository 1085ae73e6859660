//! One JSON POST from a synchronous assertion, made as promptfoo's `fetchWithRetries` makes it:
//! a time limit per attempt, an attempt that fails to connect or times out tried again up to
//! four more times after `2^i × (backoff + up to 1 s)` (backoff `PROMPTFOO_REQUEST_BACKOFF_MS`,
//! default 5 s), a rate-limited answer (429, or a zero `X-RateLimit-Remaining`) tried again
//! after its `Retry-After` (60 s when it names none), and a 5xx tried again only under
//! `PROMPTFOO_RETRY_5XX`. Any other answer, success or not, is returned for the caller to read.
//!
//! The exchange runs on a small runtime of its own on a scoped thread, waited for on the
//! calling thread (inside a multi-thread Tokio runtime through `block_in_place`), as the
//! subprocess assertions wait for their jobs.

use std::time::Duration;

use super::Env;

/// A JSON POST to make.
#[derive(Debug, Clone)]
pub(crate) struct Post {
    pub(crate) url: String,
    /// Headers besides `Content-Type: application/json`.
    pub(crate) headers: Vec<(String, String)>,
    pub(crate) body: serde_json::Value,
    /// The time limit of each attempt.
    pub(crate) timeout: Duration,
    /// Attempts after the first.
    pub(crate) retries: u32,
}

/// The answer: its status and its body as text.
#[derive(Debug, Clone)]
pub(crate) struct Answer {
    pub(crate) status: u16,
    pub(crate) text: String,
}

impl Answer {
    /// A 2xx status.
    pub(crate) fn ok(&self) -> bool {
        (200..300).contains(&self.status)
    }

    /// `404 Not Found`.
    pub(crate) fn status_line(&self) -> String {
        let reason = reqwest::StatusCode::from_u16(self.status)
            .ok()
            .and_then(|s| s.canonical_reason())
            .unwrap_or("");
        format!("{} {reason}", self.status).trim_end().to_string()
    }
}

/// Why no answer came.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum PostError {
    /// The request cannot be made (a bad URL or header).
    #[error("cannot send a request to {url}: {message}")]
    Invalid { url: String, message: String },
    /// Every attempt failed to connect or timed out.
    #[error("Request failed after {retries} retries: {last}")]
    Failed { retries: u32, last: String },
    /// Still rate-limited after every attempt.
    #[error("Rate limited: {status} after {attempts} attempts")]
    RateLimited { status: String, attempts: u32 },
    /// The exchange's runtime or thread could not run.
    #[error("cannot run the request: {0}")]
    Runtime(String),
}

/// The time limit promptfoo gives service calls: `REQUEST_TIMEOUT_MS`, default 300 s.
pub(crate) fn request_timeout(env: &Env) -> Duration {
    Duration::from_millis(env.millis("REQUEST_TIMEOUT_MS").unwrap_or(300_000))
}

/// Sends `post`, trying again as described in the module docs.
pub(crate) fn send(post: &Post, env: &Env) -> Result<Answer, PostError> {
    let backoff = Duration::from_millis(env.millis("PROMPTFOO_REQUEST_BACKOFF_MS").unwrap_or(5000));
    let retry_5xx = env.flag("PROMPTFOO_RETRY_5XX");
    block_on(exchange(post, backoff, retry_5xx))
}

/// Runs `future` to completion from synchronous code.
fn block_on<T: Send>(
    future: impl std::future::Future<Output = Result<T, PostError>> + Send,
) -> Result<T, PostError> {
    let run = || {
        std::thread::scope(|scope| {
            scope
                .spawn(|| {
                    tokio::runtime::Builder::new_current_thread()
                        .enable_all()
                        .build()
                        .map_err(|e| PostError::Runtime(e.to_string()))?
                        .block_on(future)
                })
                .join()
                .unwrap_or_else(|_| Err(PostError::Runtime("the request's thread panicked".into())))
        })
    };
    match tokio::runtime::Handle::try_current() {
        Ok(handle) if handle.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread => {
            tokio::task::block_in_place(run)
        }
        _ => run(),
    }
}

/// The wait a rate-limited answer asks for: `retry-after-ms`, else `Retry-After` in seconds,
/// else 60 s.
fn rate_limit_wait(headers: &reqwest::header::HeaderMap) -> Duration {
    let number = |name: &str| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.trim().parse::<f64>().ok())
            .filter(|n| n.is_finite() && *n >= 0.0)
    };
    if let Some(ms) = number("retry-after-ms") {
        return Duration::from_secs_f64(ms / 1000.0);
    }
    number("retry-after").map_or(Duration::from_secs(60), Duration::from_secs_f64)
}

fn rate_limited(response: &reqwest::Response) -> bool {
    let zero = |name: &str| {
        response
            .headers()
            .get(name)
            .is_some_and(|v| v.as_bytes() == b"0")
    };
    response.status().as_u16() == 429
        || zero("x-ratelimit-remaining")
        || zero("x-ratelimit-remaining-requests")
        || zero("x-ratelimit-remaining-tokens")
}

/// The message of a transport error with its causes.
fn describe(error: &reqwest::Error) -> String {
    let mut message = error.to_string();
    let mut source = std::error::Error::source(error);
    while let Some(cause) = source {
        message.push_str(&format!(": {cause}"));
        source = cause.source();
    }
    message
}

async fn exchange(post: &Post, backoff: Duration, retry_5xx: bool) -> Result<Answer, PostError> {
    let invalid = |message: String| PostError::Invalid {
        url: post.url.clone(),
        message,
    };
    let client = reqwest::Client::builder()
        .timeout(post.timeout)
        .build()
        .map_err(|e| invalid(describe(&e)))?;
    let body = serde_json::to_vec(&post.body).map_err(|e| invalid(e.to_string()))?;
    let mut last = String::new();
    for attempt in 0..=post.retries {
        let mut request = client
            .post(&post.url)
            .header(reqwest::header::CONTENT_TYPE, "application/json")
            .body(body.clone());
        for (name, value) in &post.headers {
            request = request.header(name, value);
        }
        let request = request.build().map_err(|e| invalid(describe(&e)))?;
        let failure = match client.execute(request).await {
            Ok(response) if rate_limited(&response) => {
                let status = response.status();
                if attempt >= post.retries {
                    return Err(PostError::RateLimited {
                        status: format!(
                            "{} {}",
                            status.as_u16(),
                            status.canonical_reason().unwrap_or("")
                        )
                        .trim_end()
                        .to_string(),
                        attempts: post.retries + 1,
                    });
                }
                tokio::time::sleep(rate_limit_wait(response.headers())).await;
                continue;
            }
            Ok(response) if retry_5xx && response.status().is_server_error() => format!(
                "Internal Server Error: {} {}",
                response.status().as_u16(),
                response.status().canonical_reason().unwrap_or("")
            ),
            Ok(response) => {
                let status = response.status().as_u16();
                match response.text().await {
                    Ok(text) => return Ok(Answer { status, text }),
                    Err(e) => describe(&e),
                }
            }
            Err(e) if e.is_timeout() => {
                format!("Request timed out after {} ms", post.timeout.as_millis())
            }
            Err(e) => describe(&e),
        };
        last = failure;
        if attempt < post.retries {
            let jitter = Duration::from_millis(fastrand::u64(0..1000));
            let wait = (backoff + jitter).saturating_mul(1 << attempt.min(16));
            tokio::time::sleep(wait).await;
        }
    }
    Err(PostError::Failed {
        retries: post.retries,
        last,
    })
}
