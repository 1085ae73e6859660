//! UI tests of `#[eval]` and of `niceeval_suites::main!(suites = [..])`: misuse fails to compile with
//! a clear error at the offending token (`tests/ui/*.rs`, each with its expected `.stderr`;
//! `main_suites_*.rs` for a missing suite file and a malformed list — through the proc macro
//! `niceeval_suites::main!` forwards to, which fails before it names niceeval-suites, so the UI
//! project needs no suite-file code — and `niceeval::main!(suites = ..)`, which says to use
//! niceeval-suites; the UI project builds niceeval without default features). The valid uses (`tests/ui/pass/*.rs`, each a
//! `main` that checks what the macro registered and runs it) are built and run by the
//! workspace's `tests` crate (`tests/it/macros.rs`, as examples of the `macro-pass` fixture,
//! which shares the workspace's build) rather than here: as a trybuild `pass` set they cost a
//! second build of niceeval's dependencies and one cargo invocation each. A valid
//! `niceeval_suites::main!(suites = [..])` is built and run by `tests/it/suite.rs`.
//!
//! The text of compiler errors changes between rustc releases, so the `.stderr` files are only
//! compared on the toolchain they were generated with, [`PINNED`]. On any other rustc this test
//! prints a notice that the UI tests were skipped and passes; the unit tests in
//! `src/options.rs` and `tests/expansion.rs` still run everywhere.
//!
//! To regenerate after a deliberate change (or when moving the pin to a new rustc):
//! `TRYBUILD=overwrite cargo test -p niceeval-macros --test ui`, then read every changed
//! `.stderr` and judge the message as a user would; update [`PINNED`] with the new version.

use std::process::Command;

/// The rustc release the `.stderr` files were generated with (`rustc --version` starts so).
const PINNED: &str = "rustc 1.95.";

/// `rustc --version` of the toolchain cargo uses for this test, if it can be asked.
fn rustc_version() -> Option<String> {
    let rustc = std::env::var_os("RUSTC").unwrap_or_else(|| "rustc".into());
    let output = Command::new(rustc).arg("--version").output().ok()?;
    output
        .status
        .success()
        .then(|| String::from_utf8_lossy(&output.stdout).trim().to_string())
}

/// Why the UI tests cannot be compared on `version`, if they cannot.
fn skip_reason(version: Option<&str>) -> Option<String> {
    match version {
        Some(version) if version.starts_with(PINNED) => None,
        other => Some(format!(
            "niceeval-macros UI tests SKIPPED: their .stderr files are pinned to {PINNED}x, \
             but this toolchain is {}. Compiler messages differ between releases; run them \
             with rustc {PINNED}x, or regenerate them (see tests/ui.rs).",
            other.unwrap_or("unknown (`rustc --version` failed)")
        )),
    }
}

/// The misuse cases, checked by trybuild in one `cargo check --keep-going` (it would check
/// them one cargo invocation at a time if the set also held a case that must build and run).
#[test]
fn ui() {
    if let Some(reason) = skip_reason(rustc_version().as_deref()) {
        eprintln!("{reason}");
        return;
    }
    trybuild::TestCases::new().compile_fail("tests/ui/*.rs");
}

#[test]
fn other_toolchains_skip_with_a_notice() {
    assert_eq!(
        skip_reason(Some("rustc 1.95.0 (59807616e 2026-04-14)")),
        None
    );
    assert_eq!(skip_reason(Some("rustc 1.95.3")), None);
    let reason = skip_reason(Some("rustc 1.96.0 (abc 2026-05-28)")).unwrap_or_default();
    assert!(reason.contains("SKIPPED"), "{reason}");
    assert!(reason.contains("rustc 1.96.0"), "{reason}");
    assert!(reason.contains("pinned to rustc 1.95.x"), "{reason}");
    let reason = skip_reason(None).unwrap_or_default();
    assert!(reason.contains("`rustc --version` failed"), "{reason}");
}
