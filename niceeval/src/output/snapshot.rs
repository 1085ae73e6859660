//! Snapshots of assertion reports for review with `cargo insta review`: a stable text form of
//! an [`EvalReport`] (volatile fields — durations, costs, token counts, and the score and reason
//! of token, cost and latency budgets — left out, assertions in recorded order, scores rounded) and the [`crate::assert_report_snapshot!`] macro, which
//! expands at the caller so the snapshot lands beside the caller's code, named after the eval.
//!
//! Where a snapshot lives: `snapshots/<module path>__<eval name>.snap` next to the file that
//! defines the eval (insta's layout), e.g. `tests/snapshots/evals__refund_flow.snap` for
//! `refund_flow` in `tests/evals.rs`. `#[eval(snapshot)]` under `cargo test` and the suite
//! runner ([`check_in_suite`]) use the same file.
//!
//! The workflow is insta's: `cargo insta test` runs the evals and collects new or changed
//! snapshots as `.snap.new` files, `cargo insta review` shows each change as a diff of the
//! report (an assertion that started failing, a tool that is no longer called), `cargo insta
//! accept` takes them all. Under CI (`CI=true`) a changed snapshot fails the eval instead of
//! writing anything.

use std::path::{Path, PathBuf};

use crate::base::assertion::{AssertionKind, AssertionResult, Grade, Settings};
use crate::base::outcome::Outcome;
use crate::run::definition::EvalDefinition;
use crate::run::report::{EvalReport, Style};

/// The snapshot name of a report: the eval's function name (insta prefixes the module path).
pub fn name(report: &EvalReport) -> String {
    report
        .id
        .rsplit("::")
        .next()
        .unwrap_or(&report.id)
        .to_string()
}

/// The stable text of a report: outcome, marks, every assertion with verdict, severity, score
/// (two decimals), threshold and reason, nested results indented. No durations, costs, token
/// counts or paths.
///
/// ```
/// use niceeval::__workspace::snapshot::text;
/// # let report: niceeval::EvalReport = serde_json::from_value(serde_json::json!({
/// #   "id": "demo::refund", "file": "tests/demo.rs", "line": 3, "outcome": "passed",
/// #   "assertions": [{"name": "includes(\"refund\")", "kind": "value", "severity": "gate",
/// #     "score": 1.0, "passed": true, "reason": "found at \"refund\""}],
/// #   "duration_ms": 12.5, "usage": {"input_tokens": 1, "output_tokens": 2, "cache_read_tokens": 0},
/// #   "runs": [], "reliability": {"n": 1, "c": 1, "pass_rate": 1.0, "pass_at_k": [1.0], "pass_hat_k": [1.0]},
/// #   "min_pass_rate": 1.0
/// # })).unwrap();
/// let snap = text(&report);
/// assert!(snap.starts_with("outcome: passed"));
/// assert!(!snap.contains("12.5"));
/// ```
pub fn text(report: &EvalReport) -> String {
    crate::run::report::render(report, Style::Snapshot { reasons: true })
}

/// [`text`] without the assertions' reasons: verdict, severity, name and score of each. The
/// form `[report] snapshot_reasons = false` asks for, so a reworded reply that passes the same
/// way leaves the snapshot unchanged.
///
/// ```
/// use niceeval::__workspace::snapshot::{text, text_without_reasons};
/// # let report: niceeval::EvalReport = serde_json::from_value(serde_json::json!({
/// #   "id": "demo::refund", "file": "tests/demo.rs", "line": 3, "outcome": "passed",
/// #   "assertions": [{"name": "includes(\"refund\")", "kind": "value", "severity": "gate",
/// #     "score": 1.0, "passed": true, "reason": "found \"refund\" in \"Your refund is on its way\""}],
/// #   "duration_ms": 12.5, "usage": {"input_tokens": 1, "output_tokens": 2, "cache_read_tokens": 0},
/// #   "runs": [], "reliability": {"n": 1, "c": 1, "pass_rate": 1.0, "pass_at_k": [1.0], "pass_hat_k": [1.0]},
/// #   "min_pass_rate": 1.0
/// # })).unwrap();
/// assert!(text(&report).contains("reason: found"));
/// assert!(!text_without_reasons(&report).contains("reason:"));
/// ```
pub fn text_without_reasons(report: &EvalReport) -> String {
    crate::run::report::render(report, Style::Snapshot { reasons: false })
}

/// The snapshot text for an eval of the crate at `manifest_dir`: [`text`], or
/// [`text_without_reasons`] when its niceeval.toml says `[report] snapshot_reasons = false`.
pub fn text_in(report: &EvalReport, manifest_dir: &str) -> String {
    let reasons = crate::config::Config::for_manifest_dir(manifest_dir)
        .ok()
        .and_then(|c| c.report.snapshot_reasons)
        .unwrap_or(true);
    if reasons {
        text(report)
    } else {
        text_without_reasons(report)
    }
}

/// insta settings for a report's snapshot: a clean header — the eval's id as the description
/// and no expression (insta would otherwise record the macro's internals) — over the settings
/// in effect.
pub fn settings(report: &EvalReport) -> insta::Settings {
    let mut settings = insta::Settings::clone_current();
    settings.set_omit_expression(true);
    settings.set_description(format!("niceeval report of {}", report.id));
    settings
}

/// The directory holding `def`'s snapshots: `snapshots/` beside the eval's source file.
///
/// `file!()` is relative to the workspace root of the crate that defines the eval, so the
/// file is looked up from the crate's manifest directory upwards.
fn snapshot_dir(def: &EvalDefinition) -> Option<PathBuf> {
    let file = Path::new(def.file);
    let source = if file.is_absolute() {
        file.to_path_buf()
    } else {
        Path::new(def.manifest_dir)
            .ancestors()
            .map(|root| root.join(file))
            .find(|candidate| candidate.is_file())?
    };
    Some(source.parent()?.join("snapshots"))
}

/// Checks a finished eval's report against its snapshot, as `#[eval(snapshot)]` does under
/// `cargo test`; the suite runner calls this for every snapshot eval.
///
/// The snapshot is the one the eval's `#[test]` would use (see the module docs), compared by
/// insta, which follows its usual settings: `INSTA_UPDATE`, `INSTA_FORCE_PASS`, `CI`, and the
/// environment `cargo insta test` sets. A new or changed snapshot is written as `.snap.new`
/// (outside CI) and fails the eval with a gate named `matches snapshot <name>` whose reason says
/// how to review it; the eval's score is unchanged (the gate has weight 0).
pub fn check_in_suite(def: &EvalDefinition, report: &mut EvalReport) {
    // A dataset case's name is `<function>::<case>`: `module__function__case`, the name
    // `assert_report_snapshot!` gives it in the case's generated test.
    let name = format!(
        "{}__{}",
        def.module_path.replace("::", "__"),
        def.own_name().replace("::", "__")
    );
    let failure = match snapshot_dir(def) {
        None => Some(format!(
            "cannot find {} from {} to store the snapshot beside it",
            def.file, def.manifest_dir
        )),
        Some(dir) => {
            let snapshot = text_in(report, def.manifest_dir);
            let mut settings = settings(report);
            settings.set_snapshot_path(&dir);
            settings.set_prepend_module_to_snapshot(false);
            settings.set_input_file(def.file);
            let checked = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                settings.bind(|| insta::assert_snapshot!(name.as_str(), snapshot));
            }));
            checked.err().map(|panic| {
                let message = crate::base::panic::message(&*panic);
                let file = dir.join(format!("{name}.snap"));
                if message.starts_with("snapshot assertion for") {
                    // insta's own message names a line of niceeval, not of the user.
                    format!(
                        "the report differs from {}; review the change with `cargo insta review`",
                        file.display()
                    )
                } else {
                    format!("checking {} failed: {message}", file.display())
                }
            })
        }
    };
    if let Some(reason) = failure {
        let mut settings = Settings::gate();
        settings.weight = 0.0;
        report.assertions.push(AssertionResult::from_grade(
            format!("matches snapshot {name}"),
            AssertionKind::Scoped,
            &settings,
            Grade::score(0.0, reason),
        ));
        report.outcome = Outcome::Failed;
    }
}

/// Asserts that an [`EvalReport`]'s stable text ([`text`]) matches its insta snapshot, named
/// after the eval. Review changes with `cargo insta review`.
///
/// Expands at the call site, so the snapshot is stored in the calling crate's `snapshots/`
/// folder. `#[eval(snapshot)]` calls it for you.
///
/// ```no_run
/// # fn report() -> niceeval::EvalReport { unimplemented!() }
/// let report = report();
/// niceeval::assert_report_snapshot!(report);
/// ```
#[macro_export]
macro_rules! assert_report_snapshot {
    ($report:expr) => {{
        let report: &$crate::__private::EvalReport = &$report;
        // A run that never started (an unusable niceeval.toml) shows the environment, not the
        // agent: it fails the eval with its error and is not snapshotted.
        if $crate::__private::snapshot_applies(report) {
            $crate::__private::snapshot_settings(report).bind(|| {
                $crate::__private::insta::assert_snapshot!(
                    $crate::__private::snapshot_name(report),
                    $crate::__private::snapshot_text(report, env!("CARGO_MANIFEST_DIR"))
                );
            });
        }
    }};
}

/// Whether a report is snapshotted: not when its error is the configuration's (the eval never
/// ran; its snapshot would hold the error and the file's absolute path).
pub fn applies(report: &EvalReport) -> bool {
    report
        .error
        .as_ref()
        .is_none_or(|e| e.kind != crate::base::outcome::RunErrorKind::Config)
}

#[cfg(test)]
mod tests {
    use super::text;
    use crate::run::report::EvalReport;
    use serde_json::json;

    #[test]
    fn budgets_on_tokens_cost_and_time_are_measurements() {
        use crate::base::assertion::{Assertion, Checkable};
        use crate::base::event::Event;
        use crate::checks::run_budget::RunBudget;
        use crate::checks::scope::{RunView, ScopedCheck};
        use crate::config::Config;

        let events = [Event::Usage {
            input_tokens: 900,
            output_tokens: 300,
            cache_read_tokens: 0,
            cost_usd: Some(0.02),
            model: None,
        }];
        let config = Config::default();
        let run = RunView {
            events: &events,
            config: &config,
        };
        assert!(
            RunBudget::tokens(1000).evaluate(&run).measured,
            "max_tokens"
        );
        assert!(RunBudget::cost(0.5).evaluate(&run).measured, "max_cost");
        assert!(
            !RunBudget::tool_calls(3).evaluate(&run).measured,
            "max_tool_calls"
        );
        let value = json!({ "cost_usd": 0.01, "latency_ms": 250 });
        assert!(
            crate::checks::expect::cost(0.02)
                .evaluate(&value.subject())
                .measured,
            "cost"
        );
        assert!(
            crate::checks::expect::latency(300.0)
                .evaluate(&value.subject())
                .measured,
            "latency"
        );
        let includes = crate::checks::expect::includes("cost(");
        assert!(!includes.evaluate(&"cost(".subject()).measured, "includes");
    }

    #[test]
    fn a_measured_budget_keeps_its_verdict_but_not_its_numbers() {
        let report: EvalReport = serde_json::from_value(json!({
            "id": "demo::budget", "file": "tests/demo.rs", "line": 3, "outcome": "failed",
            "assertions": [
                {"name": "max_cost(0.01)", "kind": "efficiency", "severity": "gate",
                 "score": 0.4123, "threshold": 1.0, "passed": false,
                 "reason": "cost $0.0243, over the limit of $0.01", "measured": true},
                {"name": "turn 1: max_tool_calls(1)", "kind": "scoped", "severity": "gate",
                 "score": 1.0, "threshold": 1.0, "passed": true,
                 "reason": "1 tool call, within the limit of 1: lookup_order"}
            ],
            "duration_ms": 12.5,
            "usage": {"input_tokens": 1, "output_tokens": 2, "cache_read_tokens": 0},
            "runs": [], "reliability": {"n": 1, "c": 0, "pass_rate": 0.0, "pass_at_k": [0.0], "pass_hat_k": [0.0]},
            "min_pass_rate": 1.0
        }))
        .expect("a valid report");
        assert_eq!(
            text(&report),
            "outcome: failed\nassertions:\n  \
             - fail gate max_cost(0.01) score [measured] (threshold 1.00)\n    reason: [measured]\n  \
             - pass gate turn 1: max_tool_calls(1) score 1.00 (threshold 1.00)\n    \
             reason: 1 tool call, within the limit of 1: lookup_order\n"
        );
    }

    fn report_with(reason: &str) -> EvalReport {
        serde_json::from_value(json!({
            "id": "demo::refund", "file": "tests/demo.rs", "line": 3, "outcome": "passed",
            "assertions": [{"name": "includes(\"refund\")", "kind": "value", "severity": "gate",
              "score": 1.0, "passed": true, "reason": reason}],
            "duration_ms": 1.0, "usage": {"input_tokens": 0, "output_tokens": 0, "cache_read_tokens": 0},
            "runs": [], "reliability": {"n": 1, "c": 1, "pass_rate": 1.0, "pass_at_k": [1.0], "pass_hat_k": [1.0]},
            "min_pass_rate": 1.0
        }))
        .expect("a report")
    }

    #[test]
    fn multi_line_reasons_keep_their_line_breaks() {
        let snap = text(&report_with("first line\nsecond line\n  indented"));
        assert!(
            snap.ends_with(
                "  reason: first line\n            second line\n              indented\n"
            ),
            "{snap}"
        );
        assert!(
            !snap.contains("first line   second"),
            "not flattened: {snap}"
        );
    }

    #[test]
    fn without_reasons_a_reworded_reply_gives_the_same_snapshot() {
        let before = report_with("found \"refund\" in \"Your refund is on its way\"");
        let after = report_with("found \"refund\" in \"We sent your refund today\"");
        assert_ne!(text(&before), text(&after));
        assert_eq!(
            super::text_without_reasons(&before),
            super::text_without_reasons(&after)
        );
        assert!(
            super::text_without_reasons(&before)
                .ends_with("- pass gate includes(\"refund\") score 1.00\n")
        );
    }
}
