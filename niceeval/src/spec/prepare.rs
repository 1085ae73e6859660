//! Turning an [`AssertSpec`] into an assertion: validation (every load-time error) and the
//! prepared form cached on the spec, instantiated per evaluation with the [`SpecContext`].

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;

use super::types::{self, Builtin};
use super::{AssertSpec, SpecContext};
use crate::assertion::{Assertion, Expect, Grade, Settings, Subject};
use crate::expect::{self, BoxedAssertion, IntoBoxed, Transform};
use crate::grader::{Input, Message};

/// A validated spec, ready to instantiate.
pub(crate) struct Prepared {
    /// For context-free types, the whole assertion with its settings, built once.
    built: Option<Arc<dyn Assertion + Send + Sync>>,
    base: Base,
    negate: bool,
    threshold: Option<f64>,
    weight: Option<f64>,
    metric: Option<String>,
    transform: Option<Transform>,
    name: Option<String>,
}

enum Base {
    /// A matcher that needs nothing from the context, built once.
    Static(Arc<dyn Assertion + Send + Sync>),
    Cost(f64),
    Latency(f64),
    Code {
        python: bool,
        code: String,
        config: Option<Value>,
    },
    Script {
        command: Vec<String>,
        config: Option<Value>,
    },
    Custom {
        name: String,
        config: Option<Value>,
    },
    Set(Vec<Prepared>),
}

/// Validates and prepares one spec.
pub(crate) fn prepare(spec: &AssertSpec) -> Result<Prepared, String> {
    let normalized = types::normalize(&spec.kind);
    if normalized.is_empty() {
        return Err("the `type` is empty".to_string());
    }
    let (negate, name) = match normalized.strip_prefix("not-") {
        Some(rest) if types::builtin(rest).is_some() || types::builtin(&normalized).is_none() => {
            (true, rest.to_string())
        }
        _ => (false, normalized.clone()),
    };
    let transform = match &spec.transform {
        None => None,
        Some(t) => Some(parse_transform(t)?),
    };
    if let Some(w) = spec.weight {
        if !w.is_finite() || w < 0.0 {
            return Err(format!("`weight` must be a number ≥ 0, got {w}"));
        }
    }
    if let Some(t) = spec.threshold {
        if !t.is_finite() {
            return Err(format!("`threshold` must be a number, got {t}"));
        }
    }
    let mut threshold = spec.threshold;
    let base = match types::builtin(&name) {
        Some(b) => {
            let (base, uses_threshold) = builtin(b, spec)?;
            if !uses_threshold {
                threshold = None;
            }
            base
        }
        None => {
            let custom = name.strip_prefix("custom:").unwrap_or(&name).to_string();
            if custom.is_empty() {
                return Err("`custom:` needs a name".to_string());
            }
            if !custom
                .chars()
                .all(|c| c.is_alphanumeric() || matches!(c, '-' | '_' | '.'))
            {
                return Err(unknown_type(&spec.kind));
            }
            Base::Custom {
                name: custom_name(&spec.kind),
                config: config_with_extra(spec),
            }
        }
    };
    let mut prepared = Prepared {
        built: None,
        base,
        negate,
        threshold,
        weight: spec.weight,
        metric: spec.metric.clone(),
        transform,
        name: spec.name.clone(),
    };
    if let Base::Static(a) = &prepared.base {
        let whole = prepared.wrap(Shared(a.clone()).boxed());
        prepared.built = Some(Arc::from(whole));
    }
    Ok(prepared)
}

/// The custom assertion's file name as written (case kept, `not-`/`custom:` removed).
fn custom_name(kind: &str) -> String {
    let kind = kind.trim();
    let kind = if kind.len() > 4 && kind[..4].eq_ignore_ascii_case("not-") {
        &kind[4..]
    } else {
        kind
    };
    kind.strip_prefix("custom:").unwrap_or(kind).to_string()
}

fn unknown_type(kind: &str) -> String {
    let normalized = types::normalize(kind);
    let names = types::canonical_names();
    let suggestion = names
        .iter()
        .map(|n| (expect::levenshtein_distance(n, &normalized), n))
        .filter(|(d, _)| *d <= 2)
        .min()
        .map(|(_, n)| format!("; did you mean `{n}`?"))
        .unwrap_or_default();
    format!(
        "unknown assertion type `{kind}`{suggestion} Valid types: {} (each also with a `not-` prefix), or the name of a custom assertion in {}/",
        names.join(", "),
        expect::CUSTOM_ASSERTIONS_DIR
    )
}

fn parse_transform(t: &str) -> Result<Transform, String> {
    let t = t.trim();
    let expr = t
        .strip_prefix("json_path:")
        .or_else(|| t.strip_prefix("jsonpath:"))
        .map(str::trim)
        .or_else(|| t.starts_with('$').then_some(t));
    let Some(expr) = expr else {
        return Err(format!(
            "unsupported transform {}: niceeval supports JSONPath transforms, written `json_path:$.field` or `$.field` (JavaScript transform expressions are not run)",
            crate::excerpt::quote(t)
        ));
    };
    let transform = expect::json_path(expr);
    match transform.invalid() {
        Some(e) => Err(format!("invalid JSONPath `{expr}` in `transform`: {e}")),
        None => Ok(transform),
    }
}

fn config_with_extra(spec: &AssertSpec) -> Option<Value> {
    if spec.extra.is_empty() {
        return spec.config.clone();
    }
    let mut map = match &spec.config {
        Some(Value::Object(m)) => m.clone(),
        Some(other) => return Some(other.clone()),
        None => serde_json::Map::new(),
    };
    for (k, v) in &spec.extra {
        map.entry(k.clone()).or_insert_with(|| v.clone());
    }
    Some(Value::Object(map))
}

fn required<'a>(spec: &'a AssertSpec, what: &str) -> Result<&'a Value, String> {
    match &spec.value {
        None | Some(Value::Null) => Err(format!("needs a `value` ({what})")),
        Some(v) => Ok(v),
    }
}

/// A non-empty string (numbers are read as their text).
fn text_value(spec: &AssertSpec) -> Result<String, String> {
    match required(spec, "a non-empty string")? {
        Value::String(s) if s.is_empty() => Err(
            "`value` is an empty string, which every output contains; give the text to look for"
                .to_string(),
        ),
        Value::String(s) => Ok(s.clone()),
        Value::Number(n) => Ok(n.to_string()),
        other => Err(format!("`value` must be a string or a number, got {other}")),
    }
}

/// A list of strings, or a comma-separated string.
fn list_value(spec: &AssertSpec) -> Result<Vec<String>, String> {
    match required(spec, "a list of strings")? {
        Value::Array(items) => items
            .iter()
            .enumerate()
            .map(|(i, v)| match v {
                Value::String(s) => Ok(s.clone()),
                Value::Number(n) => Ok(n.to_string()),
                Value::Bool(b) => Ok(b.to_string()),
                other => Err(format!("`value[{i}]` must be a string, got {other}")),
            })
            .collect(),
        Value::String(s) => Ok(split_commas(s)),
        other => Err(format!(
            "`value` must be a list of strings or a comma-separated string, got {other}"
        )),
    }
}

/// Splits on commas outside double quotes, trimming each item and removing its quotes.
fn split_commas(s: &str) -> Vec<String> {
    let mut items = Vec::new();
    let mut current = String::new();
    let mut quoted = false;
    for c in s.chars() {
        match c {
            '"' => quoted = !quoted,
            ',' if !quoted => items.push(std::mem::take(&mut current)),
            _ => current.push(c),
        }
    }
    items.push(current);
    items
        .into_iter()
        .map(|i| i.trim().to_string())
        .filter(|i| !i.is_empty())
        .collect()
}

fn schema_value(spec: &AssertSpec) -> Result<Option<Value>, String> {
    let schema = match &spec.value {
        None | Some(Value::Null) => return Ok(None),
        Some(Value::String(s)) if s.trim().is_empty() => return Ok(None),
        Some(Value::String(s)) if s.trim_start().starts_with("file://") => {
            return Err("file:// schemas are not supported; put the schema inline".to_string())
        }
        Some(Value::String(s)) => yaml_serde::from_str::<Value>(s)
            .map_err(|e| format!("`value` is not a JSON Schema (as YAML or JSON): {e}"))?,
        Some(v @ (Value::Object(_) | Value::Bool(_))) => v.clone(),
        Some(other) => return Err(format!("`value` must be a JSON Schema object, got {other}")),
    };
    if let Some(e) = crate::expect::schema_problem(&schema) {
        return Err(format!("invalid JSON Schema: {e}"));
    }
    Ok(Some(schema))
}

fn boxed<A: Assertion + Send + Sync + 'static>(a: A) -> Base {
    Base::Static(Arc::new(a))
}

/// The base assertion of a built-in type, and whether `threshold` is the score threshold.
fn builtin(b: Builtin, spec: &AssertSpec) -> Result<(Base, bool), String> {
    Ok(match b {
        Builtin::Contains => (boxed(expect::includes(text_value(spec)?)), true),
        Builtin::IContains => (boxed(expect::icontains(text_value(spec)?)), true),
        Builtin::ContainsAll => (boxed(expect::contains_all(list_value(spec)?)), true),
        Builtin::ContainsAny => (boxed(expect::contains_any(list_value(spec)?)), true),
        Builtin::IContainsAll => (boxed(expect::icontains_all(list_value(spec)?)), true),
        Builtin::IContainsAny => (boxed(expect::icontains_any(list_value(spec)?)), true),
        Builtin::StartsWith => (boxed(expect::starts_with(text_value(spec)?)), true),
        Builtin::EndsWith => (boxed(expect::ends_with(text_value(spec)?)), true),
        Builtin::Regex => {
            let pattern = match required(spec, "a regular expression")? {
                Value::String(s) => s.clone(),
                other => {
                    return Err(format!(
                        "`value` must be a regular expression string, got {other}"
                    ))
                }
            };
            let re = expect::regex(pattern.as_str());
            if let Some(e) = re.invalid() {
                // The regex crate draws the pattern with a caret over several lines; keep the
                // message on one line.
                let short = e
                    .lines()
                    .rev()
                    .find_map(|l| l.trim_start().strip_prefix("error:"))
                    .map_or(e, str::trim);
                return Err(format!("invalid regular expression /{pattern}/: {short}"));
            }
            (boxed(re), true)
        }
        Builtin::Equals => {
            let value = required(spec, "the expected value")?.clone();
            let json_mode = spec
                .config
                .as_ref()
                .and_then(|c| c.get("mode"))
                .and_then(Value::as_str)
                == Some("json");
            let value = match value {
                Value::String(s) if json_mode => serde_json::from_str(&s)
                    .map_err(|e| format!("config.mode is json but `value` is not JSON: {e}"))?,
                v => v,
            };
            (boxed(expect::equals(value)), true)
        }
        Builtin::IsJson => (boxed(expect::is_json(schema_value(spec)?)), true),
        Builtin::ContainsJson => (boxed(expect::contains_json(schema_value(spec)?)), true),
        Builtin::Levenshtein => {
            let reference = reference_text(spec)?;
            let max = match spec.threshold {
                None => expect::DEFAULT_MAX_DISTANCE,
                Some(t) if t >= 0.0 => t.floor() as usize,
                Some(t) => {
                    return Err(format!(
                        "`threshold` (the maximum distance) must be ≥ 0, got {t}"
                    ))
                }
            };
            (
                boxed(expect::levenshtein(reference).max_distance(max)),
                false,
            )
        }
        Builtin::Similarity => (boxed(expect::similarity(reference_text(spec)?)), true),
        Builtin::Bleu => {
            let refs = match required(spec, "the reference text")? {
                Value::String(s) => vec![s.clone()],
                Value::Array(items) => items
                    .iter()
                    .map(|v| {
                        v.as_str()
                            .map(str::to_string)
                            .ok_or_else(|| format!("every reference must be a string, got {v}"))
                    })
                    .collect::<Result<Vec<_>, _>>()?,
                other => {
                    return Err(format!(
                        "`value` must be a reference string or a list of them, got {other}"
                    ))
                }
            };
            if refs.is_empty() {
                return Err("`value` has no reference text".to_string());
            }
            (boxed(expect::bleu(refs)), true)
        }
        Builtin::RougeN => {
            let n = match spec.config.as_ref().and_then(|c| c.get("n")) {
                None => 1,
                Some(v) => match v.as_u64() {
                    Some(n @ 1..=9) => n as usize,
                    _ => {
                        return Err(format!(
                            "config.n must be a whole number from 1 to 9, got {v}"
                        ))
                    }
                },
            };
            let n = if types::normalize(&spec.kind).ends_with("rouge-1") {
                1
            } else {
                n
            };
            (boxed(expect::rouge_n(reference_text(spec)?).n(n)), true)
        }
        Builtin::WordCount => (boxed(expect::word_count(word_bounds(spec)?)), true),
        Builtin::Cost => (Base::Cost(budget(spec, "USD")?), false),
        Builtin::Latency => (Base::Latency(budget(spec, "milliseconds")?), false),
        Builtin::JavaScript | Builtin::Python => {
            let code = match required(spec, "code, or file://path")? {
                Value::String(s) if !s.trim().is_empty() => s.clone(),
                other => {
                    return Err(format!(
                        "`value` must be code or a file:// reference, got {other}"
                    ))
                }
            };
            (
                Base::Code {
                    python: b == Builtin::Python,
                    code,
                    config: config_with_extra(spec),
                },
                true,
            )
        }
        Builtin::Script => {
            let command = match spec.command.as_ref().or(spec.value.as_ref()) {
                Some(Value::Array(parts)) => parts
                    .iter()
                    .map(|p| match p {
                        Value::String(s) => Ok(s.clone()),
                        Value::Number(n) => Ok(n.to_string()),
                        other => Err(format!("every part of `command` must be a string, got {other}")),
                    })
                    .collect::<Result<Vec<_>, _>>()?,
                Some(Value::String(s)) if !s.trim().is_empty() => {
                    vec!["sh".to_string(), "-c".to_string(), s.clone()]
                }
                _ => {
                    return Err(
                        "needs a `command`: a list such as [python3, graders/check.py], or a shell string"
                            .to_string(),
                    )
                }
            };
            if command.is_empty() {
                return Err("`command` is an empty list".to_string());
            }
            (
                Base::Script {
                    command,
                    config: config_with_extra(spec),
                },
                true,
            )
        }
        Builtin::AssertSet => {
            let members = spec
                .assert
                .as_ref()
                .ok_or("needs an `assert` list of member assertions")?;
            let prepared = members
                .iter()
                .enumerate()
                .map(|(i, m)| {
                    prepare(m).map_err(|e| format!("member assert[{i}] (type `{}`): {e}", m.kind))
                })
                .collect::<Result<Vec<_>, _>>()?;
            (Base::Set(prepared), true)
        }
    })
}

fn reference_text(spec: &AssertSpec) -> Result<String, String> {
    match required(spec, "the reference text")? {
        Value::String(s) => Ok(s.clone()),
        Value::Number(n) => Ok(n.to_string()),
        other => Err(format!("`value` must be the reference text, got {other}")),
    }
}

fn word_bounds(spec: &AssertSpec) -> Result<expect::WordBounds, String> {
    let count = |v: &Value, what: &str| -> Result<usize, String> {
        v.as_u64()
            .map(|n| n as usize)
            .ok_or_else(|| format!("{what} must be a whole number ≥ 0, got {v}"))
    };
    let bounds = match required(spec, "a word count, or {min, max}")? {
        Value::Object(map) => {
            if let Some(k) = map.keys().find(|k| *k != "min" && *k != "max") {
                return Err(format!("unknown key `{k}` in `value`; use `min` and `max`"));
            }
            let min = map.get("min").map(|v| count(v, "`min`")).transpose()?;
            let max = map.get("max").map(|v| count(v, "`max`")).transpose()?;
            if min.is_none() && max.is_none() {
                return Err("`value` needs `min`, `max` or both".to_string());
            }
            expect::WordBounds {
                min: min.unwrap_or(0),
                max,
            }
        }
        Value::String(s) => expect::WordBounds::from(s.trim().parse::<usize>().map_err(|_| {
            format!(
                "`value` must be a whole number, got {}",
                crate::excerpt::quote(s)
            )
        })?),
        v => expect::WordBounds::from(count(v, "`value`")?),
    };
    if let Some(max) = bounds.max {
        if bounds.min > max {
            return Err(format!("`min` {} is greater than `max` {max}", bounds.min));
        }
    }
    Ok(bounds)
}

fn budget(spec: &AssertSpec, unit: &str) -> Result<f64, String> {
    let limit = spec
        .threshold
        .or_else(|| spec.value.as_ref().and_then(Value::as_f64))
        .ok_or_else(|| format!("needs a `threshold`: the budget in {unit}"))?;
    if limit.is_nan() || limit < 0.0 {
        return Err(format!("the budget must be ≥ 0, got {limit}"));
    }
    Ok(limit)
}

/// An assertion that checks a fixed measurement instead of the output.
struct Measured<A> {
    inner: A,
    value: Option<f64>,
    what: &'static str,
}

impl<A: Assertion> Assertion for Measured<A> {
    fn describe(&self) -> String {
        self.inner.describe()
    }
    fn settings(&self) -> Settings {
        self.inner.settings()
    }
    fn evaluate(&self, _output: &Subject<'_>) -> Grade {
        match self.value {
            Some(v) => self.inner.evaluate(&Subject::Json(std::borrow::Cow::Owned(Value::from(v)))),
            None => Grade::error(format!(
                "no {} in the context: set SpecContext::{} (Runsight reads run metrics; promptfoo needs a provider that reports them)",
                self.what,
                if self.what == "cost" { "cost_usd" } else { "latency_ms" }
            )),
        }
    }
}

/// An assertion shared between evaluations of a cached spec.
struct Shared(Arc<dyn Assertion + Send + Sync>);

impl Assertion for Shared {
    fn describe(&self) -> String {
        self.0.describe()
    }
    fn settings(&self) -> Settings {
        self.0.settings()
    }
    fn evaluate(&self, value: &Subject<'_>) -> Grade {
        self.0.evaluate(value)
    }
}

/// An assertion shown under another name.
struct Named<A> {
    inner: A,
    name: String,
}

impl<A: Assertion> Assertion for Named<A> {
    fn describe(&self) -> String {
        self.name.clone()
    }
    fn settings(&self) -> Settings {
        self.inner.settings()
    }
    fn evaluate(&self, value: &Subject<'_>) -> Grade {
        self.inner.evaluate(value)
    }
}

fn grader_payload(context: &SpecContext, config: &Option<Value>) -> Input {
    let mut input = Input::default();
    input.input = context
        .input
        .iter()
        .map(|t| Message::new("user", t.clone()))
        .collect();
    input.expected_output = context
        .expected_output
        .iter()
        .map(|t| Message::new("assistant", t.clone()))
        .collect();
    input.messages = context.messages.clone();
    input.criteria = context.criteria.clone();
    input.trace_summary = context.trace_summary.clone();
    input.token_usage = context.token_usage;
    input.cost_usd = context.cost_usd;
    input.duration_ms = context.latency_ms;
    input.workspace_path = context
        .workspace_path
        .as_ref()
        .map(|p| p.to_string_lossy().into_owned());
    input.config = config.clone();
    input.vars = context.vars.clone();
    input
}

impl Prepared {
    /// Checks that a custom assertion (here or in a set) exists, from `base_dir`.
    pub(crate) fn check_custom(&self, base_dir: Option<&Path>) -> Result<(), String> {
        match &self.base {
            Base::Custom { name, .. } => {
                let start = match base_dir {
                    Some(dir) => dir.to_path_buf(),
                    None => std::env::current_dir().map_err(|e| e.to_string())?,
                };
                let found = expect::CustomAssertions::discover(&start);
                if found.entries.contains_key(name) {
                    Ok(())
                } else if found.dir.is_none() {
                    Err(format!(
                        "{} (no {}/ folder was found from {})",
                        unknown_type(name),
                        expect::CUSTOM_ASSERTIONS_DIR,
                        start.display()
                    ))
                } else {
                    Err(format!(
                        "{}; {}",
                        unknown_type(name),
                        crate::expect::custom_missing_message(name, &start, &found)
                    ))
                }
            }
            Base::Set(members) => members.iter().try_for_each(|m| m.check_custom(base_dir)),
            _ => Ok(()),
        }
    }

    /// Builds the assertion for one evaluation.
    pub(crate) fn instantiate(&self, context: &SpecContext) -> BoxedAssertion {
        if let Some(built) = &self.built {
            return Shared(built.clone()).boxed();
        }
        let base: BoxedAssertion = match &self.base {
            Base::Static(a) => Shared(a.clone()).boxed(),
            Base::Cost(limit) => Measured {
                inner: expect::cost(*limit),
                value: context.cost_usd,
                what: "cost",
            }
            .boxed(),
            Base::Latency(limit) => Measured {
                inner: expect::latency(*limit),
                value: context.latency_ms,
                what: "latency",
            }
            .boxed(),
            Base::Code {
                python,
                code,
                config,
            } => {
                let mut a = if *python {
                    expect::python(code.clone())
                } else {
                    expect::javascript(code.clone())
                };
                a = a
                    .vars(serde_json::to_value(&context.vars).unwrap_or(Value::Null))
                    .config(config.clone().unwrap_or_else(|| serde_json::json!({})));
                if let Some(prompt) = &context.prompt {
                    a = a.prompt(prompt.clone());
                }
                if let Some(dir) = &context.base_dir {
                    a = a.base_dir(dir.clone());
                }
                if let Some(t) = context.timeout {
                    a = a.timeout(t);
                }
                a.boxed()
            }
            Base::Script { command, config } => {
                let mut s =
                    expect::script(command.clone()).payload(grader_payload(context, config));
                if let Some(dir) = &context.base_dir {
                    s = s.cwd(dir.clone());
                }
                s = s.timeout(context.timeout.unwrap_or(expect::DEFAULT_GRADER_TIMEOUT));
                s.boxed()
            }
            Base::Custom { name, config } => {
                let mut c = expect::custom(name.clone()).payload(grader_payload(context, config));
                if let Some(dir) = &context.base_dir {
                    c = c.from_dir(dir.clone());
                }
                c = c.timeout(context.timeout.unwrap_or(Duration::from_secs(60)));
                c.boxed()
            }
            Base::Set(members) => {
                expect::all_of(members.iter().map(|m| m.instantiate(context))).boxed()
            }
        };
        self.wrap(base)
    }

    /// Applies threshold, `not-`, transform, weight, metric and name to a base assertion.
    fn wrap(&self, base: BoxedAssertion) -> BoxedAssertion {
        let mut a: BoxedAssertion = match self.threshold {
            Some(t) => Expect::new(base).at_least(t).gate().boxed(),
            None => Expect::new(base).gate().boxed(),
        };
        if self.negate {
            a = expect::not(a).boxed();
        }
        let mut outer = Expect::new(a);
        if let Some(t) = &self.transform {
            outer = outer.transform(t.clone());
        }
        if let Some(w) = self.weight {
            outer = outer.weight(w);
        }
        if let Some(m) = &self.metric {
            outer = outer.metric(m.clone());
        }
        match &self.name {
            Some(name) => Named {
                inner: outer,
                name: name.clone(),
            }
            .boxed(),
            None => outer.boxed(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commas_and_quotes() {
        assert_eq!(split_commas("a, b,c"), ["a", "b", "c"]);
        assert_eq!(split_commas("\"a, b\", c"), ["a, b", "c"]);
        assert!(split_commas("").is_empty());
    }

    #[test]
    fn custom_names_keep_case() {
        assert_eq!(custom_name("not-Min_Words"), "Min_Words");
        assert_eq!(custom_name("custom:tone_check"), "tone_check");
    }
}
