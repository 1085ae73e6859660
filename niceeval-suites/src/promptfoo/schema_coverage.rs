//! Every key and assertion type of promptfoo 0.123.1's config schema, as data extracted from
//! its package (`tests/schema/promptfoo-0.123.1.json`, which names the source), read by this
//! reader: each key, set to a sample value at its place in a small config, must read without
//! being refused and without the notice for keys the schema does not know (a schema key is
//! handled on purpose: read, or accepted with what niceeval does instead), or be listed in
//! DIALECTS.md as `` - `promptfoo schema:<where>.<key>`: reason ``. Each assertion type, and
//! its `not-` form, must be one niceeval runs, or be listed as
//! `` - `promptfoo schema:type:<type>`: reason ``.

use std::collections::BTreeSet;
use std::path::Path;

use serde_json::{Map, Value, json};

fn data() -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/schema/promptfoo-0.123.1.json");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The entries DIALECTS.md lists: `` - `promptfoo schema:…`: reason `` with a reason.
fn listed() -> BTreeSet<String> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("DIALECTS.md");
    let text = std::fs::read_to_string(path).unwrap_or_default();
    text.lines()
        .filter_map(|line| {
            let rest = line.trim_start().strip_prefix("- `promptfoo schema:")?;
            let (entry, after) = rest.split_once('`')?;
            let reason = after.trim_start().strip_prefix(':')?.trim();
            (!reason.is_empty()).then(|| entry.to_string())
        })
        .collect()
}

/// A config that reads: one prompt, the echo provider, one test.
fn base_config() -> Map<String, Value> {
    json!({
        "prompts": ["Say {{x}}"],
        "providers": ["echo"],
        "tests": [{"vars": {"x": "hi"}}],
    })
    .as_object()
    .cloned()
    .unwrap_or_default()
}

/// The config with `key: sample` at the place `place` names.
fn config_with(place: &str, key: &str, sample: &Value) -> Map<String, Value> {
    let mut config = base_config();
    let set = |target: &mut Map<String, Value>| {
        target.insert(key.to_string(), sample.clone());
    };
    match place {
        "config" => {
            if key == "targets" {
                config.remove("providers");
            }
            set(&mut config);
        }
        "test" => set(test(&mut config)),
        "options" => {
            let options = test(&mut config)
                .entry("options")
                .or_insert_with(|| json!({}));
            if let Some(map) = options.as_object_mut() {
                set(map);
            }
        }
        "evaluateOptions" => {
            let mut map = Map::new();
            set(&mut map);
            config.insert("evaluateOptions".into(), Value::Object(map));
        }
        "assertion" => {
            let kind = match key {
                "provider" | "rubricPrompt" => "llm-rubric",
                "contextTransform" => "context-relevance",
                _ => "contains",
            };
            let mut item = json!({"type": kind, "value": "hi"})
                .as_object()
                .cloned()
                .unwrap_or_default();
            if key != "type" {
                set(&mut item);
            }
            test(&mut config).insert("assert".into(), json!([item]));
        }
        "assertionSet" => {
            let mut item =
                json!({"type": "assert-set", "assert": [{"type": "contains", "value": "hi"}]})
                    .as_object()
                    .cloned()
                    .unwrap_or_default();
            set(&mut item);
            test(&mut config).insert("assert".into(), json!([item]));
        }
        "provider" => {
            let mut provider = json!({"id": "echo"})
                .as_object()
                .cloned()
                .unwrap_or_default();
            set(&mut provider);
            config.insert("providers".into(), json!([provider]));
        }
        "prompt" => {
            let mut prompt = json!({"raw": "Say {{x}}"})
                .as_object()
                .cloned()
                .unwrap_or_default();
            set(&mut prompt);
            config.insert("prompts".into(), json!([prompt]));
        }
        "scenario" => {
            let mut scenario = json!({"config": [{"vars": {"x": "a"}}], "tests": [{"vars": {}}]})
                .as_object()
                .cloned()
                .unwrap_or_default();
            set(&mut scenario);
            config.insert("scenarios".into(), json!([scenario]));
        }
        other => panic!("no place `{other}` in the schema data"),
    }
    config
}

fn test(config: &mut Map<String, Value>) -> &mut Map<String, Value> {
    config
        .get_mut("tests")
        .and_then(Value::as_array_mut)
        .and_then(|t| t.first_mut())
        .and_then(Value::as_object_mut)
        .expect("the base config has a test")
}

#[test]
fn every_schema_key_is_read_or_listed() {
    let data = data();
    let listed = listed();
    let dir = tempfile::tempdir().expect("a temporary folder");
    // Files the samples name.
    std::fs::write(
        dir.path().join("score.js"),
        "module.exports = () => ({pass: true, score: 1});",
    )
    .expect("a file");
    let mut missing = Vec::new();
    let keys = data["keys"].as_object().expect("keys by place");
    for (place, samples) in keys {
        for (key, sample) in samples.as_object().expect("a place's keys") {
            let entry = format!("{place}.{key}");
            let config = Value::Object(config_with(place, key, sample));
            let path = dir.path().join("promptfooconfig.yaml");
            let text = serde_json::to_string_pretty(&config).expect("JSON");
            std::fs::write(&path, &text).expect("a file");
            let why = match super::read(&path, text.clone()) {
                Ok(suite) => suite
                    .notices
                    .iter()
                    .find(|n| {
                        n.contains(&format!("`{key}`")) && n.contains("schema does not know it")
                    })
                    .map(|n| format!("read as a key promptfoo's schema does not know: {n}")),
                Err(e) => Some(e.to_string()),
            };
            if let Some(why) = why
                && !listed.contains(&entry)
            {
                missing.push(format!("{entry}: {why}"));
            }
        }
    }
    assert!(
        missing.is_empty(),
        "schema keys niceeval neither reads nor lists in DIALECTS.md as `- `promptfoo schema:<where>.<key>`: reason`:\n{}",
        missing.join("\n")
    );
}

#[test]
fn every_schema_assertion_type_runs_or_is_listed() {
    let data = data();
    let listed = listed();
    let runs: BTreeSet<&str> = super::valid_types().into_iter().collect();
    let mut missing = Vec::new();
    let base = data["assertion_types"].as_array().expect("the base types");
    let special = data["special_assertion_types"]
        .as_array()
        .expect("the special types");
    let dir = tempfile::tempdir().expect("a temporary folder");
    for kind in base.iter().chain(special).filter_map(Value::as_str) {
        if runs.contains(kind) {
            continue;
        }
        if !listed.contains(&format!("type:{kind}")) {
            missing.push(kind.to_string());
            continue;
        }
        // A listed type is refused with its reason, not as an unknown type.
        let mut config = base_config();
        test(&mut config).insert("assert".into(), json!([{"type": kind, "value": "x"}]));
        let path = dir.path().join("promptfooconfig.yaml");
        let text = serde_json::to_string_pretty(&Value::Object(config)).expect("JSON");
        std::fs::write(&path, &text).expect("a file");
        match super::read(&path, text.clone()) {
            Err(e)
                if e.to_string()
                    .contains(&format!("assertion type `{kind}` is not supported")) => {}
            other => missing.push(format!(
                "{kind} (listed, but read as {:?})",
                other.map(|_| "a file that runs")
            )),
        }
    }
    assert!(
        missing.is_empty(),
        "assertion types of promptfoo's schema niceeval neither runs nor lists in DIALECTS.md as `- `promptfoo schema:type:<type>`: reason`: {}",
        missing.join(", ")
    );
}
