//! Reliability statistics over many runs of one eval: pass rate, the unbiased pass@k estimator
//! and pass^k.

use serde::{Deserialize, Serialize};

/// Unbiased pass@k: the probability that at least one of `k` runs drawn without replacement from
/// `n` runs (of which `c` passed) passed, `1 − C(n−c, k) / C(n, k)`.
///
/// Computed as a product, so large `n` neither overflows nor loses precision. `k > n` is
/// clamped to `n`; `k = 0` is 0.
///
/// ```
/// use niceeval::stats::pass_at_k;
///
/// assert_eq!(pass_at_k(5, 0, 3), 0.0);
/// assert_eq!(pass_at_k(5, 3, 3), 1.0);          // only 2 failures: any 3 include a pass
/// assert!((pass_at_k(5, 2, 2) - 0.7).abs() < 1e-12); // 1 − C(3,2)/C(5,2) = 1 − 3/10
/// ```
pub fn pass_at_k(n: u64, c: u64, k: u64) -> f64 {
    let c = c.min(n);
    let k = k.min(n);
    if k == 0 {
        return 0.0;
    }
    if n - c < k {
        return 1.0;
    }
    // C(n−c, k) / C(n, k) = Π_{i = n−c+1}^{n} (1 − k / i)
    let mut ratio = 1.0;
    for i in (n - c + 1)..=n {
        ratio *= 1.0 - k as f64 / i as f64;
    }
    tidy(1.0 - ratio)
}

/// Rounds a probability to 12 decimals: far below any difference a report shows, and enough to
/// print `1 − 0.8` as `0.2` rather than `0.19999999999999996` in JSON, HTML and Markdown.
fn tidy(p: f64) -> f64 {
    (p * 1e12).round() / 1e12
}

/// pass^k: the probability that all of `k` runs drawn without replacement passed,
/// `C(c, k) / C(n, k)`. 0 when `k > c`; `k = 0` is 1.
///
/// ```
/// use niceeval::stats::pass_hat_k;
///
/// assert_eq!(pass_hat_k(5, 5, 5), 1.0);
/// assert_eq!(pass_hat_k(5, 2, 3), 0.0);
/// assert!((pass_hat_k(5, 3, 2) - 0.3).abs() < 1e-12); // C(3,2)/C(5,2) = 3/10
/// ```
pub fn pass_hat_k(n: u64, c: u64, k: u64) -> f64 {
    let c = c.min(n);
    if k == 0 {
        return 1.0;
    }
    if k > c {
        return 0.0;
    }
    tidy((0..k).fold(1.0, |acc, i| acc * (c - i) as f64 / (n - i) as f64))
}

/// Reliability of one eval over its runs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Reliability {
    /// Runs that counted (skipped runs excluded).
    pub n: u64,
    /// Runs that passed.
    pub c: u64,
    /// `c / n`; 1.0 when no run counted (every run skipped), which reports show as "-".
    pub pass_rate: f64,
    /// pass@k for k = 1..=n (index 0 is k = 1).
    pub pass_at_k: Vec<f64>,
    /// pass^k for k = 1..=n (index 0 is k = 1).
    pub pass_hat_k: Vec<f64>,
}

impl Reliability {
    /// Computes every statistic from `n` counted runs of which `c` passed.
    ///
    /// ```
    /// use niceeval::stats::Reliability;
    ///
    /// let r = Reliability::new(4, 3);
    /// assert_eq!(r.pass_rate, 0.75);
    /// assert_eq!(r.pass_at_k.len(), 4);
    /// assert_eq!(r.pass_at_k[1], 1.0); // any 2 of 4 runs include one of the 3 passes
    /// ```
    pub fn new(n: u64, c: u64) -> Self {
        let c = c.min(n);
        Reliability {
            n,
            c,
            pass_rate: if n == 0 {
                1.0
            } else {
                tidy(c as f64 / n as f64)
            },
            pass_at_k: (1..=n).map(|k| pass_at_k(n, c, k)).collect(),
            pass_hat_k: (1..=n).map(|k| pass_hat_k(n, c, k)).collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_print_without_float_noise() {
        // 1 − (1 − 1/5) is 0.19999999999999996 in plain floating point
        assert_eq!(pass_at_k(5, 1, 1), 0.2);
        let json = serde_json::to_string(&Reliability::new(5, 1)).unwrap();
        assert!(
            json.contains(r#""pass_rate":0.2,"pass_at_k":[0.2,0.4,"#),
            "{json}"
        );
        assert!(!json.contains("99999") && !json.contains("00001"), "{json}");
    }

    fn binom(n: u64, k: u64) -> f64 {
        if k > n {
            return 0.0;
        }
        (0..k).fold(1.0, |acc, i| acc * (n - i) as f64 / (i + 1) as f64)
    }

    #[test]
    fn hand_computed_values() {
        // n = 10, c = 3, k = 1..=10 against the closed form.
        for k in 1..=10 {
            let expected = 1.0 - binom(7, k) / binom(10, k);
            assert!((pass_at_k(10, 3, k) - expected).abs() < 1e-12, "k={k}");
            let expected = binom(3, k) / binom(10, k);
            assert!((pass_hat_k(10, 3, k) - expected).abs() < 1e-12, "k={k}");
        }
        // k = 1 is the pass rate.
        assert!((pass_at_k(10, 3, 1) - 0.3).abs() < 1e-12);
        assert!((pass_hat_k(10, 3, 1) - 0.3).abs() < 1e-12);
    }

    #[test]
    fn k_greater_than_c_and_n_equal_k() {
        assert_eq!(pass_hat_k(6, 2, 3), 0.0, "k > c: all k cannot pass");
        assert_eq!(pass_at_k(6, 2, 5), 1.0, "n - c = 4 < k = 5");
        assert_eq!(pass_at_k(4, 1, 4), 1.0, "n = k with one pass");
        assert_eq!(pass_at_k(4, 0, 4), 0.0, "n = k with no pass");
        assert_eq!(pass_hat_k(4, 4, 4), 1.0, "n = k all pass");
        assert_eq!(pass_hat_k(4, 3, 4), 0.0, "n = k one failure");
    }

    /// n = 5 runs, c = 2 passed, every k worked out by hand:
    /// pass@k = 1 − C(3,k)/C(5,k): k=1 1−3/5, k=2 1−3/10, k=3 1−1/10, k=4 1−0/5, k=5 1−0/1;
    /// pass^k = C(2,k)/C(5,k): k=1 2/5, k=2 1/10, k≥3 0.
    #[test]
    fn five_runs_two_passes_by_hand() {
        let at = [0.4, 0.7, 0.9, 1.0, 1.0];
        let hat = [0.4, 0.1, 0.0, 0.0, 0.0];
        for k in 1..=5u64 {
            let i = (k - 1) as usize;
            assert!((pass_at_k(5, 2, k) - at[i]).abs() < 1e-12, "pass@{k}");
            assert!((pass_hat_k(5, 2, k) - hat[i]).abs() < 1e-12, "pass^{k}");
        }
        let r = Reliability::new(5, 2);
        assert_eq!(r.pass_rate, 0.4);
        assert_eq!(r.pass_at_k.len(), 5);
        assert!((r.pass_at_k[2] - 0.9).abs() < 1e-12);
        assert!((r.pass_hat_k[1] - 0.1).abs() < 1e-12);
        // k beyond n: pass@k clamps to n, pass^k cannot draw that many passes.
        assert_eq!(pass_at_k(5, 2, 9), 1.0);
        assert_eq!(pass_hat_k(5, 5, 6), 0.0);
        // No runs: no statistics, and a vacuous pass rate of 1.
        let none = Reliability::new(0, 0);
        assert!(none.pass_at_k.is_empty() && none.pass_hat_k.is_empty());
        assert_eq!(none.pass_rate, 1.0);
    }

    #[test]
    fn large_n_is_stable() {
        let p = pass_at_k(10_000, 5_000, 10);
        assert!(p > 0.999 && p <= 1.0);
        assert!(pass_hat_k(10_000, 10_000, 10_000) == 1.0);
    }
}
