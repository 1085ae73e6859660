//! What a code assertion's return value means, by promptfoo's rules: a boolean, a number, a
//! grading result `{pass, score, reason}`, and for Python also the strings `"true"`/`"false"`,
//! a numeric string, or a JSON object as text.

use serde_json::Value;

use super::Language;
use crate::base::assertion::Grade;
use crate::base::excerpt;

/// How the verdict is reached: the threshold of the assertion as data, and whether it is a
/// `not-` assertion.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(crate) struct Rules {
    /// promptfoo's `threshold`: a number passes at ≥ it; a Python grading result whose score is
    /// below it fails.
    pub threshold: Option<f64>,
    /// `not-`: the verdict is flipped, the score kept.
    pub inverse: bool,
}

const SHAPES: &str = "return a boolean, a finite number, or {pass, score, reason}";

/// Grades a returned value. The grade always carries its verdict.
pub(crate) fn grade_from_value(result: &Value, language: Language, rules: Rules) -> Grade {
    match (result, language) {
        (Value::Bool(b), _) => boolean(*b, rules),
        (Value::Number(n), _) => match n.as_f64() {
            Some(s) if s.is_finite() => number(s, rules),
            _ => invalid(format!("the code returned {n}, not a finite number")),
        },
        (Value::String(s), Language::Python) => python_string(s, rules),
        (Value::Object(_), _) => object(result, language, rules),
        (Value::Null, _) => invalid(format!("the code returned nothing; {SHAPES}")),
        (other, _) => invalid(format!(
            "the code returned {}; {SHAPES}",
            excerpt::json(other)
        )),
    }
}

/// A failed grade for a result that cannot be read: promptfoo's pass false, score 0, whatever
/// `not-` says (its handler catches the error and fails the item).
pub(crate) fn invalid(reason: impl Into<String>) -> Grade {
    Grade::score(0.0, reason).with_verdict(false)
}

fn boolean(b: bool, rules: Rules) -> Grade {
    let pass = b != rules.inverse;
    Grade::from_bool(pass, format!("the code returned {b}")).with_verdict(pass)
}

fn number(s: f64, rules: Rules) -> Grade {
    let raw = match rules.threshold {
        Some(t) => s >= t,
        None => s > 0.0,
    };
    let pass = raw != rules.inverse;
    Grade::score(
        s.clamp(0.0, 1.0),
        format!("the code returned the score {s}"),
    )
    .with_verdict(pass)
}

/// `'true'`, `'false'` (any case), a JSON object as text, or a number as text (read like
/// JavaScript's `parseFloat`: the longest numeric prefix).
fn python_string(s: &str, rules: Rules) -> Grade {
    match s.to_lowercase().as_str() {
        "true" => return boolean(true, rules),
        "false" => return boolean(false, rules),
        _ => {}
    }
    if s.starts_with('{') {
        return match serde_json::from_str::<Value>(s) {
            Ok(v @ Value::Object(_)) => object(&v, Language::Python, rules),
            Ok(_) | Err(_) => invalid(format!(
                "the code returned {}, which is not a JSON object; {SHAPES}",
                excerpt::quote(s)
            )),
        };
    }
    match parse_float(s) {
        Some(score) if score.is_finite() => number(score, rules),
        _ => invalid(format!(
            "the code returned the text {}; {SHAPES}",
            excerpt::quote(s)
        )),
    }
}

/// JavaScript's `Number.parseFloat`: leading whitespace skipped, then the longest prefix that
/// is a decimal number.
fn parse_float(s: &str) -> Option<f64> {
    let s = s.trim_start();
    let mut best = None;
    for (i, c) in s.char_indices() {
        if !(c.is_ascii_digit() || matches!(c, '.' | '-' | '+' | 'e' | 'E')) {
            break;
        }
        let prefix = &s[..i + c.len_utf8()];
        if let Ok(v) = prefix.parse::<f64>() {
            best = Some(v);
        }
    }
    if best.is_none() {
        for (word, value) in [
            ("Infinity", f64::INFINITY),
            ("+Infinity", f64::INFINITY),
            ("-Infinity", f64::NEG_INFINITY),
        ] {
            if s.starts_with(word) {
                return Some(value);
            }
        }
    }
    best
}

/// A grading result: `pass` (a boolean; `pass_` from Python), `score` (a number) and `reason`
/// (text) are required, as promptfoo's `isGradingResult`; `componentResults` become children.
fn object(value: &Value, language: Language, rules: Rules) -> Grade {
    let pass = match value.get("pass").or_else(|| value.get("pass_")) {
        Some(Value::Bool(b)) => *b,
        _ => return not_a_result(value, "`pass` must be true or false"),
    };
    let score = match value.get("score").and_then(Value::as_f64) {
        Some(s) if s.is_finite() => s,
        _ => return not_a_result(value, "`score` must be a finite number"),
    };
    let Some(reason) = value.get("reason").and_then(Value::as_str) else {
        return not_a_result(value, "`reason` must be text");
    };
    let mut own = pass;
    let mut reason = if reason.is_empty() {
        format!("the code returned {}", excerpt::json(value))
    } else {
        reason.to_string()
    };
    if language == Language::Python
        && let Some(t) = rules.threshold.filter(|t| score < *t)
    {
        own = false;
        reason = format!("score {score} is less than threshold {t}: {reason}");
    }
    let children = match value
        .get("componentResults")
        .or_else(|| value.get("component_results"))
    {
        None | Some(Value::Null) => Vec::new(),
        // promptfoo refuses a component that is not a result object (a sparse JavaScript
        // array, `new Array(1)`, arrives here as `[null]`).
        Some(Value::Array(items)) if !items.iter().all(Value::is_object) => {
            let (i, item) = items
                .iter()
                .enumerate()
                .find(|(_, item)| !item.is_object())
                .unwrap_or((0, &Value::Null));
            return not_a_result(
                value,
                &format!(
                    "`componentResults[{i}]` must be a grading result object, not {}",
                    excerpt::json(item)
                ),
            );
        }
        Some(_) => {
            let only_components = serde_json::json!({
                "componentResults": value.get("componentResults").or_else(|| value.get("component_results")),
            });
            match crate::checks::expect::script::grade_from_result(&only_components) {
                Ok(g) => g.children,
                Err(e) => {
                    return invalid(format!("the code returned an invalid grading result: {e}"));
                }
            }
        }
    };
    let verdict = own != rules.inverse;
    Grade::score(score.clamp(0.0, 1.0), reason)
        .with_verdict(verdict)
        .with_children(children)
}

fn not_a_result(value: &Value, why: &str) -> Grade {
    invalid(format!(
        "the code returned {}, which is not a grading result: {why}; {SHAPES}",
        excerpt::json(value)
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn run(
        value: Value,
        language: Language,
        threshold: Option<f64>,
        inverse: bool,
    ) -> (Option<bool>, f64, bool) {
        let g = grade_from_value(&value, language, Rules { threshold, inverse });
        (g.verdict, g.score, g.error.is_some())
    }

    #[test]
    fn promptfoo_verdicts() {
        use Language::{JavaScript as Js, Python as Py};
        let table = [
            // (value, language, threshold, not-, verdict, score, error)
            (json!(true), Js, None, false, Some(true), 1.0, false),
            (json!(true), Js, None, true, Some(false), 0.0, false),
            (json!(false), Js, None, true, Some(true), 1.0, false),
            (json!(0.3), Js, None, true, Some(false), 0.3, false),
            (json!(0.25), Js, Some(0.5), true, Some(true), 0.25, false),
            (json!(0), Js, Some(0.0), false, Some(true), 0.0, false),
            (json!(0), Js, None, false, Some(false), 0.0, false),
            (json!(-2), Js, None, false, Some(false), 0.0, false),
            (json!(150), Js, Some(0.5), false, Some(true), 1.0, false),
            (
                json!({"pass": true, "score": 0.2, "reason": "ok"}),
                Js,
                Some(0.5),
                false,
                Some(true),
                0.2,
                false,
            ),
            (
                json!({"pass": false, "score": 0.9, "reason": "no"}),
                Js,
                Some(0.5),
                false,
                Some(false),
                0.9,
                false,
            ),
            (
                json!({"pass": false, "score": 0.2, "reason": "r"}),
                Js,
                None,
                true,
                Some(true),
                0.2,
                false,
            ),
            (
                json!({"pass": true, "score": 0.75, "reason": "r"}),
                Js,
                None,
                true,
                Some(false),
                0.75,
                false,
            ),
            (
                json!({"pass": false, "score": 0.9, "reason": "x"}),
                Py,
                Some(0.5),
                false,
                Some(false),
                0.9,
                false,
            ),
            (
                json!({"pass": true, "score": 0.2, "reason": "x"}),
                Py,
                Some(0.5),
                false,
                Some(false),
                0.2,
                false,
            ),
            (
                json!({"pass": true, "score": 0.2, "reason": "x"}),
                Py,
                Some(0.5),
                true,
                Some(true),
                0.2,
                false,
            ),
            (
                json!({"pass_": true, "score": 1, "reason": ""}),
                Py,
                None,
                false,
                Some(true),
                1.0,
                false,
            ),
            (json!("true"), Py, None, false, Some(true), 1.0, false),
            (json!("FALSE"), Py, None, false, Some(false), 0.0, false),
            (json!("0.8"), Py, None, false, Some(true), 0.8, false),
            (
                json!("0.8 points"),
                Py,
                Some(0.9),
                false,
                Some(false),
                0.8,
                false,
            ),
            (
                json!("{\"pass\": true, \"score\": 1, \"reason\": \"r\"}"),
                Py,
                None,
                false,
                Some(true),
                1.0,
                false,
            ),
            // Not results: execution errors (promptfoo: fail, score 0).
            (json!("true"), Js, None, false, Some(false), 0.0, false),
            (json!("maybe"), Py, None, false, Some(false), 0.0, false),
            (
                json!({"pass": true}),
                Js,
                None,
                false,
                Some(false),
                0.0,
                false,
            ),
            (
                json!({"pass": true, "score": 1}),
                Py,
                None,
                true,
                Some(false),
                0.0,
                false,
            ),
            (
                json!({"score": 1, "reason": "r"}),
                Js,
                None,
                false,
                Some(false),
                0.0,
                false,
            ),
            (Value::Null, Js, None, false, Some(false), 0.0, false),
            (json!([true]), Py, None, false, Some(false), 0.0, false),
        ];
        for (value, language, threshold, inverse, verdict, score, error) in table {
            let got = run(value.clone(), language, threshold, inverse);
            assert_eq!(
                got,
                (verdict, score, error),
                "{value} {language:?} {threshold:?} not={inverse}"
            );
        }
    }

    #[test]
    fn components_become_children() {
        let g = grade_from_value(
            &json!({"pass": true, "score": 0.75, "reason": "r", "componentResults": [
                {"pass": true, "score": 0.5, "reason": "Contains banana"}, {"pass": false}
            ]}),
            Language::JavaScript,
            Rules::default(),
        );
        assert_eq!(g.children.len(), 2);
        assert!(g.children[0].passed && !g.children[1].passed);
    }

    #[test]
    fn components_must_be_result_objects() {
        // A sparse JavaScript array (`new Array(1)`) is `[null]` in JSON: promptfoo fails it.
        for components in [json!([null]), json!([{"pass": true}, 3])] {
            let g = grade_from_value(
                &json!({"pass": true, "score": 1, "reason": "", "componentResults": components}),
                Language::JavaScript,
                Rules::default(),
            );
            // promptfoo catches the error and fails the item: a failed verdict, not an error.
            assert_eq!(g.verdict, Some(false));
            assert!(g.error.is_none());
            assert!(
                g.reason.contains("must be a grading result object"),
                "{}",
                g.reason
            );
        }
    }

    #[test]
    fn parse_float_reads_prefixes() {
        assert_eq!(parse_float(" 0.5abc"), Some(0.5));
        assert_eq!(parse_float("1e2"), Some(100.0));
        assert_eq!(parse_float("abc"), None);
    }
}
