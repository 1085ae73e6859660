//! Where a series of runs moved beyond chance: the comparison's statistics
//! (`crate::run::compare`) applied along the history instead of between a baseline and a run.
//!
//! A point is compared as a change point: the up-to-`window` points before it against itself
//! and the up-to-`window - 1` points after it. Its **pass rate** is marked when the two sides'
//! passes differ beyond chance by Fisher's exact test at `[compare] alpha`; its **score** when
//! the two sides' mean scores differ by more than `[compare] metric_margin` and beyond chance
//! by Welch's t-test at `alpha` (two scored points or more on each side) — the rules a
//! baseline comparison applies to means over several runs. Either way the point itself must move the way the sides did
//! (its pass rate or score differs from the point before it in that direction), so a change is
//! marked where it starts, once, and not on the runs around it. The newest point has no runs
//! after it: one run is rarely enough to say (an eval run once per run needs a few runs on each
//! side; one run `runs = 10` times can be marked alone).

use serde::Serialize;

use crate::base::stats::{fisher_exact, welch_t_test};
use crate::config::CompareConfig;

/// What one point of a series holds, for marking.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Point {
    /// Runs that passed.
    pub passed: u64,
    /// Runs that counted (not skipped).
    pub counted: u64,
    /// Score, when there is one.
    pub score: Option<f64>,
}

/// How changes are told from noise.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MarkRule {
    /// The level of Fisher's and Welch's tests (`[compare] alpha`).
    pub alpha: f64,
    /// How far a mean score must move (`[compare] metric_margin`).
    pub metric_margin: f64,
    /// How many points on each side of a change are compared.
    pub window: usize,
}

impl MarkRule {
    /// Points compared on each side by default.
    pub const WINDOW: usize = 5;

    /// The rule of a crate's `[compare]` section.
    pub fn of(config: &CompareConfig) -> Self {
        MarkRule {
            alpha: config.alpha(),
            metric_margin: config.metric_margin(),
            window: Self::WINDOW,
        }
    }
}

impl Default for MarkRule {
    fn default() -> Self {
        MarkRule::of(&CompareConfig::default())
    }
}

/// A change marked at a point: what moved, from what to what.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Mark {
    /// The pass rate before the point and from it on, and Fisher's p-value; `None` when the
    /// pass rate did not move beyond chance.
    pub pass_rate: Option<Shift>,
    /// The mean score before and from the point on, and Welch's p-value; `None` when it did
    /// not move beyond the margin and beyond chance.
    pub score: Option<Shift>,
}

/// One side of a series against the other.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Shift {
    /// Before the point (its window).
    pub before: f64,
    /// From the point on (its window).
    pub after: f64,
    /// The test's p-value, when one was made.
    pub p_value: Option<f64>,
}

impl Shift {
    /// `after - before`.
    pub fn change(&self) -> f64 {
        self.after - self.before
    }
}

/// The marks of `points` (oldest first), one per point.
pub fn mark(points: &[Point], rule: &MarkRule) -> Vec<Option<Mark>> {
    let window = rule.window.max(1);
    (0..points.len())
        .map(|i| {
            if i == 0 {
                return None;
            }
            let before = &points[i.saturating_sub(window)..i];
            let after = &points[i..(i + window).min(points.len())];
            let mark = Mark {
                pass_rate: pass_rate_shift(points, i, before, after, rule),
                score: score_shift(points, i, before, after, rule),
            };
            (mark.pass_rate.is_some() || mark.score.is_some()).then_some(mark)
        })
        .collect()
}

fn pass_rate_shift(
    points: &[Point],
    i: usize,
    before: &[Point],
    after: &[Point],
    rule: &MarkRule,
) -> Option<Shift> {
    let sum = |side: &[Point]| {
        side.iter()
            .fold((0, 0), |(p, c), x| (p + x.passed, c + x.counted))
    };
    let ((pb, cb), (pa, ca)) = (sum(before), sum(after));
    let here = points[i];
    let previous = points[..i].iter().rev().find(|p| p.counted > 0)?;
    if cb == 0 || ca == 0 || here.counted == 0 {
        return None;
    }
    let rate = |p: u64, c: u64| p as f64 / c as f64;
    let (rb, ra) = (rate(pb, cb), rate(pa, ca));
    let moved = rate(here.passed, here.counted) - rate(previous.passed, previous.counted);
    if ra == rb || moved == 0.0 || moved.signum() != (ra - rb).signum() {
        return None;
    }
    let p_value = fisher_exact(pa, ca, pb, cb);
    (p_value < rule.alpha).then_some(Shift {
        before: rb,
        after: ra,
        p_value: Some(p_value),
    })
}

fn score_shift(
    points: &[Point],
    i: usize,
    before: &[Point],
    after: &[Point],
    rule: &MarkRule,
) -> Option<Shift> {
    let here = points[i].score?;
    let previous = points[..i].iter().rev().find_map(|p| p.score)?;
    let stats = |side: &[Point]| {
        let scores: Vec<f64> = side.iter().filter_map(|p| p.score).collect();
        let n = scores.len();
        (n > 0).then(|| {
            let mean = scores.iter().sum::<f64>() / n as f64;
            let var = if n > 1 {
                scores.iter().map(|s| (s - mean).powi(2)).sum::<f64>() / (n - 1) as f64
            } else {
                0.0
            };
            (mean, var.sqrt(), n as u64)
        })
    };
    let ((mb, sb, nb), (ma, sa, na)) = (stats(before)?, stats(after)?);
    if na < 2 || nb < 2 {
        return None;
    }
    let moved = here - previous;
    if (ma - mb).abs() <= rule.metric_margin
        || moved.abs() <= rule.metric_margin
        || moved.signum() != (ma - mb).signum()
    {
        return None;
    }
    let p_value = welch_t_test(ma, sa, na, mb, sb, nb);
    (p_value < rule.alpha).then_some(Shift {
        before: mb,
        after: ma,
        p_value: Some(p_value),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn once(passed: bool) -> Point {
        Point {
            passed: u64::from(passed),
            counted: 1,
            score: Some(if passed { 1.0 } else { 0.0 }),
        }
    }

    fn marked(points: &[Point]) -> Vec<usize> {
        mark(points, &MarkRule::default())
            .iter()
            .enumerate()
            .filter_map(|(i, m)| m.map(|_| i + 1))
            .collect()
    }

    #[test]
    fn twenty_runs_regressing_at_run_12_are_marked_at_12_and_nowhere_else() {
        let points: Vec<Point> = (1..=20).map(|run| once(run < 12)).collect();
        assert_eq!(marked(&points), vec![12]);
        let m = mark(&points, &MarkRule::default())[11].unwrap();
        let pass = m.pass_rate.unwrap();
        assert_eq!((pass.before, pass.after), (1.0, 0.0));
        assert!(pass.p_value.unwrap() < 0.01, "{pass:?}");
        assert_eq!(m.score.unwrap().change(), -1.0);
    }

    #[test]
    fn a_steady_or_flaky_series_and_a_single_failure_are_not_marked() {
        let steady: Vec<Point> = (0..20).map(|_| once(true)).collect();
        assert!(marked(&steady).is_empty());
        let flaky: Vec<Point> = (0..20).map(|i| once(i % 3 != 0)).collect();
        assert!(marked(&flaky).is_empty(), "{:?}", marked(&flaky));
        let blip: Vec<Point> = (0..20).map(|i| once(i != 9)).collect();
        assert!(marked(&blip).is_empty(), "{:?}", marked(&blip));
    }

    #[test]
    fn a_recovery_is_marked_where_it_starts_and_many_runs_per_point_can_be_marked_alone() {
        let recovering: Vec<Point> = (1..=20).map(|run| once(run >= 8)).collect();
        assert_eq!(marked(&recovering), vec![8]);
        let mut tens: Vec<Point> = (0..6)
            .map(|_| Point {
                passed: 10,
                counted: 10,
                score: None,
            })
            .collect();
        tens.push(Point {
            passed: 2,
            counted: 10,
            score: None,
        });
        assert_eq!(marked(&tens), vec![7]);
    }

    #[test]
    fn a_score_drifting_within_the_margin_is_not_marked_and_a_drop_past_it_is() {
        let score = |s: f64| Point {
            passed: 1,
            counted: 1,
            score: Some(s),
        };
        let drift: Vec<Point> = (0..20).map(|i| score(0.9 - 0.002 * i as f64)).collect();
        assert!(marked(&drift).is_empty());
        let drop: Vec<Point> = (1..=20)
            .map(|run| score(if run < 12 { 0.9 } else { 0.6 }))
            .collect();
        assert_eq!(marked(&drop), vec![12]);
        let m = mark(&drop, &MarkRule::default())[11].unwrap();
        assert!(m.pass_rate.is_none());
        assert!((m.score.unwrap().change() + 0.3).abs() < 1e-9);
    }
}
