//! The process's HTTP connections to model endpoints: one pool of HTTP/1 connections per
//! endpoint origin, shared by every chat agent and judge of the process whatever runtime or
//! thread built them, and one I/O thread that drives every request and owns every connection.
//!
//! Each eval runs on a Tokio runtime of its own under `cargo test`, and a connection is a task
//! of the runtime that opened it: a pool shared across eval runtimes would hand out connections
//! whose runtime is gone. So no request is polled on the caller's runtime: it is spawned on a
//! current-thread runtime that lives as long as the process, and the caller awaits its answer
//! (which works from any runtime). Dropping the caller's future aborts the request (and closes
//! its connection).
//!
//! The pool is hand-written over hyper's connection API rather than reqwest's or hyper-util's
//! pool because of the bound it guarantees: **a process never holds more connections to an
//! origin than it had requests in flight to it at once.** A request takes an idle connection
//! when there is one and opens one only when there is none, and it puts its connection back
//! (once the connection can carry the next request) *before* its answer is handed back. In
//! those pools a connection goes back from a separate task a moment after the answer is read,
//! so a request that starts at once may not find it yet and open another: under load,
//! 2,000 evals at concurrency 8 opened 9. (An idle connection unused for 90 seconds, or closed
//! by the server, is dropped.)
//!
//! When an HTTP proxy is configured in the environment (`HTTP_PROXY`, `HTTPS_PROXY`,
//! `ALL_PROXY` or their lowercase forms), requests go through reqwest, which honours it and
//! `NO_PROXY`, with reqwest's pool: the bound above is then not guaranteed.

use std::collections::HashMap;
use std::sync::{Arc, LazyLock, Mutex, OnceLock};
use std::time::{Duration, Instant};

use http_body_util::{BodyExt, Full};
use hyper::body::Bytes;
use hyper::client::conn::http1::SendRequest;
use reqwest::header::{ACCEPT, HOST, HeaderValue, RETRY_AFTER};
use tokio::runtime::Handle;
use tokio::task::JoinHandle;

/// What one HTTP exchange brought back.
pub(crate) struct Exchange {
    pub status: reqwest::StatusCode,
    /// The `Retry-After` header, when there is one.
    pub retry_after: Option<String>,
    pub body: Vec<u8>,
}

/// Why an exchange did not complete.
pub(crate) enum ExchangeError {
    /// The request's timeout passed before the whole answer was read.
    Timeout,
    /// The transport failed (connect, TLS, sending, reading the body): the error and its causes.
    Transport(String),
    /// The I/O thread could not be started or was lost.
    Io(PoolError),
}

/// Why the process's HTTP machinery cannot carry a request.
#[derive(Debug, Clone, thiserror::Error)]
pub(crate) enum PoolError {
    /// The HTTP client could not be built.
    #[error("cannot build the HTTP client: {0}")]
    Client(#[source] std::sync::Arc<reqwest::Error>),
    /// The I/O thread's runtime could not be started.
    #[error("cannot start the HTTP runtime: {0}")]
    Runtime(#[source] std::sync::Arc<std::io::Error>),
    /// The I/O thread could not be started.
    #[error("cannot start the HTTP thread: {0}")]
    Thread(#[source] std::sync::Arc<std::io::Error>),
    /// The request's task on the I/O thread was lost.
    #[error("the HTTP request was lost: {0}")]
    Lost(#[source] std::sync::Arc<tokio::task::JoinError>),
    /// TLS could not be set up.
    #[cfg(feature = "rustls")]
    #[error("cannot set up TLS: {0}")]
    Tls(#[source] std::sync::Arc<rustls::Error>),
}

/// How long an unused connection stays in the pool (reqwest's default).
const IDLE_TIMEOUT: Duration = Duration::from_secs(90);

/// The longest wait, after an answer was read, for its connection to take the next request;
/// a connection not ready by then is closed rather than pooled.
const READY_TIMEOUT: Duration = Duration::from_secs(10);

type Sender = SendRequest<Full<Bytes>>;

/// One origin's idle connections, most recently used last.
#[derive(Default)]
struct Origin {
    idle: Mutex<Vec<(Sender, Instant)>>,
}

impl Origin {
    /// An idle connection that can take a request, when there is one.
    fn checkout(&self) -> Option<Sender> {
        let mut idle = self.idle.lock().unwrap_or_else(|p| p.into_inner());
        while let Some((sender, since)) = idle.pop() {
            if !sender.is_closed() && since.elapsed() < IDLE_TIMEOUT {
                return Some(sender);
            }
        }
        None
    }

    fn checkin(&self, sender: Sender) {
        let mut idle = self.idle.lock().unwrap_or_else(|p| p.into_inner());
        idle.retain(|(s, since)| !s.is_closed() && since.elapsed() < IDLE_TIMEOUT);
        idle.push((sender, Instant::now()));
    }
}

static ORIGINS: LazyLock<Mutex<HashMap<String, Arc<Origin>>>> = LazyLock::new(Default::default);
static CLIENTS: LazyLock<Mutex<HashMap<String, reqwest::Client>>> = LazyLock::new(Default::default);
static IO: OnceLock<Result<Handle, PoolError>> = OnceLock::new();

/// The client that builds `base_url`'s requests (and sends them when a proxy is configured):
/// one per origin (scheme, host and port).
pub(crate) fn client(base_url: &str) -> Result<reqwest::Client, PoolError> {
    let key = origin(base_url);
    let mut clients = CLIENTS.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(client) = clients.get(&key) {
        return Ok(client.clone());
    }
    let client = reqwest::Client::builder()
        .build()
        .map_err(|e| PoolError::Client(e.into()))?;
    clients.insert(key, client.clone());
    Ok(client)
}

/// What picks a pool: the scheme, host and port (timeouts are per request).
fn origin(base_url: &str) -> String {
    reqwest::Url::parse(base_url)
        .map(|u| u.origin().ascii_serialization())
        .unwrap_or_else(|_| base_url.to_string())
}

/// The I/O thread's runtime, started on first use.
fn io() -> Result<&'static Handle, PoolError> {
    IO.get_or_init(|| {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| PoolError::Runtime(e.into()))?;
        let handle = runtime.handle().clone();
        std::thread::Builder::new()
            .name("niceeval-http".into())
            .spawn(move || runtime.block_on(std::future::pending::<()>()))
            .map_err(|e| PoolError::Thread(e.into()))?;
        Ok(handle)
    })
    .as_ref()
    .map_err(Clone::clone)
}

/// Aborts the spawned request when the caller stops waiting for it.
struct AbortOnDrop<T>(JoinHandle<T>);

impl<T> Drop for AbortOnDrop<T> {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// Sends `request` and reads its whole answer on the I/O thread.
pub(crate) async fn exchange(request: reqwest::RequestBuilder) -> Result<Exchange, ExchangeError> {
    let io = io().map_err(ExchangeError::Io)?;
    let (client, request) = request.build_split();
    let request = request.map_err(|e| ExchangeError::Transport(chain(&e)))?;
    let mut task = AbortOnDrop(io.spawn(async move {
        let timeout = request.timeout().copied();
        let proxied = proxied(request.url());
        let exchange = async move {
            if proxied {
                through_reqwest(&client, request).await
            } else {
                direct(request).await
            }
        };
        match timeout {
            Some(timeout) => tokio::time::timeout(timeout, exchange)
                .await
                .unwrap_or(Err(ExchangeError::Timeout)),
            None => exchange.await,
        }
    }));
    match (&mut task.0).await {
        Ok(result) => result,
        Err(e) => Err(ExchangeError::Io(PoolError::Lost(e.into()))),
    }
}

/// Whether the environment names a proxy for `url`'s scheme (the variables reqwest reads).
fn proxied(url: &reqwest::Url) -> bool {
    let names: &[&str] = if url.scheme() == "https" {
        &["HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy"]
    } else {
        &["HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy"]
    };
    names
        .iter()
        .any(|name| std::env::var_os(name).is_some_and(|v| !v.is_empty()))
}

/// The exchange through reqwest (and the proxy it reads from the environment).
async fn through_reqwest(
    client: &reqwest::Client,
    request: reqwest::Request,
) -> Result<Exchange, ExchangeError> {
    let transport = |e: reqwest::Error| {
        if e.is_timeout() {
            ExchangeError::Timeout
        } else {
            ExchangeError::Transport(chain(&e))
        }
    };
    let response = client.execute(request).await.map_err(transport)?;
    let status = response.status();
    let retry_after = retry_after(response.headers());
    let body = response.bytes().await.map_err(transport)?.to_vec();
    Ok(Exchange {
        status,
        retry_after,
        body,
    })
}

/// The exchange on a connection of the origin's pool, put back before the answer is returned.
async fn direct(request: reqwest::Request) -> Result<Exchange, ExchangeError> {
    let url = request.url().clone();
    let pool = {
        let mut origins = ORIGINS.lock().unwrap_or_else(|p| p.into_inner());
        origins
            .entry(url.origin().ascii_serialization())
            .or_default()
            .clone()
    };
    let message = to_hyper(request)?;
    let (mut sender, response) = match pool.checkout() {
        Some(mut sender) => match sender.try_send_request(message).await {
            Ok(response) => (sender, response),
            // The idle connection closed before the request went out: send it on a new one.
            Err(mut e) => match e.take_message() {
                Some(message) => {
                    let mut sender = connect(&url).await?;
                    let response = sender.send_request(message).await.map_err(hyper_error)?;
                    (sender, response)
                }
                None => return Err(hyper_error(e.into_error())),
            },
        },
        None => {
            let mut sender = connect(&url).await?;
            let response = sender.send_request(message).await.map_err(hyper_error)?;
            (sender, response)
        }
    };
    let status = response.status();
    let retry_after = retry_after(response.headers());
    let body = response
        .into_body()
        .collect()
        .await
        .map_err(hyper_error)?
        .to_bytes()
        .to_vec();
    if let Ok(Ok(())) = tokio::time::timeout(READY_TIMEOUT, sender.ready()).await {
        pool.checkin(sender);
    }
    Ok(Exchange {
        status,
        retry_after,
        body,
    })
}

/// `request` as hyper sends it: origin-form target, `Host`, the body in one piece.
fn to_hyper(request: reqwest::Request) -> Result<hyper::Request<Full<Bytes>>, ExchangeError> {
    let url = request.url();
    let mut target = url.path().to_string();
    if let Some(query) = url.query() {
        target.push('?');
        target.push_str(query);
    }
    let host = match (url.host_str(), url.port()) {
        (Some(host), Some(port)) => format!("{host}:{port}"),
        (Some(host), None) => host.to_string(),
        (None, _) => {
            return Err(ExchangeError::Transport(format!(
                "the URL {url} has no host"
            )));
        }
    };
    let host = HeaderValue::from_str(&host)
        .map_err(|e| ExchangeError::Transport(format!("the host of {url}: {e}")))?;
    let mut builder = hyper::Request::builder()
        .method(request.method().clone())
        .uri(target);
    if let Some(headers) = builder.headers_mut() {
        *headers = request.headers().clone();
        headers.entry(HOST).or_insert(host);
        headers
            .entry(ACCEPT)
            .or_insert(HeaderValue::from_static("*/*"));
    }
    let body = request
        .body()
        .and_then(|b| b.as_bytes())
        .map(Bytes::copy_from_slice)
        .unwrap_or_default();
    builder
        .body(Full::new(body))
        .map_err(|e| ExchangeError::Transport(chain(&e)))
}

fn retry_after(headers: &reqwest::header::HeaderMap) -> Option<String> {
    headers
        .get(RETRY_AFTER)
        .and_then(|v| v.to_str().ok())
        .map(str::to_string)
}

#[cfg(feature = "rustls")]
type Connector = hyper_rustls::HttpsConnector<hyper_util::client::legacy::connect::HttpConnector>;
#[cfg(not(feature = "rustls"))]
type Connector = hyper_util::client::legacy::connect::HttpConnector;

static CONNECTOR: OnceLock<Result<Connector, PoolError>> = OnceLock::new();

/// What opens connections: TCP (with `TCP_NODELAY`), and TLS with Mozilla's roots for https
/// (feature `rustls`).
fn connector() -> Result<Connector, ExchangeError> {
    CONNECTOR
        .get_or_init(|| {
            let mut http = hyper_util::client::legacy::connect::HttpConnector::new();
            http.set_nodelay(true);
            #[cfg(feature = "rustls")]
            {
                http.enforce_http(false);
                let tls = hyper_rustls::HttpsConnectorBuilder::new()
                    .with_provider_and_webpki_roots(crypto_provider())
                    .map_err(|e| PoolError::Tls(std::sync::Arc::new(e)))?;
                Ok(tls.https_or_http().enable_http1().wrap_connector(http))
            }
            #[cfg(not(feature = "rustls"))]
            Ok(http)
        })
        .clone()
        .map_err(ExchangeError::Io)
}

/// The TLS crypto provider: the process's default when the program installed one (its choice
/// wins, post-quantum key exchange included), else *ring*'s, which the `rustls` feature
/// builds (reqwest's `rustls-tls` builds the same; no C toolchain is needed, as aws-lc-rs
/// would need one). rustls 0.23.48 deprecates `ring::default_provider` because *ring* has no
/// post-quantum key exchange; its replacement is the separate `rustls-ring` crate of rustls
/// 0.24, so until then this one call is allowed here rather than warned about in every
/// build that depends on niceeval.
#[cfg(feature = "rustls")]
fn crypto_provider() -> rustls::crypto::CryptoProvider {
    if let Some(installed) = rustls::crypto::CryptoProvider::get_default() {
        return installed.as_ref().clone();
    }
    #[allow(deprecated)]
    rustls::crypto::ring::default_provider()
}

/// A new connection to `url`'s origin, its task on the I/O runtime.
async fn connect(url: &reqwest::Url) -> Result<Sender, ExchangeError> {
    use tower_service::Service;
    let uri: hyper::Uri = url
        .as_str()
        .parse()
        .map_err(|e: hyper::http::uri::InvalidUri| ExchangeError::Transport(chain(&e)))?;
    let mut connector = connector()?;
    let io = connector.call(uri).await.map_err(|e| {
        ExchangeError::Transport(format!("cannot connect to {url}: {}", chain(&*boxed(e))))
    })?;
    let (sender, connection) = hyper::client::conn::http1::handshake(io)
        .await
        .map_err(hyper_error)?;
    tokio::spawn(async move {
        // Ends when the server closes the connection or its last sender is dropped; its
        // errors reach the request it was serving.
        let _ = connection.await;
    });
    Ok(sender)
}

/// The connector's error as a trait object (TLS's connector gives one already, plain TCP's its
/// own type).
fn boxed(
    e: impl Into<Box<dyn std::error::Error + Send + Sync>>,
) -> Box<dyn std::error::Error + Send + Sync> {
    e.into()
}

fn hyper_error(e: hyper::Error) -> ExchangeError {
    ExchangeError::Transport(chain(&e))
}

/// `error` and its causes, `: `-separated.
fn chain(error: &(dyn std::error::Error + 'static)) -> String {
    let mut message = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        let cause_text = cause.to_string();
        if !message.contains(&cause_text) {
            message.push_str(": ");
            message.push_str(&cause_text);
        }
        source = cause.source();
    }
    message
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endpoints_of_one_origin_share_a_pool() {
        assert_eq!(
            origin("http://127.0.0.1:9/a/v1"),
            origin("http://127.0.0.1:9/b/")
        );
        assert_ne!(
            origin("http://127.0.0.1:9/v1"),
            origin("http://127.0.0.1:10/v1")
        );
        assert_ne!(origin("http://x:80/v1"), origin("https://x:80/v1"));
    }
}
