//! [`ModelClient`]: one model behind one endpoint, with timeouts, retries, a per-endpoint
//! concurrency cap, the response cache and single-flight sharing of identical calls.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, LazyLock, Mutex};
use std::time::{Duration, SystemTime};

use reqwest::header::{CONTENT_TYPE, HeaderValue};
use tokio::sync::Semaphore;

use super::limit::MachineLimit;
use super::pool::{self, ExchangeError};
use super::retry::{parse_retry_after, retryable_status};
use super::{
    ApiKey, ChatRequest, ChatResponse, ModelName, Provider, ProviderError, RetryPolicy, anthropic,
    body_excerpt, openai,
};
use crate::config::CacheMode;
use crate::resources::cache::{CacheKey, ResponseCache, SingleFlight};

tokio::task_local! {
    /// The W3C `traceparent` of the turn a request is made for (the chat agent sets it), sent
    /// as a `traceparent` header so a server that traces joins the eval's trace.
    pub(crate) static TRACEPARENT: String;
}

/// Timeout of one HTTP attempt when none is configured.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(60);

/// Concurrent requests per provider endpoint when no cap is configured.
pub const DEFAULT_MAX_CONCURRENCY: usize = 8;

/// How a [`ModelClient`] reaches its model.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ClientOptions {
    /// The API's base URL; the provider's public API when `None`.
    pub base_url: Option<String>,
    /// The API key; no authentication header is sent when `None`.
    pub api_key: Option<ApiKey>,
    /// Timeout of one HTTP attempt (connect, send, read the whole answer).
    pub timeout: Duration,
    /// Where a reader raises [`timeout`](Self::timeout), named by the timeout error: e.g.
    /// `[judge] timeout in niceeval.toml` for judge calls.
    pub timeout_setting: String,
    /// Retries on 429, 5xx and connection errors.
    pub retry: RetryPolicy,
    /// Whether answers are read from and written to the cache.
    pub cache_mode: CacheMode,
    /// Where the cache lives; the Cargo target directory of `CARGO_MANIFEST_DIR` when `None`.
    pub cache_dir: Option<PathBuf>,
    /// Requests in flight at once to this provider endpoint, across every process of the
    /// machine that shares the target directory (see [`ClientOptions::limits_dir`]). Within a
    /// process, the first client created for an endpoint sets it.
    pub max_concurrency: usize,
    /// Requests started per minute to this endpoint, evenly spaced, across every process of
    /// the machine; no limit when `None`.
    pub requests_per_minute: Option<u32>,
    /// The Cargo target directory whose `niceeval/limits/` holds the lock files of the
    /// machine-wide limits; the target directory of `CARGO_MANIFEST_DIR` when `None`.
    pub limits_dir: Option<PathBuf>,
}

impl Default for ClientOptions {
    fn default() -> Self {
        ClientOptions {
            base_url: None,
            api_key: None,
            timeout: DEFAULT_TIMEOUT,
            timeout_setting: "ClientOptions::timeout(..)".to_string(),
            retry: RetryPolicy::default(),
            cache_mode: CacheMode::Off,
            cache_dir: None,
            max_concurrency: DEFAULT_MAX_CONCURRENCY,
            requests_per_minute: None,
            limits_dir: None,
        }
    }
}

impl ClientOptions {
    /// Sets the base URL.
    pub fn base_url(mut self, url: impl Into<String>) -> Self {
        self.base_url = Some(url.into());
        self
    }

    /// Sets the API key.
    pub fn api_key(mut self, key: ApiKey) -> Self {
        self.api_key = Some(key);
        self
    }

    /// Sets the timeout of one attempt.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// Names where a reader raises the timeout, for the timeout error.
    pub fn timeout_setting(mut self, setting: impl Into<String>) -> Self {
        self.timeout_setting = setting.into();
        self
    }

    /// Sets the retry policy.
    pub fn retry(mut self, retry: RetryPolicy) -> Self {
        self.retry = retry;
        self
    }

    /// Sets the cache mode.
    pub fn cache(mut self, mode: CacheMode) -> Self {
        self.cache_mode = mode;
        self
    }

    /// Sets the cache directory.
    pub fn cache_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.cache_dir = Some(dir.into());
        self
    }

    /// Sets the concurrency cap.
    pub fn max_concurrency(mut self, max: usize) -> Self {
        self.max_concurrency = max.max(1);
        self
    }

    /// Sets the pace: at most `n` requests started per minute.
    pub fn requests_per_minute(mut self, n: u32) -> Self {
        self.requests_per_minute = Some(n.max(1));
        self
    }

    /// Sets the target directory of the machine-wide limits' lock files.
    pub fn limits_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.limits_dir = Some(dir.into());
        self
    }

    /// Applies `[provider]` of `niceeval.toml`: what it sets replaces the options'.
    pub(crate) fn provider_config(mut self, config: &crate::config::ProviderConfig) -> Self {
        if let Some(max) = config.max_concurrency {
            self = self.max_concurrency(max);
        }
        if let Some(n) = config.requests_per_minute {
            self = self.requests_per_minute(n);
        }
        self
    }
}

/// A chat model behind its endpoint.
///
/// ```no_run
/// # async fn demo() -> Result<(), niceeval::__workspace::provider::ProviderError> {
/// use niceeval::__workspace::provider::{ApiKey, ChatRequest, ClientOptions, ModelClient, ModelName};
///
/// let client = ModelClient::new(
///     ModelName::parse("openai/llama3.2")?,
///     ClientOptions::default().base_url("http://127.0.0.1:11434/v1"),
/// )?;
/// let answer = client.complete(&ChatRequest::new().user("Say hi")).await?;
/// println!("{} ({} tokens)", answer.text, answer.usage.total_tokens());
/// # Ok(()) }
/// ```
pub struct ModelClient {
    name: ModelName,
    base_url: String,
    url: String,
    key: Option<ApiKey>,
    http: reqwest::Client,
    timeout: Duration,
    timeout_setting: String,
    retry: RetryPolicy,
    cache: Option<(CacheMode, ResponseCache)>,
    limiter: Arc<Semaphore>,
    machine: MachineLimit,
}

impl std::fmt::Debug for ModelClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ModelClient")
            .field("name", &self.name.to_string())
            .field("url", &self.url)
            .field("key", &self.key)
            .finish()
    }
}

type Shared = Result<ChatResponse, ProviderError>;
static FLIGHTS: LazyLock<SingleFlight<Shared>> = LazyLock::new(SingleFlight::default);
static LIMITERS: LazyLock<Mutex<HashMap<String, Arc<Semaphore>>>> = LazyLock::new(Default::default);

/// A failed attempt: retry it or give up.
enum Failure {
    Retry(ProviderError, Option<Duration>),
    Fatal(ProviderError),
}

impl ModelClient {
    /// A client for `name`. Its HTTP connections come from the process's pool for the endpoint's
    /// origin, shared with every other client of that origin (agents and judges of every eval).
    pub fn new(name: ModelName, options: ClientOptions) -> Result<ModelClient, ProviderError> {
        let provider = name.provider();
        let base_url = options
            .base_url
            .as_deref()
            .map(str::trim)
            .filter(|u| !u.is_empty())
            .unwrap_or(provider.default_base_url())
            .trim_end_matches('/')
            .to_string();
        check_base_url(&name, &base_url)?;
        let http = pool::client(&base_url).map_err(|e| ProviderError::Connect {
            model: name.to_string(),
            url: base_url.clone(),
            message: e.to_string(),
            after: String::new(),
        })?;
        let url = match provider {
            Provider::OpenAi => openai::endpoint(&base_url),
            Provider::Anthropic => anthropic::endpoint(&base_url),
        };
        let cache = (options.cache_mode != CacheMode::Off).then(|| {
            let cache = match &options.cache_dir {
                Some(dir) => ResponseCache::new(dir),
                None => ResponseCache::for_manifest_dir(
                    &std::env::var_os("CARGO_MANIFEST_DIR")
                        .map(PathBuf::from)
                        .unwrap_or_else(|| PathBuf::from(".")),
                ),
            };
            (options.cache_mode, cache)
        });
        let endpoint = format!("{provider} {base_url}");
        let limiter = {
            let mut limiters = LIMITERS.lock().unwrap_or_else(|p| p.into_inner());
            limiters
                .entry(endpoint.clone())
                .or_insert_with(|| Arc::new(Semaphore::new(options.max_concurrency.max(1))))
                .clone()
        };
        let target_dir = options
            .limits_dir
            .clone()
            .unwrap_or_else(super::limit::default_dir);
        let machine = MachineLimit::new(
            &target_dir,
            &endpoint,
            options.max_concurrency,
            options.requests_per_minute,
        );
        Ok(ModelClient {
            name,
            base_url,
            url,
            key: options.api_key,
            http,
            timeout: options.timeout,
            timeout_setting: options.timeout_setting.clone(),
            retry: options.retry,
            cache,
            limiter,
            machine,
        })
    }

    /// The model.
    pub fn name(&self) -> &ModelName {
        &self.name
    }

    /// Sends a request and decodes the answer, through the cache when enabled.
    pub async fn complete(&self, request: &ChatRequest) -> Result<ChatResponse, ProviderError> {
        self.complete_if(request, &|_| true).await
    }

    /// Like [`ModelClient::complete`], but only answers that `accept` approves are stored in (or
    /// served from) the cache: a judge answer that cannot be scored is not kept.
    pub(crate) async fn complete_if(
        &self,
        request: &ChatRequest,
        accept: &(dyn Fn(&ChatResponse) -> bool + Sync),
    ) -> Result<ChatResponse, ProviderError> {
        let provider = self.name.provider();
        let encoded = match provider {
            Provider::OpenAi => openai::encode(self.name.model(), request),
            Provider::Anthropic => anthropic::encode(self.name.model(), request),
        };
        let body =
            encoded.map_err(|e| self.decode_error(format!("cannot encode the request: {e}")))?;
        let Some((mode, cache)) = &self.cache else {
            return self.fetch_decoded(&body).await;
        };
        let key = CacheKey::new(provider.as_str(), self.name.model(), &self.base_url, &body);
        if mode.reads()
            && let Some(stored) = cache.get(&key)
            && let Ok(mut response) = self.decode(&stored)
            && accept(&response)
        {
            response.cached = true;
            return Ok(response);
        }
        // Unreadable or unusable entry: ignored; the call below rewrites it.
        let call = async {
            let raw = self.fetch(&body).await?;
            let response = self.decode(&raw).map_err(|message| {
                self.decode_error(format!("{message}; the body was {}", body_excerpt(&raw)))
            })?;
            if mode.writes()
                && accept(&response)
                && let Err(e) = cache.put(&key, &raw)
            {
                eprintln!(
                    "niceeval: cannot write the response cache in {}: {e}",
                    cache.dir().display()
                );
            }
            Ok(response)
        };
        if mode.reads() {
            FLIGHTS.run(key.as_str(), call).await
        } else {
            call.await
        }
    }

    /// The embedding of `text` from the API's `/embeddings` endpoint (OpenAI's wire format:
    /// `{model, input}` → `{data: [{embedding: [..]}]}`), with the client's key, limits and
    /// retries. Only OpenAI-compatible endpoints serve embeddings.
    pub async fn embed(&self, text: &str) -> Result<Vec<f64>, ProviderError> {
        if self.name.provider() != Provider::OpenAi {
            return Err(self
                .decode_error("embeddings are served by OpenAI-compatible endpoints only".into()));
        }
        let url = format!("{}/embeddings", self.base_url);
        let body = serde_json::json!({"model": self.name.model(), "input": text}).to_string();
        let raw = self.fetch_at(&url, body.as_bytes()).await?;
        openai::decode_embedding(&raw).map_err(|message| ProviderError::Decode {
            model: self.name.to_string(),
            url,
            message: format!("{message}; the body was {}", body_excerpt(&raw)),
        })
    }

    async fn fetch_decoded(&self, body: &[u8]) -> Result<ChatResponse, ProviderError> {
        let raw = self.fetch(body).await?;
        self.decode(&raw).map_err(|message| {
            self.decode_error(format!("{message}; the body was {}", body_excerpt(&raw)))
        })
    }

    fn decode(&self, raw: &[u8]) -> Result<ChatResponse, super::AnswerError> {
        match self.name.provider() {
            Provider::OpenAi => openai::decode(raw),
            Provider::Anthropic => anthropic::decode(raw),
        }
    }

    fn decode_error(&self, message: String) -> ProviderError {
        ProviderError::Decode {
            model: self.name.to_string(),
            url: self.url.clone(),
            message,
        }
    }

    /// POSTs `body`, retrying as the policy says; returns the answer's body.
    async fn fetch(&self, body: &[u8]) -> Result<Vec<u8>, ProviderError> {
        self.fetch_at(&self.url, body).await
    }

    /// POSTs `body` to `url` (the chat endpoint, or another endpoint of the same API such as
    /// `/embeddings`), retrying as the policy says; returns the answer's body.
    async fn fetch_at(&self, url: &str, body: &[u8]) -> Result<Vec<u8>, ProviderError> {
        let mut attempt: u32 = 0;
        loop {
            let outcome = {
                let _permit = self.limiter.acquire().await;
                let _slot = self.machine.acquire().await;
                self.attempt(url, body).await
            };
            let (error, retry_after) = match outcome {
                Ok(raw) => return Ok(raw),
                Err(Failure::Fatal(error)) => return Err(error),
                Err(Failure::Retry(error, retry_after)) => (error, retry_after),
            };
            if attempt >= self.retry.max_retries {
                return Err(with_attempts(error, attempt + 1));
            }
            let wait = match retry_after {
                Some(wait) if wait > self.retry.max_retry_after => {
                    return Err(ProviderError::RetryTooLate {
                        model: self.name.to_string(),
                        url: url.to_string(),
                        seconds: wait.as_secs(),
                        max: self.retry.max_retry_after.as_secs(),
                    });
                }
                Some(wait) => wait,
                None => self.retry.backoff(attempt),
            };
            tokio::time::sleep(wait).await;
            attempt += 1;
        }
    }

    async fn attempt(&self, url: &str, body: &[u8]) -> Result<Vec<u8>, Failure> {
        let mut request = self
            .http
            .post(url)
            .header(CONTENT_TYPE, "application/json")
            .timeout(self.timeout)
            .body(body.to_vec());
        if let Ok(traceparent) = TRACEPARENT.try_with(Clone::clone) {
            request = request.header("traceparent", traceparent);
        }
        match self.name.provider() {
            Provider::OpenAi => {
                if let Some(key) = &self.key {
                    request = request.bearer_auth(key.expose());
                }
            }
            Provider::Anthropic => {
                request = request.header("anthropic-version", anthropic::API_VERSION);
                if let Some(key) = &self.key {
                    let mut value = HeaderValue::from_str(key.expose()).map_err(|_| {
                        Failure::Fatal(ProviderError::MissingKey {
                            model: self.name.to_string(),
                            var: "the configured key variable".into(),
                            hint: " to a key without control characters".into(),
                        })
                    })?;
                    value.set_sensitive(true);
                    request = request.header("x-api-key", value);
                }
            }
        }
        let exchange = pool::exchange(request).await.map_err(|e| match e {
            ExchangeError::Timeout => self.timeout_failure(url),
            ExchangeError::Transport(message) => self.transport_failure(url, message),
            ExchangeError::Io(e) => Failure::Fatal(ProviderError::Connect {
                model: self.name.to_string(),
                url: url.to_string(),
                message: e.to_string(),
                after: String::new(),
            }),
        })?;
        let status = exchange.status;
        let retry_after = exchange
            .retry_after
            .as_deref()
            .and_then(|v| parse_retry_after(v, SystemTime::now()));
        let raw = exchange.body;
        if status.is_success() {
            return Ok(raw);
        }
        let error = ProviderError::Status {
            model: self.name.to_string(),
            url: url.to_string(),
            status: status.as_u16(),
            message: error_message(&raw).unwrap_or_else(|| body_excerpt(&raw)),
            after: String::new(),
        };
        if retryable_status(status.as_u16()) {
            Err(Failure::Retry(error, retry_after))
        } else {
            Err(Failure::Fatal(error))
        }
    }

    fn timeout_failure(&self, url: &str) -> Failure {
        Failure::Fatal(ProviderError::Timeout {
            model: self.name.to_string(),
            url: url.to_string(),
            seconds: self.timeout.as_secs_f64(),
            setting: self.timeout_setting.clone(),
        })
    }

    fn transport_failure(&self, url: &str, message: String) -> Failure {
        Failure::Retry(
            ProviderError::Connect {
                model: self.name.to_string(),
                url: url.to_string(),
                message,
                after: String::new(),
            },
            None,
        )
    }
}

fn with_attempts(error: ProviderError, attempts: u32) -> ProviderError {
    let note = if attempts > 1 {
        format!(" after {attempts} attempts")
    } else {
        String::new()
    };
    match error {
        ProviderError::Status {
            model,
            url,
            status,
            message,
            ..
        } => ProviderError::Status {
            model,
            url,
            status,
            message,
            after: note,
        },
        ProviderError::Connect {
            model,
            url,
            message,
            ..
        } => ProviderError::Connect {
            model,
            url,
            message,
            after: note,
        },
        other => other,
    }
}

fn check_base_url(name: &ModelName, base_url: &str) -> Result<(), ProviderError> {
    let bad = |reason: &str| ProviderError::BadBaseUrl {
        model: name.to_string(),
        url: base_url.to_string(),
        reason: reason.to_string(),
    };
    let url = reqwest::Url::parse(base_url)
        .map_err(|e| bad(&format!("{e}; write e.g. \"http://127.0.0.1:11434/v1\"")))?;
    match url.scheme() {
        "http" => Ok(()),
        "https" if cfg!(feature = "rustls") => Ok(()),
        "https" => Err(bad(
            "https needs niceeval's `rustls` feature (on by default); enable it or use a plain-http local server",
        )),
        other => Err(bad(&format!("the scheme {other:?} is not http or https"))),
    }
}

/// The provider's error message in an error body (`{"error":{"message":..}}` and variants).
pub(crate) fn error_message(raw: &[u8]) -> Option<String> {
    let value: serde_json::Value = serde_json::from_slice(raw).ok()?;
    let error = value.get("error").unwrap_or(&value);
    error
        .get("message")
        .and_then(|m| m.as_str())
        .or_else(|| error.as_str())
        .map(str::to_string)
}

/// The API key for a model: from `key_env` (or the provider's default variable); `None` when
/// `key_env` is `Some("")` (explicitly no key) or when the base URL is a loopback address (a
/// local server) and the variable is unset. `hint` ends the missing-key message.
pub fn resolve_key(
    name: &ModelName,
    base_url: Option<&str>,
    key_env: Option<&str>,
    hint: &str,
) -> Result<Option<ApiKey>, ProviderError> {
    if key_env.is_some_and(|v| v.trim().is_empty()) {
        return Ok(None);
    }
    let var = key_env
        .map(str::trim)
        .unwrap_or(name.provider().default_key_env());
    if let Some(key) = ApiKey::from_env(var) {
        return Ok(Some(key));
    }
    let base = base_url.unwrap_or(name.provider().default_base_url());
    if super::is_loopback(base) {
        return Ok(None);
    }
    Err(ProviderError::MissingKey {
        model: name.to_string(),
        var: var.to_string(),
        hint: hint.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_messages_are_found_in_both_formats() {
        assert_eq!(
            error_message(br#"{"error":{"message":"bad model","type":"x"}}"#).as_deref(),
            Some("bad model")
        );
        assert_eq!(
            error_message(br#"{"type":"error","error":{"type":"x","message":"overloaded"}}"#)
                .as_deref(),
            Some("overloaded")
        );
        assert_eq!(
            error_message(br#"{"error":"nope"}"#).as_deref(),
            Some("nope")
        );
        assert_eq!(error_message(b"<html>"), None);
    }

    #[test]
    fn bad_base_urls_are_named() {
        let name = ModelName::parse("openai/m").unwrap();
        let err = ModelClient::new(
            name.clone(),
            ClientOptions::default().base_url("localhost:1"),
        )
        .unwrap_err()
        .to_string();
        assert!(err.contains("localhost:1"), "{err}");
        let err = ModelClient::new(name, ClientOptions::default().base_url("ftp://x"))
            .unwrap_err()
            .to_string();
        assert!(err.contains("not http or https"), "{err}");
    }

    #[test]
    fn keys_resolve_from_the_named_variable_or_not_at_all_for_loopback() {
        let name = ModelName::parse("openai/m").unwrap();
        let var = "NICEEVAL_TEST_KEY_RESOLVE_UNSET_7f3a";
        let err = resolve_key(&name, None, Some(var), " (hint)")
            .unwrap_err()
            .to_string();
        assert!(err.contains(var) && err.ends_with("(hint)"), "{err}");
        assert!(
            resolve_key(&name, Some("http://127.0.0.1:1/v1"), Some(var), "")
                .unwrap()
                .is_none()
        );
        assert!(resolve_key(&name, None, Some(""), "").unwrap().is_none());
    }
}
