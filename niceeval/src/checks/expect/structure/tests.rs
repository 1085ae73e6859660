use super::*;
use crate::base::assertion::{AssertionResult, Checkable, Severity};
use serde::Deserialize;
use serde_json::json;

fn check(a: &dyn Assertion, value: &Subject<'_>) -> AssertionResult {
    AssertionResult::evaluate(a, value)
}

#[test]
fn gates_by_default() {
    for a in [
        &equals(1) as &dyn Assertion,
        &matches::<u32>(),
        #[cfg(feature = "json-schema")]
        &matches_schema(json!(true)),
    ] {
        assert_eq!(a.settings().severity, Severity::Gate);
        assert_eq!(a.settings().threshold, None);
    }
}

// ---- equals ----

#[test]
fn equals_text_against_a_string_is_exact() {
    assert!(check(&equals("Hello"), &"Hello".subject()).passed);
    let r = check(&equals("Hello"), &"hello".subject());
    assert_eq!(r.reason, r#"at $: expected "Hello", got "hello""#);
    let r = check(&equals("Hello"), &"Hello ".subject());
    assert_eq!(r.reason, r#"at $: expected "Hello", got "Hello ""#);
    assert!(check(&equals(""), &"".subject()).passed);
    let r = check(&equals(""), &"x".subject());
    assert_eq!(r.reason, r#"at $: expected "", got "x""#);
    // A JSON-looking text against a string is still a string.
    assert!(check(&equals("[1]"), &"[1]".subject()).passed);
}

#[test]
fn equals_unicode() {
    assert!(check(&equals("日本語 😀"), &"日本語 😀".subject()).passed);
    let r = check(&equals("café"), &"cafe\u{301}".subject());
    assert!(!r.passed);
    assert_eq!(r.reason, r#"at $: expected "café", got "cafe\u{301}""#);
}

#[test]
fn equals_parses_text_for_structured_expectations() {
    assert!(
        check(
            &equals(json!({"a": [1, 2]})),
            &r#" {"a": [1, 2.0]} "#.subject()
        )
        .passed
    );
    assert!(check(&equals(42), &"42".subject()).passed);
    assert!(check(&equals(true), &"true".subject()).passed);
    let r = check(&equals(json!({"a": 1})), &"not json".subject());
    assert!(!r.passed);
    assert_eq!(
        r.reason,
        r#"expected {"a":1}, got the text "not json", which is not JSON (expected ident at line 1 column 2)"#
    );
}

#[test]
fn equals_none_is_null_only() {
    assert!(check(&equals(json!(null)), &Subject::Missing).passed);
    assert!(check(&equals(None::<u32>), &Subject::Missing).passed);
    assert!(check(&equals(()), &Subject::Missing).passed);
    let r = check(&equals(json!({"a": 1})), &Subject::Missing);
    assert_eq!(r.reason, r#"expected {"a":1}, got None"#);
    let r = check(&equals(""), &Subject::Missing);
    assert_eq!(r.reason, r#"expected "", got None"#);
    // Some(null) is JSON null.
    assert!(check(&equals(json!(null)), &Some(json!(null)).subject()).passed);
}

#[test]
fn equals_numbers_bools_and_structs() {
    assert!(check(&equals(1), &1.0f64.subject()).passed);
    assert!(check(&equals(1.0), &1u8.subject()).passed);
    assert!(check(&equals(u64::MAX), &u64::MAX.subject()).passed);
    let r = check(&equals(u64::MAX), &(u64::MAX as f64).subject());
    assert!(!r.passed, "{}", r.reason);
    let r = check(&equals(1), &"1".subject());
    assert!(r.passed, "the text 1 parses as the number 1");
    let r = check(&equals(1), &json!("1").subject());
    assert!(r.passed, "a JSON string is text, parsed like a reply");
    let r = check(&equals(false), &true.subject());
    assert_eq!(r.reason, "at $: expected false, got true");

    #[derive(serde::Serialize)]
    struct Intent {
        intent: &'static str,
        confidence: f64,
    }
    let expected = Intent {
        intent: "refund",
        confidence: 0.5,
    };
    let r = check(
        &equals(&expected),
        &json!({"confidence": 0.5, "intent": "refund"}).subject(),
    );
    assert!(r.passed, "{}", r.reason);
}

#[test]
fn equals_reports_several_differences_then_counts() {
    let expected = json!({"a": 1, "b": 2, "c": 3, "d": 4, "e": 5});
    let actual = json!({"a": 0, "b": 0, "c": 0, "d": 0, "e": 5, "f": 6});
    let r = check(&equals(expected), &actual.subject());
    assert_eq!(
        r.reason,
        "at $.a: expected 1, got 0; at $.b: expected 2, got 0; at $.c: expected 3, got 0; \
         and 2 more differences"
    );
}

#[test]
fn equals_unserializable_expected_is_an_execution_error() {
    let mut map = std::collections::HashMap::new();
    map.insert((1, 2), "tuple keys are not JSON");
    let r = check(&equals(map), &json!({}).subject());
    assert!(!r.passed);
    let error = r.error.unwrap();
    assert!(error.contains("cannot be represented as JSON"), "{error}");
    assert_eq!(r.name, "equals(<unserializable>)");
}

#[test]
fn equals_huge_values_stay_short() {
    let big = "word ".repeat(1_000_000);
    let mut other = big.clone();
    other.push('!');
    let r = check(&equals(big.as_str()), &other.as_str().subject());
    assert!(!r.passed);
    assert!(
        r.reason.contains("first difference at char 5000000"),
        "{}",
        r.reason
    );
    assert!(r.reason.chars().count() < 300, "{}", r.reason);
    let r = check(&equals(big.as_str()), &big.as_str().subject());
    assert!(r.passed);
    assert!(r.reason.chars().count() < 300, "{}", r.reason);
    assert!(equals(big.as_str()).describe().len() < 100);
}

// ---- matches::<T>() ----

#[derive(Deserialize, Debug)]
#[allow(dead_code)]
struct Order {
    id: u64,
    items: Vec<Item>,
}

#[derive(Deserialize, Debug)]
#[allow(dead_code)]
struct Item {
    sku: String,
    qty: u32,
}

#[derive(Deserialize, Debug)]
#[serde(rename_all = "lowercase")]
enum Intent {
    Refund,
    Ship,
}

#[test]
fn matches_text_json_and_data() {
    let order = r#"{"id": 7, "items": [{"sku": "A1", "qty": 2}]}"#;
    let r = check(&matches::<Order>(), &order.subject());
    assert!(r.passed);
    assert_eq!(r.reason, "the text deserializes into Order");
    let r = check(
        &matches::<Order>(),
        &serde_json::from_str::<Value>(order).unwrap().subject(),
    );
    assert!(r.passed);
    assert_eq!(r.name, "matches::<Order>()");
    assert_eq!(
        matches::<Vec<Option<Order>>>().describe(),
        "matches::<Vec<Option<Order>>>()"
    );
}

#[test]
fn matches_failures_quote_serde_and_the_value() {
    let r = check(
        &matches::<Order>(),
        &r#"{"id": 7, "items": [{"sku": "A1", "qty": -2}]}"#.subject(),
    );
    assert_eq!(
        r.reason,
        r#"the text "{\"id\": 7, \"items\": [{\"sku\": \"A1\", \"qty\": -2}]}" does not deserialize into Order: invalid value: integer `-2`, expected u32 at line 1 column 43"#
    );
    let r = check(
        &matches::<Order>(),
        &json!({"id": "7", "items": []}).subject(),
    );
    assert_eq!(
        r.reason,
        r#"{"id":"7","items":[]} does not deserialize into Order: invalid type: string "7", expected u64"#
    );
    let r = check(&matches::<Order>(), &"Here is your order: {}".subject());
    assert!(
        r.reason.starts_with(
            r#"the text "Here is your order: {}" is not JSON (expected value at line 1 column 1)"#
        ),
        "{}",
        r.reason
    );
}

#[test]
fn matches_plain_text_as_a_string() {
    assert!(check(&matches::<String>(), &"just words".subject()).passed);
    assert!(
        check(&matches::<String>(), &"42".subject()).passed,
        "a reply is text"
    );
    assert!(check(&matches::<String>(), &"".subject()).passed);
    let r = check(&matches::<Intent>(), &"refund".subject());
    assert_eq!(r.reason, "the text deserializes into Intent as a string");
    assert!(check(&matches::<Intent>(), &"\"ship\"".subject()).passed);
    let r = check(&matches::<Intent>(), &"cancel".subject());
    assert!(!r.passed);
    assert!(r.reason.contains("is not JSON"), "{}", r.reason);
    assert!(!check(&matches::<u32>(), &"".subject()).passed);
}

#[test]
fn matches_none_as_null() {
    let r = check(&matches::<Option<Order>>(), &Subject::Missing);
    assert!(r.passed);
    assert_eq!(r.reason, "None deserializes into Option<Order> (as null)");
    let r = check(&matches::<Order>(), &Subject::Missing);
    assert_eq!(
        r.reason,
        "there is no value (None) to deserialize into Order"
    );
}

#[test]
fn matches_numbers_and_bools() {
    assert!(check(&matches::<u8>(), &200u32.subject()).passed);
    let r = check(&matches::<u8>(), &300u32.subject());
    assert_eq!(
        r.reason,
        "300 does not deserialize into u8: invalid value: integer `300`, expected u8"
    );
    assert!(check(&matches::<bool>(), &true.subject()).passed);
    assert!(check(&matches::<f64>(), &u64::MAX.subject()).passed);
}

#[test]
fn matches_huge_values_stay_short() {
    let huge = format!("[{}\"x\"]", "1,".repeat(1_000_000));
    let r = check(&matches::<Vec<u32>>(), &huge.as_str().subject());
    assert!(!r.passed);
    assert!(r.reason.contains("line 1 column 2000004"), "{}", r.reason);
    assert!(r.reason.chars().count() < 300, "{}", r.reason);
}

// ---- matches_schema ----

#[cfg(feature = "json-schema")]
fn order_schema() -> Value {
    json!({
        "type": "object",
        "required": ["id", "items"],
        "properties": {
            "id": { "type": "integer", "minimum": 1 },
            "email": { "type": "string", "format": "email" },
            "items": { "type": "array", "items": { "type": "object", "required": ["sku"] } }
        }
    })
}

#[cfg(feature = "json-schema")]
#[test]
fn schema_passes_and_fails_with_paths() {
    let schema = matches_schema(order_schema());
    let r = check(
        &schema,
        &json!({"id": 1, "items": [{"sku": "A"}]}).subject(),
    );
    assert!(r.passed);
    assert_eq!(
        r.reason,
        r#"{"id":1,"items":[{"sku":"A"}]} matches the schema"#
    );
    let r = check(
        &schema,
        &json!({"id": 0, "items": [{}, {"sku": 1}]}).subject(),
    );
    assert!(!r.passed);
    assert_eq!(
        r.reason,
        r#"{"id":0,"items":[{},{"sku":1}]} does not match the schema: at /id: 0 is less than the minimum of 1; at /items/0: "sku" is a required property"#
    );
}

#[cfg(feature = "json-schema")]
#[test]
fn schema_formats_are_asserted() {
    let schema = matches_schema(order_schema());
    let r = check(
        &schema,
        &json!({"id": 1, "items": [], "email": "nope"}).subject(),
    );
    assert!(!r.passed);
    assert!(r.reason.contains("at /email"), "{}", r.reason);
    assert!(
        check(
            &schema,
            &json!({"id": 1, "items": [], "email": "a@b.co"}).subject()
        )
        .passed
    );
}

#[cfg(feature = "json-schema")]
#[test]
fn schema_text_is_parsed_then_tried_as_a_string() {
    let schema = matches_schema(order_schema());
    assert!(check(&schema, &r#"{"id": 3, "items": []}"#.subject()).passed);
    let r = check(&schema, &"Sure! Here it is.".subject());
    assert_eq!(
        r.reason,
        r#"the text "Sure! Here it is." is not JSON (expected value at line 1 column 1), and as a string it does not match the schema"#
    );
    let short = matches_schema(json!({"type": "string", "maxLength": 5}));
    let r = check(&short, &"short".subject());
    assert_eq!(r.reason, "the text matches the schema as a string");
    assert!(
        check(&short, &"123".subject()).passed,
        "JSON 123 fails, the string passes"
    );
    assert!(!check(&short, &"too long".subject()).passed);
    assert!(check(&short, &"".subject()).passed);
}

#[cfg(feature = "json-schema")]
#[test]
fn schema_none_is_validated_as_null() {
    let r = check(&matches_schema(order_schema()), &Subject::Missing);
    assert!(!r.passed);
    assert_eq!(
        r.reason,
        "there is no value (None) to validate against the schema"
    );
    let nullable = matches_schema(json!({"type": ["object", "null"]}));
    assert!(check(&nullable, &Subject::Missing).passed);
}

#[cfg(feature = "json-schema")]
#[test]
fn invalid_schema_is_an_execution_error() {
    for schema in [
        json!({"type": "text"}),
        json!({"minimum": "one"}),
        json!(42),
        json!({"$ref": "https://example.invalid/schema.json"}),
    ] {
        let r = check(&matches_schema(schema.clone()), &json!({}).subject());
        assert!(!r.passed, "{schema}");
        let error = r.error.unwrap_or_else(|| panic!("{schema}: {}", r.reason));
        assert!(error.starts_with("invalid JSON Schema (at "), "{error}");
        assert!(
            error.ends_with("fix the schema given to matches_schema"),
            "{error}"
        );
        assert!(error.chars().count() < 500, "{error}");
    }
}

#[cfg(feature = "json-schema")]
#[test]
fn schema_problems_are_capped_and_elided() {
    let schema = matches_schema(json!({"type": "array", "items": {"type": "string"}}));
    let r = check(&schema, &json!([1, 2, 3, 4, 5, 6, 7]).subject());
    assert!(
        r.reason
            .ends_with("at /4: 5 is not of type \"string\"; and more"),
        "{}",
        r.reason
    );
    let huge = json!({"blob": "x".repeat(2_000_000)});
    let r = check(&matches_schema(json!({"type": "array"})), &huge.subject());
    assert!(!r.passed);
    assert!(r.reason.chars().count() < 400, "{}", r.reason);
}
