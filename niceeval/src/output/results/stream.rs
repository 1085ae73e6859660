//! Merging results files in two streamed passes, for the report mode and `niceeval merge`:
//! the first reads every record once and keeps, per record, where it is and the counters
//! merging needs (its eval, its run, its outcome, how many of its runs counted and passed);
//! the second reads each eval's records again, by position, in the order of eval ids, merges
//! them ([`super::merge`]'s rules) and hands the one merged report to the reporters before the
//! next eval is read. Memory holds those counters and the suite's compact summaries, never
//! the records.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::PathBuf;

use serde::Deserialize;

use super::ReadError;
use super::manifest::{Findings, Manifest};
use super::merge::{merge_group, pick};
use super::read::{Records, files, read_at};
use crate::base::outcome::Outcome;
use crate::output::reporter::Reporter;
use crate::run::report::{EvalSummary, RunCounts, RunInfo, SuiteReport, SuiteStart};

/// What the first pass reads of a record: the fields merging decides by. Serde skips the
/// rest (assertions, events) without building it.
#[derive(Deserialize)]
struct Head {
    id: String,
    outcome: Outcome,
    min_pass_rate: f64,
    runs: Vec<RunHead>,
    #[serde(default)]
    run: Option<RunInfo>,
    /// When the record was written (records since the run's wall time is shown have it).
    #[serde(default)]
    finished: Option<String>,
}

#[derive(Deserialize)]
struct RunHead {
    outcome: Outcome,
}

/// One record: where it is, and what merging decides by.
#[derive(Debug, Clone, Copy)]
struct Seen {
    /// Index into [`Index::files`].
    file: u32,
    /// 1-based line, for errors.
    line: u32,
    /// First byte and length.
    span: (u64, usize),
    /// Index into [`Index::runs`]; `None` for a record of a version before runs.
    run: Option<u32>,
    /// The record's own outcome.
    outcome: Outcome,
    /// Its runs, counted.
    runs: RunCounts,
    min_pass_rate: f64,
    /// When it was written, in milliseconds since the Unix epoch.
    finished: Option<u64>,
}

/// Every record of some results files, by eval id, as positions and counters (the first
/// pass).
pub(crate) struct Index {
    files: Vec<(PathBuf, std::fs::File)>,
    /// The runs the records name, each once.
    runs: Vec<RunInfo>,
    /// Each eval's records, in file order.
    evals: BTreeMap<String, Vec<Seen>>,
}

impl Index {
    /// Reads the results files `paths` name (files, and directories' `*.jsonl` files, as
    /// [`super::read_reports`] does, with the same errors and warnings). The files stay open
    /// for the second pass: a file compacted meanwhile (renamed over) is still read as it was.
    pub(crate) fn read(paths: &[PathBuf]) -> Result<Index, ReadError> {
        let mut index = Index {
            files: Vec::new(),
            runs: Vec::new(),
            evals: BTreeMap::new(),
        };
        let mut known: HashMap<RunKey, u32> = HashMap::new();
        for path in files(paths)? {
            let file = u32::try_from(index.files.len()).unwrap_or(u32::MAX);
            let mut records = Records::open(&path)?;
            while let Some((line, head)) = records.next_record::<Head>()? {
                let run = head.run.map(|run| {
                    let key = (run.id.clone(), run.started.clone(), run.target.clone());
                    *known.entry(key).or_insert_with(|| {
                        index.runs.push(run);
                        u32::try_from(index.runs.len() - 1).unwrap_or(u32::MAX)
                    })
                });
                let mut runs = RunCounts::default();
                for r in &head.runs {
                    runs.add(r.outcome);
                }
                let seen = Seen {
                    file,
                    line: u32::try_from(line).unwrap_or(u32::MAX),
                    span: records.span(),
                    run,
                    outcome: head.outcome,
                    runs,
                    min_pass_rate: head.min_pass_rate,
                    finished: head.finished.as_deref().and_then(epoch_ms),
                };
                match index.evals.get_mut(head.id.as_str()) {
                    Some(seen_before) => seen_before.push(seen),
                    None => {
                        index.evals.insert(head.id, vec![seen]);
                    }
                }
            }
            index.files.push((path, records.into_file()));
        }
        Ok(index)
    }

    /// An index of nothing.
    pub(crate) fn empty() -> Index {
        Index {
            files: Vec::new(),
            runs: Vec::new(),
            evals: BTreeMap::new(),
        }
    }

    /// Whether no record was read.
    pub(crate) fn is_empty(&self) -> bool {
        self.evals.is_empty()
    }

    /// `--merge`: keeps the records of the runs the `manifests` name, and checks them against
    /// the manifests ([`super::manifest::check`]): what is missing, duplicated or different.
    pub(crate) fn check_shards(&mut self, manifests: &[(PathBuf, Manifest)]) -> Findings {
        let named: BTreeSet<&str> = manifests.iter().map(|(_, m)| m.run.as_str()).collect();
        let keep: Vec<bool> = self
            .runs
            .iter()
            .map(|r| named.contains(r.id.as_str()))
            .collect();
        self.evals.retain(|_, seen| {
            seen.retain(|s| s.run.is_some_and(|r| keep[r as usize]));
            !seen.is_empty()
        });
        let mut duplicated = Vec::new();
        for (id, seen) in &self.evals {
            let runs: BTreeSet<&str> = seen
                .iter()
                .filter_map(|s| s.run.map(|r| self.runs[r as usize].id.as_str()))
                .collect();
            if runs.len() > 1 {
                duplicated.push((id.clone(), runs.into_iter().map(str::to_string).collect()));
            }
        }
        super::manifest::check(manifests, |id| self.evals.contains_key(id), duplicated)
    }

    /// Keeps the records of test target `target` (and those of a version before records named
    /// their run, which cannot tell); returns how many evals of other targets were left out.
    pub(crate) fn keep_target(&mut self, target: &str) -> usize {
        let before = self.evals.len();
        let runs = &self.runs;
        self.evals.retain(|_, seen| {
            seen.retain(|s| s.run.is_none_or(|r| runs[r as usize].target == target));
            !seen.is_empty()
        });
        before - self.evals.len()
    }

    /// How many evals were reported.
    pub(crate) fn evals(&self) -> usize {
        self.evals.len()
    }

    /// The view the report shows: each eval's latest run ([`super::latest`]), or with
    /// `combine` every record ([`super::merge`]); for each eval, the record the merged report
    /// will show is chosen here, from the counters.
    pub(crate) fn view(mut self, combine: bool) -> Merged {
        if !combine {
            self.keep_latest();
        }
        let mut picks = Vec::with_capacity(self.evals.len());
        for seen in self.evals.values() {
            let pick = match seen.as_slice() {
                [_] => 0,
                _ => {
                    let mut runs = RunCounts::default();
                    for s in seen {
                        runs.extend(&s.runs);
                    }
                    let min_pass_rate = seen.last().map_or(1.0, |s| s.min_pass_rate);
                    let (outcome, _) = runs.fold(min_pass_rate);
                    let outcomes: Vec<Outcome> = seen.iter().map(|s| s.outcome).collect();
                    pick(&outcomes, outcome)
                }
            };
            picks.push(seen[pick].run);
        }
        Merged { index: self, picks }
    }

    /// Keeps, for each eval, the records of the latest run that reported it
    /// ([`super::latest_records`]'s order of runs).
    fn keep_latest(&mut self) {
        let order = Order::of(
            &self.runs,
            self.evals.values().flatten().filter_map(|s| s.run),
        );
        for seen in self.evals.values_mut() {
            let newest = seen.iter().map(|s| order.key(s.run)).max().flatten();
            seen.retain(|s| order.key(s.run) == newest);
        }
    }
}

/// A run as the index tells runs apart: id, start, target.
type RunKey = (String, String, String);

/// The order of runs (as [`super::latest_records`] orders them): a run is as late as the
/// latest start among the records that name it, ties broken by id; no run is older than any.
struct Order<'a> {
    runs: &'a [RunInfo],
    latest: HashMap<&'a str, &'a str>,
}

impl<'a> Order<'a> {
    /// The order of the runs `named` (indexes into `runs`, once per record).
    fn of(runs: &'a [RunInfo], named: impl Iterator<Item = u32>) -> Self {
        let mut latest: HashMap<&str, &str> = HashMap::new();
        for r in named {
            let run = &runs[r as usize];
            let started = latest
                .entry(run.id.as_str())
                .or_insert(run.started.as_str());
            *started = (*started).max(run.started.as_str());
        }
        Order { runs, latest }
    }

    fn key(&self, run: Option<u32>) -> Option<(&'a str, &'a str)> {
        run.map(|r| {
            let run = &self.runs[r as usize];
            let started = self
                .latest
                .get(run.id.as_str())
                .copied()
                .unwrap_or(run.started.as_str());
            (started, run.id.as_str())
        })
    }
}

/// The records each eval's merged report is made of, and the run it will show (the second
/// pass reads them).
pub(crate) struct Merged {
    index: Index,
    /// Per eval, in id order: the run of the record the merged report shows.
    picks: Vec<Option<u32>>,
}

impl Merged {
    /// The test targets of the merged reports.
    pub(crate) fn targets(&self) -> BTreeSet<String> {
        self.picks
            .iter()
            .flatten()
            .map(|r| self.index.runs[*r as usize].target.clone())
            .collect()
    }

    /// The evals whose merged report comes from an earlier run than their target's latest
    /// ([`super::from_earlier_runs`]), each with that run's start, in id order.
    pub(crate) fn earlier_runs(&self) -> Vec<(&str, &str)> {
        let runs = &self.index.runs;
        let order = Order::of(runs, self.picks.iter().flatten().copied());
        let mut newest: HashMap<&str, Option<(&str, &str)>> = HashMap::new();
        for r in self.picks.iter().flatten() {
            let key = order.key(Some(*r));
            let entry = newest
                .entry(runs[*r as usize].target.as_str())
                .or_insert(key);
            if key > *entry {
                *entry = key;
            }
        }
        self.index
            .evals
            .keys()
            .zip(&self.picks)
            .filter_map(|(id, r)| {
                let run = &runs[(*r)? as usize];
                (newest.get(run.target.as_str()) != Some(&order.key(*r)))
                    .then_some((id.as_str(), run.started.as_str()))
            })
            .collect()
    }

    /// The wall time of the runs the merged reports come from, in milliseconds: for each run,
    /// from its start (the earliest of its processes') to its last record of those shown, the
    /// runs' times added. `None` when a shown record does not say when it was written (one
    /// of a version before that): the report then adds the evals' durations, as it did.
    fn wall_time_ms(&self) -> Option<f64> {
        // Per run id: the earliest start and the latest record shown.
        let mut spans: HashMap<&str, (u64, u64)> = HashMap::new();
        for (seen, pick) in self.index.evals.values().zip(&self.picks) {
            let Some(pick) = *pick else { continue };
            let run = &self.index.runs[pick as usize];
            let started = epoch_ms(&run.started)?;
            for s in seen.iter().filter(|s| s.run == Some(pick)) {
                let finished = s.finished?;
                let span = spans.entry(run.id.as_str()).or_insert((started, finished));
                span.0 = span.0.min(started);
                span.1 = span.1.max(finished);
            }
        }
        (!spans.is_empty()).then(|| {
            spans
                .values()
                .map(|(from, to)| to.saturating_sub(*from) as f64)
                .sum()
        })
    }

    /// Reads each eval's records again, merges them and replays the merged report through
    /// `reporters` as if it had just run, in id order; returns the suite report, which
    /// `finish` completes (e.g. with the comparison with a baseline) before the reporters get
    /// it. `keep_baseline`: keep what a baseline needs in each summary (`--baseline`,
    /// `--save-baseline`); otherwise dropped, as the suite runner does.
    pub(crate) fn replay(
        self,
        reporters: &mut [Box<dyn Reporter>],
        keep_baseline: bool,
        finish: impl FnOnce(&mut SuiteReport),
    ) -> Result<SuiteReport, ReadError> {
        let wall = self.wall_time_ms();
        let Merged { index, .. } = self;
        let Index {
            mut files, evals, ..
        } = index;
        let start = SuiteStart {
            evals: evals.keys().cloned().collect(),
            concurrency: 1,
        };
        for reporter in reporters.iter_mut() {
            let _ = reporter.on_run_start(&start);
        }
        drop(start);
        let mut summaries = Vec::with_capacity(evals.len());
        let mut duration = 0.0;
        let mut buf = Vec::new();
        for (_, seen) in evals {
            let mut group = Vec::with_capacity(seen.len());
            for s in &seen {
                let (path, file) = &mut files[s.file as usize];
                group.push(read_at(file, path, s.line as usize, s.span, &mut buf)?);
            }
            let Some(report) = merge_group(group) else {
                continue;
            };
            for reporter in reporters.iter_mut() {
                let _ = reporter.on_eval_complete(&report);
            }
            let mut summary = EvalSummary::from(&report);
            if !keep_baseline {
                summary.baseline = None;
            }
            summaries.push(summary);
            duration += report.duration_ms;
        }
        let mut suite = SuiteReport::new(summaries, 0, false, wall.unwrap_or(duration));
        finish(&mut suite);
        for reporter in reporters.iter_mut() {
            let _ = reporter.on_run_complete(&suite);
        }
        Ok(suite)
    }
}

/// An RFC 3339 time in milliseconds since the Unix epoch.
fn epoch_ms(time: &str) -> Option<u64> {
    let at = humantime::parse_rfc3339_weak(time).ok()?;
    let since = at.duration_since(std::time::UNIX_EPOCH).ok()?;
    u64::try_from(since.as_millis()).ok()
}
