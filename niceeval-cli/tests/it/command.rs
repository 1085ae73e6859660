//! The `niceeval` command as a command: a short help listing the subcommands, `--help` for
//! each (exit 0, naming its options), "did you mean" for a mistyped subcommand or flag,
//! completion scripts that load in bash, `niceeval validate`, and `niceeval history` over the
//! runs `niceeval eval` recorded.

use std::path::Path;
use std::process::{Command, Output};

fn niceeval(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_niceeval"))
        .args(args)
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .output()
        .expect("the niceeval binary runs")
}

fn text(out: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn the_top_level_help_is_short_and_lists_the_subcommands() {
    let dir = tempfile::tempdir().unwrap();
    for args in [&[][..], &["--help"], &["-h"], &["help"]] {
        let out = niceeval(dir.path(), args);
        let (stdout, stderr) = text(&out);
        assert_eq!(out.status.code(), Some(0), "{args:?}: {stdout}{stderr}");
        for sub in [
            "eval",
            "validate",
            "report",
            "merge",
            "baseline",
            "compare",
            "view",
            "history",
            "init",
            "completions",
        ] {
            assert!(
                stdout.lines().any(|l| l.trim_start().starts_with(sub)),
                "{args:?} lists {sub}:\n{stdout}"
            );
        }
        assert!(stdout.lines().count() < 30, "a short help:\n{stdout}");
    }
    let out = niceeval(dir.path(), &["--version"]);
    assert_eq!(out.status.code(), Some(0));
    assert!(text(&out).0.starts_with("niceeval "), "{:?}", text(&out));
}

#[test]
fn every_subcommand_has_a_help_naming_its_options() {
    let dir = tempfile::tempdir().unwrap();
    let cases: &[(&[&str], &[&str])] = &[
        (
            &["eval"],
            &[
                "--config",
                "--output",
                "--repeat",
                "--max-concurrency",
                "--filter-pattern",
                "--filter-first-n",
                "--filter-failing",
                "--var",
                "--env-file",
                "--grader",
                "--no-cache",
                "--watch",
                // The runner's options.
                "--runs",
                "--exact",
                "--skip",
                "--list",
                "--strict",
                "--timeout",
                "--jsonl",
                "--junit",
                "--baseline",
                "--rerun-failed",
                "--retry-errors",
            ],
        ),
        (&["validate"], &["--config", "--env-file"]),
        (
            &["report"],
            &[
                "--jsonl",
                "--junit",
                "--markdown",
                "--html",
                "--quiet",
                "--combine",
                "--baseline",
                "--save-baseline",
                "[PATH]",
            ],
        ),
        (
            &["merge"],
            &["--allow-mismatch", "--jsonl", "--combine", "--nocapture"],
        ),
        (&["baseline"], &["save"]),
        (&["baseline", "save"], &["<FILE>", "--combine", "[PATH]"]),
        (
            &["compare"],
            &["<BASELINE>", "--markdown", "--save-baseline"],
        ),
        (&["view"], &["--out", "--no-open", "--then", "--baseline"]),
        (
            &["history"],
            &["[EVAL_ID]", "--last", "--target", "--file", "--json"],
        ),
        (
            &["init"],
            &[
                "[DIR]", "--agent", "rust", "command", "http", "openai", "--name", "--path",
                "--git",
            ],
        ),
        (
            &["completions"],
            &[
                "bash",
                "zsh",
                "fish",
                "powershell",
                "source <(niceeval completions bash)",
            ],
        ),
    ];
    for (sub, options) in cases {
        let mut args = sub.to_vec();
        args.push("--help");
        let out = niceeval(dir.path(), &args);
        let (stdout, stderr) = text(&out);
        assert_eq!(out.status.code(), Some(0), "{args:?}: {stdout}{stderr}");
        for option in *options {
            assert!(
                stdout.contains(option),
                "{args:?} names {option}:\n{stdout}"
            );
        }
        // `niceeval help SUB` says the same.
        let mut help = vec!["help"];
        help.extend(sub.iter());
        let out = niceeval(dir.path(), &help);
        assert_eq!(out.status.code(), Some(0), "{help:?}");
    }
}

#[test]
fn a_mistyped_subcommand_or_flag_gets_a_suggestion() {
    let dir = tempfile::tempdir().unwrap();
    let out = niceeval(dir.path(), &["reprot"]);
    let (_, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("unrecognized subcommand 'reprot'") && stderr.contains("'report'"),
        "{stderr}"
    );
    let out = niceeval(dir.path(), &["eval", "--filter-patern", "x"]);
    let (_, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("'--filter-patern'") && stderr.contains("'--filter-pattern'"),
        "{stderr}"
    );
    let out = niceeval(dir.path(), &["report", "--combin"]);
    let (_, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("'--combine'"), "{stderr}");
    // An unknown flag is still a usage error (exit 2), named.
    let out = niceeval(dir.path(), &["view", "--bogus"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out).1.contains("unexpected argument '--bogus'"),
        "{:?}",
        text(&out)
    );
}

#[test]
fn completion_scripts_load_in_their_shells() {
    let dir = tempfile::tempdir().unwrap();
    for shell in ["bash", "zsh", "fish", "powershell", "elvish"] {
        let out = niceeval(dir.path(), &["completions", shell]);
        assert_eq!(out.status.code(), Some(0), "{shell}: {:?}", text(&out));
        assert!(text(&out).0.contains("niceeval"), "{shell}");
    }
    let bin = Path::new(env!("CARGO_BIN_EXE_niceeval"));
    let out = Command::new("bash")
        .arg("-c")
        .arg(format!(
            "source <('{}' completions bash) && complete -p niceeval",
            bin.display()
        ))
        .output()
        .expect("bash runs");
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(0), "{stdout}{stderr}");
    assert!(
        stdout.contains("complete") && stdout.trim_end().ends_with("niceeval"),
        "{stdout}"
    );
    let out = niceeval(dir.path(), &["completions", "tcsh"]);
    assert_eq!(out.status.code(), Some(2));
}

const GOOD: &str = r#"
prompts:
  - "Tell me about {{city}}"
providers:
  - openai:chat:gpt-4o-mini
tests:
  - description: paris
    vars: {city: Paris}
    assert:
      - type: icontains
        value: Paris
  - description: rome
    vars: {city: Rome}
"#;

/// Two problems: an unknown top-level key, and an assertion type no reader knows (the case
/// would error when it runs).
const BAD: &str = r#"
prompts:
  - "Tell me about {{city}}"
providers:
  - openai:chat:gpt-4o-mini
promts: ["misspelled"]
tests:
  - description: paris
    vars: {city: Paris}
    assert:
      - type: icontans
        value: Paris
  - description: rome
    vars: {city: Rome}
"#;

/// A file that cannot be read: an item without its value.
const UNREADABLE: &str = r#"
prompts: ["Tell me about {{city}}"]
providers: [openai:chat:gpt-4o-mini]
tests:
  - vars: {city: Paris}
    assert:
      - type: similar
"#;

#[test]
fn validate_checks_without_running_and_lists_every_problem() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("promptfooconfig.yaml"), GOOD).unwrap();
    std::fs::write(dir.path().join("bad.yaml"), BAD).unwrap();
    // No model is reachable: nothing may call one.
    let run = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_niceeval"))
            .args(args)
            .current_dir(dir.path())
            .env("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
            .env("OPENAI_API_KEY", "sk-none")
            .output()
            .expect("the niceeval binary runs")
    };
    for args in [
        &["validate"][..],
        &["validate", "-c", "promptfooconfig.yaml"],
        // promptfoo's form.
        &["validate", "config", "-c", "promptfooconfig.yaml"],
    ] {
        let out = run(args);
        let (stdout, stderr) = text(&out);
        assert_eq!(out.status.code(), Some(0), "{args:?}: {stdout}{stderr}");
        assert!(
            stdout.contains("promptfooconfig.yaml: ok, 2 case(s)"),
            "{stdout}"
        );
    }
    let out = run(&["validate", "-c", "bad.yaml"]);
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(2), "{stdout}{stderr}");
    for problem in [
        "error: bad.yaml: unknown key: `promts`",
        "Did you mean `prompts`?",
        "error: bad.yaml: paris: ",
        "unknown assertion type `icontans`; did you mean `icontains`?",
    ] {
        assert!(stderr.contains(problem), "names {problem}:\n{stderr}");
    }
    assert!(stdout.contains("bad.yaml: 2 problem(s)"), "{stdout}");
    std::fs::write(dir.path().join("unreadable.yaml"), UNREADABLE).unwrap();
    let out = run(&["validate", "unreadable.yaml"]);
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(2), "{stdout}{stderr}");
    assert!(stderr.contains("`similar` needs a `value`"), "{stderr}");
    // Both files: one good, one bad, exit 2; a missing file is a problem too.
    let out = run(&["validate", "promptfooconfig.yaml", "-c", "missing.yaml"]);
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(2), "{stdout}{stderr}");
    assert!(stderr.contains("missing.yaml"), "{stderr}");
    assert!(stdout.contains("promptfooconfig.yaml: ok"), "{stdout}");
    let out = run(&["validate", "target"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out).1.contains("niceeval eval -n 1"),
        "{:?}",
        text(&out)
    );
}

/// `niceeval eval` records each run in the history; `niceeval history` lists the runs (newest
/// first) and one eval's trend (oldest first), from the crate's history or `--file`; a wrong
/// value or a missing file exits 2 naming it.
#[test]
fn history_lists_the_runs_eval_recorded_and_an_evals_trend() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("kept/history.sqlite");
    std::fs::write(
        dir.path().join("suite.yaml"),
        "prompts: ['{{q}}']\nproviders: ['echo']\ntests:\n  - vars: {q: alpha}\n    assert: [{type: contains, value: alpha}]\n  - vars: {q: beta}\n    assert: [{type: contains, value: gamma}]\n",
    )
    .unwrap();
    let run = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_niceeval"))
            .args(args)
            .current_dir(dir.path())
            .env("NO_COLOR", "1")
            .env("NICEEVAL_HISTORY", &store)
            .output()
            .expect("the niceeval binary runs")
    };
    for _ in 0..3 {
        let out = run(&["eval", "-c", "suite.yaml"]);
        // libtest's exit code for a failure.
        assert_eq!(
            out.status.code(),
            Some(101),
            "one case fails: {:?}",
            text(&out)
        );
    }
    assert!(store.is_file(), "the history was kept at NICEEVAL_HISTORY");

    let out = run(&["history", "--json"]);
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(0), "{stdout}{stderr}");
    let runs: serde_json::Value = serde_json::from_str(&stdout).expect("--json prints JSON");
    let runs = runs.as_array().expect("a list of runs");
    assert_eq!(runs.len(), 3, "{stdout}");
    let run0 = &runs[0];
    assert_eq!(run0["evals"], 2, "{run0}");

    let out = run(&["history", "--last", "2", "--json"]);
    let runs: serde_json::Value = serde_json::from_str(&text(&out).0).unwrap();
    assert_eq!(runs.as_array().map(Vec::len), Some(2));

    // The table, then the failing case's trend: three points, each a failure.
    let out = run(&["history"]);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        text(&out).0.lines().filter(|l| l.contains("suite")).count(),
        3,
        "{}",
        text(&out).0
    );
    let failing = "suite::test 2";
    let out = run(&["history", failing, "--json"]);
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(0), "{failing}: {stdout}{stderr}");
    let points: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(points.as_array().map(Vec::len), Some(3), "{stdout}");

    // Mistakes name themselves.
    let out = run(&["history", "--last", "0"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out).1.contains("--last"), "{:?}", text(&out));
    let out = run(&["history", "--file", "missing.sqlite"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out).1.contains("missing.sqlite"), "{:?}", text(&out));
}
