//! The comparison's text: every word reports say about a [`Comparison`] with a baseline — the
//! kinds, the changes of pass rate, score, metrics, tokens and cost, the regressions, the
//! datasets — and the console's block. `compare` only computes; the console, Markdown and HTML
//! reporters all say it with these functions, and the comparison table is [`comparison_table`]
//! (a [`Table`] each format renders).

use crate::base::outcome::Outcome;
use crate::run::compare::{
    Comparison, DatasetChange, Delta, EvalChange, Kind, PassRateChange, Regression, RegressionKind,
};

use super::Names;
use super::table::{Cell, Column, Table, Tone};

/// How reports name a kind: `broke`, `still failing`, ...
pub(crate) fn kind(kind: Kind) -> &'static str {
    match kind {
        Kind::Broke => "broke",
        Kind::Worse => "worse",
        Kind::StillFailing => "still failing",
        Kind::New => "new",
        Kind::Removed => "removed",
        Kind::Fixed => "fixed",
        Kind::Better => "better",
        Kind::Skipped => "skipped",
        Kind::Unchanged => "unchanged",
    }
}

/// `+0.20`, `−0.30` (a true minus sign), `±0.00`.
pub(crate) fn signed(x: f64, digits: usize) -> String {
    let text = format!("{:.digits$}", x.abs());
    if text.chars().all(|c| c == '0' || c == '.') {
        format!("±{text}")
    } else if x < 0.0 {
        format!("−{text}")
    } else {
        format!("+{text}")
    }
}

/// A p-value as reports print it: `p = 0.0002` (4 decimals), `p < 0.0001` below.
pub(crate) fn p_text(p: f64) -> String {
    if p < 0.0001 {
        "p < 0.0001".to_string()
    } else {
        format!("p = {p:.4}")
    }
}

/// `95`, `0.05`, `0.0001`: a number without trailing zeros (up to 6 decimals).
fn trim_number(x: f64) -> String {
    let text = format!("{x:.6}");
    text.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// A bound of an interval of a difference: `−0.30`, `0.12`.
fn signed_bound(x: f64) -> String {
    if x < 0.0 && format!("{:.2}", x.abs()) != "0.00" {
        format!("−{:.2}", x.abs())
    } else {
        format!("{:.2}", x.abs())
    }
}

/// A value in the baseline and now: `0.90 → 0.60 (−0.30)` with `digits` decimals,
/// `(−0.30, p = 0.0012)` with a test; `– → 0.60` when the baseline has none.
pub(crate) fn delta(d: &Delta, digits: usize) -> String {
    let value = |v: Option<f64>| v.map_or("–".to_string(), |v| format!("{v:.digits$}"));
    match d.change() {
        Some(change) => format!(
            "{} → {} ({}{})",
            value(d.baseline),
            value(d.current),
            signed(change, digits),
            d.p_value
                .map(|p| format!(", {}", p_text(p)))
                .unwrap_or_default()
        ),
        None => format!("{} → {}", value(d.baseline), value(d.current)),
    }
}

/// Decimals that show a cost per run with three significant digits (four decimals at least,
/// ten at most), so a run that cost $0.0000229 does not read `0.0000`.
pub(crate) fn cost_digits(d: &Delta) -> usize {
    [d.baseline, d.current]
        .into_iter()
        .flatten()
        .filter(|c| *c > 0.0)
        .map(|c| (2.0 - c.log10().floor()).max(0.0) as usize)
        .fold(4, usize::max)
        .min(10)
}

/// A pass-rate change: `0.90 → 0.30 (−0.60, 95% CI [−0.77, −0.30], p = 0.0002)`.
pub(crate) fn pass_rate(r: &PassRateChange) -> String {
    format!("{:.2} → {:.2} ({})", r.baseline_rate, r.rate, difference(r))
}

/// The difference of a pass-rate change, its interval and its test: `−0.60, 95% CI [−0.77,
/// −0.30], p = 0.0002`.
pub(crate) fn difference(r: &PassRateChange) -> String {
    format!(
        "{}, {}% CI [{}, {}], {}",
        signed(r.change(), 2),
        trim_number((1.0 - r.alpha) * 100.0),
        signed_bound(r.difference.low),
        signed_bound(r.difference.high),
        p_text(r.p_value)
    )
}

/// An eval's kind, with the qualifier a reader needs: `broke (within chance, p = 0.4871)`.
pub(crate) fn label(e: &EvalChange) -> String {
    match (&e.pass_rate, e.within_chance) {
        (Some(rate), true) => format!("{} (within chance, {})", kind(e.kind), p_text(rate.p_value)),
        _ => kind(e.kind).to_string(),
    }
}

/// What moved in an eval, in one line: the failed gates, the pass rate (with its interval and
/// p), the score, each metric that moved, tokens and cost; empty when nothing did.
pub(crate) fn details(e: &EvalChange) -> String {
    let mut parts = Vec::new();
    if !e.failed_gates.is_empty() {
        parts.push(format!("failed: {}", e.failed_gates.join(", ")));
    }
    if let Some(rate) = &e.pass_rate
        && rate.change().abs() >= 0.005
    {
        parts.push(format!("pass rate {}", pass_rate(rate)));
    }
    let moved = |d: &Delta| d.change().is_some_and(|c| c.abs() >= 0.005);
    // A score that is each run's pass/fail says what the pass rate said.
    let said = e.score_is_pass_fail && e.pass_rate.is_some();
    if moved(&e.score) && !said {
        parts.push(format!("score {}", delta(&e.score, 2)));
    }
    for (name, d) in &e.metrics {
        if moved(d) || d.baseline.is_none() != d.current.is_none() {
            parts.push(format!("{name} {}", delta(d, 2)));
        }
    }
    if e.tokens.change().is_some_and(|c| c.abs() >= 0.5) {
        parts.push(format!("tokens/run {}", delta(&e.tokens, 0)));
    }
    if e.cost.change().is_some_and(|c| c.abs() >= 0.000_05) {
        parts.push(format!("cost/run {}", delta(&e.cost, cost_digits(&e.cost))));
    }
    parts.join("; ")
}

/// A dataset over its cases: `4 of 5 → 3 of 5 cases passed, mean score 0.80 → 0.70 (−0.10);
/// 1 broke`.
pub(crate) fn dataset(d: &DatasetChange) -> String {
    let mut line = format!(
        "{} of {} → {} of {} cases passed",
        d.baseline.0, d.baseline.1, d.current.0, d.current.1
    );
    if d.score.baseline.is_some() || d.score.current.is_some() {
        line.push_str(&format!(", mean score {}", delta(&d.score, 2)));
    }
    let kinds: Vec<String> = d
        .kinds
        .iter()
        .filter(|(k, _)| **k != Kind::Unchanged)
        .map(|(k, n)| format!("{n} {}", kind(*k)))
        .collect();
    if !kinds.is_empty() {
        line.push_str(&format!("; {}", kinds.join(", ")));
    }
    line
}

/// `2 fixed, 1 broke, 1 worse, 3 unchanged` (in the order of [`Kind`]).
pub(crate) fn counts(c: &Comparison) -> String {
    let counts = c.counts();
    if counts.is_empty() {
        return "no evals on either side".to_string();
    }
    counts
        .iter()
        .map(|(k, n)| format!("{n} {}", kind(*k)))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The counts, and how many baseline evals a filtered run did not run:
/// `1 broke, 3 unchanged (2 baseline evals not run)`.
pub(crate) fn counts_and_not_run(c: &Comparison) -> String {
    if c.not_run > 0 {
        format!("{} ({} baseline evals not run)", counts(c), c.not_run)
    } else {
        counts(c)
    }
}

/// Said once per comparison when some evals ran too few times for any change of their pass
/// rate to be beyond chance: `note: 2 eval(s) were compared at 3 runs in the baseline and 3
/// now, where no change of pass rate can be beyond chance at alpha 0.05 (3/3 → 0/3 has p =
/// 0.1000); 4 runs on each side can ([run] runs = 4, or --runs 4)`.
pub(crate) fn underpowered(c: &Comparison) -> Option<String> {
    let (baseline, now, p) = c.underpowered_runs?;
    let needed = match c.runs_needed {
        Some(n) => format!(
            "; {n} runs on each side can ([run] runs = {n}, or --runs {n}, for the baseline and the run)"
        ),
        None => String::new(),
    };
    Some(format!(
        "note: {} eval(s) were compared at {baseline} run(s) in the baseline and {now} now, where no change of pass rate can be beyond chance at alpha {} ({baseline}/{baseline} → 0/{now} has {}){needed}",
        c.underpowered,
        trim_number(c.alpha),
        p_text(p)
    ))
}

/// The policy: `broken-gate, pass-rate-drop` or `nothing`.
pub(crate) fn policy(c: &Comparison) -> String {
    if c.fail_on.is_empty() {
        "nothing".to_string()
    } else {
        c.fail_on
            .iter()
            .map(|k| k.name())
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// The levels the policy decides with: `alpha 0.05, metric margin 0.05`, and the margins of
/// the rises it fails on (`tokens margin 10%`).
pub(crate) fn levels(c: &Comparison) -> String {
    let mut levels = format!(
        "alpha {}, metric margin {}",
        trim_number(c.alpha),
        trim_number(c.metric_margin)
    );
    if c.fail_on.contains(&RegressionKind::TokensRise) {
        levels.push_str(&format!(", tokens margin {}", percent(c.tokens_margin)));
    }
    if c.fail_on.contains(&RegressionKind::CostRise) {
        levels.push_str(&format!(", cost margin {}", percent(c.cost_margin)));
    }
    levels
}

/// What a regression is, for people: `pass rate fell beyond chance: 0.90 → 0.30 (...)`.
pub(crate) fn regression(c: &Comparison, r: &Regression) -> String {
    let Some(e) = c.eval(&r.id) else {
        return String::new();
    };
    match r.kind {
        RegressionKind::BrokenGate => {
            let gates = if e.failed_gates.is_empty() {
                String::new()
            } else {
                format!(" ({} failed)", e.failed_gates.join(", "))
            };
            match &e.pass_rate {
                Some(rate) if rate.runs > 1 || rate.baseline_runs > 1 => format!(
                    "passed in the baseline, fails now{gates}: pass rate {}",
                    pass_rate(rate)
                ),
                _ => format!("passed in the baseline, fails now{gates}"),
            }
        }
        RegressionKind::PassRateDrop => match &e.pass_rate {
            Some(rate) => format!("pass rate fell beyond chance: {}", pass_rate(rate)),
            None => "pass rate fell".to_string(),
        },
        RegressionKind::MetricDrop => {
            let mut drops = Vec::new();
            let both_passed =
                e.baseline_outcome == Some(Outcome::Passed) && e.outcome == Some(Outcome::Passed);
            if both_passed && !e.score_is_pass_fail && c.dropped(&e.score) {
                drops.push(format!("score {}", delta(&e.score, 2)));
            }
            for (name, d) in &e.metrics {
                if c.dropped(d) {
                    drops.push(format!("{name} {}", delta(d, 2)));
                }
            }
            format!(
                "fell by more than {}: {}",
                trim_number(c.metric_margin),
                drops.join("; ")
            )
        }
        RegressionKind::TokensRise => format!(
            "rose by more than {}: tokens/run {}",
            percent(c.tokens_margin),
            rise(&e.tokens, 0)
        ),
        RegressionKind::CostRise => format!(
            "rose by more than {}: cost/run {}",
            percent(c.cost_margin),
            rise(&e.cost, cost_digits(&e.cost))
        ),
    }
}

/// A fraction as a percentage: `10%`, `12.5%`.
fn percent(x: f64) -> String {
    format!("{}%", trim_number(x * 100.0))
}

/// A rise: `1200 → 1500 (+300, +25%)`.
fn rise(d: &Delta, digits: usize) -> String {
    let value = |v: Option<f64>| v.map_or("–".to_string(), |v| format!("{v:.digits$}"));
    match (d.change(), d.relative_change()) {
        (Some(change), Some(relative)) => format!(
            "{} → {} ({}, +{})",
            value(d.baseline),
            value(d.current),
            signed(change, digits),
            percent(relative)
        ),
        _ => delta(d, digits),
    }
}

/// The comparison as plain text lines, for the console: the counts, each changed eval with
/// what moved, each dataset, and the regressions; evals named by `names` (the run's).
pub(crate) fn console(c: &Comparison, names: Names) -> Vec<String> {
    let mut lines = vec![format!(
        "compared with baseline {}: {}",
        c.baseline,
        counts_and_not_run(c)
    )];
    for e in c.changed() {
        let details = details(e);
        lines.push(if details.is_empty() {
            format!("    {:<14} {}", label(e), names.name(&e.id))
        } else {
            format!("    {:<14} {} — {details}", label(e), names.name(&e.id))
        });
    }
    for d in &c.datasets {
        lines.push(format!("    dataset {}: {}", names.name(&d.id), dataset(d)));
    }
    lines.extend(underpowered(c));
    let regressions = c.regressions();
    if regressions.is_empty() {
        lines.push(format!(
            "no regression (fail_on: {}; {})",
            policy(c),
            levels(c)
        ));
    } else {
        lines.push(format!(
            "REGRESSION: {} (fail_on: {}):",
            regressions.len(),
            policy(c)
        ));
        for r in &regressions {
            lines.push(format!(
                "    {} {}: {}",
                r.kind.name(),
                names.name(&r.id),
                regression(c, r)
            ));
        }
    }
    lines
}

/// How a change reads at a glance: what a reviewer must look at, a failure that stays, an
/// improvement, or nothing to act on.
pub(crate) fn tone(e: &EvalChange) -> Tone {
    match e.kind {
        Kind::Broke | Kind::Worse if !e.within_chance => Tone::Worse,
        Kind::StillFailing => Tone::Failing,
        Kind::Fixed | Kind::Better => Tone::Better,
        _ => Tone::Same,
    }
}

/// The table of every eval that changed: its change, pass rate (with Fisher's exact test),
/// score, metrics, tokens and cost per run, before and after; `None` when nothing changed.
/// Evals are named by `names` (the run's).
pub(crate) fn comparison_table(c: &Comparison, names: Names) -> Option<Table> {
    let changed: Vec<&EvalChange> = c.changed().collect();
    if changed.is_empty() {
        return None;
    }
    let dash = |s: String| Cell::text(if s.is_empty() { "–".to_string() } else { s });
    let delta_or_empty = |d: &Delta, digits: usize| {
        if d.baseline.is_none() && d.current.is_none() {
            String::new()
        } else {
            delta(d, digits)
        }
    };
    let rows = changed
        .into_iter()
        .map(|e| {
            let metrics: Vec<String> = e
                .metrics
                .iter()
                .map(|(name, d)| format!("{name} {}", delta(d, 2)))
                .collect();
            vec![
                Cell::code(names.name(&e.id)),
                Cell::text(label(e)).tone(tone(e)),
                dash(e.pass_rate.as_ref().map(pass_rate).unwrap_or_default()),
                dash(delta_or_empty(&e.score, 2)),
                dash(metrics.join("; ")),
                dash(delta_or_empty(&e.tokens, 0)),
                dash(delta_or_empty(&e.cost, cost_digits(&e.cost))),
            ]
        })
        .collect();
    Some(Table {
        columns: vec![
            Column::text("eval"),
            Column::text("change"),
            Column::text("pass rate (Fisher's exact test)"),
            Column::text("score"),
            Column::text("metrics"),
            Column::text("tokens/run"),
            Column::text("cost/run"),
        ],
        rows,
    })
}

#[cfg(test)]
mod scenarios;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pass_rate_change_reads_with_its_interval_and_test() {
        let c = PassRateChange::new(18, 20, 6, 20, 0.05);
        assert_eq!(
            pass_rate(&c),
            "0.90 → 0.30 (−0.60, 95% CI [−0.77, −0.30], p = 0.0002)"
        );
        // The difference alone (the viewer's statistics cell), its point estimate first.
        assert_eq!(difference(&c), "−0.60, 95% CI [−0.77, −0.30], p = 0.0002");
    }

    #[test]
    fn a_small_cost_keeps_three_significant_digits() {
        let cost = |baseline, current| Delta {
            baseline,
            current,
            p_value: None,
        };
        assert_eq!(cost_digits(&cost(Some(2.29), Some(2.5))), 4);
        let small = cost(Some(0.000_022_9), Some(0.000_031));
        assert_eq!(cost_digits(&small), 7);
        assert_eq!(
            delta(&small, cost_digits(&small)),
            "0.0000229 → 0.0000310 (+0.0000081)"
        );
        assert_eq!(cost_digits(&cost(None, Some(0.0))), 4);
        assert_eq!(cost_digits(&cost(None, Some(1e-15))), 10);
    }

    #[test]
    fn runs_too_few_for_any_change_to_be_beyond_chance_are_said_once_with_the_runs_that_can() {
        use crate::run::compare::Baseline;
        let side = |a: u64, b: u64| {
            Baseline::parse(
                &format!(
                    r#"{{"niceeval_baseline": 1, "evals": [
                  {{"id": "evals::a", "outcome": "{}", "runs": 3, "passed": {a}, "pass_rate": {}}},
                  {{"id": "evals::b", "outcome": "{}", "runs": 3, "passed": {b}, "pass_rate": {}}},
                  {{"id": "evals::c", "outcome": "passed", "runs": 1, "passed": 1, "pass_rate": 1.0}}
                ]}}"#,
                    if a == 3 { "passed" } else { "failed" },
                    a as f64 / 3.0,
                    if b == 3 { "passed" } else { "failed" },
                    b as f64 / 3.0,
                ),
                "x.json",
            )
            .expect("a baseline")
        };
        let (before, now) = (side(3, 3), side(0, 1));
        let c = Comparison::new(&before, &now.evals, &Default::default());
        let lines = console(&c, Names::default());
        let notes: Vec<&String> = lines.iter().filter(|l| l.starts_with("note:")).collect();
        assert_eq!(
            notes,
            [
                "note: 2 eval(s) were compared at 3 run(s) in the baseline and 3 now, where no change of pass rate can be beyond chance at alpha 0.05 (3/3 → 0/3 has p = 0.1000); 4 runs on each side can ([run] runs = 4, or --runs 4, for the baseline and the run)"
            ],
            "{lines:#?}"
        );
        assert!(
            lines
                .iter()
                .any(|l| l.contains("broke (within chance, p = 0.1000)"))
        );
        // Enough runs: nothing to say.
        assert_eq!(crate::run::compare::runs_needed(0.05), Some(4));
        assert!(crate::run::compare::smallest_p(4, 4) < 0.05);
        let c = Comparison::new(&before, &before.evals, &Default::default());
        assert!(underpowered(&c).is_some());
        let c = Comparison::new(&now, &now.evals, &Default::default());
        assert!(underpowered(&c).is_some());
    }

    #[test]
    fn signs_are_true_minus_and_plus_minus_zero() {
        assert_eq!(signed(0.2, 2), "+0.20");
        assert_eq!(signed(-0.3, 2), "−0.30");
        assert_eq!(signed(-0.001, 2), "±0.00");
        assert_eq!(p_text(0.000_01), "p < 0.0001");
    }

    #[test]
    fn levels_keep_their_digits() {
        assert_eq!(trim_number(0.05), "0.05");
        assert_eq!(trim_number(0.0001), "0.0001");
        assert_eq!(trim_number(95.0), "95");
        assert_eq!(trim_number(99.99), "99.99");
        assert_eq!(percent(0.1), "10%");
        assert_eq!(percent(0.125), "12.5%");
    }
}
