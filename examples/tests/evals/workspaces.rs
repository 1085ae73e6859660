//! Workspace evals: an agent that edits files gets a fresh working copy of
//! `examples/fixtures/todo-app` per run. The eval checks what it changed (over the whole run
//! and per `send`), adds tests the agent never saw, builds the crate and scores the run by its
//! test suite: every test a gate.

use niceeval::prelude::*;
use niceeval_examples::fixer::fixer;

#[eval(agent = fixer, workspace = "fixtures/todo-app", timeout = "3m")]
async fn fixes_the_missing_method(t: &mut Eval) -> niceeval::Result {
    let turn = t
        .send("Add `TodoList::complete` to src/lib.rs; do not touch tests/")
        .await?;
    t.file_changed("src/lib.rs");
    turn.file_changed("src/lib.rs"); // changed by this send
    t.not_in_diff(Regex::new(r"sk-[A-Za-z0-9]{20,}")?); // no secrets written
    t.not_in_diff("tests/basic.rs");
    t.check(
        t.workspace().diff().get("src/lib.rs"),
        includes("fn complete"),
    );

    t.workspace().add_files("fixtures/todo-app-hidden-tests")?; // the agent never saw them
    t.check(
        t.workspace()
            .run_command("cargo", ["build", "--offline"])
            .await?,
        command_succeeded(),
    );
    t.run_tests(["cargo", "test", "--offline"]).await?; // one gate assertion per test
    t.called_tool("Edit")
        .input(json!({ "file_path": "src/lib.rs" }));
    t.no_failed_shell_commands();
    Ok(())
}

#[eval(agent = fixer, workspace = "fixtures/todo-app", timeout = "3m")]
async fn a_second_request_changes_nothing(t: &mut Eval) -> niceeval::Result {
    t.send("Add `TodoList::complete`").await?;
    let again = t.send("Add `TodoList::complete`").await?;
    again.diff_is_empty(); // the second send found the work done
    t.check(again.message.as_str(), includes("nothing to do"));
    Ok(())
}
