//! Named custom assertions from `.niceeval/assertions/`, in Rust and as data, with real Python,
//! Node and shell scripts.

use crate::scripts_support as support;

use std::path::Path;

use niceeval::__workspace::expect::CustomAssertions;
use niceeval::AssertionResult;
use niceeval::prelude::*;
#[cfg(feature = "yaml")]
use niceeval::spec::{self, SpecContext};
use support::{have, write};

const MIN_WORDS: &str = r#"
import json, sys
data = json.load(sys.stdin)
words = len((data.get("output") or "").split())
need = (data.get("config") or {}).get("min", 3)
ok = words >= need
print(json.dumps({"pass": ok, "score": 1.0 if ok else min(words / need, 0.9),
                  "assertions": [{"text": f"Output has {words} words (need {need})", "passed": ok}]}))
"#;

const SHOUT: &str = r#"
const data = JSON.parse(require('fs').readFileSync(0, 'utf8'));
const out = data.output ?? '';
const ok = out === out.toUpperCase();
console.log(JSON.stringify({ pass: ok, score: ok ? 1 : 0, reason: ok ? 'all caps' : 'not all caps' }));
"#;

fn project() -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(root, ".niceeval/assertions/min-words.py", MIN_WORDS);
    write(root, ".niceeval/assertions/shout.js", SHOUT);
    write(
        root,
        ".niceeval/assertions/has-digit.sh",
        "#!/bin/bash\ninput=$(cat)\nif echo \"$input\" | grep -q '\"output\": *\"[^\"]*[0-9]'; then echo 'has a digit'; else echo 'no digit'; exit 1; fi\n",
    );
    write(
        root,
        ".niceeval/assertions/crash.py",
        "raise SystemExit('grader is broken')\n",
    );
    write(
        root,
        ".niceeval/assertions/contains.py",
        "print('{\"pass\": false, \"score\": 0}')\n",
    );
    write(root, ".niceeval/assertions/notes.txt", "not an assertion");
    #[cfg(unix)]
    {
        let exec = write(
            root,
            ".niceeval/assertions/always-ok",
            "#!/bin/sh\ncat > /dev/null\necho fine\n",
        );
        support::make_executable(&exec);
    }
    let deep = root.join("evals/support/deep");
    std::fs::create_dir_all(&deep).unwrap();
    (dir, deep)
}

fn check(value: &str, assertion: impl Assertion) -> AssertionResult {
    AssertionResult::evaluate(&assertion, &value.subject())
}

#[test]
fn discovery_walks_up_and_ignores_built_in_names() {
    let (dir, deep) = project();
    let found = CustomAssertions::discover(&deep);
    let names: Vec<&str> = found.entries.keys().map(String::as_str).collect();
    let mut expected = vec!["crash", "has-digit", "min-words", "shout"];
    if cfg!(unix) {
        expected.insert(0, "always-ok");
    }
    assert_eq!(names, expected);
    assert!(
        found
            .ignored
            .iter()
            .any(|(p, why)| p.ends_with("contains.py") && why.contains("built-in"))
    );
    assert_eq!(
        found.dir.as_deref().map(Path::to_path_buf),
        Some(
            dir.path()
                .canonicalize()
                .unwrap()
                .join(".niceeval/assertions")
        )
    );
    let r = check("x", custom("contains").from_dir(&deep));
    assert!(
        r.error.is_some() && r.reason.contains("built-in"),
        "{}",
        r.reason
    );
    let r = check("x", custom("nope").from_dir(&deep));
    assert!(r.error.is_some());
    assert!(r.reason.contains("it defines: "), "{}", r.reason);
    assert!(r.reason.contains("min-words"), "{}", r.reason);
    let empty = tempfile::tempdir().unwrap();
    let r = check("x", custom("nope").from_dir(empty.path()));
    assert!(
        r.reason.contains("there is no .niceeval/assertions folder"),
        "{}",
        r.reason
    );
}

#[test]
fn python_node_shell_and_executable_custom_assertions() {
    if !have("python3") || !have("node") || !have("bash") {
        return;
    }
    let (_dir, deep) = project();
    let r = check(
        "Hello there, nice to meet you!",
        custom("min-words").from_dir(&deep),
    );
    assert!(r.passed, "{}", r.reason);
    let r = check(
        "Hi",
        custom("min-words")
            .from_dir(&deep)
            .config(json!({"min": 3})),
    );
    assert!(!r.passed && r.error.is_none());
    assert_eq!(r.children[0].name, "Output has 1 words (need 3)");
    assert!((r.score - 1.0 / 3.0).abs() < 1e-9);
    assert!(check("LOUD", custom("shout").from_dir(&deep)).passed);
    assert!(!check("quiet", custom("shout").from_dir(&deep)).passed);
    assert!(check("order 7", custom("has-digit").from_dir(&deep)).passed);
    let r = check("no number", custom("has-digit").from_dir(&deep));
    assert!(!r.passed && r.error.is_none() && r.reason == "no digit");
    let r = check("x", custom("crash").from_dir(&deep));
    assert!(
        r.error.is_some() && r.reason.contains("grader is broken"),
        "{}",
        r.reason
    );
    #[cfg(unix)]
    assert!(check("x", custom("always-ok").from_dir(&deep)).passed);
}

#[cfg(feature = "yaml")]
#[test]
fn custom_assertions_as_data() {
    if !have("python3") || !have("node") {
        return;
    }
    let (_dir, deep) = project();
    let specs = spec::from_yaml(
        r#"
assert:
  - type: min-words
    config: { min: 2 }
  - type: not-min-words
    min: 10
  - type: custom:shout
  - type: contains
    value: HELLO
"#,
    )
    .unwrap_err();
    // Loaded from the current directory, the custom types do not exist: a load-time error.
    assert!(specs.to_string().contains("min-words"), "{specs}");

    let file = write(
        &deep,
        "suite.yaml",
        r#"
- type: min-words
  config: { min: 2 }
- type: not-min-words
  min: 10
- type: custom:shout
- type: contains
  value: HELLO
"#,
    );
    let specs = spec::load(&file).unwrap();
    let context = SpecContext::new().with_base_dir(&deep);
    let outcome = spec::evaluate(&specs, "HELLO THERE FRIEND", &context).unwrap();
    for r in &outcome.results {
        assert!(r.passed, "{}: {}", r.name, r.reason);
    }
    assert!(outcome.pass);
    let outcome = spec::evaluate(&specs, "hello", &context).unwrap();
    assert!(!outcome.pass);
    assert!(!outcome.results[0].passed);
    assert!(
        outcome.results[1].passed,
        "1 word is not ≥ 10 (extra keys are config)"
    );
    assert!(
        !outcome.results[3].passed,
        "`contains` stays the built-in, not contains.py"
    );

    let bad = vec![spec::AssertSpec::of_type("min-wordz")];
    let err = spec::evaluate(&bad, "x", &context).unwrap_err().to_string();
    assert!(err.contains("assertion #0 (type `min-wordz`)"), "{err}");
    // The custom assertions found are suggested too.
    assert!(err.contains("did you mean `min-words`?"), "{err}");
    assert!(err.contains("it defines: "), "{err}");
}
