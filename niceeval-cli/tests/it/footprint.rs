//! `cargo install niceeval-cli --no-default-features` builds niceeval's core and its HTML report,
//! not every feature of the library: no model providers, TLS or JSON Schema (installing the
//! command from the library with its default features took 503 s on a 2-core machine). The
//! default adds `niceeval eval` (suite files, through niceeval-suites), which needs them.

use std::process::Command;

/// `cargo tree` of the command's normal dependencies, one `package features` line each.
fn tree(default_features: bool) -> String {
    let run = |offline: bool| {
        let mut command = Command::new(env!("CARGO"));
        command
            .args(["tree", "-p", "niceeval-cli", "--edges", "normal"])
            .args((!default_features).then_some("--no-default-features"))
            .args(["--prefix", "none", "--format", "{p} [{f}]"])
            .current_dir(env!("CARGO_MANIFEST_DIR"));
        if offline {
            command.arg("--offline");
        }
        command.output().expect("run cargo tree")
    };
    let mut output = run(true);
    if !output.status.success() && String::from_utf8_lossy(&output.stderr).contains("offline") {
        output = run(false);
    }
    assert!(
        output.status.success(),
        "cargo tree failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).into_owned()
}

#[test]
fn without_eval_the_command_builds_the_core_and_the_html_report_only() {
    let tree = tree(false);
    let niceeval = tree
        .lines()
        .find(|line| line.starts_with("niceeval v"))
        .unwrap_or_else(|| panic!("niceeval is not in the tree:\n{tree}"));
    assert!(
        niceeval.ends_with(" [html]"),
        "niceeval is built with the `html` feature alone: {niceeval}"
    );
    for heavy in [
        "niceeval-suites ",
        "reqwest ",
        "rustls ",
        "ring ",
        "hyper ",
        "jsonschema ",
    ] {
        assert!(
            !tree.lines().any(|line| line.starts_with(heavy)),
            "the command depends on {heavy}:\n{tree}"
        );
    }
}

#[test]
fn by_default_the_command_can_run_suite_files() {
    let tree = tree(true);
    let niceeval = tree
        .lines()
        .find(|line| line.starts_with("niceeval v"))
        .unwrap_or_else(|| panic!("niceeval is not in the tree:\n{tree}"));
    for feature in [
        "html",
        "providers",
        "yaml",
        "inline-code",
        "rustls",
        "json-schema",
    ] {
        assert!(
            niceeval.contains(feature),
            "niceeval is built without `{feature}`: {niceeval}"
        );
    }
    assert!(
        tree.lines()
            .any(|line| line.starts_with("niceeval-suites v")),
        "the command runs suite files through niceeval-suites:\n{tree}"
    );
    assert!(
        !niceeval.contains("otel"),
        "suite files need no OpenTelemetry: {niceeval}"
    );
}
