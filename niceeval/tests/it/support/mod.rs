//! Test support: a fake model provider on 127.0.0.1 (an ephemeral port) that speaks the real
//! wire formats, records every request, and answers with whatever the test scripts; helpers
//! to run an eval definition against a niceeval.toml in a temporary directory; and
//! [`time_out_once`], which fires an agent's timeout once the agent got where its test needs it.
#![allow(dead_code)]

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

pub mod fake_responses;

/// One request the server received.
#[derive(Debug, Clone)]
pub struct Seen {
    /// When the request arrived (its body read).
    pub at: std::time::Instant,
    pub path: String,
    pub headers: HashMap<String, String>,
    pub body: Value,
}

impl Seen {
    /// The model the request asked for.
    pub fn model(&self) -> &str {
        self.body["model"].as_str().unwrap_or("")
    }

    /// The first user message's text (the judge prompt).
    pub fn prompt(&self) -> String {
        let content = &self.body["messages"][0]["content"];
        content
            .as_str()
            .map(str::to_string)
            .unwrap_or_else(|| content.to_string())
    }
}

/// What the server answers.
#[derive(Debug, Clone)]
pub struct Reply {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: String,
    pub delay: Duration,
    /// Answer only once this many requests are at the server at once (or after 10 s).
    pub hold_until_in_flight: usize,
}

impl Reply {
    pub fn json(body: Value) -> Reply {
        Reply {
            status: 200,
            headers: Vec::new(),
            body: body.to_string(),
            delay: Duration::ZERO,
            hold_until_in_flight: 0,
        }
    }

    pub fn status(status: u16, body: &str) -> Reply {
        Reply {
            status,
            headers: Vec::new(),
            body: body.to_string(),
            delay: Duration::ZERO,
            hold_until_in_flight: 0,
        }
    }

    pub fn raw(body: &str) -> Reply {
        Reply::status(200, body)
    }

    pub fn header(mut self, name: &str, value: &str) -> Reply {
        self.headers.push((name.to_string(), value.to_string()));
        self
    }

    pub fn delay(mut self, delay: Duration) -> Reply {
        self.delay = delay;
        self
    }

    /// Holds the answer until `n` requests are at the server at once (or 10 s passed): shows
    /// that requests are concurrent without relying on how fast the client starts them.
    pub fn hold_until_in_flight(mut self, n: usize) -> Reply {
        self.hold_until_in_flight = n;
        self
    }
}

type Responder = dyn Fn(usize, &Seen) -> Reply + Send + Sync;

struct Shared {
    seen: Mutex<Vec<Seen>>,
    responder: Box<Responder>,
    in_flight: AtomicUsize,
    max_in_flight: AtomicUsize,
    connections: AtomicUsize,
}

/// The fake provider. Stopped when dropped.
pub struct FakeProvider {
    pub url: String,
    shared: Arc<Shared>,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl FakeProvider {
    /// Starts a server answering request `n` (0-based) with `responder(n, request)`.
    pub fn start(
        responder: impl Fn(usize, &Seen) -> Reply + Send + Sync + 'static,
    ) -> FakeProvider {
        let shared = Arc::new(Shared {
            seen: Mutex::new(Vec::new()),
            responder: Box::new(responder),
            in_flight: AtomicUsize::new(0),
            max_in_flight: AtomicUsize::new(0),
            connections: AtomicUsize::new(0),
        });
        let (port_tx, port_rx) = std::sync::mpsc::channel();
        let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
        let state = shared.clone();
        let thread = std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                .enable_all()
                .build()
                .unwrap();
            rt.block_on(async move {
                let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
                port_tx.send(listener.local_addr().unwrap().port()).unwrap();
                let counter = state.clone();
                let listener = axum::serve::ListenerExt::tap_io(listener, move |_| {
                    counter.connections.fetch_add(1, Ordering::SeqCst);
                });
                let app = axum::Router::new().fallback(handle).with_state(state);
                axum::serve(listener, app)
                    .with_graceful_shutdown(async {
                        let _ = stop_rx.await;
                    })
                    .await
                    .unwrap();
            });
            rt.shutdown_timeout(Duration::from_millis(100));
        });
        let port = port_rx.recv().unwrap();
        FakeProvider {
            url: format!("http://127.0.0.1:{port}"),
            shared,
            stop: Some(stop_tx),
            thread: Some(thread),
        }
    }

    /// Every request so far.
    pub fn seen(&self) -> Vec<Seen> {
        self.shared.seen.lock().unwrap().clone()
    }

    pub fn count(&self) -> usize {
        self.shared.seen.lock().unwrap().len()
    }

    /// How many TCP connections the server accepted.
    pub fn connections(&self) -> usize {
        self.shared.connections.load(Ordering::SeqCst)
    }

    /// The most requests that were in flight at once.
    pub fn max_in_flight(&self) -> usize {
        self.shared.max_in_flight.load(Ordering::SeqCst)
    }
}

impl Drop for FakeProvider {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

async fn handle(
    State(shared): State<Arc<Shared>>,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let now = shared.in_flight.fetch_add(1, Ordering::SeqCst) + 1;
    shared.max_in_flight.fetch_max(now, Ordering::SeqCst);
    let seen = Seen {
        at: std::time::Instant::now(),
        path: uri.path().to_string(),
        headers: headers
            .iter()
            .map(|(k, v)| (k.as_str().to_string(), v.to_str().unwrap_or("").to_string()))
            .collect(),
        body: serde_json::from_slice(&body).unwrap_or(Value::Null),
    };
    let index = {
        let mut all = shared.seen.lock().unwrap();
        all.push(seen.clone());
        all.len() - 1
    };
    let reply = (shared.responder)(index, &seen);
    if !reply.delay.is_zero() {
        tokio::time::sleep(reply.delay).await;
    }
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while shared.max_in_flight.load(Ordering::SeqCst) < reply.hold_until_in_flight
        && tokio::time::Instant::now() < deadline
    {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    shared.in_flight.fetch_sub(1, Ordering::SeqCst);
    let mut response = (
        StatusCode::from_u16(reply.status).unwrap(),
        [("content-type", "application/json")],
        reply.body,
    )
        .into_response();
    for (name, value) in reply.headers {
        response.headers_mut().insert(
            axum::http::HeaderName::from_bytes(name.as_bytes()).unwrap(),
            value.parse().unwrap(),
        );
    }
    response
}

/// An OpenAI Chat Completions answer calling `tool` with `args`.
pub fn openai_tool_call(tool: &str, args: Value) -> Value {
    json!({
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "model": "fake",
        "choices": [{
            "index": 0,
            "message": {
                "role": "assistant",
                "content": null,
                "tool_calls": [{
                    "id": "call_abc",
                    "type": "function",
                    "function": { "name": tool, "arguments": args.to_string() }
                }]
            },
            "finish_reason": "tool_calls"
        }],
        "usage": { "prompt_tokens": 120, "completion_tokens": 30, "total_tokens": 150 }
    })
}

/// An OpenAI answer selecting `choice` with one reason.
pub fn openai_choice(choice: &str, reason: &str) -> Reply {
    Reply::json(openai_tool_call(
        "select_choice",
        json!({ "reasons": [reason], "choice": choice }),
    ))
}

/// An OpenAI answer with text only.
pub fn openai_text(text: &str) -> Value {
    json!({
        "id": "chatcmpl-2",
        "object": "chat.completion",
        "model": "fake",
        "choices": [{ "index": 0, "message": { "role": "assistant", "content": text }, "finish_reason": "stop" }],
        "usage": { "prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15 }
    })
}

/// An Anthropic Messages answer calling `tool` with `input`.
pub fn anthropic_tool_use(tool: &str, input: Value) -> Value {
    json!({
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "fake",
        "content": [
            { "type": "text", "text": "Let me think." },
            { "type": "tool_use", "id": "toolu_1", "name": tool, "input": input }
        ],
        "stop_reason": "tool_use",
        "usage": { "input_tokens": 100, "output_tokens": 20 }
    })
}

/// A temporary crate directory with a niceeval.toml; its path is leaked as `&'static str` for
/// `EvalDefinition::manifest_dir`.
pub struct Crate {
    pub dir: tempfile::TempDir,
    pub manifest_dir: &'static str,
}

impl Crate {
    pub fn new(toml: &str) -> Crate {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("niceeval.toml"), toml).unwrap();
        let manifest_dir: &'static str =
            Box::leak(dir.path().to_str().unwrap().to_string().into_boxed_str());
        Crate { dir, manifest_dir }
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    #[cfg(feature = "providers")]
    /// Where the judge cache of this crate lives: `[judge] cache_dir` of its niceeval.toml,
    /// else the target directory's.
    pub fn cache_dir(&self) -> PathBuf {
        niceeval::__workspace::config::Config::from_file(&self.path().join("niceeval.toml"))
            .map(|config| {
                niceeval::__workspace::cache::ResponseCache::judge_dir(&config, self.path())
            })
            .unwrap_or_else(|_| {
                niceeval::__workspace::cache::ResponseCache::for_manifest_dir(self.path())
                    .dir()
                    .to_path_buf()
            })
    }

    #[cfg(feature = "providers")]
    /// Every file under the crate and its cache directory.
    pub fn files(&self) -> Vec<PathBuf> {
        let mut out = Vec::new();
        walk(self.path(), &mut out);
        let cache = self.cache_dir();
        if !cache.starts_with(self.path()) {
            walk(&cache, &mut out);
        }
        out
    }
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            walk(&path, out);
        } else {
            out.push(path);
        }
    }
}

/// An eval body, as `#[eval]` generates it.
pub type Body = for<'a> fn(
    &'a mut niceeval::Eval,
) -> niceeval::__private::BoxFuture<'a, Result<(), niceeval::Error>>;

/// A definition of an eval in `krate` (chain `.with_agent(..)`, `.with_judge_model(..)`).
pub fn define(
    name: &'static str,
    krate: &Crate,
    body: Body,
) -> niceeval::__private::EvalDefinition {
    niceeval::__private::EvalDefinition::new(
        name,
        "judge_tests",
        file!(),
        line!(),
        krate.manifest_dir,
        body,
    )
}

/// Runs a definition (leaked: `run_eval` takes `&'static`).
pub fn run(def: niceeval::__private::EvalDefinition) -> niceeval::EvalReport {
    niceeval::__workspace::run_eval(Box::leak(Box::new(def)))
}

/// A two-worker Tokio runtime for driving agents and evals from a plain `#[test]`.
pub fn rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

/// The longest [`time_out_once`] waits for an agent to reach the point its test needs: an upper
/// bound for a very slow machine, not a measure of anything.
pub const REACH_LIMIT: Duration = Duration::from_secs(180);

/// Runs `turn` — an agent's turn, which arms its timeout (`timeout`) as it starts — on a runtime
/// whose clock stands still until `reached()` says the agent got where the test needs it (a pid
/// file written, a model call seen; asked on a thread of its own every 20 ms, for at most
/// [`REACH_LIMIT`]). The timeout then fires at once, and from then on the clock runs as usual,
/// for what the timeout sets off (the kill's grace period, the wait for stderr). So on a loaded
/// machine the timeout cannot fire before the agent got there, and on an idle one the test does
/// not sit the timeout out. Returns what `turn` returned and when `reached()` came true (`None`:
/// not before the turn ended or the limit passed).
///
/// Only the timeout may use the clock before that point: every other timer of the turn would
/// stand still with it (the subprocess agents have none).
pub fn time_out_once<T>(
    reached: impl Fn() -> bool + Send + 'static,
    timeout: Duration,
    turn: impl std::future::Future<Output = T>,
) -> (T, Option<std::time::Instant>) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .start_paused(true)
        .build()
        .unwrap();
    runtime.block_on(async move {
        let start = tokio::time::Instant::now();
        let over = Arc::new(std::sync::atomic::AtomicBool::new(false));
        // A blocking task holds the paused clock where it is for as long as it runs (Tokio
        // does not advance a paused clock while one runs).
        let watch = {
            let over = over.clone();
            tokio::task::spawn_blocking(move || {
                let limit = std::time::Instant::now() + REACH_LIMIT;
                loop {
                    if reached() {
                        return Some(std::time::Instant::now());
                    }
                    if over.load(Ordering::SeqCst) || std::time::Instant::now() >= limit {
                        return None;
                    }
                    std::thread::sleep(Duration::from_millis(20));
                }
            })
        };
        let release = tokio::spawn(async move {
            let reached = watch.await.unwrap();
            // Nothing else to do: the clock jumps to the turn's deadline, and both fire.
            tokio::time::sleep_until(start + timeout).await;
            tokio::time::resume();
            reached
        });
        let output = turn.await;
        over.store(true, Ordering::SeqCst);
        (output, release.await.unwrap())
    })
}

/// An agent that always answers `text`.
pub fn says(text: &'static str) -> std::sync::Arc<dyn niceeval::agent::Agent> {
    std::sync::Arc::new(niceeval::agent::agent_fn(
        move |request: niceeval::agent::Request| async move {
            request.events.say(text);
            Ok(())
        },
    ))
}

/// Every file under `dir` (none when it does not exist).
pub fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    walk(dir, &mut out);
    out
}
pub mod fake_anthropic;

/// A directory for test files that must not be under the system's temporary directory — the
/// sandbox's private `/tmp` hides it, and Codex will not install its sandbox helper from a home
/// there — even when this checkout (and so `CARGO_TARGET_TMPDIR`) is under it: then a folder of
/// the user's cache directory.
pub fn outside_tmp() -> PathBuf {
    let target = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    if !target.starts_with(std::env::temp_dir()) && !target.starts_with("/tmp") {
        return target;
    }
    let home = std::env::var_os("HOME").map_or_else(|| PathBuf::from("/var/tmp"), PathBuf::from);
    let dir = home.join(".cache").join("niceeval-tests");
    std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    dir
}
