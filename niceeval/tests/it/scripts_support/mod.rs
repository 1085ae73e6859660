//! Shared helpers of the subprocess tests: temporary script files and tool checks.

#![allow(dead_code)]

use std::path::{Path, PathBuf};

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
#[path = "../../../../tests/skip.rs"]
mod skip;
pub use skip::available;

/// Whether the process whose pid `pidfile` holds has ended (a zombie counts as ended), waiting
/// up to 30 s for it: a wait for a condition, not a measure of time, so a loaded machine only
/// makes it slower. A missing pidfile means the process was ended before it wrote it. Reads
/// `/proc` (Linux); elsewhere every process reads as ended.
pub fn ended(pidfile: &Path) -> bool {
    let Ok(text) = std::fs::read_to_string(pidfile) else {
        return true;
    };
    let Ok(pid) = text.trim().parse::<u32>() else {
        return true;
    };
    let alive = || match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => !stat
            .rsplit(')')
            .next()
            .unwrap_or("")
            .trim_start()
            .starts_with('Z'),
        Err(_) => false,
    };
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while alive() && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    !alive()
}

/// Writes `text` to `dir/name` (creating folders) and returns the path.
pub fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(name);
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).unwrap();
    }
    std::fs::write(&path, text).unwrap();
    path
}

/// Makes a file executable.
#[cfg(unix)]
pub fn make_executable(path: &Path) {
    use std::os::unix::fs::PermissionsExt;
    let mut perms = std::fs::metadata(path).unwrap().permissions();
    perms.set_mode(0o755);
    std::fs::set_permissions(path, perms).unwrap();
}

/// The path of a string as a command argument.
pub fn arg(path: &Path) -> String {
    path.to_string_lossy().into_owned()
}
