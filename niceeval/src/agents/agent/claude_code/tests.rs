//! The stream mapping over streams recorded from the real `claude` (2.1.331) against the
//! loopback fake of the Messages API (`tests/data/claude_code/`, rewritten by
//! `NICEEVAL_RECORD_CLAUDE_CODE=1 cargo test -p niceeval --test it claude_code::record`), and the
//! command line and settings.

use std::time::Duration;

use super::stream::{Ending, Stream};
use super::*;
use crate::base::event::{Event, Usage};

/// Every event of a recorded stream, plus the finished stream state.
fn parse(name: &str) -> (Vec<Event>, Stream) {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/claude_code")
        .join(format!("{name}.jsonl"));
    let text = std::fs::read_to_string(&path).expect("a recorded stream");
    let mut stream = Stream::default();
    let mut events = Vec::new();
    for (i, line) in text.lines().enumerate() {
        events.extend(stream.line(line, i + 1).expect("a well-formed frame"));
    }
    events.extend(stream.finish());
    (events, stream)
}

/// One line per event, the parts that matter.
fn render(events: &[Event]) -> Vec<String> {
    events
        .iter()
        .map(|event| match event {
            Event::Message { role, text } => format!("message {role:?}: {text}"),
            Event::ActionCalled { call_id, name, input } => {
                let detail = input
                    .get("command")
                    .or_else(|| input.get("file_path"))
                    .and_then(|v| v.as_str())
                    .unwrap_or("");
                format!("action.called {call_id} {name} {detail}")
            }
            Event::ActionResult {
                call_id,
                output,
                status,
            } => format!(
                "action.result {call_id} {status:?}: {}",
                output.as_str().map_or_else(|| output.to_string(), str::to_string)
            ),
            Event::SubagentCalled { call_id, name, .. } => {
                format!("subagent.called {call_id} {name}")
            }
            Event::SubagentCompleted { call_id, status } => {
                format!("subagent.completed {call_id} {status:?}")
            }
            Event::SkillLoaded { name } => format!("skill.loaded {name}"),
            Event::Thinking { text } => format!("thinking: {text}"),
            Event::Error { message } => format!("error: {message}"),
            Event::Usage {
                input_tokens,
                output_tokens,
                cache_read_tokens,
                cost_usd,
                model,
            } => format!(
                // Costs to 9 decimals: serde_json's float parsing may differ in the last bit
                // with and without its `float_roundtrip` feature (on through other crates).
                "usage in={input_tokens} out={output_tokens} cache_read={cache_read_tokens} cost={} model={}",
                cost_usd.map_or("-".to_string(), |c| format!("{c:.9}")),
                model.as_deref().unwrap_or("-")
            ),
            Event::Custom { name, .. } => format!("custom {name}"),
            other => format!("{other:?}"),
        })
        .collect()
}

const SESSION: &str = "session_id";

#[test]
fn a_failed_command_is_a_failed_action_and_the_fix_follows() {
    let (events, stream) = parse("tool_error");
    let file = "/tmp/niceeval-claude-code/tool_error/greeting.txt";
    assert_eq!(
        render(&events),
        [
            "custom claude-code:system:thinking_tokens".to_string(),
            "thinking: I will write the greeting, then check it.".to_string(),
            "message Assistant: Writing the greeting.".to_string(),
            format!("action.called toolu_fake_001_2 Write {file}"),
            format!(
                "action.result toolu_fake_001_2 Completed: File created successfully at: {file} (file state is current in your context — no need to Read it back)"
            ),
            "action.called toolu_fake_002_0 Bash grep -q world greeting.txt || exit 3".to_string(),
            "action.result toolu_fake_002_0 Failed: Exit code 3".to_string(),
            format!("action.called toolu_fake_003_0 Edit {file}"),
            format!(
                "action.result toolu_fake_003_0 Completed: The file {file} has been updated successfully. (file state is current in your context — no need to Read it back)"
            ),
            "action.called toolu_fake_004_0 Bash grep -q world greeting.txt || exit 3".to_string(),
            "action.result toolu_fake_004_0 Completed: (Bash completed with no output)".to_string(),
            "message Assistant: greeting.txt now says hello world.".to_string(),
            // Five messages of 40 input + 20 cache-write + 300 cache-read tokens.
            "usage in=1800 out=49 cache_read=1500 cost=0.002160000 model=anthropic/claude-sonnet-4-5".to_string(),
        ]
    );
    assert_eq!(stream.ending(), Some(&Ending::Success));
    assert!(
        stream.session_id().is_some_and(|s| s.len() == 36),
        "{SESSION}"
    );
    let usage = Usage::from_events(&events);
    assert_eq!(usage.cost_usd, Some(0.0021600000000000005));
    // Claude's names are kept; the kinds normalize them.
    let kinds: Vec<_> = events
        .iter()
        .filter_map(|e| match e {
            Event::ActionCalled { name, input, .. } => {
                Some(crate::base::event::ActionKind::of(name, input))
            }
            _ => None,
        })
        .collect();
    assert_eq!(
        kinds,
        [
            crate::base::event::ActionKind::FileWrite,
            crate::base::event::ActionKind::Shell,
            crate::base::event::ActionKind::FileEdit,
            crate::base::event::ActionKind::Shell,
        ]
    );
}

#[test]
fn parallel_calls_pair_with_their_results_in_any_order() {
    let (events, _) = parse("parallel");
    assert_eq!(
        render(&events),
        [
            "action.called toolu_fake_001_0 Bash echo one",
            "action.called toolu_fake_001_1 Bash echo two",
            "action.result toolu_fake_001_1 Completed: two",
            "action.result toolu_fake_001_0 Completed: one",
            "message Assistant: Both commands ran.",
            "usage in=720 out=21 cache_read=600 cost=0.000885000 model=anthropic/claude-sonnet-4-5",
        ]
    );
}

#[test]
fn a_background_subagent_completes_with_its_notification() {
    let (events, stream) = parse("subagent");
    let rendered = render(&events);
    let interesting: Vec<&str> = rendered
        .iter()
        .map(String::as_str)
        .filter(|e| !e.starts_with("custom claude-code:system:"))
        .collect();
    assert_eq!(
        interesting,
        [
            "subagent.called toolu_fake_001_0 general-purpose",
            "message Assistant: The subagent reported back.",
            "action.called toolu_fake_003_0 Bash echo from the subagent",
            "action.result toolu_fake_003_0 Completed: from the subagent",
            "custom claude-code:subagent_message",
            "subagent.completed toolu_fake_001_0 Completed",
            "message Assistant: The subagent reported back.",
            // The second result (for the notification) adds nothing: the first one counted
            // every model call, and `total_cost_usd` is cumulative.
            "usage in=1800 out=35 cache_read=1500 cost=0.001950000 model=anthropic/claude-sonnet-4-5",
        ]
    );
    assert!(rendered.contains(&"custom claude-code:system:task_started".to_string()));
    assert_eq!(
        Usage::from_events(&events).cost_usd,
        Some(0.0019500000000000003)
    );
    assert_eq!(stream.ending(), Some(&Ending::Success));
}

#[test]
fn a_call_the_permission_check_refused_is_rejected() {
    let (events, _) = parse("denied");
    let refusal = "Claude requested permissions to write to /tmp/niceeval-claude-code/denied/note.txt, but you haven't granted it yet.";
    assert_eq!(
        render(&events),
        [
            "action.called toolu_fake_001_0 Write /tmp/niceeval-claude-code/denied/note.txt"
                .to_string(),
            "custom claude-code:system:permission_denied".to_string(),
            format!("action.result toolu_fake_001_0 Rejected: {refusal}"),
            "message Assistant: I was not allowed to write the note.".to_string(),
            "usage in=720 out=14 cache_read=600 cost=0.000780000 model=anthropic/claude-sonnet-4-5"
                .to_string(),
        ]
    );
}

#[test]
fn a_skill_call_is_a_loaded_skill() {
    let (events, _) = parse("skill");
    assert_eq!(
        render(&events),
        [
            "skill.loaded greeting",
            "message Assistant: Loaded the greeting skill.",
            "usage in=720 out=14 cache_read=600 cost=0.000780000 model=anthropic/claude-sonnet-4-5",
        ]
    );
}

#[test]
fn an_api_failure_fails_the_turn_with_its_message() {
    let (events, stream) = parse("aborted");
    let rendered = render(&events);
    assert_eq!(rendered.len(), 1, "{rendered:#?}");
    assert!(
        rendered[0].starts_with(
            "error: Claude Code's turn failed (api_error): API Error: 500 scripted overload."
        ),
        "{rendered:#?}"
    );
    assert!(
        matches!(stream.ending(), Some(Ending::Failed(m)) if m.contains("500 scripted overload"))
    );
    assert_eq!(Usage::from_events(&events), Usage::default());
}

#[test]
fn a_failed_turn_is_never_described_as_a_success() {
    // Claude Code 2.1.331 on a rejected key: `success`, `is_error`, `terminal_reason`.
    let frame = serde_json::json!({
        "type": "result", "subtype": "success", "is_error": true,
        "terminal_reason": "api_error",
        "result": "Failed to authenticate. API Error: 401 invalid x-api-key"
    });
    let message = super::stream::error_message(&frame, "success");
    assert_eq!(
        message,
        "Claude Code's turn failed (api_error): Failed to authenticate. API Error: 401 invalid x-api-key"
    );
    assert!(!message.contains("success"), "{message}");
    // Without a terminal reason, an error subtype names the failure; a bare error says error.
    let frame = serde_json::json!({ "type": "result", "subtype": "error_during_execution", "is_error": true });
    assert_eq!(
        super::stream::error_message(&frame, "error_during_execution"),
        "Claude Code's turn failed (error_during_execution)"
    );
    let frame = serde_json::json!({ "type": "result", "subtype": "success", "is_error": true });
    assert_eq!(
        super::stream::error_message(&frame, "success"),
        "Claude Code's turn failed (error)"
    );
}

#[test]
fn reaching_max_turns_fails_the_turn() {
    let (events, stream) = parse("max_turns");
    let rendered = render(&events);
    assert_eq!(
        rendered[rendered.len() - 2..],
        [
            "usage in=360 out=14 cache_read=300 cost=0.000495000 model=anthropic/claude-sonnet-4-5",
            "error: Claude Code's turn failed (max_turns): Reached maximum number of turns (1)",
        ]
    );
    assert!(matches!(stream.ending(), Some(Ending::Failed(_))));
}

#[test]
fn a_resumed_turn_counts_its_own_usage_not_the_sessions() {
    // `total_cost_usd` and `modelUsage` are cumulative over the resumed session (two calls);
    // `model_usage_since_last_result` holds this turn's one call.
    let (events, _) = parse("resumed");
    assert_eq!(
        render(&events),
        [
            "message Assistant: You asked two questions.",
            "usage in=360 out=7 cache_read=300 cost=0.000390000 model=anthropic/claude-sonnet-4-5",
        ]
    );
}

#[test]
fn older_results_fall_back_to_model_usage_and_the_total_cost() {
    let mut stream = Stream::default();
    let events = stream
        .line(
            r#"{"type":"result","subtype":"success","is_error":false,"session_id":"s","total_cost_usd":0.5,
                "modelUsage":{"claude-haiku-4-5":{"inputTokens":10,"outputTokens":2,"cacheReadInputTokens":5,"cacheCreationInputTokens":1,"costUSD":0.25}}}"#,
            1,
        )
        .unwrap();
    assert_eq!(
        render(&events),
        [
            "usage in=16 out=2 cache_read=5 cost=0.250000000 model=anthropic/claude-haiku-4-5",
            "usage in=0 out=0 cache_read=0 cost=0.250000000 model=-",
        ]
    );
    assert_eq!(Usage::from_events(&events).cost_usd, Some(0.5));
    assert_eq!(stream.session_id(), Some("s"));
}

#[test]
fn without_a_result_the_per_message_usage_counts_once_per_message() {
    // The tool_error stream cut before its result frame: five messages, each printed once per
    // content block, counted once each, priced from the table.
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/claude_code/tool_error.jsonl");
    let text = std::fs::read_to_string(path).unwrap();
    let mut stream = Stream::default();
    let mut events = Vec::new();
    let lines: Vec<&str> = text.lines().collect();
    for (i, line) in lines[..lines.len() - 1].iter().enumerate() {
        events.extend(stream.line(line, i + 1).unwrap());
    }
    let usage: Vec<Event> = stream.finish();
    assert_eq!(usage.len(), 5);
    assert!(usage.iter().all(|e| matches!(
        e,
        Event::Usage { input_tokens: 360, output_tokens: 1, cache_read_tokens: 300, cost_usd: None, model: Some(m) }
            if m == "anthropic/claude-sonnet-4-5"
    )));
    assert_eq!(stream.ending(), None);
}

#[test]
fn unknown_frames_are_kept_and_malformed_lines_are_named() {
    let mut stream = Stream::default();
    let events = stream
        .line(r#"{"type":"rate_limit_event","limit":3}"#, 1)
        .unwrap();
    assert_eq!(
        events,
        [Event::Custom {
            name: "claude-code:rate_limit_event".into(),
            data: serde_json::json!({"type": "rate_limit_event", "limit": 3}),
        }]
    );
    assert_eq!(stream.line("   ", 2).unwrap(), []);
    let err = stream.line("{not json", 3).unwrap_err().to_string();
    assert!(err.starts_with("stdout line 3 is not JSON"), "{err}");
    let err = stream.line(r#"{"no":"type"}"#, 4).unwrap_err().to_string();
    assert!(
        err.starts_with("stdout line 4 is not a Claude Code"),
        "{err}"
    );
}

#[test]
fn the_command_line_carries_the_options_and_the_prompt_last() {
    let agent = ClaudeCode::new()
        .model("sonnet")
        .allowed_tools(["Bash", "Edit"])
        .disallowed_tools(["WebFetch"])
        .permission_mode("acceptEdits")
        .system_prompt("be brief")
        .append_system_prompt("run tests")
        .max_turns(3)
        .args(["--add-dir", "/data"]);
    assert_eq!(
        agent.argv("--fix it", Some("abc")),
        [
            "-p",
            "--output-format",
            "stream-json",
            "--verbose",
            "--model",
            "sonnet",
            "--permission-mode",
            "acceptEdits",
            "--allowedTools",
            "Bash,Edit",
            "--disallowedTools",
            "WebFetch",
            "--system-prompt",
            "be brief",
            "--append-system-prompt",
            "run tests",
            "--max-turns",
            "3",
            "--resume",
            "abc",
            "--add-dir",
            "/data",
            "--",
            "--fix it",
        ]
    );
    assert_eq!(
        ClaudeCode::new().argv("hi", None),
        [
            "-p",
            "--output-format",
            "stream-json",
            "--verbose",
            "--permission-mode",
            "bypassPermissions",
            "--",
            "hi",
        ]
    );
}

/// The Claude Code agent `[agent]` describes, or the error reading it.
fn from_toml(text: &str) -> Result<ClaudeCode, String> {
    let config = crate::config::Config::parse(
        &format!("[agent]\ntype = \"claude-code\"\n{text}"),
        "n.toml",
    )
    .map_err(|e| e.to_string())?;
    match config.agent {
        Some(crate::config::AgentConfig::ClaudeCode(settings)) => Ok(from_config(&settings)),
        other => panic!("{other:?}"),
    }
}

#[test]
fn settings_are_validated() {
    let agent = from_toml(
        "model = \"sonnet\"\nallowed_tools = [\"Bash\", \"Edit\"]\nmax_turns = 5\n\
         timeout = \"2m\"\nprogram = \"/opt/claude\"\n",
    )
    .unwrap();
    assert_eq!(agent.model.as_deref(), Some("sonnet"));
    assert_eq!(agent.allowed_tools, ["Bash", "Edit"]);
    assert_eq!(agent.max_turns, Some(5));
    assert_eq!(agent.process.timeout, Duration::from_secs(120));
    assert_eq!(agent.process.program, "/opt/claude");

    assert_eq!(
        from_toml("max_turns = 0").unwrap_err(),
        "n.toml:3:13: [agent] max_turns: must be a positive whole number; got 0"
    );
    let err = from_toml("allowed_tools = \"Bash\"").unwrap_err();
    assert!(
        err.starts_with("n.toml:3:17: [agent] allowed_tools: ")
            && err.contains("expected an array of strings"),
        "{err}"
    );
    let err = from_toml("modle = \"x\"").unwrap_err();
    assert!(
        err.starts_with("n.toml:3:1: [agent] modle: unknown key `modle`; did you mean `model`?"),
        "{err}"
    );
}

#[test]
fn from_config_knows_claude_code() {
    let config = crate::config::Config::parse(
        "[agent]\ntype = \"claude-code\"\nmodel = \"sonnet\"\n",
        "niceeval.toml",
    )
    .unwrap();
    let built =
        crate::agents::agent::from_config(config.agent.as_ref().unwrap(), None).expect("an agent");
    assert_eq!(built.name(), "claude-code (sonnet)");
    let err = crate::config::Config::parse(
        "[agent]\ntype = \"claude-code\"\nmax_turns = \"ten\"\n",
        "niceeval.toml",
    )
    .unwrap_err()
    .to_string();
    assert_eq!(
        err,
        "niceeval.toml:3:13: [agent] max_turns: must be a positive whole number; got \"ten\""
    );
}
