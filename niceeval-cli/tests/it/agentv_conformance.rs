//! The AgentV conformance corpus (`niceeval-suites/tests/conformance/agentv/`, real eval files of
//! AgentV's repository at its 4.42.4 release) run with AgentV 4.42.4 and with `niceeval eval`
//! against one loopback fake: at least 98% of the grader verdicts agree, every disagreement
//! and every file niceeval does not run is listed in DIALECTS.md. The comparison is
//! `scripts/agentv-conformance.py`.

use super::support::{peer_tool, run_comparison};

#[test]
fn agentv_and_niceeval_agree_on_the_corpus() {
    if peer_tool(
        "AGENTV_HOME",
        "agentv-4.42.4",
        "agentv",
        "scripts/install-agentv.sh",
    )
    .is_none()
    {
        return;
    }
    let stdout = run_comparison("agentv-conformance.py");
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
