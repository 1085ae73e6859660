//! The reporter that records a run in the history: the run's row when it starts (or at its
//! first eval), each eval's row as it finishes — committed at once: in WAL mode with
//! `synchronous = NORMAL` a commit is an append to the log without waiting for the disk (about
//! 20 µs; 10,000 evals add a fraction of a second), so a killed run keeps every eval that
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
        let first = manifests.iter().min_by(|a, b| a.run.cmp(&b.run))?;
        let history = open(dir)?;
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
        Some(Recorder {
            history: Some(history),
            run,
            shards,
            started: false,
            pending: None,
        })
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
