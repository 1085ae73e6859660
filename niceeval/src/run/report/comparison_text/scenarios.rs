//! The comparison over hand-made baselines, each scenario checked in its data (`compare`) and
//! in the words the report gives it (`report::comparison`). Here, above both layers, so the
//! comparison layer never names the report.

use std::collections::{BTreeMap, BTreeSet};

use crate::base::outcome::Outcome;
use crate::config::CompareConfig;
use crate::run::compare::*;
use crate::run::report::comparison_text as text;

fn entry(id: &str, outcome: Outcome, runs: u64, passed: u64) -> BaselineEval {
    BaselineEval {
        id: id.to_string(),
        dataset: None,
        target: None,
        outcome,
        runs,
        passed,
        pass_rate: if runs == 0 {
            1.0
        } else {
            passed as f64 / runs as f64
        },
        score: None,
        score_sd: None,
        metrics: BTreeMap::new(),
        metrics_sd: BTreeMap::new(),
        tokens: Tokens::default(),
        cost_usd: None,
        mean_run_ms: None,
    }
}

fn passed(id: &str) -> BaselineEval {
    entry(id, Outcome::Passed, 1, 1)
}

fn failed(id: &str) -> BaselineEval {
    entry(id, Outcome::Failed, 1, 0)
}

fn with_metric(mut e: BaselineEval, name: &str, value: f64) -> BaselineEval {
    e.metrics.insert(name.to_string(), value);
    e
}

fn compare(before: Vec<BaselineEval>, now: Vec<BaselineEval>) -> Comparison {
    Comparison::new(
        &Baseline::new(before, false, false),
        &now,
        &CompareConfig::default(),
    )
}

#[test]
fn each_kind_of_change() {
    let c = compare(
        vec![
            failed("a::fixed"),
            passed("a::broke"),
            failed("a::still"),
            passed("a::same"),
            passed("a::removed"),
            with_metric(passed("a::metric"), "accuracy", 0.9),
            with_metric(passed("a::up"), "accuracy", 0.5),
            entry("a::skipped", Outcome::Skipped, 0, 0),
        ],
        vec![
            passed("a::fixed"),
            failed("a::broke"),
            failed("a::still"),
            passed("a::same"),
            passed("a::new"),
            with_metric(passed("a::metric"), "accuracy", 0.6),
            with_metric(passed("a::up"), "accuracy", 0.8),
            passed("a::skipped"),
        ],
    );
    let kind = |id: &str| c.eval(id).unwrap().kind;
    assert_eq!(kind("a::fixed"), Kind::Fixed);
    assert_eq!(kind("a::broke"), Kind::Broke);
    assert_eq!(kind("a::still"), Kind::StillFailing);
    assert_eq!(kind("a::same"), Kind::Unchanged);
    assert_eq!(kind("a::removed"), Kind::Removed);
    assert_eq!(kind("a::new"), Kind::New);
    assert_eq!(kind("a::metric"), Kind::Worse);
    assert_eq!(kind("a::up"), Kind::Better);
    assert_eq!(kind("a::skipped"), Kind::Skipped);
    assert_eq!(
        text::counts(&c),
        "1 broke, 1 worse, 1 still failing, 1 new, 1 removed, 1 fixed, 1 better, 1 skipped, 1 unchanged"
    );
    let regressions = c.regressions();
    let kinds: Vec<(&str, RegressionKind)> = regressions
        .iter()
        .map(|r| (r.id.as_str(), r.kind))
        .collect();
    assert_eq!(
        kinds,
        [
            ("a::broke", RegressionKind::BrokenGate),
            ("a::metric", RegressionKind::MetricDrop),
        ]
    );
    assert_eq!(
        text::regression(&c, &regressions[1]),
        "fell by more than 0.05: accuracy 0.90 → 0.60 (−0.30)"
    );
    assert_eq!(
        text::details(c.eval("a::metric").unwrap()),
        "accuracy 0.90 → 0.60 (−0.30)"
    );
}

#[test]
fn a_pass_rate_drop_is_a_regression_only_beyond_chance() {
    // 18/20 → 6/20: p = 0.000244.
    let c = compare(
        vec![
            entry("a::drop", Outcome::Passed, 20, 18),
            entry("a::noise", Outcome::Passed, 20, 16),
            entry("a::flip", Outcome::Passed, 20, 20),
        ],
        vec![
            entry("a::drop", Outcome::Passed, 20, 6),
            entry("a::noise", Outcome::Passed, 20, 14),
            // Fails its min_pass_rate of 1.0 now, but 18/20 is within chance of 20/20.
            entry("a::flip", Outcome::Failed, 20, 18),
        ],
    );
    let drop = c.eval("a::drop").unwrap();
    assert_eq!(drop.kind, Kind::Worse);
    let rate = drop.pass_rate.as_ref().unwrap();
    assert!(
        (rate.p_value - 0.000_244_4).abs() < 1e-7,
        "{}",
        rate.p_value
    );
    assert!(
        (rate.difference.low + 0.7705).abs() < 1e-4,
        "{:?}",
        rate.difference
    );
    assert!(
        (rate.difference.high + 0.3027).abs() < 1e-4,
        "{:?}",
        rate.difference
    );
    assert!((rate.baseline_interval.low - 0.6990).abs() < 1e-4);
    assert!((rate.interval.high - 0.5190).abs() < 1e-4);
    assert_eq!(
        text::pass_rate(rate),
        "0.90 → 0.30 (−0.60, 95% CI [−0.77, −0.30], p = 0.0002)"
    );
    assert_eq!(drop.regressions, [RegressionKind::PassRateDrop]);

    let noise = c.eval("a::noise").unwrap();
    assert_eq!(noise.kind, Kind::Unchanged);
    assert!(noise.regressions.is_empty());
    assert!((noise.pass_rate.as_ref().unwrap().p_value - 0.7164).abs() < 1e-4);

    let flip = c.eval("a::flip").unwrap();
    assert_eq!(flip.kind, Kind::Broke);
    assert!(flip.within_chance && flip.regressions.is_empty());
    assert_eq!(text::label(flip), "broke (within chance, p = 0.4872)");

    assert_eq!(c.regressions().len(), 1);
}

#[test]
fn the_policy_chooses_what_fails_and_alpha_what_is_chance() {
    let before = Baseline::new(
        vec![
            passed("a::broke"),
            entry("a::drop", Outcome::Passed, 20, 16),
            with_metric(passed("a::metric"), "m", 0.9),
        ],
        false,
        false,
    );
    let now = vec![
        failed("a::broke"),
        entry("a::drop", Outcome::Passed, 20, 9),
        with_metric(passed("a::metric"), "m", 0.82),
    ];
    let config = |text: &str| {
        crate::config::Config::parse(text, "n.toml")
            .unwrap()
            .compare
    };
    let kinds = |config: &CompareConfig| -> Vec<RegressionKind> {
        Comparison::new(&before, &now, config)
            .regressions()
            .iter()
            .map(|r| r.kind)
            .collect()
    };
    // 16/20 → 9/20: p = 0.048 — beyond chance at 0.05, not at 0.01; 0.08 is over a 0.05 margin.
    assert_eq!(
        kinds(&CompareConfig::default()),
        [
            RegressionKind::BrokenGate,
            RegressionKind::PassRateDrop,
            RegressionKind::MetricDrop
        ]
    );
    assert_eq!(
        kinds(&config("[compare]\nfail_on = [\"broken-gate\"]\n")),
        [RegressionKind::BrokenGate]
    );
    assert_eq!(
        kinds(&config("[compare]\nfail_on = [\"pass-rate-drop\"]\n")),
        [RegressionKind::PassRateDrop]
    );
    assert!(
        kinds(&config(
            "[compare]\nfail_on = [\"pass-rate-drop\"]\nalpha = 0.01\n"
        ))
        .is_empty()
    );
    assert_eq!(
        kinds(&config("[compare]\nfail_on = [\"metric-drop\"]\n")),
        [RegressionKind::MetricDrop]
    );
    assert!(
        kinds(&config(
            "[compare]\nfail_on = [\"metric-drop\"]\nmetric_margin = 0.1\n"
        ))
        .is_empty()
    );
    assert!(kinds(&config("[compare]\nfail_on = []\n")).is_empty());
    let strict = Comparison::new(&before, &now, &config("[compare]\nalpha = 0.01\n"));
    assert_eq!(strict.eval("a::drop").unwrap().kind, Kind::Unchanged);
    assert!(text::pass_rate(&PassRateChange::new(18, 20, 6, 20, 0.01)).contains("99% CI"));
}

#[test]
fn a_filtered_run_leaves_out_what_it_did_not_run_and_other_targets() {
    let mut other = passed("b::elsewhere");
    other.target = Some("other".into());
    let before = Baseline::new(
        vec![
            passed("a::ran"),
            passed("a::not_selected"),
            passed("a::gone"),
            other,
        ],
        false,
        false,
    );
    let defined: BTreeSet<String> = ["a::ran", "a::not_selected"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    let c = Comparison::with_known(
        &before,
        &[passed("a::ran")],
        &CompareConfig::default(),
        Some(&defined),
        Some("evals"),
    );
    let ids: Vec<(&str, Kind)> = c.evals.iter().map(|e| (e.id.as_str(), e.kind)).collect();
    assert_eq!(
        ids,
        [("a::gone", Kind::Removed), ("a::ran", Kind::Unchanged)]
    );
    assert_eq!(c.not_run, 1);
}

#[test]
fn datasets_are_compared_over_their_cases() {
    let case = |id: &str, ok: bool, score: f64| {
        let mut e = if ok { passed(id) } else { failed(id) };
        e.dataset = Some("a::capitals".into());
        e.score = Some(score);
        e
    };
    let c = compare(
        vec![
            case("a::capitals::paris", true, 1.0),
            case("a::capitals::lima", false, 0.0),
        ],
        vec![
            case("a::capitals::paris", false, 0.0),
            case("a::capitals::lima", true, 1.0),
        ],
    );
    assert_eq!(c.datasets.len(), 1);
    assert_eq!(
        text::dataset(&c.datasets[0]),
        "1 of 2 → 1 of 2 cases passed, mean score 0.50 → 0.50 (±0.00); 1 broke, 1 fixed"
    );
}

#[test]
fn tokens_and_cost_are_compared_per_run() {
    let mut before = entry("a::x", Outcome::Passed, 2, 2);
    before.tokens = Tokens {
        input: 100,
        output: 100,
        cache_read: 0,
    };
    before.cost_usd = Some(0.02);
    let mut now = entry("a::x", Outcome::Passed, 4, 4);
    now.tokens = Tokens {
        input: 300,
        output: 300,
        cache_read: 0,
    };
    now.cost_usd = Some(0.08);
    let c = Comparison::new(
        &Baseline::new(vec![before], true, false),
        &[now],
        &CompareConfig::default(),
    );
    let e = c.eval("a::x").unwrap();
    assert_eq!(e.tokens.change(), Some(50.0));
    assert!((e.cost.change().unwrap() - 0.01).abs() < 1e-12);
    assert_eq!(
        text::details(e),
        "tokens/run 100 → 150 (+50); cost/run 0.0100 → 0.0200 (+0.0100)"
    );
}

#[test]
fn a_mean_over_several_runs_drops_only_beyond_chance() {
    let runs = |score: f64, sd: f64| {
        let mut e = entry("a::x", Outcome::Passed, 20, 20);
        e.score = Some(score);
        e.score_sd = Some(sd);
        e
    };
    // 0.80 ± 0.41 → 0.70 ± 0.47 over 20 runs: Welch p = 0.478, noise.
    let c = compare(vec![runs(0.8, 0.41)], vec![runs(0.7, 0.47)]);
    let e = c.eval("a::x").unwrap();
    assert_eq!(e.kind, Kind::Unchanged);
    assert!((e.score.p_value.unwrap() - 0.4778).abs() < 1e-3);
    assert!(c.regressions().is_empty());
    // The same means with little spread: beyond chance.
    let c = compare(vec![runs(0.8, 0.05)], vec![runs(0.7, 0.05)]);
    let e = c.eval("a::x").unwrap();
    assert_eq!(e.kind, Kind::Worse);
    assert_eq!(e.regressions, [RegressionKind::MetricDrop]);
    assert!(
        text::delta(&e.score, 2) == "0.80 → 0.70 (−0.10, p < 0.0001)",
        "{}",
        text::delta(&e.score, 2)
    );
}

/// `runs` runs of which `passed` passed, each run's score its pass/fail (1 or 0): the mean and
/// standard deviation a baseline keeps of them.
fn pass_fail_scores(id: &str, runs: u64, passed: u64) -> BaselineEval {
    let mut e = entry(id, Outcome::Passed, runs, passed);
    let scores: Vec<f64> = (0..runs).map(|i| f64::from(u8::from(i < passed))).collect();
    e.score = mean(&scores);
    e.score_sd = sd(&scores);
    e
}

#[test]
fn a_score_that_is_the_pass_fail_is_counted_once_by_fishers_test() {
    assert!(score_is_pass_fail(&pass_fail_scores("a::x", 20, 18)));
    assert!(score_is_pass_fail(&pass_fail_scores("a::x", 20, 20)));
    assert!(score_is_pass_fail(&pass_fail_scores("a::x", 1, 1)));
    // Rounded to the 6 decimals a baseline keeps, still recognised.
    let saved = Baseline::new(vec![pass_fail_scores("a::x", 7, 3)], false, false);
    assert!(score_is_pass_fail(&saved.evals[0]));
    // Graded scores with the pass rate's mean but less spread are a measure of their own.
    let mut graded = entry("a::x", Outcome::Passed, 20, 18);
    graded.score = Some(0.9);
    graded.score_sd = Some(0.1);
    assert!(!score_is_pass_fail(&graded));
    graded.score = Some(0.85);
    graded.score_sd = sd(&[0.85; 20]);
    assert!(!score_is_pass_fail(&graded));

    // 18/20 → 6/20: Fisher's p = 0.000244, and Welch's test of the same 0/1 scores p < 0.0001.
    // At alpha = 0.0001 the pass rate is within chance; the score, which is the pass rate, may
    // not then be a metric drop of its own.
    let before = vec![pass_fail_scores("a::flaky", 20, 18)];
    let now = vec![pass_fail_scores("a::flaky", 20, 6)];
    let welch = crate::base::stats::welch_t_test(
        now[0].score.unwrap(),
        now[0].score_sd.unwrap(),
        20,
        before[0].score.unwrap(),
        before[0].score_sd.unwrap(),
        20,
    );
    assert!(welch < 0.0001, "{welch}");
    let strict = crate::config::Config::parse("[compare]\nalpha = 0.0001\n", "n.toml")
        .unwrap()
        .compare;
    let c = Comparison::new(&Baseline::new(before.clone(), false, false), &now, &strict);
    let e = c.eval("a::flaky").unwrap();
    assert!(e.score_is_pass_fail);
    assert!(!e.pass_rate.as_ref().unwrap().beyond_chance);
    assert_eq!(
        e.score.p_value, None,
        "no Welch's test of a pass/fail score"
    );
    assert_eq!(e.kind, Kind::Unchanged);
    assert!(e.regressions.is_empty(), "{:?}", e.regressions);
    assert!(!c.failed());
    // At the default alpha, the drop is one regression (the pass rate), said once.
    let c = compare(before, now);
    let e = c.eval("a::flaky").unwrap();
    assert_eq!(e.kind, Kind::Worse);
    assert_eq!(e.regressions, [RegressionKind::PassRateDrop]);
    assert_eq!(
        text::details(e),
        "pass rate 0.90 → 0.30 (−0.60, 95% CI [−0.77, −0.30], p = 0.0002)"
    );
    // A score that is the pass/fail on one side only is still tested as a mean.
    let mut graded = entry("a::mixed", Outcome::Passed, 20, 20);
    graded.score = Some(0.9);
    graded.score_sd = Some(0.05);
    let c = compare(vec![pass_fail_scores("a::mixed", 20, 20)], vec![graded]);
    let e = c.eval("a::mixed").unwrap();
    assert!(!e.score_is_pass_fail && e.score.p_value.is_some());
}

fn with_usage(mut e: BaselineEval, tokens: u64, cost: Option<f64>) -> BaselineEval {
    e.tokens = Tokens {
        input: tokens / 2,
        output: tokens - tokens / 2,
        cache_read: 0,
    };
    e.cost_usd = cost;
    e
}

#[test]
fn tokens_and_cost_rising_beyond_their_margin_fail_the_run_when_the_policy_says_so() {
    let before = Baseline::new(
        vec![
            with_usage(entry("a::costly", Outcome::Passed, 2, 2), 2000, Some(0.02)),
            with_usage(entry("a::steady", Outcome::Passed, 2, 2), 2000, Some(0.02)),
            with_usage(entry("a::cheaper", Outcome::Passed, 1, 1), 1000, Some(0.01)),
            // Gave up early, then did the work: no measure of a rise.
            with_usage(entry("a::fixed", Outcome::Failed, 1, 0), 100, Some(0.001)),
        ],
        true,
        false,
    );
    let now = [
        // 1000 → 1500 tokens per run (+50%), $0.010 → $0.012 (+20%).
        with_usage(entry("a::costly", Outcome::Passed, 2, 2), 3000, Some(0.024)),
        // +5% and +5%: within 10%.
        with_usage(entry("a::steady", Outcome::Passed, 2, 2), 2100, Some(0.021)),
        with_usage(entry("a::cheaper", Outcome::Passed, 1, 1), 500, Some(0.005)),
        with_usage(entry("a::fixed", Outcome::Passed, 1, 1), 1000, Some(0.01)),
    ];
    let config = |text: &str| {
        crate::config::Config::parse(text, "n.toml")
            .unwrap()
            .compare
    };
    // Found whatever the policy, failing only a policy that names them.
    let c = Comparison::new(&before, &now, &CompareConfig::default());
    let costly = c.eval("a::costly").unwrap();
    assert_eq!(
        costly.regressions,
        [RegressionKind::TokensRise, RegressionKind::CostRise]
    );
    assert_eq!(
        costly.kind,
        Kind::Unchanged,
        "not asked for: said, not worse"
    );
    assert!(c.eval("a::steady").unwrap().regressions.is_empty());
    assert!(c.eval("a::cheaper").unwrap().regressions.is_empty());
    assert!(c.eval("a::fixed").unwrap().regressions.is_empty());
    assert!(!c.failed());

    let c = Comparison::new(
        &before,
        &now,
        &config("[compare]\nfail_on = [\"tokens-rise\", \"cost-rise\"]\n"),
    );
    let costly = c.eval("a::costly").unwrap();
    assert_eq!(costly.kind, Kind::Worse);
    let regressions = c.regressions();
    assert_eq!(regressions.len(), 2);
    assert_eq!(
        text::regression(&c, &regressions[0]),
        "rose by more than 10%: tokens/run 1000 → 1500 (+500, +50%)"
    );
    assert_eq!(
        text::regression(&c, &regressions[1]),
        "rose by more than 10%: cost/run 0.0100 → 0.0120 (+0.0020, +20%)"
    );
    assert!(
        text::console(&c, crate::run::report::Names::default())
            .iter()
            .any(|l| l == "    tokens-rise costly: rose by more than 10%: tokens/run 1000 → 1500 (+500, +50%)"),
        "{:#?}",
        text::console(&c, crate::run::report::Names::default())
    );
    // Wider margins let them pass.
    let c = Comparison::new(
        &before,
        &now,
        &config(
            "[compare]\nfail_on = [\"tokens-rise\", \"cost-rise\"]\ntokens_margin = 0.5\ncost_margin = 0.25\n",
        ),
    );
    assert!(!c.failed(), "{:?}", c.regressions());
    assert_eq!(
        text::console(&c, crate::run::report::Names::default())
            .last()
            .map(String::as_str),
        Some(
            "no regression (fail_on: tokens-rise, cost-rise; alpha 0.05, metric margin 0.05, tokens margin 50%, cost margin 25%)"
        )
    );
    // Only the tokens.
    let c = Comparison::new(
        &before,
        &now,
        &config("[compare]\nfail_on = [\"tokens-rise\"]\ntokens_margin = 0.2\n"),
    );
    let kinds: Vec<RegressionKind> = c.regressions().iter().map(|r| r.kind).collect();
    assert_eq!(kinds, [RegressionKind::TokensRise]);
}

#[test]
fn a_baseline_of_another_suite_is_an_error_naming_its_targets() {
    let of = |id: &str, target: Option<&str>| {
        let mut e = passed(id);
        e.target = target.map(String::from);
        e
    };
    let running = BTreeSet::from(["evals".to_string()]);
    let config = CompareConfig::default();
    let other = Baseline::new(
        vec![of("smoke::a", Some("smoke")), of("api::b", Some("api"))],
        false,
        false,
    );
    let error = other
        .check("ci/baseline.json", &running, &config)
        .unwrap_err();
    assert_eq!(
        error.to_string(),
        "ci/baseline.json: the baseline of another suite: its evals belong to the test targets `api` and `smoke`, none to `evals`; pass this suite's baseline (save one with --save-baseline FILE)"
    );
    let one = Baseline::new(vec![of("smoke::a", Some("smoke"))], false, false);
    let error = one
        .check(
            "b.json",
            &BTreeSet::from(["evals".to_string(), "unit".to_string()]),
            &config,
        )
        .unwrap_err()
        .to_string();
    assert!(
        error.contains("belong to the test target `smoke`, none to `evals` or `unit`"),
        "{error}"
    );
    // A baseline of several targets, one of them running: compared (per target).
    let several = Baseline::new(
        vec![of("smoke::a", Some("smoke")), of("evals::b", Some("evals"))],
        false,
        false,
    );
    assert!(several.check("b.json", &running, &config).is_ok());
    // Evals that name no target (older baselines) may be anyone's; an empty baseline holds
    // no target to name; with no target known, nothing can be told.
    let untargeted = Baseline::new(vec![of("smoke::a", None)], false, false);
    assert!(untargeted.check("b.json", &running, &config).is_ok());
    assert!(
        Baseline::default()
            .check("b.json", &running, &config)
            .is_ok()
    );
    assert!(other.check("b.json", &BTreeSet::new(), &config).is_ok());

    // A policy failing on cost-rise needs costs in the baseline.
    let costs = crate::config::Config::parse("[compare]\nfail_on = [\"cost-rise\"]\n", "n.toml")
        .unwrap()
        .compare;
    let error = several
        .check("b.json", &running, &costs)
        .unwrap_err()
        .to_string();
    assert!(
        error.starts_with(
            "b.json: [compare] fail_on names \"cost-rise\", but the baseline records no cost"
        ) && error.contains("baseline_include = [\"cost\"]"),
        "{error}"
    );
    let with_cost = Baseline::new(
        vec![with_usage(of("evals::b", Some("evals")), 10, Some(0.01))],
        true,
        false,
    );
    assert!(with_cost.check("b.json", &running, &costs).is_ok());
}
