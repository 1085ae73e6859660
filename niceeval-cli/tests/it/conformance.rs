//! The conformance corpora run with promptfoo 0.123.1 and with `niceeval eval` against a
//! loopback fake: the suites written in the style of public ones
//! (`niceeval-cli/tests/conformance/`) and real public `promptfooconfig.yaml` files
//! (`niceeval-cli/tests/conformance/real/`, each with the files it reads and the fake's canned
//! answers). In each corpus at least 98% of the assertion verdicts agree, and every
//! disagreement is listed in DIALECTS.md. The comparison is `scripts/promptfoo-conformance.py`.
//! The real files niceeval cannot run yet (`real/unsupported/`) fail naming what they use.

use super::support::{Fake, niceeval, peer_tool, root, run_comparison};

#[test]
fn real_files_niceeval_cannot_run_name_what_they_use() {
    let fake = Fake::start();
    let cases = [
        (
            "simple-test",
            "promptfooconfig.yaml:42:9: assertion type `similar` is not supported: `similar` is promptfoo's embeddings similarity",
        ),
        (
            "eval-custom-grading-prompt",
            "promptfooconfig.yaml:18:7: `rubricPrompt` in options is not supported",
        ),
    ];
    for (suite, want) in cases {
        let dir = root()
            .join("niceeval-cli/tests/conformance/real/unsupported")
            .join(suite);
        let out = niceeval(&dir, &fake, &["-c", "promptfooconfig.yaml"]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{suite}: {stderr}");
        assert!(
            stderr.contains(want),
            "{suite}: wanted {want:?} in:\n{stderr}"
        );
    }
}

#[test]
fn promptfoo_and_niceeval_agree_on_the_corpus() {
    if peer_tool(
        "PROMPTFOO_HOME",
        "promptfoo-0.123.1",
        "promptfoo",
        "scripts/install-promptfoo.sh",
    )
    .is_none()
    {
        return;
    }
    let stdout = run_comparison("promptfoo-conformance.py");
    // A figure for each corpus: the written one and the real one.
    for corpus in [
        "niceeval-cli/tests/conformance)",
        "niceeval-cli/tests/conformance/real)",
    ] {
        assert!(
            stdout.contains(&format!("agreement ({corpus}: ")),
            "no figure for {corpus} in:\n{stdout}"
        );
    }
}
