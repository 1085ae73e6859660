//! Coding agents under test: the real Claude Code and Codex programs hand the same task as the
//! workspace evals — add `TodoList::complete` to a copy of `fixtures/todo-app` — and are scored
//! by their diff, their shell commands and the crate's tests, hidden ones included.
//!
//! They call a paid model, so they run only when asked: install the program
//! (`npm install -g @anthropic-ai/claude-code` / `@openai/codex`, or
//! `bash scripts/install-claude-code.sh` / `scripts/install-codex.sh`), put the key in the
//! environment (`ANTHROPIC_API_KEY` / `OPENAI_API_KEY`) and set `NICEEVAL_LIVE_AGENTS=1`.
//! Otherwise each is reported as skipped, with what is missing.

use niceeval::agent::claude_code::ClaudeCode;
use niceeval::agent::codex::Codex;
use niceeval::prelude::*;

const TASK: &str = "Add a method `complete(&mut self, index: usize) -> bool` to `TodoList` in \
                    src/lib.rs: it marks the item done and returns false when there is no such \
                    item. Do not change the tests. Run `cargo test` to check your work.";

fn claude_code() -> impl Agent {
    ClaudeCode::new().max_turns(30)
}

fn codex() -> impl Agent {
    Codex::new()
}

/// Why a live coding-agent eval cannot run here, if it cannot.
fn missing(program: &str, install: &str, key: &str) -> Option<String> {
    let mut missing = Vec::new();
    let installed = std::process::Command::new(program)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !installed {
        missing.push(format!("install `{program}` ({install})"));
    }
    if std::env::var_os(key).is_none_or(|v| v.is_empty()) {
        missing.push(format!("set {key}"));
    }
    if std::env::var("NICEEVAL_LIVE_AGENTS").as_deref() != Ok("1") {
        missing.push("set NICEEVAL_LIVE_AGENTS=1 (it calls a paid model)".to_string());
    }
    (!missing.is_empty()).then(|| format!("to run it, {}", missing.join(", ")))
}

/// The checks both agents get: what changed, what ran, and the tests — hidden ones too.
async fn score(t: &mut Eval) -> niceeval::Result {
    t.file_changed("src/lib.rs");
    t.not_in_diff("tests/basic.rs");
    t.not_in_diff(Regex::new(r"sk-[A-Za-z0-9_-]{20,}")?);
    t.check(
        t.workspace().diff().get("src/lib.rs"),
        includes("fn complete"),
    );
    t.workspace().add_files("fixtures/todo-app-hidden-tests")?;
    t.run_tests(["cargo", "test", "--offline"]).await?;
    t.max_cost(1.00).at_least(0.5);
    Ok(())
}

#[eval(agent = claude_code, workspace = "fixtures/todo-app", timeout = "10m", tags = ["live"])]
async fn claude_code_adds_complete(t: &mut Eval) -> niceeval::Result {
    if let Some(why) = missing(
        "claude",
        "npm install -g @anthropic-ai/claude-code",
        "ANTHROPIC_API_KEY",
    ) {
        return t.skip(why);
    }
    t.send(TASK).await?;
    t.called_tool("Edit");
    score(t).await
}

#[eval(agent = codex, workspace = "fixtures/todo-app", timeout = "10m", tags = ["live"])]
async fn codex_adds_complete(t: &mut Eval) -> niceeval::Result {
    if let Some(why) = missing("codex", "npm install -g @openai/codex", "OPENAI_API_KEY") {
        return t.skip(why);
    }
    t.send(TASK).await?;
    t.called_tool("file_change");
    score(t).await
}
