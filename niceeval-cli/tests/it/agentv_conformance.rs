//! The AgentV conformance corpora run with AgentV 4.42.4 and with `niceeval eval` against one
//! loopback fake (the comparison is `scripts/agentv-conformance.py`):
//! - AgentV's own files (`niceeval-suites/tests/conformance/agentv/`, real eval files of AgentV's
//!   repository at its 4.42.4 release): at least 98% of the grader verdicts agree, every
//!   disagreement and every file niceeval does not run is listed in DIALECTS.md;
//! - the corpus from the wild (`niceeval-suites/tests/conformance/agentv-wild/`, files of other
//!   repositories, assembled outside git): every file AgentV runs niceeval runs, at least 99% of
//!   the grader and of the test verdicts agree, every disagreement is listed in DIALECTS.md.

use std::path::PathBuf;
use std::process::Command;

use super::support::{peer_tool, root, run_comparison};

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

/// The AgentV corpus from the wild (`niceeval-suites/tests/conformance/agentv-wild/`): eval files
/// of repositories other than AgentV's, drawn at random from a pool found by search before either
/// tool ran them (the pool, rule and seed are in its manifest), assembled outside the repository's
/// history by `python3 scripts/agentv-wild-corpus.py [--out DIR]` from local snapshots of those
/// repositories (into `niceeval-suites/tests/conformance/agentv-wild/suites`, or the directory
/// `$NICEEVAL_AGENTV_WILD` names). Every file AgentV 4.42.4 runs, niceeval runs; at least 99% of
/// the grader verdicts and of the test verdicts agree; every disagreement is listed in
/// DIALECTS.md. Skipped with a notice when the corpus is not assembled.
#[test]
fn agentv_and_niceeval_agree_on_the_corpus_from_the_wild() {
    let corpus = std::env::var_os("NICEEVAL_AGENTV_WILD")
        .map(PathBuf::from)
        .unwrap_or_else(|| root().join("niceeval-suites/tests/conformance/agentv-wild/suites"));
    if !corpus.join("corpus.json").is_file() {
        let _ = std::io::Write::write_fmt(
            &mut std::io::stderr(),
            format_args!(
                "NOTICE: skipping: the AgentV corpus from the wild is not assembled in {}: run `python3 scripts/agentv-wild-corpus.py` (or set NICEEVAL_AGENTV_WILD to an assembled corpus)\n",
                corpus.display()
            ),
        );
        return;
    }
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
    let out = Command::new("python3")
        .arg(root().join("scripts/agentv-conformance.py"))
        .args(["--niceeval", env!("CARGO_BIN_EXE_niceeval"), "--corpus"])
        .arg(&corpus)
        .output()
        .expect("python3 runs the comparison");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    println!("{stdout}");
    for line in stdout
        .lines()
        .filter(|l| l.starts_with("agreement") || l.starts_with("files: "))
    {
        let _ = std::io::Write::write_fmt(&mut std::io::stderr(), format_args!("{line}\n"));
    }
    for want in ["files: ", "AgentV runs ", "agreement: "] {
        assert!(stdout.contains(want), "no {want:?} in:\n{stdout}");
    }
    // The script fails when niceeval refuses a file AgentV runs, when fewer than 99% of the
    // grader or test verdicts agree, or when a disagreement is not listed in DIALECTS.md.
    assert!(
        out.status.success(),
        "the corpus from the wild:\n{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
