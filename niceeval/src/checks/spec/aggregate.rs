//! How the results of an assertion list fold into its score and named scores, as promptfoo's
//! `AssertionsResult` does.
//!
//! - The score is the weighted mean, `Σ score·weight / Σ weight`; 0 when every assertion weighs
//!   0; 1 for an empty list (nothing to check).
//! - A named metric is the weighted mean of the assertions naming it, and 0 when they all weigh
//!   0 (the metric is still reported).
//! - An `assert-set` counts once with its own weight and metric; its members' metrics count
//!   too, weighted by the member's weight times the set's (a member metric equal to the set's
//!   own is counted through the set only).

use std::collections::BTreeMap;

use crate::base::assertion::AssertionResult;

/// Sums of `score·weight` and `weight` per metric.
#[derive(Default)]
struct Metrics(BTreeMap<String, (f64, f64)>);

impl Metrics {
    fn add(&mut self, metric: &str, score: f64, weight: f64) {
        let entry = self.0.entry(metric.to_string()).or_insert((0.0, 0.0));
        entry.0 += score * weight;
        entry.1 += weight;
    }

    fn normalized(self) -> BTreeMap<String, f64> {
        self.0
            .into_iter()
            .map(|(name, (sum, weight))| (name, if weight > 0.0 { sum / weight } else { 0.0 }))
            .collect()
    }
}

/// The list's score.
pub(super) fn score(results: &[AssertionResult]) -> f64 {
    if results.is_empty() {
        return 1.0;
    }
    let (sum, weight) = results.iter().fold((0.0, 0.0), |(s, w), r| {
        (s + r.score * r.weight, w + r.weight)
    });
    if weight > 0.0 { sum / weight } else { 0.0 }
}

/// The list's named scores; `is_set[i]` says whether result `i` is an `assert-set`, whose
/// children are its members' results.
pub(super) fn named_scores(results: &[AssertionResult], is_set: &[bool]) -> BTreeMap<String, f64> {
    let mut metrics = Metrics::default();
    for (r, set) in results.iter().zip(is_set) {
        if let Some(m) = &r.metric {
            metrics.add(m, r.score, r.weight);
        }
        if !set {
            continue;
        }
        let mut members = Metrics::default();
        for member in &r.children {
            if let Some(m) = &member.metric {
                members.add(m, member.score, member.weight);
            }
        }
        for (name, (sum, weight)) in members.0 {
            if Some(&name) == r.metric.as_ref() {
                continue;
            }
            let mean = if weight > 0.0 { sum / weight } else { 0.0 };
            metrics.add(&name, mean, weight * r.weight);
        }
    }
    metrics.normalized()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::assertion::{AssertionKind, Grade, Settings};

    fn result(score: f64, weight: f64, metric: Option<&str>) -> AssertionResult {
        let mut settings = Settings::gate();
        settings.weight = weight;
        settings.metric = metric.map(str::to_string);
        AssertionResult::from_grade(
            "a".into(),
            AssertionKind::Value,
            &settings,
            Grade::score(score, ""),
        )
    }

    #[test]
    fn scores_follow_promptfoo() {
        // (scores and weights) → list score
        let table: &[(&[(f64, f64)], f64)] = &[
            (&[], 1.0),
            (&[(0.0, 0.0)], 0.0),
            (&[(1.0, 0.0)], 0.0),
            (&[(0.0, 0.0), (1.0, 1.0)], 1.0),
            (&[(1.0, 2.0), (0.0, 1.0)], 2.0 / 3.0),
            (&[(0.5, 1.0), (1.0, 1.0)], 0.75),
        ];
        for (items, expected) in table {
            let results: Vec<_> = items.iter().map(|(s, w)| result(*s, *w, None)).collect();
            assert!((score(&results) - expected).abs() < 1e-12, "{items:?}");
        }
    }

    #[test]
    fn named_scores_weight_zero_and_sets() {
        let plain = [result(1.0, 0.0, Some("m"))];
        assert_eq!(named_scores(&plain, &[false])["m"], 0.0);

        let mixed = [result(1.0, 2.0, Some("c")), result(0.0, 0.0, Some("c"))];
        assert_eq!(named_scores(&mixed, &[false, false])["c"], 1.0);

        // A set of weight 2 with metric `tone` holding members with metrics `a` and `tone`.
        let mut set = result(0.5, 2.0, Some("tone"));
        set.children = vec![
            result(1.0, 1.0, Some("a")),
            result(0.0, 3.0, Some("a")),
            result(0.0, 1.0, Some("tone")),
        ];
        let outside = result(1.0, 1.0, Some("a"));
        let named = named_scores(&[set.clone(), outside.clone()], &[true, false]);
        assert_eq!(named["tone"], 0.5, "the set's own score only");
        // a: members (1·1 + 0·3)/4 = 0.25 with weight 4·2 = 8, plus 1 with weight 1.
        assert!((named["a"] - (0.25 * 8.0 + 1.0) / 9.0).abs() < 1e-12);
        // Children of other assertions are not metrics of the list.
        let named = named_scores(&[set, outside], &[false, false]);
        assert_eq!(named["a"], 1.0);
    }
}
