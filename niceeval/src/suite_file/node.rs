//! promptfoo's JavaScript snippets run with `node`: `options.transform`, an item's
//! JavaScript `transform`, an HTTP provider's `transformResponse`. A one-line snippet is an
//! expression; one with several lines (or a `return`) is a function body, as in promptfoo.

use serde_json::{Map, Value, json};
use tokio::io::AsyncWriteExt as _;

const RUNNER: &str = r#"
let input = '';
process.stdin.on('data', (c) => (input += c));
process.stdin.on('end', async () => {
  try {
    const a = JSON.parse(input);
    const body = a.code.includes('\n') || /\breturn\b/.test(a.code) ? a.code : 'return (' + a.code + ')';
    const f = new Function(...a.names, body);
    const out = await f(...a.values);
    process.stdout.write(JSON.stringify({ ok: out === undefined ? null : out }));
  } catch (e) {
    process.stdout.write(JSON.stringify({ error: String((e && e.stack) || e) }));
  }
});
"#;

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
    let input = json!({ "code": code, "names": names, "values": values }).to_string();
    let mut child = tokio::process::Command::new("node")
        .arg("-e")
        .arg(RUNNER)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .map_err(|e| format!("cannot run `node` for a JavaScript snippet: {e}; install Node.js"))?;
    if let Some(mut stdin) = child.stdin.take() {
        stdin
            .write_all(input.as_bytes())
            .await
            .map_err(|e| format!("cannot write to node: {e}"))?;
    }
    let out = child
        .wait_with_output()
        .await
        .map_err(|e| format!("node failed: {e}"))?;
    let reply: Value = serde_json::from_slice(&out.stdout).map_err(|_| {
        format!(
            "node printed no result ({})",
            String::from_utf8_lossy(&out.stderr).trim()
        )
    })?;
    match (reply.get("ok"), &reply["error"]) {
        (Some(v), _) => Ok(v.clone()),
        (None, Value::String(e)) => Err(e.lines().next().unwrap_or("").to_string()),
        (None, _) => Ok(Value::Null),
    }
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
