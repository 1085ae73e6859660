//! `.transform(json_path(..))` with the matchers: what a selection gives each of them.

use crate::base::assertion::{Assertion, AssertionResult, Checkable};
use crate::checks::expect::{equals, includes, json_path};

#[test]
fn invalid_query_is_an_execution_error() {
    let t = json_path("$[");
    assert!(t.invalid().is_some());
    let r = AssertionResult::evaluate(&includes("a").transform(t), &"{}".subject());
    assert!(r.error.is_some());
    assert!(r.reason.contains("invalid JSONPath"), "{}", r.reason);
}

#[test]
fn text_that_is_not_json_fails_with_a_reason() {
    let r = AssertionResult::evaluate(
        &includes("a").transform(json_path("$.a")),
        &"not json".subject(),
    );
    assert!(!r.passed && r.error.is_none());
    assert!(r.reason.contains("is not JSON"), "{}", r.reason);
}

#[test]
fn json_values_are_queried_directly_and_nested_objects_become_json_text() {
    let v = serde_json::json!({"a": {"b": [1, 2]}, "s": "x"});
    let r = AssertionResult::evaluate(
        &equals("{\"b\":[1,2]}").transform(json_path("$.a")),
        &v.subject(),
    );
    assert!(r.passed, "{}", r.reason);
    let r = AssertionResult::evaluate(
        &equals(serde_json::json!({"b": [1, 2]})).transform(json_path("$.a")),
        &v.subject(),
    );
    assert!(r.passed, "{}", r.reason);
    let r = AssertionResult::evaluate(&equals("x").transform(json_path("$['s']")), &v.subject());
    assert!(r.passed, "{}", r.reason);
    assert_eq!(
        equals("x").transform(json_path("$.s")).describe(),
        "equals(\"x\") at $.s"
    );
}

#[test]
fn a_selected_string_compared_with_an_object_is_a_type_difference_not_bad_json() {
    let v = serde_json::json!({"status": "completed"});
    let r = AssertionResult::evaluate(
        &equals(serde_json::json!({"state": "done"})).transform(json_path("$.status")),
        &v.subject(),
    );
    assert!(!r.passed && r.error.is_none());
    assert!(!r.reason.contains("not JSON"), "{}", r.reason);
    assert!(
        r.reason.contains("(an object)") && r.reason.contains("(a string)"),
        "{}",
        r.reason
    );
    let r = AssertionResult::evaluate(
        &includes("complete").transform(json_path("$.status")),
        &v.subject(),
    );
    assert!(r.passed, "{}", r.reason);
}
