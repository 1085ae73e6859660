//! Prompts as promptfoo makes them, each from a few-line suite against the loopback fake: chat
//! prompts with their vars rendered inside the JSON and every turn sent, vars without their
//! trailing newline, prompt files with theirs, prompt functions in JavaScript and Python, and
//! `file://` JSON Schemas on `is-json` / `contains-json`.

use std::path::Path;

use super::support::{Fake, available, niceeval};

/// Runs the suite `text` (with `files` beside it); returns exit code, stdout and stderr.
fn run(text: &str, files: &[(&str, &str)]) -> (Option<i32>, String, String) {
    let fake = Fake::start();
    let dir = tempfile::tempdir().unwrap();
    for (name, body) in files.iter().chain([&("promptfooconfig.yaml", text)]) {
        let path = dir.path().join(name);
        std::fs::create_dir_all(path.parent().unwrap_or(Path::new("."))).unwrap();
        std::fs::write(path, body).unwrap();
    }
    let out = niceeval(dir.path(), &fake, &["-c", "promptfooconfig.yaml"]);
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).to_string(),
        String::from_utf8_lossy(&out.stderr).to_string(),
    )
}

/// A chat prompt with a system message and an earlier assistant turn; its var holds quotes
/// and a newline.
const CHAT: &str = r#"[{"role": "system", "content": "You are {{persona}}"}, {"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hello"}, {"role": "user", "content": "count the turns: {{q}}"}]"#;

#[test]
fn a_chat_prompt_takes_its_vars_inside_its_json_and_sends_every_turn() {
    // The fake counts the user and assistant messages it gets; echo answers the prompt itself,
    // which is promptfoo's rendering (JSON indented by two spaces, keys as written, the var's
    // quotes and newline escaped).
    let vars = "tests:\n  - vars:\n      persona: terse\n      q: |-\n        say \"yes\"\n        please\n";
    let (code, stdout, stderr) = run(
        &format!(
            "prompts: [file://chat.json]\nproviders: [openai:chat:gpt-4o-mini]\n{vars}{}",
            "    assert:\n      - type: contains\n        value: 'turns: 3'\n"
        ),
        &[("chat.json", CHAT)],
    );
    assert_eq!(code, Some(0), "{stdout}\n{stderr}");
    let (code, stdout, stderr) = run(
        &format!(
            "prompts: [file://chat.json]\nproviders: [echo]\n{vars}{}",
            r#"    assert:
      - type: is-json
      - type: contains
        value: "\"role\": \"system\",\n    \"content\": \"You are terse\""
      - type: contains
        value: "count the turns: say \\\"yes\\\"\\nplease"
"#
        ),
        &[("chat.json", CHAT)],
    );
    assert_eq!(code, Some(0), "{stdout}\n{stderr}");
}

#[test]
fn vars_lose_one_trailing_newline_and_prompt_files_keep_theirs() {
    // promptfoo drops one trailing newline of each string var; a Markdown prompt file is sent
    // as written, its last newline included; a text file is trimmed.
    let (code, stdout, stderr) = run(
        "prompts: ['[{{word}}]', file://prompt.md, file://prompt.txt]\nproviders: [echo]\n\
         tests:\n  - vars:\n      word: |\n        hello\n    assert:\n      \
         - type: equals\n        value: '[hello]'\n\
         \n  - vars:\n      word: |\n        hello\n    assert:\n      \
         - type: regex\n        value: '^(\\[hello\\]|Say hello\\n|Said hello)$'\n",
        &[
            ("prompt.md", "Say {{word}}\n"),
            ("prompt.txt", "\nSaid {{word}}\n\n"),
        ],
    );
    assert_eq!(code, Some(101), "{stdout}\n{stderr}");
    // The `equals` of the first test passes for the inline prompt only; the second test
    // passes for all three.
    assert!(
        stdout.contains("4 passed") && stdout.contains("2 failed"),
        "{stdout}\n{stderr}"
    );
}

fn have(program: &str) -> bool {
    available(
        niceeval_has(program),
        program,
        "install Node.js and Python 3 (scripts/install-test-deps.sh)",
    )
}

fn niceeval_has(program: &str) -> bool {
    std::process::Command::new(program)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

#[test]
fn prompt_functions_make_the_prompt_in_javascript_and_python() {
    if !have("node") || !have("python3") {
        return;
    }
    let files = [
        (
            "prompts.mjs",
            "export function chat({ vars, provider }) {\n  return [\n    { role: 'system', content: 'Be brief' },\n    { role: 'user', content: `count the turns about ${vars.topic} for ${provider.id}` },\n  ];\n}\n",
        ),
        // A default export, whose text is a template rendered with the vars.
        (
            "prompts.cjs",
            "module.exports = async (context) => 'Tell me about {{topic}} (' + context.provider.id + ')';\n",
        ),
        (
            "prompts.py",
            "def make(context):\n    return {'prompt': 'Python on ' + context['vars']['topic'] + ' for ' + context['provider']['id']}\n",
        ),
    ];
    // The provider is a mapping: promptfoo gives a function the id of a provider written as
    // text in its own form (`openai:gpt-4o-mini`), and niceeval the id as written.
    let (code, stdout, stderr) = run(
        "prompts: [file://prompts.mjs:chat, file://prompts.cjs, prompts.py:make]\n\
         providers: [{id: 'openai:chat:gpt-4o-mini'}]\n\
         tests:\n  - vars: {topic: bees}\n    assert:\n      - type: icontains-any\n        \
         value: ['turns: 1', 'Answer: Tell me about bees (openai:chat:gpt-4o-mini)', 'Answer: Python on bees for openai:chat:gpt-4o-mini']\n",
        &files,
    );
    assert_eq!(code, Some(0), "{stdout}\n{stderr}");
    assert!(stdout.contains("3 passed"), "{stdout}\n{stderr}");
    // The echo provider answers the prompt the function made: chat messages as promptfoo
    // writes them.
    let (code, stdout, stderr) = run(
        "prompts: [file://prompts.mjs:chat]\nproviders: [echo]\n\
         tests:\n  - vars: {topic: bees}\n    assert:\n      - type: starts-with\n        \
         value: \"[\\n  {\\n    \\\"role\\\": \\\"system\\\",\\n    \\\"content\\\": \\\"Be brief\\\"\\n  },\"\n",
        &files,
    );
    assert_eq!(code, Some(0), "{stdout}\n{stderr}");
    // A file that is not there is refused when the suite loads, naming the prompt; a
    // function that is not there fails its case, naming the file and the function.
    let (code, _, stderr) = run(
        "prompts: [file://gone.mjs:chat]\nproviders: [echo]\ntests:\n  - vars: {topic: bees}\n",
        &files,
    );
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains("promptfooconfig.yaml:1:")
            && stderr.contains("prompt file://gone.mjs:chat")
            && stderr.contains("gone.mjs does not exist"),
        "{stderr}"
    );
    let (code, stdout, stderr) = run(
        "prompts: [file://prompts.mjs:nope, file://prompts.py:nope]\nproviders: [echo]\n\
         tests:\n  - vars: {topic: bees}\n",
        &files,
    );
    assert_eq!(code, Some(101), "{stdout}\n{stderr}");
    for want in [
        "the prompt function file://prompts.mjs:nope",
        "exports no function `nope`",
        "the prompt function file://prompts.py:nope",
        "has no function `nope`",
    ] {
        assert!(stdout.contains(want), "no {want:?} in:\n{stdout}\n{stderr}");
    }
}

#[test]
fn json_schemas_in_files_check_is_json_and_contains_json() {
    // The fake answers a prompt asking for JSON with {"answer", "words"}.
    let files = [
        (
            "schema.json",
            r#"{"type": "object", "required": ["answer", "words"]}"#,
        ),
        ("strict.yaml", "type: object\nrequired: [colour]\n"),
        (
            "tests/cases.yaml",
            "- description: fits\n  vars: {x: cats}\n  assert:\n    - type: is-json\n      value: file://schema.json\n\
             - description: does not fit\n  vars: {x: dogs}\n  assert:\n    - type: contains-json\n      value: file://strict.yaml\n",
        ),
    ];
    let suite = "prompts: ['Give json about {{x}}']\nproviders: [openai:chat:gpt-4o-mini]\ntests: file://tests/cases.yaml\n";
    let (code, stdout, stderr) = run(suite, &files);
    assert_eq!(code, Some(101), "{stdout}\n{stderr}");
    assert!(
        stdout.contains("1 passed") && stdout.contains("1 failed"),
        "{stdout}\n{stderr}"
    );
    // A schema that is not there is an error at the item that names it.
    let (code, _, stderr) = run(
        suite,
        &[(
            "tests/cases.yaml",
            "- vars: {x: cats}\n  assert:\n    - type: is-json\n      value: file://absent.json\n",
        )],
    );
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains("cases.yaml:3:7: the schema file://absent.json does not exist"),
        "{stderr}"
    );
}
