//! Reading a test suite's results: libtest's human output (`cargo test`, one section per test
//! binary), libtest's JSON lines (`--format json`), and JUnit XML (pytest `--junitxml`, vitest,
//! jest, go-junit, nextest, Maven…). `t.run_tests` turns each case into one gate assertion.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

/// How one test case ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TestOutcome {
    /// It passed.
    Passed,
    /// It failed (an assertion, a panic, an error).
    Failed,
    /// It did not run (ignored, skipped).
    Skipped,
}

/// One test case of a suite run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TestCase {
    /// Its name as the runner gives it (`tests::adds_a_todo`, `test_todo::test_add`), made
    /// unique within the report by the suite it ran in when several suites share a name.
    pub name: String,
    /// How it ended.
    pub outcome: TestOutcome,
    /// What the runner printed about a failure (the panic message, the assertion diff).
    pub message: String,
}

/// Where the results were read from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum TestFormat {
    /// libtest's human output (`cargo test`).
    Libtest,
    /// libtest's JSON lines (`cargo test -- --format json`).
    LibtestJson,
    /// A JUnit XML file.
    Junit,
}

/// The results of one test run in the working copy.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct TestReport {
    /// The command line.
    pub command: String,
    /// Where the results were read from.
    pub format: TestFormat,
    /// Every case, in the order reported.
    pub cases: Vec<TestCase>,
    /// The runner's exit code (`None`: a signal ended it).
    pub exit_code: Option<i32>,
    /// What the runner printed, stdout and stderr together.
    pub output: String,
}

impl TestReport {
    /// How many cases passed.
    pub fn passed(&self) -> usize {
        self.count(TestOutcome::Passed)
    }

    /// How many cases failed.
    pub fn failed(&self) -> usize {
        self.count(TestOutcome::Failed)
    }

    fn count(&self, outcome: TestOutcome) -> usize {
        self.cases.iter().filter(|c| c.outcome == outcome).count()
    }
}

/// The test cases in libtest output: JSON lines (`{"type":"test",...}`) when there are any,
/// else the human format. Several test binaries (one `Running` section each, as `cargo test`
/// prints them on stderr) may be interleaved; names that appear in more than one get the
/// binary's source in parentheses.
///
/// ```
/// use niceeval::__workspace::workspace::parse_libtest;
/// use niceeval::workspace::TestOutcome;
///
/// let output = "\
/// running 2 tests
/// test tests::adds ... ok
/// test tests::completes ... FAILED
///
/// failures:
///
/// ---- tests::completes stdout ----
/// thread 'tests::completes' panicked at src/lib.rs:20:9:
/// not yet
///
/// failures:
///     tests::completes
///
/// test result: FAILED. 1 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out
/// ";
/// let cases = parse_libtest(output);
/// assert_eq!(cases.len(), 2);
/// assert_eq!(cases[1].outcome, TestOutcome::Failed);
/// assert!(cases[1].message.contains("not yet"));
/// ```
pub fn parse_libtest(output: &str) -> Vec<TestCase> {
    read_libtest(output).1
}

/// The test cases in libtest output and which of its forms held them: JSON lines when any line
/// is a test event, else the human format.
pub(crate) fn read_libtest(output: &str) -> (TestFormat, Vec<TestCase>) {
    let json = parse_libtest_json(output);
    if json.is_empty() {
        (TestFormat::Libtest, parse_libtest_human(output))
    } else {
        (TestFormat::LibtestJson, json)
    }
}

#[derive(Deserialize)]
struct JsonLine {
    #[serde(rename = "type")]
    kind: String,
    event: String,
    #[serde(default)]
    name: String,
    #[serde(default)]
    stdout: Option<String>,
    #[serde(default)]
    message: Option<String>,
}

fn parse_libtest_json(output: &str) -> Vec<TestCase> {
    let mut cases = Vec::new();
    for line in output.lines() {
        let line = line.trim();
        if !line.starts_with('{') {
            continue;
        }
        let Ok(item) = serde_json::from_str::<JsonLine>(line) else {
            continue;
        };
        if item.kind != "test" {
            continue;
        }
        let outcome = match item.event.as_str() {
            "ok" => TestOutcome::Passed,
            "failed" | "timeout" => TestOutcome::Failed,
            "ignored" => TestOutcome::Skipped,
            _ => continue,
        };
        let message = [item.stdout, item.message]
            .into_iter()
            .flatten()
            .collect::<Vec<_>>()
            .join("\n");
        cases.push(TestCase {
            name: item.name,
            outcome,
            message: message.trim().to_string(),
        });
    }
    cases
}

fn parse_libtest_human(output: &str) -> Vec<TestCase> {
    // (suite, case) in order, and failure texts by (suite, name).
    let mut cases: Vec<(String, TestCase)> = Vec::new();
    let mut failures: HashMap<(String, String), String> = HashMap::new();
    let mut suite = String::new();
    let mut capturing: Option<(String, String)> = None;
    for line in output.lines() {
        let trimmed = line.trim();
        if let Some(rest) = trimmed.strip_prefix("Running ") {
            suite = suite_label(rest);
            capturing = None;
            continue;
        }
        if let Some(rest) = trimmed.strip_prefix("Doc-tests ") {
            suite = format!("doc-tests {}", rest.trim());
            capturing = None;
            continue;
        }
        if let Some(name) = line.strip_prefix("---- ").and_then(|r| {
            r.strip_suffix(" stdout ----")
                .or_else(|| r.strip_suffix(" stderr ----"))
        }) {
            let name = strip_decorations(name);
            failures.entry((suite.clone(), name.clone())).or_default();
            capturing = Some((suite.clone(), name));
            continue;
        }
        if line == "failures:" || line.starts_with("test result:") {
            capturing = None;
            continue;
        }
        if let Some((name, status)) = status_line(line) {
            capturing = None;
            cases.push((
                suite.clone(),
                TestCase {
                    name,
                    outcome: status,
                    message: String::new(),
                },
            ));
            continue;
        }
        if let Some(key) = &capturing {
            let text = failures.entry(key.clone()).or_default();
            text.push_str(line);
            text.push('\n');
        }
    }
    // Names shared by several suites get the suite in parentheses.
    let mut seen: HashMap<&str, std::collections::HashSet<&str>> = HashMap::new();
    for (suite, case) in &cases {
        seen.entry(case.name.as_str())
            .or_default()
            .insert(suite.as_str());
    }
    let shared: std::collections::HashSet<String> = seen
        .into_iter()
        .filter(|(_, suites)| suites.len() > 1)
        .map(|(name, _)| name.to_string())
        .collect();
    cases
        .into_iter()
        .map(|(suite, mut case)| {
            if let Some(text) = failures.get(&(suite.clone(), case.name.clone())) {
                case.message = text.trim().to_string();
            }
            if shared.contains(&case.name) && !suite.is_empty() {
                case.name = format!("{} ({suite})", case.name);
            }
            case
        })
        .collect()
}

/// `test NAME ... ok` → (NAME, outcome).
fn status_line(line: &str) -> Option<(String, TestOutcome)> {
    let rest = line.strip_prefix("test ")?;
    let (name, status) = rest.rsplit_once(" ... ")?;
    let outcome = match status.trim() {
        "ok" => TestOutcome::Passed,
        "FAILED" => TestOutcome::Failed,
        s if s.starts_with("ignored") => TestOutcome::Skipped,
        _ => return None,
    };
    Some((strip_decorations(name), outcome))
}

/// `tests::x - should panic` → `tests::x`.
fn strip_decorations(name: &str) -> String {
    name.trim()
        .trim_end_matches(" - should panic")
        .trim_end_matches(" - should panic with message")
        .to_string()
}

/// `unittests src/lib.rs (target/debug/deps/todo-1a2b)` → `src/lib.rs`;
/// `tests/api.rs (target/…)` → `tests/api.rs`.
fn suite_label(running: &str) -> String {
    let text = running.trim().trim_start_matches("unittests ").trim();
    match text.find(" (") {
        Some(at) => text[..at].to_string(),
        None => text.to_string(),
    }
}

/// The test cases of a JUnit XML report: every `<testcase>` anywhere in it, named
/// `classname::name` (or `name` alone when the class name is empty or already part of it);
/// `<failure>` and `<error>` fail it (their `message` and text are its message), `<skipped>`
/// skips it.
///
/// ```
/// use niceeval::__workspace::workspace::parse_junit;
/// use niceeval::workspace::TestOutcome;
///
/// let xml = r#"<testsuites><testsuite name="pytest" tests="2">
///   <testcase classname="test_todo" name="test_add" time="0.01"/>
///   <testcase classname="test_todo" name="test_done"><failure message="assert 1 == 2">E assert 1 == 2</failure></testcase>
/// </testsuite></testsuites>"#;
/// let cases = parse_junit(xml).unwrap();
/// assert_eq!(cases[0].name, "test_todo::test_add");
/// assert_eq!(cases[1].outcome, TestOutcome::Failed);
/// assert!(cases[1].message.contains("assert 1 == 2"));
/// ```
pub fn parse_junit(xml: &str) -> Result<Vec<TestCase>, super::WorkspaceError> {
    let doc = roxmltree::Document::parse(xml)
        .map_err(|source| super::WorkspaceError::Junit { path: None, source })?;
    let mut cases = Vec::new();
    for node in doc
        .descendants()
        .filter(|n| n.is_element() && n.tag_name().name() == "testcase")
    {
        let name = node.attribute("name").unwrap_or("").to_string();
        let class = node.attribute("classname").unwrap_or("");
        let name = if class.is_empty() || name.starts_with(class) {
            name
        } else {
            format!("{class}::{name}")
        };
        let mut outcome = TestOutcome::Passed;
        let mut message = String::new();
        for child in node.children().filter(|c| c.is_element()) {
            match child.tag_name().name() {
                "failure" | "error" => {
                    outcome = TestOutcome::Failed;
                    let head = child.attribute("message").unwrap_or("");
                    let body = child.text().unwrap_or("").trim();
                    // pytest's `message` is the assertion's text, which the body (the
                    // traceback) already holds line by line behind `E   `.
                    message = if head
                        .lines()
                        .map(str::trim)
                        .filter(|l| !l.is_empty())
                        .all(|l| body.contains(l))
                    {
                        body.to_string()
                    } else if body.is_empty() {
                        head.to_string()
                    } else {
                        format!("{head}\n{body}")
                    };
                }
                "skipped" if outcome == TestOutcome::Passed => outcome = TestOutcome::Skipped,
                _ => {}
            }
        }
        cases.push(TestCase {
            name,
            outcome,
            message,
        });
    }
    Ok(cases)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cargo_output_of_two_binaries_keeps_names_apart_and_failures_with_their_test() {
        let output = "\
   Compiling todo v0.1.0
    Finished `test` profile
     Running unittests src/lib.rs (target/debug/deps/todo-1)

running 2 tests
test tests::adds ... ok
test tests::check ... FAILED

failures:

---- tests::check stdout ----
thread 'tests::check' panicked at src/lib.rs:9:5:
assertion `left == right` failed
  left: 1
 right: 2

failures:
    tests::check

test result: FAILED. 1 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out

     Running tests/api.rs (target/debug/deps/api-2)

running 2 tests
test check ... ok
test tests::check ... ok
test slow ... ignored, too slow

test result: ok. 2 passed; 0 failed; 1 ignored; 0 measured; 0 filtered out

   Doc-tests todo

running 1 test
test src/lib.rs - add (line 3) ... ok
";
        let cases = parse_libtest(output);
        let names: Vec<_> = cases.iter().map(|c| (c.name.as_str(), c.outcome)).collect();
        assert_eq!(
            names,
            [
                ("tests::adds", TestOutcome::Passed),
                ("tests::check (src/lib.rs)", TestOutcome::Failed),
                ("check", TestOutcome::Passed),
                ("tests::check (tests/api.rs)", TestOutcome::Passed),
                ("slow", TestOutcome::Skipped),
                ("src/lib.rs - add (line 3)", TestOutcome::Passed),
            ]
        );
        assert!(
            cases[1].message.contains("right: 2"),
            "{}",
            cases[1].message
        );
        assert!(!cases[1].message.contains("failures:"));
        assert_eq!(cases[3].message, "");
    }

    #[test]
    fn libtest_json_lines_win_over_the_human_form() {
        let output = r#"{ "type": "suite", "event": "started", "test_count": 2 }
{ "type": "test", "event": "started", "name": "a" }
{ "type": "test", "name": "a", "event": "ok" }
{ "type": "test", "name": "b", "event": "failed", "stdout": "panicked: boom\n" }
{ "type": "suite", "event": "failed", "passed": 1, "failed": 1 }
"#;
        let (format, cases) = read_libtest(output);
        assert_eq!(format, TestFormat::LibtestJson);
        assert_eq!(cases.len(), 2);
        assert_eq!(cases[1].outcome, TestOutcome::Failed);
        assert_eq!(cases[1].message, "panicked: boom");
    }

    #[test]
    fn output_without_tests_has_no_cases() {
        assert!(parse_libtest("error[E0425]: cannot find value `x`\n").is_empty());
    }

    #[test]
    fn junit_errors_and_skips() {
        let xml = r#"<?xml version="1.0"?><testsuite>
            <testcase classname="a.b" name="a.b.c"/>
            <testcase name="e"><error message="crashed"/></testcase>
            <testcase name="s"><skipped/></testcase>
        </testsuite>"#;
        let cases = parse_junit(xml).unwrap();
        assert_eq!(cases[0].name, "a.b.c");
        assert_eq!(cases[1].outcome, TestOutcome::Failed);
        assert_eq!(cases[1].message, "crashed");
        assert_eq!(cases[2].outcome, TestOutcome::Skipped);
        assert!(
            parse_junit("not xml")
                .unwrap_err()
                .to_string()
                .starts_with("not JUnit XML")
        );
    }

    #[test]
    fn a_pytest_failure_is_told_once_not_as_message_then_traceback() {
        // What pytest --junitxml writes: the message attribute repeats the `E` lines.
        let xml = r#"<testsuites><testsuite name="pytest"><testcase classname="test_todo" name="test_done"><failure message="assert 1 == 2&#10; +  where 1 = done()">def test_done():
&gt;       assert done() == 2
E       assert 1 == 2
E        +  where 1 = done()

test_todo.py:4: AssertionError</failure></testcase></testsuite></testsuites>"#;
        let cases = parse_junit(xml).unwrap();
        let message = &cases[0].message;
        assert_eq!(message.matches("assert 1 == 2").count(), 1, "{message}");
        assert!(message.contains("test_todo.py:4"), "{message}");
    }
}
