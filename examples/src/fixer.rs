//! A small, deterministic coding agent for the workspace evals: it works in the run's working
//! copy ([`Request::workdir`]), adds the missing `TodoList::complete` to `src/lib.rs`, checks
//! that the crate builds with `cargo build` (through [`Request::command`], so it runs where the
//! eval looks and under the workspace's isolation), and reports each step as a tool call, the
//! way a coding agent such as Claude Code does.

use niceeval::agent::{Agent, AgentError, Request, agent_fn};
use niceeval::{ActionStatus, Event, json};

const MISSING: &str = "    // TODO: pub fn complete(&mut self, index: usize) -> bool";

const COMPLETE: &str = "    /// Marks the item at `index` done; false when there is none.
    pub fn complete(&mut self, index: usize) -> bool {
        match self.items.get_mut(index) {
            Some(item) => {
                item.done = true;
                true
            }
            None => false,
        }
    }";

/// The fixer agent: see the module docs.
pub fn fixer() -> impl Agent {
    agent_fn(|request: Request| async move {
        let dir = request
            .workdir()
            .ok_or("the fixer works on files: give the eval a workspace")?
            .to_path_buf();
        let events = &request.events;
        let path = dir.join("src/lib.rs");
        let source = std::fs::read_to_string(&path).map_err(|e| AgentError::new(e.to_string()))?;
        events.tool_call(
            "Read",
            json!({ "file_path": "src/lib.rs" }),
            json!({ "lines": source.lines().count() }),
        );
        if !source.contains(MISSING) {
            events.say("`complete` is already there; nothing to do.");
            return Ok(());
        }
        std::fs::write(&path, source.replace(MISSING, COMPLETE))
            .map_err(|e| AgentError::new(e.to_string()))?;
        events.tool_call(
            "Edit",
            json!({ "file_path": "src/lib.rs", "old_string": MISSING.trim() }),
            json!("ok"),
        );
        let build = request
            .command("cargo")
            .args(["build", "--offline", "--quiet"])
            .output()
            .await
            .map_err(|e| AgentError::new(format!("cannot run cargo: {e}")))?;
        let call = events.next_call_id();
        events.emit(Event::ActionCalled {
            call_id: call.clone(),
            name: "Bash".into(),
            input: json!({ "command": "cargo build --offline --quiet" }),
        });
        events.emit(Event::ActionResult {
            call_id: call,
            output: json!({ "exit_code": build.status.code() }),
            status: if build.status.success() {
                ActionStatus::Completed
            } else {
                ActionStatus::Failed
            },
        });
        events.model_usage("anthropic/claude-haiku-4-5", 2_400, 310);
        events.say("Added `TodoList::complete`: it marks the item done and returns false for a missing index. `cargo build` passes.");
        Ok(())
    })
}
