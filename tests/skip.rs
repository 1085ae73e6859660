//! The one skip rule of the tests that need an optional tool (Chromium, cargo-nextest, …):
//! skip with a notice when it is missing, fail under CI. The skip helper of every crate of the
//! workspace: niceeval's and niceeval-cli's tests include this file with `#[path]`.

/// Whether what a test needs (`what`) is here, as `ok` says. Under CI (`CI` set, not `false`)
/// its absence fails the test, saying `install`; elsewhere a notice goes straight to stderr
/// (past the test harness's capture) and the caller skips.
pub fn available(ok: bool, what: &str, install: &str) -> bool {
    if !ok {
        let in_ci = std::env::var_os("CI").is_some_and(|v| !v.is_empty() && v != "false");
        assert!(
            !in_ci,
            "{what} is required by this test under CI; {install}"
        );
        let _ = std::io::Write::write_fmt(
            &mut std::io::stderr(),
            format_args!("NOTICE: skipping: {what} is not available ({install})\n"),
        );
    }
    ok
}
