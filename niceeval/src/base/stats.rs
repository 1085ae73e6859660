//! Reliability statistics over many runs of one eval: pass rate, the unbiased pass@k estimator
//! and pass^k; and the statistics that compare two sets of runs ([`fisher_exact`],
//! [`wilson`], [`newcombe`]), which `niceeval::compare` uses to tell a real change of pass rate
//! from the noise of a nondeterministic agent.
//!
//! Why these: the runs of an eval are a handful of pass/fail trials, often 5 to 20, with pass
//! rates near 0 or 1. Tests and intervals built on the normal approximation (the two-proportion
//! z-test, the Wald interval) are wrong exactly there: the Wald interval of 20 passes in 20 runs
//! is `[1, 1]`. Fisher's exact test computes the p-value from the hypergeometric distribution
//! itself, so it holds at any sample size (it is conservative: it says "beyond chance" less
//! often than the level allows, never more). The Wilson score interval keeps a sensible width
//! at 0 and 1 and is the interval Newcombe's hybrid method builds the interval of a difference
//! from; both are what Newcombe (1998) recommends for small samples.

use serde::{Deserialize, Serialize};

/// Unbiased pass@k: the probability that at least one of `k` runs drawn without replacement from
/// `n` runs (of which `c` passed) passed, `1 − C(n−c, k) / C(n, k)`.
///
/// Computed as a product, so large `n` neither overflows nor loses precision. `k > n` is
/// clamped to `n`; `k = 0` is 0.
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

/// A two-sided confidence interval `[low, high]`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Interval {
    /// Lower bound.
    pub low: f64,
    /// Upper bound.
    pub high: f64,
}

impl Interval {
    /// Whether `x` lies inside (bounds included).
    pub fn contains(&self, x: f64) -> bool {
        self.low <= x && x <= self.high
    }
}

impl std::fmt::Display for Interval {
    /// `[0.49, 0.94]`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "[{:.2}, {:.2}]", self.low, self.high)
    }
}

/// The quantile of the standard normal distribution at `p` (0 < p < 1): the `z` with
/// `P(Z ≤ z) = p`. Acklam's rational approximation (relative error below 1.2·10⁻⁹), far finer
/// than any interval a report prints. `p` outside (0, 1) gives ±infinity.
pub fn normal_quantile(p: f64) -> f64 {
    const A: [f64; 6] = [
        -3.969683028665376e+01,
        2.209460984245205e+02,
        -2.759285104469687e+02,
        1.383_577_518_672_69e2,
        -3.066479806614716e+01,
        2.506628277459239e+00,
    ];
    const B: [f64; 5] = [
        -5.447609879822406e+01,
        1.615858368580409e+02,
        -1.556989798598866e+02,
        6.680131188771972e+01,
        -1.328068155288572e+01,
    ];
    const C: [f64; 6] = [
        -7.784894002430293e-03,
        -3.223964580411365e-01,
        -2.400758277161838e+00,
        -2.549732539343734e+00,
        4.374664141464968e+00,
        2.938163982698783e+00,
    ];
    const D: [f64; 4] = [
        7.784695709041462e-03,
        3.224671290700398e-01,
        2.445134137142996e+00,
        3.754408661907416e+00,
    ];
    const LOW: f64 = 0.02425;
    if p <= 0.0 {
        return f64::NEG_INFINITY;
    }
    if p >= 1.0 {
        return f64::INFINITY;
    }
    let tail = |q: f64| {
        (((((C[0] * q + C[1]) * q + C[2]) * q + C[3]) * q + C[4]) * q + C[5])
            / ((((D[0] * q + D[1]) * q + D[2]) * q + D[3]) * q + 1.0)
    };
    if p < LOW {
        tail((-2.0 * p.ln()).sqrt())
    } else if p > 1.0 - LOW {
        -tail((-2.0 * (1.0 - p).ln()).sqrt())
    } else {
        let q = p - 0.5;
        let r = q * q;
        (((((A[0] * r + A[1]) * r + A[2]) * r + A[3]) * r + A[4]) * r + A[5]) * q
            / (((((B[0] * r + B[1]) * r + B[2]) * r + B[3]) * r + B[4]) * r + 1.0)
    }
}

/// The Wilson score interval of a pass rate: `passed` of `runs`, at confidence `1 − alpha`
/// (two-sided). No runs gives `[0, 1]`: nothing is known.
///
/// Unlike the textbook `p ± z·√(p(1−p)/n)`, it never collapses to a point at 0 or 1 and never
/// leaves `[0, 1]`: 20 passes of 20 runs give `[0.84, 1]` at 95%, not `[1, 1]`.
pub fn wilson(passed: u64, runs: u64, alpha: f64) -> Interval {
    if runs == 0 {
        return Interval {
            low: 0.0,
            high: 1.0,
        };
    }
    let passed = passed.min(runs);
    let z = normal_quantile(1.0 - alpha / 2.0);
    let n = runs as f64;
    let p = passed as f64 / n;
    let z2 = z * z;
    let denominator = 1.0 + z2 / n;
    let centre = (p + z2 / (2.0 * n)) / denominator;
    let half = z / denominator * (p * (1.0 - p) / n + z2 / (4.0 * n * n)).sqrt();
    Interval {
        // At 0 and 1 the formula gives the bound exactly, up to rounding.
        low: if passed == 0 {
            0.0
        } else {
            (centre - half).max(0.0)
        },
        high: if passed == runs {
            1.0
        } else {
            (centre + half).min(1.0)
        },
    }
}

/// Newcombe's hybrid score interval (his method 10) of the difference of two pass rates,
/// `passed_a / runs_a − passed_b / runs_b`, at confidence `1 − alpha`, built from each rate's
/// [`wilson`] interval. An interval that excludes 0 says the rates differ at that level.
pub fn newcombe(passed_a: u64, runs_a: u64, passed_b: u64, runs_b: u64, alpha: f64) -> Interval {
    let rate = |passed: u64, runs: u64| {
        if runs == 0 {
            0.0
        } else {
            passed.min(runs) as f64 / runs as f64
        }
    };
    let (p1, p2) = (rate(passed_a, runs_a), rate(passed_b, runs_b));
    let (a, b) = (
        wilson(passed_a, runs_a, alpha),
        wilson(passed_b, runs_b, alpha),
    );
    let d = p1 - p2;
    Interval {
        low: (d - ((p1 - a.low).powi(2) + (b.high - p2).powi(2)).sqrt()).max(-1.0),
        high: (d + ((a.high - p1).powi(2) + (p2 - b.low).powi(2)).sqrt()).min(1.0),
    }
}

/// Fisher's exact test, two-sided, on the 2×2 table of two sets of runs: `passed_a` of
/// `runs_a` against `passed_b` of `runs_b`. The p-value is the probability, under the
/// hypothesis that both have the same pass rate (and given the total number of passes), of a
/// table at most as likely as the one observed — the sum R's `fisher.test` and SciPy's
/// `fisher_exact` compute (tables within a relative 10⁻⁷ of the observed one's probability
/// count as equally likely).
pub fn fisher_exact(passed_a: u64, runs_a: u64, passed_b: u64, runs_b: u64) -> f64 {
    let (a, b) = (passed_a.min(runs_a), passed_b.min(runs_b));
    let total = runs_a + runs_b;
    let passes = a + b;
    if total == 0 || passes == 0 || passes == total {
        return 1.0;
    }
    // ln k! for k = 0..=total.
    let mut ln_factorial = Vec::with_capacity(total as usize + 1);
    ln_factorial.push(0.0f64);
    for k in 1..=total {
        let last = ln_factorial[k as usize - 1];
        ln_factorial.push(last + (k as f64).ln());
    }
    let lf = |k: u64| ln_factorial[k as usize];
    // P(X = x): x passes in the first set, hypergeometric given the margins.
    let ln_p = |x: u64| {
        lf(runs_a) + lf(runs_b) + lf(passes) + lf(total - passes)
            - lf(x)
            - lf(runs_a - x)
            - lf(passes - x)
            - lf(runs_b + x - passes)
            - lf(total)
    };
    let low = passes.saturating_sub(runs_b);
    let high = passes.min(runs_a);
    let observed = ln_p(a);
    let mut p = 0.0;
    for x in low..=high {
        let ln = ln_p(x);
        if ln <= observed + 1e-7_f64.ln_1p() {
            p += ln.exp();
        }
    }
    p.min(1.0)
}

/// Welch's t-test, two-sided: the p-value of the difference between two means, from each
/// sample's mean, standard deviation and size, without assuming equal variances. It decides
/// whether the mean score or a metric of an eval run several times moved beyond chance.
/// Samples of fewer than 2 give 1 (nothing can be said); two samples without any spread are
/// different (p = 0) exactly when their means are.
pub fn welch_t_test(mean_a: f64, sd_a: f64, n_a: u64, mean_b: f64, sd_b: f64, n_b: u64) -> f64 {
    if n_a < 2 || n_b < 2 {
        return 1.0;
    }
    let (na, nb) = (n_a as f64, n_b as f64);
    let (va, vb) = (sd_a * sd_a / na, sd_b * sd_b / nb);
    let se2 = va + vb;
    if se2 <= 0.0 {
        return if (mean_a - mean_b).abs() < 1e-12 {
            1.0
        } else {
            0.0
        };
    }
    let t = (mean_a - mean_b) / se2.sqrt();
    let df = se2 * se2 / (va * va / (na - 1.0) + vb * vb / (nb - 1.0));
    student_t_two_sided(t, df)
}

/// `P(|T| ≥ |t|)` for Student's t distribution with `df` degrees of freedom:
/// `I_{df/(df+t²)}(df/2, 1/2)`.
pub fn student_t_two_sided(t: f64, df: f64) -> f64 {
    if !t.is_finite() {
        return 0.0;
    }
    regularized_beta(df / 2.0, 0.5, df / (df + t * t)).clamp(0.0, 1.0)
}

/// ln Γ(x) for x > 0 (Lanczos, g = 7, 9 terms; relative error about 10⁻¹⁵).
fn ln_gamma(x: f64) -> f64 {
    const G: [f64; 9] = [
        0.999_999_999_999_809_9,
        676.520_368_121_885_1,
        -1_259.139_216_722_402_8,
        771.323_428_777_653_1,
        -176.615_029_162_140_6,
        12.507_343_278_686_905,
        -0.138_571_095_265_720_12,
        9.984_369_578_019_572e-6,
        1.505_632_735_149_311_6e-7,
    ];
    if x < 0.5 {
        // Reflection: Γ(x) Γ(1 − x) = π / sin(πx).
        return (std::f64::consts::PI / (std::f64::consts::PI * x).sin()).ln() - ln_gamma(1.0 - x);
    }
    let x = x - 1.0;
    let mut a = G[0];
    for (i, g) in G.iter().enumerate().skip(1) {
        a += g / (x + i as f64);
    }
    let t = x + 7.5;
    0.5 * (2.0 * std::f64::consts::PI).ln() + (x + 0.5) * t.ln() - t + a.ln()
}

/// The regularized incomplete beta function `I_x(a, b)`, by its continued fraction (modified
/// Lentz), on the side where it converges fast.
fn regularized_beta(a: f64, b: f64, x: f64) -> f64 {
    if x <= 0.0 {
        return 0.0;
    }
    if x >= 1.0 {
        return 1.0;
    }
    let front =
        (ln_gamma(a + b) - ln_gamma(a) - ln_gamma(b) + a * x.ln() + b * (1.0 - x).ln()).exp();
    if x < (a + 1.0) / (a + b + 2.0) {
        front * beta_fraction(a, b, x) / a
    } else {
        1.0 - front * beta_fraction(b, a, 1.0 - x) / b
    }
}

fn beta_fraction(a: f64, b: f64, x: f64) -> f64 {
    const TINY: f64 = 1e-300;
    let (qab, qap, qam) = (a + b, a + 1.0, a - 1.0);
    let mut c = 1.0;
    let mut d = 1.0 - qab * x / qap;
    if d.abs() < TINY {
        d = TINY;
    }
    d = 1.0 / d;
    let mut h = d;
    for m in 1..300 {
        let m = m as f64;
        let m2 = 2.0 * m;
        let aa = m * (b - m) * x / ((qam + m2) * (a + m2));
        d = 1.0 + aa * d;
        if d.abs() < TINY {
            d = TINY;
        }
        c = 1.0 + aa / c;
        if c.abs() < TINY {
            c = TINY;
        }
        d = 1.0 / d;
        h *= d * c;
        let aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2));
        d = 1.0 + aa * d;
        if d.abs() < TINY {
            d = TINY;
        }
        c = 1.0 + aa / c;
        if c.abs() < TINY {
            c = TINY;
        }
        d = 1.0 / d;
        let step = d * c;
        h *= step;
        if (step - 1.0).abs() < 1e-15 {
            break;
        }
    }
    h
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

    /// Values computed by hand, and against the exact sum in integers ([`exact_fisher`]).
    #[test]
    fn fisher_exact_against_hand_computed_values() {
        // 3/4 vs 1/4: tables x = 0..=4 have weights 1, 16, 36, 16, 1 (of 70); observed x = 3
        // (16): p = (1 + 16 + 16 + 1) / 70.
        assert!((fisher_exact(3, 4, 1, 4) - 34.0 / 70.0).abs() < 1e-12);
        // 18/20 vs 6/20: p = 0.000244 (exact sum of hypergeometric terms, see the test
        // below for the method).
        let p = fisher_exact(18, 20, 6, 20);
        assert!((p - exact_fisher(18, 20, 6, 20)).abs() < 1e-12, "{p}");
        assert!((p - 0.000_244_4).abs() < 1e-7);
        // 16/20 vs 14/20: well within chance.
        let p = fisher_exact(16, 20, 14, 20);
        assert!((p - exact_fisher(16, 20, 14, 20)).abs() < 1e-12, "{p}");
        assert!(p > 0.7);
        // 1 run each: 1/1 vs 0/1 is p = 1 — one run says nothing about a rate.
        assert_eq!(fisher_exact(1, 1, 0, 1), 1.0);
        // Symmetric in the two sets.
        assert!((fisher_exact(6, 20, 18, 20) - fisher_exact(18, 20, 6, 20)).abs() < 1e-15);
        // 20/20 vs 10/20: the tables as extreme as the observed one are x = 20 and x = 10
        // passes in the first set: 2 · C(20,20)·C(20,10) / C(40,30) = 0.000436.
        assert!((fisher_exact(20, 20, 10, 20) - 0.000_435_9).abs() < 1e-7);
    }

    /// The two-sided Fisher p-value with exact integer arithmetic (u128 binomials).
    fn exact_fisher(a: u64, n1: u64, b: u64, n2: u64) -> f64 {
        fn choose(n: u64, k: u64) -> u128 {
            (0..k).fold(1u128, |acc, i| acc * u128::from(n - i) / u128::from(i + 1))
        }
        let m = a + b;
        let weight = |x: u64| choose(n1, x) * choose(n2, m - x);
        let total: u128 = (m.saturating_sub(n2)..=m.min(n1)).map(weight).sum();
        let observed = weight(a);
        let tail: u128 = (m.saturating_sub(n2)..=m.min(n1))
            .map(weight)
            .filter(|w| *w <= observed)
            .sum();
        tail as f64 / total as f64
    }

    #[test]
    fn wilson_against_hand_computed_values() {
        // 8/10 at 95%: centre (0.8 + 1.9208/10) / 1.38415 = 0.71668, half 0.22650.
        let i = wilson(8, 10, 0.05);
        assert!((i.low - 0.490_18).abs() < 1e-4, "{i:?}");
        assert!((i.high - 0.943_32).abs() < 1e-4, "{i:?}");
        // 20/20: [n / (n + z²), 1] = [20 / 23.8415, 1] = [0.83887, 1].
        let i = wilson(20, 20, 0.05);
        assert!(
            (i.low - 20.0 / (20.0 + 1.959_964_f64.powi(2))).abs() < 1e-6,
            "{i:?}"
        );
        assert_eq!(i.high, 1.0);
        // 0/20 mirrors it.
        let i = wilson(0, 20, 0.05);
        assert_eq!(i.low, 0.0);
        assert!((i.high - (1.0 - 20.0 / (20.0 + 1.959_964_f64.powi(2)))).abs() < 1e-6);
        // A 99% interval is wider.
        let (w95, w99) = (wilson(10, 20, 0.05), wilson(10, 20, 0.01));
        assert!(w99.low < w95.low && w99.high > w95.high);
        assert!(w95.contains(0.5));
    }

    #[test]
    fn newcombe_against_the_papers_examples() {
        // Newcombe (1998), Table II, method 10.
        let i = newcombe(56, 70, 48, 80, 0.05);
        assert!(
            (i.low - 0.0524).abs() < 1e-4 && (i.high - 0.3339).abs() < 1e-4,
            "{i:?}"
        );
        let i = newcombe(9, 10, 3, 10, 0.05);
        assert!(
            (i.low - 0.1705).abs() < 1e-4 && (i.high - 0.8090).abs() < 1e-4,
            "{i:?}"
        );
        let i = newcombe(10, 10, 0, 20, 0.05);
        assert!(
            (i.low - 0.6791).abs() < 1e-4 && (i.high - 1.0).abs() < 1e-4,
            "{i:?}"
        );
    }

    #[test]
    fn normal_quantiles() {
        assert!((normal_quantile(0.975) - 1.959_963_985).abs() < 1e-8);
        assert!((normal_quantile(0.995) - 2.575_829_304).abs() < 1e-8);
        assert!((normal_quantile(0.05) + 1.644_853_627).abs() < 1e-8);
        assert!((normal_quantile(0.001) + 3.090_232_306).abs() < 1e-8);
    }

    #[test]
    fn student_t_and_welch_against_closed_forms() {
        // df = 2: P(|T| ≥ t) = 1 − t / √(2 + t²).
        for t in [0.5f64, 1.0, 2.0, 4.0] {
            let expected = 1.0 - t / (2.0 + t * t).sqrt();
            assert!(
                (student_t_two_sided(t, 2.0) - expected).abs() < 1e-10,
                "t={t}"
            );
        }
        // df = 1 (Cauchy): P(|T| ≥ t) = 1 − 2·atan(t)/π.
        for t in [0.3f64, 1.0, 3.0] {
            let expected = 1.0 - 2.0 * f64::atan(t) / std::f64::consts::PI;
            assert!(
                (student_t_two_sided(t, 1.0) - expected).abs() < 1e-10,
                "t={t}"
            );
        }
        // Large df tends to the normal: t = 1.959964 gives 0.05.
        assert!((student_t_two_sided(1.959_964, 1e7) - 0.05).abs() < 1e-5);
        // Equal samples: t = 0 gives p = 1; fewer than 2 runs: nothing to say.
        assert!((welch_t_test(0.5, 0.2, 10, 0.5, 0.2, 10) - 1.0).abs() < 1e-12);
        assert_eq!(welch_t_test(0.9, 0.0, 1, 0.1, 0.0, 1), 1.0);
        assert_eq!(welch_t_test(0.9, 0.0, 5, 0.1, 0.0, 5), 0.0);
        // Equal sizes and spreads: t = 0.1 / √(2·0.25²/20) = 1.2649, df = 38 → p = 0.2136.
        let p = welch_t_test(0.8, 0.25, 20, 0.7, 0.25, 20);
        assert!((p - 0.2136).abs() < 1e-3, "{p}");
    }
}

#[cfg(test)]
mod doc_examples {
    //! The examples that were this file's doc tests while its items were public.

    #[test]
    fn example_1() {
        use crate::base::stats::pass_at_k;

        assert_eq!(pass_at_k(5, 0, 3), 0.0);
        assert_eq!(pass_at_k(5, 3, 3), 1.0); // only 2 failures: any 3 include a pass
        assert!((pass_at_k(5, 2, 2) - 0.7).abs() < 1e-12); // 1 − C(3,2)/C(5,2) = 1 − 3/10
    }

    #[test]
    fn example_2() {
        use crate::base::stats::pass_hat_k;

        assert_eq!(pass_hat_k(5, 5, 5), 1.0);
        assert_eq!(pass_hat_k(5, 2, 3), 0.0);
        assert!((pass_hat_k(5, 3, 2) - 0.3).abs() < 1e-12); // C(3,2)/C(5,2) = 3/10
    }

    #[test]
    fn example_3() {
        use crate::base::stats::Reliability;

        let r = Reliability::new(4, 3);
        assert_eq!(r.pass_rate, 0.75);
        assert_eq!(r.pass_at_k.len(), 4);
        assert_eq!(r.pass_at_k[1], 1.0); // any 2 of 4 runs include one of the 3 passes
    }

    #[test]
    fn example_4() {
        use crate::base::stats::normal_quantile;

        assert!((normal_quantile(0.975) - 1.959964).abs() < 1e-6); // the z of a 95% interval
        assert!(normal_quantile(0.5).abs() < 1e-9);
    }

    #[test]
    fn example_5() {
        use crate::base::stats::wilson;

        let i = wilson(8, 10, 0.05);
        assert!((i.low - 0.4902).abs() < 1e-4 && (i.high - 0.9433).abs() < 1e-4);
        assert_eq!(wilson(0, 0, 0.05).to_string(), "[0.00, 1.00]");
    }

    #[test]
    fn example_6() {
        use crate::base::stats::newcombe;

        // Newcombe (1998), example (a): 56/70 − 48/80 = 0.2, 95% interval [0.0524, 0.3339].
        let i = newcombe(56, 70, 48, 80, 0.05);
        assert!((i.low - 0.0524).abs() < 1e-4 && (i.high - 0.3339).abs() < 1e-4);
    }

    #[test]
    fn example_7() {
        use crate::base::stats::fisher_exact;

        // Fisher's lady tasting tea: 3 of 4 against 1 of 4, p = 34/70.
        assert!((fisher_exact(3, 4, 1, 4) - 34.0 / 70.0).abs() < 1e-12);
        // 20 of 20 against 10 of 20: p = 0.000436 (beyond chance at any usual level).
        assert!(fisher_exact(20, 20, 10, 20) < 0.001);
        assert_eq!(fisher_exact(5, 5, 5, 5), 1.0);
    }

    #[test]
    fn example_8() {
        use crate::base::stats::welch_t_test;

        // 20 runs scoring 0.9 ± 0.1 against 20 scoring 0.6 ± 0.1: far beyond chance.
        assert!(welch_t_test(0.9, 0.1, 20, 0.6, 0.1, 20) < 1e-10);
        // 0.80 ± 0.41 against 0.70 ± 0.47 over 20 runs each: p ≈ 0.48, noise.
        let p = welch_t_test(0.8, 0.41, 20, 0.7, 0.47, 20);
        assert!(p > 0.4 && p < 0.6);
    }

    #[test]
    fn example_9() {
        use crate::base::stats::student_t_two_sided;

        assert!((student_t_two_sided(1.0, 1.0) - 0.5).abs() < 1e-9); // Cauchy: P(|T| ≥ 1) = 1/2
        assert!((student_t_two_sided(2.228_138_85, 10.0) - 0.05).abs() < 1e-6);
    }
}
