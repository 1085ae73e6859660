//! `called_tool` / `not_called_tool` with every option, over parallel calls whose results
//! arrive out of order.

use regex::Regex;
use serde_json::{Value, json};

use super::{answered_run, called, fails, parked_run, passes};
use crate::base::event::ActionStatus;
use crate::checks::scope::{InputMatch, ScopedCheck, ToolCheck};

const BASH_3: &str = r#"#3 bash {"command":"cargo build","cwd":"/repo"} → failed"#;
const BASH_15: &str = r#"#15 bash {"command":"cargo build","cwd":"/repo"} → completed"#;

fn re(pattern: &str) -> Regex {
    Regex::new(pattern).unwrap()
}

#[test]
fn called_tool_lists_the_calls_that_counted() {
    let events = parked_run();
    assert_eq!(
        passes(&ToolCheck::called("bash"), &events),
        format!("found 2 matching call(s) to bash:\n  {BASH_3}\n  {BASH_15}")
    );
    assert_eq!(
        passes(&ToolCheck::called("bash").count(2), &events),
        format!("exactly 2 matching call(s) to bash, as expected:\n  {BASH_3}\n  {BASH_15}")
    );
}

#[test]
fn status_comes_from_the_paired_result_of_interleaved_calls() {
    let events = parked_run();
    let failed = ToolCheck::called("bash").status(ActionStatus::Failed);
    assert_eq!(
        passes(&failed.clone().count(1), &events),
        format!("exactly 1 matching call(s) to bash with status failed, as expected:\n  {BASH_3}")
    );
    passes(
        &ToolCheck::called("read_file")
            .status(ActionStatus::Completed)
            .input(json!({"path": "src/lib.rs"}))
            .count(1),
        &events,
    );
    passes(
        &ToolCheck::called("git_push").status(ActionStatus::Rejected),
        &answered_run(),
    );
    let reason = fails(
        &ToolCheck::called("bash").status(ActionStatus::Rejected),
        &events,
    );
    assert_eq!(
        reason,
        format!(
            "no matching call(s) to bash with status rejected; 2 call(s) to bash seen:\n  {BASH_3}: status failed, not rejected\n  {BASH_15}: status completed, not rejected"
        )
    );
}

#[test]
fn a_call_without_result_has_no_status() {
    let events = [called("c9", "bash", json!({"command": "sleep 100"}))];
    passes(&ToolCheck::called("bash"), &events);
    assert_eq!(
        fails(
            &ToolCheck::called("bash").status(ActionStatus::Completed),
            &events
        ),
        "no matching call(s) to bash with status completed; 1 call(s) to bash seen:\n  #0 bash {\"command\":\"sleep 100\"} → no result: no result, so no status (wanted completed)"
    );
}

#[test]
fn input_mismatches_are_explained_per_call() {
    let events = parked_run();
    let check = ToolCheck::called("bash").input(json!({"command": "cargo test"}));
    assert_eq!(
        fails(&check, &events),
        format!(
            "no matching call(s) to bash with input {{\"command\":\"cargo test\"}}; 2 call(s) to bash seen:\n  {BASH_3}: at $.command: expected \"cargo test\", got \"cargo build\"\n  {BASH_15}: at $.command: expected \"cargo test\", got \"cargo build\""
        )
    );
}

#[test]
fn every_input_form_selects_calls() {
    let events = parked_run();
    let forms: Vec<(InputMatch, usize)> = vec![
        (json!({"cwd": "/repo"}).into(), 2),
        (InputMatch::object([("command", re("^cargo b"))]), 2),
        (re(r#""content":"fn main"#).into(), 0), // bash inputs have no content
        (re(r#""cwd":"/repo""#).into(), 2),
        (
            InputMatch::from(|v: &Value| v["command"] == "cargo build"),
            2,
        ),
        (json!({"command": "cargo build", "cwd": "/tmp"}).into(), 0),
    ];
    for (form, expected) in forms {
        passes(
            &ToolCheck::called("bash").input(form).count(expected),
            &events,
        );
    }
    passes(
        &ToolCheck::called("write_file").input(re(r#""content":"fn main"#)),
        &events,
    );
}

#[test]
fn wrong_count_and_never_called_tools() {
    let events = parked_run();
    assert_eq!(
        fails(&ToolCheck::called("bash").count(1), &events),
        format!(
            "expected exactly 1 matching call(s) to bash, found 2; 2 call(s) to bash seen:\n  {BASH_3}\n  {BASH_15}"
        )
    );
    assert_eq!(
        fails(&ToolCheck::called("deploy"), &events),
        "no matching call(s) to deploy: deploy was never called; tools called: read_file ×2, bash ×2, load_skill, write_file"
    );
    assert_eq!(
        fails(&ToolCheck::called("deploy"), &[]),
        "no matching call(s) to deploy: deploy was never called; no tool was called"
    );
    passes(&ToolCheck::called("deploy").count(0), &events);
}

#[test]
fn not_called_tool_is_the_negation_with_the_same_options() {
    let events = parked_run();
    assert_eq!(
        passes(&ToolCheck::not_called("shell"), &events),
        "no matching call(s) to shell: shell was never called"
    );
    assert_eq!(
        fails(&ToolCheck::not_called("bash"), &events),
        format!("found 2 matching call(s) to bash:\n  {BASH_3}\n  {BASH_15}")
    );
    let reason = passes(&ToolCheck::not_called("bash").input(re("rm -rf")), &events);
    assert!(
        reason.starts_with(
            "no matching call(s) to bash with input /rm -rf/; 2 call(s) to bash seen:"
        ),
        "{reason}"
    );
    assert_eq!(
        fails(
            &ToolCheck::not_called("bash")
                .status(ActionStatus::Failed)
                .input(json!({"command": "cargo build"})),
            &events
        ),
        format!(
            "found 1 matching call(s) to bash with status failed and input {{\"command\":\"cargo build\"}}:\n  {BASH_3}"
        )
    );
    assert_eq!(
        fails(&ToolCheck::not_called("bash").count(2), &events),
        format!("found exactly 2 matching call(s) to bash:\n  {BASH_3}\n  {BASH_15}")
    );
    let reason = passes(&ToolCheck::not_called("bash").count(1), &events);
    assert!(
        reason.starts_with("found 2 matching call(s) to bash, not exactly 1;"),
        "{reason}"
    );
}

#[test]
fn describe_shows_every_option() {
    let check = ToolCheck::called("bash")
        .input(InputMatch::object([("command", re("^cargo b"))]))
        .count(1)
        .status(ActionStatus::Failed);
    assert_eq!(
        check.describe(),
        r#"called_tool("bash").input({"command":/^cargo b/}).count(1).status(failed)"#
    );
    assert_eq!(
        ToolCheck::not_called("shell").describe(),
        r#"not_called_tool("shell")"#
    );
}

#[test]
fn long_inputs_are_elided_in_reasons() {
    let events = [called(
        "c1",
        "write_file",
        json!({"content": "x".repeat(10_000)}),
    )];
    let reason = fails(&ToolCheck::not_called("write_file"), &events);
    assert!(reason.len() < 300, "{reason}");
    assert!(reason.contains("chars elided"), "{reason}");
}
