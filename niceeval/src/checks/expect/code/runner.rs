//! Code calls through the run's long-lived workers (`crate::base::process::worker`): one `node`
//! and one `python3` per directory serve every `javascript` / `python` item, transform and
//! prompt function of the run. A call is inline code (a function body, or an expression tried
//! first) or a function of a file (`.js`, `.cjs`, `.mjs`, `.py`), given named arguments.
//!
//! The workers run the calls concurrently (JavaScript's promises; Python threads), cache the
//! modules they load, and send what the code prints with `console.log` / `print` to their
//! stderr: their stdout carries only replies.

use std::path::PathBuf;
use std::time::Duration;

use serde_json::{Map, Value};

use super::Language;
use crate::base::process::worker::{self, WorkerError, WorkerSpec};

const NODE_WORKER: &str = r#"
const readline = require('readline');
const url = require('url');
const MARK = '__NICEEVAL_RESULT__';
const out = process.stdout.write.bind(process.stdout);
const emit = (text) => out('\n' + MARK + text + '\n');
// What the code prints goes to stderr: stdout carries the replies.
for (const k of ['log', 'info', 'debug']) console[k] = (...a) => console.error(...a);
process.on('uncaughtException', (e) => console.error('uncaught:', e));
process.on('unhandledRejection', (e) => console.error('unhandled rejection:', e));
const AsyncFunction = Object.getPrototypeOf(async function () {}).constructor;
async function load(file) {
  if (file.endsWith('.mjs')) return import(url.pathToFileURL(file).href);
  try {
    return require(file);
  } catch (e) {
    if (e && (e.code === 'ERR_REQUIRE_ESM' || e.code === 'ERR_REQUIRE_ASYNC_MODULE')) {
      return import(url.pathToFileURL(file).href);
    }
    throw e;
  }
}
async function target(d) {
  if (d.file) {
    const mod = await load(d.file);
    let fn;
    if (d.function) {
      fn = mod[d.function] ?? (mod.default ? mod.default[d.function] : undefined);
      if (typeof fn !== 'function') throw new Error(`${d.file} exports no function ${d.function}`);
    } else {
      fn = typeof mod === 'function' ? mod : (typeof mod.default === 'function' ? mod.default : undefined);
      if (typeof fn !== 'function') throw new Error(`${d.file} has no default export function; export one or name it with file://path:function`);
    }
    return fn;
  }
  if (d.expr) {
    try { return new AsyncFunction(...d.names, d.expr); } catch (e) { if (!(e instanceof SyntaxError)) throw e; }
  }
  return new AsyncFunction(...d.names, d.body);
}
async function handle(d) {
  try {
    const fn = await target(d);
    const result = await fn(...d.args);
    if (d.grading && typeof result === 'number' && !Number.isFinite(result)) {
      throw new Error(`the code returned ${result}, not a finite number`);
    }
    const text = JSON.stringify(result === undefined ? null : result, (key, v) => {
      if (d.grading && key === 'score' && typeof v === 'number' && !Number.isFinite(v)) {
        throw new Error(`a grading result has the score ${v}, not a finite number`);
      }
      return v;
    });
    emit('{"id":' + d.id + ',"ok":true,"result":' + text + '}');
  } catch (e) {
    const head = String((e && e.stack) || e).split('\n')[0];
    emit(JSON.stringify({ id: d.id, ok: false, error: e instanceof Error ? e.message : String(e), head }));
  }
}
readline.createInterface({ input: process.stdin, crlfDelay: Infinity }).on('line', (line) => {
  let d;
  try { d = JSON.parse(line); } catch (e) { return; }
  handle(d);
});
"#;

const PYTHON_WORKER: &str = r#"
import asyncio, concurrent.futures, importlib.util, inspect, json, os, sys, tempfile, threading
MARK = '__NICEEVAL_RESULT__'
out = sys.stdout
# What the code prints goes to stderr: stdout carries the replies.
sys.stdout = sys.stderr
lock = threading.Lock()
modules = {}
def emit(o):
    text = '\n' + MARK + json.dumps(o, default=str) + '\n'
    with lock:
        out.write(text)
        out.flush()
def load(path):
    with lock:
        mod = modules.get(path)
        if mod is not None:
            return mod
        folder = os.path.dirname(os.path.abspath(path))
        if folder not in sys.path:
            sys.path.insert(0, folder)
        spec = importlib.util.spec_from_file_location('niceeval_code_%d' % len(modules), path)
        if spec is None or spec.loader is None:
            raise ImportError('cannot load ' + path)
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        modules[path] = mod
        return mod
def target(d):
    if d.get('file'):
        path = d['file']
        name = d.get('function') or d.get('default_function')
        fn = getattr(load(path), name, None)
        if not callable(fn):
            raise AttributeError(path + ' has no function ' + str(name))
        return fn
    # Inline code runs as if from a file, as promptfoo runs it (a temporary file): it has a
    # `__file__`, in the temporary folder.
    ns = {'__file__': os.path.join(tempfile.gettempdir(), 'niceeval-inline-code.py'), '__name__': '__niceeval_inline__'}
    code = None
    if d.get('expr'):
        try:
            code = compile(d['expr'], '<code>', 'exec')
        except SyntaxError:
            code = None
    if code is None:
        code = compile(d['body'], '<code>', 'exec')
    exec(code, ns)
    return ns[d['name']]
def handle(d):
    try:
        result = target(d)(*d['args'])
        if inspect.isawaitable(result):
            result = asyncio.run(result)
        emit({'id': d['id'], 'ok': True, 'result': result})
    except BaseException as e:
        text = type(e).__name__ + ': ' + str(e)
        emit({'id': d['id'], 'ok': False, 'error': text, 'head': text})
pool = concurrent.futures.ThreadPoolExecutor(max_workers=16)
for line in sys.stdin:
    try:
        d = json.loads(line)
    except ValueError:
        continue
    pool.submit(handle, d)
pool.shutdown(wait=True)
"#;

/// What to call.
#[derive(Debug, Clone)]
pub enum Target {
    /// Inline code: a function body (JavaScript: of an async function taking the arguments'
    /// names; Python: source defining the function `name`), and an expression form tried
    /// first when it compiles.
    Inline {
        /// The function's body (JavaScript) or the source defining it (Python).
        body: String,
        /// An expression form, tried first when it compiles.
        expr: Option<String>,
    },
    /// A function of a file: the named one, else (JavaScript) the default export or
    /// (Python) `default_function`.
    File {
        /// The file.
        path: PathBuf,
        /// The function's name, if one is named.
        function: Option<String>,
    },
}

/// One call of code.
#[derive(Debug, Clone)]
pub struct Call {
    /// The interpreter.
    pub language: Language,
    /// What to call.
    pub target: Target,
    /// The arguments' names (JavaScript inline code).
    pub names: Vec<String>,
    /// The arguments' values.
    pub args: Vec<Value>,
    /// Python: the function inline code defines; or a file's function when none is named.
    pub python_function: String,
    /// A grading result: a non-finite score is an error, as promptfoo's.
    pub grading: bool,
    /// The worker's directory.
    pub cwd: Option<PathBuf>,
    /// How long the call may take.
    pub timeout: Duration,
}

/// How a call went wrong.
#[derive(Debug, thiserror::Error)]
pub enum CallError {
    /// The code threw (JavaScript) or raised (Python): the message, and the first line of the
    /// stack (`TypeError: …`; Python `Type: message` both).
    #[error("{message}")]
    Threw {
        /// The error's message.
        message: String,
        /// The first line of its stack.
        head: String,
    },
    /// The worker could not run it.
    #[error(transparent)]
    Worker(#[from] WorkerError),
}

impl Call {
    /// The program that runs it.
    /// The interpreter's program (`node`, `python3`).
    pub fn program(&self) -> &'static str {
        match self.language {
            Language::JavaScript => "node",
            Language::Python => "python3",
        }
    }

    fn spec(&self) -> WorkerSpec {
        let (flag, script) = match self.language {
            Language::JavaScript => ("-e", NODE_WORKER),
            Language::Python => ("-c", PYTHON_WORKER),
        };
        WorkerSpec {
            program: self.program().to_string(),
            args: vec![flag.to_string(), script.to_string()],
            cwd: self.cwd.clone(),
        }
    }

    fn body(&self) -> Map<String, Value> {
        let mut body = Map::new();
        match &self.target {
            Target::Inline { body: code, expr } => {
                body.insert("body".into(), code.clone().into());
                body.insert(
                    "expr".into(),
                    expr.clone().map_or(Value::Null, Value::String),
                );
            }
            Target::File { path, function } => {
                body.insert("file".into(), path.to_string_lossy().into_owned().into());
                body.insert(
                    "function".into(),
                    function.clone().map_or(Value::Null, Value::String),
                );
            }
        }
        body.insert("names".into(), self.names.clone().into());
        body.insert("args".into(), Value::Array(self.args.clone()));
        body.insert("name".into(), self.python_function.clone().into());
        body.insert(
            "default_function".into(),
            self.python_function.clone().into(),
        );
        body.insert("grading".into(), self.grading.into());
        body
    }

    /// The value the code returned (`null` for `undefined` / `None`).
    pub async fn run(&self) -> Result<Value, CallError> {
        let reply = worker::request(&self.spec(), self.body(), self.timeout).await?;
        read(reply)
    }

    /// [`Call::run`] from synchronous code.
    pub(crate) fn run_blocking(&self) -> Result<Value, CallError> {
        let reply = worker::request_blocking(&self.spec(), self.body(), self.timeout)?;
        read(reply)
    }
}

fn read(mut reply: Value) -> Result<Value, CallError> {
    if reply.get("ok") == Some(&Value::Bool(true)) {
        return Ok(reply
            .get_mut("result")
            .map(Value::take)
            .unwrap_or(Value::Null));
    }
    let text = |k: &str| {
        reply
            .get(k)
            .and_then(Value::as_str)
            .unwrap_or("unknown error")
            .to_string()
    };
    Err(CallError::Threw {
        message: text("error"),
        head: text("head"),
    })
}
