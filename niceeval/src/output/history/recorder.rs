//! The reporter that records a run in the history: the run's row when it starts (or at its
//! first eval), each eval's row as it finishes — committed at once: in WAL mode with
//! `synchronous = NORMAL` a commit is an append to the log without waiting for the disk (measured:
//! about 60 µs an eval in a debug build, so 10,000 evals add under a second), so a killed run keeps every eval that
//! finished and memory holds nothing per eval — and the run's end. A merge (`--merge`) records
//! the merged run, its shards' runs marked as merged into it. A failure is said on stderr
//! once and the run goes on unrecorded.

use std::path::{Path, PathBuf};

use crate::output::reporter::Reporter;
use crate::output::results::manifest::{self, Manifest};
use crate::run::report::{EvalReport, SuiteReport, SuiteStart};

use super::place::{Place, store_path};
use super::store::{EvalFacts, History, HistoryError, RunFacts};

/// Records one run (see the module's text).
#[derive(Debug)]
pub(crate) struct Recorder {
    history: Option<History>,
    run: RunFacts,
    /// The shard runs a merged run is made of (their rows are marked merged into it).
    shards: Vec<String>,
    started: bool,
    /// The crate's directory and its run manifest, read when the run starts (the suite runner
    /// writes the manifest after building its reporters).
    pending: Option<(PathBuf, Option<PathBuf>)>,
}

impl Recorder {
    /// The recorder of this process's run of the crate at `manifest_dir`, whose results file
    /// (if any) is `results` (its manifest beside it names the commit, the configuration's
    /// hash, the shard and the filter). `None` when the history is off or cannot be opened
    /// (said on stderr).
    pub(crate) fn for_run(manifest_dir: &Path, results: Option<&Path>) -> Option<Recorder> {
        let history = open(manifest_dir)?;
        Some(Recorder {
            history: Some(history),
            run: RunFacts::default(),
            shards: Vec::new(),
            started: false,
            pending: Some((manifest_dir.to_path_buf(), results.map(manifest::path_of))),
        })
    }

    /// The recorder of the run `niceeval merge` makes of the shards `manifests` describe, in
    /// the history of the crate found from `dir`.
    pub(crate) fn for_merge(dir: &Path, manifests: &[Manifest]) -> Option<Recorder> {
        if manifests.is_empty() {
            return None;
        }
        let history = open(dir)?;
        Some(Recorder {
            history: Some(history),
            ..Recorder::for_merge_with(manifests)
        })
    }

    /// [`Recorder::for_merge`] without its store yet.
    fn for_merge_with(manifests: &[Manifest]) -> Recorder {
        let first = manifests
            .iter()
            .min_by(|a, b| a.run.cmp(&b.run))
            .expect("a merge of one shard or more");
        let mut shards: Vec<String> = manifests.iter().map(|m| m.run.clone()).collect();
        shards.sort();
        shards.dedup();
        let run = RunFacts {
            run: format!("merge-{}", first.run),
            target: first.target.clone(),
            // Replaced by the earliest start among the shards' records as they come.
            started: humantime::format_rfc3339_millis(std::time::SystemTime::now()).to_string(),
            commit: first.commit.clone(),
            config_hash: Some(first.config_hash.clone()),
            shard: None,
            filter: manifests.iter().find_map(|m| m.filter.clone()),
            merged_from: Some(serde_json::to_string(&shards).unwrap_or_default()),
        };
        Recorder {
            history: None,
            run,
            shards,
            started: false,
            pending: None,
        }
    }

    /// Calls `write` on the store; on its first error says it and records nothing more.
    fn write(&mut self, write: impl FnOnce(&History, &RunFacts) -> Result<(), HistoryError>) {
        let Some(history) = &self.history else {
            return;
        };
        if let Err(e) = write(history, &self.run) {
            eprintln!("niceeval: the run is not recorded in the history: {e}");
            self.history = None;
        }
    }

    fn start(&mut self) {
        if self.started {
            return;
        }
        self.started = true;
        if let Some((dir, manifest)) = self.pending.take() {
            self.run = this_run_facts(&dir, manifest.as_deref());
        }
        let shards = std::mem::take(&mut self.shards);
        self.write(|history, run| {
            history.upsert_run(run)?;
            history.merged_into(&shards, &run.target, &run.run)
        });
    }
}

fn open(dir: &Path) -> Option<History> {
    let Place::At(path) = store_path(dir) else {
        return None;
    };
    History::open(&path)
        .map_err(|e| eprintln!("niceeval: runs are not recorded: {e}"))
        .ok()
}

/// This process's run: what its manifest says (commit, configuration hash, shard, filter),
/// else what the manifest would say.
fn this_run_facts(manifest_dir: &Path, manifest: Option<&Path>) -> RunFacts {
    let this = crate::output::results::this_run();
    let run = RunFacts {
        run: this.id.clone(),
        target: this.target.clone(),
        started: this.started.clone(),
        ..RunFacts::default()
    };
    match manifest.and_then(read_manifest) {
        Some(m) if m.run == this.id => RunFacts {
            commit: m.commit,
            config_hash: Some(m.config_hash),
            shard: m.shard,
            filter: m.filter,
            ..run
        },
        _ => {
            let source = crate::config::Config::discover(manifest_dir)
                .ok()
                .and_then(|c| c.source);
            let env = |name: &str| std::env::var(name).ok().filter(|s| !s.trim().is_empty());
            RunFacts {
                commit: manifest::commit(manifest_dir),
                config_hash: Some(manifest::config_hash(source.as_deref())),
                shard: env("NICEEVAL_SHARD"),
                filter: env("NICEEVAL_FILTER"),
                ..run
            }
        }
    }
}

fn read_manifest(path: &Path) -> Option<Manifest> {
    serde_json::from_slice(&std::fs::read(path).ok()?).ok()
}

/// What the history keeps of a finished eval.
pub(crate) fn facts(report: &EvalReport) -> EvalFacts {
    use crate::base::outcome::Outcome;
    let counted = report
        .runs
        .iter()
        .filter(|r| r.outcome != Outcome::Skipped)
        .count() as u64;
    let passed = report
        .runs
        .iter()
        .filter(|r| r.outcome == Outcome::Passed)
        .count() as u64;
    EvalFacts {
        eval: report.id.clone(),
        outcome: report.outcome.as_str().to_string(),
        runs: report.runs.len() as u64,
        passed,
        counted,
        pass_rate: report.reliability.pass_rate,
        score: report.score,
        metrics: (!report.metrics.is_empty())
            .then(|| serde_json::to_string(&report.metrics).unwrap_or_default()),
        input_tokens: report.total_usage.input_tokens,
        output_tokens: report.total_usage.output_tokens,
        cost_usd: report.total_usage.cost_usd,
        duration_ms: report.duration_ms,
        finished: humantime::format_rfc3339_millis(std::time::SystemTime::now()).to_string(),
    }
}

impl Reporter for Recorder {
    fn on_run_start(&mut self, _start: &SuiteStart) -> std::io::Result<()> {
        self.start();
        Ok(())
    }

    fn on_eval_complete(&mut self, report: &EvalReport) -> std::io::Result<()> {
        // A merged run started when its earliest shard did.
        if self.run.merged_from.is_some()
            && let Some(run) = &report.run
            && run.started < self.run.started
        {
            self.run.started = run.started.clone();
            if self.started {
                self.write(|history, run| history.upsert_run(run));
            }
        }
        self.start();
        let facts = facts(report);
        self.write(|history, run| history.upsert_eval(&run.run, &run.target, &facts));
        Ok(())
    }

    fn on_run_complete(&mut self, suite: &SuiteReport) -> std::io::Result<()> {
        self.start();
        let now = std::time::SystemTime::now();
        // A run's wall time, from its start (its first process's, under nextest) to now; a
        // merge's is the replayed suite's.
        let duration_ms = humantime::parse_rfc3339(&self.run.started)
            .ok()
            .filter(|_| self.run.merged_from.is_none())
            .and_then(|started| now.duration_since(started).ok())
            .map_or(suite.duration_ms, |d| d.as_secs_f64() * 1000.0);
        let finished = humantime::format_rfc3339_millis(now).to_string();
        let interrupted = suite.interrupted;
        self.write(|history, run| {
            history.finish_run(&run.run, &run.target, &finished, duration_ms, interrupted)
        });
        Ok(())
    }

    fn reads_evals(&self) -> bool {
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::output::reporter::SuiteReport;

    impl Recorder {
        /// A recorder of the run `run`, in `history`.
        fn with(history: History, run: RunFacts) -> Recorder {
            Recorder {
                history: Some(history),
                run,
                shards: Vec::new(),
                started: false,
                pending: None,
            }
        }
    }

    fn report(id: &str, outcome: &str, run: Option<(&str, &str)>) -> EvalReport {
        let score = match outcome {
            "passed" => Some(1.0),
            "failed" => Some(0.0),
            _ => None,
        };
        serde_json::from_value(serde_json::json!({
            "id": id, "file": "tests/evals.rs", "line": 3, "outcome": outcome,
            "assertions": [], "duration_ms": 1200.0, "score": score,
            "usage": {"input_tokens": 0, "output_tokens": 0, "cache_read_tokens": 0},
            "total_usage": {"input_tokens": 100, "output_tokens": 20, "cache_read_tokens": 0, "cost_usd": 0.001},
            "runs": [{"outcome": outcome, "duration_ms": 1200.0,
                      "usage": {"input_tokens": 100, "output_tokens": 20, "cache_read_tokens": 0}}],
            "reliability": {"n": 1, "c": 1, "pass_rate": if outcome == "passed" { 1.0 } else { 0.0 },
                            "pass_at_k": [1.0], "pass_hat_k": [1.0]},
            "min_pass_rate": 1.0,
            "run": run.map(|(id, started)| serde_json::json!({"id": id, "started": started, "target": "evals"})),
        }))
        .expect("a report")
    }

    fn facts(n: usize) -> RunFacts {
        RunFacts {
            run: format!("r{n:02}"),
            target: "evals".into(),
            started: format!("2026-01-01T00:{n:02}:00.000Z"),
            commit: Some(format!("{n:02}abcdef0123")),
            config_hash: Some("hash".into()),
            ..RunFacts::default()
        }
    }

    fn record(path: &Path, run: RunFacts, evals: &[(&str, &str)]) {
        let mut recorder = Recorder::with(History::open(path).unwrap(), run);
        recorder
            .on_run_start(&SuiteStart {
                evals: Vec::<String>::new().into(),
                concurrency: 1,
            })
            .unwrap();
        for (id, outcome) in evals {
            recorder
                .on_eval_complete(&report(id, outcome, None))
                .unwrap();
        }
        recorder
            .on_run_complete(&SuiteReport::new(vec![], 0, false, 0.0))
            .unwrap();
    }

    /// The "done when": 20 runs of a suite, one eval regressing at run 12.
    #[test]
    fn twenty_runs_with_one_eval_regressing_at_run_12_are_marked_there_only() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("history.sqlite");
        for n in 1..=20 {
            let refund = if n < 12 { "passed" } else { "failed" };
            record(
                &path,
                facts(n),
                &[
                    ("evals::steady", "passed"),
                    ("evals::refund", refund),
                    ("evals::later", "skipped"),
                ],
            );
        }
        let history = History::open(&path).unwrap();
        let rule = MarkRuleDefault::default();
        let trend = history.trend("evals::refund", 30, &rule).unwrap();
        assert_eq!(trend.len(), 20);
        let marked: Vec<usize> = (0..20)
            .filter(|&i| trend[i].significant.is_some())
            .collect();
        assert_eq!(marked, vec![11], "{trend:#?}");
        assert_eq!(trend[11].commit.as_deref(), Some("12abcdef0123"));
        assert_eq!((trend[11].passed, trend[11].counted), (0, 1));
        assert_eq!(trend[11].cost_usd, Some(0.001));
        assert_eq!(trend[11].input_tokens, 100);
        let steady = history.trend("evals::steady", 30, &rule).unwrap();
        assert!(steady.iter().all(|p| p.significant.is_none()));
        // The last 8: the first of them still compared with the runs before.
        let last = history.trend("evals::refund", 9, &rule).unwrap();
        assert_eq!(last.len(), 9);
        assert!(last[0].significant.is_some() && last[0].run == "r12");

        let suite = history.suite_trend("evals", 30, &rule).unwrap();
        let marked: Vec<&str> = suite
            .iter()
            .filter(|p| p.significant.is_some())
            .map(|p| p.run.run.as_str())
            .collect();
        assert_eq!(marked, vec!["r12"]);

        let runs = history.runs(3, None).unwrap();
        let ids: Vec<&str> = runs.iter().map(|r| r.run.as_str()).collect();
        assert_eq!(ids, vec!["r20", "r19", "r18"]);
        assert_eq!((runs[0].passed, runs[0].failed, runs[0].skipped), (1, 1, 1));
        assert_eq!(runs[0].pass_rate, Some(0.5));
        assert!(runs[0].finished.is_some());
        assert!((runs[0].cost_usd.unwrap() - 0.003).abs() < 1e-12);
    }

    type MarkRuleDefault = super::super::marks::MarkRule;

    /// `[history] path` outside the target directory: the file is there after `cargo clean`
    /// (the target directory removed).
    #[test]
    fn a_history_kept_outside_target_survives_removing_the_target_directory() {
        if std::env::var_os("NICEEVAL_HISTORY").is_some() {
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("niceeval.toml"),
            "[history]\npath = \".niceeval/history.sqlite\"\n",
        )
        .unwrap();
        let target = dir.path().join("target");
        std::fs::create_dir_all(target.join("niceeval/results")).unwrap();
        let mut recorder = Recorder::for_run(dir.path(), None).expect("recording");
        recorder
            .on_eval_complete(&report("a", "passed", None))
            .unwrap();
        recorder
            .on_run_complete(&SuiteReport::new(vec![], 0, false, 0.0))
            .unwrap();
        drop(recorder);
        std::fs::remove_dir_all(&target).unwrap();
        let history = History::open(&dir.path().join(".niceeval/history.sqlite")).unwrap();
        let runs = history.runs(10, None).unwrap();
        assert_eq!(runs.len(), 1);
        assert_eq!(runs[0].evals, 1);
    }

    #[test]
    fn a_filtered_run_is_listed_with_its_filter_and_left_out_of_the_suite_trend() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("history.sqlite");
        record(&path, facts(1), &[("a", "passed"), ("b", "passed")]);
        let filtered = RunFacts {
            filter: Some("refund".into()),
            ..facts(2)
        };
        record(&path, filtered, &[("a", "failed")]);
        let history = History::open(&path).unwrap();
        let runs = history.runs(10, None).unwrap();
        assert_eq!(runs[0].filter.as_deref(), Some("refund"));
        assert_eq!(runs.len(), 2);
        let suite = history
            .suite_trend("evals", 10, &MarkRuleDefault::default())
            .unwrap();
        assert_eq!(suite.len(), 1);
        // The eval's own trend has both.
        assert_eq!(
            history
                .trend("a", 10, &MarkRuleDefault::default())
                .unwrap()
                .len(),
            2
        );
    }

    #[test]
    fn a_merge_records_one_run_for_its_shards() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("history.sqlite");
        record(
            &path,
            RunFacts {
                shard: Some("1/2".into()),
                ..facts(1)
            },
            &[("a", "passed")],
        );
        record(
            &path,
            RunFacts {
                shard: Some("2/2".into()),
                ..facts(2)
            },
            &[("b", "failed")],
        );
        let manifest = |run: &str| Manifest {
            schema: 1,
            niceeval: "0".into(),
            target: "evals".into(),
            run: run.into(),
            commit: Some("feedface".into()),
            config_hash: "hash".into(),
            shard: None,
            filter: None,
            evals: Vec::new(),
            ignored: vec![],
        };
        let history = History::open(&path).unwrap();
        let mut recorder = Recorder {
            history: Some(history),
            ..Recorder::for_merge_with(&[manifest("r01"), manifest("r02")])
        };
        recorder
            .on_eval_complete(&report(
                "a",
                "passed",
                Some(("r01", "2026-01-01T00:01:00.000Z")),
            ))
            .unwrap();
        recorder
            .on_eval_complete(&report(
                "b",
                "failed",
                Some(("r02", "2026-01-01T00:02:00.000Z")),
            ))
            .unwrap();
        recorder
            .on_run_complete(&SuiteReport::new(vec![], 0, false, 2400.0))
            .unwrap();
        let history = History::open(&path).unwrap();
        let runs = history.runs(10, None).unwrap();
        assert_eq!(runs.len(), 1, "{runs:#?}");
        assert_eq!(runs[0].run, "merge-r01");
        assert_eq!(runs[0].merged_from, vec!["r01", "r02"]);
        assert_eq!(runs[0].started, "2026-01-01T00:01:00.000Z");
        assert_eq!((runs[0].passed, runs[0].failed), (1, 1));
        assert_eq!(runs[0].duration_ms, Some(2400.0));
    }

    /// A run killed with SIGKILL while it writes leaves a file that opens, passes SQLite's
    /// integrity check and holds every eval that finished before the kill.
    #[cfg(unix)]
    #[test]
    fn a_run_killed_mid_way_leaves_a_sound_file_with_its_finished_evals() {
        const CHILD: &str = "NICEEVAL_HISTORY_KILL_CHILD";
        if let Some(path) = std::env::var_os(CHILD) {
            // The child: a run that never ends, an eval every few milliseconds.
            let mut recorder = Recorder::with(History::open(Path::new(&path)).unwrap(), facts(1));
            recorder
                .on_run_start(&SuiteStart {
                    evals: Vec::<String>::new().into(),
                    concurrency: 1,
                })
                .unwrap();
            for i in 0.. {
                recorder
                    .on_eval_complete(&report(&format!("e{i}"), "passed", None))
                    .unwrap();
                std::thread::sleep(std::time::Duration::from_millis(2));
            }
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("history.sqlite");
        let mut child = std::process::Command::new(std::env::current_exe().unwrap())
            .args(["--exact", "output::history::recorder::tests::a_run_killed_mid_way_leaves_a_sound_file_with_its_finished_evals", "--nocapture"])
            .env(CHILD, &path)
            .stdout(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let count = |history: &History| -> i64 {
            history
                .connection
                .query_row("SELECT count(*) FROM evals", [], |r| r.get(0))
                .unwrap_or(0)
        };
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
        loop {
            std::thread::sleep(std::time::Duration::from_millis(50));
            if path.exists()
                && let Ok(history) = History::open(&path)
                && count(&history) >= 50
            {
                break;
            }
            assert!(
                child.try_wait().unwrap().is_none(),
                "the child ended before it was killed"
            );
            assert!(
                std::time::Instant::now() < deadline,
                "the child wrote nothing"
            );
        }
        child.kill().unwrap(); // SIGKILL
        child.wait().unwrap();
        let history = History::open(&path).unwrap();
        let check: String = history
            .connection
            .query_row("PRAGMA integrity_check", [], |r| r.get(0))
            .unwrap();
        assert_eq!(check, "ok");
        let rows = count(&history);
        assert!(rows >= 50, "{rows}");
        let runs = history.runs(10, None).unwrap();
        assert_eq!(runs.len(), 1);
        assert_eq!(runs[0].finished, None, "a killed run is unfinished");
        assert_eq!(runs[0].evals as i64, rows);
    }
}
