//! The run's distributions for the served page's plots: the score, duration, cost and tokens
//! of the evals a query keeps, binned here as `plots.js` bins them in the one-file page (the
//! served page holds only the rows in view), each with its median and 90th percentile.
//!
//! The bins are `plots.js`'s `bins` written again in Rust, rule for rule: equal bins over the
//! values' range (the score over [0, 1] in tenths), or equal in log scale when the positive
//! values span two decades or more, the values at 0 or below then counted apart.

use serde::Serialize;

use super::index::Row;

/// One field's histogram, as `plots.js` draws it.
#[derive(Debug, Serialize, PartialEq)]
pub(super) struct Binned {
    edges: Vec<f64>,
    counts: Vec<u64>,
    log: bool,
    zeros: u64,
    n: usize,
    median: Option<f64>,
    p90: Option<f64>,
}

/// How a field is binned.
enum Scale {
    /// Equal bins over a fixed range.
    Fixed { lo: f64, hi: f64, bins: usize },
    /// Equal bins over the values' range, in log scale when they span two decades.
    Auto,
}

/// The distributions of `rows`: `{evals, score, duration, cost, tokens}`.
pub(super) fn distributions(rows: &[&Row]) -> serde_json::Value {
    let field = |f: fn(&Row) -> f32, scale: Scale| {
        let values: Vec<f64> = rows
            .iter()
            .map(|r| f64::from(f(r)))
            .filter(|x| x.is_finite())
            .collect();
        binned(values, &scale)
    };
    serde_json::json!({
        "evals": rows.len(),
        "score": field(|r| r.score, Scale::Fixed { lo: 0.0, hi: 1.0, bins: 10 }),
        "duration": field(|r| r.duration_ms, Scale::Auto),
        "cost": field(|r| r.cost, Scale::Auto),
        "tokens": field(|r| r.tokens, Scale::Auto),
    })
}

fn binned(mut values: Vec<f64>, scale: &Scale) -> Binned {
    let n = values.len();
    if n == 0 {
        return Binned {
            edges: Vec::new(),
            counts: Vec::new(),
            log: false,
            zeros: 0,
            n: 0,
            median: None,
            p90: None,
        };
    }
    let (mut min, mut max, mut positive) = (f64::INFINITY, f64::NEG_INFINITY, f64::INFINITY);
    for &v in &values {
        min = min.min(v);
        max = max.max(v);
        if v > 0.0 {
            positive = positive.min(v);
        }
    }
    let (lo, hi, count, log) = match *scale {
        Scale::Fixed { lo, hi, bins } => (lo, hi, bins, false),
        Scale::Auto => {
            let log = positive.is_finite() && max / positive >= 100.0;
            // At most 30 bins, about √n of them.
            let count = ((n as f64).sqrt().ceil() as usize).clamp(1, 30);
            (if log { positive } else { min }, max, count, log)
        }
    };
    let median = quantile(&mut values, 0.5);
    let p90 = quantile(&mut values, 0.9);
    if hi <= lo {
        // One value (or all equal): one bin holding them all.
        return Binned {
            edges: vec![lo, hi],
            counts: vec![n as u64],
            log: false,
            zeros: 0,
            n,
            median,
            p90,
        };
    }
    let (a, b) = if log {
        (lo.log10(), hi.log10())
    } else {
        (lo, hi)
    };
    let mut edges: Vec<f64> = (0..=count)
        .map(|k| {
            let e = a + (b - a) * k as f64 / count as f64;
            if log { 10f64.powf(e) } else { e }
        })
        .collect();
    edges[0] = lo;
    edges[count] = hi;
    let mut counts = vec![0u64; count];
    let mut zeros = 0;
    for &v in &values {
        if log && v <= 0.0 {
            zeros += 1;
            continue;
        }
        if v < lo || v > hi {
            continue;
        }
        let at = if log { v.log10() } else { v };
        let mut k = (((at - a) * count as f64) / (b - a)).floor().max(0.0) as usize;
        k = k.min(count - 1);
        // Floating point at an edge: the bin whose [lo, hi) holds it.
        while k > 0 && v < edges[k] {
            k -= 1;
        }
        while k < count - 1 && v >= edges[k + 1] {
            k += 1;
        }
        counts[k] += 1;
    }
    Binned {
        edges,
        counts,
        log,
        zeros,
        n,
        median,
        p90,
    }
}

/// The value at `q` of the sorted values (`plots.js`'s `quantile`: the one at ⌊q·n⌋), found
/// without sorting them all.
fn quantile(values: &mut [f64], q: f64) -> Option<f64> {
    if values.is_empty() {
        return None;
    }
    let at = ((q * values.len() as f64).floor() as usize).min(values.len() - 1);
    let (_, v, _) = values.select_nth_unstable_by(at, f64::total_cmp);
    Some(*v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scores_fall_in_tenths_and_the_top_bin_holds_one() {
        let b = binned(
            vec![0.0, 0.05, 0.1, 0.55, 0.99, 1.0, 1.0],
            &Scale::Fixed {
                lo: 0.0,
                hi: 1.0,
                bins: 10,
            },
        );
        assert_eq!(b.counts, [2, 1, 0, 0, 0, 1, 0, 0, 0, 3]);
        assert_eq!((b.n, b.log, b.zeros), (7, false, 0));
        assert_eq!(b.median, Some(0.55));
        assert_eq!(b.p90, Some(1.0));
    }

    #[test]
    fn values_across_decades_are_binned_in_log_scale_with_zeros_apart() {
        let mut values = vec![0.0, 0.0];
        values.extend((0..100).map(|k| 10f64.powf(k as f64 / 25.0)));
        let b = binned(values, &Scale::Auto);
        assert!(b.log);
        assert_eq!(b.zeros, 2);
        assert_eq!(b.counts.len(), 11, "about √102 bins");
        assert_eq!(b.counts.iter().sum::<u64>(), 100);
        assert_eq!(b.edges.first(), Some(&1.0));
        assert!(
            (b.edges.last().copied().unwrap_or_default() - 10f64.powf(99.0 / 25.0)).abs() < 1e-9
        );
    }

    #[test]
    fn one_value_is_one_bin_and_none_is_empty() {
        let b = binned(vec![42.0; 3], &Scale::Auto);
        assert_eq!((b.edges, b.counts), (vec![42.0, 42.0], vec![3]));
        let b = binned(Vec::new(), &Scale::Auto);
        assert_eq!((b.n, b.median), (0, None));
    }

    #[test]
    fn a_narrow_range_is_binned_linearly() {
        // 10 to 100: one decade, not two.
        let b = binned((10..=100).map(f64::from).collect(), &Scale::Auto);
        assert!(!b.log);
        assert_eq!(b.counts.len(), 10, "⌈√91⌉ bins");
        assert_eq!(b.counts.iter().sum::<u64>(), 91);
        assert_eq!(b.median, Some(55.0));
        assert_eq!(b.p90, Some(91.0));
    }
}
