//! Reading the `value` of text and list assertions as promptfoo does: scalars become text with
//! JavaScript's `String(value)`, and a comma-separated string is split with promptfoo's
//! CSV-like rules (quoted fields, `\"`, `\\` and `""` escapes).

use serde_json::Value;

use super::{AssertSpec, ItemProblem};

/// The `value`, or an error saying what it should be.
pub(super) fn required<'a>(
    spec: &'a AssertSpec,
    what: &'static str,
) -> Result<&'a Value, ItemProblem> {
    match &spec.value {
        None | Some(Value::Null) => Err(ItemProblem::MissingValue { what }),
        Some(v) => Ok(v),
    }
}

/// A number as JavaScript's `String(n)` writes it: `1.0` is `1`, `1e21` is `1e+21`,
/// `1e-7` is `1e-7`, `0.000001` is `0.000001`.
pub(super) fn js_number(n: f64) -> String {
    if n.is_nan() {
        return "NaN".to_string();
    }
    if n.is_infinite() {
        return if n > 0.0 { "Infinity" } else { "-Infinity" }.to_string();
    }
    if n == 0.0 {
        return "0".to_string();
    }
    let magnitude = n.abs();
    if (1e-6..1e21).contains(&magnitude) {
        // Rust's `Display` writes the shortest digits that round-trip, without an exponent,
        // as JavaScript does in this range.
        format!("{n}")
    } else {
        let text = format!("{n:e}");
        match text.split_once('e') {
            Some((digits, exp)) if !exp.starts_with('-') => format!("{digits}e+{exp}"),
            _ => text,
        }
    }
}

/// A scalar as JavaScript's `String(value)` writes it; `None` for objects and arrays.
pub(super) fn js_string(value: &Value) -> Option<String> {
    match value {
        Value::String(s) => Some(s.clone()),
        Value::Bool(b) => Some(b.to_string()),
        Value::Null => Some("null".to_string()),
        Value::Number(n) => Some(match (n.as_i64(), n.as_u64()) {
            (Some(i), _) => i.to_string(),
            (_, Some(u)) => u.to_string(),
            _ => js_number(n.as_f64().unwrap_or(f64::NAN)),
        }),
        Value::Array(_) | Value::Object(_) => None,
    }
}

/// A non-empty string, or a number read as JavaScript writes it.
pub(super) fn text_value(spec: &AssertSpec) -> Result<String, ItemProblem> {
    match required(spec, "a non-empty string")? {
        Value::String(s) if s.is_empty() => Err(ItemProblem::invalid(
            "`value` is an empty string, which every output contains; give the text to look for",
        )),
        v @ (Value::String(_) | Value::Number(_)) => Ok(js_string(v).unwrap_or_default()),
        other => Err(ItemProblem::invalid(format!(
            "`value` must be a string or a number, got {other}"
        ))),
    }
}

/// A list of scalars (each read as JavaScript's `String(item)`), or a comma-separated string.
pub(super) fn list_value(spec: &AssertSpec) -> Result<Vec<String>, ItemProblem> {
    match required(spec, "a list of strings")? {
        Value::Array(items) => items
            .iter()
            .enumerate()
            .map(|(i, v)| {
                js_string(v).ok_or_else(|| {
                    ItemProblem::invalid(format!("`value[{i}]` must be a string, got {v}"))
                })
            })
            .collect(),
        Value::String(s) => parse_comma_separated(s),
        other => Err(ItemProblem::invalid(format!(
            "`value` must be a list of strings or a comma-separated string, got {other}"
        ))),
    }
}

/// JavaScript's `\s`: Unicode spaces and line terminators, including U+FEFF but not U+0085.
fn js_space(c: char) -> bool {
    (c.is_whitespace() && c != '\u{85}') || c == '\u{feff}'
}

/// Splits a comma-separated value as promptfoo's `parseCommaSeparatedValues` does.
///
/// Fields are separated by commas; whitespace and repeated commas between fields are skipped.
/// A field that starts with `"` is quoted: it runs to the closing quote, commas and spaces
/// inside are kept, `\"` and `\\` are a quote and a backslash, `""` is a quote, and only
/// whitespace may follow before the next comma. Any other field runs to the next comma and is
/// trimmed; quotes inside it are ordinary characters. An unterminated quoted field, or text
/// after a closing quote, is an error.
pub(super) fn parse_comma_separated(value: &str) -> Result<Vec<String>, ItemProblem> {
    let chars: Vec<char> = value.chars().collect();
    let mut fields = Vec::new();
    let mut i = 0;
    let skip_space = |mut i: usize| {
        while i < chars.len() && js_space(chars[i]) {
            i += 1;
        }
        i
    };
    while i < chars.len() {
        // Whitespace and commas between fields.
        loop {
            i = skip_space(i);
            if chars.get(i) != Some(&',') {
                break;
            }
            i += 1;
        }
        if i >= chars.len() {
            break;
        }
        if chars[i] == '"' {
            let start = i;
            i += 1;
            let mut field = String::new();
            let mut terminated = false;
            while i < chars.len() {
                match (chars[i], chars.get(i + 1)) {
                    ('\\', Some(&next @ ('"' | '\\'))) => {
                        field.push(next);
                        i += 2;
                    }
                    ('"', Some('"')) => {
                        field.push('"');
                        i += 2;
                    }
                    ('"', _) => {
                        i += 1;
                        terminated = true;
                        break;
                    }
                    (c, _) => {
                        field.push(c);
                        i += 1;
                    }
                }
            }
            if !terminated {
                return Err(ItemProblem::invalid(format!(
                    "`value` has an unterminated quoted field starting at {}; close it with `\"` (write a quote inside as `\\\"` or `\"\"`)",
                    quoted_from(&chars, start)
                )));
            }
            fields.push(field);
            i = skip_space(i);
            if i < chars.len() && chars[i] != ',' {
                return Err(ItemProblem::invalid(format!(
                    "`value` has text after a closing quote at {}; put a comma after each quoted field, or quote the whole field",
                    quoted_from(&chars, start)
                )));
            }
        } else {
            let start = i;
            while i < chars.len() && chars[i] != ',' {
                i += 1;
            }
            let field: String = chars[start..i].iter().collect();
            fields.push(field.trim_matches(js_space).to_string());
        }
    }
    Ok(fields)
}

fn quoted_from(chars: &[char], start: usize) -> String {
    let rest: String = chars[start..].iter().collect();
    crate::base::excerpt::quote_width(&rest, 40)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn comma_separated_values_split_like_promptfoo() {
        let table: &[(&str, &[&str])] = &[
            ("a, b,c", &["a", "b", "c"]),
            ("", &[]),
            ("  ,  ,  ", &[]),
            ("a,,b,", &["a", "b"]),
            ("  a  b  , c", &["a  b", "c"]),
            ("\"a, b\", c", &["a, b", "c"]),
            ("\"\",", &[""]),
            ("\"\",WORLD", &["", "WORLD"]),
            ("\"a\"\"b\",c", &["a\"b", "c"]),
            (
                r#""say \"hello\"", "another,phrase""#,
                &["say \"hello\"", "another,phrase"],
            ),
            (r#""test\\test""#, &["test\\test"]),
            (r#""a\nb""#, &["a\\nb"]),
            (
                r#""hello\"world,test", "another,test""#,
                &["hello\"world,test", "another,test"],
            ),
            ("said \"hi\", nope", &["said \"hi\"", "nope"]),
            ("\" cat \", dog", &[" cat ", "dog"]),
            ("\"a\"  , b", &["a", "b"]),
            ("\u{feff}a\u{a0},\tb\n", &["a", "b"]),
            ("x\u{85}", &["x\u{85}"]),
            ("ünï, \"cödé\"", &["ünï", "cödé"]),
        ];
        for (input, expected) in table {
            let fields = parse_comma_separated(input).unwrap_or_else(|e| panic!("{input:?}: {e}"));
            assert_eq!(fields, *expected, "input {input:?}");
        }
    }

    #[test]
    fn malformed_quotes_are_errors() {
        let table: &[(&str, &str)] = &[
            ("\"test", "unterminated quoted field"),
            ("a, \"b", "unterminated quoted field"),
            ("\"ends with backslash\\\"", "unterminated quoted field"),
            ("\"hello\" world", "text after a closing quote"),
            ("\"a\"b, c", "text after a closing quote"),
        ];
        for (input, message) in table {
            let err = parse_comma_separated(input).unwrap_err().to_string();
            assert!(err.contains(message), "input {input:?}: {err}");
        }
    }

    #[test]
    fn scalars_read_as_javascript_writes_them() {
        let table = [
            (json!(1.0), "1"),
            (json!(42), "42"),
            (json!(-3), "-3"),
            (json!(0.1), "0.1"),
            (json!(-0.0), "0"),
            (json!(2.5e-7), "2.5e-7"),
            (json!(1e-7), "1e-7"),
            (json!(1e-6), "0.000001"),
            (json!(1.5e-6), "0.0000015"),
            (json!(1.5e-8), "1.5e-8"),
            (json!(1e20), "100000000000000000000"),
            (json!(1e21), "1e+21"),
            (json!(-1.25e22), "-1.25e+22"),
            (json!(0.30000000000000004), "0.30000000000000004"),
            (json!(u64::MAX), "18446744073709551615"),
            (json!(true), "true"),
            (json!(false), "false"),
            (json!(null), "null"),
            (json!("as is "), "as is "),
        ];
        for (value, expected) in table {
            assert_eq!(js_string(&value).as_deref(), Some(expected), "{value}");
        }
        assert_eq!(js_string(&json!([1])), None);
        assert_eq!(js_string(&json!({"a": 1})), None);
        assert_eq!(js_number(f64::NAN), "NaN");
        assert_eq!(js_number(f64::NEG_INFINITY), "-Infinity");
    }
}
