//! Providers as real promptfoo suites write them, each from a few-line suite against the
//! loopback fake: providers files (alone or in a list), a test's own `provider` and its
//! `providers` filter, provider `config` keys in the request body as promptfoo sends them, and
//! the http provider's request and response transforms.

use std::path::Path;

use serde_json::Value;

use super::support::{Fake, niceeval};

fn write(dir: &Path, name: &str, text: &str) {
    std::fs::write(dir.join(name), text).unwrap();
}

/// Runs the suite `text` (with `files` beside it) against `fake`; returns exit code, stdout
/// and stderr.
fn run_with(fake: &Fake, text: &str, files: &[(&str, &str)]) -> (Option<i32>, String, String) {
    let dir = tempfile::tempdir().unwrap();
    for (name, body) in files {
        write(dir.path(), name, body);
    }
    write(dir.path(), "promptfooconfig.yaml", text);
    let out = niceeval(dir.path(), fake, &["-c", "promptfooconfig.yaml"]);
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).to_string(),
        String::from_utf8_lossy(&out.stderr).to_string(),
    )
}

fn run(text: &str, files: &[(&str, &str)]) -> (Option<i32>, String, String) {
    run_with(&Fake::start(), text, files)
}

/// The request bodies the recording fake saw, with their paths.
fn recorded(file: &Path) -> Vec<(String, Value)> {
    std::fs::read_to_string(file)
        .unwrap_or_default()
        .lines()
        .map(|line| {
            let entry: Value = serde_json::from_str(line).unwrap();
            let body = entry["body"].as_str().unwrap_or_default();
            (
                entry["path"].as_str().unwrap_or_default().to_string(),
                serde_json::from_str(body).unwrap_or(Value::String(body.to_string())),
            )
        })
        .collect()
}

#[test]
fn providers_files_load_alone_and_in_a_list() {
    // A list mixing a providers file (itself a list) with an id; the fake's model answers
    // "Answer: …", echo the prompt: both contain the word.
    let suite = "prompts: ['Say {{word}}']\nproviders:\n  - file://more.yaml\n  - echo\n\
                 tests:\n  - vars: {word: hello}\n    assert:\n      - type: contains\n        value: hello\n";
    let more = "- id: openai:chat:gpt-4o-mini\n  label: fake model\n- id: echo\n  label: parrot\n";
    let (code, stdout, stderr) = run(suite, &[("more.yaml", more)]);
    assert_eq!(code, Some(0), "{stdout}\n{stderr}");
    assert!(stdout.contains("3 passed"), "{stdout}");
    assert!(stdout.contains("parrot"), "{stdout}");
    // A providers file holding one provider (a mapping), as `providers:` itself; JSON too.
    let suite = "prompts: ['Say {{word}}']\nproviders: file://one.json\n\
                 tests:\n  - vars: {word: hi}\n    assert:\n      - type: equals\n        value: Say hi\n";
    let (code, stdout, stderr) = run(suite, &[("one.json", r#"{"id": "echo"}"#)]);
    assert_eq!(code, Some(0), "{stdout}\n{stderr}");
    assert!(stdout.contains("1 passed"), "{stdout}");
    // A file's provider without an `id` is located in that file.
    let (code, _, stderr) = run(
        "prompts: [hi]\nproviders: [file://bad.yaml]\ntests:\n  - vars: {a: 1}\n",
        &[("bad.yaml", "- id: echo\n- label: nameless\n")],
    );
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains("bad.yaml:2:3") && stderr.contains("needs an `id`"),
        "{stderr}"
    );
}

#[test]
fn a_test_calls_its_own_provider_and_runs_against_the_providers_it_names() {
    // `provider`: echo answers in both columns (the model would say "Answer: Say hi");
    // `providers: [model]`: only the model's column runs (echo would fail `starts-with`).
    let suite = "prompts: ['Say {{word}}']\nproviders:\n  - id: openai:chat:gpt-4o-mini\n    label: model\n  - echo\n\
                 tests:\n  - description: own\n    vars: {word: hi}\n    provider: echo\n    assert:\n      - type: equals\n        value: Say hi\n\
                 \x20 - description: only-model\n    vars: {word: hi}\n    providers: [model]\n    assert:\n      - type: starts-with\n        value: 'Answer:'\n";
    let (code, stdout, stderr) = run(suite, &[]);
    assert_eq!(code, Some(0), "{stdout}\n{stderr}");
    assert!(stdout.contains("3 passed"), "{stdout}");
    // `defaultTest.providers` applies to every test; a reference to no provider is an error.
    let (code, _, stderr) = run(
        "prompts: [hi]\nproviders: [echo]\ndefaultTest:\n  providers: ['openai:*']\ntests:\n  - vars: {a: 1}\n",
        &[],
    );
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains("\"openai:*\"") && stderr.contains("available providers: echo"),
        "{stderr}"
    );
}

/// promptfoo renders a provider's id as a template (`{{ env.NAME }}`) before it reads it; a
/// list var of objects is one value, not one test per item (only a list of strings expands).
#[test]
fn provider_ids_are_rendered_and_only_lists_of_strings_expand() {
    let dir = tempfile::tempdir().unwrap();
    let suite = "prompts: ['{{word}} {{turns | length}}']\nproviders: ['{{ env.SUITE_PROVIDER }}']\n\
                 tests:\n  - vars:\n      word: [hi, ho]\n      turns: [{role: user}, {role: assistant}, {role: user}]\n    assert:\n      - type: regex\n        value: '^h[io] 3$'\n";
    write(dir.path(), "promptfooconfig.yaml", suite);
    let fake = Fake::start();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_niceeval"))
        .args(["eval", "-c", "promptfooconfig.yaml"])
        .current_dir(dir.path())
        .env("SUITE_PROVIDER", "echo")
        .env("OPENAI_BASE_URL", &fake.url)
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");
    // Two tests (the words), not six (words × turns): `turns` reaches the prompt whole.
    assert!(stdout.contains("2 passed"), "{stdout}");
}

#[test]
fn provider_config_keys_reach_the_request_body_as_promptfoo_sends_them() {
    let dir = tempfile::tempdir().unwrap();
    let record = dir.path().join("requests.jsonl");
    let fake = Fake::start_with(&["--record", record.to_str().unwrap()]);
    let suite = format!(
        "prompts: ['Say {{{{word}}}}']\nproviders:\n\
         \x20 - id: openai:chat:gpt-4o-mini\n    config:\n      seed: 42\n      top_p: 0.5\n      stop: [END]\n      stream: false\n      \
         num_predict: 9\n      response_format: file://format.json\n      passthrough: {{num_ctx: 2048}}\n\
         \x20 - id: anthropic:messages:claude-fake\n    config:\n      apiBaseUrl: {url}\n      top_k: 5\n      stream: false\n\
         tests:\n  - vars: {{word: hi}}\n    assert:\n      - type: contains\n        value: hi\n",
        url = fake.url
    );
    let (code, stdout, stderr) = run_with(
        &fake,
        &suite,
        &[("format.json", r#"{"type": "json_object"}"#)],
    );
    assert_eq!(code, Some(0), "{stdout}\n{stderr}");
    assert!(
        stderr.contains("`num_predict` in the config of provider `openai:chat:gpt-4o-mini`"),
        "no notice for num_predict:\n{stderr}"
    );
    let seen = recorded(&record);
    let openai = seen
        .iter()
        .find(|(p, _)| p.ends_with("/chat/completions"))
        .map(|(_, b)| b)
        .unwrap_or_else(|| panic!("no OpenAI request in {seen:?}"));
    assert_eq!(openai["seed"], 42, "{openai}");
    assert_eq!(openai["top_p"], 0.5, "{openai}");
    assert_eq!(openai["stop"], serde_json::json!(["END"]), "{openai}");
    assert_eq!(openai["response_format"]["type"], "json_object", "{openai}");
    assert_eq!(openai["num_ctx"], 2048, "{openai}");
    assert_eq!(openai["temperature"], 0.0, "{openai}");
    assert_eq!(openai["max_tokens"], 1024, "{openai}");
    assert!(openai.get("num_predict").is_none(), "{openai}");
    assert!(openai.get("stream").is_none(), "{openai}");
    let anthropic = seen
        .iter()
        .find(|(p, _)| p.ends_with("/messages"))
        .map(|(_, b)| b)
        .unwrap_or_else(|| panic!("no Anthropic request in {seen:?}"));
    assert_eq!(anthropic["stream"], false, "{anthropic}");
    assert_eq!(anthropic["top_k"], 5, "{anthropic}");
    assert_eq!(anthropic["temperature"], 0.0, "{anthropic}");
    assert_eq!(anthropic["max_tokens"], 1024, "{anthropic}");
}

#[test]
fn the_http_provider_transforms_its_request_and_response() {
    let node = std::process::Command::new("node")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !super::support::available(node, "node", "Node.js (.ci/run requires it)") {
        return;
    }
    let fake = Fake::start();
    let suite = |transform: &str, want: &str| {
        format!(
            "prompts: ['Say {{{{word}}}}']\nproviders:\n  - id: http\n    config:\n      url: {url}/chat/completions\n      \
             headers: {{Content-Type: application/json}}\n      body:\n        model: gpt-4o-mini\n        \
             messages: [{{role: user, content: '{{{{prompt}}}}'}}]\n      transformRequest: \"{transform}\"\n      \
             transformResponse: json.choices[0].message.content\n\
             tests:\n  - vars: {{word: hi}}\n    assert:\n      - type: equals\n        value: '{want}'\n",
            url = fake.url
        )
    };
    // Text: the prompt the body is rendered with.
    let (code, stdout, stderr) =
        run_with(&fake, &suite("prompt.toUpperCase()", "Answer: SAY HI"), &[]);
    assert_eq!(code, Some(0), "{stdout}\n{stderr}");
    // An object: merged over the JSON body.
    let (code, stdout, stderr) = run_with(
        &fake,
        &suite(
            "({messages: [{role: 'user', content: 'obj ' + prompt}]})",
            "Answer: obj Say hi",
        ),
        &[],
    );
    assert_eq!(code, Some(0), "{stdout}\n{stderr}");
}

#[test]
fn an_unreachable_http_provider_is_retried_and_names_the_cause() {
    // A port nothing listens on: bound, then closed.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let (code, stdout, stderr) = run(
        &format!(
            "prompts: [hi]\nproviders:\n  - id: http://127.0.0.1:{port}/chat\n    config:\n      body: {{q: '{{{{prompt}}}}'}}\n\
             tests:\n  - vars: {{a: 1}}\n    assert:\n      - type: contains\n        value: hi\n"
        ),
        &[],
    );
    assert_ne!(code, Some(0), "{stdout}\n{stderr}");
    let all = format!("{stdout}\n{stderr}");
    assert!(all.contains("after 4 attempts"), "{all}");
    assert!(
        all.contains("Connection refused") || all.to_lowercase().contains("tcp connect"),
        "no cause in:\n{all}"
    );
}
