//! `event`, `not_event`, `event_order`, `events_satisfy`.

use super::{answered_run, fails, grade, parked_run, passes};
use crate::base::event::Event;
use crate::checks::scope::{EventCheck, EventOrder, EventsSatisfy, NoEvent, ScopedCheck};

#[test]
fn event_with_and_without_count() {
    let events = parked_run();
    assert_eq!(
        passes(&EventCheck::new("input.requested"), &events),
        "1 \"input.requested\" event(s), first at #19"
    );
    assert_eq!(
        passes(&EventCheck::new("action.called").count(6), &events),
        "exactly 6 \"action.called\" event(s)"
    );
    assert_eq!(
        fails(&EventCheck::new("error"), &events[..3]),
        "no \"error\" event; events seen: message, thinking, action.called"
    );
    assert_eq!(
        fails(&EventCheck::new("input.requested").count(2), &events),
        "expected exactly 2 \"input.requested\" event(s), found 1:\n  #19 {\"type\":\"input.requested\",\"request\":{\"question\":\"push to origin?\"}}"
    );
    assert_eq!(
        fails(&EventCheck::new("error").count(1), &[]),
        "expected exactly 1 \"error\" event(s), found none; there are no events"
    );
    passes(&EventCheck::new("error").count(0), &events);
}

#[test]
fn unknown_kinds_are_execution_errors_listing_valid_kinds() {
    let checks: Vec<Box<dyn ScopedCheck>> = vec![
        Box::new(EventCheck::new("tool.called")),
        Box::new(NoEvent::new("tool.called")),
        Box::new(EventOrder::new(["message", "tool.called"])),
    ];
    for check in checks {
        let g = grade(check.as_ref(), &parked_run());
        let error = g.error.expect("an execution error");
        assert_eq!(
            error,
            "unknown event kind \"tool.called\"; valid kinds: message, action.called, action.result, subagent.called, subagent.completed, skill.loaded, input.requested, thinking, error, usage, workspace.changed, custom"
        );
    }
    let empty = grade(&EventOrder::new(Vec::<&str>::new()), &[]);
    assert!(empty.error.is_some());
}

#[test]
fn not_event_lists_offenders() {
    let events = answered_run();
    assert_eq!(
        passes(&NoEvent::new("error"), &events),
        "no \"error\" event in 24 event(s)"
    );
    assert_eq!(
        fails(&NoEvent::new("skill.loaded"), &events),
        "found 1 \"skill.loaded\" event(s):\n  #8 {\"type\":\"skill.loaded\",\"name\":\"rust-analyzer\"}"
    );
}

#[test]
fn event_order_is_a_subsequence_of_kinds() {
    let events = answered_run();
    assert_eq!(
        passes(
            &EventOrder::new(["action.called", "subagent.called", "input.requested"]),
            &events
        ),
        "in order: action.called (#2) → subagent.called (#11) → input.requested (#19)"
    );
    let reason = fails(
        &EventOrder::new(["input.requested", "skill.loaded"]),
        &events,
    );
    assert!(
        reason.starts_with("found input.requested (#19) but no skill.loaded event after it; events in order: message → thinking → action.called ×3 → action.result ×3 → skill.loaded"),
        "{reason}"
    );
    assert_eq!(
        fails(&EventOrder::new(["error"]), &[]),
        "no error event; there are no events"
    );
}

#[test]
fn events_satisfy_runs_the_predicate_over_the_scope() {
    let read_before_write = |events: &[Event]| {
        let at = |tool: &str| {
            events
                .iter()
                .position(|e| matches!(e, Event::ActionCalled { name, .. } if name == tool))
        };
        matches!((at("read_file"), at("write_file")), (Some(r), Some(w)) if r < w)
    };
    let check = EventsSatisfy::new("read before write", read_before_write);
    assert_eq!(check.describe(), "events_satisfy(\"read before write\")");
    assert_eq!(
        passes(&check, &parked_run()),
        "\"read before write\" holds over 20 event(s)"
    );
    assert_eq!(
        fails(&check, &answered_run()[20..]),
        "\"read before write\" does not hold over 4 event(s); events seen: message ×2, action.called, action.result"
    );
}
