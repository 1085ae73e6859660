//! Dataset evals (`#[eval(cases = "..")]`) as a user runs them, on a copy of the template crate
//! `fixtures/dataset` (the test edits its files): the same four datasets (JSONL with ids and a
//! blank line, a JSON object keyed by id, YAML without ids, CSV with ids to sanitize) under
//! plain `cargo test`, `cargo nextest` and the suite runner — one eval per case, named
//! `<function>::<case>`, failing cases failing alone — then an edited file picked up by the
//! built suite binary without a rebuild, and a dataset removed after the build failing only
//! its own eval.

use std::path::{Path, PathBuf};
use std::process::Command;

use niceeval_tests::child::{self, Output};
use niceeval_tests::fixture::{BUILD_DEADLINE, Fixtures, RUN_DEADLINE, copy_template};

const FILES: &[&str] = &[
    "niceeval.toml",
    "tests/plain.rs",
    "tests/datasets.rs",
    "tests/common/mod.rs",
    "datasets/capitals.jsonl",
    "datasets/capitals.json",
    "datasets/capitals.yaml",
    "datasets/capitals.csv",
    "datasets/typed.jsonl",
    "datasets/extra.jsonl",
    "datasets/graded.csv",
];

/// `cargo ARGS` in the copy, building into the fixtures' target directory.
fn cargo(dir: &Path, args: &[&str]) -> Output {
    cargo_with(dir, args, &[])
}

/// [`cargo`] with environment variables.
fn cargo_with(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Output {
    let fixtures = Fixtures::get();
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut command = Command::new(cargo);
    child::clean_env(&mut command)
        .current_dir(dir)
        .args(args)
        .env("CARGO_TERM_COLOR", "never")
        .env("NICEEVAL_RESULTS", "0")
        .env_remove("CI")
        .envs(env.iter().copied());
    fixtures.cargo_dirs(&mut command);
    if fixtures.offline() {
        command.env("CARGO_NET_OFFLINE", "true");
    }
    child::run(&mut command, BUILD_DEADLINE)
}

/// The outcome libtest (or the suite runner) printed for each test, sorted by name.
fn results(out: &Output) -> Vec<(String, String)> {
    let mut results: Vec<(String, String)> = out
        .stdout
        .lines()
        .filter_map(|line| {
            let rest = line.strip_prefix("test ")?;
            let (name, result) = rest.split_once(" ... ")?;
            Some((name.to_string(), result.to_string()))
        })
        .collect();
    results.sort();
    results
}

/// The cases of every dataset and what each must do (the bot knows Paris, Lima, São Paulo).
fn expected() -> Vec<(String, String)> {
    let mut expected: Vec<(String, String)> = [
        ("csv::S_o_Paulo_state", "ok"),
        ("csv::lima", "ok"),
        ("csv::case_7", "FAILED"),
        ("extra::atlantis", "FAILED"),
        ("extra::lima", "ok"),
        ("extra::paris", "ok"),
        ("graded::atlantis", "FAILED"),
        ("graded::france", "ok"),
        ("graded::peru", "ok"),
        ("json::atlantis", "FAILED"),
        ("json::lima", "ok"),
        ("json::paris", "ok"),
        ("jsonl::atlantis", "FAILED"),
        ("jsonl::lima", "ok"),
        ("jsonl::paris", "ok"),
        ("typed::case_1", "ok"),
        ("typed::case_2", "FAILED"),
        ("yaml::case_1", "ok"),
        ("yaml::case_2", "ok"),
        ("yaml::case_3", "FAILED"),
    ]
    .iter()
    .map(|(n, r)| (n.to_string(), r.to_string()))
    .collect();
    expected.sort();
    expected
}

/// The newest suite binary `datasets-<hash>` in the fixtures' build directory.
fn suite_binary() -> PathBuf {
    let deps = Fixtures::get().build_dir().join("debug").join("deps");
    let mut found: Vec<(std::time::SystemTime, PathBuf)> = std::fs::read_dir(&deps)
        .expect("the deps directory")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("datasets-") && !n.contains('.'))
        })
        .filter_map(|p| Some((p.metadata().ok()?.modified().ok()?, p)))
        .collect();
    found.sort();
    found.pop().expect("a built datasets binary").1
}

#[test]
fn one_eval_per_case_everywhere_and_edited_files_need_no_rebuild() {
    let temp = tempfile::tempdir().expect("a temporary directory");
    let dir = temp.path().join("crate");
    copy_template("dataset", FILES, &dir);

    // Plain cargo test: one libtest test per case. (The datasets with `min_case_pass_rate`
    // are checked apart, below.)
    const APART: [&str; 6] = [
        "--skip",
        "lenient",
        "--skip",
        "demanding",
        "--skip",
        "snapped",
    ];
    let out = cargo(
        &dir,
        &[&["test", "--test", "plain", "--"][..], &APART].concat(),
    );
    let log = out.dump();
    assert_eq!(out.code(), Some(101), "{log}");
    assert_eq!(results(&out), expected(), "{log}");
    // A record that does not fit the case type fails its case, naming file, line and field.
    assert!(
        out.stdout.contains(
            "datasets/typed.jsonl:2: case_2 does not fit the eval's case type at `answer`: invalid type: integer `7`, expected a string"
        ),
        "{log}"
    );
    // Filters and --exact match the case names.
    let out = cargo(
        &dir,
        &["test", "--test", "plain", "--", "--exact", "jsonl::lima"],
    );
    assert_eq!(
        results(&out),
        [("jsonl::lima".to_string(), "ok".to_string())],
        "{}",
        out.dump()
    );

    // The suite runner: the same evals, read from the files when it starts.
    let out = cargo(
        &dir,
        &[&["test", "--test", "datasets", "--"][..], &APART].concat(),
    );
    let log = out.dump();
    assert_eq!(out.code(), Some(101), "{log}");
    assert_eq!(results(&out), expected(), "{log}");
    assert!(out.stdout.contains("13 passed; 7 failed"), "{log}");
    // Assertions as data from the CSV's `__expected` columns: one line per item.
    assert!(
        out.stdout.contains("includes(\"poseidonia\")") || out.stdout.contains("icontains"),
        "{log}"
    );
    // Each dataset's own line: its cases passed of total and their mean score.
    assert!(
        out.stdout
            .contains("dataset jsonl: 2 of 3 cases passed, mean score 0.67\n"),
        "{log}"
    );
    assert!(
        out.stdout.contains("dataset csv: 2 of 3 cases passed"),
        "{log}"
    );

    // min_case_pass_rate: the dataset's verdict decides the exit status, its failing cases
    // are still listed. 2 of 3 cases pass: enough for `lenient` (0.6), not for `demanding`
    // (0.9). Under libtest every case test passes and the verdict comes at exit.
    for (target, eval, code, verdict) in [
        ("datasets", "lenient", 0, "passes"),
        ("datasets", "demanding", 101, "FAILED"),
        ("plain", "lenient", 0, "passes"),
        ("plain", "demanding", 101, "FAILED"),
    ] {
        let out = cargo(&dir, &["test", "--test", target, "--", eval]);
        let log = out.dump();
        assert_eq!(out.code(), Some(code), "{target} {eval}\n{log}");
        let both = format!("{}{}", out.stdout, out.stderr);
        assert!(
            both.contains("2 of 3 cases passed") && both.contains(&format!("of them: {verdict}")),
            "{target} {eval}\n{log}"
        );
        assert!(both.contains(&format!("{eval}::atlantis")), "{log}");
        if target == "plain" {
            // Under libtest, which counted it as passed, the exit summary says why each case
            // failed: its first failing assertion and reason.
            let line = both
                .lines()
                .find(|l| l.starts_with("  FAILED ") && l.contains(&format!("{eval}::atlantis - ")))
                .unwrap_or_else(|| panic!("no FAILED line for atlantis\n{log}"));
            assert!(
                line.contains(": "),
                "a reason follows the assertion: {line}"
            );
        }
    }

    // `snapshot`: each case's report is a snapshot of its own, named after the case, under
    // cargo test and the suite runner alike.
    for target in ["plain", "datasets"] {
        let out = cargo_with(
            &dir,
            &["test", "--test", target, "--", "snapped"],
            &[("INSTA_UPDATE", "always")],
        );
        assert_eq!(out.code(), Some(101), "atlantis fails\n{}", out.dump());
        for case in ["paris", "lima", "atlantis"] {
            let file = dir.join(format!("tests/snapshots/{target}__snapped__{case}.snap"));
            let text = std::fs::read_to_string(&file)
                .unwrap_or_else(|e| panic!("{}: {e}\n{}", file.display(), out.dump()));
            assert!(
                text.contains(&format!("niceeval report of {target}::snapped::{case}")),
                "{text}"
            );
        }
    }

    // Part of a large dataset: the first cases, or a sample the seed reproduces.
    let binary = suite_binary();
    let run = |args: &[&str]| {
        let mut command = Command::new(&binary);
        child::clean_env(&mut command)
            .current_dir(&dir)
            .env("NICEEVAL_RESULTS", "0")
            .args(args);
        child::run(&mut command, RUN_DEADLINE)
    };
    let names = |out: &Output| results(out).into_iter().map(|(n, _)| n).collect::<Vec<_>>();
    let out = run(&["--limit", "1", "json"]);
    assert_eq!(
        names(&out),
        ["json::paris", "jsonl::paris"],
        "{}",
        out.dump()
    );
    // Runs combine with cases: N runs of each case.
    let out = run(&["--runs", "3", "--exact", "jsonl::paris"]);
    let row = out
        .stdout
        .lines()
        .find(|l| l.starts_with("jsonl::paris "))
        .unwrap_or_else(|| panic!("a table row\n{}", out.dump()));
    let cells: Vec<&str> = row.split_whitespace().collect();
    assert_eq!(&cells[..3], ["jsonl::paris", "passed", "3"], "{row}");
    // Without --seed a seed is drawn and printed; with it, the same sample comes back.
    let drawn = run(&["--sample", "2", "jsonl::"]);
    let seed = drawn
        .stdout
        .lines()
        .find_map(|l| l.strip_prefix("--sample 2: drew seed "))
        .and_then(|rest| rest.split(';').next())
        .unwrap_or_else(|| panic!("the drawn seed is printed\n{}", drawn.dump()))
        .to_string();
    assert_eq!(
        names(&run(&["--sample", "2", "--seed", &seed, "jsonl::"])),
        names(&drawn)
    );
    let first = run(&["--sample", "2", "--seed", "3", "jsonl::"]);
    assert_eq!(names(&first).len(), 2, "{}", first.dump());
    assert_eq!(
        names(&run(&["--sample", "2", "--seed", "3", "jsonl::"])),
        names(&first)
    );

    // The results file keeps every case's latest result across a filtered run.
    let results_dir = temp.path().join("results");
    let with_results = |args: &[&str]| {
        let mut command = Command::new(&binary);
        child::clean_env(&mut command)
            .current_dir(&dir)
            .env("NICEEVAL_RESULTS_DIR", &results_dir)
            .args(args);
        child::run(&mut command, RUN_DEADLINE)
    };
    with_results(&[&["-q"][..], &APART].concat());
    with_results(&["-q", "--exact", "jsonl::lima"]);
    let reports = niceeval::__workspace::results::read_reports(std::slice::from_ref(&results_dir))
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        niceeval::__workspace::results::latest(reports).len(),
        expected().len()
    );

    // Rows deleted from a dataset leave the results at the next run: two failing rows added
    // and run, the file restored and run again; report mode then knows nothing of them.
    let jsonl = dir.join("datasets/capitals.jsonl");
    let original = std::fs::read_to_string(&jsonl).expect("readable");
    std::fs::write(
        &jsonl,
        format!(
            "{original}{}",
            "{\"id\": \"mu\", \"question\": \"What is the capital of Mu?\", \"answer\": \"Hiva\"}\n\
             {\"id\": \"lemuria\", \"question\": \"What is the capital of Lemuria?\", \"answer\": \"Kumari\"}\n"
        ),
    )
    .expect("writable");
    let out = with_results(&[&["-q"][..], &APART].concat());
    assert!(out.stdout.contains("13 passed; 9 failed"), "{}", out.dump());
    std::fs::write(&jsonl, &original).expect("writable");
    with_results(&[&["-q"][..], &APART].concat());
    let reports = niceeval::__workspace::results::read_reports(std::slice::from_ref(&results_dir))
        .unwrap_or_else(|e| panic!("{e}"));
    let gone: Vec<&str> = reports
        .iter()
        .map(|r| r.id.as_str())
        .filter(|id| id.ends_with("::mu") || id.ends_with("::lemuria"))
        .collect();
    assert!(gone.is_empty(), "{gone:?}");
    let out = with_results(&["--report", "-q"]);
    assert_eq!(out.code(), Some(101), "{}", out.dump());
    assert!(out.stdout.contains("13 passed; 7 failed"), "{}", out.dump());

    // A dataset that cannot be read leaves an error under the dataset eval's own name; once
    // the file reads again, the next run's records replace it and that error leaves the
    // results, as a deleted eval does (it stayed, an "earlier run" error forever).
    let extra = dir.join("datasets/extra.jsonl");
    let kept = std::fs::read_to_string(&extra).expect("readable");
    std::fs::remove_file(&extra).expect("removable");
    let out = with_results(&[&["-q"][..], &APART].concat());
    assert_eq!(out.code(), Some(101), "{}", out.dump());
    std::fs::write(&extra, &kept).expect("writable");
    for _ in 0..2 {
        let out = with_results(&[&["-q"][..], &APART].concat());
        assert!(out.stdout.contains("13 passed; 7 failed"), "{}", out.dump());
    }
    let reports = niceeval::__workspace::results::read_reports(std::slice::from_ref(&results_dir))
        .unwrap_or_else(|e| panic!("{e}"));
    let stale: Vec<&str> = reports
        .iter()
        .map(|r| r.id.as_str())
        .filter(|id| id.ends_with("extra"))
        .collect();
    assert!(
        stale.is_empty(),
        "the unreadable dataset's error stayed: {stale:?}"
    );
    let out = with_results(&["--report", "-q"]);
    assert!(
        out.stdout.contains("13 passed; 7 failed") && !out.stdout.contains("earlier run"),
        "{}",
        out.dump()
    );

    // An edited file runs as it is now, without a rebuild: the built binary, run directly.
    let jsonl = dir.join("datasets/capitals.jsonl");
    let mut text = std::fs::read_to_string(&jsonl).expect("readable");
    text.push_str(
        "{\"id\": \"sao\", \"question\": \"What is the capital of São Paulo state?\", \"answer\": \"São Paulo\"}\n",
    );
    std::fs::write(&jsonl, text).expect("writable");
    // A dataset gone since the build fails its own eval, saying why; the others run.
    std::fs::remove_file(dir.join("datasets/extra.jsonl")).expect("removable");
    let out = run(&[&["--color=never"][..], &APART].concat());
    let log = out.dump();
    let results = results(&out);
    assert!(
        results.contains(&("jsonl::sao".to_string(), "ok".to_string())),
        "the added case runs\n{log}"
    );
    assert!(
        results.contains(&("extra".to_string(), "FAILED".to_string())),
        "{log}"
    );
    assert!(
        out.stdout
            .contains("the dataset of datasets::extra cannot be used: cannot read the dataset"),
        "{log}"
    );
    assert!(
        results.contains(&("json::paris".to_string(), "ok".to_string())),
        "{log}"
    );

    // cargo nextest: each case is a test of its own there too.
    let nextest = Command::new("cargo")
        .args(["nextest", "--version"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !niceeval_tests::available(
        nextest,
        "cargo-nextest (for the nextest part)",
        "install it with scripts/install-cargo-nextest.sh",
    ) {
        return;
    }
    // The edited file is picked up by the rebuild cargo starts by itself (the macro tracks it).
    copy_template("dataset", &["datasets/extra.jsonl"], &dir);
    let out = cargo(
        &dir,
        &[
            "nextest",
            "run",
            "--no-fail-fast",
            "--test",
            "plain",
            "-E",
            "not test(/^(lenient|demanding|snapped)::/)",
        ],
    );
    let log = out.dump();
    assert_eq!(out.code(), Some(100), "{log}");
    let both = format!("{}{}", out.stdout, out.stderr);
    for name in ["jsonl::sao", "csv::S_o_Paulo_state", "yaml::case_3"] {
        assert!(both.contains(&format!("plain {name}")), "{name}\n{log}");
    }

    // Under nextest too, rows deleted from a dataset leave the results at the next run (each
    // run writes a file of its own; the next run's first process compacts the earlier ones).
    let nextest_results = temp.path().join("nextest-results");
    let jsonl_cases = |expected: i32| {
        let out = cargo_with(
            &dir,
            &[
                "nextest",
                "run",
                "--no-fail-fast",
                "--test",
                "plain",
                "-E",
                "not test(/^(lenient|demanding|snapped)::/)",
            ],
            &[
                ("NICEEVAL_RESULTS", "1"),
                (
                    "NICEEVAL_RESULTS_DIR",
                    nextest_results.to_str().expect("UTF-8"),
                ),
            ],
        );
        let out = if out.code() == Some(expected) {
            out
        } else {
            panic!("nextest exit {:?}\n{}", out.code(), out.dump())
        };
        let reports =
            niceeval::__workspace::results::read_reports(std::slice::from_ref(&nextest_results))
                .unwrap_or_else(|e| panic!("{e}\n{}", out.dump()));
        reports.into_iter().map(|r| r.id).collect::<Vec<String>>()
    };
    let original = std::fs::read_to_string(&jsonl).expect("readable");
    std::fs::write(
        &jsonl,
        format!(
            "{original}{}",
            "{\"id\": \"mu\", \"question\": \"What is the capital of Mu?\", \"answer\": \"Hiva\"}\n"
        ),
    )
    .expect("writable");
    let ids = jsonl_cases(100);
    assert!(ids.iter().any(|id| id.ends_with("jsonl::mu")), "{ids:?}");
    std::fs::write(&jsonl, &original).expect("writable");
    let ids = jsonl_cases(100);
    assert!(ids.iter().any(|id| id.ends_with("jsonl::lima")), "{ids:?}");
    let gone: Vec<&String> = ids.iter().filter(|id| id.ends_with("::mu")).collect();
    assert!(
        gone.is_empty(),
        "a deleted row left in the results: {gone:?}"
    );
}
