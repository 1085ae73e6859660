//! `--baseline`, `--save-baseline` and `--rerun-failed`: loading the baseline before anything
//! runs (a bad file is a usage error, not a surprise after the run), putting the comparison
//! into the suite report before the reporters see it, saving the new baseline, and choosing
//! the evals that failed in the last run.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use super::Args;
use crate::base::outcome::Outcome;
use crate::config::CompareConfig;
use crate::run::compare::{Baseline, Comparison};
use crate::run::report::SuiteReport;

/// Why the comparison flags cannot be honoured; each is a usage error, said before anything
/// runs.
#[derive(Debug, thiserror::Error)]
pub(super) enum CompareError {
    /// `niceeval.toml` (its `[compare]` table) is invalid.
    #[error("niceeval.toml: {0}")]
    Config(#[source] crate::config::ConfigError),
    /// The baseline cannot be read, or is one of another suite.
    #[error(transparent)]
    Baseline(#[from] crate::run::compare::baseline::BaselineError),
}

/// What the comparison flags need, prepared before anything runs.
pub(super) struct Compare {
    baseline: Option<(PathBuf, Baseline)>,
    save: Option<PathBuf>,
    config: CompareConfig,
}

impl Compare {
    /// Loads the `--baseline` file, if any. `config_dir` is where `niceeval.toml` is looked
    /// for (its `[compare]` table); an invalid file is an error here only when a flag needs it.
    pub(super) fn prepare(args: &Args, config_dir: &Path) -> Result<Compare, CompareError> {
        if args.baseline.is_none() && args.save_baseline.is_none() {
            return Ok(Compare {
                baseline: None,
                save: None,
                config: CompareConfig::default(),
            });
        }
        let config = crate::config::Config::discover(config_dir)
            .map_err(CompareError::Config)?
            .compare;
        let baseline = match &args.baseline {
            Some(path) => Some((path.clone(), Baseline::load(path)?)),
            None => None,
        };
        Ok(Compare {
            baseline,
            save: args.save_baseline.clone(),
            config,
        })
    }

    /// Checks, before anything is compared, that the baseline is one of the suite whose test
    /// `targets` run (or whose results were read): a baseline of another suite would call
    /// every eval new and pass; and that a policy failing on `cost-rise` has costs.
    pub(super) fn check(&self, targets: &BTreeSet<String>) -> Result<(), CompareError> {
        let Some((path, baseline)) = &self.baseline else {
            return Ok(());
        };
        baseline
            .check(&path.display().to_string(), targets, &self.config)
            .map_err(CompareError::Baseline)
    }

    /// Puts the comparison with the baseline into `suite`. `defined` (the suite binary's evals)
    /// and `target` (its test target) keep a filtered run from calling what it did not run
    /// removed.
    pub(super) fn finish(
        &self,
        suite: &mut SuiteReport,
        defined: Option<&BTreeSet<String>>,
        target: Option<&str>,
    ) {
        let Some((path, baseline)) = &self.baseline else {
            return;
        };
        let mut current = suite.baseline_evals();
        if let Some(target) = target {
            for e in &mut current {
                e.target.get_or_insert_with(|| target.to_string());
            }
        }
        let mut comparison =
            Comparison::with_known(baseline, &current, &self.config, defined, target)
                .from_file(path.display());
        let gates: std::collections::HashMap<&str, &[String]> = suite
            .evals
            .iter()
            .filter(|e| !e.failed_gates.is_empty())
            .map(|e| (e.id.as_str(), e.failed_gates.as_slice()))
            .collect();
        comparison.name_failed_gates(|id| gates.get(id).copied());
        suite.comparison = Some(comparison);
    }

    /// Writes `--save-baseline`, saying so on stderr; an error is printed and returned. Takes
    /// what each summary keeps for a baseline out of `suite` (moved into the file, never
    /// copied: a large run's baseline is as large as the run).
    pub(super) fn save(&self, suite: &mut SuiteReport, target: Option<&str>) -> Result<(), ()> {
        let Some(path) = &self.save else {
            return Ok(());
        };
        if suite.interrupted {
            eprintln!(
                "niceeval: the run was {}; the baseline {} was not saved",
                suite.interruption(),
                path.display()
            );
            return Err(());
        }
        let mut evals: Vec<_> = suite
            .evals
            .iter_mut()
            .filter_map(|e| e.baseline.take().map(|b| *b))
            .collect();
        if let Some(target) = target {
            for e in &mut evals {
                e.target.get_or_insert_with(|| target.to_string());
            }
        }
        let baseline = Baseline::new(
            evals,
            self.config.includes("cost"),
            self.config.includes("duration"),
        );
        match baseline.save(path) {
            Ok(()) => {
                eprintln!(
                    "niceeval: saved the baseline of {} eval(s) to {}",
                    baseline.evals.len(),
                    path.display()
                );
                Ok(())
            }
            Err(e) => {
                eprintln!("error: {e}");
                Err(())
            }
        }
    }
}

/// What `--rerun-failed` found in the results directory.
pub(super) enum LastRun {
    /// No record of this target.
    None,
    /// The ids that failed in the last run, and when that run started.
    Failed(BTreeSet<String>, String),
}

/// The evals of `target` whose latest record in `dir` failed.
pub(super) fn last_failures(
    dir: &Path,
    target: &str,
) -> Result<LastRun, crate::output::results::ReadError> {
    if !dir.exists() {
        return Ok(LastRun::None);
    }
    let reports = crate::output::results::read_reports(&[dir.to_path_buf()])?;
    let mine: Vec<_> = reports
        .into_iter()
        .filter(|r| r.run.as_ref().is_some_and(|run| run.target == target))
        .collect();
    if mine.is_empty() {
        return Ok(LastRun::None);
    }
    let latest = crate::output::results::latest(mine);
    let started = latest
        .iter()
        .filter_map(|r| r.run.as_ref().map(|run| run.started.clone()))
        .max()
        .unwrap_or_default();
    let failed = latest
        .into_iter()
        .filter(|r| r.outcome == Outcome::Failed)
        .map(|r| r.id)
        .collect();
    Ok(LastRun::Failed(failed, started))
}
