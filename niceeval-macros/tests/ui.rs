//! UI tests of `#[eval]`: misuse fails to compile with a clear error at the offending token
//! (`tests/ui/*.rs`, each with its expected `.stderr`), and valid uses compile and run
//! (`tests/ui/pass/*.rs`, each a `main` that checks what the macro registered and runs it).
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

#[test]
fn ui() {
    match rustc_version() {
        Some(version) if version.starts_with(PINNED) => {}
        other => {
            eprintln!(
                "niceeval-macros UI tests SKIPPED: their .stderr files are pinned to {PINNED}x, \
                 but this toolchain is {}. Compiler messages differ between releases; run them \
                 with rustc {PINNED}x, or regenerate them (see tests/ui.rs).",
                other
                    .as_deref()
                    .unwrap_or("unknown (`rustc --version` failed)")
            );
            return;
        }
    }
    let cases = trybuild::TestCases::new();
    cases.compile_fail("tests/ui/*.rs");
    cases.pass("tests/ui/pass/*.rs");
}
