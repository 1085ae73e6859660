//! The conformance corpora run with promptfoo 0.123.1 and with `niceeval eval` against a
//! loopback fake: the suites written in the style of public ones
//! (`niceeval-cli/tests/conformance/`) and real public `promptfooconfig.yaml` files
//! (`niceeval-cli/tests/conformance/real/`, each with the files it reads and the fake's canned
//! answers). In each corpus at least 98% of the assertion verdicts agree, and every
//! disagreement is listed in DIALECTS.md. The comparison is `scripts/promptfoo-conformance.py`.
//! The real files niceeval cannot run yet (`real/unsupported/`) fail naming what they use.

use std::process::Command;

use super::support::{Fake, niceeval, root};

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
