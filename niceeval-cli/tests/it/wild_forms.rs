//! What real promptfoo suites from the wild need, each from a few-line suite against the
//! loopback fake: keys promptfoo accepts are notices rather than refusals, every refusal of a
//! file is reported at once, prompt and rubric files are read as promptfoo reads them, bare
//! test paths load, and a grader that answers in text is read.

use std::path::Path;

use super::support::{Fake, niceeval};

fn write(dir: &Path, name: &str, text: &str) {
    let path = dir.join(name);
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).unwrap();
    }
    std::fs::write(path, text).unwrap();
}

/// Runs the suite `text` (with `files` beside it); returns exit code, stdout and stderr.
fn run(text: &str, files: &[(&str, &str)]) -> (Option<i32>, String, String) {
    let fake = Fake::start();
    let dir = tempfile::tempdir().unwrap();
    for (name, body) in files {
        write(dir.path(), name, body);
    }
    write(dir.path(), "promptfooconfig.yaml", text);
    let out = niceeval(dir.path(), &fake, &["-c", "promptfooconfig.yaml"]);
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).to_string(),
        String::from_utf8_lossy(&out.stderr).to_string(),
    )
}

#[test]
fn keys_that_only_tune_promptfoo_are_notices_not_refusals() {
    let (code, _, stderr) = run(
        "version: 1\nwriteLatestResults: true\nsharing: false\ncommandLineOptions: {maxConcurrency: 2}\n\
         prompts: [hi]\nproviders: [echo]\nevaluateOptions:\n  cache: false\n\
         tests:\n  - name: greeting\n    vars: {a: 1}\n    options:\n      timeout: 5000\n      runSerially: true\n    \
         assert:\n      - type: contains\n        value: hi\n",
        &[],
    );
    assert_eq!(code, Some(0), "{stderr}");
    for key in [
        "`version`",
        "`writeLatestResults`",
        "`sharing`",
        "`commandLineOptions`",
        "`cache` in evaluateOptions",
        "`name` in a test",
        "`timeout` in options",
        "`runSerially` in options",
    ] {
        assert!(
            stderr
                .lines()
                .any(|l| l.starts_with("note: ") && l.contains(key)),
            "no notice for {key} in:\n{stderr}"
        );
    }
}

#[test]
fn every_refusal_of_a_file_is_reported_at_once() {
    let (code, _, stderr) = run(
        "prompts: [hi]\nproviders: [echo]\nassertScoringFunction: x\ntests:\n  - assert:\n      - type: ruby\n        value: toxic\n  - options: {storeOutputAs: x}\n",
        &[],
    );
    assert_eq!(code, Some(2), "{stderr}");
    for want in [
        "promptfooconfig.yaml:3:24: `assertScoringFunction` in a promptfoo config is not supported",
        "promptfooconfig.yaml:6:9: assertion type `ruby` is not supported",
        "`storeOutputAs` in options is not supported",
    ] {
        assert!(stderr.contains(want), "wanted {want:?} in:\n{stderr}");
    }
}

#[test]
fn prompt_and_rubric_files_are_read_as_promptfoo_reads_them() {
    // `{label, raw: file://…}` and a bare path are the file's text (echo answers the prompt);
    // a rubric in a file is its text: "sorry" in it makes the fake grader fail the item.
    let (code, stdout, stderr) = run(
        "prompts:\n  - label: from-raw\n    raw: file://raw.txt\n  - prompt.txt\nproviders: [echo]\n\
         tests:\n  - description: files\n    vars: {city: Paris}\n    assert:\n      - type: contains\n        value: Paris\n      \
         - type: not-contains\n        value: file://\n      - type: not-contains\n        value: prompt.txt\n",
        &[
            ("raw.txt", "Raw prompt about {{city}}"),
            ("prompt.txt", "Bare prompt about {{city}}"),
        ],
    );
    assert_eq!(code, Some(0), "{stdout}\n{stderr}");
    let (code, stdout, stderr) = run(
        "prompts: [hi]\nproviders: [echo]\ntests:\n  - description: rubric\n    assert:\n      \
         - type: llm-rubric\n        description: graded from a file\n        value: file://rubric.txt\n",
        &[("rubric.txt", "Says sorry when it cannot help")],
    );
    assert_eq!(code, Some(101), "{stdout}\n{stderr}");
}

#[test]
fn bare_test_paths_load_their_tests() {
    let (code, stdout, stderr) = run(
        "prompts: ['Say {{word}}']\nproviders: [echo]\ntests: tests.csv\n",
        &[(
            "tests.csv",
            "word,__expected\nhello,contains:hello\nbye,contains:bye\n",
        )],
    );
    assert_eq!(code, Some(0), "{stdout}\n{stderr}");
    assert!(stdout.contains("2 passed"), "{stdout}");
}

#[test]
fn a_grader_that_answers_in_text_is_read() {
    // The fake's `text-only` model answers promptfoo's JSON verdict in a code fence, never a
    // tool call: passing for the first rubric, failing for the one that mentions "sorry".
    let (code, stdout, stderr) = run(
        "prompts: ['Tell me about {{city}}']\nproviders: [openai:chat:gpt-4o-mini]\n\
         defaultTest:\n  options:\n    provider: openai:chat:text-only\n\
         tests:\n  - description: kind\n    vars: {city: Paris}\n    assert:\n      - type: llm-rubric\n        value: is about Paris\n      \
         - type: factuality\n        value: Paris is in France\n\
         \n  - description: unkind\n    vars: {city: Rome}\n    assert:\n      - type: llm-rubric\n        value: says sorry\n",
        &[],
    );
    assert_eq!(code, Some(101), "{stdout}\n{stderr}");
    assert!(
        stdout.contains("1 passed") && stdout.contains("1 failed"),
        "{stdout}\n{stderr}"
    );
    assert!(!stdout.contains("neither"), "{stdout}");
}

#[test]
fn scenarios_cross_each_config_entry_with_each_test() {
    // Two entries × two tests: four tests, the entry's vars under the test's and its items
    // first; a file with scenarios and no tests runs no empty test.
    let (code, stdout, stderr) = run(
        "prompts: ['Translate {{input}} into {{language}}']\nproviders: [echo]\n\
         scenarios:\n  - config:\n      - vars: {language: French}\n        assert: [{type: icontains, value: translate}]\n      \
         - vars: {language: German}\n    tests:\n      - description: hello\n        vars: {input: Hello}\n        \
         assert: [{type: contains, value: '{{language}}'}]\n      - vars: {input: Bye, language: Dutch}\n        \
         assert: [{type: contains, value: Bye into Dutch}]\n",
        &[],
    );
    assert_eq!(code, Some(0), "{stdout}\n{stderr}");
    assert!(stdout.contains("4 passed"), "{stdout}");
}

#[test]
fn similar_compares_embeddings_from_the_grader_maps_embedding_model() {
    // The fake's embeddings count words: "Answer: Say hello world" is 0.87 similar to "hello
    // world", "Answer: Say goodbye" 0.41. The grader map names the chat and embedding graders.
    let (code, stdout, stderr) = run(
        "prompts: ['Say {{word}}']\nproviders: [openai:chat:gpt-4o-mini]\n\
         defaultTest:\n  options:\n    provider:\n      text: openai:chat:text-only\n      embedding: openai:embedding:fake-embedder\n\
         tests:\n  - description: close\n    vars: {word: hello world}\n    assert:\n      \
         - type: similar\n        value: hello world\n      - type: similar:cosine\n        value: [far away, Hello World]\n      \
         - type: llm-rubric\n        value: is a greeting\n\
         \n  - description: far\n    vars: {word: goodbye}\n    assert:\n      - type: not-similar\n        value: hello world\n      \
         - type: similar\n        value: hello world\n        threshold: 0.5\n",
        &[],
    );
    assert_eq!(code, Some(101), "{stdout}\n{stderr}");
    assert!(
        stdout.contains("1 passed") && stdout.contains("1 failed"),
        "{stdout}\n{stderr}"
    );
    assert!(
        stdout.contains("similarity 0.41 is below the threshold 0.5"),
        "{stdout}"
    );
}

#[test]
fn a_rubric_prompt_is_the_graders_prompt_with_the_tests_vars() {
    // The fake grades promptfoo's way ("user-specified rubric" in the prompt, no tool): a
    // verdict that fails when the request mentions "sorry" — here only through the prompt.
    let (code, stdout, stderr) = run(
        "prompts: ['Tell me about {{topic}}']\nproviders: [openai:chat:gpt-4o-mini]\n\
         defaultTest:\n  options:\n    rubricPrompt:\n      - role: system\n        \
         content: 'Grade against the user-specified rubric: {{rubric}}. Mood: {{mood}}'\n      \
         - role: user\n        content: 'Output: {{output}}'\n\
         tests:\n  - description: calm\n    vars: {topic: tea, mood: calm}\n    assert: [{type: llm-rubric, value: mentions tea}]\n  \
         - description: sad\n    vars: {topic: tea, mood: sorry}\n    assert: [{type: llm-rubric, value: mentions tea}]\n  \
         - description: own prompt\n    vars: {topic: tea}\n    assert:\n      - type: llm-rubric\n        \
         rubricPrompt: 'Use the user-specified rubric, and say sorry: {{output}}'\n",
        &[],
    );
    assert_eq!(code, Some(101), "{stdout}\n{stderr}");
    assert!(
        stdout.contains("1 passed") && stdout.contains("2 failed"),
        "{stdout}\n{stderr}"
    );
    assert!(!stdout.contains("neither"), "{stdout}");
}

#[test]
fn a_test_threshold_weighs_graded_items_with_the_others() {
    // Two passing items and a failing graded one score 0.67: the test passes at 0.6 and fails
    // at 0.9, whatever the graded item says alone.
    let test = |name: &str, threshold: f64| {
        format!(
            "  - description: {name}\n    threshold: {threshold}\n    vars: {{topic: tea}}\n    assert:\n      \
             - type: contains\n        value: tea\n      - type: icontains\n        value: TEA\n      \
             - type: llm-rubric\n        value: says sorry\n"
        )
    };
    let (code, stdout, stderr) = run(
        &format!(
            "prompts: ['Tell me about {{{{topic}}}}']\nproviders: [openai:chat:gpt-4o-mini]\ntests:\n{}{}",
            test("reaches", 0.6),
            test("misses", 0.9)
        ),
        &[],
    );
    assert_eq!(code, Some(101), "{stdout}\n{stderr}");
    assert!(
        stdout.contains("1 passed") && stdout.contains("1 failed"),
        "{stdout}\n{stderr}"
    );
    assert!(stdout.contains("aggregate score 0.67 < 0.9"), "{stdout}");
}

#[test]
fn select_best_asks_the_grader_once_with_every_output_of_the_test() {
    // Two prompts × two providers; the fake grader answers "2": the third output in promptfoo's
    // order (provider by provider), the second provider's first prompt, is the best.
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "answers.json",
        r#"[{"match": "the loudest", "answer": "The best is 2."}]"#,
    );
    write(
        dir.path(),
        "promptfooconfig.yaml",
        "prompts: ['Say {{x}}', 'Shout {{x}}']\nproviders: [openai:chat:one, openai:chat:two]\n\
         tests:\n  - description: loud\n    vars: {x: hi}\n    assert:\n      - type: select-best\n        value: the loudest\n      \
         - type: contains\n        value: hi\n",
    );
    let fake = Fake::with_answers(&dir.path().join("answers.json"));
    let out = niceeval(
        dir.path(),
        &fake,
        &["-c", "promptfooconfig.yaml", "-j", "1"],
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(101), "{stdout}\n{stderr}");
    assert!(
        stdout.contains("1 passed") && stdout.contains("3 failed"),
        "{stdout}\n{stderr}"
    );
    assert!(
        stdout.contains("loud [prompt 1, openai:chat:two]  passed")
            || stdout
                .lines()
                .any(|l| l.contains("loud [prompt 1, openai:chat:two]") && l.contains("passed")),
        "{stdout}"
    );
    assert!(
        stdout.contains("output not selected (output #2 was)"),
        "{stdout}"
    );
}

#[test]
fn a_prompt_object_without_raw_is_its_id() {
    // promptfoo takes `raw || id`: the id is the prompt's text (echo answers it), and a key
    // its schema does not know (`file`) is a notice.
    let (code, stdout, stderr) = run(
        "prompts:\n  - id: 'Say {{word}}'\n    label: by-id\n    file: file://other.txt\nproviders: [echo]\n\
         tests:\n  - vars: {word: hello}\n    assert:\n      - type: equals\n        value: Say hello\n",
        &[("other.txt", "Not this one")],
    );
    assert_eq!(code, Some(0), "{stdout}\n{stderr}");
    assert!(
        stderr
            .lines()
            .any(|l| l.starts_with("note: ") && l.contains("`file` in a prompt")),
        "{stderr}"
    );
}

#[test]
fn an_image_var_is_its_bytes_in_base64() {
    // promptfoo loads `file://x.png` (and other image and video files) as base64, no prefix.
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("pic.png"),
        [0x89, b'P', b'N', b'G', 0xff, 0x00],
    )
    .unwrap();
    write(
        dir.path(),
        "promptfooconfig.yaml",
        "prompts: ['Look: {{image}}']\nproviders: [echo]\n\
         tests:\n  - vars: {image: file://pic.png}\n    assert:\n      - type: equals\n        value: 'Look: iVBOR/8A'\n",
    );
    let fake = Fake::start();
    let out = niceeval(dir.path(), &fake, &["-c", "promptfooconfig.yaml"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");
}

#[test]
fn a_graded_items_transform_makes_what_it_grades() {
    // The fake grader fails a request that mentions "sorry": here only the transform adds it.
    // A transform that makes nothing (or throws) errors the test, as in promptfoo.
    let item = |transform: &str| {
        format!("    assert:\n      - type: llm-rubric\n        value: is about tea\n{transform}")
    };
    let (code, stdout, stderr) = run(
        &format!(
            "prompts: ['Tell me about tea']\nproviders: [echo]\ntests:\n  - description: plain\n{}\
             \n  - description: sorry\n{}\n  - description: nothing\n{}",
            item(""),
            item("        transform: output + ' sorry'\n"),
            item("        transform: output.missing\n"),
        ),
        &[],
    );
    assert_eq!(code, Some(101), "{stdout}\n{stderr}");
    assert!(
        stdout.contains("1 passed")
            && stdout.contains("2 failed")
            && stdout.contains("Transform function did not return a value"),
        "{stdout}\n{stderr}"
    );
}

/// A var computed by code (`file://make.py`'s `get_var`, `file://make.js`'s function) is its
/// output, as promptfoo computes it; `transformVars` makes more vars of a test's (before the
/// code vars are computed, as in promptfoo).
#[test]
fn vars_computed_by_code_and_transform_vars() {
    let (code, stdout, stderr) = run(
        "prompts: ['Say {{a}} {{b}} {{c}}']\nproviders: [echo]\n\
         defaultTest:\n  options:\n    transformVars: '{ ...vars, c: vars.d + \"!\" }'\n\
         tests:\n  - vars: {a: file://make.py, b: file://make.js, d: hi}\n    assert:\n\
         \x20     - type: equals\n        value: Say from-python from-js hi!\n",
        &[
            (
                "make.py",
                "def get_var(name, prompt, other):\n    return {'output': ' from-python '}\n",
            ),
            (
                "make.js",
                "module.exports = (name) => ({ output: 'from-js' });\n",
            ),
        ],
    );
    assert_eq!(code, Some(0), "{stdout}\n{stderr}");
    assert!(stdout.contains("1 passed"), "{stdout}");
}

/// An item of a type no reader knows errors its test when it runs, naming the type, its place
/// and the closest known name; the file's other tests run (promptfoo errors those rows and runs
/// the others), and one note names every unknown type of the file with the valid types.
#[test]
fn unknown_types_error_their_tests_and_are_named_together() {
    let (code, stdout, stderr) = run(
        "prompts: [hi]\nproviders: [echo]\ntests:\n  - assert:\n      - type: contans\n        value: hi\n\
         \x20 - assert:\n      - type: frobnicate\n  - assert:\n      - type: contains\n        value: hi\n",
        &[],
    );
    assert_eq!(code, Some(101), "{stdout}\n{stderr}");
    assert!(
        stdout.contains("1 passed") && stdout.contains("2 failed"),
        "{stdout}"
    );
    assert!(
        stdout.contains(
            "promptfooconfig.yaml:5:9: unknown assertion type `contans`; did you mean `contains`?"
        ),
        "{stdout}"
    );
    assert!(
        stderr.contains("2 unknown assertion types (`contans`, `frobnicate`)")
            && stderr.contains("Valid types: contains, icontains,")
            && stderr.contains("context-faithfulness"),
        "{stderr}"
    );
}

/// promptfoo's retrieval and conversation metrics run end to end: the loopback grader answers
/// each metric's prompt in the shape its scoring reads (`fake-answers.json`), and the scores are
/// promptfoo's counts: half the reference attributed, one of two context sentences quoted, one
/// of two statements supported, a relevant conversation; `not-llm-rubric` turns a pass over.
#[test]
fn rag_metrics_run_and_score_as_promptfoo_counts() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "promptfooconfig.yaml",
        "prompts: ['Answer {{query}}']\nproviders: [openai:chat:gpt-4o-mini]\n\
         tests:\n  - vars: {query: 'Where is Paris?', context: 'Paris is in France. Rome is in Italy.'}\n    assert:\n\
         \x20     - type: context-recall\n        value: 'Paris is in France. It has two million people.'\n\
         \x20     - type: context-relevance\n\
         \x20     - type: context-faithfulness\n\
         \x20     - type: conversation-relevance\n\
         \x20     - type: not-context-recall\n        value: 'Paris is in France. It has two million people.'\n        threshold: 0.9\n",
    );
    write(
        dir.path(),
        "fake-answers.json",
        r#"[{"match": "reference answer", "answer": "1. Paris is in France. [Attributed]\n2. It has two million people. [Not Attributed]"},
            {"match": "copy, word for word", "answer": "Paris is in France."},
            {"match": "standalone statements", "answer": "Paris is in France.\nThe sky is green."},
            {"match": "decide whether the context supports it", "answer": "Paris is in France. verdict: yes\nThe sky is green. verdict: no"},
            {"match": "last reply is relevant", "answer": "{\"verdict\": \"yes\"}"}]"#,
    );
    let fake = Fake::with_answers(&dir.path().join("fake-answers.json"));
    let out = niceeval(
        dir.path(),
        &fake,
        &["-c", "promptfooconfig.yaml", "--jsonl", "o.jsonl"],
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");
    let jsonl = std::fs::read_to_string(dir.path().join("o.jsonl")).unwrap();
    let record: serde_json::Value = jsonl
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .find(|r: &serde_json::Value| r["id"].is_string())
        .expect("the case's record");
    let scores: Vec<(String, f64)> = record["assertions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| {
            (
                a["name"].as_str().unwrap_or("").to_string(),
                a["score"].as_f64().unwrap_or(-1.0),
            )
        })
        .collect();
    let score = |name: &str| {
        scores
            .iter()
            .find(|(n, _)| n.starts_with(name))
            .map(|(_, s)| *s)
            .unwrap_or_else(|| panic!("no {name} in {scores:?}"))
    };
    assert_eq!(score("context-recall"), 0.5);
    assert_eq!(score("context-relevance"), 0.5);
    assert_eq!(score("context-faithfulness"), 0.5);
    assert_eq!(score("conversation-relevance"), 1.0);
    // Inverted: 1 - 0.5, passing because recall 0.5 is under 0.9.
    assert_eq!(score("not-context-recall"), 0.5);
}

/// `file://` paths inside a tests file are the config's, as promptfoo resolves them (its one
/// base path is the config's folder), not the tests file's.
#[test]
fn paths_in_a_tests_file_are_read_from_the_configs_folder() {
    let suite = "prompts: ['Say {{word}}']\nproviders: [echo]\ntests: file://cases/tests.yaml\n";
    let tests = "- vars: {word: file://words/hello.txt}\n  assert:\n    - type: equals\n      value: Say hello\n";
    let (code, stdout, stderr) = run(
        suite,
        &[
            ("cases/tests.yaml", tests),
            // Where promptfoo looks: beside the config, not beside the tests file.
            ("words/hello.txt", "hello\n"),
        ],
    );
    assert_eq!(code, Some(0), "{stdout}\n{stderr}");
    assert!(stdout.contains("1 passed"), "{stdout}");
}

/// A prompt whose template cannot be rendered errors its own cases; the file's other prompts
/// run, as promptfoo errors that prompt's rows and runs the others.
#[test]
fn a_broken_prompt_template_errors_its_cases_and_the_others_run() {
    let suite = "prompts:\n  - 'Say {{word}}'\n  - 'Say {{ word | no_such_filter }}'\nproviders: [echo]\n\
                 tests:\n  - vars: {word: hi}\n    assert:\n      - type: contains\n        value: hi\n";
    let (code, stdout, stderr) = run(suite, &[]);
    // Not a refused file (exit 2): the suite ran, and the broken prompt's case failed.
    assert_eq!(code, Some(101), "{stdout}\n{stderr}");
    assert!(
        stdout.contains("1 passed") && stdout.contains("1 failed"),
        "{stdout}"
    );
    assert!(
        stdout.contains("no_such_filter") || stdout.contains("unknown filter"),
        "the case's error names the template's problem:\n{stdout}"
    );
}
