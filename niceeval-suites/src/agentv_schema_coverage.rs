//! AgentV 4.42.4's eval-file keys (by place), target keys (per provider kind) and grader
//! types (with their keys), as data extracted from its source (`tests/schema/agentv-4.42.4.json`,
//! which names the repository, the commit and the file each list comes from), loaded by
//! niceeval: each entry, set to a sample value in a small eval file (with fixture files and a
//! `.agentv/targets.yaml` beside it), must load, or be listed in DIALECTS.md as
//! `` - `agentv schema:<entry>`: reason ``. An entry is `<place>.<key>`, `type:<type>`,
//! `type:<type>.<key>`, `target:<kind>`, `target:<kind>.<key>`, `target:common.<key>` or
//! `target:file.<key>`; one whose parent (a place's or a key's `parent`, its type, its kind) does
//! not load is covered by the parent's entry. A listed entry that loads, or that names nothing
//! of the data, fails the test too.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use serde_json::{Map, Value, json};

fn data() -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/schema/agentv-4.42.4.json");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The entries DIALECTS.md lists: `` - `agentv schema:…`: reason `` with a reason.
fn listed() -> BTreeSet<String> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("DIALECTS.md");
    let text = std::fs::read_to_string(path).unwrap_or_default();
    text.lines()
        .filter_map(|line| {
            let rest = line.trim_start().strip_prefix("- `agentv schema:")?;
            let (entry, after) = rest.split_once('`')?;
            let reason = after.trim_start().strip_prefix(':')?.trim();
            (!reason.is_empty()).then(|| entry.to_string())
        })
        .collect()
}

fn object(v: &Value) -> &Map<String, Value> {
    v.as_object()
        .unwrap_or_else(|| panic!("a mapping in the schema data, got {v}"))
}

/// `key@form` is the key `key` (the form names the sample).
fn real_key(key: &str) -> &str {
    key.split_once('@').map_or(key, |(k, _)| k)
}

/// The value at `path` (a string is a key, a number an index, -1 the last item).
fn at_mut<'a>(doc: &'a mut Value, path: &[Value]) -> &'a mut Value {
    path.iter().fold(doc, |v, step| match step {
        Value::String(k) => v
            .as_object_mut()
            .and_then(|m| m.get_mut(k))
            .unwrap_or_else(|| panic!("no `{k}` on the way to {path:?}")),
        Value::Number(n) => {
            let list = v
                .as_array_mut()
                .unwrap_or_else(|| panic!("no list on the way to {path:?}"));
            let i = n.as_i64().expect("an index");
            let i = if i < 0 {
                list.len().checked_sub(1).expect("a list with items")
            } else {
                i as usize
            };
            &mut list[i]
        }
        other => panic!("a step is a key or an index, got {other}"),
    })
}

/// Sets the value at `path` (its parent must exist).
fn set_at(doc: &mut Value, path: &[Value], value: Value) {
    let Some((last, parent)) = path.split_last() else {
        *doc = value;
        return;
    };
    let parent = at_mut(doc, parent);
    match last {
        Value::String(k) => {
            parent
                .as_object_mut()
                .unwrap_or_else(|| panic!("a mapping at {path:?}"))
                .insert(k.clone(), value);
        }
        _ => *at_mut(parent, std::slice::from_ref(last)) = value,
    }
}

/// `base` with the key set: its `replaces` removed, its `with` keys and the key itself added.
fn with_key(base: &Map<String, Value>, key: &str, spec: &Value) -> Map<String, Value> {
    let mut map = base.clone();
    for k in spec["replaces"].as_array().into_iter().flatten() {
        map.remove(k.as_str().expect("a key"));
    }
    if let Some(with) = spec["with"].as_object() {
        map.extend(with.clone());
    }
    map.insert(real_key(key).to_string(), spec["sample"].clone());
    map
}

/// A temporary folder with the files the samples name, where each check writes its eval file
/// and its targets file and loads them.
struct Bench {
    dir: tempfile::TempDir,
    base: Value,
}

impl Bench {
    fn new(base: Value) -> Bench {
        let dir = tempfile::tempdir().expect("a temporary folder");
        let files: &[(&str, &str)] = &[
            ("notes.txt", "Some notes.\n"),
            ("template/README.md", "A workspace template.\n"),
            (
                "cases.yaml",
                "- id: ext1\n  input: hi\n  assertions:\n    - type: contains\n      value: hi\n",
            ),
            (
                "cases.jsonl",
                "{\"id\": \"ext2\", \"input\": \"hi\", \"criteria\": \"Says hi.\"}\n",
            ),
            (
                "cases/first/case.yaml",
                "input: hi\nassertions:\n  - type: contains\n    value: hi\n",
            ),
            (
                "more/extra.yaml",
                "- id: ext3\n  input: hi\n  criteria: Says hi.\n",
            ),
            ("workspace.yaml", "template: template\n"),
            (
                "checks.yaml",
                "assertions:\n  - type: contains\n    value: hi\n",
            ),
            (
                ".agentv/templates/greeting.yaml",
                "assertions:\n  - type: contains\n    value: hi\n",
            ),
            (
                ".agentv/assertions/my-check.ts",
                "export default () => ({ score: 1 });\n",
            ),
            (
                "grader.py",
                "import json, sys\njson.load(sys.stdin)\nprint(json.dumps({\"score\": 1}))\n",
            ),
            ("prompt.md", "Is the answer polite?\n"),
            ("prompt.py", "print('Is the answer polite?')\n"),
            ("prep.py", "import sys\nprint(sys.stdin.read())\n"),
            (
                "aggregate.py",
                "import json\nprint(json.dumps({\"score\": 1}))\n",
            ),
            ("replay.jsonl", "{}\n"),
            ("my-provider.js", "console.log('hi');\n"),
        ];
        for (name, text) in files {
            let path = dir.path().join(name);
            if let Some(parent) = path.parent() {
                std::fs::create_dir_all(parent).expect("a folder");
            }
            std::fs::write(path, text).expect("a file");
        }
        // A one-pixel PNG.
        std::fs::write(
            dir.path().join("pixel.png"),
            [
                0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 0x0d, 0x49, 0x48, 0x44,
                0x52, 0, 0, 0, 1, 0, 0, 0, 1, 8, 6, 0, 0, 0, 0x1f, 0x15, 0xc4, 0x89,
            ],
        )
        .expect("a file");
        std::fs::create_dir_all(dir.path().join("traces")).expect("a folder");
        Bench { dir, base }
    }

    fn path(&self) -> PathBuf {
        self.dir.path().join("smoke.eval.yaml")
    }

    /// Loads `eval` beside `targets` (a targets file's `targets`, and its other top keys):
    /// `None` when it loads, else the error.
    fn load(&self, eval: &Value, targets: &Value) -> Option<String> {
        std::fs::write(
            self.dir.path().join(".agentv/targets.yaml"),
            serde_json::to_string_pretty(targets).expect("JSON"),
        )
        .expect("a file");
        let path = self.path();
        std::fs::write(&path, serde_json::to_string_pretty(eval).expect("JSON")).expect("a file");
        crate::load(&path).err().map(|e| {
            let text = e.to_string();
            let dir = self.dir.path().display().to_string();
            text.replace(&dir, ".")
        })
    }
}

/// An LLM target of the default targets file.
fn llm_target(name: &str) -> Value {
    json!({"name": name, "provider": "openai", "model": "gpt-4o-mini", "api_key": "${{ API_KEY }}"})
}

fn default_targets() -> Value {
    json!({"targets": [llm_target("llm"), llm_target("grader")]})
}

/// Each entry's outcome (`None`: it loads) and its parent entry.
type Outcomes = BTreeMap<String, (Option<String>, Option<String>)>;

fn record(outcomes: &mut Outcomes, entry: String, outcome: Option<String>, parent: Option<String>) {
    assert!(
        !outcomes.contains_key(&entry),
        "the schema data names `{entry}` twice"
    );
    outcomes.insert(entry, (outcome, parent));
}

fn check_places(bench: &Bench, data: &Value, outcomes: &mut Outcomes) {
    for (name, place) in object(&data["places"]) {
        let path = place["path"].as_array().expect("a place's path");
        for (key, spec) in object(&place["keys"]) {
            let parent = spec["parent"]
                .as_str()
                .or(place["parent"].as_str())
                .map(str::to_string);
            let mut doc = bench.base.clone();
            for step in place["context"].as_array().into_iter().flatten() {
                let step = step.as_array().expect("a context step is [path, value]");
                set_at(
                    &mut doc,
                    step[0].as_array().expect("a context path"),
                    step[1].clone(),
                );
            }
            let value = if place["item"].as_bool() == Some(true) {
                spec["sample"].clone()
            } else {
                let base = match place.get("base") {
                    Some(base) => object(base).clone(),
                    None => object(at_mut(&mut doc, path)).clone(),
                };
                Value::Object(with_key(&base, key, spec))
            };
            set_at(&mut doc, path, value);
            let outcome = bench.load(&doc, &default_targets());
            record(outcomes, format!("{name}.{key}"), outcome, parent);
        }
    }
}

fn check_targets(bench: &Bench, data: &Value, outcomes: &mut Outcomes) {
    let targets = &data["targets"];
    let mut eval = bench.base.clone();
    set_at(&mut eval, &[json!("target")], json!("under-test"));
    let load = |under_test: Map<String, Value>| {
        let mut file = default_targets();
        file["targets"]
            .as_array_mut()
            .expect("a list")
            .push(Value::Object(under_test));
        bench.load(&eval, &file)
    };
    let target = |provider: &str, sample: &Value| {
        let mut map = object(&json!({"name": "under-test", "provider": provider})).clone();
        map.extend(object(sample).clone());
        map
    };
    for (key, spec) in object(&targets["file"]["keys"]) {
        let mut file = default_targets();
        file[key.as_str()] = spec["sample"].clone();
        let mut eval = bench.base.clone();
        set_at(&mut eval, &[json!("target")], json!("llm"));
        let outcome = bench.load(&eval, &file);
        record(outcomes, format!("target:file.{key}"), outcome, None);
    }
    for (kind, spec) in object(&targets["kinds"]) {
        let provider = spec["provider"].as_str().unwrap_or(kind);
        let base = target(provider, &spec["sample"]);
        let entry = format!("target:{kind}");
        record(outcomes, entry.clone(), load(base.clone()), None);
        for alias in spec["aliases"].as_array().into_iter().flatten() {
            let alias = alias.as_str().expect("an alias");
            let outcome = load(target(alias, &spec["sample"]));
            record(
                outcomes,
                format!("target:{alias}"),
                outcome,
                Some(entry.clone()),
            );
        }
        for (key, key_spec) in object(&spec["keys"]) {
            let outcome = load(with_key(&base, key, key_spec));
            record(
                outcomes,
                format!("target:{kind}.{key}"),
                outcome,
                Some(entry.clone()),
            );
        }
    }
    let openai = target("openai", &targets["kinds"]["openai"]["sample"]);
    for (key, spec) in object(&targets["common"]["keys"]) {
        let under_test = if spec["bare"].as_bool() == Some(true) {
            with_key(&object(&json!({"name": "under-test"})).clone(), key, spec)
        } else {
            with_key(&openai, key, spec)
        };
        record(
            outcomes,
            format!("target:common.{key}"),
            load(under_test),
            Some("target:openai".into()),
        );
    }
}

fn check_graders(bench: &Bench, data: &Value, outcomes: &mut Outcomes) {
    let graders = &data["graders"];
    let load = |item: Map<String, Value>| {
        let mut doc = bench.base.clone();
        set_at(
            &mut doc,
            &[json!("tests"), json!(-1), json!("assertions")],
            json!([item]),
        );
        bench.load(&doc, &default_targets())
    };
    let common = object(&graders["common"]["keys"]);
    for (kind, spec) in object(&graders["types"]) {
        let item = |t: &str| {
            let mut map = object(&json!({"type": t})).clone();
            map.extend(object(&spec["sample"]).clone());
            map
        };
        let entry = format!("type:{kind}");
        record(outcomes, entry.clone(), load(item(kind)), None);
        for alias in spec["aliases"].as_array().into_iter().flatten() {
            let alias = alias.as_str().expect("an alias");
            record(
                outcomes,
                format!("type:{alias}"),
                load(item(alias)),
                Some(entry.clone()),
            );
        }
        let keys = object(&spec["keys"]);
        for (key, key_spec) in common
            .iter()
            .filter(|(k, _)| !keys.contains_key(*k))
            .chain(keys)
        {
            record(
                outcomes,
                format!("type:{kind}.{key}"),
                load(with_key(&item(kind), key, key_spec)),
                Some(entry.clone()),
            );
        }
    }
}

/// Whether an ancestor of `entry` does not load (its entry then covers `entry`).
fn covered(outcomes: &Outcomes, entry: &str) -> bool {
    let mut parent = outcomes.get(entry).and_then(|(_, p)| p.clone());
    let mut depth = 0;
    while let Some(p) = parent {
        let (outcome, next) = outcomes
            .get(&p)
            .unwrap_or_else(|| panic!("`{entry}` names the parent `{p}`, which is no entry"));
        if outcome.is_some() {
            return true;
        }
        parent = next.clone();
        depth += 1;
        assert!(depth < 16, "a parent loop at `{entry}`");
    }
    false
}

#[test]
fn the_schema_data_names_its_files() {
    let data = data();
    let source = &data["source"];
    assert_eq!(
        source["commit"].as_str().map(str::len),
        Some(40),
        "the source commit is a full hash"
    );
    let files = object(&source["files"]);
    let mut froms = Vec::new();
    for place in object(&data["places"]).values() {
        for spec in object(&place["keys"]).values() {
            froms.push(&spec["from"]);
        }
    }
    froms.extend(
        object(&data["targets"]["kinds"])
            .values()
            .map(|k| &k["from"]),
    );
    froms.push(&data["targets"]["common"]["from"]);
    froms.push(&data["targets"]["file"]["from"]);
    froms.push(&data["graders"]["common"]["from"]);
    froms.extend(
        object(&data["graders"]["types"])
            .values()
            .map(|t| &t["from"]),
    );
    for from in froms {
        let names = from
            .as_array()
            .unwrap_or_else(|| panic!("`from` is a list of files, got {from}"));
        assert!(!names.is_empty(), "an entry names no source file");
        for name in names {
            let name = name.as_str().expect("a file alias");
            assert!(
                files.contains_key(name),
                "`{name}` is not a file of the source"
            );
        }
    }
}

#[test]
fn every_agentv_schema_entry_loads_or_is_listed() {
    let data = data();
    let listed = listed();
    let bench = Bench::new(data["base"].clone());
    assert_eq!(
        bench.load(&bench.base, &default_targets()),
        None,
        "the base eval file loads"
    );
    let mut outcomes = Outcomes::new();
    check_places(&bench, &data, &mut outcomes);
    check_targets(&bench, &data, &mut outcomes);
    check_graders(&bench, &data, &mut outcomes);

    let mut missing = Vec::new();
    let mut stale = Vec::new();
    for (entry, (outcome, _)) in &outcomes {
        match outcome {
            Some(why) if !listed.contains(entry) && !covered(&outcomes, entry) => {
                missing.push(format!("{entry}: {}", why.replace('\n', " | ")));
            }
            None if listed.contains(entry) => stale.push(entry.clone()),
            _ => {}
        }
    }
    let unknown: Vec<&String> = listed
        .iter()
        .filter(|e| !outcomes.contains_key(*e))
        .collect();
    let loads = outcomes.values().filter(|(o, _)| o.is_none()).count();
    let under = outcomes
        .keys()
        .filter(|e| outcomes[*e].0.is_some() && covered(&outcomes, e))
        .count();
    eprintln!(
        "AgentV 4.42.4 schema: {} entries, {loads} load, {under} covered by a parent, {} listed in DIALECTS.md",
        outcomes.len(),
        listed.len()
    );
    let mut problems = Vec::new();
    if !missing.is_empty() {
        problems.push(format!(
            "AgentV schema entries niceeval neither loads nor lists in DIALECTS.md as `- `agentv schema:<entry>`: reason`:\n{}",
            missing.join("\n")
        ));
    }
    if !stale.is_empty() {
        problems.push(format!(
            "listed in DIALECTS.md, but they load (remove the entries):\n{}",
            stale.join("\n")
        ));
    }
    if !unknown.is_empty() {
        problems.push(format!(
            "listed in DIALECTS.md, but not in tests/schema/agentv-4.42.4.json:\n{}",
            unknown
                .iter()
                .map(|e| e.as_str())
                .collect::<Vec<_>>()
                .join("\n")
        ));
    }
    assert!(problems.is_empty(), "{}", problems.join("\n\n"));
}
