//! The one renderer of a report's text. [`Style::Report`] is the failure message under
//! `cargo test` and what the console, JUnit, Markdown and HTML reports show: identity, location,
//! run statistics, usage and every assertion. [`Style::Snapshot`] is the same walk in a stable
//! form for insta snapshots: no location, durations, tokens or costs, and measured numbers
//! (budgets) replaced by `[measured]`, so a snapshot changes only when behaviour does.

use std::fmt::Write as _;

use super::{EvalReport, Names};
use crate::base::assertion::{AssertionResult, Severity};
use crate::base::event::Event;
use crate::base::excerpt::format_usd;
use crate::base::outcome::Outcome;

/// Which form of the report text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Style {
    /// Everything a reader of a failure needs.
    Report,
    /// Only what is stable from run to run; `reasons: false` leaves the assertions' reasons
    /// out (they quote the reply, so a reworded reply changes them).
    Snapshot {
        /// Whether reasons are shown.
        reasons: bool,
    },
}

/// Renders `report` in `style`, named as a run of one test target names it (see [`Names`]).
pub(crate) fn render(report: &EvalReport, style: Style) -> String {
    render_named(report, style, Names::default())
}

/// Renders `report` in `style`, named by `names` (the run's: see [`Names`]).
pub(crate) fn render_named(report: &EvalReport, style: Style, names: Names) -> String {
    let mut out = String::new();
    header(&mut out, report, style, names);
    marks(&mut out, report, style);
    if style == Style::Report {
        totals(&mut out, report);
    }
    match style {
        Style::Report if !report.assertions.is_empty() => out.push('\n'),
        Style::Report => {}
        Style::Snapshot { .. } => out.push_str("assertions:\n"),
    }
    for assertion in &report.assertions {
        write_assertion(&mut out, assertion, 1, style);
    }
    out
}

/// The outcome line, and for several runs what they did.
fn header(out: &mut String, report: &EvalReport, style: Style, names: Names) {
    match style {
        Style::Snapshot { .. } => {
            let _ = writeln!(out, "outcome: {}", report.outcome);
            if report.below_threshold {
                out.push_str("below threshold: true\n");
            }
        }
        Style::Report => {
            let verdict = match (report.outcome, report.error.is_some()) {
                (Outcome::Failed, true) => "FAILED (error)",
                (Outcome::Failed, false) => "FAILED",
                (Outcome::Passed, _) if report.below_threshold => "passed (below threshold)",
                (Outcome::Passed, _) => "passed",
                (Outcome::Skipped, _) => "skipped",
            };
            let _ = writeln!(out, "eval {} {verdict}", names.name(&report.id));
            let _ = writeln!(out, "  at {}:{}", report.file, report.line);
            if report.runs.len() > 1 {
                runs(out, report);
            }
        }
    }
}

/// The runs of an eval run several times (report style).
fn runs(out: &mut String, report: &EvalReport) {
    let passed = report
        .runs
        .iter()
        .filter(|r| r.outcome == Outcome::Passed)
        .count();
    let _ = writeln!(
        out,
        "  runs: {passed}/{} passed, pass rate {:.2} (needs {:.2}); showing run {}",
        report.runs.len(),
        report.reliability.pass_rate,
        report.min_pass_rate,
        super::representative(&report.runs, report.outcome) + 1
    );
    let outcomes: Vec<&str> = report.runs.iter().map(|r| r.outcome.as_str()).collect();
    let _ = writeln!(out, "  run outcomes: {}", outcomes.join(", "));
    if report
        .runs
        .iter()
        .any(|r| r.usage.total_tokens() > 0 || r.cost_usd.is_some())
    {
        let each: Vec<String> = report
            .runs
            .iter()
            .map(|r| spent(r.usage.total_tokens(), r.cost_usd))
            .collect();
        let _ = writeln!(
            out,
            "  run usage: {}; total {}",
            each.join(", "),
            spent(
                report.total_usage.total_tokens(),
                report.total_usage.cost_usd
            )
        );
    }
    if !report.judge_usage.is_zero() {
        let _ = writeln!(
            out,
            "  judge usage over all runs: {}",
            spent(
                report.judge_usage.total_tokens(),
                report.judge_usage.cost_usd
            )
        );
    }
    let stats = &report.reliability;
    let k = stats.pass_at_k.len().div_ceil(2);
    if let (Some(at), Some(hat)) = (
        stats.pass_at_k.get(k.wrapping_sub(1)),
        stats.pass_hat_k.get(k.wrapping_sub(1)),
    ) {
        let _ = writeln!(
            out,
            "  pass@{k} {at:.2}, pass^{k} {hat:.2} (k = {k} of {} counted runs)",
            stats.n
        );
    }
    let _ = writeln!(
        out,
        "  run time: mean {:.0} ms, max {:.0} ms",
        report.mean_run_ms, report.max_run_ms
    );
}

/// The error, skip, stop and strict marks, in both styles (indented in the report).
fn marks(out: &mut String, report: &EvalReport, style: Style) {
    let pad = match style {
        Style::Report => "  ",
        Style::Snapshot { .. } => "",
    };
    if let Some(error) = &report.error {
        let message = match style {
            Style::Report => indent_rest(&error.message, "         "),
            Style::Snapshot { .. } => error.message.clone(),
        };
        let _ = writeln!(out, "{pad}error: {message}");
    }
    if let Some(reason) = &report.skip_reason {
        let _ = writeln!(out, "{pad}skipped: {reason}");
    }
    if let Some(stopped) = &report.stopped {
        let _ = writeln!(out, "{pad}stopped: {stopped}");
    }
    for line in partial_changes(&report.events) {
        let _ = writeln!(out, "{pad}{line}");
    }
    match style {
        Style::Report => {
            // Kept working copies (paths change every run: not in snapshots).
            let kept: Vec<&str> = report
                .runs
                .iter()
                .filter_map(|r| r.workspace.as_deref())
                .collect();
            match kept.as_slice() {
                [] => {}
                [one] => {
                    let _ = writeln!(out, "  working copy kept at {one}");
                }
                many => {
                    let _ = writeln!(out, "  working copies kept at {}", many.join(", "));
                }
            }
            if report.below_threshold && report.strict && report.error.is_none() {
                let _ = writeln!(
                    out,
                    "  strict mode: soft assertions below their threshold fail the eval"
                );
            }
        }
        Style::Snapshot { .. } => {
            if report.runs.len() > 1 {
                let _ = writeln!(
                    out,
                    "runs: {} (passed {})",
                    report.runs.len(),
                    report.reliability.c
                );
            }
        }
    }
}

/// One line per `workspace.changed` event that was cut at `[workspace] max_files` /
/// `max_bytes` (`partial: true`), naming the turn whose change it is: every report that shows
/// the working copy's changes says "partial" where a diff was cut, so a reader never takes the
/// part for the whole.
fn partial_changes(events: &[Event]) -> Vec<String> {
    let changes: Vec<bool> = events
        .iter()
        .filter_map(|e| match e {
            Event::WorkspaceChanged { partial, .. } => Some(*partial),
            _ => None,
        })
        .collect();
    changes
        .iter()
        .enumerate()
        .filter(|(_, partial)| **partial)
        .map(|(i, _)| {
            let which = if changes.len() == 1 {
                String::new()
            } else {
                format!(" {} of {}", i + 1, changes.len())
            };
            format!(
                "partial diff: the working copy's change{which} was over [workspace] max_files / \
                 max_bytes; the report and the checks saw only its first part"
            )
        })
        .collect()
}

/// `120 tokens $0.001`, or `120 tokens` when the cost is unknown (small costs with four
/// significant digits: `$0.00004500`).
fn spent(tokens: u64, cost: Option<f64>) -> String {
    match cost {
        Some(cost) => format!("{tokens} tokens {}", format_usd(cost)),
        None => format!("{tokens} tokens"),
    }
}

/// Counts, score, usage and metrics (report style).
fn totals(out: &mut String, report: &EvalReport) {
    let mut summary = vec![format!("{} assertion(s)", report.assertions.len())];
    let failed_gates = report
        .assertions
        .iter()
        .filter(|a| a.is_failed_gate())
        .count();
    if failed_gates > 0 {
        summary.push(format!("{failed_gates} gate(s) failed"));
    }
    let below = report
        .assertions
        .iter()
        .filter(|a| a.is_below_threshold())
        .count();
    if below > 0 {
        summary.push(format!("{below} below threshold"));
    }
    if let Some(score) = report.score {
        summary.push(format!("score {score:.2}"));
    }
    if report.usage.total_tokens() > 0 {
        summary.push(format!("{} tokens", report.usage.total_tokens()));
    }
    if let Some(cost) = report.cost_usd {
        summary.push(format_usd(cost));
    }
    let mut judge = crate::base::event::Usage::default();
    for usage in report.assertions.iter().filter_map(|a| a.usage.as_ref()) {
        judge.add_call(usage);
    }
    if !judge.is_zero() {
        summary.push(format!(
            "judge {}",
            spent(judge.total_tokens(), judge.cost_usd)
        ));
    }
    let _ = writeln!(out, "  {}", summary.join(", "));
    if !report.metrics.is_empty() {
        let metrics: Vec<String> = report
            .metrics
            .iter()
            .map(|(name, score)| format!("{name} {score:.2}"))
            .collect();
        let _ = writeln!(out, "  metrics: {}", metrics.join(", "));
    }
}

/// One assertion and its children, indented by depth.
fn write_assertion(out: &mut String, a: &AssertionResult, depth: usize, style: Style) {
    let pad = "  ".repeat(depth);
    match style {
        Style::Report => {
            let threshold = a
                .threshold
                .map(|t| format!(" (needs ≥ {t:.2})"))
                .unwrap_or_default();
            let _ = writeln!(
                out,
                "{pad}{:<5} {} {} — score {:.2}{threshold}",
                mark(a),
                a.severity.as_str(),
                a.name,
                a.score,
            );
            if !a.reason.is_empty() {
                let inner = format!("{pad}      ");
                let _ = writeln!(out, "{inner}{}", indent_rest(&a.reason, &inner));
            }
        }
        Style::Snapshot { .. } => {
            let verdict = if a.error.is_some() {
                "error"
            } else if a.passed {
                "pass"
            } else {
                "fail"
            };
            let threshold = a
                .threshold
                .map(|t| format!(" (threshold {t:.2})"))
                .unwrap_or_default();
            // A budget's score and reason carry what was measured (tokens, dollars,
            // milliseconds), which changes from run to run; its verdict is what a reviewer needs.
            let score = if a.measured {
                "[measured]".to_string()
            } else {
                format!("{:.2}", a.score)
            };
            let _ = writeln!(
                out,
                "{pad}- {verdict} {} {} score {score}{threshold}",
                a.severity.as_str(),
                a.name,
            );
            let reasons = matches!(style, Style::Snapshot { reasons: true });
            if a.measured && reasons {
                let _ = writeln!(out, "{pad}  reason: [measured]");
            } else if !a.reason.is_empty() && reasons {
                // Line breaks kept, continuation lines under the first.
                let inner = format!("{pad}          ");
                let _ = writeln!(out, "{pad}  reason: {}", indent_rest(&a.reason, &inner));
            }
        }
    }
    // The report nests children under the reason column; the snapshot one level deeper.
    let child_depth = match style {
        Style::Report => depth + 2,
        Style::Snapshot { .. } => depth + 1,
    };
    for child in &a.children {
        write_assertion(out, child, child_depth, style);
    }
}

/// The verdict column of the report style.
fn mark(a: &AssertionResult) -> &'static str {
    if a.error.is_some() {
        "ERROR"
    } else if a.passed {
        "ok"
    } else if a.severity == Severity::Soft {
        "BELOW"
    } else {
        "FAIL"
    }
}

/// Continuation lines of `text` indented by `pad`.
fn indent_rest(text: &str, pad: &str) -> String {
    text.lines().collect::<Vec<_>>().join(&format!("\n{pad}"))
}
