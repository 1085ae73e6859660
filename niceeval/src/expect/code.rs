//! Inline code assertions as in promptfoo: [`javascript`] (run with `node`) and [`python`] (run
//! with `python3`) — an expression, a function body, or `file://path[:function]`.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{Map, Value, json};

use crate::assertion::{Assertion, Grade, Subject};
use crate::excerpt;
use crate::expect::script::spawn_error;
use crate::process::{Job, tail};

mod js_body;
mod result;

pub(crate) use result::Rules;
use result::grade_from_value;

/// Default time a code assertion may run.
pub const DEFAULT_CODE_TIMEOUT: Duration = Duration::from_secs(30);

const MARK: &str = "__NICEEVAL_RESULT__";

const NODE_RUNNER: &str = r#"
const fs = require('fs');
const url = require('url');
const MARK = '__NICEEVAL_RESULT__';
const emit = (o) => process.stdout.write('\n' + MARK + JSON.stringify(o) + '\n');
(async () => {
  const data = JSON.parse(fs.readFileSync(0, 'utf8'));
  try {
    let fn;
    if (data.file) {
      let mod;
      if (data.file.endsWith('.mjs')) {
        mod = await import(url.pathToFileURL(data.file).href);
      } else {
        mod = require(data.file);
      }
      if (data.function) {
        fn = mod[data.function] ?? (mod.default ? mod.default[data.function] : undefined);
        if (typeof fn !== 'function') throw new Error(`${data.file} exports no function ${data.function}`);
      } else {
        fn = typeof mod === 'function' ? mod : (typeof mod.default === 'function' ? mod.default : undefined);
        if (typeof fn !== 'function') throw new Error(`${data.file} has no default export function; export one or name it with file://path:function`);
      }
    } else {
      const AsyncFunction = Object.getPrototypeOf(async function () {}).constructor;
      if (data.expr) {
        try { fn = new AsyncFunction('output', 'context', data.expr); } catch (e) { if (!(e instanceof SyntaxError)) throw e; }
      }
      if (!fn) fn = new AsyncFunction('output', 'context', data.body);
    }
    const result = await fn(data.output, data.context);
    if (typeof result === 'number' && !Number.isFinite(result)) {
      throw new Error(`the code returned ${result}, not a finite number`);
    }
    const text = JSON.stringify(result === undefined ? null : result, (key, v) => {
      if (key === 'score' && typeof v === 'number' && !Number.isFinite(v)) {
        throw new Error(`a grading result has the score ${v}, not a finite number`);
      }
      return v;
    });
    process.stdout.write('\n' + MARK + '{"ok":true,"result":' + text + '}\n');
  } catch (e) {
    emit({ ok: false, error: e instanceof Error ? e.message : String(e) });
  }
})().catch((e) => emit({ ok: false, error: String(e) }));
"#;

const PYTHON_RUNNER: &str = r#"
import asyncio, importlib.util, inspect, json, os, sys
MARK = '__NICEEVAL_RESULT__'
def emit(o):
    sys.stdout.write('\n' + MARK + json.dumps(o, default=str) + '\n')
    sys.stdout.flush()
data = json.load(sys.stdin)
try:
    if data.get('file'):
        path = data['file']
        sys.path.insert(0, os.path.dirname(os.path.abspath(path)))
        spec = importlib.util.spec_from_file_location('niceeval_assertion', path)
        if spec is None or spec.loader is None:
            raise ImportError('cannot load ' + path)
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        name = data.get('function') or 'get_assert'
        fn = getattr(mod, name, None)
        if not callable(fn):
            raise AttributeError(path + ' has no function ' + name)
    else:
        ns = {}
        code = None
        if data.get('expr'):
            try:
                code = compile(data['expr'], '<assertion>', 'exec')
            except SyntaxError:
                code = None
        if code is None:
            code = compile(data['body'], '<assertion>', 'exec')
        exec(code, ns)
        fn = ns['__niceeval_assert']
    result = fn(data['output'], data['context'])
    if inspect.isawaitable(result):
        result = asyncio.run(result)
    emit({'ok': True, 'result': result})
except BaseException as e:
    emit({'ok': False, 'error': type(e).__name__ + ': ' + str(e)})
"#;

/// Which interpreter runs a [`CodeAssertion`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Language {
    JavaScript,
    Python,
}

/// The assertion returned by [`javascript`] and [`python`].
#[derive(Debug, Clone)]
pub struct CodeAssertion {
    language: Language,
    code: String,
    context: Map<String, Value>,
    base_dir: Option<PathBuf>,
    timeout: Duration,
    rules: Rules,
}

/// A JavaScript assertion, run with `node` (which must be on `PATH`).
///
/// `code` is one of:
/// - one line, built into a function body as promptfoo does: trailing `;` dropped, then an
///   expression is returned (`output.includes('Hello')`), and a line that starts with
///   `const`/`let`/`var` returns what follows its last top-level `;`
///   (`let x = JSON.parse(output); x.a === 1`); a line that is not an expression
///   (`if (output.length > 10) return true; return 0.5;`) runs as written;
/// - several lines: a function body, run as written (it needs `return`);
/// - `file://path.js` (its default export, `module.exports = (output, context) => ..`) or
///   `file://path.js:name` (a named export); `.mjs` files are ES modules. Relative paths are
///   from the spec file's directory, else the current directory.
///
/// It receives `output` (the checked text; a checked JSON value arrives parsed) and `context`
/// (`vars`, `prompt`, `config`), may be `async`, and returns:
/// - a boolean: pass or fail;
/// - a finite number: the score (clamped to [0, 1] for the record); it passes when > 0, or
///   at ≥ the threshold when one is set;
/// - a grading result `{pass, score, reason}` (all three required, as promptfoo's); its
///   `pass` decides unless `.at_least(x)` judges the score; `componentResults` (whose items may
///   omit `score` and `reason`) become children.
///
/// A thrown error fails the assertion with its message. No result, a result of another type
/// (an object without `pass`, `score` and `reason`, a string, a non-finite number), a missing
/// `node`, a crash and a timeout (30 s unless set) are execution errors. What the code prints
/// with `console.log` is ignored.
///
/// As data (`type: javascript`), promptfoo's rules apply: `threshold` judges a returned number
/// only (a grading result keeps its own `pass`), and `not-` flips the verdict but keeps the
/// returned score.
///
/// ```no_run
/// use niceeval::prelude::*;
///
/// let t = Eval::detached(None);
/// t.check("Hello, World!", javascript("output.includes('Hello')"));
/// t.check("Hello", javascript("return output.length / 10;").at_least(0.5));
/// ```
pub fn javascript(code: impl Into<String>) -> CodeAssertion {
    CodeAssertion::new(Language::JavaScript, code.into())
}

/// A Python assertion, run with `python3` (which must be on `PATH`). Like [`javascript`]:
/// an expression (`'hello' in output.lower()`), a function body (several lines, or one line
/// that is not an expression; indentation is normalized), or `file://path.py[:function]` where the function
/// defaults to `get_assert(output, context)`. A returned dict may spell the verdict `pass` or
/// `pass_`. As in promptfoo, the strings `"true"`/`"false"` (any case), a numeric string
/// (`"0.8"`, read like `parseFloat`) and a JSON object as text are accepted too. A raised
/// exception fails the assertion with `Type: message`. As data (`type: python`), a grading
/// result whose score is below `threshold` fails, whatever its `pass`.
///
/// ```no_run
/// use niceeval::prelude::*;
///
/// let t = Eval::detached(None);
/// t.check("Hello, World!", python("'world' in output.lower()"));
/// t.check("Hello", python("file://asserts/tone.py:check_tone"));
/// ```
pub fn python(code: impl Into<String>) -> CodeAssertion {
    CodeAssertion::new(Language::Python, code.into())
}

impl CodeAssertion {
    fn new(language: Language, code: String) -> Self {
        CodeAssertion {
            language,
            code,
            context: Map::new(),
            base_dir: None,
            timeout: DEFAULT_CODE_TIMEOUT,
            rules: Rules::default(),
        }
    }

    /// `context.vars`.
    pub fn vars(mut self, vars: Value) -> Self {
        self.context.insert("vars".into(), vars);
        self
    }

    /// `context.prompt`.
    pub fn prompt(mut self, prompt: impl Into<String>) -> Self {
        self.context
            .insert("prompt".into(), Value::String(prompt.into()));
        self
    }

    /// `context.config`.
    pub fn config(mut self, config: Value) -> Self {
        self.context.insert("config".into(), config);
        self
    }

    /// The directory `file://` paths are relative to (and the code runs in).
    pub fn base_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.base_dir = Some(dir.into());
        self
    }

    /// The longest the code may run (default 30 s).
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// promptfoo's threshold and `not-` for assertions as data (see [`Rules`]).
    pub(crate) fn rules(mut self, rules: Rules) -> Self {
        self.rules = rules;
        self
    }

    /// `(path, function)` of a `file://` reference.
    fn file(&self) -> Option<(PathBuf, Option<String>)> {
        let rest = self.code.trim().strip_prefix("file://")?;
        let ext_end = [".js", ".cjs", ".mjs", ".ts", ".py"]
            .iter()
            .filter_map(|ext| rest.find(&format!("{ext}:")).map(|i| i + ext.len()))
            .min();
        let (path, function) = match ext_end {
            Some(i) => (&rest[..i], Some(rest[i + 1..].to_string())),
            None => (rest, None),
        };
        let path = Path::new(path);
        let path = match (&self.base_dir, path.is_absolute()) {
            (Some(base), false) => base.join(path),
            _ => path.to_path_buf(),
        };
        Some((path, function.filter(|f| !f.is_empty())))
    }

    /// The code as a function body, and (for one line) as an expression to return, which the
    /// runner tries first.
    fn body(&self) -> (String, Option<String>) {
        let code = self.code.trim_end();
        let one_line = !code.contains('\n');
        match self.language {
            Language::JavaScript => (
                code.to_string(),
                one_line.then(|| js_body::one_line_body(code)).flatten(),
            ),
            Language::Python => {
                let wrap = |body: &str| {
                    let indented: Vec<String> = body.lines().map(|l| format!("    {l}")).collect();
                    format!(
                        "def __niceeval_assert(output, context):\n{}\n",
                        indented.join("\n")
                    )
                };
                (
                    wrap(&dedent(code)),
                    one_line.then(|| wrap(&format!("return ({}\n)", code.trim()))),
                )
            }
        }
    }

    fn output_value(value: &Subject<'_>) -> Value {
        match value {
            Subject::Text(t) => Value::String(t.to_string()),
            Subject::Json(v) => v.as_ref().clone(),
            Subject::Missing => Value::Null,
        }
    }
}

/// Removes the common leading whitespace of non-blank lines.
fn dedent(code: &str) -> String {
    let indent = code
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| l.len() - l.trim_start().len())
        .min()
        .unwrap_or(0);
    code.lines()
        .map(|l| {
            if l.len() >= indent {
                &l[indent..]
            } else {
                l.trim_start()
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

impl Assertion for CodeAssertion {
    fn describe(&self) -> String {
        let name = match self.language {
            Language::JavaScript => "javascript",
            Language::Python => "python",
        };
        let code = self.code.split_whitespace().collect::<Vec<_>>().join(" ");
        format!("{name}({})", excerpt::elide(&code, 80))
    }

    fn evaluate(&self, value: &Subject<'_>) -> Grade {
        let mut context = self.context.clone();
        for key in ["vars", "config"] {
            context.entry(key).or_insert_with(|| json!({}));
        }
        context.entry("prompt").or_insert(Value::Null);
        let mut payload = json!({
            "output": Self::output_value(value),
            "context": Value::Object(context),
        });
        match self.file() {
            Some((path, function)) => {
                if !path.exists() {
                    return Grade::error(format!(
                        "{} does not exist (relative paths are from {})",
                        path.display(),
                        self.base_dir
                            .clone()
                            .or_else(|| std::env::current_dir().ok())
                            .map(|d| d.display().to_string())
                            .unwrap_or_default()
                    ));
                }
                let path = path.canonicalize().unwrap_or(path);
                payload["file"] = Value::String(path.to_string_lossy().into_owned());
                payload["function"] = function.map_or(Value::Null, Value::String);
            }
            None => {
                let (body, expr) = self.body();
                payload["body"] = Value::String(body);
                payload["expr"] = expr.map_or(Value::Null, Value::String);
            }
        }
        let (program, args) = match self.language {
            Language::JavaScript => ("node", vec!["-e".to_string(), NODE_RUNNER.to_string()]),
            Language::Python => ("python3", vec!["-c".to_string(), PYTHON_RUNNER.to_string()]),
        };
        let job = Job {
            program: program.to_string(),
            args,
            stdin: payload.to_string().into_bytes(),
            cwd: self.base_dir.clone(),
            env: Vec::new(),
            timeout: self.timeout,
        };
        let finished = match job.run() {
            Ok(f) => f,
            Err(e) => {
                return Grade::error(
                    spawn_error(&job, &e)
                        .replace(&format!("`{}`", job.display()), &format!("`{program}`")),
                );
            }
        };
        if finished.timed_out {
            return Grade::error(format!(
                "{program} timed out after {:.1}s",
                self.timeout.as_secs_f64()
            ));
        }
        let Some(line) = finished
            .stdout
            .lines()
            .rev()
            .find_map(|l| l.strip_prefix(MARK))
        else {
            return Grade::error(format!(
                "{program} ended (exit code {}) without a result: {}",
                finished.code.map_or("none".to_string(), |c| c.to_string()),
                tail(&finished.stderr, 2000)
            ));
        };
        let reply: Value = match serde_json::from_str(line) {
            Ok(v) => v,
            Err(e) => return Grade::error(format!("unreadable result from {program}: {e}")),
        };
        if reply.get("ok") != Some(&Value::Bool(true)) {
            let error = reply
                .get("error")
                .and_then(Value::as_str)
                .unwrap_or("unknown error");
            return Grade::fail(format!("the assertion threw: {error}")).with_verdict(false);
        }
        grade_from_value(
            reply.get("result").unwrap_or(&Value::Null),
            self.language,
            self.rules,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_references_split_the_function() {
        let a = javascript("file://asserts/check.js:custom").base_dir("/base");
        assert_eq!(
            a.file(),
            Some((
                PathBuf::from("/base/asserts/check.js"),
                Some("custom".into())
            ))
        );
        let a = python("file:///abs/x.py");
        assert_eq!(a.file(), Some((PathBuf::from("/abs/x.py"), None)));
        assert_eq!(python("1 == 1").file(), None);
    }

    #[test]
    fn bodies() {
        assert_eq!(
            javascript("output.length").body(),
            (
                "output.length".to_string(),
                Some("return output.length".to_string())
            )
        );
        assert_eq!(javascript("a;\nreturn 1;").body().1, None);
        assert_eq!(
            python("  if x:\n      return 1\n  return 0").body().0,
            "def __niceeval_assert(output, context):\n    if x:\n        return 1\n    return 0\n"
        );
    }
}
