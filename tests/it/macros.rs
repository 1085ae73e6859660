//! The valid uses of `#[eval]` and `niceeval::main!` (`niceeval-macros/tests/ui/pass/*.rs`,
//! each a `main` that checks what the macros registered and runs it) compile and run. They are
//! examples of the `macro-pass` fixture, built with the other fixtures; the misuses stay
//! trybuild UI cases in `niceeval-macros/tests/ui.rs`.

use std::path::PathBuf;

use niceeval_tests::child;
use niceeval_tests::fixture::{Fixtures, RUN_DEADLINE, workspace_root};

/// The pass cases, by file stem, sorted.
fn pass_cases() -> Vec<String> {
    let dir = workspace_root().join("niceeval-macros/tests/ui/pass");
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", dir.display()))
        .filter_map(|entry| {
            let path: PathBuf = entry.ok()?.path();
            (path.extension()? == "rs").then(|| path.file_stem()?.to_str().map(String::from))?
        })
        .collect();
    names.sort();
    names
}

#[test]
fn every_valid_use_of_the_macros_builds_and_runs() {
    let cases = pass_cases();
    assert!(cases.len() >= 7, "pass cases: {cases:?}");
    let manifest =
        std::fs::read_to_string(workspace_root().join("tests/fixtures/macro-pass/Cargo.toml"))
            .expect("the macro-pass fixture's manifest");
    let fixtures = Fixtures::get();
    let cwd = tempfile::tempdir().expect("a temporary directory");
    for case in cases {
        assert!(
            manifest.contains(&format!("name = \"{case}\"")),
            "niceeval-macros/tests/ui/pass/{case}.rs is not an [[example]] of \
             tests/fixtures/macro-pass/Cargo.toml: add it there"
        );
        let mut command = std::process::Command::new(fixtures.test_binary("macro-pass", &case));
        child::clean_env(&mut command).current_dir(cwd.path());
        let out = child::run(&mut command, RUN_DEADLINE);
        assert_eq!(out.code(), Some(0), "{case}:\n{}", out.dump());
    }
}
