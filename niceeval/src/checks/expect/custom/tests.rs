use super::*;
use crate::base::assertion::Chain;
use crate::base::assertion::{AssertionResult, Checkable};
use serde_json::json;

fn check(a: &dyn Assertion, value: &Subject<'_>) -> AssertionResult {
    AssertionResult::evaluate(a, value)
}

#[test]
fn satisfies_is_a_gate_and_reports_the_value() {
    let a = satisfies(|s: &str| s.is_empty(), "is empty");
    assert_eq!(a.settings(), Settings::gate());
    let r = check(&a, &"".subject());
    assert!(r.passed);
    assert_eq!(r.reason, r#"is empty: true for """#);
    let r = check(&a, &"x".subject());
    assert_eq!(r.reason, r#"is empty: false for "x""#);
    assert_eq!(format!("{a:?}"), r#"Satisfies { label: "is empty" }"#);
}

#[test]
fn text_views() {
    let words = satisfies(|s: &str| s.chars().count() == 4, "four chars");
    assert!(check(&words, &"日本語!".subject()).passed);
    assert!(
        check(&words, &"👍🏽!!".subject()).passed,
        "👍🏽 is two scalar values"
    );
    assert!(check(&words, &json!("abcd").subject()).passed);
    let owned = satisfies(|s: &String| s.starts_with("ok"), "starts with ok");
    assert!(check(&owned, &"ok then".subject()).passed);
    // JSON that is not a string has no text view.
    let r = check(&words, &json!({"a": 1}).subject());
    assert!(!r.passed && r.error.is_none());
    assert_eq!(r.reason, r#"expected text, got {"a":1}"#);
    assert_eq!(
        check(&words, &42u32.subject()).reason,
        "expected text, got 42"
    );
    assert_eq!(
        check(&words, &Subject::Missing).reason,
        "expected text, got None"
    );
}

#[test]
fn json_view() {
    let has_total = satisfies(|v: &Value| v.get("total").is_some(), "has a total");
    assert!(check(&has_total, &json!({"total": 1}).subject()).passed);
    let r = check(&has_total, &json!({"sum": 1}).subject());
    assert_eq!(r.reason, r#"has a total: false for {"sum":1}"#);
    // Text arrives as a JSON string, even when it looks like JSON.
    let is_string = satisfies(|v: &Value| v.is_string(), "is a string");
    assert!(check(&is_string, &r#"{"total": 1}"#.subject()).passed);
    assert_eq!(
        check(&has_total, &Subject::Missing).reason,
        "expected a JSON value, got None"
    );
}

#[test]
fn number_views_check_type_and_range() {
    let small = satisfies(|n: &u8| *n < 10, "small");
    assert!(check(&small, &3u64.subject()).passed);
    assert!(
        check(&small, &3.0f64.subject()).passed,
        "3.0 is the integer 3"
    );
    assert!(
        check(&small, &" 3 ".subject()).passed,
        "text parsed as a number"
    );
    assert_eq!(
        check(&small, &300u32.subject()).reason,
        "expected u8, got 300 (out of range)"
    );
    assert_eq!(
        check(&small, &(-1i32).subject()).reason,
        "expected u8, got -1 (out of range)"
    );
    assert_eq!(
        check(&small, &3.5f64.subject()).reason,
        "expected u8, got 3.5"
    );
    assert_eq!(
        check(&small, &"three".subject()).reason,
        r#"expected u8, got "three""#
    );
    assert_eq!(
        check(&small, &true.subject()).reason,
        "expected u8, got true"
    );
    assert_eq!(
        check(&small, &Subject::Missing).reason,
        "expected u8, got None"
    );

    let big = satisfies(|n: &u64| *n == u64::MAX, "max");
    assert!(check(&big, &u64::MAX.subject()).passed);
    let negative = satisfies(|n: &i64| *n < 0, "negative");
    assert!(check(&negative, &i64::MIN.subject()).passed);
    assert_eq!(
        check(&negative, &u64::MAX.subject()).reason,
        "expected i64, got 18446744073709551615 (out of range)"
    );
    let ratio = satisfies(|x: &f64| (0.0..=1.0).contains(x), "a ratio");
    assert!(check(&ratio, &0.25f64.subject()).passed);
    assert!(check(&ratio, &1u8.subject()).passed);
    assert!(check(&ratio, &"0.5".subject()).passed);
    assert!(!check(&ratio, &"½".subject()).passed);
    let single = satisfies(|x: &f32| *x > 1.5, "f32");
    assert!(check(&single, &2.0f64.subject()).passed);
}

#[test]
fn bool_view() {
    let yes = satisfies(|b: &bool| *b, "is true");
    assert!(check(&yes, &true.subject()).passed);
    assert!(check(&yes, &"true".subject()).passed);
    assert!(!check(&yes, &false.subject()).passed);
    assert_eq!(check(&yes, &1u8.subject()).reason, "expected a bool, got 1");
    assert_eq!(
        check(&yes, &"yes".subject()).reason,
        r#"expected a bool, got "yes""#
    );
}

#[test]
fn a_panicking_predicate_is_an_execution_error() {
    let boom = satisfies(|s: &str| s[10..].is_empty(), "slices");
    let r = check(&boom, &"short".subject());
    assert!(!r.passed);
    let error = r.error.clone().expect("an execution error");
    assert!(
        error.starts_with(
            "the predicate of satisfies(slices) panicked: start byte index 10 is out of bounds"
        ),
        "{error}"
    );
    assert!(!r.is_failed_gate(), "an error, not a failed check");

    let custom = make_assertion("explodes").score(|_: &str| -> f64 { panic!("no score for you") });
    let r = check(&custom, &"x".subject());
    assert_eq!(
        r.error.as_deref(),
        Some(
            "the scoring function of explodes panicked: no score for you; a check should return, not panic"
        )
    );
}

#[test]
fn make_assertion_settings_and_scores() {
    let a = make_assertion("len").score(|s: &str| (s.len() as f64 / 10.0).min(1.0));
    assert_eq!(a.settings(), Settings::gate());
    assert_eq!(a.describe(), "len");
    let r = check(&a, &"".subject());
    assert!(!r.passed, "a gate without threshold needs a score above 0");
    assert_eq!(r.reason, "len scored 0.000");
    assert!(check(&a, &"abc".subject()).passed);

    let soft = make_assertion("signal")
        .severity(Severity::Soft)
        .score(|_: &str| 0.0);
    assert!(
        check(&soft, &"x".subject()).passed,
        "soft without threshold is a signal"
    );

    let gated = make_assertion("gated").threshold(0.5).score(|_: &str| 0.4);
    let r = check(&gated, &"x".subject());
    assert!(!r.passed && r.is_failed_gate());
    assert_eq!(r.threshold, Some(0.5));

    // Chaining like built-ins.
    let chained = make_assertion("c").score(|_: &str| 0.7).at_least(0.8);
    let r = check(&chained, &"x".subject());
    assert!(r.is_below_threshold());
}

#[test]
fn make_assertion_out_of_range_scores_are_execution_errors() {
    for bad in [1.5, -0.5, f64::NAN, f64::INFINITY] {
        let a = make_assertion("bad").score(move |_: &str| bad);
        let r = check(&a, &"x".subject());
        assert!(!r.passed, "{bad}");
        assert!(
            r.error.as_deref().unwrap().contains("outside [0, 1]"),
            "{bad}"
        );
    }
}

#[test]
fn make_assertion_views() {
    let a =
        make_assertion("total").score(|v: &Value| if v["total"].is_number() { 1.0 } else { 0.0 });
    assert!(check(&a, &json!({"total": 3}).subject()).passed);
    let typed = make_assertion("count").score(|n: &usize| if *n > 2 { 1.0 } else { 0.0 });
    let r = check(&typed, &"many".subject());
    assert!(!r.passed && r.error.is_none());
    assert_eq!(r.reason, r#"expected usize, got "many""#);
}

#[test]
fn huge_values_keep_reasons_short() {
    let huge = "z".repeat(4_000_000);
    let r = check(
        &satisfies(|s: &str| s.len() < 10, "short"),
        &huge.as_str().subject(),
    );
    assert!(!r.passed);
    assert!(r.reason.chars().count() < 250, "{}", r.reason);
    let r = check(&satisfies(|n: &u32| *n > 0, "n"), &huge.as_str().subject());
    assert!(r.reason.chars().count() < 250, "{}", r.reason);
}
