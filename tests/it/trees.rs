//! Nothing an eval starts outlives it, whichever way the eval or its test process ends: the
//! eval's timeout, Ctrl-C (SIGINT) and SIGTERM to the runner, SIGKILL of the test process, a
//! panic in the eval body — under plain `cargo test` (libtest), the suite runner
//! (`niceeval::main!()`) and cargo-nextest.
//!
//! The `procs` fixture's agent is a shell that ignores SIGTERM and SIGINT, with a child in its
//! process group and another in a session of its own, all sleeping for ever; it writes the pid
//! of its test process once they run. Once the runner has ended, no process carrying the test's
//! `PROCS_DIR` may be left — running or stopped (state `T`); the test waits for them to be gone
//! (up to [`LEFT_DEADLINE`]) rather than a fixed time, which a loaded machine can overrun.
#![cfg(target_os = "linux")]

use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use niceeval_tests::child::{self, Output};
use niceeval_tests::fixture::{BUILD_DEADLINE, Fixtures, RUN_DEADLINE};

/// How long after the runner ended the agent's tree may take to be gone: a bound, not a
/// measure (the tree is usually gone when the runner ends; the watchdog of a killed test process
/// ends it a moment later).
const LEFT_DEADLINE: Duration = Duration::from_secs(30);

/// What runs the eval.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Runner {
    /// The `plain` test binary, as `cargo test` runs it.
    Libtest,
    /// The `suite` test binary (`harness = false`, `niceeval::main!()`).
    Suite,
    /// `cargo nextest run` on the `plain` target.
    Nextest,
}

/// How the eval ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Way {
    /// Its `timeout = "6s"`.
    Timeout,
    /// SIGINT to the runner.
    Interrupt,
    /// SIGTERM to the runner.
    Terminate,
    /// SIGKILL to the test process.
    Kill,
    /// Its body panics while the turn runs.
    Panic,
}

/// Whether cargo-nextest is there (a notice when not; required under CI).
fn nextest_available() -> bool {
    let there = Command::new("cargo")
        .args(["nextest", "--version"])
        .output()
        .is_ok_and(|o| o.status.success());
    niceeval_tests::available(
        there,
        "cargo-nextest",
        "install it with scripts/install-cargo-nextest.sh",
    )
}

/// The processes carrying `PROCS_DIR=dir` now: `(pid, state, command line)`. The scan is
/// niceeval's own (the one its process owner ends trees with), the command line read here for
/// the failure message.
fn carrying(dir: &Path) -> Vec<(u32, char, String)> {
    let dir = dir.to_str().expect("a UTF-8 temporary directory");
    niceeval::__workspace::process::carrying("PROCS_DIR", dir)
        .into_iter()
        .map(|(pid, state)| {
            let cmdline = std::fs::read(format!("/proc/{pid}/cmdline"))
                .map(|c| String::from_utf8_lossy(&c).replace('\0', " "))
                .unwrap_or_default();
            (pid, state, cmdline)
        })
        .collect()
}

/// Runs `common::hangs::*` under `runner`, ends it `way`, and checks that once the runner has
/// ended nothing of the agent's tree is left. Returns the runner's output.
fn scenario(runner: Runner, way: Way) -> Option<Output> {
    if runner == Runner::Nextest && !nextest_available() {
        return None;
    }
    let fixtures = Fixtures::get();
    let dir = tempfile::tempdir().expect("a temporary directory");
    let eval = match way {
        Way::Timeout => "common::hangs::timeout",
        Way::Panic => "common::hangs::panics",
        _ => "common::hangs::forever",
    };
    let mut command = match runner {
        Runner::Libtest => fixtures.command("procs", "plain", &["--exact", eval]),
        Runner::Suite => fixtures.command("procs", "suite", &["--exact", eval]),
        Runner::Nextest => {
            let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
            let mut command = Command::new(cargo);
            let filter = format!("package(niceeval-fixture-procs) & binary(plain) & test(={eval})");
            child::clean_env(&mut command)
                .current_dir(fixtures.root())
                .args(["nextest", "run", "--workspace", "--no-fail-fast", "-E"])
                .arg(filter)
                .env("CARGO_TERM_COLOR", "never")
                .env_remove("CI");
            fixtures.cargo_dirs(&mut command);
            if fixtures.offline() {
                command.env("CARGO_NET_OFFLINE", "true");
            }
            command
        }
    };
    command
        .env("PROCS_DIR", dir.path())
        .env("NICEEVAL_RESULTS", "0");
    let mut running = child::spawn(&mut command);
    let started = dir.path().join("started");
    // nextest may have a build to check first. A runner that ends first (the eval's timeout
    // passed before the agent had started everything) fails here, not after the deadline.
    child::wait_until(BUILD_DEADLINE, "the agent started", || {
        started.exists() || running.exited()
    });
    if !started.exists() {
        panic!(
            "{runner:?}, {way:?}: the runner ended before the agent had started its processes\n{}",
            running.wait(RUN_DEADLINE).dump()
        );
    }
    let test_process: i32 = std::fs::read_to_string(&started)
        .expect("the agent wrote its parent's pid")
        .trim()
        .parse()
        .expect("a pid");
    let to_runner = |signal: i32| match runner {
        // The runner the user started (it hands the signal on to its test process).
        Runner::Nextest => running.signal(signal),
        _ => {
            assert_eq!(test_process as u32, running.pid(), "the agent's parent");
            running.signal(signal);
        }
    };
    match way {
        Way::Interrupt => to_runner(libc::SIGINT),
        Way::Terminate => to_runner(libc::SIGTERM),
        Way::Kill => {
            // SAFETY: kill(2) on the test process the agent named; no memory involved.
            let result = unsafe { libc::kill(test_process, libc::SIGKILL) };
            assert_eq!(result, 0, "{}", std::io::Error::last_os_error());
        }
        Way::Timeout | Way::Panic => {}
    }
    let out = running.wait(RUN_DEADLINE);
    // What ends the tree may still be at work when the runner has ended (the watchdog of a
    // killed test process): wait for nothing to be left, up to a bound a loaded machine does
    // not reach. A process that ignores the signals and sleeps for ever, or a stopped one,
    // stays until the bound.
    let deadline = Instant::now() + LEFT_DEADLINE;
    let mut left = carrying(dir.path());
    while !left.is_empty() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
        left = carrying(dir.path());
    }
    assert!(
        left.is_empty(),
        "{runner:?}, {way:?}: {LEFT_DEADLINE:?} after the runner ended, these processes of the \
         agent's tree are left (pid, state, command line): {left:?}\n{}",
        out.dump()
    );
    Some(out)
}

/// The failure the eval's report gives for its timeout.
fn timed_out(out: &Output) {
    assert!(out.stdout.contains("timed out after 6s"), "{}", out.dump());
}

fn panicked(out: &Output) {
    assert!(
        out.stdout.contains("the body panics while its agent runs"),
        "{}",
        out.dump()
    );
}

#[test]
fn libtest_timeout() {
    let out = scenario(Runner::Libtest, Way::Timeout).expect("ran");
    assert_eq!(out.code(), Some(101), "{}", out.dump());
    timed_out(&out);
}

#[test]
fn libtest_sigint() {
    let out = scenario(Runner::Libtest, Way::Interrupt).expect("ran");
    // Dies of the signal, as a test process without niceeval would.
    assert_eq!(out.status.signal(), Some(libc::SIGINT), "{}", out.dump());
}

#[test]
fn libtest_sigterm() {
    let out = scenario(Runner::Libtest, Way::Terminate).expect("ran");
    assert_eq!(out.status.signal(), Some(libc::SIGTERM), "{}", out.dump());
}

#[test]
fn libtest_sigkill() {
    let out = scenario(Runner::Libtest, Way::Kill).expect("ran");
    assert_eq!(out.status.signal(), Some(libc::SIGKILL), "{}", out.dump());
}

#[test]
fn libtest_panic() {
    let out = scenario(Runner::Libtest, Way::Panic).expect("ran");
    assert_eq!(out.code(), Some(101), "{}", out.dump());
    panicked(&out);
}

#[test]
fn suite_timeout() {
    let out = scenario(Runner::Suite, Way::Timeout).expect("ran");
    assert_eq!(out.code(), Some(101), "{}", out.dump());
    timed_out(&out);
}

#[test]
fn suite_sigint() {
    let out = scenario(Runner::Suite, Way::Interrupt).expect("ran");
    assert_eq!(out.code(), Some(130), "{}", out.dump());
}

#[test]
fn suite_sigterm() {
    let out = scenario(Runner::Suite, Way::Terminate).expect("ran");
    assert_eq!(out.code(), Some(143), "{}", out.dump());
}

#[test]
fn suite_sigkill() {
    let out = scenario(Runner::Suite, Way::Kill).expect("ran");
    assert_eq!(out.status.signal(), Some(libc::SIGKILL), "{}", out.dump());
}

#[test]
fn suite_panic() {
    let out = scenario(Runner::Suite, Way::Panic).expect("ran");
    assert_eq!(out.code(), Some(101), "{}", out.dump());
    panicked(&out);
}

#[test]
fn nextest_timeout() {
    if let Some(out) = scenario(Runner::Nextest, Way::Timeout) {
        assert_eq!(out.code(), Some(100), "{}", out.dump());
    }
}

#[test]
fn nextest_sigint() {
    scenario(Runner::Nextest, Way::Interrupt);
}

#[test]
fn nextest_sigterm() {
    scenario(Runner::Nextest, Way::Terminate);
}

#[test]
fn nextest_sigkill() {
    if let Some(out) = scenario(Runner::Nextest, Way::Kill) {
        assert_eq!(out.code(), Some(100), "{}", out.dump());
    }
}

#[test]
fn nextest_panic() {
    if let Some(out) = scenario(Runner::Nextest, Way::Panic) {
        assert_eq!(out.code(), Some(100), "{}", out.dump());
    }
}
