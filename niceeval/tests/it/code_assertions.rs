//! `javascript` and `python` assertions run for real with node and python3.

#![cfg(feature = "inline-code")]

use crate::scripts_support as support;

use std::time::Duration;

use niceeval::AssertionResult;
use niceeval::prelude::*;
use support::{have, write};

fn check(value: &str, assertion: impl Assertion) -> AssertionResult {
    AssertionResult::evaluate(&assertion, &value.subject())
}

#[test]
fn javascript_expressions_bodies_and_results() {
    if !have("node") {
        return;
    }
    assert!(
        check(
            "Hello, World!",
            javascript("output.includes('Hello, World!')")
        )
        .passed
    );
    assert!(!check("Bye", javascript("output.includes('Hello')")).passed);
    // A number is a score: > 0 passes without threshold, ≥ threshold with one.
    let r = check("abc", javascript("output.length / 10"));
    assert!(r.passed && (r.score - 0.3).abs() < 1e-9);
    let r = check("abc", javascript("output.length / 10").at_least(0.5).gate());
    assert!(!r.passed);
    let r = check(
        "a long enough output",
        javascript("Math.log(output.length) * 10").at_least(0.5),
    );
    assert!(
        r.passed && r.score == 1.0,
        "scores above 1 are clamped for the record"
    );
    let r = check("", javascript("0"));
    assert!(!r.passed);
    // A function body with a grading result.
    let body = "if (output === 'Expected output') {\n  return { pass: true, score: 0.5, reason: 'ok' };\n}\nreturn { pass: false, score: 0, reason: 'Assertion failed' };";
    let r = check("Expected output", javascript(body));
    assert!(r.passed && r.score == 0.5);
    let r = check("other", javascript(body));
    assert!(!r.passed && r.reason == "Assertion failed");
    // Thrown errors fail with the message.
    let r = check("x", javascript("throw new Error('This is an error');"));
    assert!(!r.passed && r.error.is_none());
    assert_eq!(r.reason, "the assertion threw: This is an error");
    // Async code and console.log noise.
    let r = check(
        "x",
        javascript("console.log('noise'); await new Promise(r => setTimeout(r, 10)); return true;"),
    );
    assert!(r.passed, "{}", r.reason);
    // promptfoo's one-line rules: trailing `;` dropped, `return` after leading declarations.
    assert!(check("hello", javascript("output.length > 3;")).passed);
    assert!(
        check(
            r#"{"a":1}"#,
            javascript("let x = JSON.parse(output); x.a === 1")
        )
        .passed
    );
    assert!(
        !check(
            r#"{"a":2}"#,
            javascript("let x = JSON.parse(output); x.a === 1")
        )
        .passed
    );
    // A grading result needs pass, score and reason (promptfoo's isGradingResult).
    // One that is not fails, as promptfoo fails it (its handler catches the error).
    let r = check("x", javascript("({pass: true})"));
    assert!(r.error.is_none() && !r.passed, "{}", r.reason);
    // A grading result keeps its own pass.
    let r = check("x", javascript("({pass: false, score: 0.9, reason: 'no'})"));
    assert!(!r.passed && r.score == 0.9);
    let r = check("x", javascript("1 / 0"));
    assert!(!r.passed, "{}", r.reason);
    // Returning nothing fails, with the reason (promptfoo's handler fails the item).
    let r = check("x", javascript("let a = 1;\nconsole.log(a);"));
    assert!(
        r.error.is_none() && !r.passed && r.reason.contains("returned nothing"),
        "{}",
        r.reason
    );
}

#[test]
fn javascript_context_and_component_results() {
    if !have("node") {
        return;
    }
    let r = check(
        "Example text here",
        javascript("output.includes(context.vars.example) && context.config.max >= output.length")
            .vars(json!({"example": "Example text"}))
            .config(json!({"max": 100})),
    );
    assert!(r.passed, "{}", r.reason);
    let r = check(
        "I like bananas",
        javascript(
            "return { pass: true, score: 0.75, reason: 'Looks good', componentResults: [\n { pass: output.includes('bananas'), score: 0.5, reason: 'Contains banana' },\n { pass: output.includes('yellow'), score: 0.5, reason: 'Contains yellow' } ] };",
        ),
    );
    assert!(r.passed && r.score == 0.75);
    assert_eq!(r.children.len(), 2);
    assert!(r.children[0].passed && !r.children[1].passed);
    // JSON values arrive parsed.
    let v = json!([{"function": {"name": "get_current_weather"}}]);
    let r = AssertionResult::evaluate(
        &javascript("output[0].function.name === 'get_current_weather'"),
        &v.subject(),
    );
    assert!(r.passed, "{}", r.reason);
}

#[test]
fn javascript_files_default_named_and_esm() {
    if !have("node") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "asserts/check.js",
        "module.exports = (output, context) => output.length > 10;\nmodule.exports.customFunction = (output) => output.includes('specific text');\n",
    );
    write(
        dir.path(),
        "asserts/esm.mjs",
        "export default async function (output) { return { pass: output.startsWith('A'), score: 1, reason: 'esm' }; }\n",
    );
    let base = dir.path();
    assert!(
        check(
            "a long output",
            javascript("file://asserts/check.js").base_dir(base)
        )
        .passed
    );
    assert!(
        !check(
            "short",
            javascript("file://asserts/check.js").base_dir(base)
        )
        .passed
    );
    assert!(
        check(
            "has specific text",
            javascript("file://asserts/check.js:customFunction").base_dir(base)
        )
        .passed
    );
    let r = check(
        "x",
        javascript("file://asserts/check.js:nope").base_dir(base),
    );
    assert!(
        !r.passed && r.reason.contains("exports no function nope"),
        "{}",
        r.reason
    );
    let r = check("Apple", javascript("file://asserts/esm.mjs").base_dir(base));
    assert!(r.passed && r.reason == "esm", "{}", r.reason);
    let r = check("x", javascript("file://asserts/missing.js").base_dir(base));
    assert!(r.error.is_some() && r.reason.contains("does not exist"));
}

#[test]
fn python_expressions_bodies_files_and_errors() {
    if !have("python3") {
        return;
    }
    assert!(check("Hello, World", python("'world' in output.lower()")).passed);
    assert!(!check("Hello", python("len(output) > 10")).passed);
    let body = "    words = output.split()\n    if len(words) < 2:\n        return {'pass': False, 'score': 0.1, 'reason': 'too short'}\n    return len(words) / 10";
    let r = check("one", python(body));
    assert!(!r.passed && r.score == 0.1 && r.reason == "too short");
    let r = check("one two three", python(body));
    assert!(r.passed && (r.score - 0.3).abs() < 1e-9);
    let r = check(
        "x",
        python("return {'pass_': True, 'score': 1.0, 'reason': 'ok'}"),
    );
    assert!(r.passed && r.reason == "ok");
    // Inline code has a `__file__`, as promptfoo's (run from a temporary file) has.
    let r = check("x", python("import os\nreturn os.path.isabs(__file__)"));
    assert!(r.passed, "{}", r.reason);
    let r = check("x", python("1 / 0"));
    assert!(!r.passed && r.error.is_none());
    assert_eq!(
        r.reason,
        "the assertion threw: ZeroDivisionError: division by zero"
    );
    let r = check("x", python("def broken(:\n  pass"));
    assert!(
        !r.passed && r.reason.contains("SyntaxError"),
        "{}",
        r.reason
    );
    let r = check(
        "x",
        python("context['vars']['n'] == 3 and context['prompt'] == 'p'")
            .vars(json!({"n": 3}))
            .prompt("p"),
    );
    assert!(r.passed, "{}", r.reason);

    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "asserts/tone.py",
        "import helper\n\ndef get_assert(output, context):\n    return helper.polite(output)\n\ndef check_tone(output, context):\n    return {'pass': 'please' in output, 'score': 0.9, 'reason': 'tone'}\n",
    );
    write(
        dir.path(),
        "asserts/helper.py",
        "def polite(text):\n    return 'thanks' in text\n",
    );
    let base = dir.path();
    assert!(check("thanks!", python("file://asserts/tone.py").base_dir(base)).passed);
    let r = check(
        "please",
        python("file://asserts/tone.py:check_tone").base_dir(base),
    );
    assert!(r.passed && r.score == 0.9);
}

#[test]
fn code_timeouts_and_missing_results() {
    if !have("python3") || !have("node") {
        return;
    }
    let r = check(
        "x",
        python("__import__('time').sleep(20)").timeout(Duration::from_millis(400)),
    );
    assert!(
        r.error.is_some() && r.reason.contains("timed out"),
        "{}",
        r.reason
    );
    let r = check(
        "x",
        javascript("while (true) {}").timeout(Duration::from_millis(400)),
    );
    assert!(
        r.error.is_some() && r.reason.contains("timed out"),
        "{}",
        r.reason
    );
    let r = check("x", python("__import__('os')._exit(3)"));
    assert!(
        r.error.is_some() && r.reason.contains("without a result"),
        "{}",
        r.reason
    );
    let r = check("x", python("'a string'"));
    assert!(
        r.error.is_none() && !r.passed && r.score == 0.0,
        "a string is not a result, a failure: {}",
        r.reason
    );
}
