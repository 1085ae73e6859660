//! Unit tests of the built-in scoped checks over hand-written transcripts: parallel tool calls
//! with interleaved results, failed and rejected calls, a subagent, skills, a parked exchange
//! and its answer. Each check has a passing case, a failing case, and its failure reason pinned.

mod actions;
mod deferred;
mod events;
mod matching;
mod run_checks;
mod tools;

use serde_json::json;

use crate::base::assertion::Grade;
use crate::base::event::{ActionStatus, Event, Role};
use crate::checks::scope::{RunView, ScopedCheck};
use crate::config::Config;

pub(super) fn called(id: &str, name: &str, input: serde_json::Value) -> Event {
    Event::ActionCalled {
        call_id: id.into(),
        name: name.into(),
        input,
    }
}

pub(super) fn result(id: &str, status: ActionStatus, output: serde_json::Value) -> Event {
    Event::ActionResult {
        call_id: id.into(),
        output,
        status,
    }
}

/// A first exchange that ends parked on an input request:
///
/// ```text
///  0 user "Fix the build"          10 action.result c4 completed
///  1 thinking                      11 subagent.called s1 researcher (remote)
///  2 action.called c1 read_file    12 subagent.completed s1 failed
///  3 action.called c2 bash         13 action.called c5 write_file
///  4 action.called c3 read_file    14 action.result c5 completed
///  5 action.result c3 completed    15 action.called c6 bash
///  6 action.result c1 completed    16 action.result c6 completed
///  7 action.result c2 failed       17 usage
///  8 skill.loaded rust-analyzer    18 assistant "The build is fixed. Shall I push?"
///  9 action.called c4 load_skill   19 input.requested
/// ```
pub(super) fn parked_run() -> Vec<Event> {
    vec![
        Event::user("Fix the build"),
        Event::Thinking {
            text: "read, then build".into(),
        },
        called("c1", "read_file", json!({"path": "Cargo.toml"})),
        called(
            "c2",
            "bash",
            json!({"command": "cargo build", "cwd": "/repo"}),
        ),
        called("c3", "read_file", json!({"path": "src/lib.rs"})),
        result("c3", ActionStatus::Completed, json!("fn main")),
        result("c1", ActionStatus::Completed, json!("[package]")),
        result(
            "c2",
            ActionStatus::Failed,
            json!("error[E0425]: cannot find value"),
        ),
        Event::SkillLoaded {
            name: "rust-analyzer".into(),
        },
        called("c4", "load_skill", json!({"skill": "memory-v2"})),
        result("c4", ActionStatus::Completed, json!(null)),
        Event::SubagentCalled {
            call_id: "s1".into(),
            name: "researcher".into(),
            remote_url: Some("https://api.example.com/agents/researcher".into()),
        },
        Event::SubagentCompleted {
            call_id: "s1".into(),
            status: ActionStatus::Failed,
        },
        called(
            "c5",
            "write_file",
            json!({"path": "src/lib.rs", "content": "fn main() {}"}),
        ),
        result("c5", ActionStatus::Completed, json!(null)),
        called(
            "c6",
            "bash",
            json!({"command": "cargo build", "cwd": "/repo"}),
        ),
        result("c6", ActionStatus::Completed, json!("Finished")),
        Event::Usage {
            input_tokens: 1200,
            output_tokens: 300,
            cache_read_tokens: 0,
            cost_usd: None,
            model: Some("openai/gpt-4o".into()),
        },
        Event::assistant("The build is fixed. Shall I push?"),
        Event::InputRequested {
            request: json!({"question": "push to origin?"}),
        },
    ]
}

/// [`parked_run`] answered: `20 user "yes"`, `21 action.called c7 git_push`,
/// `22 action.result c7 rejected`, `23 assistant "Push was refused. Kind regards"`.
pub(super) fn answered_run() -> Vec<Event> {
    let mut events = parked_run();
    events.extend([
        Event::Message {
            role: Role::User,
            text: "yes".into(),
        },
        called("c7", "git_push", json!({"remote": "origin"})),
        result("c7", ActionStatus::Rejected, json!("not allowed")),
        Event::assistant("Push was refused. Kind regards"),
    ]);
    events
}

/// Grades `check` over `events`.
pub(super) fn grade(check: &dyn ScopedCheck, events: &[Event]) -> Grade {
    check.evaluate(&RunView {
        events,
        config: &Config::default(),
    })
}

/// Grades and asserts the verdict, returning the reason for further checks.
#[track_caller]
pub(super) fn passes(check: &dyn ScopedCheck, events: &[Event]) -> String {
    let g = grade(check, events);
    assert_eq!(g.error, None, "{}: {}", check.describe(), g.reason);
    assert_eq!(
        g.score,
        1.0,
        "{} should pass: {}",
        check.describe(),
        g.reason
    );
    g.reason
}

/// Grades and asserts a failure (not an execution error), returning the reason.
#[track_caller]
pub(super) fn fails(check: &dyn ScopedCheck, events: &[Event]) -> String {
    let g = grade(check, events);
    assert_eq!(g.error, None, "{}: {}", check.describe(), g.reason);
    assert_eq!(
        g.score,
        0.0,
        "{} should fail: {}",
        check.describe(),
        g.reason
    );
    g.reason
}
