//! `niceeval eval -c promptfooconfig.yaml`: the file's cases run with the suite runner (the
//! same reports and exit codes as Rust evals), and what it does not support is an error naming
//! the place.

use std::path::Path;

use super::support::{Fake, niceeval};

fn write(dir: &Path, name: &str, text: &str) {
    let path = dir.join(name);
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).unwrap();
    }
    std::fs::write(path, text).unwrap();
}

const SUITE: &str = r#"
description: smoke
prompts:
  - "Tell me about {{city}}"
  - "Respond in JSON about {{city}}"
providers:
  - openai:chat:gpt-4o-mini
evaluateOptions:
  repeat: 2
defaultTest:
  assert:
    - type: icontains
      value: "{{city}}"
tests:
  - description: paris
    vars: {city: Paris}
  - description: json
    vars: {city: Rome}
    assert:
      - type: is-json
"#;

#[test]
fn runs_the_matrix_with_the_suite_runner_and_its_reports() {
    let fake = Fake::start();
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "promptfooconfig.yaml", SUITE);
    let out = niceeval(
        dir.path(),
        &fake,
        &[
            "-c",
            "promptfooconfig.yaml",
            "-j",
            "2",
            "--jsonl",
            "out.jsonl",
            "--junit",
            "junit.xml",
        ],
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    // `json` with the first prompt is not JSON: the suite fails as a Rust suite does.
    assert_eq!(
        out.status.code(),
        Some(101),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout.contains("promptfooconfig::paris [prompt 1]"),
        "{stdout}"
    );
    assert!(
        stdout.contains("promptfooconfig::json [prompt 2]"),
        "{stdout}"
    );
    assert!(stdout.contains("3 passed; 1 failed"), "{stdout}");
    let jsonl = std::fs::read_to_string(dir.path().join("out.jsonl")).unwrap();
    let reports: Vec<serde_json::Value> = jsonl
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .filter(|r: &serde_json::Value| r.get("id").is_some())
        .collect();
    assert_eq!(reports.len(), 4, "{jsonl}");
    // `evaluateOptions.repeat: 2` runs each case twice.
    assert!(
        reports
            .iter()
            .all(|r| r["runs"].as_array().unwrap().len() == 2),
        "{jsonl}"
    );
    assert!(
        std::fs::read_to_string(dir.path().join("junit.xml"))
            .unwrap()
            .contains("<testcase")
    );

    // A filter selects cases as for Rust evals; the passing ones exit 0.
    let out = niceeval(dir.path(), &fake, &["-c", "promptfooconfig.yaml", "paris"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
}

#[test]
fn unsupported_keys_are_errors_naming_the_place() {
    let fake = Fake::start();
    let dir = tempfile::tempdir().unwrap();
    let cases: &[(&str, &str)] = &[
        (
            "prompts: [hi]\nproviders: [echo]\nscenarios: []\n",
            "promptfooconfig.yaml:3:12: `scenarios` in a promptfoo config is not supported",
        ),
        (
            "prompts: [hi]\nproviders:\n  - id: openai:gpt-4o\n    config:\n      seed: 3\n",
            "promptfooconfig.yaml:5:13: provider `openai:gpt-4o`: config key `seed` is not supported; supported: apiBaseUrl",
        ),
        (
            "prompts: [hi]\nproviders: [bedrock:claude]\n",
            "provider `bedrock:claude` is not supported; supported: openai:chat:<model>",
        ),
        (
            "prompts: [hi]\nproviders: [echo]\ntests:\n  - vars: {a: 1}\n    provider: echo\n",
            "promptfooconfig.yaml:5:15: `provider` in a test is not supported; supported: description, vars, assert",
        ),
        (
            "prompts:\n  - label: x\nproviders: [echo]\n",
            "promptfooconfig.yaml:2:5: a prompt object needs `raw`",
        ),
        (
            "prompts: [hi]\nproviders: [echo]\ntests:\n  - assert:\n      - type: regex\n        value: '(oops'\n",
            "promptfooconfig.yaml:5:9: assertion (type `regex`): invalid regular expression",
        ),
        (
            "prompts: [hi]\nproviders: [echo]\ntests:\n  - assert:\n      - type: similar\n        value: x\n",
            "promptfooconfig.yaml:5:9",
        ),
        (
            "prompts: [file://p.py:make]\nproviders: [echo]\n",
            "prompt functions (file://p.py:make) are not supported",
        ),
        ("prompts: [hi\n", "promptfooconfig.yaml:2:1: not valid YAML"),
        (
            "prompts: [hi]\nproviders: [echo]\ntests:\n  - assert:\n      - $ref: '#/assertionTemplates/gone'\n",
            "promptfooconfig.yaml:5:15: `$ref: \"#/assertionTemplates/gone\"` points at nothing in this file",
        ),
    ];
    for (text, want) in cases {
        write(dir.path(), "promptfooconfig.yaml", text);
        let out = niceeval(dir.path(), &fake, &["-c", "promptfooconfig.yaml"]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{text}\n{stderr}");
        assert!(
            stderr.contains(want),
            "{text}\nwanted {want:?} in:\n{stderr}"
        );
    }
}

#[test]
fn files_templates_and_providers_of_every_kind() {
    let fake = Fake::start();
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "promptfooconfig.yaml",
        r#"
x-base: &base
  type: not-contains
  value: sorry
prompts:
  - file://prompts/*.txt
providers:
  - id: echo
    label: echo
  - id: "exec: printf 'exec:%s'"
    label: exec
  - id: http
    label: http
    config:
      url: "{{ env.OPENAI_BASE_URL }}/chat/completions"
      body:
        model: m
        messages: [{role: user, content: "{{prompt}}"}]
      transformResponse: json.choices[0].message.content
tests:
  - file://tests.csv
  - description: inline
    vars:
      doc: file://doc.txt
    assert:
      - <<: *base
      - type: javascript
        value: output.includes('lighthouse')
"#,
    );
    write(
        dir.path(),
        "prompts/a.txt",
        "Read: {{ doc | upper }}{% if extra %} and {{extra}}{% endif %}",
    );
    write(dir.path(), "doc.txt", "lighthouse");
    write(
        dir.path(),
        "tests.csv",
        "doc,extra,__expected\nwaves,sand,icontains: SAND\n",
    );
    let out = niceeval(
        dir.path(),
        &fake,
        &["-c", "promptfooconfig.yaml", "--jsonl", "o.jsonl"],
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    // The inline test's javascript fails: the prompt upper-cases the doc.
    assert!(stdout.contains("Row #1 [echo]"), "{stdout}");
    assert!(stdout.contains("inline [http]"), "{stdout}");
    let jsonl = std::fs::read_to_string(dir.path().join("o.jsonl")).unwrap();
    let outcome = |name: &str| {
        jsonl
            .lines()
            .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
            .find(|r| r["id"].as_str().is_some_and(|id| id.ends_with(name)))
            .unwrap_or_else(|| panic!("no {name} in {jsonl}"))["outcome"]
            .clone()
    };
    assert_eq!(outcome("Row #1 [echo]"), "passed");
    assert_eq!(outcome("Row #1 [exec]"), "passed");
    assert_eq!(outcome("Row #1 [http]"), "passed");
    assert_eq!(outcome("inline [echo]"), "failed");
    let replies: Vec<String> = jsonl
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .filter_map(|r| r["events"].as_array().cloned())
        .flatten()
        .filter(|e| e["role"] == "assistant")
        .map(|e| e["text"].as_str().unwrap_or("").to_string())
        .collect();
    assert!(
        replies.contains(&"exec:Read: WAVES and sand".to_string()),
        "{replies:?}"
    );
    assert!(
        replies.contains(&"Answer: Read: LIGHTHOUSE".to_string()),
        "{replies:?}"
    );
}

/// Forms met in public promptfoo files (the conformance corpus's `real/`): `$ref` to
/// `assertionTemplates`, a `file://` glob as a var (one test per file), nunjucks' `load`
/// filter, JSONL lines named `Row #N`, an empty `__threshold` cell, an `outputPath` niceeval
/// does not write (a warning), and a transform that makes data (`JSON.parse(output)`) seen
/// as data by the next transform and by `javascript`.
#[test]
fn forms_of_public_suites_run() {
    let fake = Fake::start();
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "promptfooconfig.yaml",
        r#"
prompts:
  - '{{ (style | load).tone }}: {{ text }}'
providers: [echo]
outputPath: file://out.csv
tests:
  - vars:
      style: '{"tone": "calm"}'
      text: file://docs/*.txt
    assert:
      - $ref: '#/assertionTemplates/calm'
  - file://lines.jsonl
  - file://rows.csv
  - description: data
    vars: {style: '{"tone": "x"}', text: '{"colors": ["red", "blue"]}'}
    options:
      transform: JSON.parse(output.slice(3))
    assert:
      - type: javascript
        value: output.colors.length === 2
      - type: contains-any
        transform: output.colors
        value: [blue]
      - type: is-json
assertionTemplates:
  calm:
    type: starts-with
    value: 'calm:'
"#,
    );
    write(dir.path(), "docs/a.txt", "one");
    write(dir.path(), "docs/b.txt", "two");
    write(
        dir.path(),
        "lines.jsonl",
        "{\"vars\": {\"style\": \"{}\", \"text\": \"t\"}, \"assert\": [{\"type\": \"equals\", \"value\": \": t\"}]}\n",
    );
    write(
        dir.path(),
        "rows.csv",
        "style,text,__expected,__threshold\n{},hi,contains:nope,\n",
    );
    let out = niceeval(
        dir.path(),
        &fake,
        &["-c", "promptfooconfig.yaml", "--jsonl", "o.jsonl"],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("outputPath") && stderr.contains("out.csv is not written"),
        "{stderr}"
    );
    assert!(!dir.path().join("out.csv").exists());
    let jsonl = std::fs::read_to_string(dir.path().join("o.jsonl")).unwrap();
    let outcomes: Vec<(String, String)> = jsonl
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .filter(|r| r["id"].is_string())
        .map(|r| {
            let id = r["id"].as_str().unwrap_or("");
            let name = id.rsplit("::").next().unwrap_or("").to_string();
            (name, r["outcome"].as_str().unwrap_or("").to_string())
        })
        .collect();
    let want = |name: &str, outcome: &str| {
        assert!(
            outcomes.contains(&(name.to_string(), outcome.to_string())),
            "{name}: {outcome} not in {outcomes:?}"
        );
    };
    // One test per file of the glob, each passing the referenced template.
    want("test 1", "passed");
    want("test 2", "passed");
    want("Row #1", "passed");
    // The CSV row fails its item: an empty `__threshold` sets no threshold.
    want("Row #1 (2)", "failed");
    want("data", "passed");
}

#[test]
fn agentv_eval_files_run_with_rubrics_graders_and_trajectories() {
    let fake = Fake::start();
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "evals/support.eval.yaml",
        r#"
name: support
description: AgentV's own example shape
target: openai:chat:gpt-4o-mini
evaluate_options:
  max_concurrency: 2
default_test:
  assert:
    - type: not-contains
      value: sorry
tests:
  - id: greeting-response
    input: "Say hello and introduce yourself"
    expected_output: "Hello! I'm an AI assistant."
    assert:
      - Agent gives a multi-word greeting
      - type: contains
        value: hello
      - type: script
        command: ["python3", "grader.py"]
  - id: refused
    input: "Please refuse"
    rubrics:
      - outcome: Answers the question
        weight: 2
  - id: no-tools
    input: [{role: user, content: "What is 2+2?"}]
    assert:
      - type: tool_trajectory
        mode: in_order
        expected: [{tool: search}]
"#,
    );
    write(
        dir.path(),
        "evals/grader.py",
        "import json, sys\nd = json.load(sys.stdin)\nok = 'hello' in d['output']\nprint(json.dumps({'score': 1 if ok else 0, 'assertions': [{'text': 'says hello', 'passed': ok}]}))\n",
    );
    let out = niceeval(
        dir.path(),
        &fake,
        &["evals/support.eval.yaml", "--jsonl", "o.jsonl"],
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(101),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let jsonl = std::fs::read_to_string(dir.path().join("o.jsonl")).unwrap();
    let outcome = |name: &str| {
        jsonl
            .lines()
            .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
            .find(|r| r["id"].as_str().is_some_and(|id| id.ends_with(name)))
            .unwrap_or_else(|| panic!("no {name} in {jsonl}"))
    };
    assert_eq!(
        outcome("support::greeting-response")["outcome"],
        "passed",
        "{stdout}"
    );
    // The fake's judge fails a reply that says sorry; the default item fails it too.
    assert_eq!(outcome("support::refused")["outcome"], "failed", "{stdout}");
    // No tool was called: the trajectory fails, naming what was expected.
    let no_tools = outcome("support::no-tools");
    assert_eq!(no_tools["outcome"], "failed");
    assert!(
        no_tools.to_string().contains("`search` was not called"),
        "{no_tools}"
    );

    write(
        dir.path(),
        "bad.eval.yaml",
        "name: x\ntarget: default\nexecution: {}\ntests: []\n",
    );
    let out = niceeval(dir.path(), &fake, &["bad.eval.yaml"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("bad.eval.yaml:3:12: `execution` in an AgentV eval file is not supported"),
        "{stderr}"
    );
}
