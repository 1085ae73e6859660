//! The AgentV conformance corpus (`niceeval-cli/tests/conformance/agentv/`, real eval files of
//! AgentV's repository at its 4.42.4 release) run with AgentV 4.42.4 and with `niceeval eval`
//! against one loopback fake: at least 98% of the grader verdicts agree, every disagreement
//! and every file niceeval does not run is listed in DIALECTS.md. The comparison is
//! `scripts/agentv-conformance.py`.

use std::process::Command;

use super::support::root;

#[test]
fn agentv_and_niceeval_agree_on_the_corpus() {
    let home = std::env::var("AGENTV_HOME").unwrap_or_else(|_| {
        format!(
            "{}/.cache/niceeval/agentv-4.42.4",
            std::env::var("HOME").unwrap_or_default()
        )
    });
    let agentv = std::path::Path::new(&home).join("node_modules/.bin/agentv");
    if !agentv.exists() {
        // Under CI a missing tool fails the test; elsewhere it is skipped with a notice.
        let message = format!(
            "AgentV 4.42.4 is not installed in {home}: run `bash scripts/install-agentv.sh`"
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
        .arg(root().join("scripts/agentv-conformance.py"))
        .args(["--niceeval", env!("CARGO_BIN_EXE_niceeval")])
        .output()
        .expect("python3 runs the comparison");
    let stdout = String::from_utf8_lossy(&out.stdout);
    // The agreement figures, in the test's output.
    println!("{stdout}");
    assert!(
        out.status.success(),
        "the AgentV conformance run failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("agreement: "), "{stdout}");
    // At least ten real AgentV files run under both tools.
    let files = stdout
        .split("over ")
        .nth(1)
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|n| n.parse::<usize>().ok())
        .unwrap_or(0);
    assert!(
        files >= 10,
        "only {files} AgentV files ran under both:\n{stdout}"
    );
}
