//! Deep comparison of JSON values, as [`super::equals`] does it: where two values differ, by
//! JSONPath-like path (`$.items[2].name`), numbers by value, objects regardless of key order.

use serde_json::{Number, Value};

use crate::base::excerpt;

/// Strings up to this many characters are shown whole in a difference; longer ones are shown
/// around the first differing character.
const SHORT_STRING: usize = 60;

/// The first difference between two JSON values, as `at PATH: expected X, got Y`, or `None`
/// when they are equal.
///
/// Numbers compare by value (`1 == 1.0`, exactly: `2^53 + 1` is not `2^53 as f64`), objects
/// ignore key order, arrays compare item by item. Long strings are shown around the first
/// character where they differ.
#[cfg(test)]
pub(crate) fn json_difference(expected: &Value, actual: &Value) -> Option<String> {
    differences(expected, actual, 1).shown.into_iter().next()
}

/// Every difference between two values: the first `limit` described, all counted.
pub(crate) struct Differences {
    /// Descriptions of the first differences, in document order (expected's keys first).
    pub shown: Vec<String>,
    /// How many differences there are in all.
    pub total: usize,
}

/// Compares `actual` with `expected` all the way down.
pub(crate) fn differences(expected: &Value, actual: &Value, limit: usize) -> Differences {
    let mut found = Differences {
        shown: Vec::new(),
        total: 0,
    };
    let mut path = String::from("$");
    walk(expected, actual, &mut path, limit, &mut found);
    found
}

fn walk(
    expected: &Value,
    actual: &Value,
    path: &mut String,
    limit: usize,
    found: &mut Differences,
) {
    let report = |found: &mut Differences, path: &str, what: String| {
        found.total += 1;
        if found.shown.len() < limit {
            found.shown.push(format!("at {path}: {what}"));
        }
    };
    match (expected, actual) {
        (Value::Object(e), Value::Object(a)) => {
            for (key, ev) in e {
                let len = path.len();
                push_key(path, key);
                match a.get(key) {
                    Some(av) => walk(ev, av, path, limit, found),
                    None => report(
                        found,
                        path,
                        format!("missing (expected {})", excerpt::json(ev)),
                    ),
                }
                path.truncate(len);
            }
            for (key, av) in a {
                if !e.contains_key(key) {
                    let len = path.len();
                    push_key(path, key);
                    report(
                        found,
                        path,
                        format!("unexpected key (got {})", excerpt::json(av)),
                    );
                    path.truncate(len);
                }
            }
        }
        (Value::Array(e), Value::Array(a)) if e.len() != a.len() => report(
            found,
            path,
            format!(
                "expected an array of {} item{}, got {}: {}",
                e.len(),
                if e.len() == 1 { "" } else { "s" },
                a.len(),
                excerpt::json(actual)
            ),
        ),
        (Value::Array(e), Value::Array(a)) => {
            for (i, (ev, av)) in e.iter().zip(a).enumerate() {
                let len = path.len();
                path.push_str(&format!("[{i}]"));
                walk(ev, av, path, limit, found);
                path.truncate(len);
            }
        }
        (Value::Number(e), Value::Number(a)) => {
            if !numbers_equal(e, a) {
                report(found, path, format!("expected {e}, got {a}"));
            }
        }
        (Value::String(e), Value::String(a)) => {
            if e != a {
                report(found, path, strings_differ(e, a));
            }
        }
        (e, a) if e == a => {}
        (e, a) if kind(e) == kind(a) => report(
            found,
            path,
            format!("expected {}, got {}", excerpt::json(e), excerpt::json(a)),
        ),
        (e, a) => report(
            found,
            path,
            format!(
                "expected {} ({}), got {} ({})",
                excerpt::json(e),
                kind(e),
                excerpt::json(a),
                kind(a)
            ),
        ),
    }
}

/// How two different strings differ: both whole when short, else their lengths and the text
/// around the first differing character.
fn strings_differ(expected: &str, actual: &str) -> String {
    let (e_len, a_len) = (expected.chars().count(), actual.chars().count());
    if e_len <= SHORT_STRING && a_len <= SHORT_STRING {
        return format!(
            "expected {}, got {}",
            excerpt::quote(expected),
            excerpt::quote(actual)
        );
    }
    let at = excerpt::first_difference(expected, actual).unwrap_or(0);
    format!(
        "expected a text of {e_len} chars, got {a_len}; first difference at char {}: expected {}, got {}",
        excerpt::char_index(expected, at),
        excerpt::around(expected, at..at),
        excerpt::around(actual, at..at)
    )
}

/// The JSON type of a value, with its article.
fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// Appends `.key`, or `["key"]` when the key is not a plain identifier.
fn push_key(path: &mut String, key: &str) {
    let mut chars = key.chars();
    let plain = chars.next().is_some_and(|c| c.is_alphabetic() || c == '_')
        && chars.all(|c| c.is_alphanumeric() || c == '_');
    if plain {
        path.push('.');
        path.push_str(key);
    } else {
        path.push('[');
        path.push_str(&Value::String(key.to_string()).to_string());
        path.push(']');
    }
}

/// A JSON number, exactly: integers as integers, others as floats.
#[derive(Clone, Copy)]
enum Exact {
    Int(i128),
    Float(f64),
}

fn exact(n: &Number) -> Option<Exact> {
    if let Some(i) = n.as_i64() {
        Some(Exact::Int(i.into()))
    } else if let Some(u) = n.as_u64() {
        Some(Exact::Int(u.into()))
    } else {
        n.as_f64().map(Exact::Float)
    }
}

/// Numbers are equal when they denote the same value: `1 == 1.0`, `-0.0 == 0`, and a float
/// equals an integer only when it is exactly that integer.
fn numbers_equal(a: &Number, b: &Number) -> bool {
    match (exact(a), exact(b)) {
        (Some(Exact::Int(x)), Some(Exact::Int(y))) => x == y,
        (Some(Exact::Float(x)), Some(Exact::Float(y))) => x == y,
        (Some(Exact::Int(i)), Some(Exact::Float(f)))
        | (Some(Exact::Float(f)), Some(Exact::Int(i))) => {
            // An integral float below 2^100 converts to i128 exactly; every i64 and u64 is
            // far below that.
            f.fract() == 0.0 && f.abs() < 1e30 && f as i128 == i
        }
        _ => a == b,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn numbers_by_value_and_exactly() {
        assert_eq!(json_difference(&json!(1), &json!(1.0)), None);
        assert_eq!(json_difference(&json!(-0.0), &json!(0)), None);
        assert_eq!(json_difference(&json!(u64::MAX), &json!(u64::MAX)), None);
        assert_eq!(
            json_difference(&json!(i64::MIN), &json!(i64::MIN as f64)),
            None
        );
        // 2^53 + 1 has no f64; the nearest float is 2^53.
        let big = (1u64 << 53) + 1;
        assert_eq!(
            json_difference(&json!(big), &json!(big as f64)).unwrap(),
            "at $: expected 9007199254740993, got 9007199254740992.0"
        );
        // u64::MAX vs 2^64 as a float.
        assert!(json_difference(&json!(u64::MAX), &json!(u64::MAX as f64)).is_some());
        assert!(json_difference(&json!(1), &json!(1.5)).is_some());
        assert!(json_difference(&json!(-1), &json!(u64::MAX)).is_some());
        assert_eq!(
            json_difference(&json!(0.1 + 0.2), &json!(0.3)).unwrap(),
            "at $: expected 0.30000000000000004, got 0.3"
        );
    }

    #[test]
    fn key_order_does_not_matter() {
        let a: Value = serde_json::from_str(r#"{"a":1,"b":{"c":2,"d":3}}"#).unwrap();
        let b: Value = serde_json::from_str(r#"{"b":{"d":3,"c":2},"a":1}"#).unwrap();
        assert_eq!(json_difference(&a, &b), None);
    }

    #[test]
    fn nested_paths() {
        let expected = json!({ "order": { "items": [ { "sku": "A1", "qty": 1 }, { "sku": "B2", "qty": 2 } ] } });
        let actual = json!({ "order": { "items": [ { "sku": "A1", "qty": 1 }, { "sku": "B2", "qty": 3 } ] } });
        assert_eq!(
            json_difference(&expected, &actual).unwrap(),
            "at $.order.items[1].qty: expected 2, got 3"
        );
        assert_eq!(
            json_difference(
                &json!({ "a b": 1, "0": 2, "ключ": 3 }),
                &json!({ "a b": 2, "0": 3, "ключ": 4 })
            )
            .unwrap(),
            r#"at $["0"]: expected 2, got 3"#
        );
        let all = differences(
            &json!({ "a b": 1, "0": 2, "ключ": 3 }),
            &json!({ "a b": 2, "0": 3, "ключ": 4 }),
            10,
        );
        assert_eq!(
            all.shown,
            [
                r#"at $["0"]: expected 2, got 3"#,
                r#"at $["a b"]: expected 1, got 2"#,
                "at $.ключ: expected 3, got 4"
            ]
        );
    }

    #[test]
    fn missing_and_unexpected_keys() {
        let all = differences(&json!({ "a": 1, "b": 2 }), &json!({ "a": 1, "c": 3 }), 10);
        assert_eq!(all.total, 2);
        assert_eq!(
            all.shown,
            [
                "at $.b: missing (expected 2)",
                "at $.c: unexpected key (got 3)"
            ]
        );
    }

    #[test]
    fn type_mismatches_name_both_types() {
        assert_eq!(
            json_difference(&json!(null), &json!({})).unwrap(),
            "at $: expected null (null), got {} (an object)"
        );
        assert_eq!(
            json_difference(&json!([true]), &json!([1])).unwrap(),
            "at $[0]: expected true (a boolean), got 1 (a number)"
        );
        assert_eq!(
            json_difference(&json!(true), &json!(false)).unwrap(),
            "at $: expected true, got false"
        );
    }

    #[test]
    fn long_strings_show_the_first_difference() {
        let expected = format!("{}the end.", "word ".repeat(100));
        let actual = format!("{}the END.", "word ".repeat(100));
        let d = json_difference(&json!({ "text": expected }), &json!({ "text": actual })).unwrap();
        // 40 characters of context before the difference, and the rest of the text after it.
        let before = format!(" {}the ", "word ".repeat(7));
        assert_eq!(
            d,
            format!(
                r#"at $.text: expected a text of 508 chars, got 508; first difference at char 504: expected "…{before}end.", got "…{before}END.""#
            )
        );
    }

    #[test]
    fn counts_every_difference_but_describes_a_few() {
        let expected: Vec<u32> = (0..1_000).collect();
        let actual: Vec<u32> = (0..1_000)
            .map(|i| if i % 10 == 0 { i + 1 } else { i })
            .collect();
        let all = differences(&json!(expected), &json!(actual), 3);
        assert_eq!(all.total, 100);
        assert_eq!(all.shown.len(), 3);
        assert_eq!(all.shown[1], "at $[10]: expected 10, got 11");
    }

    #[test]
    fn huge_values_keep_descriptions_short() {
        let big = json!({ "blob": "x".repeat(3_000_000), "list": vec![0; 100_000] });
        let other =
            json!({ "blob": format!("{}y", "x".repeat(3_000_000)), "list": vec![0; 99_999] });
        let all = differences(&big, &other, 10);
        assert_eq!(all.total, 2);
        for shown in &all.shown {
            assert!(shown.chars().count() < 300, "{shown}");
        }
        assert!(all.shown[0].starts_with("at $.blob: expected a text of 3000000 chars, got 3000001; first difference at char 3000000"), "{}", all.shown[0]);
    }
}
