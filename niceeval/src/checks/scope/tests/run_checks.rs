//! `succeeded`, `parked`, `message_includes`.

use regex::Regex;
use serde_json::json;

use super::{answered_run, fails, parked_run, passes};
use crate::base::event::Event;
use crate::checks::scope::{MessageIncludes, Parked, Succeeded};

#[test]
fn succeeded_passes_on_an_answered_run_and_on_one_turn() {
    let events = answered_run();
    assert_eq!(
        passes(&Succeeded, &events),
        "completed: 24 event(s), no error, not waiting for input"
    );
    passes(&Succeeded, &events[20..]);
}

#[test]
fn succeeded_fails_on_a_parked_run_naming_the_request() {
    assert_eq!(
        fails(&Succeeded, &parked_run()),
        r#"the run is parked: the agent asked for input at #19 ({"question":"push to origin?"}) and nothing answered it; answer with t.respond(..) or assert t.parked()"#
    );
}

#[test]
fn succeeded_fails_on_error_events_listing_them_and_on_an_empty_run() {
    let mut events = answered_run();
    events.push(Event::Error {
        message: "model overloaded".into(),
    });
    assert_eq!(
        fails(&Succeeded, &events),
        "the agent failed: 1 error event(s):\n  #24 \"model overloaded\""
    );
    assert_eq!(
        fails(&Succeeded, &[]),
        "there are no events: nothing was sent to the agent"
    );
}

#[test]
fn parked_holds_on_an_open_request() {
    assert_eq!(
        passes(&Parked, &parked_run()),
        r#"parked at #19, waiting for input: {"question":"push to origin?"}"#
    );
}

#[test]
fn parked_fails_when_answered_absent_or_failed() {
    assert_eq!(
        fails(&Parked, &answered_run()),
        "not parked: the input request at #19 was answered (user message at #20) and the agent asked nothing after it"
    );
    assert_eq!(
        fails(&Parked, &[Event::user("hi"), Event::assistant("hello")]),
        "not parked: there is no input.requested event"
    );
    let failed = [
        Event::user("hi"),
        Event::InputRequested {
            request: json!("?"),
        },
        Event::Error {
            message: "crashed".into(),
        },
    ];
    assert_eq!(
        fails(&Parked, &failed),
        "not parked: the last exchange failed with 1 error event(s):\n  #2 \"crashed\""
    );
    fails(&Parked, &[]);
}

#[test]
fn message_includes_searches_assistant_messages_only() {
    let events = answered_run();
    assert_eq!(
        passes(&MessageIncludes::new("regards"), &events),
        r#"found in the assistant message at #23: "Push was refused. Kind regards""#
    );
    passes(
        &MessageIncludes::new(Regex::new("(?i)shall i push").unwrap()),
        &events,
    );
    assert_eq!(
        fails(&MessageIncludes::new("Fix the build"), &events),
        "no assistant message contains \"Fix the build\"; 2 assistant message(s) seen:\n  #18 \"The build is fixed. Shall I push?\"\n  #23 \"Push was refused. Kind regards\""
    );
    let reason = fails(
        &MessageIncludes::new(Regex::new(r"\d{4}").unwrap()),
        &events,
    );
    assert!(
        reason.starts_with(r"no assistant message matches /\d{4}/;"),
        "{reason}"
    );
    assert_eq!(
        fails(&MessageIncludes::new("x"), &[Event::user("x")]),
        "no assistant message to search for \"x\": the agent said nothing"
    );
}

#[test]
fn message_includes_shows_the_match_inside_long_messages() {
    let text = format!("{} needle {}", "a".repeat(300), "b".repeat(300));
    let reason = passes(&MessageIncludes::new("needle"), &[Event::assistant(text)]);
    assert!(reason.contains("…aaaa"), "{reason}");
    assert!(reason.contains("needle bbbb"), "{reason}");
    assert!(reason.len() < 200, "{reason}");
}
