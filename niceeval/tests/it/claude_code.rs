//! The Claude Code adapter against the real `claude` program (pinned by
//! `scripts/install-claude-code.sh`), talking to a loopback fake of the Anthropic Messages API
//! whose scripted replies make it call its real tools in a temporary working copy.
//!
//! `NICEEVAL_RECORD_CLAUDE_CODE=1 cargo test -p niceeval --test it claude_code::record` rewrites
//! the recorded streams of `tests/data/claude_code/` that the parser tests read.
#![cfg(unix)]

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::json;

use niceeval::agent::claude_code::ClaudeCode;
use niceeval::agent::{Agent, EventSink, Request};
use niceeval::workspace::{Isolation, Sandbox};
use niceeval::{ActionStatus, Event, Usage};

use crate::support::fake_anthropic::{
    CACHE_CREATION_TOKENS, CACHE_READ_TOKENS, Conversation, FakeAnthropic, INPUT_TOKENS, Step,
    fail, reply, text, thinking, tool,
};

fn rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

/// Whether `claude` is installed. Under CI a missing program fails the test; elsewhere it prints
/// a notice and the caller skips.
fn have_claude() -> bool {
    let ok = std::process::Command::new("claude")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        let in_ci = std::env::var_os("CI").is_some_and(|v| !v.is_empty() && v != "false");
        assert!(
            !in_ci,
            "the Claude Code tests need `claude` under CI; install it with `bash scripts/install-claude-code.sh`"
        );
        use std::io::Write;
        let _ = writeln!(
            std::io::stderr(),
            "NOTICE: skipping: `claude` is not installed (bash scripts/install-claude-code.sh)"
        );
    }
    ok
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
            tool("Bash", json!({"command": "echo one", "description": "Say one"})),
            tool("Bash", json!({"command": "echo two", "description": "Say two"})),
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
/// `tests/data/claude_code/`. Only with `NICEEVAL_RECORD_CLAUDE_CODE=1`; the working copies sit at
/// fixed paths so the recordings do not change with temporary directory names.
#[test]
fn record() {
    if std::env::var_os("NICEEVAL_RECORD_CLAUDE_CODE").is_none() || !have_claude() {
        return;
    }
    let out = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/claude_code");
    std::fs::create_dir_all(&out).unwrap();
    let base = PathBuf::from("/tmp/niceeval-claude-code");
    let _ = std::fs::remove_dir_all(&base);
    type Script = Box<dyn Fn(&Conversation) -> Step + Send + Sync>;
    let scenarios: Vec<(&str, fn(&Path) -> Script, &str, &[&str])> = vec![
        ("tool_error", |d| Box::new(tool_error(d)), "Greet the world in greeting.txt.", &[]),
        ("parallel", |d| Box::new(parallel(d)), "Say one and two.", &[]),
        ("subagent", |d| Box::new(subagent(d)), "Delegate the echo.", &[]),
        ("skill", |d| Box::new(skill(d)), "Use the greeting skill.", &[]),
        ("aborted", |d| Box::new(aborted(d)), "This will fail.", &[]),
        ("max_turns", |d| Box::new(parallel(d)), "Say one and two.", &["--max-turns", "1"]),
    ];
    for (name, script, prompt, extra) in scenarios {
        let dir = base.join(name);
        let home = base.join(format!("{name}-home"));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::create_dir_all(&home).unwrap();
        prepare(&dir);
        let fake = FakeAnthropic::start(script(&dir));
        let output = std::process::Command::new("claude")
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
            .current_dir(&dir)
            .envs(environment(&fake, &home))
            .env("IS_SANDBOX", "1")
            .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
            .output()
            .unwrap();
        eprintln!(
            "recorded {name}: exit {:?}, stderr: {}",
            output.status.code(),
            String::from_utf8_lossy(&output.stderr)
        );
        std::fs::write(out.join(format!("{name}.jsonl")), &output.stdout).unwrap();
    }
}
