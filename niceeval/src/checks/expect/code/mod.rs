//! Inline code assertions as in promptfoo: [`javascript`] (run with `node`) and [`python`] (run
//! with `python3`) — an expression, a function body, or `file://path[:function]`.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{Map, Value, json};

use crate::base::assertion::{Assertion, Grade, Subject};
use crate::base::excerpt;
use crate::base::process::Job;
use crate::base::process::worker::WorkerError;
use crate::checks::expect::script::spawn_error;
use runner::{Call, CallError, Target};

mod js_body;
mod result;
pub mod runner;

pub(crate) use result::Rules;
use result::grade_from_value;

/// Default time a code assertion may run.
pub const DEFAULT_CODE_TIMEOUT: Duration = Duration::from_secs(30);

/// Which interpreter runs a [`CodeAssertion`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Language {
    /// JavaScript, run with `node`.
    JavaScript,
    /// Python, run with `python3`.
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
        let target = match self.file() {
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
                Target::File { path, function }
            }
            None => {
                let (body, expr) = self.body();
                Target::Inline { body, expr }
            }
        };
        let call = Call {
            language: self.language,
            target,
            names: vec!["output".into(), "context".into()],
            args: vec![Self::output_value(value), Value::Object(context)],
            python_function: match self.file() {
                Some(_) => "get_assert".into(),
                None => "__niceeval_assert".into(),
            },
            grading: true,
            cwd: self.base_dir.clone(),
            timeout: self.timeout,
        };
        let program = call.program();
        match call.run_blocking() {
            Ok(result) => grade_from_value(&result, self.language, self.rules),
            Err(CallError::Threw { message, .. }) => {
                Grade::fail(format!("the assertion threw: {message}")).with_verdict(false)
            }
            Err(CallError::Worker(WorkerError::Start { source, .. })) => {
                let job = Job {
                    program: program.to_string(),
                    args: Vec::new(),
                    stdin: Vec::new(),
                    cwd: self.base_dir.clone(),
                    env: Vec::new(),
                    timeout: self.timeout,
                };
                Grade::error(spawn_error(&job, &source))
            }
            Err(CallError::Worker(e)) => Grade::error(e.to_string()),
        }
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
