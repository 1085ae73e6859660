//! Tool checks for the tests that run a program.

/// Whether `tool` runs here. Under CI a missing tool fails the test; elsewhere it prints a
/// notice and the caller skips.
pub fn have(tool: &str) -> bool {
    let ok = std::process::Command::new(tool)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    available(ok, tool, "install it")
}

// The workspace's one skip helper (`tests/skip.rs`), shared by every crate's tests.
#[path = "../../../tests/skip.rs"]
mod skip;
pub use skip::available;
