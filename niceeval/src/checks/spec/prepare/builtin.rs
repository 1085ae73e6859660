//! The built-in assertion types as data: reading and validating each type's `value`,
//! `threshold` and `config`, and building its matcher.

use std::borrow::Cow;
use std::sync::Arc;

use serde_json::Value;

use super::{Base, prepare, run_facts};
use crate::base::assertion::{Assertion, Grade, Settings, Subject};
use crate::checks::expect;
use crate::checks::expect::type_names::{self as types, Builtin};
use crate::checks::spec::values::{js_string, list_value, required, text_value};
use crate::checks::spec::{AssertSpec, ItemProblem};

pub(super) fn config_with_extra(spec: &AssertSpec) -> Option<Value> {
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

fn schema_value(spec: &AssertSpec) -> Result<Option<Value>, ItemProblem> {
    let schema = match &spec.value {
        None | Some(Value::Null) => return Ok(None),
        Some(Value::String(s)) if s.trim().is_empty() => return Ok(None),
        Some(Value::String(s)) if s.trim_start().starts_with("file://") => {
            return Err(ItemProblem::invalid(
                "file:// schemas are not supported; put the schema inline",
            ));
        }
        Some(Value::String(s)) => schema_text(s)?,
        Some(v @ (Value::Object(_) | Value::Bool(_))) => v.clone(),
        Some(other) => {
            return Err(ItemProblem::invalid(format!(
                "`value` must be a JSON Schema object, got {other}"
            )));
        }
    };
    check_schema(&schema)?;
    Ok(Some(schema))
}

#[cfg(feature = "json-schema")]
fn check_schema(schema: &Value) -> Result<(), ItemProblem> {
    crate::checks::expect::check_schema(schema).map_err(ItemProblem::Schema)
}

#[cfg(not(feature = "json-schema"))]
fn check_schema(_schema: &Value) -> Result<(), ItemProblem> {
    Err(ItemProblem::invalid(
        "a JSON Schema `value` needs niceeval's `json-schema` feature; enable it in Cargo.toml (it is on by default), or leave out `value` to check only that the output is JSON",
    ))
}

/// A schema written as text: YAML (JSON is YAML too), or only JSON without the `yaml` feature.
#[cfg(feature = "yaml")]
fn schema_text(s: &str) -> Result<Value, ItemProblem> {
    yaml_serde::from_str::<Value>(s).map_err(ItemProblem::SchemaText)
}

#[cfg(not(feature = "yaml"))]
fn schema_text(s: &str) -> Result<Value, ItemProblem> {
    serde_json::from_str::<Value>(s).map_err(ItemProblem::SchemaText)
}

fn boxed<A: Assertion + Send + Sync + 'static>(a: A) -> Base {
    Base::Static(Arc::new(a))
}

/// The base assertion of a built-in type, and whether `threshold` is the score threshold.
///
/// As in promptfoo, pass/fail types ignore `threshold` (`contains` with `threshold: 0` still
/// fails when the text is absent); graded types (similarity, BLEU, ROUGE, code, scripts, sets)
/// pass at score ≥ threshold; `levenshtein`, `cost` and `latency` read it as their limit.
pub(super) fn builtin(b: Builtin, spec: &AssertSpec) -> Result<(Base, bool), ItemProblem> {
    let form = match b {
        Builtin::Contains
        | Builtin::IContains
        | Builtin::ContainsAll
        | Builtin::ContainsAny
        | Builtin::IContainsAll
        | Builtin::IContainsAny
        | Builtin::Equals => unicode_form(spec)?,
        _ => None,
    };
    let (base, uses_threshold) = match form {
        None => builtin_base(b, spec, None)?,
        Some(form) => match builtin_base(b, spec, Some(form))? {
            (Base::Static(inner), uses) => (boxed(Normalized { inner, form }), uses),
            other => other,
        },
    };
    Ok((base, uses_threshold))
}

/// Whether the item's matcher reads its own `not-` prefix (the item is then not wrapped in
/// `not`): `is-refusal`, whose empty-reply rule scores 0 either way.
pub(super) fn applies_not_itself(b: Builtin) -> bool {
    matches!(b, Builtin::IsRefusal)
}

/// Whether the item's type carries a `not-` prefix.
fn negated(spec: &AssertSpec) -> bool {
    types::normalize(&spec.kind).starts_with("not-")
}

/// The reference texts of `bleu` and `gleu`: one string, or a list of them.
fn references(spec: &AssertSpec) -> Result<Vec<String>, ItemProblem> {
    let refs = match required(spec, "the reference text")? {
        Value::String(s) => vec![s.clone()],
        Value::Array(items) => items
            .iter()
            .map(|v| {
                v.as_str().map(str::to_string).ok_or_else(|| {
                    ItemProblem::invalid(format!("every reference must be a string, got {v}"))
                })
            })
            .collect::<Result<Vec<_>, _>>()?,
        other => {
            return Err(ItemProblem::invalid(format!(
                "`value` must be a reference string or a list of them, got {other}"
            )));
        }
    };
    if refs.is_empty() {
        return Err(ItemProblem::invalid("`value` has no reference text"));
    }
    Ok(refs)
}

/// `meteor`'s `alpha`, `beta` and `gamma`, keys of the item beside `value` (promptfoo's
/// defaults 0.9, 3 and 0.5 when absent or null).
fn meteor_parameters(spec: &AssertSpec) -> Result<expect::meteor::Parameters, ItemProblem> {
    let mut p = expect::meteor::Parameters::default();
    for (key, slot) in [
        ("alpha", &mut p.alpha),
        ("beta", &mut p.beta),
        ("gamma", &mut p.gamma),
    ] {
        match spec.extra.get(key) {
            None | Some(Value::Null) => {}
            Some(v) => {
                *slot = v.as_f64().filter(|f| f.is_finite()).ok_or_else(|| {
                    ItemProblem::invalid(format!("`{key}` must be a number, got {v}"))
                })?;
            }
        }
    }
    Ok(p)
}

fn builtin_base(
    b: Builtin,
    spec: &AssertSpec,
    form: Option<UnicodeForm>,
) -> Result<(Base, bool), ItemProblem> {
    let text = |s: String| match form {
        Some(f) => f.apply(&s),
        None => s,
    };
    let list = |items: Vec<String>| items.into_iter().map(text).collect::<Vec<_>>();
    Ok(match b {
        Builtin::Contains => (boxed(expect::includes(text(text_value(spec)?))), false),
        Builtin::IContains => (boxed(expect::icontains(text(text_value(spec)?))), false),
        Builtin::ContainsAll => (boxed(expect::contains_all(list(list_value(spec)?))), false),
        Builtin::ContainsAny => (boxed(expect::contains_any(list(list_value(spec)?))), false),
        Builtin::IContainsAll => (boxed(expect::icontains_all(list(list_value(spec)?))), false),
        Builtin::IContainsAny => (boxed(expect::icontains_any(list(list_value(spec)?))), false),
        Builtin::StartsWith => (boxed(expect::starts_with(text_value(spec)?)), false),
        Builtin::EndsWith => (boxed(expect::ends_with(text_value(spec)?)), false),
        Builtin::Regex => {
            let pattern = match required(spec, "a regular expression")? {
                Value::String(s) => s.clone(),
                other => {
                    return Err(ItemProblem::invalid(format!(
                        "`value` must be a regular expression string, got {other}"
                    )));
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
                return Err(ItemProblem::Regex {
                    pattern,
                    message: short.to_string(),
                });
            }
            (boxed(re), false)
        }
        Builtin::Equals => {
            let value = required(spec, "the expected value")?.clone();
            let json_mode = equals_json_mode(spec)?;
            let value = match value {
                Value::String(s) if json_mode => {
                    serde_json::from_str(&s).map_err(ItemProblem::ValueNotJson)?
                }
                // promptfoo compares a scalar as text: `String(value) === output`.
                v => js_string(&v).map_or(v, |s| Value::String(text(s))),
            };
            (boxed(expect::equals(value)), false)
        }
        Builtin::IsJson => (boxed(expect::is_json(schema_value(spec)?)), false),
        Builtin::ContainsJson => (boxed(expect::contains_json(schema_value(spec)?)), false),
        Builtin::Levenshtein => {
            let reference = reference_text(spec)?;
            let max = match spec.threshold {
                None => expect::DEFAULT_MAX_DISTANCE,
                Some(t) if t >= 0.0 => t.floor() as usize,
                Some(t) => {
                    return Err(ItemProblem::invalid(format!(
                        "`threshold` (the maximum distance) must be ≥ 0, got {t}"
                    )));
                }
            };
            (
                boxed(expect::levenshtein(reference).max_distance(max)),
                false,
            )
        }
        Builtin::Similarity => (boxed(expect::similarity(reference_text(spec)?)), true),
        Builtin::Bleu => (boxed(expect::bleu(references(spec)?)), true),
        Builtin::Gleu => (
            boxed(expect::gleu::Gleu {
                references: references(spec)?,
            }),
            true,
        ),
        Builtin::RougeN => {
            let n = match spec.config.as_ref().and_then(|c| c.get("n")) {
                None => 1,
                Some(v) => match v.as_u64() {
                    Some(n @ 1..=9) => n as usize,
                    _ => {
                        return Err(ItemProblem::invalid(format!(
                            "config.n must be a whole number from 1 to 9, got {v}"
                        )));
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
        Builtin::WordCount => (boxed(expect::word_count(word_bounds(spec)?)), false),
        Builtin::Cost => (Base::Cost(budget(spec, "USD")?), false),
        Builtin::Latency => (Base::Latency(budget(spec, "milliseconds")?), false),
        #[cfg(not(feature = "inline-code"))]
        Builtin::JavaScript | Builtin::Python => {
            return Err(ItemProblem::invalid(format!(
                "the `{}` assertion type needs niceeval's `inline-code` feature; enable it in Cargo.toml (it is on by default)",
                if b == Builtin::Python {
                    "python"
                } else {
                    "javascript"
                }
            )));
        }
        #[cfg(feature = "inline-code")]
        Builtin::JavaScript | Builtin::Python => {
            let code = match required(spec, "code, or file://path")? {
                Value::String(s) if !s.trim().is_empty() => s.clone(),
                other => {
                    return Err(ItemProblem::invalid(format!(
                        "`value` must be code or a file:// reference, got {other}"
                    )));
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
                        other => Err(ItemProblem::invalid(format!(
                            "every part of `command` must be a string, got {other}"
                        ))),
                    })
                    .collect::<Result<Vec<_>, _>>()?,
                Some(Value::String(s)) if !s.trim().is_empty() => {
                    vec!["sh".to_string(), "-c".to_string(), s.clone()]
                }
                _ => {
                    return Err(ItemProblem::invalid(
                        "needs a `command`: a list such as [python3, graders/check.py], or a shell string",
                    ));
                }
            };
            if command.is_empty() {
                return Err(ItemProblem::invalid("`command` is an empty list"));
            }
            // `cwd`: where the command runs, relative to the spec's directory (AgentV's
            // code graders).
            let cwd = match spec.extra.get("cwd") {
                None => None,
                Some(Value::String(dir)) => Some(std::path::PathBuf::from(dir)),
                Some(other) => {
                    return Err(ItemProblem::invalid(format!(
                        "`cwd` is a directory (text), got {other}"
                    )));
                }
            };
            let mut config = config_with_extra(spec);
            if let Some(Value::Object(map)) = &mut config {
                map.remove("cwd");
                if map.is_empty() && spec.config.is_none() {
                    config = None;
                }
            }
            (
                Base::Script {
                    command,
                    config,
                    cwd,
                },
                true,
            )
        }
        Builtin::IsRefusal => (
            boxed(expect::refusal::IsRefusal {
                inverse: negated(spec),
            }),
            false,
        ),
        Builtin::ContainsHtml => (boxed(expect::html::ContainsHtml), false),
        Builtin::IsHtml => (boxed(expect::html::IsHtml), false),
        Builtin::Meteor => (
            boxed(expect::meteor::Meteor {
                references: references(spec)?,
                parameters: meteor_parameters(spec)?,
            }),
            true,
        ),
        Builtin::ContainsXml | Builtin::IsXml => {
            let required = expect::xml::required_elements(spec.value.as_ref())
                .map_err(|e| ItemProblem::invalid(e.to_string()))?;
            (
                boxed(expect::xml::Xml {
                    anywhere: b == Builtin::ContainsXml,
                    required: required.unwrap_or_default(),
                }),
                false,
            )
        }
        Builtin::ContainsSql | Builtin::IsSql => (
            boxed(expect::sql::Sql {
                anywhere: b == Builtin::ContainsSql,
                options: expect::sql::sql_options(spec.value.as_ref())
                    .map_err(|e| ItemProblem::invalid(e.to_string()))?,
            }),
            false,
        ),
        Builtin::AssertSet => {
            let members = spec.assert.as_ref().ok_or_else(|| {
                ItemProblem::invalid("needs an `assert` list of member assertions")
            })?;
            let prepared = members
                .iter()
                .enumerate()
                .map(|(i, m)| {
                    prepare(m).map_err(|e| ItemProblem::Member {
                        index: i,
                        kind: m.kind.clone(),
                        source: Box::new(e),
                    })
                })
                .collect::<Result<Vec<_>, _>>()?;
            (Base::Set(prepared), true)
        }
        Builtin::FinishReason
        | Builtin::SkillUsed
        | Builtin::IsValidFunctionCall
        | Builtin::IsValidOpenAiFunctionCall
        | Builtin::IsValidOpenAiToolsCall
        | Builtin::ToolCallF1
        | Builtin::Perplexity
        | Builtin::PerplexityScore
        | Builtin::Guardrails
        | Builtin::Webhook
        | Builtin::Classifier
        | Builtin::Moderation
        | Builtin::Pi
        | Builtin::TraceSpanCount
        | Builtin::TraceSpanDuration
        | Builtin::TraceErrorSpans => (Base::Facts(run_facts::prepare(b, spec)?), false),
    })
}

/// A Unicode normalization form: promptfoo's `normalizeUnicode` on `equals` and the
/// `contains` types (`true` is NFC; the compatibility forms only when named, as they fold
/// `x²` into `x2`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum UnicodeForm {
    Nfc,
    Nfd,
    Nfkc,
    Nfkd,
}

impl UnicodeForm {
    fn apply(self, text: &str) -> String {
        use unicode_normalization::UnicodeNormalization;
        match self {
            UnicodeForm::Nfc => text.nfc().collect(),
            UnicodeForm::Nfd => text.nfd().collect(),
            UnicodeForm::Nfkc => text.nfkc().collect(),
            UnicodeForm::Nfkd => text.nfkd().collect(),
        }
    }
}

/// The item's `normalizeUnicode` (or `normalize_unicode`): absent or `false` compares the
/// text as it is.
fn unicode_form(spec: &AssertSpec) -> Result<Option<UnicodeForm>, ItemProblem> {
    let value = spec
        .extra
        .get("normalizeUnicode")
        .or_else(|| spec.extra.get("normalize_unicode"));
    Ok(match value {
        None | Some(Value::Null) | Some(Value::Bool(false)) => None,
        Some(Value::Bool(true)) => Some(UnicodeForm::Nfc),
        Some(Value::String(form)) => Some(match form.as_str() {
            "NFC" => UnicodeForm::Nfc,
            "NFD" => UnicodeForm::Nfd,
            "NFKC" => UnicodeForm::Nfkc,
            "NFKD" => UnicodeForm::Nfkd,
            _ => {
                return Err(ItemProblem::invalid(format!(
                    "`normalizeUnicode` is true, false, NFC, NFD, NFKC or NFKD, got {}",
                    crate::base::excerpt::quote(form)
                )));
            }
        }),
        Some(other) => {
            return Err(ItemProblem::invalid(format!(
                "`normalizeUnicode` is true, false, NFC, NFD, NFKC or NFKD, got {other}"
            )));
        }
    })
}

/// A text matcher that sees the output in a Unicode form (its value was put in the same form
/// when it was read).
struct Normalized {
    inner: Arc<dyn Assertion + Send + Sync>,
    form: UnicodeForm,
}

impl Assertion for Normalized {
    fn describe(&self) -> String {
        self.inner.describe()
    }
    fn settings(&self) -> Settings {
        self.inner.settings()
    }
    fn evaluate(&self, value: &Subject<'_>) -> Grade {
        match value {
            Subject::Text(text) => self
                .inner
                .evaluate(&Subject::Text(Cow::Owned(self.form.apply(text)))),
            other => self.inner.evaluate(other),
        }
    }
}

/// Whether `equals` compares as JSON: Runsight's `config.mode`, `json` or `string` (the
/// default); any other mode is a load-time error, as Runsight refuses it.
fn equals_json_mode(spec: &AssertSpec) -> Result<bool, ItemProblem> {
    match spec.config.as_ref().and_then(|c| c.get("mode")) {
        None | Some(Value::Null) => Ok(false),
        Some(Value::String(mode)) if mode == "json" => Ok(true),
        Some(Value::String(mode)) if mode == "string" => Ok(false),
        Some(other) => Err(ItemProblem::invalid(format!(
            "unsupported `config.mode` {other} for `equals`; use `json` (compare as JSON) or `string` (exact text, the default)"
        ))),
    }
}

/// The reference text of `levenshtein`, `rouge-n` and `similarity`: a string, as promptfoo
/// requires (a number is an error there too: write it quoted).
fn reference_text(spec: &AssertSpec) -> Result<String, ItemProblem> {
    match required(spec, "the reference text")? {
        Value::String(s) => Ok(s.clone()),
        other => Err(ItemProblem::invalid(format!(
            "`value` must be the reference text (a string; quote a number), got {other}"
        ))),
    }
}

fn word_bounds(spec: &AssertSpec) -> Result<expect::WordBounds, ItemProblem> {
    // Whole numbers, also written as floats (`3.0`, as YAML and JSON allow).
    let count = |v: &Value, what: &str| -> Result<usize, ItemProblem> {
        v.as_u64()
            .or_else(|| {
                v.as_f64()
                    .filter(|f| f.is_finite() && *f >= 0.0 && f.fract() == 0.0)
                    .map(|f| f as u64)
            })
            .map(|n| n as usize)
            .ok_or_else(|| {
                ItemProblem::invalid(format!("{what} must be a whole number ≥ 0, got {v}"))
            })
    };
    // A bound may be fractional, as in promptfoo (`count >= 1.5`): rounded inwards.
    let bound = |v: &Value, what: &str, round: fn(f64) -> f64| -> Result<usize, ItemProblem> {
        match v.as_f64() {
            Some(f) if f.is_finite() && f >= 0.0 => Ok(round(f) as usize),
            _ => Err(ItemProblem::invalid(format!(
                "{what} must be a number ≥ 0, got {v}"
            ))),
        }
    };
    let bounds = match required(spec, "a word count, or {min, max}")? {
        Value::Object(map) => {
            if let Some(k) = map.keys().find(|k| *k != "min" && *k != "max") {
                return Err(ItemProblem::invalid(format!(
                    "unknown key `{k}` in `value`; use `min` and `max`"
                )));
            }
            let min = map
                .get("min")
                .map(|v| bound(v, "`min`", f64::ceil))
                .transpose()?;
            let max = map
                .get("max")
                .map(|v| bound(v, "`max`", f64::floor))
                .transpose()?;
            if min.is_none() && max.is_none() {
                return Err(ItemProblem::invalid("`value` needs `min`, `max` or both"));
            }
            expect::WordBounds {
                min: min.unwrap_or(0),
                max,
            }
        }
        Value::String(s) => expect::WordBounds::from(s.trim().parse::<usize>().map_err(|_| {
            ItemProblem::invalid(format!(
                "`value` must be a whole number, got {}",
                crate::base::excerpt::quote(s)
            ))
        })?),
        v => expect::WordBounds::from(count(v, "`value`")?),
    };
    if let Some(max) = bounds.max
        && bounds.min > max
    {
        return Err(ItemProblem::invalid(format!(
            "`min` {} is greater than `max` {max}",
            bounds.min
        )));
    }
    Ok(bounds)
}

fn budget(spec: &AssertSpec, unit: &str) -> Result<f64, ItemProblem> {
    let limit = spec
        .threshold
        .or_else(|| spec.value.as_ref().and_then(Value::as_f64))
        .ok_or_else(|| {
            ItemProblem::invalid(format!("needs a `threshold`: the budget in {unit}"))
        })?;
    if limit.is_nan() || limit < 0.0 {
        return Err(ItemProblem::invalid(format!(
            "the budget must be ≥ 0, got {limit}"
        )));
    }
    Ok(limit)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::checks::spec::{SpecContext, evaluate};

    fn equals(value: Value, config: Value) -> AssertSpec {
        AssertSpec {
            config: Some(config),
            ..AssertSpec::new("equals", value)
        }
    }

    fn run(spec: AssertSpec, output: &str) -> bool {
        evaluate(&[spec], output, &SpecContext::default())
            .unwrap()
            .pass
    }

    fn normalized(kind: &str, value: Value, form: Value) -> AssertSpec {
        let mut spec = AssertSpec::new(kind, value);
        spec.extra.insert("normalizeUnicode".into(), form);
        spec
    }

    #[test]
    fn normalize_unicode_compares_in_the_named_form() {
        let nfc = "caf\u{e9}";
        let nfd = "cafe\u{301}";
        assert!(!run(AssertSpec::new("equals", nfc), nfd), "off by default");
        assert!(run(normalized("equals", json!(nfc), json!(true)), nfd));
        assert!(run(
            normalized("contains", json!(nfc), json!("NFC")),
            &format!("at the {nfd} today")
        ));
        assert!(run(
            normalized("icontains-any", json!(["CAF\u{c9}"]), json!(true)),
            nfd
        ));
        assert!(!run(normalized("not-equals", json!(nfc), json!(true)), nfd));
        // `true` is NFC: a superscript two stays an exponent; NFKC must be named.
        assert!(!run(
            normalized("equals", json!("x\u{b2}"), json!(true)),
            "x2"
        ));
        assert!(run(
            normalized("equals", json!("x\u{b2}"), json!("NFKC")),
            "x2"
        ));
        assert!(!run(
            normalized("contains", json!("file"), json!(true)),
            "\u{fb01}le"
        ));
        assert!(run(
            normalized("contains", json!("file"), json!("NFKC")),
            "\u{fb01}le"
        ));
        let err = evaluate(
            &[normalized("equals", json!("x"), json!("nfc"))],
            "x",
            &SpecContext::default(),
        )
        .unwrap_err();
        assert!(
            err.to_string().contains("`normalizeUnicode` is true"),
            "{err}"
        );
    }

    #[test]
    fn equals_modes_are_json_or_string() {
        let json_mode = equals(json!(r#"{"b": 2, "a": 1}"#), json!({"mode": "json"}));
        let outcome = evaluate(&[json_mode], r#"{"a": 1, "b": 2}"#, &SpecContext::default());
        assert!(outcome.unwrap().pass);
        let string_mode = equals(json!(r#"{"b": 2, "a": 1}"#), json!({"mode": "string"}));
        let outcome = evaluate(
            &[string_mode],
            r#"{"a": 1, "b": 2}"#,
            &SpecContext::default(),
        );
        assert!(!outcome.unwrap().pass, "string mode compares the text");
        // Runsight refuses any other mode rather than guessing (its test_invalid_mode_fails_explicitly).
        let yaml_mode = equals(json!("x"), json!({"mode": "yaml"}));
        let err = evaluate(&[yaml_mode], "x", &SpecContext::default()).unwrap_err();
        assert!(
            err.to_string()
                .contains("unsupported `config.mode` \"yaml\""),
            "{err}"
        );
    }

    fn outcome(spec: AssertSpec, output: &str) -> (bool, f64) {
        let o = evaluate(&[spec], output, &SpecContext::default()).unwrap();
        (o.pass, o.score)
    }

    /// promptfoo scores an empty reply 0 under `is-refusal` and `not-is-refusal` alike.
    #[test]
    fn is_refusal_applies_its_own_not() {
        let plain = |kind: &str| AssertSpec {
            kind: kind.into(),
            ..AssertSpec::default()
        };
        assert_eq!(
            outcome(plain("is-refusal"), "I cannot help with that"),
            (true, 1.0)
        );
        assert_eq!(
            outcome(plain("not-is-refusal"), "I cannot help with that"),
            (false, 0.0)
        );
        assert_eq!(outcome(plain("is-refusal"), ""), (true, 0.0));
        assert_eq!(outcome(plain("not-is-refusal"), ""), (false, 0.0));
        assert_eq!(
            outcome(plain("not-is-refusal"), "Sure, here it is"),
            (true, 1.0)
        );
    }

    #[test]
    fn the_text_format_types_read_their_values() {
        let spec = |kind: &str, value: Value| AssertSpec::new(kind, value);
        assert!(outcome(spec("is-xml", json!("root.child")), "<root><child/></root>").0);
        assert!(!outcome(spec("not-contains-xml", json!(["a"])), "x <a>1</a> y").0);
        assert!(outcome(spec("contains-html", Value::Null), "<p>hi</p>").0);
        assert!(!outcome(spec("is-html", Value::Null), "hello").0);
        assert!(
            outcome(
                spec("is-sql", json!({"databaseType": "PostgreSQL"})),
                "SELECT a::int FROM t"
            )
            .0
        );
        assert!(outcome(spec("not-contains-sql", Value::Null), "no SQL here").0);
        let err = |kind: &str, value: Value| {
            evaluate(&[spec(kind, value)], "x", &SpecContext::default())
                .unwrap_err()
                .to_string()
        };
        assert!(err("is-sql", json!("MySQL")).contains("must be an object"));
        assert!(err("is-xml", json!({"x": 1})).contains("requiredElements"));
        assert!(err("meteor", json!([])).contains("no reference"));
        assert!(err("meteor", json!(3)).contains("reference"));
    }

    /// `meteor` takes `alpha`, `beta`, `gamma` beside `value`, a threshold of 0.5, and `not-`
    /// scores `1 − score` (promptfoo's handler).
    #[test]
    fn meteor_reads_its_parameters_and_threshold() {
        let mut spec = AssertSpec::new("meteor", json!("The cat sat on the mat"));
        assert!(outcome(spec.clone(), "The cat is sitting on the mat").0);
        spec.extra.insert("alpha".into(), json!(0.85));
        spec.extra.insert("beta".into(), json!(2.0));
        spec.extra.insert("gamma".into(), json!(0.4));
        spec.threshold = Some(0.75);
        let (pass, score) = outcome(spec.clone(), "The cat is sitting on the mat");
        assert!(
            pass && (score - 0.7609756097560976).abs() < 1e-12,
            "{score}"
        );
        spec.kind = "not-meteor".into();
        let (pass, score) = outcome(spec.clone(), "The cat is sitting on the mat");
        assert!(!pass && (score - (1.0 - 0.7609756097560976)).abs() < 1e-12);
        spec.extra.insert("alpha".into(), json!("high"));
        assert!(evaluate(&[spec], "x", &SpecContext::default()).is_err());
    }

    /// New names keep `contains-everything`'s suggestion on `contains` (the suite runner's
    /// test shows it).
    #[test]
    fn the_new_names_do_not_steal_suggestions() {
        let message = super::super::unknown_type("contains-everything", &[]);
        assert!(message.contains("did you mean `contains`?"), "{message}");
        assert!(message.contains("is-refusal") && message.contains("meteor"));
    }
}
