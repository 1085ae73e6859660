//! The command agent with real subprocesses: scripts written to a temporary directory print
//! JSONL events, misbehave, hang, and flood stdout.
#![cfg(unix)]

use crate::support;
use crate::support::rt;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use niceeval::agent::command::{CommandAgent, InputMode};
use niceeval::{Eval, Event, Outcome, TurnStatus};

fn script(dir: &Path, name: &str, body: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, body).unwrap();
    path
}

fn send(agent: CommandAgent, input: &str) -> (Result<niceeval::Turn, niceeval::Error>, Eval) {
    let mut t = Eval::detached(Some(Arc::new(agent)));
    let result = rt().block_on(t.send(input));
    (result, t)
}

const ECHO_PY: &str = r#"
import json, sys
text = sys.stdin.read()
print(json.dumps({"type": "action.called", "call_id": "c1", "name": "lookup_order", "input": {"id": "123"}}))
print(json.dumps({"type": "action.result", "call_id": "c1", "output": {"status": "shipped"}, "status": "completed"}))
print(json.dumps({"type": "usage", "input_tokens": 11, "output_tokens": 4}))
print(json.dumps({"type": "message", "role": "assistant", "text": "you said: " + text}))
"#;

#[test]
fn jsonl_events_become_the_turn() {
    let dir = tempfile::tempdir().unwrap();
    let path = script(dir.path(), "echo.py", ECHO_PY);
    let agent = CommandAgent::new("python3", [path.to_str().unwrap()]);
    let (turn, _) = send(agent, "where is order 123?");
    let turn = turn.unwrap();
    assert_eq!(turn.message, "you said: where is order 123?");
    assert_eq!(turn.usage.total_tokens(), 15);
    let kinds: Vec<&str> = turn.events.iter().map(Event::kind).collect();
    assert_eq!(
        kinds,
        [
            "message",
            "action.called",
            "action.result",
            "usage",
            "message"
        ]
    );
}

#[test]
fn input_can_be_json_on_stdin_or_an_argument() {
    let dir = tempfile::tempdir().unwrap();
    let json_py = script(
        dir.path(),
        "json_agent.py",
        r#"
import json, sys
request = json.load(sys.stdin)
text = request["input"] + " | " + request["session"] + " | " + str(len(request["history"]))
print(json.dumps({"type": "message", "role": "assistant", "text": text}))
"#,
    );
    let mut t = Eval::detached(Some(Arc::new(
        CommandAgent::new("python3", [json_py.to_str().unwrap()]).input_mode(InputMode::Json),
    )));
    let rt = rt();
    rt.block_on(t.send("first")).unwrap();
    let turn = rt.block_on(t.send("second")).unwrap();
    assert_eq!(turn.message, "second | session-1 | 2");

    // `sh -c SCRIPT NAME INPUT`: the input arrives as $1.
    let agent = CommandAgent::new(
        "sh",
        [
            "-c",
            r#"printf '{"type":"message","role":"assistant","text":"arg=%s"}\n' "$1""#,
            "sh",
        ],
    )
    .input_mode(InputMode::Arg);
    let (turn, _) = send(agent, "hello world");
    assert_eq!(turn.unwrap().message, "arg=hello world");
}

#[test]
fn a_malformed_line_fails_the_turn_naming_the_line() {
    // stderr is written before the bad line: the agent fails the turn (and kills the process
    // group) as soon as it reads that line, so anything printed after it may never be written.
    let agent = CommandAgent::shell(
        r#"echo oops >&2; echo '{"type":"thinking","text":"hm"}'; echo; echo 'DEBUG: not json'"#,
    );
    let (result, t) = send(agent, "hi");
    let err = result.unwrap_err().to_string();
    assert!(
        err.contains("stdout line 3 is not a niceeval event"),
        "{err}"
    );
    assert!(err.contains("DEBUG: not json"), "{err}");
    assert!(err.contains("stderr:\noops"), "{err}");
    let turn = &t.turns()[0];
    assert_eq!(turn.status, TurnStatus::Failed);
    assert!(
        turn.events
            .iter()
            .any(|e| matches!(e, Event::Thinking { .. })),
        "events before the bad line are kept"
    );
}

#[test]
fn a_non_zero_exit_fails_the_turn_with_its_stderr() {
    let agent = CommandAgent::shell(
        r#"echo '{"type":"message","role":"assistant","text":"partial"}'; echo 'Traceback: boom' >&2; exit 3"#,
    );
    let (result, t) = send(agent.clone(), "hi");
    let err = result.unwrap_err().to_string();
    assert!(err.contains("exited with status 3"), "{err}");
    assert!(err.contains("Traceback: boom"), "{err}");
    assert_eq!(t.turns()[0].message, "partial");
    assert!(agent.last_stderr().contains("Traceback: boom"));
    assert!(matches!(
        t.turns()[0].events.last(),
        Some(Event::Error { .. })
    ));
}

#[test]
fn a_missing_program_is_a_clear_error() {
    let (result, _) = send(
        CommandAgent::new("/nonexistent/agent-binary", Vec::<String>::new()),
        "hi",
    );
    let err = result.unwrap_err().to_string();
    assert!(
        err.contains("cannot start `/nonexistent/agent-binary`"),
        "{err}"
    );
}

fn alive(pid: i32) -> bool {
    // A zombie awaiting its reaper is not alive.
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => !stat
            .rsplit(')')
            .next()
            .unwrap_or("")
            .trim_start()
            .starts_with('Z'),
        Err(_) => false,
    }
}

#[test]
fn a_hang_is_killed_by_the_timeout_with_its_whole_process_group() {
    let dir = tempfile::tempdir().unwrap();
    let pidfile = dir.path().join("child.pid");
    // The pid of its background child is the last thing it writes before it hangs: the timeout
    // fires once it is there, after the event and the stderr line.
    let timeout = Duration::from_millis(700);
    let agent = CommandAgent::shell(format!(
        r#"echo '{{"type":"thinking","text":"working"}}'; echo 'stuck' >&2; sleep 60 & echo $! > {0}.tmp; mv {0}.tmp {0}; wait"#,
        pidfile.display()
    ))
    .timeout(timeout);
    let mut t = Eval::detached(Some(Arc::new(agent)));
    let watched = pidfile.clone();
    let (result, started) = support::time_out_once(move || watched.exists(), timeout, t.send("hi"));
    let ended = Instant::now();
    let started = started.expect("the agent wrote its child's pid");
    let err = result.unwrap_err().to_string();
    assert!(
        ended - started < Duration::from_secs(30),
        "the hang was not cut short"
    );
    assert!(
        err.contains("did not finish within 700ms and was killed"),
        "{err}"
    );
    assert!(err.contains("stuck"), "stderr kept: {err}");
    assert_eq!(
        t.turns()[0]
            .events
            .iter()
            .filter(|e| e.kind() == "thinking")
            .count(),
        1
    );
    let pid: i32 = std::fs::read_to_string(&pidfile)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    while alive(pid) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(!alive(pid), "the background child {pid} outlived the turn");
}

#[test]
fn huge_output_is_capped_with_a_clear_message() {
    let agent = CommandAgent::new(
        "python3",
        [
            "-c",
            "import sys\nline = '{\"type\":\"thinking\",\"text\":\"' + 'x' * 1000 + '\"}\\n'\nwhile True: sys.stdout.write(line)",
        ],
    )
    .max_output(1024 * 1024)
    .timeout(Duration::from_secs(20));
    let (result, t) = send(agent, "flood");
    let err = result.unwrap_err().to_string();
    assert!(err.contains("printed more than 1 MiB on stdout"), "{err}");
    let kept = t.turns()[0]
        .events
        .iter()
        .filter(|e| e.kind() == "thinking")
        .count();
    assert!(
        kept > 500 && kept < 1100,
        "events up to the cap are kept: {kept}"
    );

    // One endless line without a newline is capped just the same.
    let agent = CommandAgent::new(
        "python3",
        [
            "-c",
            "import sys\nwhile True: sys.stdout.write('x' * 65536)",
        ],
    )
    .max_output(2 * 1024 * 1024)
    .timeout(Duration::from_secs(20));
    let err = send(agent, "flood").0.unwrap_err().to_string();
    assert!(err.contains("printed more than 2 MiB"), "{err}");
}

fn ask(t: &mut Eval) -> niceeval::__private::BoxFuture<'_, Result<(), niceeval::Error>> {
    Box::pin(async move {
        let turn = t.send("ping").await?;
        t.check(&turn.message, niceeval::expect::includes("pong: ping"));
        Ok(())
    })
}

#[test]
fn agent_type_command_in_niceeval_toml() {
    let krate = support::Crate::new(
        "[agent]\ntype = \"command\"\ncommand = [\"python3\", \"agent.py\"]\ntimeout = \"20s\"\n",
    );
    script(
        krate.path(),
        "agent.py",
        "import json, sys\nprint(json.dumps({'type': 'message', 'role': 'assistant', 'text': 'pong: ' + sys.stdin.read()}))\n",
    );
    let report = support::run(support::define("command_from_toml", &krate, ask));
    assert_eq!(report.outcome, Outcome::Passed, "{}", report.render());

    let krate = support::Crate::new("[agent]\ntype = \"command\"\ncommand = \"exit 4\"\n");
    let report = support::run(support::define("command_fails", &krate, ask));
    assert_eq!(report.outcome, Outcome::Failed);
    assert!(
        report
            .error_message()
            .unwrap()
            .contains("exited with status 4"),
        "{}",
        report.render()
    );
}

/// Text output (`.text_output()`, `[agent] output = "text"`): stdout is the reply, whatever it
/// holds; with JSONL output the same program fails the turn on its first line.
const PLAIN_PY: &str = r#"
import sys
text = sys.stdin.read()
print("Hello! You said:")
print("  " + text)
print('{"not": "an event"}')
"#;

#[test]
fn text_output_makes_stdout_the_reply() {
    let dir = tempfile::tempdir().unwrap();
    let path = script(dir.path(), "plain.py", PLAIN_PY);
    let agent = CommandAgent::new("python3", [path.to_str().unwrap()]).text_output();
    let (turn, _) = send(agent, "hi there");
    let turn = turn.unwrap();
    assert_eq!(
        turn.message,
        "Hello! You said:\n  hi there\n{\"not\": \"an event\"}"
    );
    let kinds: Vec<&str> = turn.events.iter().map(Event::kind).collect();
    assert_eq!(kinds, ["message", "message"]);

    let jsonl = CommandAgent::new("python3", [path.to_str().unwrap()]);
    let err = send(jsonl, "hi there").0.unwrap_err().to_string();
    assert!(
        err.contains("stdout line 1 is not a niceeval event"),
        "{err}"
    );

    // A failing program still fails the turn, keeping what it printed.
    let agent = CommandAgent::shell("echo partial; echo oops >&2; exit 3").text_output();
    let (result, t) = send(agent, "x");
    let err = result.unwrap_err().to_string();
    assert!(err.contains("exited with status 3; stderr:\noops"), "{err}");
    assert!(
        t.events().iter().any(|e| *e == Event::assistant("partial")),
        "{:?}",
        t.events()
    );
}

#[test]
fn output_text_in_niceeval_toml() {
    let krate = support::Crate::new(
        "[agent]\ntype = \"command\"\ncommand = [\"python3\", \"agent.py\"]\noutput = \"text\"\n",
    );
    script(
        krate.path(),
        "agent.py",
        "import sys\nprint('pong: ' + sys.stdin.read())\n",
    );
    let report = support::run(support::define("command_text_from_toml", &krate, ask));
    assert_eq!(report.outcome, Outcome::Passed, "{}", report.render());
}

/// The agent's script sits in the crate (`agents/fixer.py`), the template holds only the
/// project: the relative path resolves against the crate, while the program works in the copy.
const FIXER_PY: &str = r#"
import json, os
with open("fixed.txt", "w") as f:
    f.write("fixed\n")
print(json.dumps({"type": "message", "role": "assistant", "text": "fixed in " + os.path.basename(os.getcwd())}))
"#;

fn fixes(t: &mut Eval) -> niceeval::__private::BoxFuture<'_, Result<(), niceeval::Error>> {
    Box::pin(async move {
        let turn = t.send("fix it").await?;
        t.check(&turn.message, niceeval::expect::includes("fixed in"));
        t.file_created("fixed.txt");
        Ok(())
    })
}

fn fixer() -> Arc<dyn niceeval::agent::Agent> {
    Arc::new(CommandAgent::new("python3", ["-u", "agents/fixer.py"]))
}

/// A crate for a workspace eval: `niceeval.toml`, `agents/fixer.py` and a `template`.
fn fixer_crate(toml: &str, krate: support::Crate) -> support::Crate {
    std::fs::write(krate.path().join("niceeval.toml"), toml).unwrap();
    std::fs::create_dir_all(krate.path().join("agents")).unwrap();
    script(krate.path(), "agents/fixer.py", FIXER_PY);
    std::fs::create_dir_all(krate.path().join("template")).unwrap();
    script(krate.path(), "template/README.md", "project\n");
    krate
}

#[test]
fn relative_script_paths_resolve_against_the_crate_not_the_working_copy() {
    let krate = fixer_crate("[workspace]\nkeep = \"never\"\n", support::Crate::new(""));
    let def = support::define("relative_script", &krate, fixes)
        .with_workspace("template")
        .with_agent(fixer);
    let report = support::run(def);
    assert_eq!(report.outcome, Outcome::Passed, "{}", report.render());
    assert!(
        !krate.path().join("fixed.txt").exists(),
        "the program still works in the copy"
    );
}

/// Under bubblewrap: a script in the crate runs (when the crate is not itself under /tmp); one
/// under the host's /tmp is an error before the turn, naming it and the fix.
#[test]
fn bubblewrap_runs_crate_scripts_and_refuses_scripts_its_private_tmp_hides() {
    if !crate::scripts_support::have("python3")
        || !crate::scripts_support::have("git")
        || !crate::workspace::bwrap_works()
    {
        return;
    }
    const TOML: &str = "[workspace]\nisolation = \"bubblewrap\"\nkeep = \"never\"\n";
    // A crate outside /tmp, even when this checkout is under it.
    let dir = tempfile::tempdir_in(support::outside_tmp()).unwrap();
    let manifest_dir: &'static str =
        Box::leak(dir.path().to_str().unwrap().to_string().into_boxed_str());
    let krate = fixer_crate(TOML, support::Crate { dir, manifest_dir });
    let def = support::define("bwrap_crate_script", &krate, fixes)
        .with_workspace("template")
        .with_agent(fixer);
    let report = support::run(def);
    if krate.path().starts_with("/tmp") {
        let error = report.error_message().unwrap_or_default();
        assert!(
            error.contains("is itself under /tmp: move the crate out of /tmp"),
            "{}",
            report.render()
        );
    } else {
        assert_eq!(report.outcome, Outcome::Passed, "{}", report.render());
    }

    static SCRIPT: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    let path = SCRIPT.get_or_init(|| {
        let dir = tempfile::Builder::new().tempdir_in("/tmp").unwrap().keep();
        script(&dir, "agent.py", FIXER_PY).display().to_string()
    });
    fn tmp_agent() -> Arc<dyn niceeval::agent::Agent> {
        Arc::new(CommandAgent::new(
            "python3",
            [SCRIPT.get().unwrap().clone()],
        ))
    }
    let def = support::define("bwrap_tmp_script", &krate, fixes)
        .with_workspace("template")
        .with_agent(tmp_agent);
    let report = support::run(def);
    assert_eq!(report.outcome, Outcome::Failed, "{}", report.render());
    let error = report.error_message().unwrap_or_default();
    assert!(
        error.contains(&format!(
            "the command agent's script {path} is under /tmp, which [workspace] isolation = \"bubblewrap\" replaces with a private /tmp"
        )),
        "{error}"
    );
    assert!(error.contains("put it under the crate"), "{error}");
    assert!(
        !report.events.iter().any(|e| matches!(
            e,
            Event::Message {
                role: niceeval::Role::Assistant,
                ..
            }
        )),
        "the program never ran: {:?}",
        report.events
    );
    let _ = std::fs::remove_dir_all(std::path::Path::new(path).parent().unwrap());
}
