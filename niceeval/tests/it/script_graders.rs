//! Script graders run for real: Python, Node and shell programs speaking the grader protocol,
//! including crashes, garbage output, timeouts and huge outputs.

use crate::scripts_support as support;

use std::time::{Duration, Instant};

use niceeval::AssertionResult;
use niceeval::prelude::*;
use support::{arg, have, write};

fn check(value: &str, assertion: impl Assertion) -> AssertionResult {
    AssertionResult::evaluate(&assertion, &value.subject())
}

const PY_CHECKS: &str = r#"
import json, sys
data = json.load(sys.stdin)
output = data.get("output") or ""
checks = [{"text": "mentions 42", "pass": "42" in output, "reason": "looked for 42"},
          {"text": "is short", "pass": len(output) < 40, "reason": f"{len(output)} chars"}]
passed = sum(1 for c in checks if c["pass"])
print("debug: graded", file=sys.stderr)
print(json.dumps({"pass": passed == len(checks), "score": passed / len(checks),
                  "reason": f"{passed}/{len(checks)} checks passed", "checks": checks}))
"#;

#[test]
fn python_grader_with_checks() {
    if !have("python3") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let grader = write(dir.path(), "check.py", PY_CHECKS);
    let r = check("The answer is 42.", script(["python3", &arg(&grader)]));
    assert!(r.passed, "{}", r.reason);
    assert_eq!(r.score, 1.0);
    assert_eq!(r.children.len(), 2);
    let r = check(
        "The answer is 41, which is a long and winding answer.",
        script(["python3", &arg(&grader)]),
    );
    assert!(!r.passed && r.error.is_none());
    assert_eq!(r.score, 0.0);
    assert_eq!(r.reason, "0/2 checks passed");
    assert_eq!(r.children[0].name, "mentions 42");
    assert!(!r.children[0].passed);
}

#[test]
fn node_grader_reads_the_payload() {
    if !have("node") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let grader = write(
        dir.path(),
        "check.js",
        r#"
const data = JSON.parse(require('fs').readFileSync(0, 'utf8'));
const ok = (data.output ?? '').includes(data.criteria);
console.log(JSON.stringify({ pass: ok, score: ok ? 1 : 0.25, reason: `criteria ${data.criteria} ${ok ? 'found' : 'missing'}` }));
"#,
    );
    let r = check(
        "Paris is the capital",
        script(["node", &arg(&grader)]).criteria("Paris"),
    );
    assert!(r.passed, "{}", r.reason);
    assert_eq!(r.reason, "criteria Paris found");
    let r = check("Lyon", script(["node", &arg(&grader)]).criteria("Paris"));
    assert!(!r.passed);
    assert_eq!(r.score, 0.25);
}

#[test]
fn payload_has_every_snake_case_field() {
    if !have("python3") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let grader = write(
        dir.path(),
        "keys.py",
        r#"
import json, os, sys
data = json.load(sys.stdin)
want = ["input", "input_files", "output", "expected_output", "messages", "criteria", "trace_summary",
        "token_usage", "cost_usd", "duration_ms", "workspace_path", "config"]
missing = [k for k in want if k not in data]
ok = not missing and data["trace_summary"]["tool_calls"] == {"lookup": 1} \
    and data["token_usage"] == {"input": 10, "output": 5} and data["config"] == {"min": 3} \
    and data["expected_output"][0]["content"] == "42" and data["input"][0]["role"] == "user" \
    and os.environ.get("AGENTV_WORKSPACE_PATH") == data["workspace_path"]
print(json.dumps({"pass": ok, "score": 1 if ok else 0, "reason": "missing: %s; got %s" % (missing, sorted(data))}))
"#,
    );
    let events = vec![
        Event::user("q"),
        Event::ActionCalled {
            call_id: "1".into(),
            name: "lookup".into(),
            input: json!({}),
        },
        Event::Usage {
            input_tokens: 10,
            output_tokens: 5,
            cache_read_tokens: 0,
            cost_usd: Some(0.01),
            model: None,
        },
        Event::assistant("42"),
    ];
    let grader = script(["python3", &arg(&grader)])
        .input("What is 6 x 7?")
        .expected_output("42")
        .criteria("42")
        .config(json!({"min": 3}))
        .workspace(dir.path())
        .events(&events);
    let r = check("42", grader);
    assert!(r.passed, "{}", r.reason);
}

#[test]
fn shell_exit_code_convention() {
    if !have("bash") {
        return;
    }
    let r = check("x", script(["bash", "-c", "echo 'PDF has 7 pages'"]));
    assert!(r.passed);
    // A pass by exit code alone says so.
    assert_eq!(
        r.reason,
        "PDF has 7 pages (note: the grader printed no JSON result; exit code 0 read as pass)"
    );
    let r = check("x", script(["bash", "-c", "echo 'only 2 pages'; exit 1"]));
    assert!(!r.passed && r.error.is_none());
    assert_eq!(r.reason, "only 2 pages");
    let r = check("x", script(["bash", "-c", "echo broken >&2; exit 3"]));
    assert!(r.error.is_some());
    assert!(
        r.reason.contains("exited with code 3: broken"),
        "{}",
        r.reason
    );
    let r = check("x", script(["bash", "-c", "[ 1 -ge 10 ]"]));
    assert!(
        !r.passed && r.error.is_none(),
        "silent one-liners fail on exit 1"
    );
}

#[test]
fn crashes_are_execution_errors() {
    if !have("python3") {
        return;
    }
    let r = check(
        "x",
        script([
            "python3",
            "-c",
            "import json,sys; json.load(sys.stdin); 1/0",
        ]),
    );
    assert!(r.error.is_some() && !r.passed);
    assert!(r.reason.contains("ZeroDivisionError"), "{}", r.reason);
    let r = check("x", script(["bash", "-c", "kill -9 $$"]));
    assert!(r.error.is_some());
    assert!(r.reason.contains("killed by a signal"), "{}", r.reason);
    let r = check("x", script(["./no/such/grader.py"]));
    assert!(r.error.is_some());
    assert!(r.reason.contains("was not found"), "{}", r.reason);
    let r = check("x", script(Vec::<String>::new()));
    assert!(r.error.is_some());
}

#[test]
fn garbage_output() {
    if !have("bash") {
        return;
    }
    let r = check("x", script(["bash", "-c", r#"echo '{"score": "banana"}'"#]));
    assert!(r.error.is_some());
    assert!(r.reason.contains("score must be a number"), "{}", r.reason);
    let r = check("x", script(["bash", "-c", r#"echo '{"verdict": 1}'"#]));
    assert!(r.error.is_some());
    let r = check(
        "x",
        script(["bash", "-c", "head -c 3000 /dev/urandom | base64"]),
    );
    assert!(r.passed, "non-JSON stdout with exit 0 passes by exit code");
    assert!(r.reason.len() < 700, "long stdout is elided in the reason");
    let r = check(
        "x",
        script(["bash", "-c", r#"echo '{"pass": true, "score": 7}'"#]),
    );
    assert!(r.passed && r.score == 1.0, "scores are clamped to [0, 1]");
}

#[test]
fn timeouts_kill_the_grader() {
    if !have("bash") {
        return;
    }
    let started = Instant::now();
    let r = check(
        "x",
        script(["bash", "-c", "sleep 20"]).timeout(Duration::from_millis(300)),
    );
    assert!(r.error.is_some());
    assert!(r.reason.contains("timed out after 0.3s"), "{}", r.reason);
    assert!(started.elapsed() < Duration::from_secs(10));
}

#[test]
fn huge_outputs_go_through_a_file_and_huge_stdout_is_bounded() {
    if !have("python3") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let grader = write(
        dir.path(),
        "size.py",
        r#"
import json, sys
data = json.load(sys.stdin)
assert data["output"] is None, "output must not be inline"
with open(data["output_path"]) as f:
    text = json.load(f)
print(json.dumps({"pass": len(text) == 200000 and text.endswith("END"), "score": 1, "reason": str(len(text))}))
"#,
    );
    let output = format!("{}END", "é".repeat(199_997));
    let r = check(&output, script(["python3", &arg(&grader)]));
    assert!(r.passed, "{}", r.reason);
    assert_eq!(r.reason, "200000");
    let r = check(
        "x",
        script([
            "bash",
            "-c",
            "head -c 30000000 /dev/zero | tr '\\0' 'a'; echo",
        ]),
    );
    assert!(r.passed);
}

#[test]
fn older_score_and_assertions_format() {
    if !have("bash") {
        return;
    }
    let r = check(
        "x",
        script([
            "bash",
            "-c",
            r#"echo '{"score": 0.4, "assertions": [{"text": "Output has 2 words", "passed": false}]}'"#,
        ]),
    );
    assert!(!r.passed, "without pass, a score under 0.5 fails");
    assert_eq!(r.score, 0.4);
    assert_eq!(r.children[0].name, "Output has 2 words");
}

/// Builds the `grader_keywords` example (a grader written with `niceeval::grader`) and returns
/// its executable. Built with `--workspace` from the workspace's root and with the `test`
/// profile: its dependencies then get the features and the profile `cargo test --workspace`
/// built them with (that command builds every example too), so under it the example is already
/// fresh; built for niceeval alone, two crates' features differ, and built with the `dev`
/// profile, the units differ by profile: either way most of the dependency tree was compiled
/// again (over a minute of CPU).
fn build_rust_grader() -> std::path::PathBuf {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_string());
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/..");
    let out = std::process::Command::new(cargo)
        .current_dir(root)
        .args([
            "build",
            "--quiet",
            "--workspace",
            "--example",
            "grader_keywords",
            "--profile",
            "test",
            "--message-format=json",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .find_map(|m| {
            m["executable"]
                .as_str()
                .filter(|e| e.contains("grader_keywords"))
                .map(std::path::PathBuf::from)
        })
        .expect("cargo reported no grader_keywords executable")
}

#[test]
fn rust_grader_built_with_niceeval_grader() {
    let grader = build_rust_grader();
    let r = check(
        "The refund for order 123 is on its way",
        script([arg(&grader)]).config(json!({"keywords": ["refund", "order"]})),
    );
    assert!(r.passed, "{}", r.reason);
    assert_eq!(r.children.len(), 2);
    let r = check(
        "Hello",
        script([arg(&grader)]).config(json!({"keywords": ["refund", "order"]})),
    );
    assert!(!r.passed);
    assert_eq!(r.reason, "0/2 checks passed");
    // Bad input: the helper reports on stderr and exits 2, an execution error.
    let r = check(
        "x",
        script(["bash", "-c", &format!("echo nope | {}", arg(&grader))]),
    );
    assert!(r.error.is_some(), "{}", r.reason);
    assert!(r.reason.contains("not a JSON object"), "{}", r.reason);
}

#[test]
fn graders_do_not_block_the_async_runtime() {
    if !have("bash") {
        return;
    }
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let ticker = tokio::spawn(async {
            let mut ticks = 0;
            for _ in 0..10 {
                tokio::time::sleep(Duration::from_millis(20)).await;
                ticks += 1;
            }
            ticks
        });
        let graded = tokio::spawn(async {
            let t = Eval::detached(None);
            t.check("x", script(["bash", "-c", "sleep 0.5"]))
        });
        let (ticks, graded) = (ticker.await.unwrap(), graded.await.unwrap());
        assert_eq!(ticks, 10);
        assert!(graded.passed);
    });
}

#[cfg(unix)]
#[cfg(feature = "yaml")]
#[test]
fn spec_script_commands_run_from_the_base_dir() {
    use niceeval::spec::{self, SpecContext};
    if !have("python3") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let grader = write(
        dir.path(),
        "validators/check_answer.py",
        &format!("#!/usr/bin/env python3\n{PY_CHECKS}"),
    );
    support::make_executable(&grader);
    let specs = spec::from_yaml(
        r#"
- name: my_validator
  type: script
  command: [./validators/check_answer.py]
- type: script
  command: "python3 validators/check_answer.py"
"#,
    )
    .unwrap();
    let context = SpecContext::new().with_base_dir(dir.path());
    let out = spec::evaluate(&specs, "The answer is 42.", &context).unwrap();
    assert!(out.pass, "{:?}", out.results);
    assert_eq!(out.results[0].name, "my_validator");
    let out = spec::evaluate(&specs, "no", &context).unwrap();
    assert!(!out.pass);
    assert_eq!(out.score, 0.5, "each grader scored 1/2 checks");
}
