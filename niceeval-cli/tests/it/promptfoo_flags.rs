//! promptfoo's `eval` flags on `niceeval eval`, flag by flag: each works (the run goes on, and
//! does what promptfoo's does) or is refused naming what to use instead; `-o` by extension,
//! read back; `--watch` reruns on a change.

use std::io::BufRead as _;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use super::support::{Fake, niceeval};

fn write(dir: &Path, name: &str, text: &str) {
    std::fs::write(dir.join(name), text).unwrap();
}

fn dump(out: &Output) -> String {
    format!(
        "exit {:?}\n{}\n{}",
        out.status.code(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// Two tests × two prompts; `rome` has no `city` var of its own (`--var` fills it).
const SUITE: &str = r#"
description: flags
prompts:
  - "Tell me about {{city}}"
  - label: short
    raw: "In short: {{city}}"
providers:
  - openai:chat:gpt-4o-mini
defaultTest:
  vars: {city: Rome}
tests:
  - description: paris
    vars: {city: Paris}
    assert:
      - type: icontains
        value: Paris
  - description: rome
    assert:
      - type: icontains
        value: "{{city}}"
"#;

/// A promptfoo output file with one failed result (test 1, the first prompt) and one error
/// (test 2, the second prompt).
const FAILURES: &str = r#"{"evalId": "eval-x", "results": {"version": 3, "timestamp": "t",
  "prompts": [
    {"raw": "Tell me about {{city}}", "label": "Tell me about {{city}}", "provider": "openai:chat:gpt-4o-mini"},
    {"raw": "In short: {{city}}", "label": "short", "provider": "openai:chat:gpt-4o-mini"}],
  "results": [
    {"testIdx": 0, "promptIdx": 0, "success": false, "failureReason": 1, "score": 0},
    {"testIdx": 0, "promptIdx": 1, "success": true, "failureReason": 0, "score": 1},
    {"testIdx": 1, "promptIdx": 1, "success": false, "failureReason": 2, "score": 0, "error": "boom"}],
  "stats": {"successes": 1, "failures": 1, "errors": 1}}}"#;

/// The names of the cases a run reported (its `--jsonl`).
fn ran(dir: &Path, jsonl: &str) -> Vec<String> {
    let text = std::fs::read_to_string(dir.join(jsonl)).unwrap_or_default();
    let mut ids: Vec<String> = text
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter_map(|r| r["id"].as_str().map(str::to_string))
        .map(|id| id.trim_start_matches("suite::flags_suite::").to_string())
        .collect();
    ids.sort();
    ids
}

#[test]
fn every_promptfoo_eval_flag_works_or_is_refused_naming_its_equivalent() {
    let fake = Fake::start();
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    write(d, "flags_suite.yaml", SUITE);
    write(d, "failures.json", FAILURES);
    write(d, ".env", "# a comment\nexport NICEEVAL_TEST_FLAG=1\n");
    // Flags that work: the run goes on (0 passed, 101 a case failed), and selects what
    // promptfoo's selects (None: every case).
    let all = || {
        vec![
            "paris [prompt 1]",
            "paris [short]",
            "rome [prompt 1]",
            "rome [short]",
        ]
    };
    let works: &[(&[&str], Option<Vec<&str>>)] = &[
        (&["--config", "flags_suite.yaml"], None),
        (&["-o", "out.json"], None),
        (&["--output", "out.csv"], None),
        (&["-j", "1"], None),
        (&["--max-concurrency", "2"], None),
        (&["--repeat", "2"], None),
        (&["--no-cache"], None),
        (
            &["-n", "1"],
            Some(vec!["paris [prompt 1]", "paris [short]"]),
        ),
        (
            &["--filter-first-n", "1"],
            Some(vec!["paris [prompt 1]", "paris [short]"]),
        ),
        (
            &["--filter-pattern", "^ro"],
            Some(vec!["rome [prompt 1]", "rome [short]"]),
        ),
        (
            &["--filter-range", "1:"],
            Some(vec!["rome [prompt 1]", "rome [short]"]),
        ),
        (
            &["--filter-prompts", "short"],
            Some(vec!["paris [short]", "rome [short]"]),
        ),
        (&["--filter-providers", "gpt-4o"], None),
        (&["--filter-targets", "gpt-4o"], None),
        (
            &["--filter-failing", "failures.json"],
            Some(vec!["paris [prompt 1]", "rome [short]"]),
        ),
        (
            &["--filter-failing-only", "failures.json"],
            Some(vec!["paris [prompt 1]"]),
        ),
        (
            &["--filter-errors-only", "failures.json"],
            Some(vec!["rome [short]"]),
        ),
        (&["--var", "city=Oslo"], None),
        (&["--env-file", ".env"], None),
        (&["--env-path", ".env"], None),
        (&["--grader", "openai:chat:gpt-4o-mini"], None),
        (&["--table"], None),
        (&["--no-share"], None),
        (&["--resume"], None),
        (&["--retry-errors", "1"], None),
    ];
    for (flag, selected) in works {
        let _ = std::fs::remove_file(d.join("ran.jsonl"));
        let mut args = vec!["--jsonl", "ran.jsonl"];
        if flag[0] != "--config" {
            args.extend(["-c", "flags_suite.yaml"]);
        }
        args.extend(flag.iter());
        let out = niceeval(d, &fake, &args);
        assert!(
            matches!(out.status.code(), Some(0 | 101)),
            "{flag:?} works:\n{}",
            dump(&out)
        );
        let expected = selected.clone().unwrap_or_else(all);
        assert_eq!(ran(d, "ran.jsonl"), expected, "{flag:?}:\n{}", dump(&out));
    }
    // -h / --help: the help, exit 0.
    for flag in ["-h", "--help"] {
        let out = niceeval(d, &fake, &[flag]);
        assert_eq!(out.status.code(), Some(0), "{}", dump(&out));
    }

    // Refused: exit 2 before anything runs, naming what to use instead.
    let refused: &[(&[&str], &str)] = &[
        (&["-a", "asserts.yaml"], "defaultTest: {assert"),
        (&["--assertions", "asserts.yaml"], "defaultTest: {assert"),
        (&["-p", "prompt.txt"], "`prompts:`"),
        (&["--prompts", "prompt.txt"], "`prompts:`"),
        (&["-r", "openai:gpt-4o"], "`providers:`"),
        (&["--providers", "openai:gpt-4o"], "`providers:`"),
        (&["-t", "tests.csv"], "tests: file://tests.csv"),
        (&["--tests", "tests.csv"], "tests: file://tests.csv"),
        (&["-v", "tests.csv"], "tests: file://tests.csv"),
        (&["--vars", "tests.csv"], "tests: file://tests.csv"),
        (
            &["--model-outputs", "o.json"],
            "put a provider in the config",
        ),
        (&["--prompt-prefix", "x"], "prompts of the config"),
        (&["--prompt-suffix", "x"], "prompts of the config"),
        (&["--tag", "team=search"], "--tag TAG selects"),
        (&["--delay", "100"], "-j 1"),
        (&["--remote"], "no remote inference"),
        (&["--filter-sample", "3"], "--sample N --seed S"),
        (&["--filter-sample-seed", "3"], "--seed S"),
        (&["--filter-metadata", "k=v"], "--filter-pattern REGEX"),
        (&["-o", "table.txt"], "-o FILE.md"),
        (&["--no-table"], "--quiet"),
        (&["--table-cell-max-length", "40"], "COLUMNS"),
        (&["--share"], "-o report.html"),
        (&["--resume", "eval-123"], "--resume (without an id)"),
        (&["--retry-errors"], "--rerun-failed"),
        (&["--no-write"], "NICEEVAL_RESULTS_DIR"),
        (&["--suggest-prompts", "3"], "`prompts:`"),
        (&["-x", "file://hooks.js"], "no extension hooks"),
        (&["--extension", "file://hooks.js"], "no extension hooks"),
        (&["--description", "nightly"], "`description:`"),
        (&["--no-progress-bar"], "| cat"),
        (&["--verbose"], "--nocapture"),
    ];
    for (flag, instead) in refused {
        let mut args = vec!["-c", "flags_suite.yaml"];
        args.extend(flag.iter());
        let out = niceeval(d, &fake, &args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(
            out.status.code(),
            Some(2),
            "{flag:?} is refused:\n{}",
            dump(&out)
        );
        assert!(
            stderr.contains("niceeval eval does not") && stderr.contains(instead),
            "{flag:?} names {instead:?}:\n{stderr}"
        );
    }

    // Every flag of the installed promptfoo's `eval --help` is one of the above.
    let Some(home) = super::support::peer_tool(
        "PROMPTFOO_HOME",
        "promptfoo-0.123.1",
        "promptfoo",
        "scripts/install-promptfoo.sh",
    ) else {
        return;
    };
    let bin = home.join("node_modules/.bin");
    let help = Command::new(bin.join("promptfoo"))
        .args(["eval", "--help"])
        .env(
            "PATH",
            format!(
                "{}:{}",
                bin.display(),
                std::env::var("PATH").unwrap_or_default()
            ),
        )
        .output()
        .expect("promptfoo runs");
    let help = String::from_utf8_lossy(&help.stdout);
    let known: Vec<&str> = works
        .iter()
        .map(|(f, _)| f[0])
        .chain(refused.iter().map(|(f, _)| f[0]))
        .chain(["-c", "-w", "--watch", "-h", "--help"])
        .collect();
    let mut flags = 0;
    for line in help
        .lines()
        .skip_while(|l| !l.starts_with("Options:"))
        .skip(1)
    {
        let line = line.trim_start();
        if !line.starts_with('-') {
            if line.starts_with("Commands:") {
                break;
            }
            continue;
        }
        let names = line.split("  ").next().unwrap_or_default();
        for name in names.split([',', ' ']).filter(|n| n.starts_with('-')) {
            flags += 1;
            assert!(
                known.contains(&name),
                "promptfoo's {name} is tested here:\n{line}"
            );
        }
    }
    assert!(flags > 40, "read promptfoo's flags:\n{help}");
}

#[test]
fn var_and_grader_set_default_test_and_env_file_loads_the_environment() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let record = d.join("requests.jsonl");
    let fake = Fake::start_with(&["--record", record.to_str().unwrap()]);
    write(
        d,
        "promptfooconfig.yaml",
        r#"
prompts: ["Tell me about {{city}}"]
providers: [openai:chat:gpt-4o-mini]
tests:
  - description: paris
    vars: {city: Paris}
  - description: other
    assert:
      - type: llm-rubric
        value: mentions a city
"#,
    );
    // The fake's address comes from the .env file alone.
    write(
        d,
        "fake.env",
        &format!(
            "OPENAI_BASE_URL=\"{}\"\nOPENAI_API_KEY=sk-fake # comment\n",
            fake.url
        ),
    );
    let out = Command::new(env!("CARGO_BIN_EXE_niceeval"))
        .args([
            "eval",
            "--env-file",
            "fake.env",
            "--var",
            "city=Oslo",
            "--grader",
            "openai:chat:grader-model",
            "-o",
            "out.json",
        ])
        .current_dir(d)
        .env_remove("OPENAI_BASE_URL")
        .env_remove("OPENAI_API_KEY")
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", dump(&out));
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(d.join("out.json")).unwrap()).unwrap();
    let outputs: Vec<&str> = doc["results"]["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["response"]["output"].as_str().unwrap())
        .collect();
    // A test's own vars win over --var.
    assert_eq!(
        outputs,
        ["Answer: Tell me about Paris", "Answer: Tell me about Oslo"]
    );
    let requests = std::fs::read_to_string(&record).unwrap();
    let models: Vec<String> = requests
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter_map(|r| {
            // The fake records each body as the text it received.
            let body: serde_json::Value = serde_json::from_str(r["body"].as_str()?).ok()?;
            body["model"].as_str().map(str::to_string)
        })
        .collect();
    assert!(
        models.iter().any(|m| m == "grader-model"),
        "the rubric went to --grader's model: {models:?}"
    );
    // A missing .env file is a usage error.
    let out = niceeval(d, &fake, &["--env-file", "missing.env"]);
    assert_eq!(out.status.code(), Some(2), "{}", dump(&out));
    assert!(String::from_utf8_lossy(&out.stderr).contains("missing.env"));
}

#[test]
fn output_files_by_extension_are_written_and_read_back() {
    let fake = Fake::start();
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    write(d, "flags_suite.yaml", SUITE);
    let files = [
        "out.json",
        "again.json",
        "out.jsonl",
        "out.csv",
        "out.yaml",
        "out.yml",
        "out.html",
        "out.xml",
        "second.xml",
        "out.md",
    ];
    let mut args = vec!["-c", "flags_suite.yaml", "--var", "city=Oslo"];
    for f in files {
        args.extend(["-o", f]);
    }
    let out = niceeval(d, &fake, &args);
    assert_eq!(out.status.code(), Some(0), "{}", dump(&out));
    let read = |f: &str| {
        std::fs::read_to_string(d.join(f)).unwrap_or_else(|e| panic!("{f}: {e}\n{}", dump(&out)))
    };

    // promptfoo's OutputFile: evalId, results {version, timestamp, prompts, results, stats},
    // config, shareableUrl.
    let json: serde_json::Value = serde_json::from_str(&read("out.json")).unwrap();
    for key in ["evalId", "results", "config", "shareableUrl"] {
        assert!(json.get(key).is_some(), "{key} in {json:#}");
    }
    let summary = &json["results"];
    assert_eq!(summary["version"], 3);
    assert!(summary["timestamp"].is_string());
    let results = summary["results"].as_array().unwrap();
    assert_eq!(results.len(), 4);
    for key in [
        "promptIdx",
        "testIdx",
        "testCase",
        "promptId",
        "provider",
        "prompt",
        "vars",
        "response",
        "success",
        "score",
        "latencyMs",
        "gradingResult",
        "namedScores",
        "failureReason",
    ] {
        assert!(
            results[0].get(key).is_some(),
            "results[].{key}: {:#}",
            results[0]
        );
    }
    assert_eq!(results[0]["testIdx"], 0);
    assert_eq!(results[0]["testCase"]["description"], "paris");
    assert_eq!(results[0]["success"], true);
    assert_eq!(
        results[0]["response"]["output"],
        "Answer: Tell me about Paris"
    );
    assert_eq!(results[0]["prompt"]["raw"], "Tell me about Paris");
    assert_eq!(results[1]["promptIdx"], 1);
    assert_eq!(results[1]["prompt"]["label"], "short");
    assert_eq!(results[1]["provider"]["id"], "openai:chat:gpt-4o-mini");
    let prompts = summary["prompts"].as_array().unwrap();
    assert_eq!(prompts.len(), 2);
    for key in ["raw", "label", "provider", "metrics"] {
        assert!(
            prompts[0].get(key).is_some(),
            "prompts[].{key}: {:#}",
            prompts[0]
        );
    }
    for key in [
        "score",
        "testPassCount",
        "testFailCount",
        "testErrorCount",
        "assertPassCount",
        "assertFailCount",
        "totalLatencyMs",
        "tokenUsage",
    ] {
        assert!(prompts[0]["metrics"].get(key).is_some(), "metrics.{key}");
    }
    assert_eq!(prompts[1]["label"], "short");
    assert_eq!(prompts[0]["metrics"]["testPassCount"], 2);
    let stats = &summary["stats"];
    for key in ["successes", "failures", "errors", "tokenUsage"] {
        assert!(stats.get(key).is_some(), "stats.{key}: {stats:#}");
    }
    assert_eq!(stats["successes"], 4);
    assert_eq!(stats["failures"], 0);
    assert_eq!(json["config"]["description"], "flags");
    assert_eq!(read("again.json"), read("out.json"));

    // YAML: the same document.
    for f in ["out.yaml", "out.yml"] {
        let yaml: serde_json::Value = yaml_serde::from_str(&read(f)).unwrap();
        assert_eq!(yaml, json, "{f}");
    }
    // JSONL: niceeval's results records.
    let records: Vec<serde_json::Value> = read("out.jsonl")
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .filter(|r: &serde_json::Value| r.get("id").is_some())
        .collect();
    assert_eq!(records.len(), 4);
    assert!(records.iter().all(|r| r["outcome"] == "passed"));
    // CSV: a header and a row per case.
    let csv = read("out.csv");
    let mut lines = csv.lines();
    assert!(
        lines
            .next()
            .unwrap()
            .starts_with("test,description,prompt,provider,outcome,success,score,output"),
        "{csv}"
    );
    assert_eq!(lines.count(), 4, "{csv}");
    assert!(
        csv.contains("1,paris,prompt 1,openai:chat:gpt-4o-mini,passed,true"),
        "{csv}"
    );
    // The viewer's page, JUnit (twice), Markdown.
    assert!(read("out.html").contains("<html"));
    assert!(read("out.xml").contains("<testcase"));
    assert_eq!(read("second.xml"), read("out.xml"));
    assert!(read("out.md").contains("paris"));

    // An extension niceeval writes nothing for.
    let out = niceeval(d, &fake, &["-c", "flags_suite.yaml", "-o", "out.pdf"]);
    assert_eq!(out.status.code(), Some(2), "{}", dump(&out));
    assert!(String::from_utf8_lossy(&out.stderr).contains("-o out.pdf"));
}

#[test]
fn watch_runs_again_within_a_second_of_a_change_to_a_file_the_suite_reads() {
    let fake = Fake::start();
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    write(
        d,
        "promptfooconfig.yaml",
        "prompts: [\"Tell me about {{city}}\"]\nproviders: [openai:chat:gpt-4o-mini]\ntests: file://tests.yaml\n",
    );
    write(d, "tests.yaml", "- vars: {city: Paris}\n");
    let mut child = Command::new(env!("CARGO_BIN_EXE_niceeval"))
        .args(["eval", "--watch", "-o", "out.json"])
        .current_dir(d)
        .env("OPENAI_BASE_URL", &fake.url)
        .env("OPENAI_API_KEY", "sk-fake")
        .env("NO_COLOR", "1")
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    let stdout = child.stdout.take().unwrap();
    std::thread::spawn(move || {
        for line in std::io::BufReader::new(stdout)
            .lines()
            .map_while(Result::ok)
        {
            if tx.send((Instant::now(), line)).is_err() {
                break;
            }
        }
    });
    let mut seen = String::new();
    let mut wait_for = |what: &str, within: Duration| -> Instant {
        let deadline = Instant::now() + within;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match rx.recv_timeout(left) {
                Ok((at, line)) => {
                    seen.push_str(&line);
                    seen.push('\n');
                    if line.contains(what) {
                        return at;
                    }
                }
                Err(_) => panic!("no {what:?} within {within:?}:\n{seen}"),
            }
        }
    };
    wait_for("1 passed", Duration::from_secs(60));
    wait_for("watching", Duration::from_secs(10));
    // Not the same second's modification time as the first version.
    std::thread::sleep(Duration::from_millis(50));
    let changed = Instant::now();
    write(
        d,
        "tests.yaml",
        "- vars: {city: Paris}\n- vars: {city: Rome}\n",
    );
    let rerun = wait_for("running again", Duration::from_secs(10));
    let took = rerun.duration_since(changed);
    wait_for("2 passed", Duration::from_secs(60));
    let _ = child.kill();
    let _ = child.wait();
    assert!(
        took < Duration::from_secs(1),
        "the rerun started {took:?} after the change"
    );
    assert!(seen.contains("tests.yaml changed"), "{seen}");
}
