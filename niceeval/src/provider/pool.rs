//! The process's HTTP connection pools: one `reqwest::Client` per endpoint origin, shared by
//! every chat agent and judge of the process whatever runtime or thread built them, and one I/O
//! thread that drives every request and owns every pooled connection.
//!
//! Each eval runs on a Tokio runtime of its own under `cargo test`, and a pooled connection is a
//! task of the runtime that opened it: a client shared across eval runtimes would hand out
//! connections whose runtime is gone. So no request is polled on the caller's runtime: it is
//! spawned on a current-thread runtime that lives as long as the process, and the caller awaits
//! its answer (which works from any runtime). Dropping the caller's future aborts the request.

use std::collections::HashMap;
use std::sync::{LazyLock, Mutex, OnceLock};

use reqwest::header::RETRY_AFTER;
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
    /// The transport failed (connect, timeout, reading the body).
    Transport(reqwest::Error),
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
}

static CLIENTS: LazyLock<Mutex<HashMap<String, reqwest::Client>>> = LazyLock::new(Default::default);
static IO: OnceLock<Result<Handle, PoolError>> = OnceLock::new();

/// The process's client for `base_url`'s origin (scheme, host and port): its connections are
/// shared with every other user of that origin.
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

/// What picks a pool: the scheme, host and port (every client has the same settings; timeouts
/// are per request).
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
    let mut task = AbortOnDrop(io.spawn(async move {
        let response = request.send().await?;
        let status = response.status();
        let retry_after = response
            .headers()
            .get(RETRY_AFTER)
            .and_then(|v| v.to_str().ok())
            .map(str::to_string);
        let body = response.bytes().await?.to_vec();
        Ok(Exchange {
            status,
            retry_after,
            body,
        })
    }));
    match (&mut task.0).await {
        Ok(result) => result.map_err(ExchangeError::Transport),
        Err(e) => Err(ExchangeError::Io(PoolError::Lost(e.into()))),
    }
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
