//! The conformance corpus (`niceeval-cli/tests/conformance/`, 24 promptfoo suites written in
//! the style of public ones) run with promptfoo 0.123.1 and with `niceeval eval` against one
//! loopback fake: at least 98% of the assertion verdicts agree, and every disagreement is
//! listed in DIALECTS.md. The comparison is `scripts/promptfoo-conformance.py`.

use std::process::Command;

use super::support::root;

#[test]
fn promptfoo_and_niceeval_agree_on_the_corpus() {
    let home = std::env::var("PROMPTFOO_HOME").unwrap_or_else(|_| {
        format!(
            "{}/.cache/niceeval/promptfoo-0.123.1",
            std::env::var("HOME").unwrap_or_default()
        )
    });
    let promptfoo = std::path::Path::new(&home).join("node_modules/.bin/promptfoo");
    if !promptfoo.exists() {
        // Under CI a missing tool fails the test; elsewhere it is skipped with a notice.
        let message = format!(
            "promptfoo 0.123.1 is not installed in {home}: run `bash scripts/install-promptfoo.sh`"
        );
        let in_ci = std::env::var_os("CI").is_some_and(|v| !v.is_empty() && v != "false");
        assert!(!in_ci, "{message}");
        // Straight to stderr, past the test harness's output capture.
        let _ = std::io::Write::write_fmt(
            &mut std::io::stderr(),
            format_args!("NOTICE: skipping: {message}\n"),
        );
        return;
    }
    let out = Command::new("python3")
        .arg(root().join("scripts/promptfoo-conformance.py"))
        .args(["--niceeval", env!("CARGO_BIN_EXE_niceeval")])
        .output()
        .expect("python3 runs the comparison");
    let stdout = String::from_utf8_lossy(&out.stdout);
    // The agreement figures, in the test's output.
    println!("{stdout}");
    assert!(
        out.status.success(),
        "the conformance run failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("agreement: "), "{stdout}");
}
