//! The matching language: every form, alone and combined, and the data form.
use crate::checks::scope::matching::*;
use regex::Regex;
use serde_json::Value;
use serde_json::json;

fn re(pattern: &str) -> InputMatch {
    InputMatch::Regex(Regex::new(pattern).unwrap())
}

/// Every form, alone and nested in the others, against inputs that match and inputs that
/// don't; a mismatch must be explained at the expected path.
#[test]
#[rustfmt::skip]
fn matching_language_table() {
    let big = |v: &Value| v.as_u64().is_some_and(|n| n > 10);
    let table: Vec<(&str, InputMatch, Value, Option<&str>)> = vec![
        // scalars
        ("string equal", json!("pwd").into(), json!("pwd"), None),
        ("string differs", json!("pwd").into(), json!("ls"), Some("at $: expected \"pwd\", got \"ls\"")),
        ("int equals float", json!(1).into(), json!(1.0), None),
        ("number differs", json!(1).into(), json!(2), Some("at $: expected 1, got 2")),
        ("number vs string", json!(1).into(), json!("1"), Some("at $: expected 1, got \"1\"")),
        ("null matches null", json!(null).into(), json!(null), None),
        ("bool", json!(true).into(), json!(false), Some("at $: expected true, got false")),
        // objects: deep partial
        ("empty object matches any object", json!({}).into(), json!({"a": 1}), None),
        ("empty object needs an object", json!({}).into(), json!([1]), Some("at $: expected an object, got [1]")),
        ("extra keys ignored", json!({"id": "1"}).into(), json!({"id": "1", "x": 2}), None),
        ("missing key", json!({"id": "1"}).into(), json!({"x": 2}), Some("at $.id: missing")),
        ("null needs a present key", json!({"id": null}).into(), json!({}), Some("at $.id: missing")),
        ("nested partial", json!({"a": {"b": 1}}).into(), json!({"a": {"b": 1, "c": 2}, "d": 3}), None),
        ("nested mismatch path", json!({"a": {"b": 1}}).into(), json!({"a": {"b": 2}}), Some("at $.a.b: expected 1, got 2")),
        ("odd key quoted in path", json!({"a-b": 1}).into(), json!({"a-b": 2}), Some("at $[\"a-b\"]: expected 1, got 2")),
        // arrays: same length, element-wise, partial inside
        ("array equal", json!([1, 2]).into(), json!([1, 2]), None),
        ("array of partial objects", json!([{"n": 1}]).into(), json!([{"n": 1, "m": 2}]), None),
        ("array longer", json!([1]).into(), json!([1, 2]), Some("at $: expected an array of 1 items, got 2")),
        ("array order matters", json!([1, 2]).into(), json!([2, 1]), Some("at $[0]: expected 1, got 2")),
        ("array vs object", json!([1]).into(), json!({"0": 1}), Some("at $: expected an array, got {\"0\":1}")),
        // regex at the top: serialized input
        ("regex over serialized object", re(r#""command":"npm i"#), json!({"command": "npm i x"}), None),
        ("regex keys sorted", re(r#"^\{"a":1,"b":2\}$"#), json!({"b": 2, "a": 1}), None),
        ("regex over serialized fails", re("rm -rf"), json!({"command": "ls"}), Some("at $: {\"command\":\"ls\"} does not match /rm -rf/")),
        ("regex over a string input is its text", re("^pwd$"), json!("pwd"), None),
        // regex standing for a field
        ("regex field", InputMatch::object([("command", re("^pwd"))]), json!({"command": "pwd -P"}), None),
        ("regex field anchored to the text", InputMatch::object([("command", re("^pwd"))]), json!({"command": "cd; pwd"}), Some("at $.command: \"cd; pwd\" does not match /^pwd/")),
        ("regex field on a number", InputMatch::object([("n", re("^4\\d$"))]), json!({"n": 42}), None),
        ("regex field missing", InputMatch::object([("command", re("."))]), json!({}), Some("at $.command: missing")),
        ("regex in array element", InputMatch::array([re(r"\.rs$"), json!("b").into()]), json!(["a.rs", "b"]), None),
        ("with() adds a regex to a json partial", InputMatch::from(json!({"cwd": "/tmp"})).with("command", re("^pwd")), json!({"command": "pwd", "cwd": "/tmp", "env": {}}), None),
        ("with() keeps the json part", InputMatch::from(json!({"cwd": "/tmp"})).with("command", re("^pwd")), json!({"command": "pwd", "cwd": "/"}), Some("at $.cwd: expected \"/tmp\", got \"/\"")),
        // predicates, alone and nested
        ("predicate true", InputMatch::from(|v: &Value| v["n"] == 1), json!({"n": 1}), None),
        ("predicate false", InputMatch::predicate("n is one", |v| v["n"] == 1), json!({"n": 2}), Some("at $: {\"n\":2} does not satisfy <n is one>")),
        ("predicate on a field", InputMatch::object([("n", InputMatch::predicate("big", big))]), json!({"n": 11}), None),
        ("predicate on a field fails", InputMatch::object([("n", InputMatch::predicate("big", big))]), json!({"n": 3}), Some("at $.n: 3 does not satisfy <big>")),
        ("all forms together", InputMatch::object([
            ("path", re(r"^src/")),
            ("opts", json!({"force": false}).into()),
            ("lines", InputMatch::array([InputMatch::predicate("big", big)])),
        ]), json!({"path": "src/a.rs", "opts": {"force": false, "x": 1}, "lines": [12]}), None),
        ("all forms, deepest fails", InputMatch::object([
            ("path", re(r"^src/")),
            ("lines", InputMatch::array([InputMatch::predicate("big", big)])),
        ]), json!({"path": "src/a.rs", "lines": [1]}), Some("at $.lines[0]: 1 does not satisfy <big>")),
    ];
    for (name, m, input, why) in table {
        assert_eq!(m.matches(&input), why.is_none(), "{name}: matches({input})");
        assert_eq!(m.explain(&input).as_deref(), why, "{name}: explain({input})");
    }
}

#[test]
fn spec_form_reads_regex_operators_and_rejects_bad_ones() {
    let m = InputMatch::from_spec(&json!({"a": [{"$regex": "^x"}, 1], "b": {"c": "lit"}})).unwrap();
    assert_eq!(m.to_string(), r#"{"a":[/^x/,1],"b":{"c":"lit"}}"#);
    assert!(m.matches(&json!({"a": ["xy", 1], "b": {"c": "lit", "d": 0}})));
    let top = InputMatch::from_spec(&json!({"$regex": "npm i"})).unwrap();
    assert!(top.matches(&json!({"command": "npm i"})));
    let err = InputMatch::from_spec(&json!({"a": {"$regex": 3}})).unwrap_err();
    assert_eq!(
        err.to_string(),
        "at $.a: `$regex` takes a string pattern, got 3"
    );
    let err = InputMatch::from_spec(&json!({"a": {"$regex": "x", "b": 1}})).unwrap_err();
    assert!(err.to_string().contains("must be the only key"), "{err}");
    // From<Value> never interprets operators
    let literal = InputMatch::from(json!({"$regex": "x"}));
    assert!(literal.matches(&json!({"$regex": "x"})));
    assert!(!literal.matches(&json!("x")));
}

#[test]
fn display_forms() {
    assert_eq!(
        InputMatch::object([("a", InputMatch::array([re("x")]))]).to_string(),
        r#"{"a":[/x/]}"#
    );
    assert_eq!(
        InputMatch::from(|_: &Value| true).to_string(),
        "<predicate>"
    );
    assert_eq!(
        format!("{:?}", InputMatch::from(json!({"a": "b"}))),
        r#"InputMatch({"a":"b"})"#
    );
}

#[test]
fn long_values_are_elided_in_explanations() {
    let long = "x".repeat(1000);
    let why = InputMatch::from(json!({"a": "y"}))
        .explain(&json!({ "a": long }))
        .unwrap();
    assert!(why.len() < 250, "{why}");
}
