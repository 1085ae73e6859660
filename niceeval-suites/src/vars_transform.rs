//! promptfoo's `transformVars` (a test's or `defaultTest`'s `options.transformVars`):
//! JavaScript that makes more vars of a test's vars, merged over them before the prompt is
//! rendered. It runs while the file is read (the vars it makes render the prompt and the
//! items), in one Node.js process per file, started on first use and stopped when the file
//! is read: the asynchronous code worker the cases use belongs to the run, which has not
//! started yet.
//!
//! The code is inline JavaScript (an expression, or a body with `return` when it spans
//! lines) with `vars` and `context` in scope, or `file://path.js[:function]` relative to the
//! config, called with `(vars, context)` — promptfoo's forms.
//!
//! A var whose value is `file://x.js` (`.cjs`, `.mjs`) or `file://x.py` is computed by code
//! too, as promptfoo computes it: the JavaScript module's function called with `(varName,
//! prompt, vars, provider)`, the Python file's `get_var(var_name, prompt, other_vars)`, each
//! returning `{output}` (or `{error}`); the var is the output (Python's trimmed).

use std::path::{Path, PathBuf};
use std::process::Stdio;

use serde_json::{Map, Value, json};

/// Why a test's vars could not be transformed.
#[derive(Debug, thiserror::Error)]
pub(crate) enum VarsTransformError {
    /// Node.js could not be started, or its process ended or ran out of time (then it was
    /// ended with its whole process tree).
    #[error("transformVars in Node.js: {0} (is Node.js installed?)")]
    Worker(#[source] niceeval::__workspace::process::WorkerError),
    /// A request that is not an object (a bug here).
    #[error("the Node.js process running transformVars stopped answering: {0}")]
    Lost(String),
    /// The code threw, or made no object.
    #[error("{0}")]
    Code(String),
    /// A Python file (promptfoo runs those too; niceeval runs JavaScript here).
    #[error("transformVars in Python ({0}) is not supported; write it in JavaScript")]
    Python(String),
    /// `python3` could not run a var's file.
    #[error("cannot run `python3` for {file} ({source}); install Python 3")]
    NoPython {
        /// The var's file.
        file: String,
        /// Why it could not start.
        #[source]
        source: std::io::Error,
    },
}

/// The Node.js side: one request a line (`{id, code, file, function, vars}`), one answer a line
/// (niceeval's worker protocol: the marker, then `{id, ok, …}`).
const SCRIPT: &str = r#"
const readline = require('readline');
const MARK = '__NICEEVAL_RESULT__';
const reply = (d, o) => process.stdout.write('\n' + MARK + JSON.stringify(Object.assign({ id: d.id }, o)) + '\n');
const { pathToFileURL } = require('url');
const rl = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
const queue = [];
let busy = false;
async function handle(d) {
  try {
    let fn;
    if (d.var) {
      const mod = await import(pathToFileURL(d.file).href);
      const fn = typeof mod.default === 'function' ? mod.default : mod;
      if (typeof fn !== 'function') throw new Error(`${d.file} exports no function`);
      const made = await fn(d.var, d.prompt, d.vars, d.provider);
      if (made && made.error) throw new Error(`Error running ${d.file}: ${made.error}`);
      if (!made || !made.output) throw new Error(`Expected ${d.file} to return { output: string }`);
      reply(d, { ok: true, output: made.output });
      return;
    }
    if (d.file) {
      const mod = await import(pathToFileURL(d.file).href);
      fn = d.function ? (mod[d.function] ?? (mod.default ? mod.default[d.function] : undefined))
                      : (typeof mod.default === 'function' ? mod.default : mod);
      if (typeof fn !== 'function') throw new Error(`${d.file} exports no function ${d.function || 'as its default'}`);
    } else {
      const body = d.code.includes('\n') ? d.code : `return ${d.code}`;
      fn = new Function('vars', 'context', body);
    }
    const made = await fn(d.vars, { prompt: {}, uuid: require('crypto').randomUUID() });
    if (made === null || typeof made !== 'object' || Array.isArray(made)) {
      throw new Error('Transform function did not return a valid object');
    }
    reply(d, { ok: true, vars: made });
  } catch (e) {
    reply(d, { ok: false, error: String((e && e.message) || e) });
  }
}
async function drain() {
  if (busy) return;
  busy = true;
  while (queue.length) await handle(queue.shift());
  busy = false;
}
rl.on('line', (line) => { queue.push(JSON.parse(line)); drain(); });
"#;

/// How long one `transformVars` call may take before its Node.js process is ended.
const CALL_TIME: std::time::Duration = std::time::Duration::from_secs(60);

/// The `transformVars` code of one file: run in niceeval's Node.js worker for the file's
/// directory (started on first use, ended as a process tree when a call's time is up and when
/// niceeval ends, SIGKILL included).
pub(crate) struct VarsTransformer {
    base: PathBuf,
}

impl VarsTransformer {
    /// A transformer for a file whose `file://` references start at `base`.
    pub(crate) fn new(base: &Path) -> Self {
        VarsTransformer {
            base: base.to_path_buf(),
        }
    }

    /// `vars` with what `code` makes of them merged over them.
    pub(crate) fn apply(
        &mut self,
        code: &str,
        vars: &Map<String, Value>,
    ) -> Result<Map<String, Value>, VarsTransformError> {
        let mut request = json!({ "vars": vars });
        match code.trim().strip_prefix("file://") {
            Some(reference) => {
                let (file, function) = match reference.rsplit_once(':') {
                    Some((f, name))
                        if f.ends_with(".js") || f.ends_with(".mjs") || f.ends_with(".cjs") =>
                    {
                        (f, Some(name))
                    }
                    _ => (reference, None),
                };
                if file.ends_with(".py") {
                    return Err(VarsTransformError::Python(code.to_string()));
                }
                request["file"] = Value::String(self.base.join(file).display().to_string());
                if let Some(name) = function {
                    request["function"] = Value::String(name.to_string());
                }
            }
            None => request["code"] = Value::String(code.to_string()),
        }
        let answer = self.ask(&request)?;
        if answer["ok"] != Value::Bool(true) {
            return Err(VarsTransformError::Code(
                answer["error"].as_str().unwrap_or("it failed").to_string(),
            ));
        }
        let mut merged = vars.clone();
        if let Value::Object(made) = &answer["vars"] {
            merged.extend(made.clone());
        }
        Ok(merged)
    }

    /// The value of var `name` written `file://<reference>` (a JavaScript or Python file,
    /// relative to the config), computed with the prompt's template, the test's vars and the
    /// provider's id.
    pub(crate) fn var(
        &mut self,
        name: &str,
        reference: &str,
        prompt: &str,
        vars: &Map<String, Value>,
        provider: &str,
    ) -> Result<Value, VarsTransformError> {
        let file = self.base.join(reference.trim_start_matches("file://"));
        let shown = file.display().to_string();
        if file.extension().is_some_and(|e| e == "py") {
            return python_var(&file, name, prompt, vars);
        }
        let answer = self.ask(&json!({
            "var": name,
            "file": shown,
            "prompt": prompt,
            "vars": vars,
            "provider": {"id": provider},
        }))?;
        if answer["ok"] != Value::Bool(true) {
            return Err(VarsTransformError::Code(
                answer["error"].as_str().unwrap_or("it failed").to_string(),
            ));
        }
        Ok(answer["output"].clone())
    }

    fn ask(&mut self, request: &Value) -> Result<Value, VarsTransformError> {
        let spec = niceeval::__workspace::process::WorkerSpec::new(
            "node",
            vec!["-e".into(), SCRIPT.into()],
            Some(self.base.clone()),
        );
        let Value::Object(body) = request.clone() else {
            return Err(VarsTransformError::Lost("a request is an object".into()));
        };
        niceeval::__workspace::process::request_blocking(&spec, body, CALL_TIME)
            .map_err(VarsTransformError::Worker)
    }
}

/// A Python var file's `get_var(var_name, prompt, other_vars)`: its `output`, trimmed.
fn python_var(
    file: &Path,
    name: &str,
    prompt: &str,
    vars: &Map<String, Value>,
) -> Result<Value, VarsTransformError> {
    const SCRIPT: &str = r#"
import importlib.util, json, os, sys
path, name, prompt, other = sys.argv[1], sys.argv[2], sys.argv[3], json.loads(sys.argv[4])
sys.path.insert(0, os.path.dirname(os.path.abspath(path)))
spec = importlib.util.spec_from_file_location('niceeval_var', path)
mod = importlib.util.module_from_spec(spec)
spec.loader.exec_module(mod)
made = mod.get_var(name, prompt, other)
print(json.dumps(made, default=str))
"#;
    let shown = file.display().to_string();
    let mut command = tokio::process::Command::new("python3");
    command
        .arg("-c")
        .arg(SCRIPT)
        .arg(file)
        .arg(name)
        .arg(prompt)
        .arg(Value::Object(vars.clone()).to_string())
        .current_dir(file.parent().unwrap_or(Path::new(".")))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    // Through niceeval's process core (its own tree, ended with niceeval, SIGKILL included),
    // on a thread of its own: the file is read from synchronous code, inside a runtime or not.
    let out = std::thread::scope(|scope| {
        scope
            .spawn(|| {
                tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()?
                    .block_on(niceeval::__workspace::process::output(&mut command))
            })
            .join()
            .unwrap_or_else(|_| Err(std::io::Error::other("the thread running it panicked")))
    })
    .map_err(|source| VarsTransformError::NoPython {
        file: shown.clone(),
        source,
    })?;
    if !out.status.success() {
        let stderr = String::from_utf8_lossy(&out.stderr);
        let last = stderr.lines().last().unwrap_or("it failed").to_string();
        return Err(VarsTransformError::Code(format!(
            "Error running Python script {shown}: {last}"
        )));
    }
    let stdout = String::from_utf8_lossy(&out.stdout);
    let made: Value = stdout
        .lines()
        .last()
        .and_then(|l| serde_json::from_str(l).ok())
        .unwrap_or(Value::Null);
    if let Some(error) = made.get("error").filter(|e| !e.is_null()) {
        return Err(VarsTransformError::Code(format!(
            "Error running Python script {shown}: {error}"
        )));
    }
    match made.get("output") {
        Some(Value::String(s)) if !s.is_empty() => Ok(Value::String(s.trim().to_string())),
        _ => Err(VarsTransformError::Code(format!(
            "Python script {shown} did not return any output"
        ))),
    }
}

// The workspace's one skip helper (`tests/skip.rs`), for the tests below.
#[cfg(test)]
#[path = "../../tests/skip.rs"]
mod skip;

#[cfg(test)]
mod tests {
    use super::*;

    /// Whether `tool` runs here, through the workspace's one skip rule (skip with a notice,
    /// fail under CI).
    fn have(tool: &str) -> bool {
        let ok = std::process::Command::new(tool)
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success());
        super::skip::available(ok, tool, "install it")
    }

    fn node() -> bool {
        have("node")
    }

    #[test]
    fn inline_code_makes_vars_merged_over_the_tests() {
        if !node() {
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        let mut t = VarsTransformer::new(dir.path());
        let vars: Map<String, Value> =
            serde_json::from_value(json!({"name": "ada", "n": 2})).unwrap();
        // promptfoo's form from the corpus: an object spread of `vars`.
        let made = t
            .apply(
                "{ ...vars, apiUrl: 'http://localhost:1', upper: vars.name.toUpperCase() }",
                &vars,
            )
            .unwrap();
        assert_eq!(made["upper"], "ADA");
        assert_eq!(made["n"], 2);
        assert_eq!(made["apiUrl"], "http://localhost:1");
        // A body over several lines returns its object.
        let made = t
            .apply("const m = vars.n * 2;\nreturn { m };", &vars)
            .unwrap();
        assert_eq!(made["m"], 4);
        // Not an object: promptfoo's error.
        let err = t.apply("42", &vars).unwrap_err();
        assert!(
            err.to_string().contains("did not return a valid object"),
            "{err}"
        );
        let err = t.apply("vars.missing.deep", &vars).unwrap_err();
        assert!(err.to_string().contains("undefined"), "{err}");
        std::fs::write(
            dir.path().join("t.mjs"),
            "export function more(vars) { return { more: vars.n + 1 }; }",
        )
        .unwrap();
        let made = t.apply("file://t.mjs:more", &vars).unwrap();
        assert_eq!(made["more"], 3);
    }

    #[test]
    fn vars_from_javascript_and_python_files() {
        let dir = tempfile::tempdir().unwrap();
        let vars: Map<String, Value> = serde_json::from_value(json!({"city": "Paris"})).unwrap();
        let mut t = VarsTransformer::new(dir.path());
        if node() {
            std::fs::write(
                dir.path().join("v.js"),
                "module.exports = (name, prompt, vars) => ({ output: `${name}:${vars.city}:${prompt}` });",
            )
            .unwrap();
            let v = t
                .var("fact", "file://v.js", "Say {{fact}}", &vars, "echo")
                .unwrap();
            assert_eq!(v, "fact:Paris:Say {{fact}}");
            std::fs::write(
                dir.path().join("e.js"),
                "module.exports = () => ({ error: 'no data' });",
            )
            .unwrap();
            let err = t.var("x", "file://e.js", "", &vars, "echo").unwrap_err();
            assert!(err.to_string().contains("no data"), "{err}");
        }
        if have("python3") {
            std::fs::write(
                dir.path().join("v.py"),
                "def get_var(name, prompt, other):\n    return {'output': '  ' + other['city'].upper() + '  '}\n",
            )
            .unwrap();
            let v = t.var("fact", "file://v.py", "p", &vars, "echo").unwrap();
            assert_eq!(v, "PARIS");
            std::fs::write(
                dir.path().join("n.py"),
                "def get_var(name, prompt, other):\n    return {}\n",
            )
            .unwrap();
            let err = t
                .var("fact", "file://n.py", "p", &vars, "echo")
                .unwrap_err();
            assert!(
                err.to_string().contains("did not return any output"),
                "{err}"
            );
        }
    }
}
