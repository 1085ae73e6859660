//! Workspace evals for real: a template directory copied per run, a scripted agent (a real
//! Python subprocess) editing, creating and deleting files over two sends, the scoped
//! assertions graded over real git diffs with their turn attribution, `run_tests` over real
//! `cargo test`, `pytest` and a JUnit file, hidden tests added after the agent ran, the
//! limits, the keep policy, and bubblewrap isolation.
#![cfg(unix)]

use std::path::Path;
use std::sync::Arc;

use niceeval::agent::Agent;
use niceeval::agent::command::CommandAgent;
use niceeval::expect::{command_succeeded, includes, script};
use niceeval::{AssertionResult, Chain, EvalReport, Outcome, Regex};

use crate::scripts_support::{have, write};
use crate::support::{Body, Crate};

/// The scripted agent: what it does depends on the input ("one", "two", ...). It prints
/// niceeval events on stdout, as a command agent does.
const AGENT_PY: &str = r#"
import json, os, subprocess, sys
step = sys.stdin.read().strip()
def emit(**event):
    print(json.dumps(event), flush=True)
if step == "one":
    with open("src/lib.rs", "a") as f:
        f.write("\npub fn complete(todo: &mut Todo) { todo.done = true; }\n")
    with open("notes.txt", "w") as f:
        f.write("first notes\n")
    os.remove("old.txt")
    with open("build.log", "w") as f:
        f.write("ignored by the template's .gitignore\n")
    os.makedirs("scratch", exist_ok=True)
    with open("scratch/tmp.txt", "w") as f:
        f.write("ignored by [workspace] ignore\n")
    with open("logo.png", "wb") as f:
        f.write(bytes(range(256)))
    code = subprocess.call(["sh", "-c", "exit 3"])
    emit(type="action.called", call_id="c1", name="Bash", input={"command": "sh -c 'exit 3'"})
    emit(type="action.result", call_id="c1", output={"exit_code": code}, status="failed")
    emit(type="message", role="assistant", text="done with one")
elif step == "two":
    with open("notes.txt", "a") as f:
        f.write("second notes\n")
    with open(".env", "w") as f:
        f.write("OPENAI_API_KEY=sk-abcdefghijklmnopqrstuvwxyz0123\n")
    emit(type="action.called", call_id="c2", name="Bash", input={"command": "ls"})
    emit(type="action.result", call_id="c2", output={"exit_code": 0}, status="completed")
    emit(type="message", role="assistant", text="done with two")
elif step == "fix":
    src = open("src/lib.rs").read().replace("a + b + 1", "a + b")
    open("src/lib.rs", "w").write(src)
    emit(type="message", role="assistant", text="fixed")
elif step == "where":
    emit(type="message", role="assistant", text=os.getcwd())
else:
    emit(type="message", role="assistant", text="nothing to do")
"#;

fn crate_with(toml: &str) -> Crate {
    let krate = Crate::new(toml);
    let t = krate.path().join("template");
    write(&t, "src/lib.rs", "pub struct Todo { pub done: bool }\n");
    write(&t, "old.txt", "to be deleted\n");
    write(&t, ".gitignore", "*.log\ntarget/\n");
    krate
}

/// The scripted agent, written once to a temporary file shared by the tests (the agent factory
/// of a definition is a plain `fn`).
fn scripted_agent() -> Arc<dyn Agent> {
    static SCRIPT: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    let path = SCRIPT.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap().keep();
        write(&dir, "agent.py", AGENT_PY).display().to_string()
    });
    Arc::new(CommandAgent::new("python3", [path.clone()]))
}

/// Runs `body` with the scripted agent and the crate's `template` directory as workspace.
fn run(krate: &Crate, name: &'static str, body: Body) -> EvalReport {
    let def = crate::support::define(name, krate, body)
        .with_workspace("template")
        .with_agent(scripted_agent);
    crate::support::run(def)
}

fn find<'a>(report: &'a EvalReport, name: &str) -> &'a AssertionResult {
    report
        .assertions
        .iter()
        .find(|a| a.name == name)
        .unwrap_or_else(|| {
            panic!(
                "no assertion {name:?}; have: {:#?}",
                report
                    .assertions
                    .iter()
                    .map(|a| &a.name)
                    .collect::<Vec<_>>()
            )
        })
}

fn verdicts(report: &EvalReport) -> Vec<(String, bool)> {
    report
        .assertions
        .iter()
        .map(|a| (a.name.clone(), a.passed))
        .collect()
}

fn two_sends(t: &mut niceeval::Eval) -> niceeval::__private::BoxFuture<'_, niceeval::Result> {
    Box::pin(async move {
        let one = t.send("one").await?;
        let two = t.send("two").await?;
        // The whole run.
        t.file_changed("src/lib.rs");
        t.file_created("notes.txt");
        t.file_deleted("old.txt");
        t.file_changed("build.log"); // ignored by .gitignore: fails
        t.file_changed("scratch/tmp.txt"); // ignored by [workspace] ignore: fails
        t.not_in_diff(Regex::new(r"sk-[A-Za-z0-9]{20,}")?); // written in turn two: fails
        t.diff_is_empty(); // fails
        t.no_failed_shell_commands(); // turn one's `exit 3`: fails
        // Turn by turn.
        one.file_changed("src/lib.rs");
        one.file_created("notes.txt");
        one.not_in_diff(Regex::new(r"sk-[A-Za-z0-9]{20,}")?);
        one.no_failed_shell_commands(); // fails
        two.file_changed("src/lib.rs"); // not in turn two: fails
        two.file_created("notes.txt"); // modified in turn two, not created: fails
        two.file_changed("notes.txt");
        two.no_failed_shell_commands();
        two.diff_is_empty(); // fails
        // Values.
        let diff = t.workspace().diff();
        t.check(diff.get("src/lib.rs"), includes("fn complete"));
        t.check(diff.get("old.txt"), includes("deleted")); // deleted: None, fails
        t.check(diff.text(), includes("Binary files"));
        t.check(
            json_files(&diff),
            niceeval::expect::equals(niceeval::json!([
                ".env",
                "logo.png",
                "notes.txt",
                "old.txt",
                "src/lib.rs"
            ])),
        );
        Ok(())
    })
}

fn json_files(diff: &niceeval::workspace::Diff) -> niceeval::Value {
    niceeval::json!(diff.files())
}

#[test]
fn two_sends_attribute_each_change_to_its_turn() {
    if !have("python3") || !have("git") {
        return;
    }
    let krate = crate_with("[workspace]\nignore = [\"scratch/\"]\n");
    let report = run(&krate, "two_sends", two_sends);
    assert!(report.error.is_none(), "{:?}", report.error);
    let expected = [
        ("file_changed(\"src/lib.rs\")", true),
        ("file_created(\"notes.txt\")", true),
        ("file_deleted(\"old.txt\")", true),
        ("file_changed(\"build.log\")", false),
        ("file_changed(\"scratch/tmp.txt\")", false),
        ("not_in_diff(/sk-[A-Za-z0-9]{20,}/)", false),
        ("diff_is_empty()", false),
        ("no_failed_shell_commands()", false),
        ("turn 1: file_changed(\"src/lib.rs\")", true),
        ("turn 1: file_created(\"notes.txt\")", true),
        ("turn 1: not_in_diff(/sk-[A-Za-z0-9]{20,}/)", true),
        ("turn 1: no_failed_shell_commands()", false),
        ("turn 2: file_changed(\"src/lib.rs\")", false),
        ("turn 2: file_created(\"notes.txt\")", false),
        ("turn 2: file_changed(\"notes.txt\")", true),
        ("turn 2: no_failed_shell_commands()", true),
        ("turn 2: diff_is_empty()", false),
    ];
    let got = verdicts(&report);
    for (name, passed) in expected {
        let found = got.iter().find(|(n, _)| n == name);
        assert_eq!(
            found.map(|(_, p)| *p),
            Some(passed),
            "{name}: {:#?}",
            report.assertions
        );
    }
    // The values, checked in place.
    let values: Vec<bool> = report
        .assertions
        .iter()
        .filter(|a| a.kind == niceeval::AssertionKind::Value)
        .map(|a| a.passed)
        .collect();
    assert_eq!(
        values,
        [true, false, true, true],
        "{:#?}",
        report.assertions
    );
    // Reasons say what happened.
    assert_eq!(
        find(&report, "turn 2: file_created(\"notes.txt\")").reason,
        "notes.txt was modified, not created"
    );
    let secret = &find(&report, "not_in_diff(/sk-[A-Za-z0-9]{20,}/)").reason;
    assert!(secret.contains("at .env:"), "{secret}");
    assert!(
        secret.contains("…[redacted]"),
        "the match is masked: {secret}"
    );
    let shell = &find(&report, "no_failed_shell_commands()").reason;
    assert!(shell.contains("exit code 3"), "{shell}");
    let ignored = &find(&report, "file_changed(\"build.log\")").reason;
    assert!(
        ignored.starts_with("build.log did not change; changed: "),
        "{ignored}"
    );
    // The events carry each turn's change.
    let changes: Vec<Vec<String>> = report
        .events
        .iter()
        .filter_map(|e| match e {
            niceeval::Event::WorkspaceChanged { files, .. } => Some(
                files
                    .iter()
                    .map(|f| format!("{} {}", f.path, f.change.as_str()))
                    .collect(),
            ),
            _ => None,
        })
        .collect();
    assert_eq!(
        changes,
        [
            vec![
                "logo.png created",
                "notes.txt created",
                "old.txt deleted",
                "src/lib.rs modified"
            ],
            vec![".env created", "notes.txt modified"],
        ]
    );
    // A failed run keeps its copy, and says where.
    assert_eq!(report.outcome, Outcome::Failed);
    let kept = report.runs[0].workspace.clone().expect("the copy is kept");
    assert!(Path::new(&kept).join("notes.txt").is_file());
    assert!(
        !Path::new(&kept).join(".git").exists(),
        "no .git in the copy"
    );
    std::fs::remove_dir_all(Path::new(&kept).parent().unwrap()).unwrap();
}

fn where_it_runs(t: &mut niceeval::Eval) -> niceeval::__private::BoxFuture<'_, niceeval::Result> {
    Box::pin(async move {
        t.send("where").await?;
        let path = t.workspace().path().display().to_string();
        t.check(t.reply(), niceeval::expect::equals(path));
        t.diff_is_empty();
        Ok(())
    })
}

#[test]
fn the_agent_works_in_the_copy_and_a_passing_run_removes_it() {
    if !have("python3") || !have("git") {
        return;
    }
    let krate = crate_with("");
    let report = run(&krate, "where_it_runs", where_it_runs);
    assert_eq!(report.outcome, Outcome::Passed, "{:#?}", report.assertions);
    assert_eq!(report.runs[0].workspace, None);
    let copy = report.events.iter().rev().find_map(|e| match e {
        niceeval::Event::Message { text, .. } => Some(text.to_string()),
        _ => None,
    });
    let copy = copy.unwrap();
    assert!(copy.ends_with("/work"), "{copy}");
    assert!(
        !Path::new(&copy).exists(),
        "the passing run's copy is removed"
    );
}

fn always_kept(t: &mut niceeval::Eval) -> niceeval::__private::BoxFuture<'_, niceeval::Result> {
    Box::pin(async move {
        t.workspace().write_text("made/by/eval.txt", "hi")?;
        t.check(t.workspace().read_text("made/by/eval.txt")?, includes("hi"));
        Ok(())
    })
}

#[test]
fn keep_always_keeps_a_passing_runs_copy() {
    if !have("git") {
        return;
    }
    let krate = crate_with("[workspace]\nkeep = \"always\"\n");
    let report = run(&krate, "always_kept", always_kept);
    assert_eq!(report.outcome, Outcome::Passed, "{:#?}", report);
    let kept = report.runs[0].workspace.clone().expect("kept");
    assert!(Path::new(&kept).join("made/by/eval.txt").is_file());
    std::fs::remove_dir_all(Path::new(&kept).parent().unwrap()).unwrap();
}

/// A crate whose test `adds` fails until the agent's "fix"; hidden tests are added later.
fn todo_crate(krate: &Crate) {
    let t = krate.path().join("template");
    std::fs::remove_file(t.join("src/lib.rs")).unwrap();
    write(
        &t,
        "Cargo.toml",
        "[package]\nname = \"todo\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[workspace]\n",
    );
    write(
        &t,
        "src/lib.rs",
        "pub fn add(a: i32, b: i32) -> i32 { a + b + 1 }\n\n#[cfg(test)]\nmod tests {\n    #[test]\n    fn adds() { assert_eq!(super::add(2, 2), 4); }\n    #[test]\n    fn zero() { assert_eq!(super::add(0, 0), super::add(0, 0)); }\n}\n",
    );
    write(
        krate.path(),
        "hidden/tests/hidden.rs",
        "#[test]\nfn hidden_adds_negatives() { assert_eq!(todo::add(-2, -3), -5); }\n\n#[test]\nfn hidden_fails() { assert_eq!(todo::add(1, 1), 3, \"one and one\"); }\n",
    );
}

fn cargo_tests(t: &mut niceeval::Eval) -> niceeval::__private::BoxFuture<'_, niceeval::Result> {
    Box::pin(async move {
        // Before the fix: `adds` fails, with the panic as its reason.
        let before = t.run_tests(["cargo", "test", "--offline"]).await?;
        assert_eq!((before.passed(), before.failed()), (1, 1));
        t.send("fix").await?;
        t.file_changed("src/lib.rs");
        // Hidden tests the agent never saw.
        assert!(!t.workspace().path().join("tests/hidden.rs").exists());
        t.workspace().add_files("hidden")?;
        let build = t
            .workspace()
            .run_command("cargo", ["build", "--offline", "-q"])
            .await?;
        t.check(&build, command_succeeded());
        let after = t.run_tests(["cargo", "test", "--offline"]).await?;
        assert_eq!(after.format, niceeval::workspace::TestFormat::Libtest);
        t.no_failed_shell_commands();
        Ok(())
    })
}

#[test]
fn run_tests_over_real_cargo_test_gives_one_gate_per_test() {
    if !have("python3") || !have("git") || !have("cargo") {
        return;
    }
    let krate = crate_with("");
    todo_crate(&krate);
    let report = run(&krate, "cargo_tests", cargo_tests);
    assert!(report.error.is_none(), "{:?}", report.error);
    let tests: Vec<(String, bool)> = report
        .assertions
        .iter()
        .filter(|a| a.kind == niceeval::AssertionKind::Test)
        .map(|a| (a.name.clone(), a.passed))
        .collect();
    // libtest runs a binary's tests in parallel: each run's order is its own.
    let mut before = tests[..2].to_vec();
    let mut after = tests[2..].to_vec();
    before.sort();
    after.sort();
    let owned = |v: &[(&str, bool)]| -> Vec<(String, bool)> {
        v.iter().map(|(n, p)| (n.to_string(), *p)).collect()
    };
    assert_eq!(
        before,
        owned(&[("test tests::adds", false), ("test tests::zero", true)]),
        "{:#?}",
        report.assertions
    );
    assert_eq!(
        after,
        owned(&[
            ("test hidden_adds_negatives", true),
            ("test hidden_fails", false),
            ("test tests::adds", true),
            ("test tests::zero", true),
        ]),
        "{:#?}",
        report.assertions
    );
    let failed = report
        .assertions
        .iter()
        .find(|a| a.name == "test hidden_fails")
        .unwrap();
    assert!(failed.reason.contains("one and one"), "{}", failed.reason);
    let first = report
        .assertions
        .iter()
        .find(|a| a.name == "test tests::adds" && !a.passed)
        .unwrap();
    assert!(first.reason.contains("left: 5"), "{}", first.reason);
    assert!(
        find(&report, "no_failed_shell_commands()").passed,
        "test runs are not shell failures; the build passed"
    );
    assert_eq!(report.outcome, Outcome::Failed);
    if let Some(kept) = &report.runs[0].workspace {
        let _ = std::fs::remove_dir_all(Path::new(kept).parent().unwrap());
    }
}

fn pytest_junit(t: &mut niceeval::Eval) -> niceeval::__private::BoxFuture<'_, niceeval::Result> {
    Box::pin(async move {
        let report = t
            .run_tests([
                "python3",
                "-m",
                "pytest",
                "-q",
                "-p",
                "no:cacheprovider",
                "--junitxml=out/report.xml",
            ])
            .junit("out/report.xml")
            .await?;
        assert_eq!(report.format, niceeval::workspace::TestFormat::Junit);
        // A JUnit file written by any program.
        t.run_tests(["sh", "-c", "printf '<testsuite><testcase classname=\"go\" name=\"TestA\"/><testcase classname=\"go\" name=\"TestB\"><failure message=\"want 2\">got 3</failure></testcase></testsuite>' > j.xml"])
            .junit("j.xml")
            .await?;
        Ok(())
    })
}

#[test]
fn run_tests_reads_pytest_and_other_junit_files() {
    if !have("python3") || !have("git") || !pytest() {
        return;
    }
    let krate = crate_with("[workspace]\nkeep = \"never\"\n");
    let t = krate.path().join("template");
    write(
        &t,
        "test_todo.py",
        "def test_add():\n    assert 1 + 1 == 2\n\ndef test_done():\n    assert [1] == [2], 'lists differ'\n",
    );
    let report = run(&krate, "pytest_junit", pytest_junit);
    assert!(report.error.is_none(), "{:?}", report.error);
    let tests: Vec<(String, bool)> = verdicts(&report);
    assert_eq!(
        tests,
        [
            ("test test_todo::test_add".to_string(), true),
            ("test test_todo::test_done".to_string(), false),
            ("test go::TestA".to_string(), true),
            ("test go::TestB".to_string(), false),
        ]
    );
    assert!(
        report.assertions[1].reason.contains("lists differ"),
        "{}",
        report.assertions[1].reason
    );
    assert_eq!(report.assertions[3].reason, "want 2\ngot 3");
    assert_eq!(report.runs[0].workspace, None, "keep = never");
}

/// pytest is installed by scripts/install-test-deps.sh; under CI its absence fails.
fn pytest() -> bool {
    let ok = std::process::Command::new("python3")
        .args(["-m", "pytest", "--version"])
        .output()
        .is_ok_and(|o| o.status.success());
    crate::scripts_support::available(ok, "pytest", "bash scripts/install-test-deps.sh")
}

fn no_tests(t: &mut niceeval::Eval) -> niceeval::__private::BoxFuture<'_, niceeval::Result> {
    Box::pin(async move {
        t.run_tests(["sh", "-c", "echo all good"]).await?;
        Ok(())
    })
}

fn crashed(t: &mut niceeval::Eval) -> niceeval::__private::BoxFuture<'_, niceeval::Result> {
    Box::pin(async move {
        t.run_tests(["sh", "-c", "echo 'test a ... ok'; kill -9 $$"])
            .await?;
        Ok(())
    })
}

fn build_error(t: &mut niceeval::Eval) -> niceeval::__private::BoxFuture<'_, niceeval::Result> {
    Box::pin(async move {
        t.run_tests([
            "sh",
            "-c",
            "echo 'test a ... ok'; echo 'error: linking failed' >&2; exit 101",
        ])
        .await?;
        Ok(())
    })
}

fn missing_program(t: &mut niceeval::Eval) -> niceeval::__private::BoxFuture<'_, niceeval::Result> {
    Box::pin(async move {
        t.workspace()
            .run_command("no-such-program-xyz", ["--help"])
            .await?;
        Ok(())
    })
}

#[test]
fn test_runs_that_name_no_test_or_crash_are_execution_errors() {
    if !have("git") {
        return;
    }
    let krate = crate_with("[workspace]\nkeep = \"never\"\n");
    let cases: [(&'static str, Body, &str); 4] = [
        ("no_tests", no_tests, "named no test"),
        ("crashed", crashed, "was killed"),
        ("build_error", build_error, "reported no failing test"),
        (
            "missing_program",
            missing_program,
            "cannot start `no-such-program-xyz`: program not found",
        ),
    ];
    for (name, body, says) in cases {
        let report = run(&krate, name, body);
        assert_eq!(report.outcome, Outcome::Failed, "{name}");
        let error = report
            .error
            .as_ref()
            .map(|e| e.message.clone())
            .unwrap_or_default();
        assert!(error.contains(says), "{name}: {error}");
        assert!(
            report.assertions.is_empty(),
            "{name}: no test was recorded as passing"
        );
    }
}

fn nothing(_: &mut niceeval::Eval) -> niceeval::__private::BoxFuture<'_, niceeval::Result> {
    Box::pin(async move { panic!("the body must not run when the template is too large") })
}

#[test]
fn a_template_over_the_limits_fails_before_the_body_runs() {
    if !have("git") {
        return;
    }
    let krate = crate_with("[workspace]\nmax_files = 2\n");
    let report = run(&krate, "nothing", nothing);
    let error = report.error.expect("an error");
    assert_eq!(error.kind, niceeval::RunErrorKind::Setup);
    assert!(
        error.message.contains("over the workspace limits"),
        "{}",
        error.message
    );
    assert!(error.message.contains("max_files"), "{}", error.message);
}

fn links(t: &mut niceeval::Eval) -> niceeval::__private::BoxFuture<'_, niceeval::Result> {
    Box::pin(async move {
        let ws = t.workspace();
        // The link is copied as a link, never followed.
        let link = ws.path().join("outside");
        assert!(std::fs::symlink_metadata(&link)?.file_type().is_symlink());
        let err = ws.read_text("outside/secret.txt").unwrap_err();
        assert!(
            err.to_string().contains("outside the working copy"),
            "{err}"
        );
        let err = ws.write_text("outside/new.txt", "x").unwrap_err();
        assert!(
            err.to_string().contains("outside the working copy"),
            "{err}"
        );
        let err = ws.read_text("../escape").unwrap_err();
        assert!(
            err.to_string().contains("outside the working copy"),
            "{err}"
        );
        t.check(ws.diff().is_empty(), niceeval::expect::equals(true));
        Ok(())
    })
}

#[test]
fn links_pointing_outside_the_copy_are_not_followed() {
    if !have("git") {
        return;
    }
    let krate = crate_with("[workspace]\nkeep = \"never\"\n");
    let outside = tempfile::tempdir().unwrap();
    write(outside.path(), "secret.txt", "do not read");
    std::os::unix::fs::symlink(outside.path(), krate.path().join("template/outside")).unwrap();
    let report = run(&krate, "links", links);
    assert_eq!(report.outcome, Outcome::Passed, "{:#?}", report);
}

fn grader_sees_the_copy(
    t: &mut niceeval::Eval,
) -> niceeval::__private::BoxFuture<'_, niceeval::Result> {
    Box::pin(async move {
        t.send("one").await?;
        t.check(
            t.reply(),
            script(["python3", "-c", GRADER]).timeout(std::time::Duration::from_secs(30)),
        );
        Ok(())
    })
}

/// A script grader checking AgentV's workspace fields.
const GRADER: &str = r#"
import json, os, sys
payload = json.load(sys.stdin)
ws = payload.get("workspace_path") or ""
env = os.environ.get("AGENTV_WORKSPACE_PATH", "")
changes = payload.get("file_changes") or ""
ok = ws == env and os.path.isfile(os.path.join(ws, "notes.txt")) and "+pub fn complete" in changes
print(json.dumps({"score": 1 if ok else 0, "reason": f"ws={ws} env={env} changes={len(changes)}"}))
"#;

#[test]
fn script_graders_get_the_workspace_path_and_its_changes() {
    if !have("python3") || !have("git") {
        return;
    }
    let krate = crate_with("[workspace]\nkeep = \"never\"\n");
    let report = run(&krate, "grader_sees_the_copy", grader_sees_the_copy);
    assert_eq!(report.outcome, Outcome::Passed, "{:#?}", report.assertions);
}

/// Bubblewrap isolation: the agent may write only in its copy, has a private /tmp and no
/// network. Under CI a machine where bwrap cannot run fails the test.
const JAIL_PY: &str = r#"
import json, os, socket, sys
results = {}
def attempt(name, f):
    try:
        f()
        results[name] = "ok"
    except Exception as e:
        results[name] = type(e).__name__
attempt("write_copy", lambda: open("inside.txt", "w").write("x"))
outside, port = sys.stdin.read().split()
attempt("write_outside", lambda: open(outside, "w").write("x"))
attempt("write_tmp", lambda: open("/tmp/niceeval-jail-probe", "w").write("x"))
def connect():
    s = socket.create_connection(("127.0.0.1", int(port)), timeout=3)
    s.close()
attempt("connect", connect)
print(json.dumps({"type": "message", "role": "assistant", "text": json.dumps(results, sort_keys=True)}))
"#;

fn jailed(t: &mut niceeval::Eval) -> niceeval::__private::BoxFuture<'_, niceeval::Result> {
    Box::pin(async move {
        let input = std::fs::read_to_string(t.workspace().path().join("probe-input.txt"))?;
        std::fs::remove_file(t.workspace().path().join("probe-input.txt"))?;
        t.send(input).await?;
        t.file_created("inside.txt");
        let probe = t
            .workspace()
            .run_command("sh", ["-c", "touch /tmp/niceeval-cmd-probe && echo $PWD"])
            .await?;
        t.check(&probe, command_succeeded());
        Ok(())
    })
}

/// Whether bwrap can create its sandbox here; under CI it must.
pub(crate) fn bwrap_works() -> bool {
    let ok = std::process::Command::new("bwrap")
        .args([
            "--ro-bind",
            "/",
            "/",
            "--dev",
            "/dev",
            "--unshare-net",
            "--",
            "true",
        ])
        .output()
        .is_ok_and(|o| o.status.success());
    crate::scripts_support::available(
        ok,
        "a working bwrap",
        "bash scripts/install-test-deps.sh installs bubblewrap; the kernel must allow unprivileged user namespaces",
    )
}

#[test]
fn bubblewrap_blocks_writes_outside_the_copy_and_the_network() {
    if !have("python3") || !have("git") || !bwrap_works() {
        return;
    }
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let krate = Crate::new("[workspace]\nisolation = \"bubblewrap\"\nkeep = \"never\"\n");
    write(krate.path(), "template/README.md", "jail\n");
    // Outside the copy and outside /tmp (which the sandbox replaces with a private one), even
    // when the checkout itself is under /tmp.
    let host = tempfile::tempdir_in(crate::support::outside_tmp()).unwrap();
    let outside = host.path().join("outside.txt");
    let _ = std::fs::remove_file("/tmp/niceeval-jail-probe");
    let _ = std::fs::remove_file("/tmp/niceeval-cmd-probe");
    write(
        krate.path(),
        "template/probe-input.txt",
        &format!("{} {port}", outside.display()),
    );
    // The agent's script travels with the template, into the copy: wherever the checkout is,
    // the sandbox sees it (a script under the host's /tmp is hidden by the private /tmp).
    write(krate.path(), "template/jail.py", JAIL_PY);
    fn jail_agent() -> Arc<dyn Agent> {
        Arc::new(CommandAgent::new("python3", ["jail.py"]))
    }
    let def = crate::support::define("jailed", &krate, jailed)
        .with_workspace("template")
        .with_agent(jail_agent);
    let report = crate::support::run(def);
    assert_eq!(report.outcome, Outcome::Passed, "{:#?}", report);
    let reply = report
        .events
        .iter()
        .find_map(|e| match e {
            niceeval::Event::Message {
                role: niceeval::Role::Assistant,
                text,
            } => Some(text.to_string()),
            _ => None,
        })
        .unwrap();
    let results: serde_json::Value = serde_json::from_str(&reply).unwrap();
    assert_eq!(results["write_copy"], "ok", "{results}");
    assert_ne!(results["write_outside"], "ok", "{results}");
    assert_eq!(
        results["write_tmp"], "ok",
        "a private /tmp is writable: {results}"
    );
    assert_ne!(results["connect"], "ok", "no network: {results}");
    assert!(!outside.exists(), "nothing was written outside the copy");
    assert!(
        !Path::new("/tmp/niceeval-jail-probe").exists(),
        "/tmp is private to the sandbox"
    );
    assert!(
        !Path::new("/tmp/niceeval-cmd-probe").exists(),
        "commands run in the sandbox too"
    );
    drop(listener);
}

#[test]
fn chaining_works_on_workspace_assertions() {
    // `.at_least` turns a workspace assertion soft, as for every scoped assertion.
    let t = niceeval::Eval::detached(None);
    t.diff_is_empty().at_least(0.5);
}

#[cfg(feature = "providers")]
mod chat_tools {
    use super::*;
    use crate::support::{FakeProvider, Reply};
    use niceeval::agent::chat::{ChatAgent, Tool};

    static SERVER: std::sync::OnceLock<FakeProvider> = std::sync::OnceLock::new();

    fn chat_agent() -> Arc<dyn Agent> {
        let server = SERVER.get().expect("started");
        Arc::new(
            ChatAgent::new("openai/gpt-test")
                .base_url(format!("{}/v1", server.url))
                .tool(Tool::write_file())
                .tool(Tool::read_file())
                .tool(Tool::shell()),
        )
    }

    fn uses_the_tools(
        t: &mut niceeval::Eval,
    ) -> niceeval::__private::BoxFuture<'_, niceeval::Result> {
        Box::pin(async move {
            t.send("Write hello.txt and check it").await?;
            t.file_created("hello.txt");
            t.check(t.workspace().read_text("hello.txt")?, includes("hi there"));
            t.called_tool("read_file")
                .status(niceeval::ActionStatus::Completed);
            t.no_failed_shell_commands(); // the `exit 4`: fails
            Ok(())
        })
    }

    /// The chat agent's built-in `write_file`, `read_file` and `shell` tools work in the run's
    /// working copy.
    #[test]
    fn built_in_chat_tools_work_in_the_working_copy() {
        if !have("git") {
            return;
        }
        let _ = SERVER.set(FakeProvider::start(|n, _| match n {
            0 => Reply::json(crate::support::openai_tool_call(
                "write_file",
                niceeval::json!({"path": "hello.txt", "content": "hi there\n"}),
            )),
            1 => Reply::json(crate::support::openai_tool_call(
                "read_file",
                niceeval::json!({"path": "hello.txt"}),
            )),
            2 => Reply::json(crate::support::openai_tool_call(
                "shell",
                niceeval::json!({"command": "grep -q hi hello.txt && pwd > where.txt && exit 4"}),
            )),
            _ => Reply::json(crate::support::openai_text("Done.")),
        }));
        let krate = crate_with("[workspace]\nkeep = \"always\"\n");
        let def = crate::support::define("uses_the_tools", &krate, uses_the_tools)
            .with_workspace("template")
            .with_agent(chat_agent);
        let report = crate::support::run(def);
        assert!(report.error.is_none(), "{:#?}", report.error);
        assert!(find(&report, "file_created(\"hello.txt\")").passed);
        assert!(
            find(&report, "called_tool(\"read_file\").status(completed)").passed,
            "{:#?}",
            report.assertions
        );
        let shell = find(&report, "no_failed_shell_commands()");
        assert!(!shell.passed);
        assert!(shell.reason.contains("exit code 4"), "{}", shell.reason);
        let kept = report.runs[0].workspace.clone().expect("kept");
        let ran_in = std::fs::read_to_string(Path::new(&kept).join("where.txt")).unwrap();
        assert_eq!(
            ran_in.trim(),
            kept,
            "the shell tool ran in the working copy"
        );
        std::fs::remove_dir_all(Path::new(&kept).parent().unwrap()).unwrap();
    }
}

/// Partial diffs: a change over `[workspace] max_files` keeps the first files and says so.
#[test]
fn a_diff_over_the_limits_is_partial() {
    if !have("git") {
        return;
    }
    let template = tempfile::tempdir().unwrap();
    write(template.path(), "a.txt", "a\n");
    let mut settings = niceeval::__workspace::workspace::Settings::default();
    settings.limits.max_files = 3;
    let ws = niceeval::workspace::Workspace::create(template.path(), &settings).unwrap();
    for i in 0..5 {
        ws.write_text(format!("new/{i}.txt"), "x\n").unwrap();
    }
    let diff = ws.diff();
    assert!(diff.is_partial());
    assert_eq!(diff.files(), ["new/0.txt", "new/1.txt", "new/2.txt"]);
    settings.limits.max_files = 100;
    settings.limits.max_bytes = 40;
    let ws = niceeval::workspace::Workspace::create(template.path(), &settings).unwrap();
    ws.write_text("long.txt", "y\n".repeat(100)).unwrap();
    let diff = ws.diff();
    assert!(diff.is_partial());
    assert!(
        diff.text()
            .ends_with("…[diff cut at [workspace] max_bytes]\n"),
        "{}",
        diff.text()
    );
}

fn repo_template(t: &mut niceeval::Eval) -> niceeval::__private::BoxFuture<'_, niceeval::Result> {
    Box::pin(async move {
        let ws = t.workspace();
        // The template's own repository came along, history and all.
        let log = ws
            .run_command("git", ["log", "--format=%s"])
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .await?;
        t.check(
            String::from_utf8_lossy(&log.stdout).to_string(),
            includes("first commit"),
        );
        // The agent (here the eval) commits in it: only the work shows in the diff.
        ws.write_text("feature.txt", "new\n")?;
        let commit = ws
            .run_command(
                "git",
                [
                    "-c",
                    "user.name=a",
                    "-c",
                    "user.email=a@b",
                    "commit",
                    "-qam",
                    "wip",
                    "--allow-empty",
                ],
            )
            .await?;
        t.check(&commit, command_succeeded());
        let diff = ws.diff();
        t.check(
            niceeval::json!(diff.files()),
            niceeval::expect::equals(niceeval::json!(["feature.txt"])),
        );
        Ok(())
    })
}

#[test]
fn a_template_that_is_a_repository_keeps_its_history_out_of_the_diff() {
    if !have("git") {
        return;
    }
    let krate = crate_with("[workspace]\nkeep = \"never\"\n");
    let template = krate.path().join("template");
    let git = |args: &[&str]| {
        let ok = std::process::Command::new("git")
            .args(["-c", "user.name=t", "-c", "user.email=t@t"])
            .args(args)
            .current_dir(&template)
            .output()
            .unwrap();
        assert!(ok.status.success(), "{ok:?}");
    };
    git(&["init", "-q"]);
    git(&["add", "-A"]);
    git(&["commit", "-qm", "first commit"]);
    let report = run(&krate, "repo_template", repo_template);
    assert_eq!(report.outcome, Outcome::Passed, "{:#?}", report.assertions);
}

/// An agent that writes a file and then hangs past the eval's timeout.
fn hanging_agent() -> Arc<dyn Agent> {
    Arc::new(CommandAgent::shell("echo partial > started.txt; sleep 30"))
}

fn times_out(t: &mut niceeval::Eval) -> niceeval::__private::BoxFuture<'_, niceeval::Result> {
    Box::pin(async move {
        t.file_created("started.txt");
        t.send("go").await?;
        Ok(())
    })
}

#[test]
fn a_turn_cut_short_by_the_timeout_still_records_what_it_changed() {
    if !have("git") {
        return;
    }
    let krate = crate_with("[workspace]\nkeep = \"never\"\n");
    let def = crate::support::define("times_out", &krate, times_out)
        .with_workspace("template")
        .with_agent(hanging_agent)
        // Room for the workspace copy, the turn's git snapshot and `sh` on a loaded machine;
        // the agent sleeps 30 s, so the run still times out.
        .with_timeout_ms(8_000);
    let report = crate::support::run(def);
    let error = report.error.as_ref().expect("timed out");
    assert_eq!(error.kind, niceeval::RunErrorKind::Timeout);
    let changed = report.events.iter().any(|e| {
        matches!(e, niceeval::Event::WorkspaceChanged { files, .. } if files.iter().any(|f| f.path == "started.txt"))
    });
    assert!(changed, "{:#?}", report.events);
    assert!(find(&report, "file_created(\"started.txt\")").passed);
}

/// A workspace command ends with everything it started, a process that left its session and
/// was orphaned included (found by the process tree's environment marker).
#[cfg(target_os = "linux")]
#[test]
fn a_command_ends_with_everything_it_started() {
    if !have("git") || !have("setsid") {
        return;
    }
    let template = tempfile::tempdir().unwrap();
    std::fs::write(template.path().join("a.txt"), "a").unwrap();
    let ws = niceeval::workspace::Workspace::create(
        template.path(),
        &niceeval::__workspace::workspace::Settings::default(),
    )
    .unwrap();
    // The orphan writes its pid before the command ends; the test then waits for it to end
    // (not a fixed time, which a loaded machine can overrun).
    let pidfile = template.path().join("orphan.pid");
    let script = format!(
        "(setsid sh -c 'echo $$ > {0}.tmp; mv {0}.tmp {0}; exec sleep 60' </dev/null >/dev/null 2>&1 &); while [ ! -e {0} ]; do sleep 0.01; done; echo started",
        pidfile.display()
    );
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let out = rt
        .block_on(ws.run_command("sh", ["-c", script.as_str()]).into_future())
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "started");
    assert!(
        crate::scripts_support::ended(&pidfile),
        "a process the command started outlived it"
    );
}
