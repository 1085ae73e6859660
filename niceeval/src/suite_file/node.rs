//! promptfoo's JavaScript snippets, run by the run's `node` worker
//! ([`crate::expect::code_runner`]): `options.transform`, an item's JavaScript `transform`,
//! an HTTP provider's `transformResponse`. A one-line snippet is an expression; one with
//! several lines (or a `return`) is a function body, as in promptfoo.

use std::time::Duration;

use serde_json::{Map, Value, json};

use crate::expect::CodeLanguage;
use crate::expect::code_runner::{Call, CallError, Target};

/// How long a snippet may run.
const TIMEOUT: Duration = Duration::from_secs(30);

/// Runs `code` with `names` bound to `values`; its result as text (JSON for non-strings).
pub(crate) async fn run(code: &str, names: &[&str], values: Vec<Value>) -> Result<String, String> {
    Ok(match run_value(code, names, values).await? {
        Value::String(s) => s,
        Value::Null => String::new(),
        other => other.to_string(),
    })
}

/// Runs `code` with `names` bound to `values`; its result as data (`null` for `undefined`).
async fn run_value(code: &str, names: &[&str], values: Vec<Value>) -> Result<Value, String> {
    let body = if code.contains('\n') || has_return(code) {
        code.to_string()
    } else {
        format!("return ({code})")
    };
    let call = Call {
        language: CodeLanguage::JavaScript,
        target: Target::Inline { body, expr: None },
        names: names.iter().map(|n| n.to_string()).collect(),
        args: values,
        python_function: String::new(),
        grading: false,
        cwd: None,
        timeout: TIMEOUT,
    };
    call.run().await.map_err(|e| match e {
        CallError::Threw { head, .. } => head,
        CallError::Worker(e) => match e {
            crate::process::worker::WorkerError::Start { source, .. } => {
                format!("cannot run `node` for a JavaScript snippet: {source}; install Node.js")
            }
            other => other.to_string(),
        },
    })
}

/// Whether `code` has the word `return` (as `/\breturn\b/`).
fn has_return(code: &str) -> bool {
    let word = |c: char| c.is_ascii_alphanumeric() || c == '_';
    code.match_indices("return").any(|(i, _)| {
        let before = code[..i].chars().next_back();
        let after = code[i + "return".len()..].chars().next();
        !before.is_some_and(word) && !after.is_some_and(word)
    })
}

/// promptfoo's output transform: `output` (the provider's text, or what an earlier transform
/// made of it) and `context` (`vars`, `prompt`) in scope; its result as data, as promptfoo
/// keeps it (`JSON.parse(output)` gives the next transform and the assertions an object).
pub(crate) async fn transform(
    code: &str,
    output: &Value,
    vars: &Map<String, Value>,
    prompt: &str,
) -> Result<Value, String> {
    let code = code.trim();
    if let Some(path) = code.strip_prefix("file://") {
        return Err(format!(
            "a transform file ({path}) is not supported; write the transform inline"
        ));
    }
    run_value(
        code,
        &["output", "context"],
        vec![
            output.clone(),
            json!({ "vars": vars, "prompt": { "raw": prompt } }),
        ],
    )
    .await
}
