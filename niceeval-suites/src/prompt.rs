//! A promptfoo prompt made for one test, as promptfoo's `renderPrompt` makes it: each string
//! var loses one trailing newline; a prompt that is JSON (chat messages) has its vars rendered
//! inside its strings and is sent as JSON indented by two spaces, its keys in the order they
//! were written; any other prompt is rendered as text. A prompt function (`file://x.js:fn`,
//! `.mjs`, `.cjs`, `x.py:fn`) is called when its case runs, in the run's long-lived `node` or
//! `python3` worker, with promptfoo's `{vars, provider: {id, label}, config}`; what it returns
//! (text, a list of chat messages, or `{prompt}`) is then rendered the same way.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::ser::{Serialize, SerializeMap, SerializeSeq, Serializer};
use serde_json::{Map, Value, json};

use super::node::SnippetError;
use super::template::{self, TemplateError};
use niceeval::__workspace::expect::CodeLanguage;
use niceeval::__workspace::expect::code_runner::{Call, CallError, Target};
use niceeval::__workspace::process::WorkerError;

/// How long a prompt function may run.
const TIMEOUT: Duration = Duration::from_secs(60);

/// Why a prompt cannot be made; the template's, JSON's or the worker's error is kept.
#[derive(Debug, thiserror::Error)]
pub(crate) enum PromptError {
    /// The prompt's template does not render.
    #[error(transparent)]
    Template(#[from] TemplateError),
    /// A prompt made of JSON cannot be written back.
    #[error(transparent)]
    Json(#[from] serde_json::Error),
    /// A prompt function's file is not there.
    #[error("the prompt function file {} does not exist", .0.display())]
    NoFile(PathBuf),
    /// The prompt function failed (threw, or its worker did).
    #[error("the prompt function {reference}: {source}")]
    Function {
        /// As written (`file://prompts.mjs:chat`).
        reference: String,
        /// What went wrong.
        #[source]
        source: SnippetError,
    },
    /// The prompt function made neither text nor messages.
    #[error("the prompt function {reference} returned no prompt")]
    NoPrompt {
        /// As written.
        reference: String,
    },
    /// What the prompt function made does not render.
    #[error("the prompt of {reference}: {source}")]
    Render {
        /// As written.
        reference: String,
        /// Why.
        #[source]
        source: Box<PromptError>,
    },
}

/// Drops one trailing `\n` from each string var, as promptfoo does before it renders a prompt
/// (the prompt, the items' values and the code all see the trimmed vars).
pub(crate) fn trim_vars(vars: &mut Map<String, Value>) {
    for value in vars.values_mut() {
        if let Value::String(s) = value
            && s.ends_with('\n')
        {
            s.pop();
        }
    }
}

/// Renders `template` with `vars`: inside its strings when it is JSON, else as text.
pub(crate) fn render(template: &str, vars: &Map<String, Value>) -> Result<String, PromptError> {
    match serde_json::from_str::<Node>(template) {
        Ok(node) => {
            let rendered = node.render(vars)?;
            Ok(serde_json::to_string_pretty(&rendered)?)
        }
        Err(_) => Ok(template::render(&template::raw_if_partial(template), vars)?),
    }
}

/// A prompt function: a function of a JavaScript or Python file.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct PromptFunction {
    /// As written (`file://prompts.mjs:chat`): what errors name.
    pub reference: String,
    pub path: PathBuf,
    /// The function; `None`: a JavaScript module's default export, or a Python file run as a
    /// script (promptfoo's older form: the context as its argument, its output the prompt).
    pub function: Option<String>,
    pub python: bool,
}

impl PromptFunction {
    /// The function `reference` (`file://` already taken off: `x.mjs:fn`) names, relative to
    /// `base`; `None` when it is not a code file. A file that is not there is an error.
    pub(crate) fn parse(base: &Path, reference: &str) -> Option<Result<Self, PromptError>> {
        const CODE: &[&str] = &[".js", ".cjs", ".mjs", ".py"];
        let (file, function) = match reference.rsplit_once(':') {
            Some((file, function)) if CODE.iter().any(|e| file.ends_with(e)) => {
                (file, (!function.is_empty()).then(|| function.to_string()))
            }
            _ => (reference, None),
        };
        if !CODE.iter().any(|e| file.ends_with(e)) {
            return None;
        }
        let path = base.join(file);
        if !path.is_file() {
            return Some(Err(PromptError::NoFile(path)));
        }
        Some(Ok(PromptFunction {
            reference: format!("file://{reference}"),
            path: path.canonicalize().unwrap_or(path),
            function,
            python: file.ends_with(".py"),
        }))
    }

    /// Calls the function with the test's vars and the case's provider; the prompt it makes,
    /// rendered with `vars` as a written prompt is.
    pub(crate) async fn call(
        &self,
        vars: &str,
        provider: (&str, Option<&str>),
    ) -> Result<String, PromptError> {
        let (id, label) = provider;
        let mut given = json!({ "id": id });
        if let Some(label) = label {
            given["label"] = label.into();
        }
        // The context goes as JSON text, read by the worker: the vars keep the order they
        // were written in (`vars` is their JSON in that order), as promptfoo passes them.
        let context = Value::String(format!(
            r#"{{"vars":{vars},"provider":{given},"config":{{}}}}"#
        ));
        let file = self.path.display().to_string();
        let call = if self.python {
            let (name, body) = match &self.function {
                Some(_) => ("__niceeval_prompt", PYTHON_FUNCTION),
                None => ("__niceeval_prompt_script", PYTHON_SCRIPT),
            };
            Call {
                language: CodeLanguage::Python,
                target: Target::Inline {
                    body: body.to_string(),
                    expr: None,
                },
                names: Vec::new(),
                args: vec![
                    file.into(),
                    self.function.clone().unwrap_or_default().into(),
                    context,
                ],
                python_function: name.into(),
                grading: false,
                cwd: None,
                timeout: TIMEOUT,
            }
        } else {
            Call {
                language: CodeLanguage::JavaScript,
                target: Target::Inline {
                    body: JS_FUNCTION.to_string(),
                    expr: None,
                },
                names: vec!["file".into(), "name".into(), "context".into()],
                args: vec![
                    file.into(),
                    self.function.clone().map_or(Value::Null, Value::String),
                    context,
                ],
                python_function: String::new(),
                grading: false,
                cwd: None,
                timeout: TIMEOUT,
            }
        };
        let program = call.program();
        let made = call.run().await.map_err(|e| PromptError::Function {
            reference: self.reference.clone(),
            source: match e {
                CallError::Threw { message, .. } => SnippetError::Threw(message),
                CallError::Worker(WorkerError::Start { source, .. }) => SnippetError::Start {
                    program,
                    file: None,
                    source,
                },
                CallError::Worker(other) => SnippetError::Worker(other),
            },
        })?;
        let template = match (made.get("text"), made.get("json")) {
            (Some(Value::String(text)), _) => text.clone(),
            (_, Some(Value::String(json))) => {
                // `{prompt, config}`: promptfoo's structured result; its `config` tunes the
                // provider call, which niceeval's providers take from the file.
                match serde_json::from_str::<Node>(json) {
                    Ok(Node::Object(entries)) => {
                        match entries.into_iter().find(|(k, _)| k == "prompt") {
                            Some((_, Node::String(text))) => text,
                            Some((_, other)) => serde_json::to_string(&other)?,
                            None => json.clone(),
                        }
                    }
                    _ => json.clone(),
                }
            }
            _ => {
                return Err(PromptError::NoPrompt {
                    reference: self.reference.clone(),
                });
            }
        };
        let vars: Map<String, Value> = serde_json::from_str(vars)?;
        render(&template, &vars).map_err(|e| PromptError::Render {
            reference: self.reference.clone(),
            source: Box::new(e),
        })
    }
}

/// Loads the module (through the worker's own loader and cache), calls the function and
/// returns its text, or its JSON written in JavaScript (so keys keep their order).
const JS_FUNCTION: &str = r#"
context = JSON.parse(context);
const mod = await load(file);
let fn;
if (name) fn = mod[name] ?? (mod.default ? mod.default[name] : undefined);
else fn = typeof mod === 'function' ? mod : mod.default;
if (typeof fn !== 'function') {
  throw new Error(name ? `${file} exports no function \`${name}\`` : `${file} has no default export function; name one with file://path:function`);
}
const made = await fn(context);
if (typeof made === 'string') return { text: made };
if (made === null || typeof made !== 'object') throw new Error(`a prompt function returns text or an object, not ${typeof made}`);
return { json: JSON.stringify(made) };
"#;

/// Python's: the worker's module loader (`load` of its `__main__`).
const PYTHON_FUNCTION: &str = r#"
def __niceeval_prompt(path, name, context):
    import asyncio, inspect, json, sys
    context = json.loads(context)
    fn = getattr(sys.modules['__main__'].load(path), name, None)
    if not callable(fn):
        raise AttributeError(path + ' has no function `' + name + '`')
    made = fn(context)
    if inspect.isawaitable(made):
        made = asyncio.run(made)
    if isinstance(made, str):
        return {'text': made}
    if not isinstance(made, (dict, list)):
        raise TypeError('a prompt function returns text, a list or a dict, not ' + type(made).__name__)
    return {'json': json.dumps(made)}
"#;

/// promptfoo's older Python form: the file run with the context as its argument; its output
/// (lines joined, as promptfoo's `python-shell` joins them) is the prompt.
const PYTHON_SCRIPT: &str = r#"
def __niceeval_prompt_script(path, name, context):
    import json, os, subprocess, sys
    done = subprocess.run([sys.executable, path, context], capture_output=True,
                          text=True, cwd=os.path.dirname(path))
    if done.returncode != 0:
        raise RuntimeError(path + ' exited with ' + str(done.returncode) + ': ' + done.stderr[-2000:])
    return {'text': '\n'.join(done.stdout.splitlines())}
"#;

/// JSON read with its keys in the order they were written (`serde_json`'s maps sort them), so
/// a rendered chat prompt is the text promptfoo sends.
#[derive(Debug, Clone, PartialEq)]
enum Node {
    Null,
    Bool(bool),
    Number(serde_json::Number),
    String(String),
    Array(Vec<Node>),
    Object(Vec<(String, Node)>),
}

impl Node {
    /// Every string rendered with `vars` (keys stay as written, as promptfoo's
    /// `renderVarsInObject` leaves them).
    fn render(self, vars: &Map<String, Value>) -> Result<Node, TemplateError> {
        Ok(match self {
            Node::String(s) => Node::String(template::render(&s, vars)?),
            Node::Array(items) => Node::Array(
                items
                    .into_iter()
                    .map(|n| n.render(vars))
                    .collect::<Result<_, _>>()?,
            ),
            Node::Object(entries) => Node::Object(
                entries
                    .into_iter()
                    .map(|(k, v)| Ok((k, v.render(vars)?)))
                    .collect::<Result<_, TemplateError>>()?,
            ),
            other => other,
        })
    }
}

impl<'de> Deserialize<'de> for Node {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct NodeVisitor;
        impl<'de> Visitor<'de> for NodeVisitor {
            type Value = Node;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("JSON")
            }
            fn visit_unit<E: de::Error>(self) -> Result<Node, E> {
                Ok(Node::Null)
            }
            fn visit_bool<E: de::Error>(self, v: bool) -> Result<Node, E> {
                Ok(Node::Bool(v))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Node, E> {
                Ok(Node::Number(v.into()))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Node, E> {
                Ok(Node::Number(v.into()))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Node, E> {
                // JavaScript writes a whole float without its `.0`.
                if v.fract() == 0.0 && v.abs() < 9_007_199_254_740_992.0 {
                    return Ok(Node::Number((v as i64).into()));
                }
                Ok(serde_json::Number::from_f64(v).map_or(Node::Null, Node::Number))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Node, E> {
                Ok(Node::String(v.to_string()))
            }
            fn visit_string<E: de::Error>(self, v: String) -> Result<Node, E> {
                Ok(Node::String(v))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Node, A::Error> {
                let mut items = Vec::new();
                while let Some(item) = seq.next_element()? {
                    items.push(item);
                }
                Ok(Node::Array(items))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Node, A::Error> {
                let mut entries: Vec<(String, Node)> = Vec::new();
                while let Some((key, value)) = map.next_entry::<String, Node>()? {
                    // A repeated key keeps its first place and its last value, as
                    // `JSON.parse` does.
                    match entries.iter_mut().find(|(k, _)| *k == key) {
                        Some(entry) => entry.1 = value,
                        None => entries.push((key, value)),
                    }
                }
                Ok(Node::Object(entries))
            }
        }
        deserializer.deserialize_any(NodeVisitor)
    }
}

impl Serialize for Node {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Node::Null => serializer.serialize_unit(),
            Node::Bool(b) => serializer.serialize_bool(*b),
            Node::Number(n) => n.serialize(serializer),
            Node::String(s) => serializer.serialize_str(s),
            Node::Array(items) => {
                let mut seq = serializer.serialize_seq(Some(items.len()))?;
                for item in items {
                    seq.serialize_element(item)?;
                }
                seq.end()
            }
            Node::Object(entries) => {
                let mut map = serializer.serialize_map(Some(entries.len()))?;
                for (k, v) in entries {
                    map.serialize_entry(k, v)?;
                }
                map.end()
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vars(v: Value) -> Map<String, Value> {
        v.as_object().cloned().unwrap_or_default()
    }

    #[test]
    fn a_json_prompt_takes_its_vars_inside_its_strings_in_written_order() {
        let template =
            r#"[{"role":"system","content":"Be {{tone}}."},{"role":"user","content":"{{q}}"}]"#;
        let vars = vars(json!({"tone": "brief", "q": "say \"hi\"\nthen stop"}));
        let rendered = render(template, &vars).unwrap();
        // JSON.stringify(…, null, 2): keys as written, the var's quote and newline escaped.
        assert_eq!(
            rendered,
            "[\n  {\n    \"role\": \"system\",\n    \"content\": \"Be brief.\"\n  },\n  {\n    \"role\": \"user\",\n    \"content\": \"say \\\"hi\\\"\\nthen stop\"\n  }\n]"
        );
        let back: Value = serde_json::from_str(&rendered).unwrap();
        assert_eq!(back[1]["content"], "say \"hi\"\nthen stop");
        // Not JSON: rendered as text.
        assert_eq!(
            render("Q: {{q}}", &vars).unwrap(),
            "Q: say \"hi\"\nthen stop"
        );
        // A repeated key keeps its first place; whole floats lose `.0`.
        assert_eq!(
            render(r#"{"a":1.0,"b":2.5,"a":3}"#, &vars).unwrap(),
            "{\n  \"a\": 3,\n  \"b\": 2.5\n}"
        );
    }

    #[test]
    fn string_vars_lose_one_trailing_newline() {
        let mut v = vars(json!({"a": "x\n\n", "b": "y", "n": 1, "l": ["z\n"]}));
        trim_vars(&mut v);
        assert_eq!(
            Value::Object(v),
            json!({"a": "x\n", "b": "y", "n": 1, "l": ["z\n"]})
        );
    }

    #[test]
    fn prompt_function_references_split_their_function() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("p.mjs"), "export const f = () => 'x';").unwrap();
        let f = PromptFunction::parse(dir.path(), "p.mjs:f")
            .unwrap()
            .unwrap();
        assert_eq!(f.function.as_deref(), Some("f"));
        assert!(!f.python);
        assert!(PromptFunction::parse(dir.path(), "p.txt").is_none());
        let missing = PromptFunction::parse(dir.path(), "gone.py:f")
            .unwrap()
            .unwrap_err()
            .to_string();
        assert!(missing.contains("gone.py does not exist"), "{missing}");
    }
}
