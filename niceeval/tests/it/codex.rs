//! The Codex adapter against the real `codex` program, talking to a loopback fake of the OpenAI
//! Responses API (`support::fake_responses`) whose scripted replies make Codex run its real
//! tools in a temporary working copy.
//!
//! Without `codex` on `PATH` the tests print a skip notice, or fail under `CI` (install it with
//! `bash scripts/install-codex.sh`). With `NICEEVAL_RECORD_CODEX=1` they also write Codex's raw
//! stdout to `niceeval/tests/data/codex/<scenario>.jsonl`, the recordings the parser tests read.
#![cfg(unix)]

use crate::support::rt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use niceeval::__workspace::workspace::{Isolation, Sandbox};
use niceeval::agent::codex::Codex;
use niceeval::agent::{Agent, EventSink, Request};
use niceeval::{ActionKind, ActionStatus, Eval, Event};
use serde_json::Value;

use crate::support::fake_responses::{
    self as fake, CACHED_TOKENS, INPUT_TOKENS, OUTPUT_TOKENS, apply_patch, message, reasoning,
    respond, shell,
};
use crate::support::{FakeProvider, Reply, Seen};

/// The environment variable the fake provider's key is read from.
const KEY_VAR: &str = "NICEEVAL_FAKE_OPENAI_KEY";
/// A model Codex has metadata for (so it offers its `apply_patch` tool).
const MODEL: &str = "gpt-5.5";

/// The `codex` program on `PATH`; `None` (after a notice) when it is missing, a failure under CI.
fn codex_program() -> Option<PathBuf> {
    let found = std::env::var_os("PATH").and_then(|path| {
        std::env::split_paths(&path)
            .map(|dir| dir.join("codex"))
            .find(|candidate| candidate.is_file())
    });
    crate::scripts_support::available(
        found.is_some(),
        "the Codex CLI (`codex`) on PATH",
        "bash scripts/install-codex.sh installs the pinned version",
    );
    found
}

/// A fake Responses API, a `CODEX_HOME` pointing Codex at it, and a working copy.
struct Setup {
    fake: FakeProvider,
    home: tempfile::TempDir,
    work: tempfile::TempDir,
    program: PathBuf,
}

impl Setup {
    fn new(responder: impl Fn(&Seen) -> Reply + Send + Sync + 'static) -> Option<Setup> {
        let program = codex_program()?;
        // Commands that outlive their yield window are waited for (see `fake::finishing`).
        let responder = fake::finishing(responder);
        let fake = FakeProvider::start(move |_, seen| responder(seen));
        // Not under /tmp: Codex refuses to install its sandbox helper (`codex-linux-sandbox`)
        // from a CODEX_HOME in a temporary directory, and `workspace-write` then fails.
        let home = tempfile::tempdir_in(crate::support::outside_tmp()).unwrap();
        let config = format!(
            r#"model_provider = "fake"
check_for_update_on_startup = false

[model_providers.fake]
name = "fake"
base_url = "{url}/v1"
wire_api = "responses"
env_key = "{KEY_VAR}"
request_max_retries = 0
stream_max_retries = 0

[analytics]
enabled = false
"#,
            url = fake.url
        );
        std::fs::write(home.path().join("config.toml"), config).unwrap();
        let work = tempfile::tempdir().unwrap();
        Some(Setup {
            fake,
            home,
            work,
            program,
        })
    }

    /// The agent, recording its raw stdout as `scenario` when `NICEEVAL_RECORD_CODEX` is set.
    fn agent(&self, scenario: Option<&str>) -> Codex {
        let agent = Codex::new()
            .model(MODEL)
            .env("CODEX_HOME", self.home.path().to_string_lossy())
            .env(KEY_VAR, "sk-fake-key");
        if std::env::var_os("NICEEVAL_RECORD_CODEX").is_none() {
            return agent.program(self.program.to_string_lossy());
        }
        // A wrapper that copies Codex's stdout to $NICEEVAL_RECORD_TO.
        let wrapper = self.home.path().join("record.sh");
        std::fs::write(
            &wrapper,
            format!(
                "#!/usr/bin/env bash\n{program:?} \"$@\" | tee \"${{NICEEVAL_RECORD_TO:-/dev/null}}\"\nexit \"${{PIPESTATUS[0]}}\"\n",
                program = self.program,
            ),
        )
        .unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&wrapper, std::fs::Permissions::from_mode(0o755)).unwrap();
        let agent = agent.program(wrapper.to_string_lossy());
        match scenario {
            Some(scenario) => recording(agent, scenario),
            None => agent,
        }
    }

    /// A request in the working copy.
    fn request(&self, text: &str, sink: &EventSink) -> Request {
        Request::new(text, sink.clone()).with_sandbox(Sandbox::new(
            self.work.path(),
            Isolation::Local,
            true,
        ))
    }
}

fn shell_results(events: &[Event]) -> Vec<(String, ActionStatus, Value)> {
    let commands: Vec<(String, String)> = events
        .iter()
        .filter_map(|e| match e {
            Event::ActionCalled {
                call_id,
                name,
                input,
            } if ActionKind::of(name, input) == ActionKind::Shell => Some((
                call_id.clone(),
                input["command"].as_str().unwrap_or_default().to_string(),
            )),
            _ => None,
        })
        .collect();
    commands
        .into_iter()
        .filter_map(|(id, command)| {
            events.iter().find_map(|e| match e {
                Event::ActionResult {
                    call_id,
                    status,
                    output,
                } if *call_id == id => Some((command.clone(), *status, output.clone())),
                _ => None,
            })
        })
        .collect()
}

const FIX_PROMPT: &str = "Create greeting.txt saying hello and check it.";

fn fix_script(seen: &Seen) -> Reply {
    match fake::step(seen) {
        0 => respond(vec![
            reasoning("Write the file, then check it."),
            apply_patch(
                "call_write",
                "*** Begin Patch\n*** Add File: greeting.txt\n+helo\n*** End Patch\n",
            ),
        ]),
        1 => respond(vec![shell("call_check", "grep -q hello greeting.txt")]),
        2 => respond(vec![apply_patch(
            "call_fix",
            "*** Begin Patch\n*** Update File: greeting.txt\n@@\n-helo\n+hello\n*** End Patch\n",
        )]),
        3 => respond(vec![shell("call_recheck", "grep hello greeting.txt")]),
        _ => respond(vec![message("greeting.txt now says hello.")]),
    }
}

#[test]
fn codex_writes_a_file_fails_a_command_fixes_it_and_answers() {
    let Some(setup) = Setup::new(fix_script) else {
        return;
    };
    let agent = setup.agent(Some("fix"));
    let sink = EventSink::default();
    let outcome = rt().block_on(agent.send(setup.request(FIX_PROMPT, &sink)));
    let events = sink.snapshot();
    outcome.unwrap_or_else(|e| panic!("the turn failed: {e}\nevents: {events:#?}"));

    let written = std::fs::read_to_string(setup.work.path().join("greeting.txt")).unwrap();
    assert_eq!(written.trim(), "hello");

    let shells = shell_results(&events);
    assert_eq!(shells.len(), 2, "{events:#?}");
    assert!(
        shells[0].0.contains("grep -q hello greeting.txt"),
        "{shells:?}"
    );
    assert_eq!(shells[0].1, ActionStatus::Failed, "{shells:?}");
    assert_eq!(shells[0].2["exit_code"], 1, "{shells:?}");
    assert_eq!(shells[1].1, ActionStatus::Completed, "{shells:?}");
    assert!(
        shells[1].2["output"]
            .as_str()
            .unwrap_or_default()
            .contains("hello")
    );

    let file_kinds: Vec<ActionKind> = events
        .iter()
        .filter_map(|e| match e {
            Event::ActionCalled { name, input, .. } if name == "file_change" => {
                Some(ActionKind::of(name, input))
            }
            _ => None,
        })
        .collect();
    assert_eq!(
        file_kinds,
        [ActionKind::FileWrite, ActionKind::FileEdit],
        "{events:#?}"
    );
    assert!(events.contains(&Event::Thinking {
        text: "Write the file, then check it.".into()
    }));
    assert_eq!(
        events.last(),
        Some(&Event::Usage {
            input_tokens: 5 * INPUT_TOKENS,
            output_tokens: 5 * OUTPUT_TOKENS,
            cache_read_tokens: 5 * CACHED_TOKENS,
            cost_usd: None,
            model: Some(format!("openai/{MODEL}")),
        }),
        "{events:#?}"
    );
    assert!(events.contains(&Event::assistant("greeting.txt now says hello.")));
    // The fake saw the failing command's output before the fix: five model calls answered
    // by the script (and any the fake answered with a poll of a slow command).
    let seen = setup.fake.seen();
    assert_eq!(seen.iter().filter(|s| fake::scripted(s)).count(), 5);
    assert!(seen.iter().all(|s| s.path == "/v1/responses"), "{seen:?}");
}

#[test]
fn codex_runs_parallel_tool_calls() {
    let Some(setup) = Setup::new(|seen| match fake::step(seen) {
        0 => respond(vec![
            shell("call_one", "sleep 0.5; echo one"),
            shell("call_two", "sleep 0.5; echo two"),
        ]),
        _ => respond(vec![message("Both ran.")]),
    }) else {
        return;
    };
    let agent = setup.agent(Some("parallel"));
    let sink = EventSink::default();
    let outcome = rt().block_on(agent.send(setup.request("Run two commands at once.", &sink)));
    let events = sink.snapshot();
    outcome.unwrap_or_else(|e| panic!("the turn failed: {e}\nevents: {events:#?}"));
    let mut outputs: Vec<String> = shell_results(&events)
        .into_iter()
        .map(|(_, status, output)| {
            assert_eq!(status, ActionStatus::Completed);
            output["output"]
                .as_str()
                .unwrap_or_default()
                .trim()
                .to_string()
        })
        .collect();
    outputs.sort();
    assert_eq!(outputs, ["one", "two"], "{events:#?}");
    assert!(events.contains(&Event::assistant("Both ran.")));
}

#[test]
fn codex_failed_response_fails_the_turn() {
    let Some(setup) = Setup::new(|_| fake::failed("The fake model refuses.")) else {
        return;
    };
    let agent = setup.agent(Some("failed"));
    let sink = EventSink::default();
    let err = rt()
        .block_on(agent.send(setup.request("This will fail.", &sink)))
        .expect_err("the turn fails");
    assert!(
        err.message().contains("The fake model refuses."),
        "{err}\nevents: {:#?}",
        sink.snapshot()
    );
    assert!(err.message().starts_with("codex: "), "{err}");
}

#[test]
fn codex_http_error_fails_the_turn() {
    let Some(setup) = Setup::new(|_| {
        Reply::status(
            400,
            r#"{"error":{"message":"Unsupported parameter: fake","type":"invalid_request_error","code":null}}"#,
        )
    }) else {
        return;
    };
    let agent = setup.agent(None);
    let sink = EventSink::default();
    let err = rt()
        .block_on(agent.send(setup.request("Hello.", &sink)))
        .expect_err("the turn fails");
    assert!(
        err.message().contains("Unsupported parameter: fake"),
        "{err}"
    );
    assert_eq!(setup.fake.count(), 1, "a 400 is not retried");
}

#[test]
fn codex_second_send_resumes_the_thread_and_a_new_session_starts_fresh() {
    let Some(setup) = Setup::new(|seen| {
        let prompt = fake::last_user_text(seen);
        let history = seen.body["input"].to_string();
        if prompt.contains("What was the word") {
            let word = if history.contains("apricot") {
                "apricot"
            } else {
                "I do not know"
            };
            respond(vec![message(word)])
        } else {
            respond(vec![message("Noted.")])
        }
    }) else {
        return;
    };
    let agent = setup.agent(Some("resume"));
    let rt = rt();
    let first = EventSink::default();
    rt.block_on(agent.send(setup.request("Remember the word apricot.", &first)))
        .unwrap();
    let thread = agent.thread_id("session-1").expect("a thread id");
    let second = EventSink::default();
    // A clone shares the session → thread map.
    let recorder = recording(agent.clone(), "resume-2");
    rt.block_on(recorder.send(setup.request("What was the word?", &second)))
        .unwrap();
    assert!(
        second.snapshot().contains(&Event::assistant("apricot")),
        "{:#?}",
        second.snapshot()
    );
    assert_eq!(
        agent.thread_id("session-1").as_deref(),
        Some(thread.as_str())
    );
    // The resumed turn's usage is that turn's alone.
    assert!(second.snapshot().contains(&Event::Usage {
        input_tokens: INPUT_TOKENS,
        output_tokens: OUTPUT_TOKENS,
        cache_read_tokens: CACHED_TOKENS,
        cost_usd: None,
        model: Some(format!("openai/{MODEL}")),
    }));

    // Another session: a new thread that knows nothing of the first.
    let third = EventSink::default();
    let mut request = setup.request("What was the word?", &third);
    request.session = "session-2".to_string();
    rt.block_on(recording(agent.clone(), "new-session").send(request))
        .unwrap();
    assert!(
        third
            .snapshot()
            .contains(&Event::assistant("I do not know"))
    );
    assert_ne!(agent.thread_id("session-2"), Some(thread));
}

/// `agent` writing its raw stdout to `tests/data/codex/<scenario>.jsonl` when recording.
fn recording(agent: Codex, scenario: &str) -> Codex {
    if std::env::var_os("NICEEVAL_RECORD_CODEX").is_none() {
        return agent;
    }
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/codex");
    std::fs::create_dir_all(&dir).unwrap();
    agent.env(
        "NICEEVAL_RECORD_TO",
        dir.join(format!("{scenario}.jsonl")).to_string_lossy(),
    )
}

/// A crate whose test fails until `add` is fixed: the template of the workspace evals.
fn todo_crate(template: &Path) {
    crate::scripts_support::write(
        template,
        "Cargo.toml",
        "[package]\nname = \"todo\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[workspace]\n",
    );
    crate::scripts_support::write(template, ".gitignore", "target/\nCargo.lock\n");
    crate::scripts_support::write(
        template,
        "src/lib.rs",
        "pub fn add(a: i32, b: i32) -> i32 {\n    a + b + 1\n}\n\n#[cfg(test)]\nmod tests {\n    #[test]\n    fn adds() {\n        assert_eq!(super::add(2, 2), 4);\n    }\n}\n",
    );
}

/// Codex runs the failing tests, patches `add`, runs them again and answers (relative paths:
/// Codex works in the run's working copy).
fn fix_crate_script(seen: &Seen) -> Reply {
    let test = "cargo test --offline --quiet 2>&1 | tail -3; exit ${PIPESTATUS[0]}";
    match fake::step(seen) {
        0 => respond(vec![shell("call_test", test)]),
        1 => respond(vec![apply_patch(
            "call_fix",
            "*** Begin Patch\n*** Update File: src/lib.rs\n@@\n-    a + b + 1\n+    a + b\n*** End Patch\n",
        )]),
        2 => respond(vec![shell("call_retest", test)]),
        _ => respond(vec![message("Fixed `add`: the tests pass.")]),
    }
}

fn codex_fixes_the_crate(t: &mut Eval) -> niceeval::__private::BoxFuture<'_, niceeval::Result> {
    Box::pin(async move {
        let turn = t.send("Make `cargo test` pass.").await?;
        t.file_changed("src/lib.rs");
        turn.file_changed("src/lib.rs");
        t.diff_is_empty(); // fails: the agent changed src/lib.rs
        t.called_tool("command_execution").count(2);
        t.called_tool("file_change")
            .input(niceeval::json!({"path": "src/lib.rs"}));
        let tests = t.run_tests(["cargo", "test", "--offline"]).await?;
        assert_eq!((tests.passed(), tests.failed()), (1, 0));
        t.no_failed_shell_commands(); // fails: the first test run
        Ok(())
    })
}

#[test]
fn codex_in_a_workspace_eval_is_scored_by_its_diff_its_commands_and_the_tests() {
    static SETUP: std::sync::OnceLock<Setup> = std::sync::OnceLock::new();
    let Some(setup) = Setup::new(fix_crate_script) else {
        return;
    };
    if !crate::scripts_support::have("cargo") {
        return;
    }
    let _ = SETUP.set(setup);
    fn make() -> Arc<dyn Agent> {
        Arc::new(SETUP.get().expect("set up").agent(None))
    }
    let krate = crate::support::Crate::new("");
    todo_crate(&krate.path().join("template"));
    let def = crate::support::define("codex_fixes_the_crate", &krate, codex_fixes_the_crate)
        .with_workspace("template")
        .with_agent(make);
    let report = crate::support::run(def);
    assert!(report.error.is_none(), "{:#?}", report.error);
    let verdict = |name: &str| {
        report
            .assertions
            .iter()
            .find(|a| a.name == name)
            .unwrap_or_else(|| panic!("no {name}: {:#?}", report.assertions))
    };
    assert!(verdict("file_changed(\"src/lib.rs\")").passed);
    assert!(verdict("turn 1: file_changed(\"src/lib.rs\")").passed);
    assert!(!verdict("diff_is_empty()").passed);
    assert!(verdict("called_tool(\"command_execution\").count(2)").passed);
    assert!(verdict("test tests::adds").passed);
    let shell = verdict("no_failed_shell_commands()");
    assert!(!shell.passed);
    assert!(
        shell.reason.contains("1 of 2 shell command(s) failed"),
        "{}",
        shell.reason
    );
    assert_eq!(report.usage.input_tokens, 4 * INPUT_TOKENS);
    assert_eq!(report.usage.cache_read_tokens, 4 * CACHED_TOKENS);
    if let Some(kept) = &report.runs[0].workspace {
        let _ = std::fs::remove_dir_all(std::path::Path::new(kept).parent().unwrap());
    }
}

#[test]
fn codex_timeout_kills_the_process_group() {
    // The fake says when Codex's model call arrived, and answers 30 s after it.
    let (asked, was_asked) = std::sync::mpsc::channel();
    let Some(setup) = Setup::new(move |_| {
        let _ = asked.send(());
        respond(vec![message("too late")]).delay(std::time::Duration::from_secs(30))
    }) else {
        return;
    };
    let timeout = std::time::Duration::from_secs(3);
    let agent = setup.agent(None).timeout(timeout);
    let sink = EventSink::default();
    // The timeout fires once Codex has made its model call (however long it took to start),
    // so it ends a Codex that is up and waiting, not one still starting.
    let (outcome, reached) = crate::support::time_out_once(
        move || was_asked.try_recv().is_ok(),
        timeout,
        agent.send(setup.request("Take your time.", &sink)),
    );
    let ended = std::time::Instant::now();
    assert!(
        reached.is_some(),
        "Codex made no model call within {:?} (or its turn ended first: {outcome:?})",
        crate::support::REACH_LIMIT
    );
    let err = outcome.expect_err("the turn times out");
    assert!(
        err.message()
            .starts_with("codex did not finish within 3s and was killed"),
        "{err}"
    );
    // Cut short: the model answers 30 s after it was asked.
    let asked_at = setup.fake.seen()[0].at;
    assert!(
        ended - asked_at < std::time::Duration::from_secs(25),
        "the turn ended {:?} after the model call",
        ended - asked_at
    );
    assert_eq!(setup.fake.count(), 1, "the model call was made");
    // Codex and everything it started were killed with the process group: no process is left
    // with this test's CODEX_HOME in its environment.
    let marker = format!("CODEX_HOME={}", setup.home.path().display());
    let mut left = Vec::new();
    // Up to 30 s for the kernel to end them (a wait for a condition: fast when they are gone).
    for _ in 0..300 {
        left = processes_with_env(&marker);
        if left.is_empty() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    assert!(left.is_empty(), "still running: {left:?}");
}

/// The pids of processes whose environment holds `entry` (`KEY=value`).
fn processes_with_env(entry: &str) -> Vec<u32> {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.filter_map(Result::ok)
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/environ"))
                .is_ok_and(|env| env.split(|b| *b == 0).any(|var| var == entry.as_bytes()))
        })
        .collect()
}

#[test]
fn codex_notices_are_kept_as_custom_events() {
    let Some(setup) = Setup::new(|_| respond(vec![message("Done.")])) else {
        return;
    };
    // A model Codex has no metadata for: it says so in an `error` item and carries on.
    let agent = setup.agent(Some("notice")).model("niceeval-unknown-model");
    let sink = EventSink::default();
    rt().block_on(agent.send(setup.request("Hello.", &sink)))
        .unwrap();
    let events = sink.snapshot();
    assert!(
        events.iter().any(|e| matches!(
            e,
            Event::Custom { name, data } if name == "codex:error"
                && data["message"].as_str().unwrap_or_default().contains("niceeval-unknown-model")
        )),
        "{events:#?}"
    );
    assert!(events.contains(&Event::assistant("Done.")));
}

/// Codex under bubblewrap: its home is the run's private HOME (the provider pointing at the
/// fake is given with `-c` overrides, so no `CODEX_HOME` outside the sandbox is needed), its own
/// sandbox is off (`danger-full-access`: bwrap is the sandbox), and it reaches the fake on the
/// host's loopback with `network = true`.
#[test]
fn codex_under_bubblewrap_works_in_the_copy() {
    static FAKE: std::sync::OnceLock<(FakeProvider, PathBuf)> = std::sync::OnceLock::new();
    let Some(program) = codex_program() else {
        return;
    };
    if !crate::scripts_support::have("cargo") || !crate::workspace::bwrap_works() {
        return;
    }
    let script = fake::finishing(fix_crate_script);
    let fake = FakeProvider::start(move |_, seen| script(seen));
    let _ = FAKE.set((fake, program));
    fn make() -> Arc<dyn Agent> {
        let (fake, program) = FAKE.get().expect("started");
        let provider: toml::Table = toml::from_str(&format!(
            "name = \"fake\"\nbase_url = \"{}/v1\"\nwire_api = \"responses\"\nenv_key = \"{KEY_VAR}\"\nrequest_max_retries = 0\nstream_max_retries = 0\n",
            fake.url
        ))
        .unwrap();
        Arc::new(
            Codex::new()
                .model(MODEL)
                .program(program.to_string_lossy())
                .config("model_provider", "fake")
                .config("model_providers.fake", provider)
                .config("check_for_update_on_startup", false)
                .config("analytics.enabled", false)
                .env(KEY_VAR, "sk-fake-key"),
        )
    }
    let krate = crate::support::Crate::new(
        "[workspace]\nisolation = \"bubblewrap\"\nnetwork = true\nkeep = \"never\"\n",
    );
    todo_crate(&krate.path().join("template"));
    let def = crate::support::define("codex_fixes_the_crate", &krate, codex_fixes_the_crate)
        .with_workspace("template")
        .with_agent(make);
    let report = crate::support::run(def);
    assert!(report.error.is_none(), "{:#?}", report.error);
    let test = report
        .assertions
        .iter()
        .find(|a| a.name == "test tests::adds")
        .expect("the tests ran");
    assert!(test.passed, "{test:?}");
    assert!(
        report
            .assertions
            .iter()
            .any(|a| a.name == "turn 1: file_changed(\"src/lib.rs\")" && a.passed),
        "{:#?}",
        report.assertions
    );
}
