//! promptfoo's JavaScript snippets, run by the run's `node` worker
//! ([`niceeval::__workspace::expect::code_runner`]): `options.transform`, an item's JavaScript `transform`,
//! an HTTP provider's `transformResponse`. A one-line snippet is an expression; one with
//! several lines (or a `return`) is a function body, as in promptfoo.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{Map, Value, json};

use niceeval::__workspace::expect::CodeLanguage;
use niceeval::__workspace::expect::code_runner::{Call, CallError, Target};
use niceeval::__workspace::process::WorkerError;

/// How long a snippet may run.
const TIMEOUT: Duration = Duration::from_secs(30);

/// Why a snippet, or a function of a code file, made no value; the worker's error is kept.
#[derive(Debug, thiserror::Error)]
pub(crate) enum SnippetError {
    /// The code threw (JavaScript) or raised (Python): what is shown of it.
    #[error("{0}")]
    Threw(String),
    /// `node` cannot start for an inline snippet.
    #[error("cannot run `node` for a JavaScript snippet: {0}; install Node.js")]
    NoNode(#[source] std::io::Error),
    /// The program of a code file cannot start.
    #[error("cannot run `{program}`{}: {source}", for_file(.file.as_deref()))]
    Start {
        /// `node` or `python3`.
        program: &'static str,
        /// The file as its reference names it, when the message names it.
        file: Option<String>,
        /// Why.
        source: std::io::Error,
    },
    /// The worker timed out, ended without a result, or could not start.
    #[error(transparent)]
    Worker(WorkerError),
    /// A transform file that is no JavaScript or Python.
    #[error("a transform file is .js, .cjs, .mjs or .py, not {}", .0.display())]
    TransformKind(PathBuf),
    /// A transform file that is not there.
    #[error("the transform file {} does not exist", .0.display())]
    NoTransformFile(PathBuf),
    /// A request transform file that is not there, or no JavaScript.
    #[error(
        "a request transform file is an existing .js, .cjs or .mjs file, not {}",
        .0.display()
    )]
    RequestTransformFile(PathBuf),
}

fn for_file(file: Option<&str>) -> String {
    file.map(|f| format!(" for {f}")).unwrap_or_default()
}

impl SnippetError {
    /// The error of a call: what it threw (the first line of its stack), or the worker's.
    fn of(e: CallError) -> SnippetError {
        match e {
            CallError::Threw { head, .. } => SnippetError::Threw(head),
            CallError::Worker(e) => SnippetError::Worker(e),
        }
    }
}

/// Runs `code` with `names` bound to `values`; its result as data (`null` for `undefined`).
pub(crate) async fn run_value(
    code: &str,
    names: &[&str],
    values: Vec<Value>,
) -> Result<Value, SnippetError> {
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
        CallError::Worker(WorkerError::Start { source, .. }) => SnippetError::NoNode(source),
        other => SnippetError::of(other),
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
///
/// `code` is inline JavaScript or a file, `file://path[:function]` relative to `base`: a
/// `.js` / `.cjs` / `.mjs` module's default export (or the named one), a `.py` file's
/// `get_transform` (or the named function), each called with `(output, context)`.
pub(crate) async fn transform(
    code: &str,
    output: &Value,
    vars: &Map<String, Value>,
    prompt: &str,
    base: &Path,
) -> Result<Value, SnippetError> {
    let code = code.trim();
    let context = json!({ "vars": vars, "prompt": { "raw": prompt } });
    let Some(reference) = code.strip_prefix("file://") else {
        return run_value(code, &["output", "context"], vec![output.clone(), context]).await;
    };
    let (file, function) = split_reference(reference);
    let path = base.join(file);
    let language = match path.extension().and_then(|e| e.to_str()) {
        Some("js" | "cjs" | "mjs") => CodeLanguage::JavaScript,
        Some("py") => CodeLanguage::Python,
        _ => return Err(SnippetError::TransformKind(path)),
    };
    if !path.is_file() {
        return Err(SnippetError::NoTransformFile(path));
    }
    let path = path.canonicalize().unwrap_or(path);
    let call = Call {
        language,
        target: Target::File { path, function },
        names: vec!["output".into(), "context".into()],
        args: vec![output.clone(), context],
        python_function: "get_transform".into(),
        grading: false,
        cwd: None,
        timeout: TIMEOUT,
    };
    let program = call.program();
    call.run().await.map_err(|e| match e {
        CallError::Worker(WorkerError::Start { source, .. }) => SnippetError::Start {
            program,
            file: Some(file.to_string()),
            source,
        },
        other => SnippetError::of(other),
    })
}

/// promptfoo's `transformRequest` of an HTTP provider: `prompt`, `vars` and `context` in
/// scope (inline JavaScript, or `file://x.js[:function]` relative to `base`, called with them);
/// its result as data: text becomes the prompt, an object is merged over a JSON body.
pub(crate) async fn request_transform(
    code: &str,
    prompt: &str,
    vars: &Map<String, Value>,
    base: &Path,
) -> Result<Value, SnippetError> {
    let code = code.trim();
    let args = vec![
        Value::String(prompt.to_string()),
        Value::Object(vars.clone()),
        json!({ "vars": vars }),
    ];
    let names = ["prompt", "vars", "context"];
    let Some(reference) = code.strip_prefix("file://") else {
        return run_value(code, &names, args).await;
    };
    let (file, function) = split_reference(reference);
    let path = base.join(file);
    if !matches!(
        path.extension().and_then(|e| e.to_str()),
        Some("js" | "cjs" | "mjs")
    ) || !path.is_file()
    {
        return Err(SnippetError::RequestTransformFile(path));
    }
    let call = Call {
        language: CodeLanguage::JavaScript,
        target: Target::File {
            path: path.canonicalize().unwrap_or(path),
            function,
        },
        names: names.iter().map(|n| n.to_string()).collect(),
        args,
        python_function: String::new(),
        grading: false,
        cwd: None,
        timeout: TIMEOUT,
    };
    call.run().await.map_err(SnippetError::of)
}

/// `path` and `function` of `path[:function]` (a `:` after the file's extension).
fn split_reference(reference: &str) -> (&str, Option<String>) {
    let end = [".js:", ".cjs:", ".mjs:", ".py:"]
        .iter()
        .filter_map(|ext| reference.find(ext).map(|i| i + ext.len() - 1))
        .min();
    match end {
        Some(i) if !reference[i + 1..].is_empty() => {
            (&reference[..i], Some(reference[i + 1..].to_string()))
        }
        Some(i) => (&reference[..i], None),
        None => (reference, None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn references_split_their_function() {
        assert_eq!(split_reference("t.js"), ("t.js", None));
        assert_eq!(
            split_reference("lib/t.mjs:clean"),
            ("lib/t.mjs", Some("clean".into()))
        );
        assert_eq!(split_reference("t.py:"), ("t.py", None));
        assert!(has_return("x; return x") && !has_return("returned(x)"));
    }
}
