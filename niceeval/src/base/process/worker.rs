//! Long-lived helper programs spoken to in lines of JSON: one `node` (or `python3`) serves every
//! inline-code item of a run, instead of a process started, waited for and ended per item.
//!
//! A worker is started on its first request, once per [`WorkerSpec`] (program, arguments,
//! directory) for the whole process, through [`super::spawn`] like any other process: its own
//! group, the tree's marker, ended as a tree. Each request is one line on its stdin, a JSON
//! object with an `id` the worker copies into its reply; a reply is a line of stdout that
//! starts with [`MARK`] (anything else the program prints is ignored), so requests run
//! concurrently and their replies come in any order.
//!
//! The worker belongs to a thread of its own with its own runtime: an eval's runtime lives as
//! long as the eval, the worker as long as the process. When a request's time is up the worker
//! is ended as a whole tree (a loop that never returns blocks every request of a JavaScript
//! worker) and the requests it was still running are sent again to a new one; a worker that
//! ends by itself fails the requests it had, with its stderr's tail. When the process exits,
//! the worker's stdin closes and it ends.

use std::collections::HashMap;
use std::io;
use std::path::PathBuf;
use std::process::Stdio;
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

use serde_json::{Map, Value};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::{ChildStdin, Command};
use tokio::sync::{mpsc, oneshot};
use tokio::time::Instant;

use super::{Spawned, Stderr, finish};

/// What starts a line of a reply.
pub(crate) const MARK: &str = "__NICEEVAL_RESULT__";

/// How much of a worker's stderr is kept for the error of a worker that ended.
const STDERR_KEEP: usize = 8 * 1024;

/// What starts a worker: one runs per distinct spec for the whole process.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct WorkerSpec {
    /// The program (`node`, `python3`).
    pub(crate) program: String,
    /// Its arguments (the worker's script).
    pub(crate) args: Vec<String>,
    /// Its working directory.
    pub(crate) cwd: Option<PathBuf>,
}

impl WorkerSpec {
    /// A worker running `program` with `args` (its script) in `cwd`.
    pub fn new(program: impl Into<String>, args: Vec<String>, cwd: Option<PathBuf>) -> Self {
        WorkerSpec {
            program: program.into(),
            args,
            cwd,
        }
    }
}

/// Why a request got no reply.
#[derive(Debug, thiserror::Error)]
pub enum WorkerError {
    /// The program could not be started.
    #[error("cannot start `{program}`: {source}")]
    Start {
        /// The program.
        program: String,
        /// Why.
        source: io::Error,
    },
    /// The request's time ran out (the worker was ended).
    #[error("{program} timed out after {:.1}s", timeout.as_secs_f64())]
    TimedOut {
        /// The program.
        program: String,
        /// The request's time.
        timeout: Duration,
    },
    /// The worker ended before it replied.
    #[error("{program} ended (exit code {code}) without a result: {stderr}")]
    Ended {
        /// The program.
        program: String,
        /// Its exit code, or `none`.
        code: String,
        /// The end of its stderr.
        stderr: String,
    },
}

/// One request: its line, its time, where its reply goes.
struct Request {
    body: Map<String, Value>,
    timeout: Duration,
    reply: oneshot::Sender<Result<Value, WorkerError>>,
}

/// The workers of the process, by spec.
fn workers() -> &'static Mutex<HashMap<WorkerSpec, mpsc::UnboundedSender<Request>>> {
    static WORKERS: OnceLock<Mutex<HashMap<WorkerSpec, mpsc::UnboundedSender<Request>>>> =
        OnceLock::new();
    WORKERS.get_or_init(Default::default)
}

/// Sends `body` (a JSON object; its `id` is set here) to the worker of `spec` and waits for
/// its reply, at most `timeout`: the reply object as the worker wrote it.
pub(crate) async fn request(
    spec: &WorkerSpec,
    body: Map<String, Value>,
    timeout: Duration,
) -> Result<Value, WorkerError> {
    let (tx, rx) = oneshot::channel();
    let mut request = Request {
        body,
        timeout,
        reply: tx,
    };
    // A worker whose thread is gone (it could not start a runtime) is replaced once.
    for _ in 0..2 {
        let sender = {
            let mut map = workers().lock().unwrap_or_else(|p| p.into_inner());
            map.entry(spec.clone())
                .or_insert_with(|| serve(spec.clone()))
                .clone()
        };
        match sender.send(request) {
            Ok(()) => {
                return rx.await.unwrap_or_else(|_| {
                    Err(WorkerError::Ended {
                        program: spec.program.clone(),
                        code: "none".into(),
                        stderr: "the worker's thread ended".into(),
                    })
                });
            }
            Err(mpsc::error::SendError(back)) => {
                request = back;
                workers()
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .remove(spec);
            }
        }
    }
    Err(WorkerError::Start {
        program: spec.program.clone(),
        source: io::Error::other("the worker's thread could not start"),
    })
}

/// Sends `body` to the worker of `spec` and waits for its reply, at most `timeout`, from
/// synchronous code (an assertion, a suite file being read): waited for on the calling thread,
/// on a runtime of its own.
pub fn request_blocking(
    spec: &WorkerSpec,
    body: Map<String, Value>,
    timeout: Duration,
) -> Result<Value, WorkerError> {
    let run = || {
        std::thread::scope(|scope| {
            scope
                .spawn(|| {
                    tokio::runtime::Builder::new_current_thread()
                        .enable_all()
                        .build()
                        .map_err(|source| WorkerError::Start {
                            program: spec.program.clone(),
                            source,
                        })?
                        .block_on(request(spec, body, timeout))
                })
                .join()
                .unwrap_or_else(|_| {
                    Err(WorkerError::Start {
                        program: spec.program.clone(),
                        source: io::Error::other("the request's thread panicked"),
                    })
                })
        })
    };
    match tokio::runtime::Handle::try_current() {
        Ok(handle) if handle.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread => {
            tokio::task::block_in_place(run)
        }
        _ => run(),
    }
}

/// Starts the thread that owns the worker of `spec`; the sender of its requests.
fn serve(spec: WorkerSpec) -> mpsc::UnboundedSender<Request> {
    let (tx, rx) = mpsc::unbounded_channel();
    let name = format!("niceeval-worker-{}", spec.program);
    let _ = std::thread::Builder::new().name(name).spawn(move || {
        let Ok(runtime) = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
        else {
            return;
        };
        runtime.block_on(Serve::new(spec).run(rx));
    });
    tx
}

/// A running worker.
struct Live {
    spawned: Spawned,
    /// Lines for its stdin, written by a task of their own: a worker stuck in a loop stops
    /// reading, and the serving loop must still see the request's time run out.
    stdin: mpsc::UnboundedSender<String>,
}

/// A request sent and not answered yet.
struct Pending {
    request: Request,
    deadline: Instant,
    /// Sent again after a worker ended under it: the next end fails it.
    retried: bool,
}

struct Serve {
    spec: WorkerSpec,
    live: Option<Live>,
    pending: HashMap<u64, Pending>,
    next_id: u64,
    generation: u64,
    lines_tx: mpsc::UnboundedSender<(u64, Option<String>)>,
    lines_rx: mpsc::UnboundedReceiver<(u64, Option<String>)>,
}

impl Serve {
    fn new(spec: WorkerSpec) -> Serve {
        let (lines_tx, lines_rx) = mpsc::unbounded_channel();
        Serve {
            spec,
            live: None,
            pending: HashMap::new(),
            next_id: 0,
            generation: 0,
            lines_tx,
            lines_rx,
        }
    }

    /// Serves requests until their sender is dropped and every request sent has its answer.
    async fn run(mut self, mut requests: mpsc::UnboundedReceiver<Request>) {
        let mut open = true;
        loop {
            if !open && self.pending.is_empty() {
                break;
            }
            let deadline = self.pending.values().map(|p| p.deadline).min();
            tokio::select! {
                request = requests.recv(), if open => match request {
                    Some(request) => {
                        let id = self.next_id;
                        self.next_id += 1;
                        let deadline = Instant::now() + request.timeout;
                        self.send(
                            id,
                            Pending {
                                request,
                                deadline,
                                retried: false,
                            },
                        );
                    }
                    None => open = false,
                },
                Some((generation, line)) = self.lines_rx.recv() => {
                    if generation == self.generation {
                        match line {
                            Some(line) => self.reply(&line),
                            None => self.ended().await,
                        }
                    }
                }
                () = sleep_until(deadline), if deadline.is_some() => self.time_out().await,
            }
        }
        if let Some(mut live) = self.live.take() {
            live.spawned.tree.end().await;
        }
    }

    /// Writes the request to the worker (started first if none runs).
    fn send(&mut self, id: u64, pending: Pending) {
        if self.live.is_none() {
            match self.start() {
                Ok(live) => self.live = Some(live),
                Err(source) => {
                    let _ = pending.request.reply.send(Err(WorkerError::Start {
                        program: self.spec.program.clone(),
                        source,
                    }));
                    return;
                }
            }
        }
        let mut pending = pending;
        pending.request.body.insert("id".into(), id.into());
        let mut line = serde_json::to_string(&pending.request.body).unwrap_or_default();
        line.push('\n');
        self.pending.insert(id, pending);
        if let Some(live) = &self.live {
            // A worker whose stdin is closed has ended: the end of its stdout fails the request.
            let _ = live.stdin.send(line);
        }
    }

    fn start(&mut self) -> io::Result<Live> {
        let mut command = Command::new(&self.spec.program);
        command
            .args(&self.spec.args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped());
        if let Some(cwd) = &self.spec.cwd {
            command.current_dir(cwd);
        }
        let mut spawned = super::spawn_open_stdin(&mut command, Stderr::Tail(STDERR_KEEP))?;
        let mut pipe: ChildStdin = spawned
            .child
            .stdin
            .take()
            .ok_or_else(|| io::Error::other("the worker has no stdin"))?;
        let (stdin, mut lines_in) = mpsc::unbounded_channel::<String>();
        tokio::spawn(async move {
            while let Some(line) = lines_in.recv().await {
                if pipe.write_all(line.as_bytes()).await.is_err() {
                    return;
                }
            }
        });
        let stdout = spawned
            .child
            .stdout
            .take()
            .ok_or_else(|| io::Error::other("the worker has no stdout"))?;
        self.generation += 1;
        let generation = self.generation;
        let lines = self.lines_tx.clone();
        tokio::spawn(async move {
            let mut reader = BufReader::new(stdout).lines();
            while let Ok(Some(line)) = reader.next_line().await {
                if line.starts_with(MARK) && lines.send((generation, Some(line))).is_err() {
                    return;
                }
            }
            let _ = lines.send((generation, None));
        });
        Ok(Live { spawned, stdin })
    }

    /// A reply line: to its request.
    fn reply(&mut self, line: &str) {
        let Some(Ok(Value::Object(reply))) =
            line.strip_prefix(MARK).map(serde_json::from_str::<Value>)
        else {
            return;
        };
        let Some(id) = reply.get("id").and_then(Value::as_u64) else {
            return;
        };
        if let Some(pending) = self.pending.remove(&id) {
            let _ = pending.request.reply.send(Ok(Value::Object(reply)));
        }
    }

    /// The worker closed its stdout: it ended (or is ending). Every request it had fails.
    async fn ended(&mut self) {
        let Some(mut live) = self.live.take() else {
            return;
        };
        let status = tokio::time::timeout(Duration::from_secs(2), live.spawned.child.wait()).await;
        let code = match status {
            Ok(Ok(status)) => status.code().map_or_else(
                || format!("none{}", super::signal_note(&status)),
                |c| c.to_string(),
            ),
            _ => "none".into(),
        };
        let stderr = finish(&mut live.spawned.tree, live.spawned.stderr.take(), true).await;
        let stderr = super::tail(&stderr, 2000);
        // Any of them may have ended it. Each is sent once more, to a worker of its own that
        // serves it alone, so the one that ends a worker cannot end another request's second
        // try: it fails when its own worker ends under it too.
        let pending: Vec<(u64, Pending)> = self.pending.drain().collect();
        for (id, mut pending) in pending {
            if pending.retried {
                let _ = pending.request.reply.send(Err(WorkerError::Ended {
                    program: self.spec.program.clone(),
                    code: code.clone(),
                    stderr: stderr.clone(),
                }));
            } else {
                pending.retried = true;
                tokio::spawn(serve_alone(self.spec.clone(), id, pending));
            }
        }
    }

    /// Fails the requests whose time is up, ends the worker (it may be stuck in one of them)
    /// and sends the others again to a new one.
    async fn time_out(&mut self) {
        let now = Instant::now();
        let overdue: Vec<u64> = self
            .pending
            .iter()
            .filter(|(_, p)| p.deadline <= now)
            .map(|(id, _)| *id)
            .collect();
        if overdue.is_empty() {
            return;
        }
        for id in overdue {
            if let Some(pending) = self.pending.remove(&id) {
                let _ = pending.request.reply.send(Err(WorkerError::TimedOut {
                    program: self.spec.program.clone(),
                    timeout: pending.request.timeout,
                }));
            }
        }
        if let Some(mut live) = self.live.take() {
            live.spawned.tree.end().await;
        }
        // A later generation: the old worker's lines (and its end) are dropped.
        self.generation += 1;
        let again: Vec<(u64, Pending)> = self.pending.drain().collect();
        for (id, pending) in again {
            self.send(id, pending);
        }
    }
}

/// A worker of its own for one request, ended once it is answered. Boxed: it runs the serving
/// loop that starts it, and a future cannot contain its own type.
fn serve_alone(
    spec: WorkerSpec,
    id: u64,
    pending: Pending,
) -> std::pin::Pin<Box<dyn std::future::Future<Output = ()> + Send>> {
    Box::pin(async move {
        let mut alone = Serve::new(spec);
        alone.send(id, pending);
        let (_, closed) = mpsc::unbounded_channel();
        alone.run(closed).await;
    })
}

async fn sleep_until(deadline: Option<Instant>) {
    match deadline {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// A worker in Python: `{"sleep": s}` waits, `{"exit": c}` ends the process with its
    /// stderr saying so; every reply carries the worker's pid.
    const ECHO: &str = r#"
import json, os, sys, threading, time
lock = threading.Lock()
def handle(d):
    if 'exit' in d:
        sys.stderr.write('leaving now\n'); sys.stderr.flush(); os._exit(d['exit'])
    time.sleep(d.get('sleep', 0))
    print('noise')
    with lock:
        sys.stdout.write('\n__NICEEVAL_RESULT__' + json.dumps({'id': d['id'], 'pid': os.getpid(), 'echo': d.get('echo')}) + '\n')
        sys.stdout.flush()
for line in sys.stdin:
    threading.Thread(target=handle, args=(json.loads(line),)).start()
"#;

    fn spec(tag: &str) -> WorkerSpec {
        WorkerSpec {
            program: "python3".into(),
            // A tag of its own per test: each test gets its own worker.
            args: vec!["-c".into(), format!("{ECHO}\n# {tag}")],
            cwd: None,
        }
    }

    fn body(v: Value) -> Map<String, Value> {
        match v {
            Value::Object(m) => m,
            _ => Map::new(),
        }
    }

    fn have_python() -> bool {
        super::super::which("python3").is_some()
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn one_worker_answers_concurrent_requests_each_with_its_own_reply() {
        if !have_python() {
            return;
        }
        let spec = spec("concurrent");
        let calls = (0..24).map(|i| {
            let spec = spec.clone();
            tokio::spawn(async move {
                let sleep = if i % 3 == 0 { 0.05 } else { 0.0 };
                request(
                    &spec,
                    body(json!({"echo": i, "sleep": sleep})),
                    Duration::from_secs(20),
                )
                .await
            })
        });
        let mut pids = std::collections::BTreeSet::new();
        for (i, call) in calls.enumerate() {
            let reply = call.await.unwrap().unwrap();
            assert_eq!(reply["echo"], json!(i));
            pids.insert(reply["pid"].as_u64().unwrap());
        }
        assert_eq!(pids.len(), 1, "one process served them all: {pids:?}");
        // From synchronous code too, on a worker of the runtime.
        let reply = tokio::task::spawn_blocking(move || {
            request_blocking(
                &spec,
                body(json!({"echo": "sync"})),
                Duration::from_secs(20),
            )
        })
        .await
        .unwrap()
        .unwrap();
        assert_eq!(reply["echo"], "sync");
        assert!(pids.contains(&reply["pid"].as_u64().unwrap()));
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_timeout_ends_the_worker_and_the_others_are_sent_again() {
        if !have_python() {
            return;
        }
        let spec = spec("timeout");
        let first = request(&spec, body(json!({})), Duration::from_secs(20))
            .await
            .unwrap();
        let slow = {
            let spec = spec.clone();
            tokio::spawn(async move {
                request(
                    &spec,
                    body(json!({"sleep": 30})),
                    Duration::from_millis(300),
                )
                .await
            })
        };
        let innocent = {
            let spec = spec.clone();
            tokio::spawn(async move {
                request(
                    &spec,
                    // Long enough to be pending when the slow one's 300 ms run out, even if
                    // it reached the worker well before it (a loaded machine).
                    body(json!({"sleep": 3, "echo": "kept"})),
                    Duration::from_secs(20),
                )
                .await
            })
        };
        let err = slow.await.unwrap().unwrap_err();
        assert!(
            matches!(err, WorkerError::TimedOut { .. }) && err.to_string().contains("timed out"),
            "{err}"
        );
        let kept = innocent.await.unwrap().unwrap();
        assert_eq!(kept["echo"], "kept");
        assert_ne!(kept["pid"], first["pid"], "a new worker answered");
        // The ended worker is gone, as a tree.
        let old = first["pid"].as_u64().unwrap() as u32;
        assert!(crate::base::process::linux::stat(old).is_none_or(|s| s.state == 'Z'));
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_worker_that_ends_fails_its_requests_and_the_next_starts_another() {
        if !have_python() {
            return;
        }
        let spec = spec("exit");
        let err = request(&spec, body(json!({"exit": 3})), Duration::from_secs(20))
            .await
            .unwrap_err();
        let text = err.to_string();
        assert!(
            text.contains("exit code 3") && text.contains("leaving now"),
            "{text}"
        );
        let reply = request(&spec, body(json!({"echo": 1})), Duration::from_secs(20))
            .await
            .unwrap();
        assert_eq!(reply["echo"], 1);
    }

    /// Each request a dead worker had is tried again alone: the one that ends its worker fails
    /// (twice ended), the others are answered, however often it runs beside them.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_request_that_ends_its_worker_never_fails_another() {
        if !have_python() {
            return;
        }
        let spec = spec("isolate");
        for round in 0..3 {
            let innocent = request(
                &spec,
                body(json!({"sleep": 0.3, "echo": round})),
                Duration::from_secs(20),
            );
            let culprit = async {
                tokio::time::sleep(Duration::from_millis(50)).await;
                request(&spec, body(json!({"exit": 3})), Duration::from_secs(20)).await
            };
            let (innocent, culprit) = tokio::join!(innocent, culprit);
            assert_eq!(
                innocent.expect("the innocent request is answered")["echo"],
                round
            );
            let err = culprit.expect_err("the request that ends its worker fails");
            assert!(err.to_string().contains("exit code 3"), "{err}");
        }
    }

    #[tokio::test]
    async fn a_missing_program_is_an_error_naming_it() {
        let spec = WorkerSpec {
            program: "niceeval-no-such-program".into(),
            args: Vec::new(),
            cwd: None,
        };
        let err = request(&spec, Map::new(), Duration::from_secs(5))
            .await
            .unwrap_err();
        assert!(
            matches!(&err, WorkerError::Start { source, .. } if source.kind() == io::ErrorKind::NotFound),
            "{err}"
        );
    }
}
