//! `tool_order`, `used_no_tools`, `loaded_skill`, `called_subagent`, `no_failed_actions`.

use regex::Regex;
use serde_json::json;

use super::{answered_run, called, fails, grade, parked_run, passes, result};
use crate::base::event::{ActionStatus, Event};
use crate::checks::scope::{CalledSubagent, LoadedSkill, NoFailedActions, ToolOrder, UsedNoTools};

const SEQUENCE: &str = "read_file → bash → read_file → load_skill → write_file → bash";

#[test]
fn tool_order_finds_a_subsequence_across_parallel_calls() {
    assert_eq!(
        passes(
            &ToolOrder::new(["read_file", "bash", "write_file"]),
            &parked_run()
        ),
        "called in order: read_file (#2) → bash (#3) → write_file (#13)"
    );
    passes(&ToolOrder::new(["write_file", "bash"]), &parked_run());
}

#[test]
fn tool_order_failure_says_which_step_is_missing() {
    let events = parked_run();
    assert_eq!(
        fails(&ToolOrder::new(["write_file", "read_file"]), &events),
        format!(
            "found write_file (#13) but no read_file after it (read_file was called at #2, before #13); tool calls in order: {SEQUENCE}"
        )
    );
    assert_eq!(
        fails(&ToolOrder::new(["bash", "git_push"]), &events),
        format!(
            "found bash (#3) but no git_push after it (git_push was never called); tool calls in order: {SEQUENCE}"
        )
    );
    assert_eq!(
        fails(&ToolOrder::new(["deploy"]), &events),
        format!("deploy was never called; tool calls in order: {SEQUENCE}")
    );
    assert_eq!(
        fails(&ToolOrder::new(["deploy"]), &[]),
        "deploy was never called; no tool was called"
    );
    let empty = grade(&ToolOrder::new(Vec::<String>::new()), &events);
    assert!(empty.error.unwrap().contains("list at least one tool name"));
}

#[test]
fn used_no_tools_lists_the_calls() {
    assert_eq!(
        passes(
            &UsedNoTools,
            &[Event::user("hi"), Event::assistant("hello")]
        ),
        "no action.called event in 2 event(s)"
    );
    assert_eq!(
        fails(&UsedNoTools, &answered_run()[20..]),
        "1 tool call(s):\n  #1 git_push {\"remote\":\"origin\"} → rejected"
    );
}

#[test]
fn loaded_skill_accepts_events_and_load_skill_calls() {
    let events = parked_run();
    assert_eq!(
        passes(&LoadedSkill::new("rust-analyzer"), &events),
        "skill.loaded event at #8"
    );
    assert_eq!(
        passes(&LoadedSkill::new("memory-v2"), &events),
        "load_skill call at #9 → completed"
    );
    for input in [
        json!("web"),
        json!({"name": "web"}),
        json!({"skill": "web"}),
    ] {
        passes(
            &LoadedSkill::new("web"),
            &[called("c1", "load_skill", input)],
        );
    }
}

#[test]
fn loaded_skill_failure_lists_loaded_skills_or_failed_loads() {
    assert_eq!(
        fails(&LoadedSkill::new("python"), &parked_run()),
        "skill \"python\" was not loaded; skills loaded: rust-analyzer, memory-v2"
    );
    let failed = [
        called("c1", "load_skill", json!({"skill": "python"})),
        called("c2", "load_skill", json!({"skill": "python"})),
        result("c2", ActionStatus::Rejected, json!(null)),
        result("c1", ActionStatus::Failed, json!("not installed")),
    ];
    assert_eq!(
        fails(&LoadedSkill::new("python"), &failed),
        "skill \"python\" was not loaded: every load_skill call for it failed:\n  #0 load_skill {\"skill\":\"python\"} → failed\n  #1 load_skill {\"skill\":\"python\"} → rejected"
    );
    assert_eq!(
        fails(&LoadedSkill::new("python"), &[Event::user("hi")]),
        "skill \"python\" was not loaded; no skill was loaded (no skill.loaded event, no load_skill call)"
    );
}

#[test]
fn called_subagent_with_and_without_remote_url() {
    let events = parked_run();
    assert_eq!(
        passes(&CalledSubagent::new("researcher"), &events),
        "called at #11 (\"https://api.example.com/agents/researcher\")"
    );
    passes(
        &CalledSubagent::new("researcher")
            .remote_url(Regex::new(r"^https://api\.example\.com/").unwrap()),
        &events,
    );
    assert_eq!(
        fails(
            &CalledSubagent::new("researcher").remote_url("internal.corp"),
            &events
        ),
        "no call to subagent researcher has a remote_url matching \"internal.corp\"; 1 call(s) seen:\n  #11 researcher → \"https://api.example.com/agents/researcher\""
    );
    let local = [Event::SubagentCalled {
        call_id: "s".into(),
        name: "researcher".into(),
        remote_url: None,
    }];
    passes(&CalledSubagent::new("researcher"), &local);
    let reason = fails(&CalledSubagent::new("researcher").remote_url("x"), &local);
    assert!(
        reason.ends_with("#0 researcher → no remote_url"),
        "{reason}"
    );
    assert_eq!(
        fails(&CalledSubagent::new("writer"), &events),
        "subagent writer was never called; subagents called: researcher"
    );
    assert_eq!(
        fails(&CalledSubagent::new("writer"), &[]),
        "subagent writer was never called; no subagent was called"
    );
}

#[test]
fn no_failed_actions_names_failed_tools_and_subagents() {
    assert_eq!(
        fails(&NoFailedActions, &parked_run()),
        "2 failed call(s):\n  #7 bash {\"command\":\"cargo build\",\"cwd\":\"/repo\"} → failed: \"error[E0425]: cannot find value\"\n  #12 subagent researcher (\"https://api.example.com/agents/researcher\") → failed"
    );
    assert_eq!(
        passes(&NoFailedActions, &answered_run()[20..]),
        "none of 1 finished tool or subagent call(s) failed"
    );
    let skill = [
        called("c1", "load_skill", json!({"skill": "python"})),
        result("c1", ActionStatus::Failed, json!(null)),
    ];
    assert_eq!(
        fails(&NoFailedActions, &skill),
        "1 failed call(s):\n  #1 load_skill {\"skill\":\"python\"} → failed"
    );
    assert_eq!(
        fails(
            &NoFailedActions,
            &[result("c1", ActionStatus::Failed, json!(null))]
        ),
        "1 failed call(s):\n  #0 call c1 (its call event is not in scope) → failed"
    );
}
