//! The Codex adapter's stream mapping over streams recorded from the real `codex exec --json`
//! (`tests/data/codex/*.jsonl`, recorded by the `codex` integration tests), hand-written
//! frames for what the recordings lack, and its settings and command line.

use std::time::Duration;

use serde_json::{Value, json};

use super::stream::{Stream, Totals};
use super::*;
use crate::agents::agent::EventSink;
use crate::base::event::{ActionKind, ActionStatus, Event};

const FIX: &str = include_str!("../../../../tests/data/codex/fix.jsonl");
const PARALLEL: &str = include_str!("../../../../tests/data/codex/parallel.jsonl");
const FAILED: &str = include_str!("../../../../tests/data/codex/failed.jsonl");
const NOTICE: &str = include_str!("../../../../tests/data/codex/notice.jsonl");
const RESUME: &str = include_str!("../../../../tests/data/codex/resume.jsonl");
const RESUME_2: &str = include_str!("../../../../tests/data/codex/resume-2.jsonl");
const NEW_SESSION: &str = include_str!("../../../../tests/data/codex/new-session.jsonl");

/// What reading a whole stream gives.
struct Parsed {
    events: Vec<Event>,
    outcome: Result<(), String>,
    thread: Option<String>,
    totals: Option<Totals>,
}

fn parse_after(text: &str, before: Totals) -> Parsed {
    let sink = EventSink::default();
    let mut stream = Stream::new(Some("gpt-5.5"), before);
    let mut outcome = Ok(());
    for (i, line) in text.split('\n').enumerate() {
        if let Err(e) = stream.line(line.as_bytes(), i + 1, &sink) {
            outcome = Err(e.to_string());
            break;
        }
    }
    Parsed {
        events: sink.snapshot(),
        outcome: outcome.and_then(|()| stream.finish().map_err(|e| e.to_string())),
        thread: stream.thread_id().map(str::to_string),
        totals: stream.totals(),
    }
}

fn parse(text: &str) -> Parsed {
    parse_after(text, Totals::default())
}

fn called(call_id: &str, name: &str, input: Value) -> Event {
    Event::ActionCalled {
        call_id: call_id.into(),
        name: name.into(),
        input,
    }
}

fn result(call_id: &str, output: Value, status: ActionStatus) -> Event {
    Event::ActionResult {
        call_id: call_id.into(),
        output,
        status,
    }
}

fn usage(input: u64, cached: u64, output: u64) -> Event {
    Event::Usage {
        input_tokens: input,
        output_tokens: output,
        cache_read_tokens: cached,
        cost_usd: None,
        model: Some("openai/gpt-5.5".into()),
    }
}

#[test]
fn recorded_fix_write_fail_fix_answer() {
    let parsed = parse(FIX);
    let path = "/tmp/.tmpDjfCWQ/greeting.txt";
    assert_eq!(
        parsed.events,
        vec![
            Event::Thinking {
                text: "Write the file, then check it.".into()
            },
            called(
                "item_1.0",
                "file_change",
                json!({"path": path, "kind": "add"})
            ),
            result(
                "item_1.0",
                json!({"status": "completed"}),
                ActionStatus::Completed
            ),
            called(
                "item_2",
                "command_execution",
                json!({"command": "/bin/bash -c 'grep -q hello greeting.txt'"})
            ),
            result(
                "item_2",
                json!({"exit_code": 1, "output": ""}),
                ActionStatus::Failed
            ),
            called(
                "item_3.0",
                "file_change",
                json!({"path": path, "kind": "update"})
            ),
            result(
                "item_3.0",
                json!({"status": "completed"}),
                ActionStatus::Completed
            ),
            called(
                "item_4",
                "command_execution",
                json!({"command": "/bin/bash -c 'grep hello greeting.txt'"})
            ),
            result(
                "item_4",
                json!({"exit_code": 0, "output": "hello\n"}),
                ActionStatus::Completed
            ),
            Event::assistant("greeting.txt now says hello."),
            // Five model calls of 1000 input tokens (400 of them cached) and 50 output tokens:
            // the cached tokens are part of the input, counted once.
            usage(5000, 2000, 250),
        ]
    );
    assert_eq!(parsed.outcome, Ok(()));
    assert_eq!(
        parsed.thread.as_deref(),
        Some("01a20fde-978b-72f2-969f-01c63fe57440")
    );
    let kinds: Vec<ActionKind> = parsed
        .events
        .iter()
        .filter_map(|e| match e {
            Event::ActionCalled { name, input, .. } => Some(ActionKind::of(name, input)),
            _ => None,
        })
        .collect();
    assert_eq!(
        kinds,
        [
            ActionKind::FileWrite,
            ActionKind::Shell,
            ActionKind::FileEdit,
            ActionKind::Shell
        ]
    );
}

#[test]
fn recorded_parallel_calls_pair_by_item_id() {
    let parsed = parse(PARALLEL);
    let two = json!({"command": "/bin/bash -c 'sleep 0.5; echo two'"});
    let one = json!({"command": "/bin/bash -c 'sleep 0.5; echo one'"});
    assert_eq!(
        parsed.events,
        vec![
            called("item_0", "command_execution", two),
            called("item_1", "command_execution", one),
            result(
                "item_1",
                json!({"exit_code": 0, "output": "one\n"}),
                ActionStatus::Completed
            ),
            result(
                "item_0",
                json!({"exit_code": 0, "output": "two\n"}),
                ActionStatus::Completed
            ),
            Event::assistant("Both ran."),
            usage(2000, 800, 100),
        ]
    );
    assert_eq!(parsed.outcome, Ok(()));
}

#[test]
fn recorded_failed_response_fails_the_turn_with_codex_message() {
    let parsed = parse(FAILED);
    assert_eq!(
        parsed.events,
        vec![Event::Custom {
            name: "codex:error".into(),
            data: json!({"type": "error", "message": "The fake model refuses."}),
        }]
    );
    assert_eq!(
        parsed.outcome,
        Err("codex: the turn failed: The fake model refuses.".to_string())
    );
    // The thread exists even though its turn failed.
    assert!(parsed.thread.is_some());
    assert_eq!(parsed.totals, None);
}

#[test]
fn recorded_notice_item_is_kept_and_does_not_fail_the_turn() {
    let parsed = parse(NOTICE);
    assert_eq!(parsed.events.len(), 3, "{:#?}", parsed.events);
    assert!(matches!(
        &parsed.events[0],
        Event::Custom { name, data } if name == "codex:error"
            && data["type"] == "error"
            && data["message"].as_str().is_some_and(|m| m.contains("niceeval-unknown-model"))
    ));
    assert_eq!(parsed.events[1], Event::assistant("Done."));
    assert_eq!(parsed.events[2], usage(1000, 400, 50));
    assert_eq!(parsed.outcome, Ok(()));
}

#[test]
fn recorded_resume_counts_only_the_resumed_turn() {
    let first = parse(RESUME);
    assert_eq!(
        first.events,
        vec![Event::assistant("Noted."), usage(1000, 400, 50)]
    );
    let totals = first.totals.expect("totals");
    let second = parse_after(RESUME_2, totals);
    assert_eq!(second.thread, first.thread, "resume keeps the thread");
    // Codex reports the thread's totals (2000 / 800 / 100): the turn spent the difference.
    assert_eq!(
        second.events,
        vec![Event::assistant("apricot"), usage(1000, 400, 50)]
    );
    assert_eq!(
        second.totals,
        Some(Totals {
            input: 2000,
            cached: 800,
            output: 100
        })
    );
    let fresh = parse(NEW_SESSION);
    assert_ne!(fresh.thread, first.thread);
    assert_eq!(fresh.events[0], Event::assistant("I do not know"));
}

#[test]
fn every_recorded_stream_parses_without_custom_surprises() {
    for (name, text) in [
        ("fix", FIX),
        ("parallel", PARALLEL),
        ("failed", FAILED),
        ("notice", NOTICE),
        ("resume", RESUME),
        ("resume-2", RESUME_2),
        ("new-session", NEW_SESSION),
    ] {
        let parsed = parse(text);
        assert!(parsed.thread.is_some(), "{name}: no thread id");
        for event in &parsed.events {
            if let Event::Custom { name: custom, .. } = event {
                assert_eq!(custom, "codex:error", "{name}: unexpected {event:?}");
            }
        }
    }
}

fn lines(frames: &[Value]) -> String {
    frames
        .iter()
        .map(Value::to_string)
        .collect::<Vec<_>>()
        .join("\n")
}

const COMPLETED: &str = r#"{"type":"turn.completed","usage":{"input_tokens":10,"cached_input_tokens":0,"output_tokens":2}}"#;

#[test]
fn mcp_calls_name_server_and_tool_and_fail_on_error() {
    let text = lines(&[
        json!({"type":"item.started","item":{"id":"item_0","type":"mcp_tool_call","server":"github","tool":"create_issue","arguments":{"title":"Bug"},"result":null,"error":null,"status":"in_progress"}}),
        json!({"type":"item.completed","item":{"id":"item_0","type":"mcp_tool_call","server":"github","tool":"create_issue","arguments":{"title":"Bug"},"result":{"content":[{"type":"text","text":"#12"}],"structured_content":null},"error":null,"status":"completed"}}),
        json!({"type":"item.completed","item":{"id":"item_1","type":"mcp_tool_call","server":"db","tool":"query","arguments":{"sql":"select"},"result":null,"error":{"message":"denied"},"status":"failed"}}),
    ]) + "\n"
        + COMPLETED;
    let parsed = parse(&text);
    assert_eq!(
        parsed.events[..4],
        [
            called(
                "item_0",
                "mcp__github__create_issue",
                json!({"title": "Bug"})
            ),
            result(
                "item_0",
                json!({"content": [{"type": "text", "text": "#12"}], "structured_content": null}),
                ActionStatus::Completed
            ),
            called("item_1", "mcp__db__query", json!({"sql": "select"})),
            result("item_1", json!({"error": "denied"}), ActionStatus::Failed),
        ]
    );
}

#[test]
fn file_changes_are_one_action_per_file_and_declined_commands_are_rejected() {
    let text = lines(&[
        json!({"type":"item.completed","item":{"id":"item_0","type":"file_change","changes":[{"path":"a.rs","kind":"add"},{"path":"b.rs","kind":"delete"}],"status":"failed"}}),
        json!({"type":"item.completed","item":{"id":"item_1","type":"command_execution","command":"rm -rf /","aggregated_output":"","exit_code":null,"status":"declined"}}),
        json!({"type":"item.updated","item":{"id":"item_2","type":"command_execution","command":"make","aggregated_output":"","exit_code":null,"status":"in_progress"}}),
        json!({"type":"item.completed","item":{"id":"item_2","type":"command_execution","command":"make","aggregated_output":"ok","exit_code":0,"status":"completed"}}),
    ]) + "\n"
        + COMPLETED;
    let parsed = parse(&text);
    assert_eq!(
        parsed.events[..8],
        [
            called(
                "item_0.0",
                "file_change",
                json!({"path": "a.rs", "kind": "add"})
            ),
            result(
                "item_0.0",
                json!({"status": "failed"}),
                ActionStatus::Failed
            ),
            called(
                "item_0.1",
                "file_change",
                json!({"path": "b.rs", "kind": "delete"})
            ),
            result(
                "item_0.1",
                json!({"status": "failed"}),
                ActionStatus::Failed
            ),
            called(
                "item_1",
                "command_execution",
                json!({"command": "rm -rf /"})
            ),
            result(
                "item_1",
                json!({"exit_code": null, "output": ""}),
                ActionStatus::Rejected
            ),
            called("item_2", "command_execution", json!({"command": "make"})),
            result(
                "item_2",
                json!({"exit_code": 0, "output": "ok"}),
                ActionStatus::Completed
            ),
        ]
    );
    assert_eq!(
        ActionKind::of("file_change", &json!({"path": "b.rs", "kind": "delete"})),
        ActionKind::FileDelete
    );
}

#[test]
fn unknown_frames_and_items_are_custom_events_never_errors() {
    let text = lines(&[
        json!({"type":"item.started","item":{"id":"item_0","type":"todo_list","items":[{"text":"a","completed":false}]}}),
        json!({"type":"item.updated","item":{"id":"item_0","type":"todo_list","items":[{"text":"a","completed":true}]}}),
        json!({"type":"item.completed","item":{"id":"item_0","type":"todo_list","items":[{"text":"a","completed":true}]}}),
        json!({"type":"item.plan.delta","item_id":"item_1","delta":"step"}),
        json!({"type":"item.completed","item":{"id":"item_2","type":"hologram","beam":1}}),
        json!({"type":"item.started","item":{"id":"item_3","type":"web_search","query":"rust"}}),
        json!({"type":"item.completed","item":{"id":"item_3","type":"web_search","query":"rust","action":{"type":"search"}}}),
    ]) + "\n"
        + COMPLETED;
    let parsed = parse(&text);
    assert_eq!(
        parsed.events[..6],
        [
            Event::Custom {
                name: "codex:todo_list".into(),
                data: json!({"id":"item_0","type":"todo_list","items":[{"text":"a","completed":true}]}),
            },
            Event::Custom {
                name: "codex:item.plan.delta".into(),
                data: json!({"type":"item.plan.delta","item_id":"item_1","delta":"step"}),
            },
            Event::Custom {
                name: "codex:hologram".into(),
                data: json!({"id":"item_2","type":"hologram","beam":1}),
            },
            called(
                "item_3",
                "web_search",
                json!({"query": "rust", "action": null})
            ),
            result("item_3", Value::Null, ActionStatus::Completed),
            Event::Usage {
                input_tokens: 10,
                output_tokens: 2,
                cache_read_tokens: 0,
                cost_usd: None,
                model: Some("openai/gpt-5.5".into()),
            },
        ]
    );
    assert_eq!(parsed.outcome, Ok(()));
}

#[test]
fn malformed_lines_fail_the_turn_naming_the_line() {
    let text = format!("{{\"type\":\"turn.started\"}}\n\nnot json\n{COMPLETED}");
    let parsed = parse(&text);
    let err = parsed.outcome.unwrap_err();
    assert!(err.starts_with("codex stdout line 3 is not JSON"), "{err}");
    assert!(err.contains("not json"), "{err}");
    let parsed = parse("{\"kind\":\"x\"}");
    let err = parsed.outcome.unwrap_err();
    assert!(
        err.starts_with("codex stdout line 1 is not a codex event (no \"type\")"),
        "{err}"
    );
}

#[test]
fn retried_errors_do_not_fail_a_completed_turn_but_end_an_unfinished_one() {
    let retried = format!(
        "{}\n{COMPLETED}",
        json!({"type":"error","message":"Reconnecting... 1/5"})
    );
    assert_eq!(parse(&retried).outcome, Ok(()));
    let cut = json!({"type":"error","message":"stream disconnected"}).to_string();
    assert_eq!(
        parse(&cut).outcome,
        Err("codex: stream disconnected".to_string())
    );
    assert_eq!(
        parse("{\"type\":\"turn.started\"}").outcome,
        Err("codex ended without finishing the turn (no `turn.completed`)".to_string())
    );
    let no_message = parse("{\"type\":\"turn.failed\",\"error\":{}}");
    assert_eq!(
        no_message.outcome,
        Err("codex: the turn failed: the turn failed".to_string())
    );
}

#[test]
fn usage_names_the_model_and_counts_afresh_when_totals_go_down() {
    let sink = EventSink::default();
    let before = Totals {
        input: 5000,
        cached: 0,
        output: 10,
    };
    let mut stream = Stream::new(Some("azure/gpt-5"), before);
    stream
        .line(COMPLETED.as_bytes(), 1, &sink)
        .expect("a frame");
    assert_eq!(
        sink.snapshot(),
        [Event::Usage {
            input_tokens: 10,
            output_tokens: 2,
            cache_read_tokens: 0,
            cost_usd: None,
            model: Some("azure/gpt-5".into()),
        }]
    );
    let sink = EventSink::default();
    let mut stream = Stream::new(None, Totals::default());
    stream
        .line(COMPLETED.as_bytes(), 1, &sink)
        .expect("a frame");
    assert!(matches!(
        &sink.snapshot()[0],
        Event::Usage { model: None, .. }
    ));
}

#[test]
fn command_line_for_a_new_and_a_resumed_thread() {
    let agent = Codex::new()
        .model("gpt-5.5")
        .config("model_reasoning_effort", "low")
        .config("sandbox_workspace_write", {
            let mut table = toml::map::Map::new();
            table.insert("network_access".into(), toml::Value::Boolean(true));
            toml::Value::Table(table)
        })
        .config("retries", 3)
        .args(["--ephemeral"]);
    assert_eq!(
        agent.arguments(None, agent.sandbox_for(None)),
        [
            "exec",
            "--json",
            "--skip-git-repo-check",
            "--model",
            "gpt-5.5",
            "-c",
            "sandbox_mode=\"workspace-write\"",
            "-c",
            "approval_policy=\"never\"",
            "-c",
            "model_reasoning_effort=\"low\"",
            "-c",
            "sandbox_workspace_write={network_access=true}",
            "-c",
            "retries=3",
            "--ephemeral",
            "-",
        ]
    );
    let resumed = Codex::new()
        .sandbox(SandboxMode::DangerFullAccess)
        .approval_policy(ApprovalPolicy::OnFailure);
    let resumed = resumed.arguments(Some("thread-1"), resumed.sandbox_for(None));
    assert_eq!(
        resumed,
        [
            "exec",
            "resume",
            "--json",
            "--skip-git-repo-check",
            "-c",
            "sandbox_mode=\"danger-full-access\"",
            "-c",
            "approval_policy=\"on-failure\"",
            "thread-1",
            "-",
        ]
    );
}

#[test]
fn the_default_sandbox_follows_the_workspace_isolation() {
    use crate::config::Isolation;
    use crate::resources::workspace::Sandbox;
    let local = Sandbox::new("/w", Isolation::Local, true);
    let wrapped = Sandbox::new("/w", Isolation::Bubblewrap, true);
    let agent = Codex::new();
    assert_eq!(agent.sandbox_for(None), SandboxMode::WorkspaceWrite);
    assert_eq!(agent.sandbox_for(Some(&local)), SandboxMode::WorkspaceWrite);
    assert_eq!(
        agent.sandbox_for(Some(&wrapped)),
        SandboxMode::DangerFullAccess
    );
    let chosen = Codex::new().sandbox(SandboxMode::ReadOnly);
    assert_eq!(chosen.sandbox_for(Some(&wrapped)), SandboxMode::ReadOnly);
}

/// The Codex agent `[agent]` describes, or the error reading it.
fn from_toml(text: &str) -> Result<Codex, String> {
    let config =
        crate::config::Config::parse(&format!("[agent]\ntype = \"codex\"\n{text}"), "n.toml")
            .map_err(|e| e.to_string())?;
    match config.agent {
        Some(crate::config::AgentConfig::Codex(settings)) => Ok(from_config(&settings)),
        other => panic!("{other:?}"),
    }
}

#[test]
fn settings_are_validated() {
    let agent = from_toml(
        "model = \"gpt-5.5\"\nsandbox = \"read-only\"\napproval_policy = \"on-request\"\n\
         timeout = \"90s\"\nprogram = \"/opt/codex\"\nargs = [\"--ephemeral\"]\n\
         config = { effort = \"low\" }\n",
    )
    .expect("valid settings");
    assert_eq!(agent.model.as_deref(), Some("gpt-5.5"));
    assert_eq!(agent.sandbox, Some(SandboxMode::ReadOnly));
    assert_eq!(agent.approval, ApprovalPolicy::OnRequest);
    assert_eq!(agent.process.timeout, Duration::from_secs(90));
    assert_eq!(agent.process.program, "/opt/codex");
    assert_eq!(agent.process.args, ["--ephemeral"]);
    assert_eq!(
        agent.config,
        [("effort".to_string(), "\"low\"".to_string())]
    );

    let err = |text: &str| from_toml(text).unwrap_err();
    assert_eq!(
        err("sandbox = \"yolo\""),
        "n.toml:3:11: [agent] sandbox: \"yolo\" is not a Codex sandbox mode; valid: \"read-only\", \"workspace-write\", \"danger-full-access\""
    );
    assert!(err("approval_policy = \"sometimes\"").contains("not a Codex approval policy"));
    assert!(err("config = \"x\"").starts_with("n.toml:3:10: [agent] config: "));
    assert!(err("args = \"--x\"").starts_with("n.toml:3:8: [agent] args: "));
    assert!(err("args = \"--x\"").contains("expected an array of strings"));
    assert!(err("timeout = \"soon\"").starts_with("n.toml:3:11: [agent] timeout: "));
    assert!(
        err("modle = \"x\"")
            .starts_with("n.toml:3:1: [agent] modle: unknown key `modle`; did you mean `model`?")
    );
}

#[test]
fn the_config_names_are_codex_names() {
    let modes = [
        SandboxMode::ReadOnly,
        SandboxMode::WorkspaceWrite,
        SandboxMode::DangerFullAccess,
    ]
    .map(SandboxMode::as_str);
    assert_eq!(modes, crate::config::CODEX_SANDBOX_MODES);
    let policies = [
        ApprovalPolicy::Untrusted,
        ApprovalPolicy::OnFailure,
        ApprovalPolicy::OnRequest,
        ApprovalPolicy::Never,
    ]
    .map(ApprovalPolicy::as_str);
    assert_eq!(policies, crate::config::CODEX_APPROVAL_POLICIES);
}
