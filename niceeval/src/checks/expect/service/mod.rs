//! Assertions that ask a service to grade the output, speaking each service's wire format as
//! promptfoo does: a webhook of the user's (`webhook`), a HuggingFace text-classification model
//! (`classifier`), OpenAI's moderation endpoint (`moderation`) and Pi Labs' scorer (`pi`), each
//! over one JSON POST (`http`). Settings come from the environment under the names promptfoo
//! reads ([`Env`]). A service that cannot be reached, or answers with an error, makes the
//! assertion an execution error naming the cause.

pub(crate) mod classifier;
pub(crate) mod http;
pub(crate) mod moderation;
pub(crate) mod pi;
pub(crate) mod webhook;

use std::collections::BTreeMap;
use std::sync::Arc;

/// Where the service assertions read their settings: the process environment, or (in tests) a
/// fixed set of variables.
#[derive(Debug, Clone, Default)]
pub(crate) struct Env {
    fixed: Option<Arc<BTreeMap<String, String>>>,
}

impl Env {
    /// The process environment.
    pub(crate) fn process() -> Env {
        Env::default()
    }

    /// Exactly these variables, whatever the process has.
    #[cfg(test)]
    pub(crate) fn fixed(pairs: &[(&str, &str)]) -> Env {
        Env {
            fixed: Some(Arc::new(
                pairs
                    .iter()
                    .map(|(k, v)| (k.to_string(), v.to_string()))
                    .collect(),
            )),
        }
    }

    /// A variable's value; an empty one counts as unset, as promptfoo's `||` chains read it.
    pub(crate) fn get(&self, name: &str) -> Option<String> {
        let value = match &self.fixed {
            Some(map) => map.get(name).cloned(),
            None => std::env::var(name).ok(),
        };
        value.filter(|v| !v.is_empty())
    }

    /// A whole number of milliseconds, read as JavaScript's `parseInt` reads (leading digits).
    pub(crate) fn millis(&self, name: &str) -> Option<u64> {
        let value = self.get(name)?;
        let digits: String = value
            .trim_start()
            .chars()
            .take_while(char::is_ascii_digit)
            .collect();
        digits.parse().ok()
    }

    /// A flag: `1`, `true`, `yes` (promptfoo also takes `yup` and `yeppers`).
    pub(crate) fn flag(&self, name: &str) -> bool {
        self.get(name).is_some_and(|v| {
            matches!(
                v.to_lowercase().as_str(),
                "1" | "true" | "yes" | "yup" | "yeppers"
            )
        })
    }
}

/// The `provider` of a service item, as promptfoo accepts it: an id, `{id, config}`, or a map
/// by kind (`{classification: …}`, `{moderation: …}`) holding either.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ProviderSpec {
    pub(crate) id: String,
    pub(crate) config: serde_json::Map<String, serde_json::Value>,
}

impl ProviderSpec {
    /// Reads `value` for a grader of `kind` (`classification`, `moderation`).
    pub(crate) fn read(value: &serde_json::Value, kind: &str) -> Result<ProviderSpec, String> {
        use serde_json::Value;
        match value {
            Value::String(id) => Ok(ProviderSpec {
                id: id.clone(),
                config: serde_json::Map::new(),
            }),
            Value::Object(map) => {
                if let Some(inner) = map.get(kind).filter(|v| !v.is_null()) {
                    return ProviderSpec::read(inner, kind);
                }
                match map.get("id") {
                    Some(Value::String(id)) => Ok(ProviderSpec {
                        id: id.clone(),
                        config: map
                            .get("config")
                            .and_then(Value::as_object)
                            .cloned()
                            .unwrap_or_default(),
                    }),
                    _ => Err(format!(
                        "`provider` must be an id or {{id, config}}, got {value}"
                    )),
                }
            }
            other => Err(format!(
                "`provider` must be an id or {{id, config}}, got {other}"
            )),
        }
    }

    /// A string setting of the config.
    pub(crate) fn setting(&self, key: &str) -> Option<String> {
        self.config
            .get(key)
            .and_then(serde_json::Value::as_str)
            .filter(|v| !v.is_empty())
            .map(str::to_string)
    }
}

/// A fake service on 127.0.0.1 for tests: it records every request and answers each with the
/// next of the given answers (the last one again once they run out).
#[cfg(test)]
pub(crate) mod fake {
    use std::sync::{Arc, Mutex};

    /// One request the fake received.
    #[derive(Debug, Clone)]
    pub(crate) struct Received {
        pub(crate) path: String,
        pub(crate) headers: Vec<(String, String)>,
        pub(crate) body: serde_json::Value,
    }

    impl Received {
        pub(crate) fn header(&self, name: &str) -> Option<&str> {
            self.headers
                .iter()
                .find(|(n, _)| n.eq_ignore_ascii_case(name))
                .map(|(_, v)| v.as_str())
        }
    }

    /// The base URL of a fake answering `(status, body)` in turn, and what it received.
    pub(crate) fn serve(answers: Vec<(u16, String)>) -> (String, Arc<Mutex<Vec<Received>>>) {
        let received: Arc<Mutex<Vec<Received>>> = Arc::default();
        let kept = received.clone();
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("a loopback port");
        let port = listener.local_addr().expect("an address").port();
        std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("a runtime");
            runtime.block_on(async move {
                listener.set_nonblocking(true).expect("non-blocking");
                let listener = tokio::net::TcpListener::from_std(listener).expect("a listener");
                let answers = Arc::new(Mutex::new(answers));
                let app = axum::Router::new().fallback(
                    move |uri: axum::http::Uri,
                          headers: axum::http::HeaderMap,
                          body: axum::body::Bytes| {
                        let kept = kept.clone();
                        let answers = answers.clone();
                        async move {
                            kept.lock()
                                .unwrap_or_else(|p| p.into_inner())
                                .push(Received {
                                    path: uri.to_string(),
                                    headers: headers
                                        .iter()
                                        .map(|(n, v)| {
                                            (n.to_string(), v.to_str().unwrap_or("").to_string())
                                        })
                                        .collect(),
                                    body: serde_json::from_slice(&body)
                                        .unwrap_or(serde_json::Value::Null),
                                });
                            let mut answers = answers.lock().unwrap_or_else(|p| p.into_inner());
                            let (status, text) = if answers.len() > 1 {
                                answers.remove(0)
                            } else {
                                answers.first().cloned().unwrap_or((200, String::new()))
                            };
                            (
                                axum::http::StatusCode::from_u16(status)
                                    .unwrap_or(axum::http::StatusCode::OK),
                                [(axum::http::header::CONTENT_TYPE, "application/json")],
                                text,
                            )
                        }
                    },
                );
                let _ = axum::serve(listener, app).await;
            })
        });
        (format!("http://127.0.0.1:{port}"), received)
    }

    /// A loopback URL nothing listens on.
    pub(crate) fn closed_port_url() -> String {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .expect("a loopback port")
            .local_addr()
            .expect("an address")
            .port();
        format!("http://127.0.0.1:{port}")
    }
}

/// Why a service could not grade an item (its reply, its status, its connection), in words.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{0}")]
pub(crate) struct ServiceFailure(String);

impl From<String> for ServiceFailure {
    fn from(message: String) -> Self {
        ServiceFailure(message)
    }
}

impl From<&str> for ServiceFailure {
    fn from(message: &str) -> Self {
        ServiceFailure(message.to_string())
    }
}

impl From<ServiceFailure> for String {
    fn from(problem: ServiceFailure) -> Self {
        problem.0
    }
}
