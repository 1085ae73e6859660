//! Headless Chromium (Debian's `chromium`, installed by `scripts/install-chromium.sh`) for the
//! tests of the HTML report: loads a page with networking off and returns the DOM after its
//! scripts ran, and what Chromium logged.

use std::path::Path;
use std::process::Command;

use crate::child;
use crate::fixture::RUN_DEADLINE;

/// Where Debian installs Chromium.
pub const CHROMIUM: &str = "/usr/bin/chromium";

/// Whether Chromium is installed. Under CI (`CI` set) its absence fails the test; elsewhere a
/// notice is printed and the caller skips.
pub fn available() -> bool {
    let ok = Path::new(CHROMIUM).exists();
    if !ok {
        assert!(
            std::env::var_os("CI").is_none(),
            "{CHROMIUM} is missing: run scripts/install-chromium.sh"
        );
        eprintln!(
            "notice: {CHROMIUM} is missing (scripts/install-chromium.sh installs it); skipping"
        );
    }
    ok
}

/// Loads `url` with a fresh profile in `profile`; returns the DOM after scripts ran and
/// Chromium's stderr (where page console messages appear as `:CONSOLE` lines). Fails the test
/// when Chromium fails.
pub fn dump_dom(url: &str, profile: &Path) -> (String, String) {
    let mut command = Command::new(CHROMIUM);
    command
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--no-first-run",
            "--enable-logging=stderr",
            "--v=0",
            "--dump-dom",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .arg(url);
    let out = child::run(&mut command, RUN_DEADLINE);
    assert!(out.status.success(), "chromium failed\n{}", out.dump());
    (out.stdout, out.stderr)
}
