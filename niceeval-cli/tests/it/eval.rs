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
    // The cases side by side: one row per test, one column per prompt.
    assert!(
        stdout.contains("matrix promptfooconfig: 2 tests × 2 prompt/provider columns"),
        "{stdout}"
    );
    let json_row = stdout
        .lines()
        .skip_while(|l| !l.starts_with("matrix promptfooconfig"))
        .find(|l| l.starts_with("json "))
        .unwrap_or_default();
    assert!(
        json_row.contains("FAIL") && json_row.contains("PASS"),
        "{stdout}"
    );
    let jsonl = std::fs::read_to_string(dir.path().join("out.jsonl")).unwrap();
    let reports: Vec<serde_json::Value> = jsonl
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .filter(|r: &serde_json::Value| r.get("id").is_some())
        .collect();
    assert_eq!(reports.len(), 4, "{jsonl}");
    // Each record says where its case sits: test, prompt and provider, typed.
    let json_prompt_2 = reports
        .iter()
        .find(|r| r["matrix"]["test"] == 2 && r["matrix"]["prompt"] == 2)
        .unwrap_or_else(|| panic!("the case of test 2 and prompt 2 in {jsonl}"));
    assert_eq!(
        json_prompt_2["matrix"],
        serde_json::json!({
            "test": 2, "description": "json",
            "prompt": 2, "prompt_label": "prompt 2",
            "provider": 1, "provider_label": "openai:chat:gpt-4o-mini",
        }),
        "{jsonl}"
    );
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
            "prompts: [hi]\nproviders: [echo]\nscenarios:\n  - tests: []\n",
            "promptfooconfig.yaml:4:5: a scenario's `config` is a list of mappings (vars, assert, …)",
        ),
        (
            "prompts: [hi]\nproviders:\n  - id: openai:gpt-4o\n    config:\n      tools: []\n",
            "promptfooconfig.yaml:5:14: provider `openai:gpt-4o`: `tools` (tools the model may call) is not supported",
        ),
        (
            "prompts: [hi]\nproviders: [bedrock:claude]\n",
            "promptfooconfig.yaml:2:13: provider `bedrock:claude` is not supported; supported: openai:chat:<model>, openai:<model>, anthropic:messages:<model>, anthropic:<model>, echo, exec:<command>, http / https / a URL",
        ),
        (
            "prompts: [hi]\nproviders: [echo]\ntests:\n  - vars: {a: 1}\n    provider: bedrock:x\n",
            "promptfooconfig.yaml:5:15: provider `bedrock:x` is not supported",
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
            "prompts: [hi]\nproviders: [echo]\ntests:\n  - assert:\n      - type: similar\n        threshold: 0.8\n",
            "promptfooconfig.yaml:5:9: `similar` needs a `value`: the text, or a list of texts, to compare with",
        ),
        (
            "prompts: [hi]\nproviders: [echo]\ntests:\n  - assert:\n      - type: not-classifier\n        value: toxic\n",
            "promptfooconfig.yaml:5:9: assertion (type `not-classifier`): `classifier` needs a `provider`: huggingface:text-classification:<model>",
        ),
        (
            "prompts: [file://p.py:make]\nproviders: [echo]\n",
            "promptfooconfig.yaml:1:11: prompt file://p.py:make: the prompt function file ",
        ),
        (
            "prompts:\n  - file://prompts.js:build\nproviders: [echo]\n",
            "prompts.js does not exist",
        ),
        (
            "prompts:\n  - file://prompt.ts\nproviders: [echo]\n",
            "promptfooconfig.yaml:2:5: prompt functions in TypeScript (file://prompt.ts) are not supported; supported: .js, .cjs, .mjs and .py",
        ),
        (
            "prompts: [file://chat.json]\nproviders: [echo]\n",
            "promptfooconfig.yaml:1:11: chat.json: a chat prompt ending with an assistant message (a prefill) is not supported",
        ),
        (
            "prompts:\n  - raw: '[{\"role\":\"user\",\"content\":\"a\"},{\"role\":\"tool\",\"content\":\"b\"},{\"role\":\"user\",\"content\":\"c\"}]'\nproviders: [echo]\n",
            "promptfooconfig.yaml:2:5: the prompt: a chat prompt with an `tool` message is not supported; supported: system, user and assistant messages",
        ),
        (
            "prompts: [hi]\nproviders: [echo]\ntests:\n  - vars: {a: 1}\n    providers: [nope]\n",
            "promptfooconfig.yaml:4:1: the test's `providers` names \"nope\", which is no provider of the suite; available providers: echo",
        ),
        (
            "prompts: [hi]\nproviders: [echo]\ntests:\n  - vars:\n      q: file://make.py\n",
            "promptfooconfig.yaml:5:10: file://make.py: no such file",
        ),
        ("prompts: [hi\n", "promptfooconfig.yaml:2:1: not valid YAML"),
        (
            "prompts: [hi]\nproviders: [echo]\ntests:\n  - assert:\n      - $ref: '#/assertionTemplates/gone'\n",
            "promptfooconfig.yaml:5:15: `$ref: \"#/assertionTemplates/gone\"` points at nothing in this file",
        ),
    ];
    write(
        dir.path(),
        "chat.json",
        r#"[{"role":"system","content":"be brief"},{"role":"user","content":"{{q}}"},{"role":"assistant","content":"Sure:"}]"#,
    );
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
/// Transform files: a JavaScript module's default export on `options`, a Python file's named
/// function and an ES module's named export on items, all run by the run's workers.
#[test]
fn transform_files_in_javascript_and_python_run() {
    let fake = Fake::start();
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "promptfooconfig.yaml",
        r#"
prompts: ['{{ q }}']
providers: [echo]
defaultTest:
  options:
    transform: file://lib/upper.js
tests:
  - description: shouted
    vars: {q: hello there}
    assert:
      - type: equals
        value: HELLO THERE
      - type: equals
        transform: file://lib/t.py:first_word
        value: HELLO
      - type: equals
        transform: file://lib/t.mjs:size
        value: "11"
  - description: wrong
    vars: {q: quiet}
    assert:
      - type: equals
        value: quiet
"#,
    );
    write(
        dir.path(),
        "lib/upper.js",
        "module.exports = (output, context) => output.toUpperCase();\n",
    );
    write(
        dir.path(),
        "lib/t.py",
        "def first_word(output, context):\n    return output.split()[0]\n",
    );
    write(
        dir.path(),
        "lib/t.mjs",
        "export function size(output, context) { return String(output.length); }\n",
    );
    let out = niceeval(
        dir.path(),
        &fake,
        &["-c", "promptfooconfig.yaml", "--jsonl", "o.jsonl"],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    let jsonl = std::fs::read_to_string(dir.path().join("o.jsonl")).unwrap_or_default();
    let outcome = |name: &str| {
        jsonl
            .lines()
            .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
            .find(|r| r["id"].as_str().is_some_and(|id| id.ends_with(name)))
            .map(|r| r["outcome"].as_str().unwrap_or("").to_string())
    };
    assert_eq!(
        outcome("shouted").as_deref(),
        Some("passed"),
        "{stderr}\n{jsonl}"
    );
    assert_eq!(
        outcome("wrong").as_deref(),
        Some("failed"),
        "{stderr}\n{jsonl}"
    );
}

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
    // A JSONL file in a list of tests: its line has no `Row #` name (promptfoo names only a
    // standalone tests file's, and every CSV row).
    want("test 3", "passed");
    // The CSV row fails its item: an empty `__threshold` sets no threshold.
    want("Row #1", "failed");
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
        no_tools
            .to_string()
            .contains("expected search at position 0, not found"),
        "{no_tools}"
    );

    write(
        dir.path(),
        "bad.eval.yaml",
        "name: x\ntarget: default\npreprocessors: [{type: xlsx, command: x}]\ntests: []\n",
    );
    let out = niceeval(dir.path(), &fake, &["bad.eval.yaml"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains(
            "bad.eval.yaml:3:16: `preprocessors` in an AgentV eval file is not supported"
        ),
        "{stderr}"
    );
}

/// AgentV's named targets: `execution.target` names a target of the nearest
/// `.agentv/targets.yaml`; a `cli` target's output file carries the agent's tool calls, which
/// `tool-trajectory` items check (modes, `args_match`); an LLM target reaches the fake through
/// `${{ VAR }}` settings and grades with itself; unsupported providers and keys of the targets
/// file are errors naming its line and column.
#[test]
fn agentv_named_targets_cli_agents_and_trajectories() {
    let fake = Fake::start();
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        ".agentv/targets.yaml",
        r#"
targets:
  - name: default
    use_target: ${{ NICEEVAL_TEST_TARGET }}
  - name: llm
    provider: openai
    base_url: ${{ OPENAI_BASE_URL }}
    api_key: ${{ OPENAI_API_KEY }}
    model: gpt-4o-mini
  - name: agent
    provider: cli
    grader_target: llm
    command: python3 agent.py {PROMPT} {OUTPUT_FILE}
    cwd: ..
"#,
    );
    write(
        dir.path(),
        "agent.py",
        "import json, sys\nprompt, out = sys.argv[1], sys.argv[2]\ncalls = [{'tool': 'search', 'input': {'q': prompt, 'page': 1}}, {'tool': 'fetch', 'input': {'id': 7}}]\njson.dump({'output': [{'role': 'assistant', 'content': 'found it', 'tool_calls': calls}]}, open(out, 'w'))\n",
    );
    write(
        dir.path(),
        "evals/agent.eval.yaml",
        r#"
name: agent
execution:
  target: agent
assertions:
  - type: contains
    value: found
tests:
  - id: ordered
    input: weather
    assertions:
      - type: tool-trajectory
        mode: in_order
        args_match: superset
        expected:
          - tool: search
            args: {q: weather}
          - tool: fetch
  - id: wrong-args
    input: weather
    assertions:
      - type: tool-trajectory
        mode: exact
        expected:
          - tool: search
            args: {q: weather}
          - tool: fetch
            args: any
  - id: allowed
    input: news
    execution:
      skip_defaults: true
    assertions:
      - type: tool-trajectory
        mode: subset
        expected: [{tool: search}]
      - type: regex
        value: FOUND
        flags: i
  - id: conversation
    execution:
      target: llm
      skip_defaults: true
    input:
      - {role: system, content: Be brief.}
      - {role: user, content: Hi}
      - {role: assistant, content: Hello}
      - {role: user, content: Now count the turns}
    assertions:
      - type: equals
        value: "turns: 3"
  - id: on-the-llm
    input: Please refuse
    execution:
      target: default
      skip_defaults: true
    criteria: Answers politely
"#,
    );
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_niceeval"))
        .args(["eval", "evals/agent.eval.yaml", "--jsonl", "o.jsonl"])
        .current_dir(dir.path())
        .env("OPENAI_BASE_URL", &fake.url)
        .env("OPENAI_API_KEY", "sk-fake")
        .env("NICEEVAL_TEST_TARGET", "llm")
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(101), "{stdout}\n{stderr}");
    let jsonl = std::fs::read_to_string(dir.path().join("o.jsonl")).unwrap();
    let outcome = |name: &str| {
        jsonl
            .lines()
            .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
            .find(|r| r["id"].as_str().is_some_and(|id| id.ends_with(name)))
            .unwrap_or_else(|| panic!("no {name} in {jsonl}"))
    };
    // Superset arguments in order: `search` had `page` too, which superset allows.
    assert_eq!(outcome("agent::ordered")["outcome"], "passed", "{stdout}");
    // Exact arguments (AgentV's default): `page` is one key too many.
    let wrong = outcome("agent::wrong-args");
    assert_eq!(wrong["outcome"], "failed", "{stdout}");
    assert!(
        wrong.to_string().contains("search args mismatch"),
        "{wrong}"
    );
    // `fetch` is not in the allowed set; the regex's `i` flag matched `found`; the suite's
    // `contains` was skipped.
    let allowed = outcome("agent::allowed");
    assert_eq!(allowed["outcome"], "failed", "{stdout}");
    assert!(
        allowed.to_string().contains("fetch is not in allowed set"),
        "{allowed}"
    );
    // The test's score holds its two graders (the suite's `contains` skipped).
    assert_eq!(
        allowed["assertions"][0]["children"]
            .as_array()
            .map(Vec::len),
        Some(2),
        "{allowed}"
    );
    // Earlier turns of an input go to the model as the conversation.
    assert_eq!(
        outcome("agent::conversation")["outcome"],
        "passed",
        "{stdout}"
    );
    // The per-test target: `default` → `llm` through use_target; the fake's judge fails a
    // reply that says sorry.
    let llm = outcome("agent::on-the-llm");
    assert_eq!(llm["outcome"], "failed", "{stdout}");
    assert!(llm.to_string().contains("judge"), "{llm}");

    // The targets file's errors name its line and column.
    write(
        dir.path(),
        ".agentv/targets.yaml",
        "targets:\n  - name: agent\n    provider: azure\n    model: x\n",
    );
    let out = niceeval(dir.path(), &fake, &["evals/agent.eval.yaml"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains(".agentv/targets.yaml:3:15: target `agent`: provider `azure` is not supported; supported: openai, anthropic, cli"),
        "{stderr}"
    );
    write(
        dir.path(),
        ".agentv/targets.yaml",
        "targets:\n  - name: llm\n    provider: openai\n    model: gpt-4o-mini\n  - name: agent\n    provider: cli\n    command: x\n    batch: true\n",
    );
    let out = niceeval(dir.path(), &fake, &["evals/agent.eval.yaml"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    // AgentV passes a target's unknown keys through; niceeval names them.
    assert!(
        stderr.contains("`batch` in a `cli` target: not read by niceeval"),
        "{stderr}"
    );
}

/// A key written wrong in a suite file (`asert` for `assert` in three tests) is dropped as
/// promptfoo drops it, but cannot be missed: one note names the key, every line it is on and
/// the key it was probably meant to be; the run's closing lines count it; `--strict` (and
/// `[run] strict` in niceeval.toml) refuses the file.
#[test]
fn a_misspelled_key_is_named_where_it_is_and_strict_refuses_it() {
    let fake = Fake::start();
    let dir = tempfile::tempdir().unwrap();
    let item = "      - type: contains\n        value: hello\n";
    write(
        dir.path(),
        "promptfooconfig.yaml",
        &format!(
            "prompts: [\"{{{{q}}}}\"]\nproviders: [echo]\ntests:\n  - vars: {{q: hello}}\n    asert:\n{item}  - vars: {{q: bye}}\n    asert:\n{item}  - vars: {{q: hi}}\n    asert:\n{item}"
        ),
    );
    let out = niceeval(dir.path(), &fake, &["-c", "promptfooconfig.yaml"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains("`asert` in a test (lines 5, 9, 13) is not a key of promptfoo's")
            && stderr.contains("Did you mean `assert`?"),
        "{stderr}"
    );
    let last = stderr.lines().last().unwrap_or_default();
    assert!(
        last.contains("1 unknown key(s) of the suite file(s) were ignored"),
        "{stderr}"
    );
    let out = niceeval(
        dir.path(),
        &fake,
        &["-c", "promptfooconfig.yaml", "--strict"],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("error: promptfooconfig.yaml: `asert`"),
        "{stderr}"
    );
    write(dir.path(), "niceeval.toml", "[run]\nstrict = true\n");
    let out = niceeval(dir.path(), &fake, &["-c", "promptfooconfig.yaml"]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn each_suite_file_keeps_its_results_until_that_file_runs_again() {
    let fake = Fake::start();
    let dir = tempfile::tempdir().unwrap();
    let suite = |tests: &[&str]| {
        let mut text = String::from("prompts: [\"{{q}}\"]\nproviders: [echo]\ntests:\n");
        for test in tests {
            text.push_str(&format!(
                "  - description: {test}\n    vars: {{q: {test}}}\n    assert: [{{type: contains, value: {test}}}]\n"
            ));
        }
        text
    };
    write(dir.path(), "a.yaml", &suite(&["alpha", "beta"]));
    write(dir.path(), "evals/b.yaml", &suite(&["gamma"]));
    for file in ["a.yaml", "evals/b.yaml"] {
        let out = niceeval(dir.path(), &fake, &["-c", file]);
        assert_eq!(out.status.code(), Some(0), "{out:?}");
    }
    let report = || {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_niceeval"))
            .args(["report", "--jsonl", "all.jsonl"])
            .current_dir(dir.path())
            .env("NO_COLOR", "1")
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{out:?}");
        let all = std::fs::read_to_string(dir.path().join("all.jsonl")).unwrap();
        let mut ids: Vec<String> = all
            .lines()
            .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap()["id"].to_string())
            .collect();
        ids.sort();
        ids
    };
    // Both files' evals: the second run did not take the first one's results away.
    let ids = report();
    assert_eq!(ids.len(), 3, "{ids:?}");
    assert!(ids.iter().any(|id| id.contains("a::alpha")), "{ids:?}");
    assert!(ids.iter().any(|id| id.contains("b::gamma")), "{ids:?}");
    // A file run again replaces its own results only: a test it no longer has leaves.
    write(dir.path(), "a.yaml", &suite(&["alpha"]));
    let out = niceeval(dir.path(), &fake, &["-c", "a.yaml"]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let ids = report();
    assert_eq!(ids.len(), 2, "{ids:?}");
    assert!(ids.iter().any(|id| id.contains("b::gamma")), "{ids:?}");
    assert!(!ids.iter().any(|id| id.contains("a::beta")), "{ids:?}");
}

#[test]
fn report_mode_shows_the_runs_own_wall_time() {
    let fake = Fake::start();
    let dir = tempfile::tempdir().unwrap();
    // Four tests of 0.7 s each, four at once: the run takes about 0.7 s, its evals 2.8 s.
    let mut text =
        String::from("prompts: [\"{{q}}\"]\nproviders: [\"exec: sleep 0.7; echo\"]\ntests:\n");
    for q in ["a", "b", "c", "d"] {
        text.push_str(&format!("  - vars: {{q: {q}}}\n"));
    }
    write(dir.path(), "promptfooconfig.yaml", &text);
    let out = niceeval(
        dir.path(),
        &fake,
        &[
            "-c",
            "promptfooconfig.yaml",
            "-j",
            "4",
            "--markdown",
            "live.md",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_niceeval"))
        .args(["report", "--markdown", "report.md"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let seconds = |file: &str| -> f64 {
        let text = std::fs::read_to_string(dir.path().join(file)).unwrap();
        let (_, after) = text
            .split_once(" in ")
            .unwrap_or_else(|| panic!("a time in {file}: {text}"));
        let number: String = after
            .chars()
            .take_while(|c| c.is_ascii_digit() || *c == '.')
            .collect();
        number.parse().unwrap_or_else(|_| panic!("{file}: {text}"))
    };
    let (live, report) = (seconds("live.md"), seconds("report.md"));
    assert!(live < 2.5, "the live run ran its tests at once: {live}s");
    assert!(
        (report - live).abs() < 0.5,
        "report mode shows the run's wall time ({live}s live), not its evals' sum: {report}s"
    );
}
