//! The Claude Code adapter against the real `claude` program (pinned by
//! `scripts/install-claude-code.sh`), talking to a loopback fake of the Anthropic Messages API
//! whose scripted replies make it call its real tools in a temporary working copy.
//!
//! `NICEEVAL_RECORD_CLAUDE_CODE=1 cargo test -p niceeval --test it claude_code::record` rewrites
//! (`=<scenario>`: only that one) the recorded streams of `tests/data/claude_code/` that the parser tests read.
#![cfg(unix)]

use crate::support::rt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::json;

use niceeval::__workspace::workspace::{Isolation, Sandbox};
use niceeval::agent::claude_code::ClaudeCode;
use niceeval::agent::{Agent, EventSink, Request};
use niceeval::{ActionStatus, Event, Usage};

use crate::support::fake_anthropic::{
    CACHE_CREATION_TOKENS, CACHE_READ_TOKENS, Conversation, FakeAnthropic, INPUT_TOKENS, Step,
    fail, reply, text, thinking, tool,
};

/// The messages of the `error` events an agent emitted.
fn error_messages(sink: &EventSink) -> Vec<String> {
    sink.snapshot()
        .into_iter()
        .filter_map(|e| match e {
            Event::Error { message } => Some(message),
            _ => None,
        })
        .collect()
}

/// Whether `claude` is installed. Under CI a missing program fails the test; elsewhere it prints
/// a notice and the caller skips.
fn have_claude() -> bool {
    let ok = std::process::Command::new("claude")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    crate::scripts_support::available(ok, "`claude`", "bash scripts/install-claude-code.sh")
}

/// The environment every run gets: the fake as the API, a fake key, a private HOME, and no
/// traffic beyond the model calls.
fn environment(fake: &FakeAnthropic, home: &Path) -> Vec<(String, String)> {
    [
        ("ANTHROPIC_BASE_URL", fake.url()),
        ("ANTHROPIC_API_KEY", "sk-ant-fake-key-for-tests"),
        ("HOME", &home.to_string_lossy()),
        ("CLAUDE_CONFIG_DIR", &home.join(".claude").to_string_lossy()),
        ("CLAUDE_CODE_MAX_RETRIES", "0"),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect()
}

fn agent(fake: &FakeAnthropic, home: &Path) -> ClaudeCode {
    let mut agent = ClaudeCode::new()
        .model("claude-sonnet-4-5")
        .timeout(Duration::from_secs(90));
    for (k, v) in environment(fake, home) {
        agent = agent.env(k, v);
    }
    agent
}

// ---- scenarios: one script each, shared by the recorder and the tests ----

/// Writes `greeting.txt`, runs a check that fails (exit 3), fixes the file, re-runs the check,
/// answers.
fn tool_error(dir: &Path) -> impl Fn(&Conversation) -> Step + Send + Sync + 'static {
    let file = dir.join("greeting.txt").to_string_lossy().into_owned();
    let check = "grep -q world greeting.txt || exit 3".to_string();
    move |c: &Conversation| match c.step() {
        0 => reply(vec![
            thinking("I will write the greeting, then check it."),
            text("Writing the greeting."),
            tool("Write", json!({"file_path": file, "content": "hello\n"})),
        ]),
        1 => reply(vec![tool(
            "Bash",
            json!({"command": check, "description": "Check the greeting"}),
        )]),
        2 => reply(vec![tool(
            "Edit",
            json!({"file_path": file, "old_string": "hello", "new_string": "hello world"}),
        )]),
        3 => reply(vec![tool(
            "Bash",
            json!({"command": check, "description": "Check the greeting again"}),
        )]),
        _ => reply(vec![text("greeting.txt now says hello world.")]),
    }
}

/// Two tool calls in one message, then an answer.
fn parallel(_dir: &Path) -> impl Fn(&Conversation) -> Step + Send + Sync + 'static {
    move |c: &Conversation| match c.step() {
        0 => reply(vec![
            tool(
                "Bash",
                json!({"command": "echo one", "description": "Say one"}),
            ),
            tool(
                "Bash",
                json!({"command": "echo two", "description": "Say two"}),
            ),
        ]),
        _ => reply(vec![text("Both commands ran.")]),
    }
}

/// A `Task` subagent that runs a command of its own, then the main agent answers.
fn subagent(_dir: &Path) -> impl Fn(&Conversation) -> Step + Send + Sync + 'static {
    move |c: &Conversation| {
        if c.user_text().contains("SUBAGENT-TASK") {
            return match c.step() {
                0 => reply(vec![tool(
                    "Bash",
                    json!({"command": "echo from the subagent", "description": "Report"}),
                )]),
                _ => reply(vec![text("The subagent is done.")]),
            };
        }
        match c.step() {
            0 => reply(vec![tool(
                "Task",
                json!({
                    "description": "Echo a line",
                    "prompt": "SUBAGENT-TASK: run `echo from the subagent` and report.",
                    "subagent_type": "general-purpose",
                }),
            )]),
            _ => reply(vec![text("The subagent reported back.")]),
        }
    }
}

/// Loads a project skill with the `Skill` tool, then answers.
fn skill(_dir: &Path) -> impl Fn(&Conversation) -> Step + Send + Sync + 'static {
    move |c: &Conversation| match c.step() {
        0 => reply(vec![tool("Skill", json!({"skill": "greeting"}))]),
        _ => reply(vec![text("Loaded the greeting skill.")]),
    }
}

/// A write the permission check refuses (run with `--permission-mode default`), then an answer.
fn denied(dir: &Path) -> impl Fn(&Conversation) -> Step + Send + Sync + 'static {
    let file = dir.join("note.txt").to_string_lossy().into_owned();
    move |c: &Conversation| match c.step() {
        0 => reply(vec![tool(
            "Write",
            json!({"file_path": file, "content": "note\n"}),
        )]),
        _ => reply(vec![text("I was not allowed to write the note.")]),
    }
}

/// The API fails (HTTP 500) on the first call: the run ends with an error result.
fn aborted(_dir: &Path) -> impl Fn(&Conversation) -> Step + Send + Sync + 'static {
    move |_: &Conversation| fail(500, "scripted overload")
}

/// Answers each prompt; the second turn of a resumed session sees the first.
fn resume(_dir: &Path) -> impl Fn(&Conversation) -> Step + Send + Sync + 'static {
    move |c: &Conversation| {
        if c.user_text().contains("first question") && c.user_text().contains("second question") {
            reply(vec![text("You asked two questions.")])
        } else {
            reply(vec![text("One question so far.")])
        }
    }
}

fn prepare(dir: &Path) {
    let skill = dir.join(".claude/skills/greeting/SKILL.md");
    std::fs::create_dir_all(skill.parent().unwrap()).unwrap();
    std::fs::write(
        &skill,
        "---\nname: greeting\ndescription: How to greet people.\n---\n\nSay hello world.\n",
    )
    .unwrap();
}

// ---- recording ----

/// Runs the real program for each scenario and stores its stdout under
/// `tests/data/claude_code/`. Only with `NICEEVAL_RECORD_CLAUDE_CODE` set: `1` records every
/// scenario, a name only that one. The working copies sit at fixed paths so the recordings do
/// not change with temporary directory names.
#[test]
fn record() {
    let Some(only) = std::env::var("NICEEVAL_RECORD_CLAUDE_CODE").ok() else {
        return;
    };
    if !have_claude() {
        return;
    }
    let wanted = |name: &str| only == "1" || only == name;
    let out = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/claude_code");
    std::fs::create_dir_all(&out).unwrap();
    let base = PathBuf::from("/tmp/niceeval-claude-code");
    let _ = std::fs::remove_dir_all(&base);
    type Script = Box<dyn Fn(&Conversation) -> Step + Send + Sync>;
    /// Name, script, prompt, extra arguments.
    type Scenario = (
        &'static str,
        fn(&Path) -> Script,
        &'static str,
        &'static [&'static str],
    );
    let scenarios: Vec<Scenario> = vec![
        (
            "tool_error",
            |d| Box::new(tool_error(d)),
            "Greet the world in greeting.txt.",
            &[],
        ),
        (
            "parallel",
            |d| Box::new(parallel(d)),
            "Say one and two.",
            &[],
        ),
        (
            "subagent",
            |d| Box::new(subagent(d)),
            "Delegate the echo.",
            &[],
        ),
        (
            "skill",
            |d| Box::new(skill(d)),
            "Use the greeting skill.",
            &[],
        ),
        ("aborted", |d| Box::new(aborted(d)), "This will fail.", &[]),
        (
            "max_turns",
            |d| Box::new(parallel(d)),
            "Say one and two.",
            &["--max-turns", "1"],
        ),
        (
            "denied",
            |d| Box::new(denied(d)),
            "Write a note.",
            &["--permission-mode", "default"],
        ),
    ];
    for (name, script, prompt, extra) in scenarios {
        if !wanted(name) {
            continue;
        }
        let dir = base.join(name);
        let home = base.join(format!("{name}-home"));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::create_dir_all(&home).unwrap();
        prepare(&dir);
        let fake = FakeAnthropic::start(script(&dir));
        let output = run_claude(&dir, &home, &fake, extra, prompt);
        eprintln!(
            "recorded {name}: exit {:?}, stderr: {}",
            output.status.code(),
            String::from_utf8_lossy(&output.stderr)
        );
        std::fs::write(out.join(format!("{name}.jsonl")), &output.stdout).unwrap();
    }
    if !wanted("resumed") {
        return;
    }
    // The second turn of a resumed session.
    let dir = base.join("resumed");
    let home = base.join("resumed-home");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::create_dir_all(&home).unwrap();
    let fake = FakeAnthropic::start(resume(&dir));
    let first = run_claude(&dir, &home, &fake, &[], "first question");
    let session = String::from_utf8_lossy(&first.stdout)
        .lines()
        .find_map(|l| {
            let frame: serde_json::Value = serde_json::from_str(l).ok()?;
            frame["session_id"].as_str().map(str::to_string)
        })
        .expect("a session id");
    let second = run_claude(
        &dir,
        &home,
        &fake,
        &["--resume", &session],
        "second question",
    );
    std::fs::write(out.join("resumed.jsonl"), &second.stdout).unwrap();
}

/// Runs the real program as the adapter does, without the adapter.
fn run_claude(
    dir: &Path,
    home: &Path,
    fake: &FakeAnthropic,
    extra: &[&str],
    prompt: &str,
) -> std::process::Output {
    std::process::Command::new("claude")
        .args([
            "-p",
            "--output-format",
            "stream-json",
            "--verbose",
            "--model",
            "claude-sonnet-4-5",
            "--permission-mode",
            "bypassPermissions",
        ])
        .args(extra)
        .args(["--", prompt])
        .current_dir(dir)
        .envs(environment(fake, home))
        .env("IS_SANDBOX", "1")
        .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
        .output()
        .unwrap()
}

// ---- the adapter against the real program ----

/// A working copy and a private HOME in one temporary directory.
struct Place {
    _root: tempfile::TempDir,
    work: PathBuf,
    home: PathBuf,
}

fn place() -> Place {
    let root = tempfile::tempdir().unwrap();
    let work = root.path().join("work");
    let home = root.path().join("home");
    std::fs::create_dir_all(&work).unwrap();
    std::fs::create_dir_all(&home).unwrap();
    Place {
        work: work.canonicalize().unwrap(),
        home,
        _root: root,
    }
}

fn request(prompt: &str, place: &Place) -> (Request, EventSink) {
    let sink = EventSink::default();
    let request = Request::new(prompt, sink.clone()).with_sandbox(Sandbox::new(
        &place.work,
        Isolation::Local,
        true,
    ));
    (request, sink)
}

#[test]
fn writes_a_file_fails_a_command_fixes_it_and_reports_tokens_and_cost() {
    if !have_claude() {
        return;
    }
    let place = place();
    let fake = FakeAnthropic::start(tool_error(&place.work));
    let agent = agent(&fake, &place.home);
    let (request, sink) = request("Greet the world in greeting.txt.", &place);
    rt().block_on(agent.send(request))
        .expect("the turn succeeds");
    let events = sink.snapshot();

    assert_eq!(
        std::fs::read_to_string(place.work.join("greeting.txt")).unwrap(),
        "hello world\n"
    );
    let calls: Vec<(&str, &str)> = events
        .iter()
        .filter_map(|e| match e {
            Event::ActionCalled { call_id, name, .. } => Some((call_id.as_str(), name.as_str())),
            _ => None,
        })
        .collect();
    assert_eq!(
        calls.iter().map(|c| c.1).collect::<Vec<_>>(),
        ["Write", "Bash", "Edit", "Bash"]
    );
    let status = |id: &str| {
        events.iter().find_map(|e| match e {
            Event::ActionResult {
                call_id,
                status,
                output,
            } if call_id == id => Some((*status, output.clone())),
            _ => None,
        })
    };
    assert_eq!(
        status(calls[1].0),
        Some((ActionStatus::Failed, json!("Exit code 3")))
    );
    assert_eq!(
        status(calls[3].0).map(|s| s.0),
        Some(ActionStatus::Completed)
    );
    assert!(events.contains(&Event::assistant("greeting.txt now says hello world.")));
    assert!(events.contains(&Event::Thinking {
        text: "I will write the greeting, then check it.".into()
    }));

    // Five model calls; the cost is the one Claude Code reported.
    let usage = Usage::from_events(&events);
    let per_call = INPUT_TOKENS + CACHE_CREATION_TOKENS + CACHE_READ_TOKENS;
    assert_eq!(usage.input_tokens, 5 * per_call);
    assert_eq!(usage.cache_read_tokens, 5 * CACHE_READ_TOKENS);
    assert!(usage.output_tokens > 0);
    let cost = usage.cost_usd.expect("a reported cost");
    assert!(cost > 0.0, "{cost}");
    assert!(
        !events.iter().any(|e| matches!(e, Event::Error { .. })),
        "{events:#?}"
    );

    // The program ran in the working copy, against the fake, with the key from the environment
    // only.
    let conversations = fake.conversations();
    assert_eq!(conversations.len(), 5);
    assert!(
        fake.seen()
            .iter()
            .filter(|s| s.path == "/v1/messages")
            .all(|s| s.headers.get("x-api-key").map(String::as_str)
                == Some("sk-ant-fake-key-for-tests"))
    );
}

#[test]
fn a_second_send_resumes_the_session_and_a_new_session_starts_fresh() {
    if !have_claude() {
        return;
    }
    let place = place();
    let fake = FakeAnthropic::start(resume(&place.work));
    let agent = agent(&fake, &place.home);
    let rt = rt();

    let (first, sink) = request("first question", &place);
    rt.block_on(agent.send(first)).unwrap();
    assert!(
        sink.snapshot()
            .contains(&Event::assistant("One question so far."))
    );
    let first_usage = Usage::from_events(&sink.snapshot());

    let (second, sink) = request("second question", &place);
    rt.block_on(agent.send(second)).unwrap();
    assert!(
        sink.snapshot()
            .contains(&Event::assistant("You asked two questions.")),
        "{:#?}",
        sink.snapshot()
    );
    // The resumed turn reports only its own tokens and cost (one model call of the same size as
    // the first turn's), not the session's so far.
    let second_usage = Usage::from_events(&sink.snapshot());
    assert_eq!(second_usage.input_tokens, first_usage.input_tokens);
    let (a, b) = (
        first_usage.cost_usd.unwrap(),
        second_usage.cost_usd.unwrap(),
    );
    assert!(a > 0.0 && (a - b).abs() < 1e-6, "{a} vs {b}");

    let (mut third, sink) = request("third question", &place);
    third.session = "session-2".to_string();
    rt.block_on(agent.send(third)).unwrap();
    assert!(
        sink.snapshot()
            .contains(&Event::assistant("One question so far."))
    );
}

#[test]
fn through_an_eval_send_continues_and_new_session_restarts() {
    if !have_claude() {
        return;
    }
    let place = place();
    let fake = FakeAnthropic::start(resume(&place.work));
    let agent = std::sync::Arc::new(agent(&fake, &place.home));
    rt().block_on(async {
        let mut t = niceeval::Eval::detached(Some(agent));
        let turn = t.send("first question").await.unwrap();
        assert_eq!(turn.message.as_str(), "One question so far.");
        assert!(turn.usage.cost_usd.is_some_and(|c| c > 0.0));
        let turn = t.send("second question").await.unwrap();
        assert_eq!(turn.message.as_str(), "You asked two questions.");
        t.new_session();
        let turn = t.send("third question").await.unwrap();
        assert_eq!(turn.message.as_str(), "One question so far.");
    });
}

#[test]
fn an_api_error_fails_the_turn_with_its_message() {
    if !have_claude() {
        return;
    }
    let place = place();
    let fake = FakeAnthropic::start(aborted(&place.work));
    let agent = agent(&fake, &place.home);
    let (request, sink) = request("This will fail.", &place);
    rt().block_on(agent.send(request))
        .expect("a failed result is a failed turn, not an execution error");
    let errors = error_messages(&sink);
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert!(errors[0].contains("500 scripted overload"), "{}", errors[0]);
    // The real program reports it as `subtype: "success"` with `is_error`: the turn's error
    // names the failure, never a success.
    assert!(
        errors[0].starts_with("Claude Code's turn failed (") && !errors[0].contains("success"),
        "{}",
        errors[0]
    );
}

#[test]
fn a_rejected_key_fails_the_turn_saying_so() {
    if !have_claude() {
        return;
    }
    let place = place();
    let fake = FakeAnthropic::start(|_: &Conversation| fail(401, "invalid x-api-key"));
    let agent = agent(&fake, &place.home);
    let (request, sink) = request("Hello.", &place);
    rt().block_on(agent.send(request))
        .expect("a failed result is a failed turn, not an execution error");
    let errors = error_messages(&sink);
    assert!(!errors.is_empty(), "the turn failed with an error event");
    let last = errors.last().map(String::as_str).unwrap_or_default();
    assert!(last.starts_with("Claude Code's turn failed ("), "{last}");
    assert!(!last.contains("ended the turn with success"), "{last}");
}

// ---- process handling, with a stand-in program (no `claude` needed) ----

fn stand_in(dir: &Path, script: &str) -> String {
    let path = crate::scripts_support::write(dir, "claude", &format!("#!/bin/sh\n{script}\n"));
    crate::scripts_support::make_executable(&path);
    path.to_string_lossy().into_owned()
}

#[test]
fn a_malformed_line_fails_the_turn_naming_it_with_the_stderr_tail() {
    let place = place();
    let program = stand_in(
        &place.home,
        r#"echo '{"type":"system","subtype":"init","session_id":"s1"}'
echo 'this is not json'
echo 'something went wrong' >&2"#,
    );
    let agent = ClaudeCode::new().program(program);
    let (request, sink) = request("hi", &place);
    let err = rt().block_on(agent.send(request)).unwrap_err();
    assert!(
        err.message().starts_with("stdout line 2 is not JSON"),
        "{err}"
    );
    assert!(err.message().ends_with("something went wrong"), "{err}");
    assert!(sink.snapshot().is_empty());
}

#[test]
fn the_timeout_kills_the_process_group() {
    let place = place();
    // A child of the group that would outlive the turn: its pid is written before the CLI's
    // first line; the timeout fires once it is there, and the test waits for it to end (not a
    // fixed time, which a loaded machine can overrun).
    let pidfile = place.work.join("child.pid");
    let program = stand_in(
        &place.home,
        &format!(
            "sleep 60 &\necho $! > {0}.tmp; mv {0}.tmp {0}\necho '{{\"type\":\"system\",\"subtype\":\"init\",\"session_id\":\"s1\"}}'\nsleep 30",
            pidfile.display()
        ),
    );
    let timeout = Duration::from_millis(500);
    let agent = ClaudeCode::new().program(program).timeout(timeout);
    let (request, _) = request("hi", &place);
    let watched = pidfile.clone();
    let (outcome, started) =
        crate::support::time_out_once(move || watched.exists(), timeout, agent.send(request));
    let ended = std::time::Instant::now();
    let started = started.expect("the stand-in wrote its child's pid");
    let err = outcome.unwrap_err();
    assert!(
        err.message().contains("did not finish within 500ms"),
        "{err}"
    );
    // Cut short: the stand-in alone runs 30 s.
    assert!(ended - started < Duration::from_secs(20));
    assert!(
        crate::scripts_support::ended(&pidfile),
        "a process of the group outlived the turn"
    );
}

/// Claude Code runs its Bash tool's commands in sessions of their own (`setsid`): they leave
/// the CLI's process group, and ending the turn must still end them — here even orphaned (the
/// subshell that started it is gone), so only the tree's environment marker finds it.
#[cfg(target_os = "linux")]
#[test]
fn the_timeout_ends_commands_that_left_the_session() {
    let place = place();
    // The command writes its pid before the CLI's first line; the timeout fires once it is
    // there, and the test waits for it to end.
    let pidfile = place.work.join("setsid-child.pid");
    let program = stand_in(
        &place.home,
        &format!(
            "(setsid sh -c 'echo $$ > {0}.tmp; mv {0}.tmp {0}; exec sleep 60' </dev/null >/dev/null 2>&1 &)\nwhile [ ! -e {0} ]; do sleep 0.01; done\necho '{{\"type\":\"system\",\"subtype\":\"init\",\"session_id\":\"s1\"}}'\nsleep 30",
            pidfile.display()
        ),
    );
    let timeout = Duration::from_millis(500);
    let agent = ClaudeCode::new().program(program).timeout(timeout);
    let (request, _) = request("hi", &place);
    let watched = pidfile.clone();
    let (outcome, started) =
        crate::support::time_out_once(move || watched.exists(), timeout, agent.send(request));
    started.expect("the command in a session of its own wrote its pid");
    let err = outcome.unwrap_err();
    assert!(
        err.message().contains("did not finish within 500ms"),
        "{err}"
    );
    assert!(
        crate::scripts_support::ended(&pidfile),
        "a command in a session of its own outlived the turn"
    );
}

/// The program writes its stderr a moment after the line that fails the turn: the error still
/// quotes it (it waits for stderr's end before it is composed).
#[test]
fn the_stderr_written_after_a_malformed_line_is_in_the_error() {
    let place = place();
    let program = stand_in(
        &place.home,
        "echo 'this is not json'\nsleep 0.05\necho 'written late' >&2",
    );
    let agent = ClaudeCode::new().program(program);
    let (request, _) = request("hi", &place);
    let err = rt().block_on(agent.send(request)).unwrap_err();
    assert!(
        err.message().starts_with("stdout line 1 is not JSON"),
        "{err}"
    );
    assert!(err.message().ends_with("written late"), "{err}");
}

#[test]
fn the_prompt_is_the_last_argument_and_runs_in_the_working_copy() {
    let place = place();
    let out = place.home.join("argv");
    let program = stand_in(
        &place.home,
        &format!(
            "pwd > {out}\nfor a in \"$@\"; do echo \"$a\" >> {out}; done\necho '{{\"type\":\"result\",\"subtype\":\"success\",\"is_error\":false,\"session_id\":\"s9\",\"result\":\"ok\",\"total_cost_usd\":0.5}}'",
            out = out.display()
        ),
    );
    let agent = ClaudeCode::new().program(program).model("sonnet");
    let rt = rt();
    let (first, sink) = request("--not-a-flag", &place);
    rt.block_on(agent.send(first)).unwrap();
    assert_eq!(Usage::from_events(&sink.snapshot()).cost_usd, Some(0.5));
    let (second, _) = request("again", &place);
    rt.block_on(agent.send(second)).unwrap();
    let argv = std::fs::read_to_string(&out).unwrap();
    let lines: Vec<&str> = argv.lines().collect();
    assert_eq!(lines[0], place.work.to_string_lossy());
    assert!(
        lines.ends_with(&["--resume", "s9", "--", "again"]),
        "{lines:?}"
    );
}

// ---- through #[eval(workspace = ..)]: the working copy, its diff and its tests ----

/// A crate whose test fails until `add` is fixed, the template of the workspace evals below.
fn todo_template(dir: &Path) {
    let write = |path: &str, text: &str| {
        let path = dir.join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    };
    write(
        "Cargo.toml",
        "[package]\nname = \"todo\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[workspace]\n",
    );
    write(".gitignore", "target/\nCargo.lock\n");
    write(
        "src/lib.rs",
        "pub fn add(a: i32, b: i32) -> i32 {\n    a + b + 1\n}\n\n#[cfg(test)]\nmod tests {\n    #[test]\n    fn adds() {\n        assert_eq!(super::add(2, 2), 4);\n    }\n}\n",
    );
}

/// Claude writes notes, runs the failing tests, reads and fixes `add`, runs them again, and
/// answers;
/// paths are absolute in the run's working copy, read from the prompt Claude Code sends.
fn fix_the_crate(c: &Conversation) -> Step {
    let Some(dir) = c.working_directory() else {
        return fail(400, "the fake found no working directory in the prompt");
    };
    let test = "cargo test --offline --quiet 2>&1 | tail -3; exit ${PIPESTATUS[0]}";
    match c.step() {
        0 => reply(vec![
            text("Let me look at the failing test."),
            tool(
                "Write",
                json!({"file_path": format!("{dir}/NOTES.md"), "content": "add() adds one too many\n"}),
            ),
        ]),
        1 => reply(vec![tool(
            "Bash",
            json!({"command": test, "description": "Run the tests"}),
        )]),
        // Claude Code edits only files it has read.
        2 => reply(vec![tool(
            "Read",
            json!({"file_path": format!("{dir}/src/lib.rs")}),
        )]),
        3 => reply(vec![tool(
            "Edit",
            json!({"file_path": format!("{dir}/src/lib.rs"), "old_string": "a + b + 1", "new_string": "a + b"}),
        )]),
        4 => reply(vec![tool(
            "Bash",
            json!({"command": test, "description": "Run the tests again"}),
        )]),
        _ => reply(vec![text("Fixed `add`: the tests pass.")]),
    }
}

/// The fake and the agent's environment of one eval-level test (the agent factory of a
/// definition is a plain `fn`, so it reads them from here).
struct EvalSetup {
    fake: FakeAnthropic,
    env: Vec<(String, String)>,
}

fn claude_for(setup: &'static std::sync::OnceLock<EvalSetup>) -> ClaudeCode {
    let setup = setup.get().expect("set up before the eval runs");
    let mut agent = ClaudeCode::new()
        .model("claude-sonnet-4-5")
        .timeout(Duration::from_secs(120));
    for (k, v) in &setup.env {
        agent = agent.env(k.clone(), v.clone());
    }
    let _ = &setup.fake;
    agent
}

fn fixes_the_crate(t: &mut niceeval::Eval) -> niceeval::__private::BoxFuture<'_, niceeval::Result> {
    Box::pin(async move {
        let turn = t.send("Make `cargo test` pass.").await?;
        t.file_created("NOTES.md");
        t.file_changed("src/lib.rs");
        turn.file_changed("src/lib.rs");
        t.not_in_diff("sk-ant");
        t.called_tool("Bash").count(2);
        t.called_tool("Edit")
            .input(json!({"old_string": "a + b + 1"}));
        t.check(
            t.workspace().diff().get("src/lib.rs"),
            niceeval::expect::includes("a + b\n"),
        );
        let tests = t.run_tests(["cargo", "test", "--offline"]).await?;
        assert_eq!((tests.passed(), tests.failed()), (1, 0));
        // The first run of the tests failed: this one is expected to fail.
        t.no_failed_shell_commands();
        t.max_tokens(1_000_000);
        Ok(())
    })
}

fn check_fixed(report: &niceeval::EvalReport) {
    assert!(report.error.is_none(), "{:#?}", report.error);
    let verdict = |name: &str| {
        report
            .assertions
            .iter()
            .find(|a| a.name == name)
            .map(|a| a.passed)
            .unwrap_or_else(|| panic!("no {name}: {:#?}", report.assertions))
    };
    assert!(verdict("file_created(\"NOTES.md\")"));
    assert!(verdict("file_changed(\"src/lib.rs\")"));
    assert!(verdict("turn 1: file_changed(\"src/lib.rs\")"));
    assert!(verdict("not_in_diff(\"sk-ant\")"));
    assert!(verdict("called_tool(\"Bash\").count(2)"));
    assert!(verdict("test tests::adds"));
    assert!(
        !verdict("no_failed_shell_commands()"),
        "the first test run failed"
    );
    let shell = report
        .assertions
        .iter()
        .find(|a| a.name == "no_failed_shell_commands()")
        .unwrap();
    assert!(shell.reason.contains("cargo test"), "{}", shell.reason);
    assert!(report.usage.total_tokens() > 0);
    assert!(
        report.cost_usd.is_some_and(|c| c > 0.0),
        "{:?}",
        report.cost_usd
    );
    if let Some(kept) = &report.runs[0].workspace {
        let _ = std::fs::remove_dir_all(Path::new(kept).parent().unwrap());
    }
}

#[test]
fn an_eval_with_a_workspace_scores_claude_by_its_diff_its_commands_and_the_tests() {
    if !have_claude() || !crate::scripts_support::have("cargo") {
        return;
    }
    static SETUP: std::sync::OnceLock<EvalSetup> = std::sync::OnceLock::new();
    let krate = crate::support::Crate::new("");
    todo_template(&krate.path().join("template"));
    let home = krate.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    let fake = FakeAnthropic::start(fix_the_crate);
    let env = environment(&fake, &home);
    let _ = SETUP.set(EvalSetup { fake, env });
    fn make() -> std::sync::Arc<dyn Agent> {
        std::sync::Arc::new(claude_for(&SETUP))
    }
    let def = crate::support::define("fixes_the_crate", &krate, fixes_the_crate)
        .with_workspace("template")
        .with_agent(make);
    let report = crate::support::run(def);
    check_fixed(&report);
    assert_eq!(SETUP.get().unwrap().fake.conversations().len(), 6);
}

fn fixes_then_resumes(
    t: &mut niceeval::Eval,
) -> niceeval::__private::BoxFuture<'_, niceeval::Result> {
    Box::pin(async move {
        fixes_the_crate(t).await?;
        // The session lives in the sandbox's private HOME, kept across turns.
        let again = t.send("Thanks! Anything else?").await?;
        again.diff_is_empty();
        Ok(())
    })
}

#[test]
fn claude_under_bubblewrap_works_in_the_copy_and_resumes_its_session() {
    if !have_claude() || !crate::scripts_support::have("cargo") {
        return;
    }
    if !crate::workspace::bwrap_works() {
        return;
    }
    static SETUP: std::sync::OnceLock<EvalSetup> = std::sync::OnceLock::new();
    // network = true: the fake model listens on the host's loopback.
    let krate =
        crate::support::Crate::new("[workspace]\nisolation = \"bubblewrap\"\nnetwork = true\n");
    todo_template(&krate.path().join("template"));
    let fake = FakeAnthropic::start(|c: &Conversation| {
        if c.user_text().contains("Anything else?") {
            // The resumed session still holds the first turn's conversation.
            if c.step() >= 5 {
                return reply(vec![text("No, all done.")]);
            }
            return fail(400, "the session was not resumed");
        }
        fix_the_crate(c)
    });
    // No HOME or CLAUDE_CONFIG_DIR: the sandbox gives the run a HOME of its own.
    let env = vec![
        ("ANTHROPIC_BASE_URL".to_string(), fake.url().to_string()),
        (
            "ANTHROPIC_API_KEY".to_string(),
            "sk-ant-fake-key-for-tests".to_string(),
        ),
        ("CLAUDE_CODE_MAX_RETRIES".to_string(), "0".to_string()),
    ];
    let _ = SETUP.set(EvalSetup { fake, env });
    fn make() -> std::sync::Arc<dyn Agent> {
        std::sync::Arc::new(claude_for(&SETUP))
    }
    let def = crate::support::define("fixes_then_resumes", &krate, fixes_then_resumes)
        .with_workspace("template")
        .with_agent(make);
    let report = crate::support::run(def);
    check_fixed(&report);
    let resumed = report
        .assertions
        .iter()
        .find(|a| a.name == "turn 2: diff_is_empty()")
        .expect("the second turn ran");
    assert!(resumed.passed, "{resumed:?}");
    assert_eq!(SETUP.get().unwrap().fake.conversations().len(), 7);
}

// ---- secrets and processes, against the real program ----

/// The key the secret tests give Claude Code; its Bash tool inherits it.
const SECRET_KEY: &str = "sk-ant-secret-0123456789abcdefghij";

/// Claude prints its environment through its Bash tool, writes the key into a file, then
/// answers quoting it.
fn prints_its_environment(c: &Conversation) -> Step {
    let Some(dir) = c.working_directory() else {
        return fail(400, "the fake found no working directory in the prompt");
    };
    match c.step() {
        0 => reply(vec![tool(
            "Bash",
            json!({
                "command": format!("printenv ANTHROPIC_API_KEY; printenv ANTHROPIC_API_KEY > {dir}/leak.txt"),
                "description": "Print the environment"
            }),
        )]),
        _ => reply(vec![text(&format!(
            "The key is {SECRET_KEY}, and it is in leak.txt."
        ))]),
    }
}

fn leaks_the_key(t: &mut niceeval::Eval) -> niceeval::__private::BoxFuture<'_, niceeval::Result> {
    Box::pin(async move {
        t.send("Show me your environment.").await?;
        // Assertions see the raw values.
        t.check(t.reply(), niceeval::expect::includes(SECRET_KEY));
        t.not_in_diff(SECRET_KEY);
        t.called_tool("Bash")
            .input(json!({ "description": "Print the environment" }));
        Ok(())
    })
}

#[test]
fn a_key_claude_code_prints_is_masked_in_every_report_and_file() {
    if !have_claude() {
        return;
    }
    static SETUP: std::sync::OnceLock<EvalSetup> = std::sync::OnceLock::new();
    let krate = crate::support::Crate::new("");
    std::fs::create_dir_all(krate.path().join("template")).unwrap();
    std::fs::write(krate.path().join("template/README.md"), "a project\n").unwrap();
    let home = krate.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    let fake = FakeAnthropic::start(prints_its_environment);
    let mut env = environment(&fake, &home);
    for (k, v) in &mut env {
        if k == "ANTHROPIC_API_KEY" {
            *v = SECRET_KEY.to_string();
        }
    }
    let _ = SETUP.set(EvalSetup { fake, env });
    fn make() -> std::sync::Arc<dyn Agent> {
        std::sync::Arc::new(claude_for(&SETUP))
    }
    let def = crate::support::define("leaks_the_key", &krate, leaks_the_key)
        .with_workspace("template")
        .with_agent(make);
    let report = crate::support::run(def);
    // The checks saw the key: the reply quotes it, and the diff has it.
    let verdict = |name: &str| {
        report
            .assertions
            .iter()
            .find(|a| a.name.starts_with(name))
            .map(|a| (a.passed, a.reason.clone()))
            .unwrap_or_else(|| panic!("no {name}: {:#?}", report.assertions))
    };
    assert!(verdict("includes(").0, "{:#?}", report.assertions);
    let (passed, reason) = verdict("not_in_diff(");
    assert!(!passed, "the diff holds the key: {reason}");
    assert!(reason.contains("at leak.txt:1"), "{reason}");
    // Nothing the report keeps holds it: events (the Bash output, the reply), reasons, the
    // rendered report, its JSON form (what the results file, JSONL, HTML and baselines are
    // made of) and the snapshot text.
    let json = serde_json::to_string(&report).unwrap();
    let rendered = report.render();
    for (what, text) in [("json", &json), ("rendered", &rendered)] {
        assert!(
            !text.contains(SECRET_KEY) && !text.contains("0123456789abcdefghij"),
            "the key leaked into the {what} report:\n{text}"
        );
    }
    assert!(json.contains("sk-a…[redacted]"), "{json}");
    assert!(rendered.contains("sk-a…[redacted]"), "{rendered}");
    let snapshot = niceeval::__private::snapshot_text(&report, krate.manifest_dir);
    assert!(!snapshot.contains(SECRET_KEY), "{snapshot}");
    if let Some(kept) = &report.runs[0].workspace {
        let _ = std::fs::remove_dir_all(Path::new(kept).parent().unwrap());
    }
}

/// A command that runs for 97 seconds, started by Claude Code's Bash tool (which gives each
/// command a session of its own): it writes its pid to `pidfile` as it starts, and its argument
/// `marker` finds it in `/proc`.
fn runs_a_long_command(
    marker: String,
    pidfile: &Path,
) -> impl Fn(&Conversation) -> Step + Send + Sync + 'static {
    // Claude Code refuses a standalone `sleep`; a program that waits is the same.
    let command = format!(
        "python3 -c 'import os, time; p = \"{pidfile}\"; open(p + \".tmp\", \"w\").write(str(os.getpid())); os.rename(p + \".tmp\", p); time.sleep(97)' {marker}",
        pidfile = pidfile.display()
    );
    move |c: &Conversation| match c.step() {
        0 => reply(vec![tool(
            "Bash",
            json!({
                "command": command,
                "description": "Wait a long time",
                "timeout": 600000
            }),
        )]),
        _ => reply(vec![text("Done waiting.")]),
    }
}

/// Processes whose command line holds `marker`.
fn processes_with(marker: &str) -> Vec<String> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let name = entry.file_name();
        if !name.to_string_lossy().chars().all(|c| c.is_ascii_digit()) {
            continue;
        }
        if let Ok(cmdline) = std::fs::read(entry.path().join("cmdline")) {
            let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
            if cmdline.contains(marker) {
                found.push(format!("{}: {cmdline}", name.to_string_lossy()));
            }
        }
    }
    found
}

#[test]
fn a_timed_out_turn_leaves_no_process_of_claude_codes_bash_tool_behind() {
    if !have_claude() {
        return;
    }
    let place = place();
    // An argument no other process has.
    let marker = format!("niceeval-long-command-{}", std::process::id());
    let pidfile = place.work.join("long-command.pid");
    let fake = FakeAnthropic::start(runs_a_long_command(marker.clone(), &pidfile));
    let timeout = Duration::from_secs(8);
    let agent = agent(&fake, &place.home).timeout(timeout);
    let (request, sink) = request("Wait for me.", &place);
    // The timeout fires once the long command runs (however long Claude Code took to start
    // and call its tool): it ends the CLI, the shell and the command, not a CLI still starting.
    let watched = pidfile.clone();
    let (outcome, started) =
        crate::support::time_out_once(move || watched.exists(), timeout, agent.send(request));
    let ended = std::time::Instant::now();
    let Some(started) = started else {
        panic!(
            "the long command did not start within {:?} (or the turn ended first: {outcome:?})\n{:#?}",
            crate::support::REACH_LIMIT,
            sink.snapshot()
        );
    };
    assert!(
        outcome.is_err(),
        "the turn timed out: {outcome:?}\n{:#?}",
        sink.snapshot()
    );
    // Cut short: the command alone runs 97 s.
    assert!(
        ended - started < Duration::from_secs(60),
        "the turn ended {:?} after the command started",
        ended - started
    );
    // The command started (the fake asked for it and Claude ran it) ...
    let called = sink
        .snapshot()
        .into_iter()
        .any(|e| matches!(e, Event::ActionCalled { ref name, .. } if name == "Bash"));
    assert!(
        called,
        "Claude Code ran the Bash tool: {:#?}",
        sink.snapshot()
    );
    // ... and after the timeout nothing of it runs: not the CLI, not the shell, not the
    // command (whose pid it wrote).
    assert!(
        crate::scripts_support::ended(&pidfile),
        "the long command outlived the turn"
    );
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    loop {
        let left = processes_with(&marker);
        if left.is_empty() {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "processes of the timed-out turn are still running: {left:#?}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Claude Code with its telemetry on, against niceeval's receiver: what it sends (log events
/// per API request and per tool result; metrics, which the receiver accepts and ignores) and
/// which checks it feeds (tool calls and usage through the log events).
#[cfg(feature = "otel")]
#[test]
fn telemetry_logs_reach_the_run_as_tool_and_usage_events() {
    if !have_claude() {
        return;
    }
    use niceeval::__workspace::trace;
    let place = place();
    prepare(&place.work);
    let fake = FakeAnthropic::start(parallel(&place.work));
    let run = trace::Run::start();
    let endpoint = trace::endpoint().unwrap();
    let out = std::process::Command::new("claude")
        .args([
            "-p",
            "--output-format",
            "stream-json",
            "--verbose",
            "--model",
            "claude-sonnet-4-5",
            "--permission-mode",
            "bypassPermissions",
            "--",
            "Say one and two",
        ])
        .current_dir(&place.work)
        .envs(environment(&fake, &place.home))
        .env("IS_SANDBOX", "1")
        .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
        .env("CLAUDE_CODE_ENABLE_TELEMETRY", "1")
        .env("CLAUDE_CODE_ENHANCED_TELEMETRY_BETA", "1")
        .env("OTEL_LOGS_EXPORTER", "otlp")
        .env("OTEL_METRICS_EXPORTER", "otlp")
        .env("OTEL_TRACES_EXPORTER", "otlp")
        .env("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf")
        .env("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint)
        .env("OTEL_LOGS_EXPORT_INTERVAL", "100")
        .env("OTEL_METRIC_EXPORT_INTERVAL", "100")
        .env("OTEL_BSP_SCHEDULE_DELAY", "100")
        .env("TRACEPARENT", run.turn())
        .env(
            "OTEL_RESOURCE_ATTRIBUTES",
            format!("niceeval.trace_id={}", run.trace_id()),
        )
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // Logs are exported on their interval; the process flushed at exit, but give a late batch
    // a moment.
    std::thread::sleep(Duration::from_millis(500));
    let normalized = rt().block_on(run.events());
    let received: Vec<&serde_json::Value> = normalized
        .iter()
        .filter_map(|e| match e {
            Event::Custom { name, data } if name.starts_with("otel.") => Some(data),
            _ => None,
        })
        .collect();
    let operation = |op: &str| {
        received
            .iter()
            .filter(|s| s["attributes"]["gen_ai.operation.name"] == op)
            .count()
    };
    let logs = |name: &str| {
        received
            .iter()
            .filter(|s| s["attributes"]["log.body"] == format!("claude_code.{name}"))
            .count()
    };
    let dump = || {
        received
            .iter()
            .map(|s| s["name"].to_string())
            .collect::<Vec<_>>()
            .join(", ")
    };
    // Traces (CLAUDE_CODE_ENHANCED_TELEMETRY_BETA): an interaction span, a chat span per API
    // request and an execute_tool span per tool call, joined to the eval's trace from
    // TRACEPARENT.
    assert_eq!(operation("chat"), 2, "{}", dump());
    assert_eq!(operation("execute_tool"), 2, "{}", dump());
    assert!(operation("invoke_agent") >= 1, "{}", dump());
    // Logs: an api_request per request (tokens, cost), a tool_result per tool call.
    assert_eq!(logs("api_request"), 2, "{}", dump());
    assert_eq!(logs("tool_result"), 2, "{}", dump());
    // Normalized: two Bash calls with Claude Code's own call ids (so the adapter's events and
    // the trace's are one), and each request's tokens once.
    let calls: Vec<(String, String)> = normalized
        .iter()
        .filter_map(|e| match e {
            Event::ActionCalled { call_id, name, .. } => Some((call_id.clone(), name.clone())),
            _ => None,
        })
        .collect();
    assert_eq!(
        calls,
        [
            ("toolu_fake_001_0".to_string(), "Bash".to_string()),
            ("toolu_fake_001_1".to_string(), "Bash".to_string())
        ],
        "{normalized:#?}"
    );
    let usage = Usage::from_events(&normalized);
    // The chat spans' gen_ai.usage.input_tokens include the cached tokens (as niceeval's
    // input_tokens do); the api_request logs repeat them and are not counted again.
    assert_eq!(
        usage.input_tokens,
        2 * (INPUT_TOKENS + CACHE_READ_TOKENS + CACHE_CREATION_TOKENS),
        "{normalized:#?}"
    );
}
