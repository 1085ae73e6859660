//! `is-valid-function-call`, `is-valid-openai-function-call` and `is-valid-openai-tools-call`:
//! whether the function or tool calls the model made name functions the provider was
//! configured with, and whether their arguments fit those functions' JSON Schemas.
//!
//! A function call is checked by the rules of the provider's family, as promptfoo's providers
//! check it: Google's (`google:…`, `vertex:…`: `functionCall`s, or a Live `toolCall`, against
//! the `functionDeclarations` of the config's `tools`, schema type names such as `STRING`
//! lower-cased) or OpenAI's (every other provider: one `{name, arguments}` call, or a message
//! holding one as `function_call`, against the config's `functions`). A tools call is OpenAI's
//! `tool_calls` list, each call against the `function` of the config's `tools` of type
//! `function`; an output that reports an MCP tool's result or error is judged by that report.
//! Arguments are validated as the `is-json` type validates (draft-07, formats asserted).

use super::CallProblem;
use std::sync::LazyLock;

use serde_json::Value;

use super::{provider_output, verdict};
use crate::base::assertion::{Assertion, Grade, Subject};
use crate::checks::expect::json::schema_problems;

/// What is checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// One function call, by the provider family's rules (`is-valid-function-call`,
    /// `is-valid-openai-function-call`).
    FunctionCall,
    /// OpenAI tool calls (`is-valid-openai-tools-call`).
    ToolsCall,
}

/// The matcher of the function-call types, for one evaluation.
pub(crate) struct FunctionCall {
    pub(crate) kind: Kind,
    /// The provider's non-text output, checked instead of a text subject.
    pub(crate) output: Option<Value>,
    /// The provider's id (`openai:gpt-4o`, `google:gemini-2.0-flash`, ...).
    pub(crate) provider_id: Option<String>,
    /// The provider's `config` (`functions`, `tools`); `None` when the run did not say.
    pub(crate) provider_config: Option<Value>,
}

/// `JSON.stringify` of a value, for reasons.
fn stringify(value: &Value) -> String {
    serde_json::to_string(value).unwrap_or_default()
}

/// Whether the provider is one of Google's (its calls are checked by Google's rules).
fn is_google(provider_id: Option<&str>) -> bool {
    provider_id.is_some_and(|id| id.starts_with("google:") || id.starts_with("vertex:"))
}

impl FunctionCall {
    fn config(&self, key: &str) -> Option<&Value> {
        self.provider_config
            .as_ref()
            .and_then(|c| c.get(key))
            .filter(|v| !v.is_null())
    }
}

impl Assertion for FunctionCall {
    fn describe(&self) -> String {
        match self.kind {
            Kind::FunctionCall => "is_valid_function_call()".to_string(),
            Kind::ToolsCall => "is_valid_openai_tools_call()".to_string(),
        }
    }

    fn evaluate(&self, subject: &Subject<'_>) -> Grade {
        let output = provider_output(subject, self.output.as_ref());
        let checked = match self.kind {
            Kind::FunctionCall => match &self.provider_config {
                None => Err(CallProblem::from(
                    "Provider does not have functionality for checking function call.".to_string(),
                )),
                Some(_) if is_google(self.provider_id.as_deref()) => {
                    google_call(&output, self.config("tools"))
                }
                Some(_) => openai_call(&output, self.config("functions")),
            }
            .map(|()| "Assertion passed".to_string()),
            Kind::ToolsCall => openai_tools(&output, self.config("tools")),
        };
        match checked {
            Ok(reason) => verdict(true, 1.0, reason),
            Err(reason) => verdict(false, 0.0, reason),
        }
    }
}

/// Checks an OpenAI function call (`{name, arguments}`, or a message with `function_call`)
/// against `functions` (a list of `{name, parameters}`).
pub(crate) fn openai_call(output: &Value, functions: Option<&Value>) -> Result<(), CallProblem> {
    let call = match output {
        Value::Object(map) if map.contains_key("function_call") => &map["function_call"],
        other => other,
    };
    let (Some(Value::String(name)), Some(Value::String(arguments))) =
        (call.get("name"), call.get("arguments"))
    else {
        return Err(CallProblem::from(format!(
            "OpenAI did not return a valid-looking function call: {}",
            stringify(call)
        )));
    };
    let arguments: Value = serde_json::from_str(arguments)
        .map_err(|e| format!("The arguments of the call to \"{name}\" are not JSON: {e}"))?;
    let schema = functions
        .and_then(Value::as_array)
        .and_then(|list| {
            list.iter()
                .find(|f| f.get("name").and_then(Value::as_str) == Some(name))
        })
        .and_then(|f| f.get("parameters"))
        .filter(|p| super::truthy(Some(p)));
    let Some(schema) = schema else {
        return Err(CallProblem::from(format!(
            "Called \"{name}\", but there is no function with that name"
        )));
    };
    let problems = schema_problems(schema, &arguments).map_err(|e| e.to_string())?;
    if problems.is_empty() {
        Ok(())
    } else {
        Err(CallProblem::from(format!(
            "Call to \"{name}\" does not match schema: {}",
            problems.join("; ")
        )))
    }
}

static MCP_ERROR: LazyLock<regex::Regex> = LazyLock::new(|| {
    regex::Regex::new(r"MCP Tool Error \(([^)]+)\): (.+)").expect("a valid pattern")
});
static MCP_RESULT: LazyLock<regex::Regex> =
    LazyLock::new(|| regex::Regex::new(r"MCP Tool Result \(([^)]+)\):").expect("a valid pattern"));

/// Checks OpenAI tool calls (a list of `{function: {name, arguments}}`, or a message holding
/// one as `tool_calls`) against `tools`; `Ok` is the passing reason.
pub(crate) fn openai_tools(output: &Value, tools: Option<&Value>) -> Result<String, CallProblem> {
    let text = match output {
        Value::String(s) => s.clone(),
        other => stringify(other),
    };
    if text.contains("MCP Tool Error") {
        let found = MCP_ERROR.captures(&text);
        let part = |i| {
            found
                .as_ref()
                .and_then(|c| c.get(i))
                .map(|m| m.as_str().to_string())
        };
        return Err(CallProblem::from(format!(
            "MCP tool call failed for {}: {}",
            part(1).unwrap_or_else(|| "unknown".into()),
            part(2).unwrap_or_else(|| "unknown error".into())
        )));
    }
    if text.contains("MCP Tool Result") {
        let name = MCP_RESULT
            .captures(&text)
            .and_then(|c| c.get(1))
            .map_or("unknown", |m| m.as_str());
        return Ok(format!("MCP tool call succeeded for {name}"));
    }
    let calls = match output {
        Value::Object(map) if map.contains_key("tool_calls") => &map["tool_calls"],
        other => other,
    };
    let well_formed = |call: &Value| {
        call.get("function").is_some_and(|f| {
            f.get("name").is_some_and(Value::is_string)
                && f.get("arguments").is_some_and(Value::is_string)
        })
    };
    let list = match calls {
        Value::Array(list) if !list.is_empty() && list.iter().all(well_formed) => list,
        other => {
            return Err(CallProblem::from(format!(
                "OpenAI did not return a valid-looking tools response: {}",
                stringify(other)
            )));
        }
    };
    let Some(tools) = tools.filter(|t| super::truthy(Some(t))) else {
        return Err(CallProblem::from(
            "No tools configured in provider, but output contains tool calls".to_string(),
        ));
    };
    let Some(tools) = tools.as_array() else {
        return Err(CallProblem::from(format!(
            "The provider's `tools` is not a list of tools: {}",
            stringify(tools)
        )));
    };
    let functions = Value::Array(
        tools
            .iter()
            .filter(|t| t.get("type").and_then(Value::as_str) == Some("function"))
            .filter_map(|t| t.get("function").cloned())
            .collect(),
    );
    for call in list {
        openai_call(&call["function"], Some(&functions))?;
    }
    Ok("Assertion passed".to_string())
}

/// Google's schema type names (`STRING`, `OBJECT`, ...), which JSON Schema writes lower-case.
const GOOGLE_TYPES: &[&str] = &[
    "TYPE_UNSPECIFIED",
    "STRING",
    "NUMBER",
    "INTEGER",
    "BOOLEAN",
    "ARRAY",
    "OBJECT",
];

/// A Google schema with its type names lower-cased, everywhere in it.
fn lower_type_names(schema: &Value) -> Value {
    let lower = |v: &Value| match v {
        Value::String(s) if GOOGLE_TYPES.contains(&s.as_str()) => {
            Value::String(s.to_ascii_lowercase())
        }
        other => other.clone(),
    };
    match schema {
        Value::Array(items) => Value::Array(items.iter().map(lower_type_names).collect()),
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(key, value)| {
                    let value = match (key.as_str(), value) {
                        ("type", Value::String(_)) => lower(value),
                        ("type", Value::Array(items)) => {
                            Value::Array(items.iter().map(lower).collect())
                        }
                        _ => lower_type_names(value),
                    };
                    (key.clone(), value)
                })
                .collect(),
        ),
        other => other.clone(),
    }
}

/// How many keys JavaScript's `Object.keys` finds in a value.
fn key_count(value: &Value) -> usize {
    match value {
        Value::Object(map) => map.len(),
        Value::Array(items) => items.len(),
        Value::String(s) => s.encode_utf16().count(),
        _ => 0,
    }
}

/// Checks Google function calls (`[{functionCall}]`, or a Live `{toolCall: {functionCalls}}`,
/// possibly as JSON text) against the `functionDeclarations` of `tools`.
pub(crate) fn google_call(output: &Value, tools: Option<&Value>) -> Result<(), CallProblem> {
    let bad = || {
        format!(
            "Google did not return a valid-looking function call: {}",
            stringify(output)
        )
    };
    let parsed = match output {
        Value::String(text) => serde_json::from_str::<Value>(text).map_err(|_| bad())?,
        other => other.clone(),
    };
    let calls: Vec<Value> = match &parsed {
        Value::Object(map) if map.contains_key("toolCall") => {
            match map["toolCall"].get("functionCalls") {
                Some(Value::Array(calls)) => calls.clone(),
                _ => return Err(CallProblem::from(bad())),
            }
        }
        Value::Array(items) => items
            .iter()
            .filter_map(|item| item.as_object()?.get("functionCall").cloned())
            .collect(),
        _ => return Err(CallProblem::from(bad())),
    };
    let declarations = tools
        .and_then(Value::as_array)
        .and_then(|list| {
            list.iter()
                .find(|t| t.get("functionDeclarations").is_some())
        })
        .and_then(|t| t.get("functionDeclarations"))
        .and_then(Value::as_array);
    for call in &calls {
        let name = call.get("name").cloned().unwrap_or(Value::Null);
        let shown_name = name
            .as_str()
            .map_or_else(|| stringify(&name), str::to_string);
        let arguments = match call.get("args") {
            Some(Value::String(text)) => serde_json::from_str::<Value>(text).map_err(|e| {
                format!("The arguments of the call to \"{shown_name}\" are not JSON: {e}")
            })?,
            Some(Value::Null) | None => {
                return Err(CallProblem::from(format!(
                    "The call to \"{shown_name}\" has no `args`: {}",
                    stringify(call)
                )));
            }
            Some(other) => other.clone(),
        };
        let Some(declaration) = declarations.and_then(|list| {
            list.iter()
                .find(|d| d.get("name").unwrap_or(&Value::Null) == &name)
        }) else {
            return Err(CallProblem::from(format!(
                "Called \"{shown_name}\", but there is no function with that name"
            )));
        };
        let parameters = declaration
            .get("parameters")
            .filter(|p| super::truthy(Some(p)));
        let mismatch = |detail: String| {
            format!(
                "Call to \"{shown_name}\":\n{}\ndoes not match schema:\n{detail}",
                stringify(call)
            )
        };
        match parameters {
            Some(parameters) if key_count(&arguments) != 0 => {
                let schema = lower_type_names(parameters);
                let problems = schema_problems(&schema, &arguments).map_err(|e| {
                    format!(
                        "Tool schema doesn't compile: {e}. If this is a valid tool schema you may need to reformulate your assertion without is-valid-function-call."
                    )
                })?;
                if !problems.is_empty() {
                    return Err(CallProblem::from(mismatch(problems.join("; "))));
                }
            }
            _ => {
                let empty_and_unexpected =
                    arguments == Value::Object(serde_json::Map::new()) && parameters.is_none();
                if !empty_and_unexpected {
                    return Err(CallProblem::from(mismatch(stringify(declaration))));
                }
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::base::assertion::AssertionResult;

    fn add_functions() -> Value {
        json!({"functions": [{
            "name": "add",
            "parameters": {
                "type": "object",
                "properties": {"x": {"type": "number"}, "y": {"type": "number"}},
                "required": ["x", "y"]
            }
        }]})
    }

    fn temperature_tools() -> Value {
        json!({"tools": [{
            "type": "function",
            "function": {
                "name": "getCurrentTemperature",
                "parameters": {
                    "type": "object",
                    "properties": {
                        "location": {"type": "string"},
                        "unit": {"type": "string", "enum": ["Celsius", "Fahrenheit"]}
                    },
                    "required": ["location", "unit"]
                }
            }
        }], "functions": [{
            "name": "getCurrentTemperature",
            "parameters": {
                "type": "object",
                "properties": {
                    "location": {"type": "string"},
                    "unit": {"type": "string", "enum": ["Celsius", "Fahrenheit"]}
                },
                "required": ["location", "unit"]
            }
        }]})
    }

    fn run(kind: Kind, output: Value, id: &str, config: Option<Value>) -> AssertionResult {
        let a = FunctionCall {
            kind,
            output: Some(output),
            provider_id: Some(id.to_string()),
            provider_config: config,
        };
        AssertionResult::evaluate(&a, &Subject::Text("ignored: the raw output is read".into()))
    }

    // promptfoo's openai.test.ts, "is-valid-openai-function-call assertion" and
    // "handleIsValidFunctionCall".
    #[test]
    fn openai_function_call_vectors() {
        let fc = Kind::FunctionCall;
        let r = run(
            fc,
            json!({"arguments": "{\"x\": 10, \"y\": 20}", "name": "add"}),
            "openai:gpt-4o",
            Some(add_functions()),
        );
        assert!(r.passed, "{}", r.reason);
        assert_eq!(r.reason, "Assertion passed");
        let nested =
            json!({"function_call": {"arguments": "{\"x\": 10, \"y\": 20}", "name": "add"}});
        assert!(run(fc, nested, "openai:gpt-4o", Some(add_functions())).passed);
        let r = run(
            fc,
            json!({"arguments": "{\"x\": \"10\", \"y\": 20}", "name": "add"}),
            "openai:gpt-4o",
            Some(add_functions()),
        );
        assert!(!r.passed);
        assert!(
            r.reason.contains("Call to \"add\" does not match schema"),
            "{}",
            r.reason
        );
        let call = json!({"name": "getCurrentTemperature", "arguments": "{\"location\": \"San Francisco, CA\", \"unit\": \"Fahrenheit\"}"});
        let r = run(fc, call, "openai:gpt-4o", Some(temperature_tools()));
        assert!(r.passed && r.score == 1.0);
        let call = json!({"name": "getCurrentTemperature", "arguments": "{\"location\": \"San Francisco, CA\"}"});
        let r = run(fc, call.clone(), "openai:gpt-4o", Some(json!({})));
        assert_eq!(
            r.reason,
            "Called \"getCurrentTemperature\", but there is no function with that name"
        );
        let r = run(
            fc,
            json!("not an object"),
            "openai:gpt-4o",
            Some(temperature_tools()),
        );
        assert!(!r.passed);
        assert!(
            r.reason
                .starts_with("OpenAI did not return a valid-looking function call")
        );
        // "should fail when function call does not match schema" (missing `unit`).
        let r = run(fc, call, "openai:gpt-4o", Some(temperature_tools()));
        assert!(!r.passed && r.score == 0.0);
        assert!(r.reason.contains("unit"), "{}", r.reason);
    }

    // functionToolCall.test.ts: "fails when the provider cannot validate function calls".
    #[test]
    fn without_a_provider_config_there_is_no_validator() {
        let a = FunctionCall {
            kind: Kind::FunctionCall,
            output: None,
            provider_id: None,
            provider_config: None,
        };
        let r = AssertionResult::evaluate(
            &a,
            &Subject::Text(r#"{"name":"get_weather","arguments":"{}"}"#.into()),
        );
        assert!(!r.passed);
        assert_eq!(
            r.reason,
            "Provider does not have functionality for checking function call."
        );
    }

    // openai.test.ts, "is-valid-openai-tools-call assertion".
    #[test]
    fn openai_tools_call_vectors() {
        let tc = Kind::ToolsCall;
        let add_tools = json!({"tools": [{"type": "function", "function": add_functions()["functions"][0].clone()}]});
        let output = json!([{"type": "function", "function": {"arguments": "{\"x\": 10, \"y\": 20}", "name": "add"}}]);
        let r = run(tc, output, "openai:gpt-4o", Some(add_tools.clone()));
        assert!(r.passed, "{}", r.reason);
        assert_eq!(r.reason, "Assertion passed");
        let nested = json!({
            "content": "Let me check the weather...",
            "tool_calls": [{"id": "call_123", "type": "function", "function": {
                "name": "getCurrentTemperature",
                "arguments": "{\"location\": \"San Francisco\", \"unit\": \"Fahrenheit\"}"
            }}]
        });
        assert!(
            run(
                tc,
                nested.clone(),
                "openai:gpt-4o",
                Some(temperature_tools())
            )
            .passed
        );
        let bad = json!([{"type": "function", "function": {"arguments": "{\"x\": \"10\", \"y\": 20}", "name": "add"}}]);
        let r = run(tc, bad, "openai:gpt-4o", Some(add_tools));
        assert!(!r.passed);
        assert!(r.reason.contains("Call to \"add\" does not match schema"));
        let r = run(tc, nested, "openai:gpt-4o", Some(json!({})));
        assert_eq!(
            r.reason,
            "No tools configured in provider, but output contains tool calls"
        );
        let r = run(tc, json!([]), "openai:gpt-4o", Some(temperature_tools()));
        assert_eq!(
            r.reason,
            "OpenAI did not return a valid-looking tools response: []"
        );
        let r = run(
            tc,
            json!("MCP Tool Result (search): found 3"),
            "openai:gpt-4o",
            None,
        );
        assert!(r.passed);
        assert_eq!(r.reason, "MCP tool call succeeded for search");
        let r = run(
            tc,
            json!("MCP Tool Error (search): timed out"),
            "openai:gpt-4o",
            None,
        );
        assert!(!r.passed);
        assert_eq!(r.reason, "MCP tool call failed for search: timed out");
    }

    #[test]
    fn google_function_calls() {
        let fc = Kind::FunctionCall;
        let tools = json!({"tools": [{"functionDeclarations": [
            {"name": "get_weather", "parameters": {"type": "OBJECT", "properties": {"city": {"type": "STRING"}}, "required": ["city"]}},
            {"name": "ping"}
        ]}]});
        let ok = json!([{"functionCall": {"name": "get_weather", "args": {"city": "Paris"}}}]);
        assert!(run(fc, ok, "google:gemini-2.0-flash", Some(tools.clone())).passed);
        let live = json!({"toolCall": {"functionCalls": [{"name": "ping", "args": {}}]}});
        assert!(run(fc, live, "vertex:gemini-2.0-flash", Some(tools.clone())).passed);
        let wrong_type =
            json!(r#"[{"functionCall": {"name": "get_weather", "args": {"city": 3}}}]"#);
        let r = run(
            fc,
            wrong_type,
            "google:gemini-2.0-flash",
            Some(tools.clone()),
        );
        assert!(!r.passed);
        assert!(
            r.reason.starts_with("Call to \"get_weather\":\n"),
            "{}",
            r.reason
        );
        // Parameters declared but no arguments given: promptfoo's rule fails it.
        let empty = json!([{"functionCall": {"name": "get_weather", "args": {}}}]);
        assert!(!run(fc, empty, "google:gemini-2.0-flash", Some(tools.clone())).passed);
        let unknown = json!([{"functionCall": {"name": "nope", "args": {}}}]);
        let r = run(fc, unknown, "google:gemini-2.0-flash", Some(tools.clone()));
        assert_eq!(
            r.reason,
            "Called \"nope\", but there is no function with that name"
        );
        let r = run(
            fc,
            json!("plain words"),
            "google:gemini-2.0-flash",
            Some(tools),
        );
        assert!(
            r.reason
                .starts_with("Google did not return a valid-looking function call")
        );
    }
}
