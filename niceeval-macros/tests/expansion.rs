//! `#[eval]` as `cargo test` sees it: each eval is an ordinary test named after its function,
//! filtered by that name, listed as ignored under `#[ignore]`, and a crate that denies missing
//! docs and pedantic lints compiles its evals without a warning from generated code.
//!
//! The filter tests run this same test binary again as a child, with the arguments
//! `cargo test NAME` passes to it, and read what it prints.

#![deny(missing_docs)]
#![deny(clippy::pedantic)]

use std::process::Command;

use niceeval::prelude::*;

/// Answers every message with a greeting.
#[must_use]
pub fn greeter() -> impl Agent {
    agent_fn(|request: Request| async move {
        request.events.say("Hello there!");
        Ok(())
    })
}

/// A documented public eval with every kind of option.
#[eval(agent = greeter, runs = 2, timeout = "30s", tags = ["smoke"], description = "greets")]
pub async fn greets_by_name(t: &mut Eval) -> niceeval::Result {
    t.send("Hi").await?;
    t.check(t.reply(), includes("Hello"));
    Ok(())
}

#[eval]
pub async fn undocumented_public(_t: &mut Eval) {}

#[eval]
#[ignore = "shows that #[ignore] reaches the test"]
async fn ignored_eval(t: &mut Eval) -> niceeval::Result {
    t.skip("ignored evals are not run by default")?;
    Ok(())
}

/// Lifetime parameters are allowed: the runner does not have to choose them. (The `allow`
/// reaches the user's function, where clippy sees the lifetime.)
#[eval]
#[allow(clippy::needless_lifetimes)]
pub async fn with_lifetime<'a>(t: &'a mut Eval) {
    t.check("a", includes("a"));
}

/// Evals in a module are tests at their module path.
pub mod nested {
    use niceeval::prelude::*;

    #[eval(strict)]
    pub(crate) async fn inner_eval(t: &mut Eval) -> niceeval::Result {
        t.require("value", equals("value"))?;
        Ok(())
    }
}

/// Set in the child, so a filter that matched a test that spawns children cannot recurse.
const CHILD: &str = "NICEEVAL_MACROS_EXPANSION_CHILD";

/// Runs this test binary again with `args`, as `cargo test -- <args>` would.
fn run_self(args: &[&str]) -> (bool, String) {
    assert!(
        std::env::var_os(CHILD).is_none(),
        "a child run matched a test that runs children: make its filter exact"
    );
    let exe = std::env::current_exe().expect("the test binary knows its own path");
    let output = Command::new(exe)
        .args(args)
        .env_remove("RUST_TEST_THREADS")
        .env(CHILD, "1")
        .output()
        .expect("the test binary runs again");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    (output.status.success(), text)
}

#[test]
fn every_eval_is_a_test_named_after_its_function() {
    let (ok, listed) = run_self(&["--list"]);
    assert!(ok, "{listed}");
    for name in [
        "greets_by_name: test",
        "undocumented_public: test",
        "ignored_eval: test",
        "nested::inner_eval: test",
    ] {
        assert!(
            listed.lines().any(|l| l == name),
            "{name:?} not listed:\n{listed}"
        );
    }
    let (ok, ignored) = run_self(&["--list", "--ignored"]);
    assert!(ok, "{ignored}");
    assert!(
        ignored.lines().any(|l| l == "ignored_eval: test"),
        "{ignored}"
    );
    assert!(
        !ignored.lines().any(|l| l == "greets_by_name: test"),
        "{ignored}"
    );
}

#[test]
fn cargo_test_name_runs_only_that_eval() {
    let (ok, out) = run_self(&["greets_by_name"]);
    assert!(ok, "{out}");
    assert!(out.contains("test greets_by_name ... ok"), "{out}");
    assert!(out.contains("1 passed; 0 failed"), "{out}");
    assert!(!out.contains("test nested::inner_eval"), "{out}");

    let (ok, out) = run_self(&["--exact", "nested::inner_eval"]);
    assert!(ok, "{out}");
    assert!(out.contains("test nested::inner_eval ... ok"), "{out}");
    assert!(out.contains("1 passed; 0 failed"), "{out}");
}

#[test]
fn the_ignored_eval_runs_with_include_ignored_and_is_skipped() {
    let (ok, out) = run_self(&[
        "--exact",
        "ignored_eval",
        "--include-ignored",
        "--nocapture",
    ]);
    assert!(ok, "{out}");
    assert!(
        out.contains("niceeval: SKIPPED ignored_eval: ignored evals are not run by default"),
        "{out}"
    );
}

#[test]
fn registrations_carry_the_options() {
    let all = niceeval::__workspace::registered();
    let ids: Vec<String> = all.iter().map(|d| d.id()).collect();
    assert_eq!(
        ids,
        [
            "expansion::greets_by_name",
            "expansion::ignored_eval",
            "expansion::nested::inner_eval",
            "expansion::undocumented_public",
            "expansion::with_lifetime",
        ]
    );
    let greets = all[0];
    assert_eq!(greets.runs, Some(2));
    assert_eq!(greets.tags, ["smoke"]);
    assert_eq!(greets.description, Some("greets"));
    assert!(greets.agent.is_some());
    assert!(all[1].ignored);
    assert!(all[2].strict);
}
