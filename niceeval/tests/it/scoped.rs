//! Scoped assertions end to end: registered on `t` or on a `Turn` during the body, evaluated by
//! the runner after it, folded into the report. The agents are a replayed two-turn transcript
//! (parallel tool calls with interleaved results, a failed call, a subagent, skills, a parked
//! first turn answered by the second) and in-process agents for multi-turn and
//! human-in-the-loop flows.

use std::sync::Arc;

use niceeval::__private::BoxFuture;
use niceeval::__private::EvalDefinition;
use niceeval::__workspace::run_eval;
use niceeval::prelude::*;
use niceeval::{AssertionResult, Error, EvalReport, Severity, Turn, agent::replay::Replay};

/// Turn 1 ends parked on an input request; turn 2 answers it.
const TRANSCRIPT: &str = r#"
{"type":"message","role":"user","text":"Fix the build"}
{"type":"thinking","text":"read, then build"}
{"type":"action.called","call_id":"c1","name":"read_file","input":{"path":"Cargo.toml"}}
{"type":"action.called","call_id":"c2","name":"bash","input":{"command":"cargo build","cwd":"/repo"}}
{"type":"action.called","call_id":"c3","name":"read_file","input":{"path":"src/lib.rs"}}
{"type":"action.result","call_id":"c3","output":"fn main","status":"completed"}
{"type":"action.result","call_id":"c1","output":"[package]","status":"completed"}
{"type":"action.result","call_id":"c2","output":"error[E0425]","status":"failed"}
{"type":"skill.loaded","name":"rust-analyzer"}
{"type":"action.called","call_id":"c4","name":"load_skill","input":{"skill":"memory-v2"}}
{"type":"action.result","call_id":"c4","status":"completed"}
{"type":"subagent.called","call_id":"s1","name":"researcher","remote_url":"https://api.example.com/agents/researcher"}
{"type":"subagent.completed","call_id":"s1","status":"failed"}
{"type":"action.called","call_id":"c5","name":"write_file","input":{"path":"src/lib.rs","content":"fn main() {}"}}
{"type":"action.result","call_id":"c5","status":"completed"}
{"type":"action.called","call_id":"c6","name":"bash","input":{"command":"cargo build","cwd":"/repo"}}
{"type":"action.result","call_id":"c6","output":"Finished","status":"completed"}
{"type":"usage","input_tokens":1200,"output_tokens":300}
{"type":"message","role":"assistant","text":"The build is fixed. Shall I push?"}
{"type":"input.requested","request":{"question":"push to origin?"}}
{"type":"message","role":"user","text":"yes"}
{"type":"action.called","call_id":"c7","name":"git_push","input":{"remote":"origin"}}
{"type":"action.result","call_id":"c7","output":"not allowed","status":"rejected"}
{"type":"message","role":"assistant","text":"{\"pushed\":false,\"reason\":\"rejected\"}"}
"#;

fn replayed() -> Arc<dyn Agent> {
    Arc::new(Replay::from_jsonl(TRANSCRIPT).expect("the test transcript is valid"))
}

type Body = for<'a> fn(&'a mut Eval) -> BoxFuture<'a, niceeval::Result>;

/// Runs `body` as an eval with `agent`, as the runner does under `cargo test`.
fn run(name: &'static str, agent: fn() -> Arc<dyn Agent>, body: Body) -> EvalReport {
    let def = EvalDefinition::new(
        name,
        module_path!(),
        file!(),
        line!(),
        env!("CARGO_MANIFEST_DIR"),
        body,
    )
    .with_agent(agent);
    run_eval(Box::leak(Box::new(def)))
}

fn named<'a>(report: &'a EvalReport, name: &str) -> &'a AssertionResult {
    report
        .assertions
        .iter()
        .find(|a| a.name == name)
        .unwrap_or_else(|| {
            let names: Vec<&str> = report.assertions.iter().map(|a| a.name.as_str()).collect();
            panic!("no assertion named {name}; have {names:?}")
        })
}

#[test]
fn every_scoped_assertion_passes_over_the_answered_run() {
    fn body(t: &mut Eval) -> BoxFuture<'_, niceeval::Result> {
        Box::pin(async move {
            // registered before the events exist: evaluated after the body
            t.called_tool("git_push")
                .status(ActionStatus::Rejected)
                .count(1);
            let turn = t.send("Fix the build").await?;
            assert_eq!(turn.status, TurnStatus::Waiting);
            t.respond("yes").await?;
            t.succeeded();
            t.message_includes(Regex::new(r"(?i)shall i push")?);
            t.called_tool("bash")
                .input(InputMatch::object([("command", Regex::new("^cargo b")?)]))
                .count(2);
            t.called_tool("bash").status(ActionStatus::Failed).count(1);
            t.not_called_tool("bash").input(Regex::new("rm -rf")?);
            t.not_called_tool("deploy");
            t.tool_order(["read_file", "bash", "write_file", "git_push"]);
            t.loaded_skill("rust-analyzer");
            t.loaded_skill("memory-v2");
            t.called_subagent("researcher")
                .remote_url(Regex::new(r"^https://api\.example\.com/")?);
            t.event("input.requested").count(1);
            t.not_event("error");
            t.event_order(["skill.loaded", "subagent.called", "input.requested"]);
            t.events_satisfy("two user messages", |events: &[Event]| {
                events
                    .iter()
                    .filter(|e| matches!(e, Event::Message { role, .. } if *role == niceeval::Role::User))
                    .count()
                    == 2
            });
            Ok(())
        })
    }
    let report = run("all_pass", replayed, body);
    assert_eq!(report.outcome, Outcome::Passed, "{}", report.render());
    assert_eq!(report.assertions.len(), 15, "{}", report.render());
    assert!(
        report
            .assertions
            .iter()
            .all(|a| a.kind == niceeval::AssertionKind::Scoped && a.severity == Severity::Gate)
    );
    assert_eq!(
        report.assertions[0].name, r#"called_tool("git_push").count(1).status(rejected)"#,
        "evaluated in registration order"
    );
}

#[test]
fn a_failed_scoped_assertion_fails_the_eval_and_its_reason_is_in_the_report() {
    fn body(t: &mut Eval) -> BoxFuture<'_, niceeval::Result> {
        Box::pin(async move {
            t.send("Fix the build").await?;
            t.respond("yes").await?;
            t.no_failed_actions();
            t.used_no_tools();
            t.called_tool("deploy");
            t.parked();
            Ok(())
        })
    }
    let report = run("failures", replayed, body);
    assert_eq!(report.outcome, Outcome::Failed);
    assert_eq!(
        report.error, None,
        "a failed gate is not an execution error"
    );
    let failed = named(&report, "no_failed_actions()");
    assert!(!failed.passed);
    assert!(
        failed.reason.contains(
            r#"#7 bash {"command":"cargo build","cwd":"/repo"} → failed: "error[E0425]""#
        ),
        "{}",
        failed.reason
    );
    assert!(
        failed.reason.contains("#12 subagent researcher"),
        "{}",
        failed.reason
    );
    assert!(
        named(&report, "used_no_tools()")
            .reason
            .starts_with("7 tool call(s):")
    );
    assert!(named(&report, r#"called_tool("deploy")"#).reason.contains(
        "deploy was never called; tools called: read_file ×2, bash ×2, load_skill, write_file, git_push"
    ));
    assert!(
        named(&report, "parked()")
            .reason
            .contains("the input request at #19 was answered")
    );
    let text = report.render();
    assert!(text.contains("FAIL  gate no_failed_actions()"), "{text}");
    assert!(text.contains("  #12 subagent researcher"), "{text}");
}

#[test]
fn chaining_sets_severity_threshold_weight_and_metric() {
    fn body(t: &mut Eval) -> BoxFuture<'_, niceeval::Result> {
        Box::pin(async move {
            t.send("Fix the build").await?;
            t.no_failed_actions()
                .at_least(0.5)
                .weight(2.0)
                .metric("reliability");
            t.used_no_tools().at_least(0.5).gate();
            Ok(())
        })
    }
    let report = run("chaining", replayed, body);
    let soft = named(&report, "no_failed_actions()");
    assert_eq!(soft.severity, Severity::Soft);
    assert_eq!(soft.threshold, Some(0.5));
    assert_eq!(soft.weight, 2.0);
    assert_eq!(soft.metric.as_deref(), Some("reliability"));
    assert!(soft.is_below_threshold());
    let gate = named(&report, "used_no_tools()");
    assert_eq!(gate.severity, Severity::Gate);
    assert_eq!(gate.threshold, Some(0.5));
    assert_eq!(report.outcome, Outcome::Failed, "the gate failed");
}

#[test]
fn a_soft_scoped_assertion_below_threshold_does_not_fail_the_eval() {
    fn body(t: &mut Eval) -> BoxFuture<'_, niceeval::Result> {
        Box::pin(async move {
            t.send("Fix the build").await?;
            t.no_failed_actions().at_least(1.0);
            Ok(())
        })
    }
    let report = run("soft", replayed, body);
    assert_eq!(report.outcome, Outcome::Passed);
    assert!(report.below_threshold);
}

#[test]
fn an_unknown_event_kind_is_an_execution_error_listing_the_kinds() {
    fn body(t: &mut Eval) -> BoxFuture<'_, niceeval::Result> {
        Box::pin(async move {
            t.send("Fix the build").await?;
            t.event("tool.called");
            Ok(())
        })
    }
    let report = run("unknown_kind", replayed, body);
    assert_eq!(report.outcome, Outcome::Failed);
    let error = report.error.expect("an execution error").message;
    assert!(
        error.contains(r#"event("tool.called") could not be evaluated: unknown event kind "tool.called"; valid kinds: message, action.called,"#),
        "{error}"
    );
}

#[test]
fn a_panicking_predicate_is_an_execution_error_not_a_crash() {
    fn body(t: &mut Eval) -> BoxFuture<'_, niceeval::Result> {
        Box::pin(async move {
            t.send("Fix the build").await?;
            t.events_satisfy("explodes", |_: &[Event]| panic!("predicate bug"));
            t.succeeded().at_least(0.0);
            Ok(())
        })
    }
    let report = run("panicking_predicate", replayed, body);
    assert_eq!(report.outcome, Outcome::Failed);
    let exploded = named(&report, r#"events_satisfy("explodes")"#);
    assert_eq!(
        exploded.error.as_deref(),
        Some("the check panicked: predicate bug")
    );
    assert_eq!(
        report.assertions.len(),
        2,
        "later assertions still evaluated"
    );
}

#[test]
fn scoped_assertions_survive_a_panicking_body() {
    fn body(t: &mut Eval) -> BoxFuture<'_, niceeval::Result> {
        Box::pin(async move {
            t.send("Fix the build").await?;
            t.called_tool("write_file");
            panic!("the body crashed");
        })
    }
    let report = run("panicking_body", replayed, body);
    assert_eq!(report.outcome, Outcome::Failed);
    assert!(report.error_message().unwrap().contains("the body crashed"));
    assert!(named(&report, r#"called_tool("write_file")"#).passed);
}

#[test]
fn turn_scope_sees_only_that_turns_events() {
    fn body(t: &mut Eval) -> BoxFuture<'_, niceeval::Result> {
        Box::pin(async move {
            let first = t.send("Fix the build").await?;
            let second = t.respond("yes").await?;
            first.parked();
            first.called_tool("bash").count(2);
            first.not_called_tool("git_push");
            first.called_tool("git_push"); // fails: turn 2 pushed
            first.no_failed_actions(); // fails: the build failed in turn 1
            second.succeeded();
            second.used_no_tools(); // fails: git_push
            second.no_failed_actions(); // a rejected call is no failure
            second
                .called_tool("git_push")
                .status(ActionStatus::Rejected);
            second.tool_order(["git_push"]);
            second.event("message").count(2);
            second.not_event("skill.loaded");
            second.output_equals(json!({ "pushed": false, "reason": "rejected" }));
            first.output_equals(json!({ "pushed": true })); // fails: no structured output
            Ok(())
        })
    }
    let report = run("turn_scope", replayed, body);
    let verdicts: Vec<(&str, bool)> = report
        .assertions
        .iter()
        .map(|a| (a.name.as_str(), a.passed))
        .collect();
    assert_eq!(
        verdicts,
        vec![
            ("turn 1: parked()", true),
            (r#"turn 1: called_tool("bash").count(2)"#, true),
            (r#"turn 1: not_called_tool("git_push")"#, true),
            (r#"turn 1: called_tool("git_push")"#, false),
            ("turn 1: no_failed_actions()", false),
            ("turn 2: succeeded()", true),
            ("turn 2: used_no_tools()", false),
            ("turn 2: no_failed_actions()", true),
            (r#"turn 2: called_tool("git_push").status(rejected)"#, true),
            (r#"turn 2: tool_order(["git_push"])"#, true),
            (r#"turn 2: event("message").count(2)"#, true),
            (r#"turn 2: not_event("skill.loaded")"#, true),
            (
                r#"turn 2: output_equals({"pushed":false,"reason":"rejected"})"#,
                true
            ),
            (r#"turn 1: output_equals({"pushed":true})"#, false),
        ],
        "{}",
        report.render()
    );
    // reasons use positions inside the turn
    assert_eq!(
        named(&report, "turn 2: used_no_tools()").reason,
        "1 tool call(s):\n  #1 git_push {\"remote\":\"origin\"} → rejected"
    );
    assert!(
        named(&report, r#"turn 1: output_equals({"pushed":true})"#)
            .reason
            .starts_with("the turn has no structured output")
    );
}

#[test]
fn output_matches_checks_the_turns_data_type() {
    #[derive(serde::Deserialize)]
    #[allow(dead_code)]
    struct Push {
        pushed: bool,
        reason: String,
    }
    #[derive(serde::Deserialize)]
    #[allow(dead_code)]
    struct Profile {
        id: String,
    }
    fn body(t: &mut Eval) -> BoxFuture<'_, niceeval::Result> {
        Box::pin(async move {
            t.send("Fix the build").await?;
            let turn = t.respond("yes").await?;
            turn.output_matches::<Push>();
            turn.output_matches::<Profile>();
            Ok(())
        })
    }
    let report = run("output_matches", replayed, body);
    assert!(named(&report, "turn 2: output_matches::<Push>()").passed);
    let profile = named(&report, "turn 2: output_matches::<Profile>()");
    assert!(!profile.passed);
    assert!(
        profile.reason.contains("missing field `id`"),
        "{}",
        profile.reason
    );
}

#[test]
fn a_parked_run_holds_parked_and_fails_succeeded() {
    fn body(t: &mut Eval) -> BoxFuture<'_, niceeval::Result> {
        Box::pin(async move {
            let turn = t.send("Fix the build").await?;
            assert_eq!(turn.status, TurnStatus::Waiting);
            assert_eq!(
                turn.pending_request(),
                Some(&json!({"question": "push to origin?"}))
            );
            t.parked();
            t.succeeded();
            Ok(())
        })
    }
    let report = run("parked", replayed, body);
    assert!(named(&report, "parked()").passed);
    let succeeded = named(&report, "succeeded()");
    assert!(!succeeded.passed);
    assert!(succeeded.reason.starts_with(
        r#"the run is parked: the agent asked for input at #19 ({"question":"push to origin?"})"#
    ));
}

/// Asks for approval before deleting, then acts on the answer; reports what it received.
fn approver() -> Arc<dyn Agent> {
    Arc::new(agent_fn(|request: Request| async move {
        let events = &request.events;
        match &request.responding_to {
            None => {
                events.say(format!(
                    "session {} with {} earlier message(s)",
                    request.session,
                    request.history.len()
                ));
                events.emit(Event::InputRequested {
                    request: json!({ "confirm": request.input.text }),
                });
            }
            Some(asked) => {
                let approved = request.input.data == Some(json!({ "approved": true }));
                if approved {
                    events.tool_call("delete", asked.clone(), json!("deleted"));
                }
                events.say(format!(
                    "answer to {asked} in {}: approved={approved}",
                    request.session
                ));
            }
        }
        Ok(())
    }))
}

#[test]
fn respond_continues_a_parked_run_in_the_same_session() {
    fn body(t: &mut Eval) -> BoxFuture<'_, niceeval::Result> {
        Box::pin(async move {
            let asked = t.send("delete account 7").await?;
            assert_eq!(asked.status, TurnStatus::Waiting);
            let done = t.respond(json!({ "approved": true })).await?;
            assert_eq!(done.status, TurnStatus::Completed);
            assert_eq!(done.index, 1);
            assert_eq!(done.first_event, asked.events.len());
            assert_eq!(
                t.reply(),
                r#"answer to {"confirm":"delete account 7"} in session-1: approved=true"#
            );
            // the answer is recorded as the user's message of the new turn
            assert_eq!(done.events[0], Event::user(r#"{"approved":true}"#));
            // nothing is waiting any more
            assert!(matches!(t.respond("again").await, Err(Error::NotParked)));
            t.called_tool("delete")
                .input(json!({ "confirm": "delete account 7" }));
            t.succeeded();
            asked.parked();
            done.succeeded();
            Ok(())
        })
    }
    let report = run("respond", approver, body);
    assert_eq!(report.outcome, Outcome::Passed, "{}", report.render());
    assert_eq!(report.assertions.len(), 4);
}

#[test]
fn respond_without_a_parked_turn_is_an_error() {
    fn body(t: &mut Eval) -> BoxFuture<'_, niceeval::Result> {
        Box::pin(async move {
            let err = t.respond("yes").await.unwrap_err();
            assert!(matches!(err, Error::NotParked));
            assert!(
                err.to_string()
                    .contains("send a message with t.send instead")
            );
            t.send("delete account 7").await?;
            t.new_session();
            // the request belonged to the previous session
            assert!(matches!(t.respond("yes").await, Err(Error::NotParked)));
            Ok(())
        })
    }
    let report = run("respond_errors", approver, body);
    assert_eq!(report.outcome, Outcome::Passed, "{}", report.render());
}

#[test]
fn several_sends_and_new_session_build_a_multi_turn_run() {
    fn body(t: &mut Eval) -> BoxFuture<'_, niceeval::Result> {
        Box::pin(async move {
            t.send("first").await?;
            t.send("second").await?;
            assert_eq!(t.reply(), "session session-1 with 2 earlier message(s)");
            t.new_session();
            let third = t.send("third").await?;
            assert_eq!(third.message, "session session-2 with 0 earlier message(s)");
            assert_eq!(t.turns().len(), 3);
            assert_eq!(
                t.events().len(),
                9,
                "3 turns × (user, message, input.requested)"
            );
            t.event("input.requested").count(3);
            third.event("input.requested").count(1);
            t.parked();
            Ok(())
        })
    }
    let report = run("multi_turn", approver, body);
    assert_eq!(report.outcome, Outcome::Passed, "{}", report.render());
    assert_eq!(report.events.len(), 9);
}

#[test]
fn turns_keep_serde_and_equality_and_detached_turns_record_nowhere() {
    fn body(t: &mut Eval) -> BoxFuture<'_, niceeval::Result> {
        Box::pin(async move {
            let turn = t.send("Fix the build").await?;
            let json = serde_json::to_value(&turn)?;
            assert!(json.get("run").is_none(), "the run link is not serialized");
            let back: Turn = serde_json::from_value(json)?;
            assert_eq!(back, turn, "equality ignores the run link");
            let rebuilt = Turn::from_events(0, 0, turn.events.clone(), None);
            assert_eq!(rebuilt, turn);
            // assertions on turns without a run are discarded
            back.called_tool("never");
            rebuilt.succeeded();
            turn.called_tool("bash");
            Ok(())
        })
    }
    let report = run("turn_serde", replayed, body);
    assert_eq!(report.outcome, Outcome::Passed, "{}", report.render());
    let names: Vec<&str> = report.assertions.iter().map(|a| a.name.as_str()).collect();
    assert_eq!(names, vec![r#"turn 1: called_tool("bash")"#]);
}

#[test]
fn detached_handles_take_scoped_assertions_without_panicking() {
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("runtime");
    rt.block_on(async {
        let mut t = Eval::detached(Some(replayed()));
        let turn = t.send("Fix the build").await.expect("the replay answers");
        t.called_tool("bash").count(2);
        turn.parked();
        assert_eq!(t.events().len(), 20);
    });
}
