//! Assertions as data: promptfoo, AgentV and Runsight assertion lists evaluated with
//! `niceeval::spec::evaluate`, including the peers' documented examples and edge cases.

#![cfg(all(feature = "yaml", feature = "json-schema", feature = "inline-code"))]

use crate::scripts_support as support;

use niceeval::spec::{self, AssertSpec, SpecContext, SpecError};
use serde_json::json;

fn run(yaml: &str, output: &str) -> spec::SpecOutcome {
    let specs = spec::from_yaml(yaml).unwrap_or_else(|e| panic!("{e}"));
    spec::evaluate(&specs, output, &SpecContext::default()).unwrap()
}

fn passes(yaml: &str, output: &str) -> bool {
    run(yaml, output).pass
}

fn load_error(yaml: &str) -> String {
    spec::from_yaml(yaml).unwrap_err().to_string()
}

#[test]
fn string_types_and_negation() {
    assert!(passes("- type: contains\n  value: Hello", "Hello, World!"));
    assert!(!passes("- type: contains\n  value: hello", "Hello, World!"));
    assert!(passes("- type: icontains\n  value: HELLO", "Hello, World!"));
    assert!(passes("- type: not-contains\n  value: error", "all good"));
    assert!(!passes(
        "- type: not-icontains\n  value: ERROR",
        "an error occurred"
    ));
    assert!(passes("- type: contains\n  value: 42", "the answer is 42"));
    assert!(passes("- type: starts-with\n  value: Dear", "Dear Ada"));
    assert!(!passes("- type: starts-with\n  value: Dear", " Dear Ada"));
    assert!(passes(
        "- type: ends-with\n  value: Regards.",
        "Kind Regards."
    ));
    assert!(passes("- type: not-starts-with\n  value: Sorry", "Hello"));
    assert!(passes(
        r#"- type: regex
  value: "\\d{4}-\\d{2}-\\d{2}""#,
        "due 2024-05-01"
    ));
    assert!(passes("- type: not-regex\n  value: '^\\d+$'", "12a"));
    assert!(
        passes("- type: regex\n  value: '^(?!.*error)'", "all good"),
        "look-ahead works"
    );
    assert!(!passes(
        "- type: regex\n  value: '^(?!.*error)'",
        "an error"
    ));
    assert!(passes("- type: equals\n  value: approved", "approved"));
    assert!(!passes("- type: equals\n  value: approved", "approved "));
}

#[test]
fn list_types_accept_lists_and_comma_strings() {
    let yaml = r#"
- type: contains-all
  value: ["summary", "recommendation", "next steps"]
"#;
    assert!(passes(yaml, "summary, recommendation and next steps"));
    let out = run(yaml, "summary only");
    assert!(!out.pass);
    assert!(
        out.results[0]
            .reason
            .contains("\"recommendation\", \"next steps\""),
        "{}",
        out.results[0].reason
    );
    assert!(passes(
        "- type: contains-any\n  value: approve, accept, pass",
        "I accept"
    ));
    assert!(passes(
        "- type: icontains-any\n  value: [APPROVE, ACCEPT]",
        "i accept"
    ));
    assert!(passes(
        "- type: icontains-all\n  value: [Hello, WORLD]",
        "hello world"
    ));
    assert!(!passes("- type: contains-any\n  value: []", "anything"));
    assert!(passes("- type: contains-all\n  value: []", "anything"));
    assert!(passes(
        "- type: not-contains-any\n  value: [bad, worse]",
        "good"
    ));
}

#[test]
fn structural_types() {
    assert!(passes("- type: is-json", r#"{"a": 1}"#));
    assert!(!passes("- type: is-json", "{a: 1}"));
    assert!(passes("- type: not-is-json", "plain text"));
    let schema = r#"
- type: contains-json
  value:
    type: object
    required: ["name", "score"]
    properties:
      name: { type: string }
      score: { type: number }
"#;
    assert!(passes(
        schema,
        "Result: {\"name\": \"Ada\", \"score\": 9.5} done"
    ));
    assert!(!passes(schema, "Result: {\"name\": \"Ada\"}"));
    // A schema given as YAML text (promptfoo loads string values with js-yaml).
    let text_schema =
        "- type: is-json\n  value: |\n    type: array\n    items: { type: integer }\n";
    assert!(passes(text_schema, "[1, 2, 3]"));
    assert!(!passes(text_schema, "[1, \"2\"]"));
    assert!(passes("- type: not-contains-json", "no json here"));
    assert!(passes(
        "- type: equals\n  value: {\"intent\": \"refund\"}",
        "{\"intent\":\"refund\"}"
    ));
    assert!(passes(
        "- type: equals\n  value: '{\"a\": [1, 2]}'\n  config: { mode: json }",
        "{ \"a\": [1, 2.0] }"
    ));
}

#[test]
fn word_count_levenshtein_and_metrics() {
    assert!(passes("- type: word-count\n  value: 3", "one two three"));
    assert!(passes(
        "- type: word-count\n  value: { min: 2, max: 4 }",
        "one two three"
    ));
    assert!(!passes(
        "- type: word-count\n  value: { min: 4 }",
        "one two three"
    ));
    assert!(
        passes("- type: levenshtein\n  value: kitten", "sitting"),
        "distance 3 ≤ default 5"
    );
    assert!(!passes(
        "- type: levenshtein\n  value: kitten\n  threshold: 2",
        "sitting"
    ));
    assert!(
        !passes(
            "- type: levenshtein\n  value: kitten\n  threshold: 0",
            "kittens"
        ),
        "0 is exact"
    );
    let reference = "The quick brown fox jumps over the lazy dog";
    assert!(passes(
        &format!("- type: bleu\n  value: {reference}"),
        reference
    ));
    assert!(!passes(
        &format!("- type: bleu\n  value: {reference}"),
        "A fox."
    ));
    assert!(passes(
        &format!("- type: not-bleu\n  value: {reference}"),
        "A fox."
    ));
    let out = run(&format!("- type: not-bleu\n  value: {reference}"), "A fox.");
    assert!(out.results[0].score > 0.9, "not- scores 1 - score");
    assert!(passes(
        &format!("- type: rouge-n\n  value: {reference}"),
        "the quick brown fox jumps over a lazy dog"
    ));
    assert!(!passes(
        &format!("- type: rouge-n\n  value: {reference}\n  config: {{ n: 2 }}\n  threshold: 0.9"),
        "the quick brown fox jumps over a lazy dog"
    ));
    assert!(passes(
        &format!("- type: bleu\n  value: [\"{reference}\", other words]\n  threshold: 0.3"),
        "the quick brown fox jumped over the lazy dog"
    ));
}

#[test]
fn cost_and_latency_read_the_context() {
    let specs =
        spec::from_yaml("- type: cost\n  threshold: 0.05\n- type: latency\n  threshold: 5000")
            .unwrap();
    let ok = SpecContext::new()
        .with_cost_usd(0.01)
        .with_latency_ms(1200.0);
    assert!(spec::evaluate(&specs, "x", &ok).unwrap().pass);
    let slow = SpecContext::new()
        .with_cost_usd(0.01)
        .with_latency_ms(10_000.0);
    let out = spec::evaluate(&specs, "x", &slow).unwrap();
    assert!(!out.pass);
    assert_eq!(
        out.results[1].score, 0.0,
        "over budget scores 0, as in promptfoo"
    );
    assert!(
        out.results[1].reason.contains("over the budget"),
        "{}",
        out.results[1].reason
    );
    let none = spec::evaluate(&specs, "x", &SpecContext::new()).unwrap();
    assert!(!none.pass);
    assert!(
        none.results[0]
            .error
            .as_deref()
            .unwrap()
            .contains("no cost in the context")
    );
    assert!(load_error("- type: cost").contains("needs a `threshold`"));
}

#[test]
fn transforms_fail_alone() {
    // Runsight's chaining example: each assertion targets its own field.
    let yaml = r#"
- type: equals
  value: completed
  transform: "json_path:$.status"
- type: contains
  value: success
  transform: "json_path:$.message"
- type: equals
  value: "200"
  transform: "$.code"
- type: contains
  value: x
  transform: "json_path:$.missing"
"#;
    let out = run(
        yaml,
        r#"{"status": "completed", "message": "great success", "code": 200}"#,
    );
    let passed: Vec<bool> = out.results.iter().map(|r| r.passed).collect();
    assert_eq!(passed, [true, true, true, false]);
    assert!(out.results[3].reason.contains("no match for $.missing"));
    assert!(
        out.results[3].error.is_none(),
        "a failed transform fails, it is not an error"
    );
    let out = run(yaml, "not json");
    assert!(out.results.iter().all(|r| !r.passed));
    assert!(out.results[0].reason.contains("is not JSON"));
    let out = run(
        "- type: not-contains\n  value: x\n  transform: $.missing",
        "{}",
    );
    assert!(
        !out.pass,
        "a failed transform is not turned into a pass by not-"
    );
    assert!(
        load_error("- type: contains\n  value: x\n  transform: output.toUpperCase()")
            .contains("unsupported transform")
    );
    assert!(
        load_error("- type: contains\n  value: x\n  transform: \"$[\"")
            .contains("invalid JSONPath")
    );
}

#[test]
fn weights_metrics_and_sets() {
    // Runsight's weighted example: (1·2 + 0·1) / 3.
    let yaml = r#"
- type: contains
  value: recommendation
  weight: 2.0
  metric: content
- type: word-count
  value: { min: 100 }
  weight: 1.0
  metric: length
- type: contains
  value: ignored
  weight: 0
  metric: content
"#;
    let out = run(yaml, "my recommendation");
    assert!((out.score - 2.0 / 3.0).abs() < 1e-12);
    assert!(!out.pass);
    assert_eq!(
        out.named_scores["content"], 1.0,
        "weight 0 records but does not count"
    );
    assert_eq!(out.named_scores["length"], 0.0);
    assert_eq!(out.results.len(), 3);

    let set = r#"
- type: assert-set
  threshold: 0.5
  weight: 2
  metric: tone
  assert:
    - type: icontains
      value: thanks
    - type: not-icontains
      value: sorry
"#;
    let out = run(set, "Sorry, and thanks");
    assert!(out.pass, "1 of 2 reaches the set's threshold 0.5");
    assert_eq!(out.results[0].children.len(), 2);
    assert_eq!(out.named_scores["tone"], 0.5);
    let strict = set.replace("  threshold: 0.5\n", "");
    assert!(
        !passes(&strict, "Sorry, and thanks"),
        "without threshold every member must pass"
    );
    assert!(
        load_error("- type: assert-set\n  assert:\n    - type: regex\n      value: '('")
            .contains("member assert[0] (type `regex`)")
    );
    assert!(passes("[]", "anything"));
    assert_eq!(run("[]", "x").score, 1.0);
}

#[test]
fn load_errors_name_the_file_line_and_column() {
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, text: &str| {
        let path = dir.path().join(name);
        std::fs::write(&path, text).unwrap();
        path
    };
    let error = |path: &std::path::Path| spec::load(path).unwrap_err().to_string();

    // A block list under `assert:`: each invalid item where it starts, one per line.
    let yaml = write(
        "cases.yaml",
        "# checks\nassert:\n  - type: contains\n    value: refund\n  - type: icontains\n    value: sorry\n  - type: regex\n    value: '(unclosed'\n  - type: contans\n    value: x\n",
    );
    let file = yaml.display();
    let err = error(&yaml);
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(lines.len(), 2, "{err}");
    assert!(
        lines[0].starts_with(&format!(
            "{file}:7:5: assertion #2 (type `regex`): invalid regular expression"
        )),
        "{err}"
    );
    assert!(
        lines[1].starts_with(&format!(
            "{file}:9:5: assertion #3 (type `contans`): unknown assertion type `contans`; did you mean `contains`?"
        )),
        "{err}"
    );
    let SpecError::Invalid(items) = spec::load(&yaml).unwrap_err() else {
        panic!("{err}")
    };
    assert_eq!(
        items[0].location,
        Some(spec::Location {
            origin: file.to_string(),
            line: 7,
            column: 5
        })
    );

    // A flow list, and a bare list in JSON.
    let flow = write(
        "flow.yml",
        "[{type: contains, value: a},\n {type: word-count, value: {min: 5, max: 2}}]\n",
    );
    assert!(
        error(&flow).starts_with(&format!(
            "{}:2:2: assertion #1 (type `word-count`)",
            flow.display()
        )),
        "{}",
        error(&flow)
    );
    let json = write(
        "cases.json",
        "[\n  {\"type\": \"contains\", \"value\": \"a\"},\n  {\"type\": \"regex\", \"value\": \"[\"}\n]\n",
    );
    assert!(
        error(&json).starts_with(&format!(
            "{}:3:3: assertion #1 (type `regex`)",
            json.display()
        )),
        "{}",
        error(&json)
    );

    // An item that is not an assertion at all, and text that does not parse.
    let not_item = write(
        "bad.yaml",
        "- type: contains\n  value: a\n- type: [regex]\n",
    );
    assert!(
        error(&not_item).starts_with(&format!(
            "{}:3:3: cannot read assertions: assertion #1: ",
            not_item.display()
        )),
        "{}",
        error(&not_item)
    );
    let broken = write(
        "broken.yaml",
        "- type: contains\n  value: [a\n- type: regex\n",
    );
    assert_eq!(
        error(&broken),
        format!(
            "{}:3:7: cannot read assertions: did not find expected ',' or ']', while parsing a flow sequence at line 2 column 10",
            broken.display()
        )
    );
    let broken = write("broken.json", "[{\"type\": \"contains\",,}]");
    assert_eq!(
        error(&broken),
        format!(
            "{}:1:22: cannot read assertions: key must be a string",
            broken.display()
        )
    );

    // Text given directly is located in that text.
    let err = load_error("- type: contains\n  value: a\n- type: regex\n  value: '('");
    assert!(
        err.starts_with("YAML:3:3: assertion #1 (type `regex`)"),
        "{err}"
    );
}

#[test]
fn load_time_errors_name_the_item_and_the_choices() {
    let err = load_error("- type: contains\n  value: a\n- type: contans\n  value: x");
    assert!(err.contains("assertion #1 (type `contans`): unknown assertion type `contans`; did you mean `contains`?"), "{err}");
    assert!(
        err.contains("Valid types: contains, icontains, contains-all"),
        "{err}"
    );
    // A negated typo gets the negated name; aliases are suggested too; unrelated names get none.
    assert!(
        load_error("- type: not-contans\n  value: x").contains("did you mean `not-contains`?"),
        "{}",
        load_error("- type: not-contans\n  value: x")
    );
    assert!(load_error("- type: incldues\n  value: x").contains("did you mean `includes`?"));
    let err = load_error("- type: llm-rubric\n  value: x");
    assert!(
        err.contains("unknown assertion type `llm-rubric`. Valid types: contains,"),
        "{err}"
    );
    let err = load_error("- type: regex\n  value: '(unclosed'");
    assert!(
        err.contains("assertion #0 (type `regex`): invalid regular expression /(unclosed/"),
        "{err}"
    );
    assert!(load_error("- type: icontains").contains("needs a `value`"));
    assert!(load_error("- type: contains\n  value: ''").contains("empty string"));
    assert!(
        load_error("- type: word-count\n  value: { min: 5, max: 2 }")
            .contains("greater than `max`")
    );
    assert!(
        load_error("- type: word-count\n  value: { least: 5 }").contains("unknown key `least`")
    );
    assert!(load_error("- type: is-json\n  value: { type: nope }").contains("invalid JSON Schema"));
    assert!(load_error("- type: script").contains("needs a `command`"));
    assert!(load_error("- type: javascript").contains("needs a `value`"));
    assert!(load_error("- type: contains\n  value: x\n  weight: -1").contains("`weight` must be"));
    assert!(load_error("- Agent gives a multi-word greeting").contains("LLM rubric"));
    assert!(load_error("type: contains").contains("expected a list of assertions"));
    let err = spec::from_json("[{\"type\": 1}]").unwrap_err();
    assert!(matches!(err, SpecError::Parse { .. }), "{err}");
    // Several bad items are reported together.
    let err = load_error("- type: regex\n  value: '['\n- type: nope-nope-nope");
    assert_eq!(err.lines().count(), 2, "{err}");
    // Evaluate refuses invalid specs built in code too.
    let specs = [AssertSpec::new("regex", "(")];
    assert!(spec::evaluate(&specs, "x", &SpecContext::default()).is_err());
}

#[test]
fn promptfoo_agentv_and_runsight_documents() {
    let promptfoo = r#"
assert:
  - type: javascript
    value: "output.includes('Hello, World!')"
  - type: python
    value: "'world' in output.lower()"
"#;
    let agentv = r#"
assertions:
  - name: has-greeting
    type: contains
    value: Hello
  - name: my_validator
    type: script
    command: [python3, -c, "import json,sys; d=json.load(sys.stdin); print(json.dumps({'pass': d['config']['min'] <= 2, 'score': 1}))"]
    min: 2
"#;
    let runsight = r#"
assertions:
  - type: contains
    value: "analysis"
  - type: cost
    threshold: 0.05
"#;
    let out = spec::evaluate(
        &spec::from_yaml(runsight).unwrap(),
        "analysis ready",
        &SpecContext::new().with_cost_usd(0.0),
    )
    .unwrap();
    assert!(out.pass);
    if support::have("python3") {
        let out = spec::evaluate(
            &spec::from_yaml(agentv).unwrap(),
            "Hello, World!",
            &SpecContext::default(),
        )
        .unwrap();
        assert!(out.pass, "{:?}", out.results);
        assert_eq!(out.results[0].name, "has-greeting");
    }
    if support::have("node") && support::have("python3") {
        assert!(passes(promptfoo, "Hello, World!"));
        assert!(!passes(promptfoo, "Goodbye"));
    }
}

#[test]
fn json_input_and_round_trip() {
    let specs = spec::from_json(
        r#"{"assert": [{"type": "not-contains", "value": "error", "weight": 2, "metric": "safety"}]}"#,
    )
    .unwrap();
    assert_eq!(specs[0].kind, "not-contains");
    assert_eq!(specs[0].weight, Some(2.0));
    let text = serde_json::to_string(&specs).unwrap();
    let back: Vec<AssertSpec> = serde_json::from_str(&text).unwrap();
    assert_eq!(back, specs);
    // Type names are case-insensitive and accept `_` for `-`.
    assert!(passes("- type: IS_JSON", "[]"));
    assert!(passes("- type: Contains_Any\n  value: [a]", "a"));
    // Unknown keys are kept.
    let s: AssertSpec = serde_json::from_value(
        json!({"type": "script", "command": ["x"], "target": {"max_calls": 3}}),
    )
    .unwrap();
    assert_eq!(s.extra["target"], json!({"max_calls": 3}));
}

#[test]
fn specs_can_change_after_evaluation() {
    let mut specs = vec![AssertSpec::new("contains", "a")];
    assert!(
        spec::evaluate(&specs, "abc", &SpecContext::default())
            .unwrap()
            .pass
    );
    specs[0].value = Some(json!("z"));
    assert!(
        !spec::evaluate(&specs, "abc", &SpecContext::default())
            .unwrap()
            .pass
    );
}

/// promptfoo's code-assertion rules: a grading result keeps its own `pass` (JavaScript), a
/// Python one below the threshold fails, `not-` flips the pass and keeps the score.
#[test]
fn code_assertions_follow_promptfoo() {
    if !support::have("node") || !support::have("python3") {
        return;
    }
    // (item, output, pass, score)
    let table: &[(&str, &str, bool, f64)] = &[
        (
            "- type: javascript\n  value: 'output.length > 3;'",
            "hello",
            true,
            1.0,
        ),
        (
            "- type: javascript\n  value: 'let x = JSON.parse(output); x.a === 1'",
            r#"{"a":1}"#,
            true,
            1.0,
        ),
        (
            "- type: javascript\n  value: \"({pass: true, score: 0.2, reason: 'ok'})\"\n  threshold: 0.5",
            "x",
            true,
            0.2,
        ),
        (
            "- type: javascript\n  value: \"({pass: false, score: 0.9, reason: 'no'})\"\n  threshold: 0.5",
            "x",
            false,
            0.9,
        ),
        ("- type: not-javascript\n  value: '0.3'", "x", false, 0.3),
        (
            "- type: not-javascript\n  value: '0.25'\n  threshold: 0.5",
            "x",
            true,
            0.25,
        ),
        (
            "- type: not-javascript\n  value: \"({pass: false, score: 0.2, reason: 'r'})\"",
            "x",
            true,
            0.2,
        ),
        (
            "- type: not-javascript\n  value: 'output === \"x\"'",
            "x",
            false,
            0.0,
        ),
        (
            "- type: not-javascript\n  value: \"throw new Error('boom')\"",
            "x",
            false,
            0.0,
        ),
        (
            "- type: javascript\n  value: '({pass: true})'",
            "x",
            false,
            0.0,
        ),
        (
            "- type: javascript\n  value: 'return 0;'\n  threshold: 0",
            "x",
            true,
            0.0,
        ),
        (
            "- type: python\n  value: \"{'pass': False, 'score': 0.9, 'reason': 'x'}\"\n  threshold: 0.5",
            "x",
            false,
            0.9,
        ),
        (
            "- type: python\n  value: \"{'pass': True, 'score': 0.2, 'reason': 'x'}\"\n  threshold: 0.5",
            "x",
            false,
            0.2,
        ),
        (
            "- type: not-python\n  value: \"{'pass': True, 'score': 0.2, 'reason': 'x'}\"\n  threshold: 0.5",
            "x",
            true,
            0.2,
        ),
        ("- type: python\n  value: \"'true'\"", "x", true, 1.0),
        ("- type: python\n  value: \"'False'\"", "x", false, 0.0),
        ("- type: python\n  value: \"'0.8'\"", "x", true, 0.8),
    ];
    for (item, output, pass, score) in table {
        let o = run(item, output);
        assert_eq!(
            (o.pass, o.score),
            (*pass, *score),
            "{item}: {:?}",
            o.results[0].reason
        );
    }
}

/// promptfoo's JSON rules: schemas are draft-07 with formats asserted; `contains-json` reads
/// objects leniently.
#[test]
fn json_types_follow_promptfoo() {
    let table: &[(&str, &str, bool)] = &[
        (
            "- type: is-json\n  value: {type: object, properties: {email: {type: string, format: email}}}",
            r#"{"email": "nope"}"#,
            false,
        ),
        (
            "- type: is-json\n  value: {type: object, properties: {email: {type: string, format: email}}}",
            r#"{"email": "a@b.co"}"#,
            true,
        ),
        (
            "- type: is-json\n  value: {type: string, format: date-time}",
            r#""yesterday""#,
            false,
        ),
        (
            "- type: is-json\n  value: {type: array, items: [{type: string}, {type: number}]}",
            r#"["a", "b"]"#,
            false,
        ),
        (
            "- type: is-json\n  value: {type: array, items: [{type: string}, {type: number}]}",
            r#"["a", 1]"#,
            true,
        ),
        (
            "- type: is-json\n  value: {$schema: 'https://json-schema.org/draft/2020-12/schema', type: array, prefixItems: [{type: string}]}",
            r#"[1]"#,
            false,
        ),
        (
            "- type: contains-json",
            "{key: value, another_key: another value}",
            true,
        ),
        (
            "- type: contains-json",
            "{\n  \"reason\": \"all good\",\n  \"score\": 1.0 // perfect score\n}",
            true,
        ),
        (
            "- type: contains-json",
            "{\n  \"incomplete\": \"object\"",
            true,
        ),
        (
            "- type: contains-json\n  value: {required: [score]}",
            "Result: {score: 0.9 // good\n",
            true,
        ),
        ("- type: contains-json", "no json here", false),
    ];
    for (item, output, pass) in table {
        assert_eq!(passes(item, output), *pass, "{item} on {output}");
    }
}
