//! The README's first command, `cargo test -p niceeval-examples`, prints what it printed before
//! the library's tree was rearranged (issue 38: behaviour does not change), apart from timings.
//! Its output is normalized — cargo's build lines dropped, timings, hashes and the machine's
//! concurrency masked, the lines of each test binary sorted (tests finish in any order) — and
//! compared with `snapshots/it__example_suite__output.snap`, whose text is the normalized
//! output of commit 49b7bc9, the last before the rearrangement (both runs were normalized and
//! compared when the snapshot was made: they differed only in a book page's doc-test line).

use std::process::Command;

use niceeval_tests::child;
use niceeval_tests::fixture::workspace_root;

/// How long the child `cargo test` may run (its build is the outer run's, so it takes seconds
/// when warm; this only turns a hang into a failure).
const DEADLINE: std::time::Duration = std::time::Duration::from_secs(60 * 60);

/// The output with what differs from run to run masked: build lines and libtest's notes on slow
/// tests gone, numbers of time and hashes replaced, each binary's lines (between its `running` line and its `test result`)
/// and each run of skip notices sorted.
pub fn normalize(output: &str) -> String {
    const BUILD: &[&str] = &[
        "Compiling ",
        "Checking ",
        "Finished ",
        "Blocking ",
        "Downloaded ",
        "Downloading ",
        "Locking ",
        "Updating ",
        "Adding ",
        "Fresh ",
    ];
    let mut out: Vec<String> = Vec::new();
    let mut block: Vec<String> = Vec::new();
    let mut in_block = false;
    for line in output.lines() {
        let trimmed = line.trim_start();
        if BUILD.iter().any(|b| trimmed.starts_with(b)) {
            continue;
        }
        // libtest's note on a slow test: a loaded machine's, not the suite's.
        if trimmed.ends_with("has been running for over 60 seconds") {
            continue;
        }
        let line = mask(line);
        if line.starts_with("running ") {
            out.push(line);
            in_block = true;
            continue;
        }
        if in_block && (line.starts_with("test result:") || line.starts_with("all doctests ran")) {
            block.sort();
            out.append(&mut block);
            in_block = false;
        }
        // A skip is announced when its eval ends: evals end in any order.
        if in_block || line.starts_with("niceeval: SKIPPED") {
            block.push(line);
        } else {
            block.sort();
            out.append(&mut block);
            out.push(line);
        }
    }
    block.sort();
    out.append(&mut block);
    let mut text = out.join("\n");
    text.push('\n');
    text
}

/// One line with its timings, hashes, doc-tests' lines, the coding agents' install hints and
/// the machine's concurrency masked.
fn mask(line: &str) -> String {
    let mut line = line.to_string();
    // `finished in 0.79s`, `ran in 2.07s`, `took 2.05s`.
    for word in ["finished in ", "ran in ", "took "] {
        if let Some(at) = line.find(word) {
            let start = at + word.len();
            let end = line[start..]
                .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == 's' || c == 'm'))
                .map_or(line.len(), |n| start + n);
            line.replace_range(start..end, "[time]");
        }
    }
    // `(/abs/target-dir/debug/deps/…)` (an absolute `CARGO_TARGET_DIR`) → `(target/debug/deps/…)`.
    if let Some(open) = line.find("(/")
        && let Some(deps) = line[open..].find("/debug/deps/")
    {
        line.replace_range(open + 1..open + deps, "target");
    }
    // `target/debug/deps/evals-d55eb1319753f220` → `evals-[hash]`.
    if let Some(at) = line.find("target/debug/deps/") {
        let start = at + "target/debug/deps/".len();
        let end = line[start..].find(')').map_or(line.len(), |n| start + n);
        if let Some(dash) = line[start..end].rfind('-') {
            line.replace_range(start + dash + 1..end, "[hash]");
        }
    }
    // A doc-test's line in its file: the book's pages move as they are edited.
    if line.starts_with("test ")
        && line.contains(" - ")
        && let Some(at) = line.find("(line ")
    {
        let start = at + "(line ".len();
        let end = line[start..].find(')').map_or(line.len(), |n| start + n);
        line.replace_range(start..end, "[n]");
    }
    // Whether `claude` and `codex` are installed here (CI installs them): the coding agents'
    // skip notices ask for what is missing.
    while let Some(at) = line.find("install `") {
        match line[at..].find("), ") {
            Some(end) => line.replace_range(at..at + end + "), ".len(), ""),
            None => break,
        }
    }
    // `(concurrency 4)`: the machine's cores.
    if let Some(at) = line.find("(concurrency ") {
        let start = at + "(concurrency ".len();
        let end = line[start..].find(')').map_or(line.len(), |n| start + n);
        line.replace_range(start..end, "[n]");
    }
    line
}

#[test]
fn the_example_suites_output_is_unchanged_apart_from_timings() {
    let root = workspace_root();
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut command = Command::new(cargo);
    child::clean_env(&mut command)
        .args(["test", "-p", "niceeval-examples", "--offline"])
        .env("CARGO_TERM_COLOR", "never")
        .env("NO_COLOR", "1")
        .current_dir(&root);
    let output = child::run(&mut command, DEADLINE);
    assert!(
        output.status.success(),
        "cargo test -p niceeval-examples failed:\n{}",
        output.dump()
    );
    // libtest prints to stdout, cargo and niceeval's notices to stderr: both, as a user sees.
    let both = format!(
        "{}--- stderr ---\n{}",
        normalize(&output.stdout),
        normalize(&output.stderr)
    );
    insta::assert_snapshot!("output", both);
}

#[test]
fn normalizing_masks_timings_hashes_target_directories_and_order() {
    let text = "test slow has been running for over 60 seconds\nniceeval: SKIPPED c: to run it, install `claude` (npm i claude), set K\ntest examples/src/book.rs - book::SuiteFiles (line 76) ... ignored\n   Compiling x v1\n     Running unittests src/lib.rs (/home/ci/cache/target/debug/deps/niceeval_examples-6942b7a8ec8752a3)\n     Running tests/evals/main.rs (target/debug/deps/evals-d55eb1319753f220)\n\nrunning 2 tests\ntest b ... ok\ntest a ... ok\n\ntest result: ok. 2 passed; finished in 0.79s\n\nrunning 2 evals (concurrency 4)\nall doctests ran in 2.07s; merged doctests compilation took 2.05s\n";
    assert_eq!(
        normalize(text),
        "niceeval: SKIPPED c: to run it, set K\ntest examples/src/book.rs - book::SuiteFiles (line [n]) ... ignored\n     Running unittests src/lib.rs (target/debug/deps/niceeval_examples-[hash])\n     Running tests/evals/main.rs (target/debug/deps/evals-[hash])\n\nrunning 2 tests\n\ntest a ... ok\ntest b ... ok\ntest result: ok. 2 passed; finished in [time]\n\nrunning 2 evals (concurrency [n])\nall doctests ran in [time]; merged doctests compilation took [time]\n"
    );
}
