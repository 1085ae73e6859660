//! Sharded runs merged by `niceeval report` give the report of a single run: the fixture suite
//! run whole, then split in two shards (by name filters, and by `cargo nextest run
//! --partition`), each shard writing its own results directory; the merged shards must match
//! the single run in every eval's outcome, runs, pass rate, pass@k and pass^k, and the
//! Markdown reports must be equal once durations are redacted. The suite binary's report mode
//! (`--report`), what a user runs from their own crate, merges them as `niceeval report` does.

use std::path::{Path, PathBuf};
use std::process::Command;

use niceeval::__workspace::results::{merge, read_reports};
use niceeval::EvalReport;
use niceeval_tests::child::{self, Output};
use niceeval_tests::fixture::{BUILD_DEADLINE, Fixtures, RUN_DEADLINE};

/// Runs the suite binary with `args`, its results file going to `dir`.
fn shard(dir: &Path, args: &[&str]) -> Output {
    let out = Fixtures::get().run(
        "suite",
        "suite",
        args,
        &[("NICEEVAL_RESULTS_DIR", dir.to_str().expect("UTF-8"))],
    );
    assert!(matches!(out.code(), Some(0 | 101)), "{}", out.dump());
    out
}

/// What must agree between a merged and a single run: everything but durations and the
/// representative run's timing-dependent details.
fn essence(reports: &[EvalReport]) -> Vec<String> {
    reports
        .iter()
        .map(|r| {
            // Runs of one eval run concurrently: which run fails first is not part of the
            // result, how many fail is.
            let mut runs: Vec<&str> = r.runs.iter().map(|run| run.outcome.as_str()).collect();
            runs.sort_unstable();
            let assertions: Vec<String> = r
                .assertions
                .iter()
                .map(|a| format!("{} {} {:.2}", a.name, a.passed, a.score))
                .collect();
            format!(
                "{} {} runs={runs:?} n={} c={} rate={:.4} pass@k={:?} pass^k={:?} score={:?} error={:?} skip={:?} assertions={assertions:?}",
                r.id,
                r.outcome,
                r.reliability.n,
                r.reliability.c,
                r.reliability.pass_rate,
                r.reliability.pass_at_k,
                r.reliability.pass_hat_k,
                r.score,
                r.error,
                r.skip_reason,
            )
        })
        .collect()
}

/// Runs `niceeval report --markdown FILE PATHS...`; returns the Markdown with durations
/// redacted, after checking the exit code (1: some eval failed).
fn markdown_report(dir: &Path, name: &str, paths: &[&Path]) -> String {
    let cli = Fixtures::get().niceeval_cli();
    let file = dir.join(name);
    let mut command = Command::new(cli);
    child::clean_env(&mut command)
        .arg("report")
        .arg("--quiet")
        .arg("--markdown")
        .arg(&file)
        .args(paths);
    let out = child::run(&mut command, RUN_DEADLINE);
    assert_eq!(
        out.code(),
        Some(1),
        "a failed eval fails the report\n{}",
        out.dump()
    );
    redact(&std::fs::read_to_string(&file).expect("markdown written"))
}

/// Replaces durations (`1.23s`) by `[duration]`.
fn redact(text: &str) -> String {
    niceeval::Regex::new(r"\d+\.\d+s\b")
        .expect("a valid regex")
        .replace_all(text, "[duration]")
        .into_owned()
}

/// The one results file a shard wrote into `dir` (beside its run manifest).
fn results_file(dir: &Path) -> PathBuf {
    let files: Vec<PathBuf> = std::fs::read_dir(dir)
        .expect("a results directory")
        .map(|e| e.expect("an entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
        .collect();
    assert_eq!(files.len(), 1, "{files:?}");
    files.into_iter().next().expect("one file")
}

fn merged(paths: &[PathBuf]) -> Vec<EvalReport> {
    merge(read_reports(paths).unwrap_or_else(|e| panic!("{e}")))
}

#[test]
fn two_shards_merge_into_the_report_of_a_single_run() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let (single, one, two) = (
        dir.path().join("single"),
        dir.path().join("shard1"),
        dir.path().join("shard2"),
    );
    shard(&single, &["--skip", "slow", "-q"]);
    shard(&one, &["smoke", "checkout::needs_key", "-q"]);
    shard(
        &two,
        &[
            "--skip",
            "slow",
            "--skip",
            "smoke",
            "--skip",
            "needs_key",
            "-q",
        ],
    );

    let whole = merged(std::slice::from_ref(&single));
    let sharded = merged(&[one.clone(), two.clone()]);
    assert_eq!(whole.len(), 6);
    assert_eq!(essence(&sharded), essence(&whole));

    let md_whole = markdown_report(dir.path(), "whole.md", &[&single]);
    let md_sharded = markdown_report(dir.path(), "sharded.md", &[&one, &two]);
    assert_eq!(md_sharded, md_whole);
    assert!(
        md_whole.contains("**3 passed**, **1 failed**, 2 skipped in [duration]"),
        "{md_whole}"
    );
}

#[test]
fn the_suite_binary_merges_results_files_in_report_mode() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let (one, two) = (dir.path().join("shard1"), dir.path().join("shard2"));
    shard(&one, &["smoke", "checkout::needs_key", "-q"]);
    shard(
        &two,
        &[
            "--skip",
            "slow",
            "--skip",
            "smoke",
            "--skip",
            "needs_key",
            "-q",
        ],
    );
    let (first, second) = (results_file(&one), results_file(&two));
    let first_before = std::fs::read_to_string(&first).expect("readable");
    let fixtures = Fixtures::get();
    // Its own results directory is elsewhere: report mode reads, it writes no results.
    let own = dir.path().join("own");
    let report = |args: &[&str], results_dir: &Path| {
        fixtures.run(
            "suite",
            "suite",
            args,
            &[("NICEEVAL_RESULTS_DIR", results_dir.to_str().expect("UTF-8"))],
        )
    };

    // Two files named on the command line, merged into one Markdown summary.
    let md = dir.path().join("merged.md");
    let out = report(
        &[
            "--report",
            first.to_str().expect("UTF-8"),
            second.to_str().expect("UTF-8"),
            "--markdown",
            md.to_str().expect("UTF-8"),
            "-q",
        ],
        &own,
    );
    assert_eq!(out.code(), Some(101), "an eval failed\n{}", out.dump());
    let merged_md = redact(&std::fs::read_to_string(&md).expect("markdown written"));
    assert!(
        merged_md.contains("**3 passed**, **1 failed**, 2 skipped in [duration]"),
        "{merged_md}"
    );
    for id in [
        "smoke::greets",
        "smoke::counts_words",
        "checkout::needs_key",
        "checkout::refund_fails",
        "checkout::flaky",
        "checkout::expensive",
    ] {
        assert!(merged_md.contains(id), "{id} missing\n{merged_md}");
    }
    assert!(!merged_md.contains("slow::"), "{merged_md}");
    assert!(!own.exists(), "report mode ran evals");
    // The same as the `niceeval report` command gives.
    let cli_md = markdown_report(dir.path(), "cli.md", &[&first, &second]);
    assert_eq!(merged_md, cli_md);

    // Without paths: the crate's results directory.
    let md = dir.path().join("default.md");
    let out = report(
        &["--report", "--markdown", md.to_str().expect("UTF-8")],
        &one,
    );
    assert_eq!(out.code(), Some(0), "{}", out.dump());
    let default_md = redact(&std::fs::read_to_string(&md).expect("markdown written"));
    assert!(
        default_md.contains("**2 passed**, **0 failed**, 1 skipped in [duration]"),
        "{default_md}"
    );
    assert!(
        out.stdout
            .contains("test result: ok. 2 passed; 0 failed; 1 ignored"),
        "{}",
        out.dump()
    );
    assert_eq!(
        std::fs::read_to_string(&first).expect("readable"),
        first_before
    );

    // Nothing to read is a usage error.
    let out = report(&["--report"], &own);
    assert_eq!(out.code(), Some(2), "{}", out.dump());
    assert!(out.stderr.contains("no eval reports in"), "{}", out.dump());
}

#[test]
fn runs_of_one_eval_split_across_shards_merge_into_one_pass_rate() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let (single, one, two) = (
        dir.path().join("single"),
        dir.path().join("shard1"),
        dir.path().join("shard2"),
    );
    // flaky fails its 2nd and 4th run of a process: 5 runs at once, or 2 + 3 on two machines,
    // both give 3 passes out of 5.
    shard(&single, &["--exact", "checkout::flaky", "-q"]);
    shard(&one, &["--exact", "checkout::flaky", "--runs", "2", "-q"]);
    shard(&two, &["--exact", "checkout::flaky", "--runs", "3", "-q"]);
    let whole = merged(std::slice::from_ref(&single));
    let sharded = merged(&[one, two]);
    assert_eq!(sharded.len(), 1);
    let (w, s) = (&whole[0], &sharded[0]);
    assert_eq!(s.runs.len(), 5);
    assert_eq!(s.reliability, w.reliability);
    assert_eq!(s.reliability.c, 3);
    assert!((s.reliability.pass_at_k[1] - 0.9).abs() < 1e-12); // 1 − C(2,2)/C(5,2)
    assert!((s.reliability.pass_hat_k[1] - 0.3).abs() < 1e-12); // C(3,2)/C(5,2)
    assert_eq!(s.outcome, w.outcome);
}

/// `cargo nextest run --partition count:i/2` on the fixture suite, results into `dir`.
fn nextest_shard(dir: &Path, partition: Option<&str>) -> Output {
    nextest_filtered_shard(dir, partition, "not test(/^slow::/)")
}

/// [`nextest_shard`] with the filter expression `filter` (`-E`).
fn nextest_filtered_shard(dir: &Path, partition: Option<&str>, filter: &str) -> Output {
    let fixtures = Fixtures::get();
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut command = Command::new(cargo);
    child::clean_env(&mut command)
        .current_dir(fixtures.crate_dir("suite"))
        .env("NICEEVAL_RESULTS_DIR", dir)
        .args(["nextest", "run", "--no-fail-fast", "--test", "suite"])
        .args(["-E", filter, "--run-ignored", "all"]);
    fixtures.cargo_dirs(&mut command);
    if fixtures.offline() {
        command.arg("--offline");
    }
    if let Some(partition) = partition {
        command.args(["--partition", partition]);
    }
    let out = child::run(&mut command, BUILD_DEADLINE);
    // refund_fails fails (nextest exits 100) in whichever shard runs it.
    let expected: &[i32] = if partition.is_some() {
        &[0, 100]
    } else {
        &[100]
    };
    assert!(
        out.code().is_some_and(|c| expected.contains(&c)),
        "{}",
        out.dump()
    );
    out
}

#[test]
fn nextest_partitions_merge_into_the_report_of_a_single_run() {
    if !have_nextest() {
        return;
    }
    let dir = tempfile::tempdir().expect("a temporary directory");
    let (single, one, two) = (
        dir.path().join("single"),
        dir.path().join("shard1"),
        dir.path().join("shard2"),
    );
    nextest_shard(&single, None);
    nextest_shard(&one, Some("count:1/2"));
    nextest_shard(&two, Some("count:2/2"));
    let whole = merged(std::slice::from_ref(&single));
    let sharded = merged(&[one.clone(), two.clone()]);
    // Every eval but the slow ones, the ignored one included (--run-ignored all).
    assert_eq!(whole.len(), 6, "{:#?}", essence(&whole));
    let count = |p: &Path| read_reports(&[p.to_path_buf()]).map_or(0, |r| r.len());
    assert!(count(&one) > 0 && count(&two) > 0, "both shards ran evals");
    assert_eq!(essence(&sharded), essence(&whole));
    assert_eq!(
        markdown_report(dir.path(), "sharded.md", &[&one, &two]),
        markdown_report(dir.path(), "whole.md", &[&single])
    );

    // The manifests record the `-E` each shard was made with (read from nextest's command
    // line), so `niceeval merge` takes the slow evals as not selected, not missing.
    let os = |p: &Path| p.as_os_str().to_owned();
    let out = niceeval_merge(&[os(&one).as_os_str(), os(&two).as_os_str()]);
    // refund_fails fails: exit 1.
    assert_eq!(out.code(), Some(1), "{}", out.dump());
    assert!(
        out.stderr.contains(
            "left out by the shards' filter `not test(/^slow::/)` (not run, not missing)"
        ),
        "{}",
        out.dump()
    );
    assert!(
        out.stderr.contains("every one reported once"),
        "{}",
        out.dump()
    );
    // A shard made with another filter: refused, each shard's filter named, and what to do.
    let other = dir.path().join("shard2-other");
    nextest_filtered_shard(&other, Some("count:2/2"), "not test(/^(slow|smoke)::/)");
    let out = niceeval_merge(&[os(&one).as_os_str(), os(&other).as_os_str()]);
    assert_eq!(out.code(), Some(2), "{}", out.dump());
    for said in [
        "the shards were made with different filters",
        "has filter `not test(/^slow::/)`",
        "has filter `not test(/^(slow|smoke)::/)`",
        "run every shard with the same `-E`",
        "    missing: suite::slow::",
    ] {
        assert!(out.stderr.contains(said), "{said}\n{}", out.dump());
    }
}

#[test]
fn the_report_command_says_when_there_is_nothing_to_read() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let mut command = Command::new(Fixtures::get().niceeval_cli());
    child::clean_env(&mut command).arg("report").arg(dir.path());
    let out = child::run(&mut command, RUN_DEADLINE);
    assert_eq!(out.code(), Some(2), "{}", out.dump());
    assert!(
        out.stderr.contains("no eval reports in") && out.stderr.contains("run the evals first"),
        "{}",
        out.dump()
    );

    let mut command = Command::new(Fixtures::get().niceeval_cli());
    child::clean_env(&mut command).args(["report", "--bogus"]);
    let out = child::run(&mut command, RUN_DEADLINE);
    assert_eq!(out.code(), Some(2), "{}", out.dump());
    assert!(
        out.stderr.contains("unexpected argument '--bogus'"),
        "{}",
        out.dump()
    );
}

/// The suite binary run in report mode on `paths`, its own results directory in `own`.
fn report_mode(own: &Path, args: &[&str]) -> Output {
    Fixtures::get().run(
        "suite",
        "suite",
        args,
        &[("NICEEVAL_RESULTS_DIR", own.to_str().expect("UTF-8"))],
    )
}

#[test]
fn a_filtered_run_refreshes_what_it_ran_and_keeps_the_rest() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let results = dir.path().join("results");
    shard(&results, &["--skip", "slow", "-q"]);
    let first = read_reports(std::slice::from_ref(&results)).expect("readable");
    assert_eq!(first.len(), 6);
    shard(&results, &["smoke", "-q"]);

    let latest = niceeval::__workspace::results::latest(
        read_reports(std::slice::from_ref(&results)).expect("readable"),
    );
    let ids: Vec<&str> = latest.iter().map(|r| r.id.as_str()).collect();
    assert_eq!(ids.len(), 6, "no eval dropped by the filtered run: {ids:?}");
    for report in &latest {
        // flaky runs 5 times in one run (a second run would have added 5 more); the
        // #[ignore]d one does not run.
        let expected = match report.id.rsplit("::").next() {
            Some("flaky") => 5,
            Some("expensive") => 0,
            _ => 1,
        };
        assert_eq!(report.runs.len(), expected, "{}", report.id);
    }
    let mut earlier: Vec<&str> = niceeval::__workspace::results::from_earlier_runs(&latest)
        .iter()
        .map(|r| r.id.as_str())
        .collect();
    earlier.sort_unstable();
    assert_eq!(
        earlier,
        [
            "suite::checkout::expensive",
            "suite::checkout::flaky",
            "suite::checkout::needs_key",
            "suite::checkout::refund_fails",
        ]
    );

    // Report mode shows all six and names the four from the earlier run.
    let md = dir.path().join("latest.md");
    let out = report_mode(
        &dir.path().join("own"),
        &[
            "--report",
            results.to_str().expect("UTF-8"),
            "--markdown",
            md.to_str().expect("UTF-8"),
            "-q",
        ],
    );
    assert_eq!(
        out.code(),
        Some(101),
        "refund_fails failed in the earlier run\n{}",
        out.dump()
    );
    assert!(
        out.stderr
            .contains("4 eval(s) come from an earlier run than their target's latest")
            && out
                .stderr
                .contains("suite::checkout::refund_fails (run of 20"),
        "{}",
        out.dump()
    );
    let markdown = redact(&std::fs::read_to_string(&md).expect("markdown written"));
    assert!(
        markdown.contains("**3 passed**, **1 failed**, 2 skipped in [duration]"),
        "{markdown}"
    );
}

#[test]
fn an_earlier_passing_results_file_does_not_dilute_a_new_failing_run() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let new = dir.path().join("new");
    shard(&new, &["--exact", "checkout::refund_fails", "-q"]);
    // The same eval from an earlier build, when it passed: the record as that build wrote
    // it, with an earlier run.
    let text = std::fs::read_to_string(results_file(&new)).expect("readable");
    let mut record: serde_json::Value = serde_json::from_str(text.trim()).expect("a record");
    record["outcome"] = "passed".into();
    record["runs"][0]["outcome"] = "passed".into();
    record["runs"][0]["error"] = serde_json::Value::Null;
    record["error"] = serde_json::Value::Null;
    record["run"]["id"] = "2020-01-01T00:00:00.000Z-1".into();
    record["run"]["started"] = "2020-01-01T00:00:00.000Z".into();
    let old = dir.path().join("old");
    std::fs::create_dir_all(&old).expect("a directory");
    std::fs::write(
        old.join("suite-0123456789abcdef.jsonl"),
        format!("{record}\n"),
    )
    .expect("written");

    let md = dir.path().join("latest.md");
    let args = |extra: &'static str| {
        let mut args = vec![
            "--report".to_string(),
            old.display().to_string(),
            new.display().to_string(),
            "--markdown".to_string(),
            md.display().to_string(),
        ];
        if !extra.is_empty() {
            args.push(extra.to_string());
        }
        args
    };
    let run = |args: Vec<String>| {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = report_mode(&dir.path().join("own"), &args);
        (out, std::fs::read_to_string(&md).expect("markdown written"))
    };
    let (out, markdown) = run(args(""));
    assert_eq!(
        out.code(),
        Some(101),
        "the latest run failed\n{}",
        out.dump()
    );
    assert!(
        markdown.contains("**0 passed**, **1 failed**"),
        "{markdown}"
    );
    assert!(
        out.stdout.contains("suite::checkout::refund_fails")
            || out.stdout.contains("checkout::refund_fails"),
        "{}",
        out.dump()
    );
    let latest = niceeval::__workspace::results::latest(
        read_reports(&[old.clone(), new.clone()]).expect("readable"),
    );
    assert_eq!(latest.len(), 1);
    assert_eq!(latest[0].runs.len(), 1, "one run: the latest");
    assert_eq!(latest[0].reliability.pass_rate, 0.0);

    // --combine asks for the old behaviour: both records as runs of one eval.
    let (_out, markdown) = run(args("--combine"));
    let combined =
        niceeval::__workspace::results::merge(read_reports(&[old, new]).expect("readable"));
    assert_eq!(combined[0].runs.len(), 2);
    assert_eq!(combined[0].reliability.pass_rate, 0.5);
    assert!(markdown.contains("0.5"), "{markdown}");
}

/// Whether `cargo nextest` is there. Without it: under CI the test fails, naming the install
/// script; elsewhere a notice goes to stderr and the caller skips.
fn have_nextest() -> bool {
    let ok = Command::new("cargo")
        .args(["nextest", "--version"])
        .output()
        .is_ok_and(|o| o.status.success());
    niceeval_tests::available(
        ok,
        "cargo-nextest",
        "install it with scripts/install-cargo-nextest.sh",
    )
}

/// `cargo nextest run --archive-file ARCHIVE [--partition P]` of the fixture suite, results into
/// `dir`, the shard named by `NICEEVAL_SHARD`.
fn archived_shard(archive: &Path, dir: &Path, partition: Option<&str>) -> Output {
    let fixtures = Fixtures::get();
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut command = Command::new(cargo);
    child::clean_env(&mut command)
        .current_dir(fixtures.crate_dir("suite"))
        .env("NICEEVAL_RESULTS_DIR", dir)
        .env("NICEEVAL_SHARD", partition.unwrap_or(""))
        .args(["nextest", "run", "--no-fail-fast", "--archive-file"])
        .arg(archive)
        .arg("--workspace-remap")
        .arg(fixtures.root());
    if let Some(partition) = partition {
        command.args(["--partition", partition]);
    }
    let out = child::run(&mut command, BUILD_DEADLINE);
    // refund_fails fails (nextest exits 100) in whichever shard runs it.
    assert!(
        out.code().is_some_and(|c| c == 0 || c == 100),
        "{}",
        out.dump()
    );
    out
}

/// `niceeval merge ARGS...`.
fn niceeval_merge(args: &[&std::ffi::OsStr]) -> Output {
    let mut command = Command::new(Fixtures::get().niceeval_cli());
    child::clean_env(&mut command)
        .arg("merge")
        .arg("--quiet")
        .args(args);
    child::run(&mut command, RUN_DEADLINE)
}

#[test]
fn three_nextest_partitions_of_one_archive_merge_into_the_baseline_of_one_run() {
    if !have_nextest() {
        return;
    }
    let fixtures = Fixtures::get();
    let dir = tempfile::tempdir().expect("a temporary directory");
    // Built once, run on "three machines" (three processes, each its own results directory).
    let archive = dir.path().join("suite.tar.zst");
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut command = Command::new(cargo);
    child::clean_env(&mut command)
        .current_dir(fixtures.crate_dir("suite"))
        .args(["nextest", "archive", "--test", "suite", "--archive-file"])
        .arg(&archive);
    fixtures.cargo_dirs(&mut command);
    if fixtures.offline() {
        command.arg("--offline");
    }
    let out = child::run(&mut command, BUILD_DEADLINE);
    assert!(out.status.success(), "{}", out.dump());

    let single = dir.path().join("single");
    archived_shard(&archive, &single, None);
    let shards: Vec<PathBuf> = (1..=3)
        .map(|i| dir.path().join(format!("shard{i}")))
        .collect();
    for (i, shard) in shards.iter().enumerate() {
        archived_shard(&archive, shard, Some(&format!("hash:{}/3", i + 1)));
    }
    let count = |p: &Path| read_reports(&[p.to_path_buf()]).map_or(0, |r| r.len());
    assert_eq!(
        shards.iter().map(|s| count(s)).sum::<usize>(),
        count(&single),
        "the partitions split the run"
    );

    let os = |p: &Path| p.as_os_str().to_owned();
    let baseline = |name: &str, paths: &[PathBuf]| {
        let file = dir.path().join(name);
        let mut args = vec![std::ffi::OsString::from("--save-baseline"), os(&file)];
        args.extend(paths.iter().map(|p| os(p)));
        let args: Vec<&std::ffi::OsStr> = args.iter().map(|a| a.as_os_str()).collect();
        let out = niceeval_merge(&args);
        // refund_fails fails: exit 1, the baseline saved all the same.
        assert_eq!(out.code(), Some(1), "{}", out.dump());
        assert!(
            out.stderr.contains("every one reported once"),
            "{}",
            out.dump()
        );
        std::fs::read(&file).expect("a baseline")
    };
    let whole = baseline("single.json", std::slice::from_ref(&single));
    let merged = baseline("sharded.json", &shards);
    assert_eq!(
        String::from_utf8_lossy(&merged),
        String::from_utf8_lossy(&whole),
        "three shards merged give the baseline of one run, byte for byte"
    );
    assert!(String::from_utf8_lossy(&whole).contains("suite::checkout::flaky"));

    // A shard missing: its evals are named.
    let args: Vec<std::ffi::OsString> = shards[..2].iter().map(|p| os(p)).collect();
    let args: Vec<&std::ffi::OsStr> = args.iter().map(|a| a.as_os_str()).collect();
    let out = niceeval_merge(&args);
    assert_eq!(out.code(), Some(2), "{}", out.dump());
    assert!(
        out.stderr.contains("    missing: suite::"),
        "{}",
        out.dump()
    );
    // A shard twice (the whole run beside its shards): every eval is duplicated.
    let mut args: Vec<std::ffi::OsString> = shards.iter().map(|p| os(p)).collect();
    args.push(os(&single));
    let args: Vec<&std::ffi::OsStr> = args.iter().map(|a| a.as_os_str()).collect();
    let out = niceeval_merge(&args);
    assert_eq!(out.code(), Some(2), "{}", out.dump());
    assert!(
        out.stderr
            .contains("    duplicated: suite::smoke::greets (runs "),
        "{}",
        out.dump()
    );

    // A shard of another commit is refused, unless told to merge it anyway.
    let manifest = std::fs::read_dir(&shards[2])
        .expect("a results directory")
        .map(|e| e.expect("an entry").path())
        .find(|p| p.to_string_lossy().ends_with(".manifest.json"))
        .expect("the shard's run manifest");
    let mut value: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&manifest).expect("readable")).expect("JSON");
    assert_eq!(value["shard"], "hash:3/3");
    value["commit"] = "0000000".into();
    std::fs::write(&manifest, value.to_string()).expect("writable");
    let args: Vec<std::ffi::OsString> = shards.iter().map(|p| os(p)).collect();
    let mut args: Vec<&std::ffi::OsStr> = args.iter().map(|a| a.as_os_str()).collect();
    let out = niceeval_merge(&args);
    assert_eq!(out.code(), Some(2), "{}", out.dump());
    assert!(
        out.stderr.contains("mismatch: target `suite`"),
        "{}",
        out.dump()
    );
    assert!(out.stderr.contains("commit"), "{}", out.dump());
    assert!(out.stderr.contains("--allow-mismatch"), "{}", out.dump());
    let allow = std::ffi::OsString::from("--allow-mismatch");
    args.insert(0, &allow);
    let out = niceeval_merge(&args);
    assert_eq!(out.code(), Some(1), "{}", out.dump());
}
