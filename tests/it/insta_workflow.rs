//! The snapshot review workflow a user of `#[eval(snapshot)]` follows, with the real
//! `cargo insta` (installed by `scripts/install-cargo-insta.sh`), on a copy of the template
//! crate `fixtures/snapshot` (insta writes snapshots beside the sources): one snapshot eval
//! under `cargo test`, one under the suite runner.
//!
//! 1. `cargo insta test` runs both and leaves two pending `.snap.new` files to review;
//! 2. `cargo insta accept` turns them into `.snap` files holding the stable report;
//! 3. `cargo insta test` again: nothing to review;
//! 4. the agent's reply changes: under CI (`CI=true`) the evals fail with the diff of the
//!    report, and nothing is written;
//! 5. outside CI the change is pending for review, and `cargo insta reject` drops it.
//!
//! Without cargo-insta the test fails under CI and is skipped with a notice elsewhere.

use std::path::{Path, PathBuf};
use std::process::Command;

use niceeval_tests::child::{self, Output};
use niceeval_tests::fixture::{BUILD_DEADLINE, Fixtures, copy_template};

const CHANGED_REPLY: &str = "Your refund for order #123 was sent yesterday.";

/// Copies the template crate into `dir` (see [`copy_template`]).
fn copy_snapshot_template(dir: &Path) {
    copy_template(
        "snapshot",
        &["niceeval.toml", "tests/evals.rs", "tests/suite.rs"],
        dir,
    );
}

/// Runs `cargo insta ARGS` in the copy; `ci` sets `CI=true`, else `CI` is removed.
fn cargo_insta(dir: &Path, args: &[&str], ci: bool, reply: Option<&str>) -> Output {
    let fixtures = Fixtures::get();
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut command = Command::new(cargo);
    child::clean_env(&mut command)
        .current_dir(dir)
        .arg("insta")
        .args(args)
        .env("CARGO_TERM_COLOR", "never")
        .env("NICEEVAL_RESULTS", "0")
        .env_remove("INSTA_UPDATE")
        .env_remove("INSTA_FORCE_PASS")
        .env_remove("INSTA_WORKSPACE_ROOT");
    fixtures.cargo_dirs(&mut command);
    // No CARGO_NET_OFFLINE here: `cargo insta` runs `cargo metadata`, which needs every package
    // of the lock file (including other platforms' dependencies the build never fetched); the
    // package registry is allowed, and `.ci/run` prefetches with `cargo fetch`.
    if ci {
        command.env("CI", "true");
    } else {
        command.env_remove("CI");
    }
    match reply {
        Some(reply) => command.env("FIXTURE_REPLY", reply),
        None => command.env_remove("FIXTURE_REPLY"),
    };
    child::run(&mut command, BUILD_DEADLINE)
}

/// The snapshot files in the copy, by file name, sorted.
fn snapshots(dir: &Path) -> Vec<String> {
    let folder = dir.join("tests").join("snapshots");
    let mut names: Vec<String> = std::fs::read_dir(&folder)
        .map(|entries| {
            entries
                .filter_map(|e| e.ok())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

fn snap(dir: &Path, name: &str) -> PathBuf {
    dir.join("tests").join("snapshots").join(name)
}

#[test]
fn cargo_insta_test_accept_and_ci_catch_a_behaviour_change() {
    let installed = Command::new("cargo")
        .args(["insta", "--version"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !niceeval_tests::available(
        installed,
        "cargo-insta",
        "run scripts/install-cargo-insta.sh",
    ) {
        return;
    }
    let temp = tempfile::tempdir().expect("a temporary directory");
    let dir = temp.path().join("crate");
    copy_snapshot_template(&dir);
    let (test_snap, suite_snap) = ("evals__refund_reply.snap", "suite__suite_refund_reply.snap");

    // 1. New snapshots are pending for review; the evals themselves pass.
    let out = cargo_insta(&dir, &["test"], false, None);
    assert_eq!(out.code(), Some(1), "{}", out.dump());
    assert!(
        out.stderr.contains("2 snapshots to review"),
        "{}",
        out.dump()
    );
    assert_eq!(
        snapshots(&dir),
        [format!("{test_snap}.new"), format!("{suite_snap}.new")],
        "{}",
        out.dump()
    );

    // 2. Accepted, they become the reference.
    let out = cargo_insta(&dir, &["accept"], false, None);
    assert_eq!(out.code(), Some(0), "{}", out.dump());
    assert_eq!(snapshots(&dir), [test_snap, suite_snap]);
    for name in [test_snap, suite_snap] {
        let text = std::fs::read_to_string(snap(&dir, name)).expect("accepted snapshot");
        assert!(text.contains("\noutcome: passed\nassertions:\n"), "{text}");
        // A clean header: what the snapshot is, no macro internals.
        assert!(!text.contains("expression:"), "{text}");
        assert!(
            text.contains("description: \"niceeval report of "),
            "{text}"
        );
        assert!(
            text.contains("  - pass gate includes(\"refund\") score 1.00\n"),
            "{text}"
        );
        assert!(text.contains("  - pass gate excludes(\"sorry\")"), "{text}");
        // Volatile fields never reach a snapshot.
        assert!(
            !text.contains("duration") && !text.contains(" ms"),
            "{text}"
        );
    }
    let accepted = std::fs::read_to_string(snap(&dir, test_snap)).expect("snapshot");

    // 3. Same behaviour: nothing to review.
    let out = cargo_insta(&dir, &["test"], false, None);
    assert_eq!(out.code(), Some(0), "{}", out.dump());
    assert!(
        out.stdout.contains("no snapshots to review"),
        "{}",
        out.dump()
    );

    // 4. The reply changed: under CI both evals fail, showing the changed score, and nothing
    //    is written.
    let out = cargo_insta(&dir, &["test"], true, Some(CHANGED_REPLY));
    let log = out.dump();
    assert_ne!(out.code(), Some(0), "{log}");
    let both = format!("{}{}", out.stdout, out.stderr);
    assert!(
        both.contains("similarity(\"Your refund for order #123 is on its way.\")"),
        "{log}"
    );
    assert!(both.contains("Snapshot: refund_reply"), "{log}");
    assert!(
        both.contains("Snapshot: suite__suite_refund_reply"),
        "{log}"
    );
    assert!(both.contains("test suite_refund_reply ... FAILED"), "{log}");
    assert_eq!(snapshots(&dir), [test_snap, suite_snap], "{log}");

    // 5. Outside CI the change waits for review; rejecting it keeps the reference.
    let out = cargo_insta(&dir, &["test"], false, Some(CHANGED_REPLY));
    assert_eq!(out.code(), Some(1), "{}", out.dump());
    assert!(
        out.stderr.contains("2 snapshots to review"),
        "{}",
        out.dump()
    );
    let pending =
        std::fs::read_to_string(snap(&dir, &format!("{test_snap}.new"))).expect("pending");
    assert_ne!(pending, accepted);
    let out = cargo_insta(&dir, &["reject"], false, None);
    assert_eq!(out.code(), Some(0), "{}", out.dump());
    assert_eq!(snapshots(&dir), [test_snap, suite_snap]);
    assert_eq!(
        std::fs::read_to_string(snap(&dir, test_snap)).expect("snapshot"),
        accepted
    );

    // 6. A broken niceeval.toml fails the evals with the configuration error, and no snapshot
    //    is taken of it: nothing pending, nothing naming the file's absolute path.
    let config = dir.join("niceeval.toml");
    let good = std::fs::read_to_string(&config).expect("niceeval.toml");
    std::fs::write(&config, "[run]\nconcurency = 4\n").expect("write niceeval.toml");
    let out = cargo_insta(&dir, &["test"], false, None);
    assert_ne!(out.code(), Some(0), "{}", out.dump());
    assert!(
        format!("{}{}", out.stdout, out.stderr).contains("concurency"),
        "the configuration error is the failure\n{}",
        out.dump()
    );
    assert_eq!(
        snapshots(&dir),
        [test_snap, suite_snap],
        "no pending snapshot of a configuration error\n{}",
        out.dump()
    );
    std::fs::write(&config, good).expect("restore niceeval.toml");
}
