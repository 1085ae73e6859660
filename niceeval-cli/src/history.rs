//! `niceeval history`: the runs the history recorded, newest first, and with an eval's id that
//! eval's trend, oldest first, its significant changes marked with their commits.
//!
//! ```text
//! niceeval history [--last N] [--target NAME] [--file PATH] [--json]            # the runs
//! niceeval history EVAL_ID [--last N] [--file PATH] [--json]                  # one eval's trend
//! ```
//!
//! The file is the one the crate found from the current directory records to
//! (`NICEEVAL_HISTORY`, `[history] path`, else `target/niceeval/history.sqlite`), or `--file`.
//! Exit codes: 0, or 2 for a wrong command line or a history that cannot be read.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use niceeval::__workspace::history::{
    EvalPoint, History, Mark, MarkRule, Place, RunRow, store_path,
};

/// `niceeval history`: the runs, or one eval's trend.
#[derive(Debug, Clone, clap::Args)]
#[command(
    after_help = "Without EVAL_ID: the runs the history recorded, newest first. With it: that eval's trend over its last runs, oldest first, the changes beyond chance marked (*) with their commits (the comparison's statistics: Fisher's exact test on pass rates at [compare] alpha, Welch's t-test and the metric's margin on scores).\n\nThe history is the crate's (NICEEVAL_HISTORY, [history] path in niceeval.toml, else target/niceeval/history.sqlite), or --file. Exits 0, or 2 when the history cannot be read."
)]
pub(crate) struct HistoryArgs {
    /// An eval's id: its trend instead of the runs.
    #[arg(value_name = "EVAL_ID")]
    pub eval: Option<String>,
    /// How many runs.
    #[arg(short = 'n', long, value_name = "N", default_value_t = 30, value_parser = clap::value_parser!(u32).range(1..))]
    pub last: u32,
    /// Only this test target's runs.
    #[arg(long, value_name = "NAME")]
    pub target: Option<String>,
    /// The history file to read (default: the crate's).
    #[arg(long, value_name = "PATH")]
    pub file: Option<PathBuf>,
    /// JSON instead of a table.
    #[arg(long)]
    pub json: bool,
}

/// Shows what `options` ask.
pub(crate) fn history(options: &HistoryArgs) -> ExitCode {
    let last = options.last as usize;
    let path = match &options.file {
        Some(file) => file.clone(),
        None => match store_path(Path::new(".")) {
            Place::At(path) => path,
            Place::Off => {
                eprintln!(
                    "error: the history is off here (NICEEVAL_HISTORY=off or [history] enabled = false); --file PATH reads one"
                );
                return ExitCode::from(2);
            }
        },
    };
    if !path.is_file() {
        eprintln!(
            "error: no history at {}: finished runs are recorded there (niceeval's feature `history`, on by default); --file PATH reads another",
            path.display()
        );
        return ExitCode::from(2);
    }
    let history = match History::open(&path) {
        Ok(history) => history,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    let rule = niceeval::__workspace::config::Config::discover(Path::new("."))
        .map(|config| MarkRule::of(&config.compare))
        .unwrap_or_default();
    let mut out = std::io::stdout().lock();
    let written = match &options.eval {
        None => match history.runs(last, options.target.as_deref()) {
            Ok(runs) if options.json => json(&mut out, &runs),
            Ok(runs) => write_runs(&mut out, &runs),
            Err(e) => return failed(e),
        },
        Some(name) => {
            let eval = match history.evals_named(name) {
                Ok(ids) if ids.len() == 1 => ids[0].clone(),
                Ok(ids) if ids.is_empty() => {
                    eprintln!("error: no run of `{name}` in {}", path.display());
                    return ExitCode::from(2);
                }
                Ok(ids) => {
                    eprintln!(
                        "error: `{name}` names {} evals in {}; give one of:\n  {}",
                        ids.len(),
                        path.display(),
                        ids.join("\n  ")
                    );
                    return ExitCode::from(2);
                }
                Err(e) => return failed(e),
            };
            let eval = eval.as_str();
            match history.trend(eval, last, &rule) {
                Ok(points) if points.is_empty() => {
                    eprintln!("error: no run of `{eval}` in {}", path.display());
                    return ExitCode::from(2);
                }
                Ok(points) if options.json => json(&mut out, &points),
                Ok(points) => write_trend(&mut out, eval, &points),
                Err(e) => return failed(e),
            }
        }
    };
    match written {
        Ok(()) => ExitCode::SUCCESS,
        // A closed pipe (`| head`) is not an error.
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
        Err(e) => failed(e),
    }
}

fn failed(e: impl std::fmt::Display) -> ExitCode {
    eprintln!("error: {e}");
    ExitCode::from(2)
}

fn json(out: &mut impl std::io::Write, value: &impl serde::Serialize) -> std::io::Result<()> {
    serde_json::to_writer_pretty(&mut *out, value).map_err(|e| match e.io_error_kind() {
        // Keeps a closed pipe a BrokenPipe, which is not an error.
        Some(kind) => std::io::Error::from(kind),
        None => std::io::Error::other(e),
    })?;
    writeln!(out)
}

/// `2026-12-06T15:40:01.123Z` → `2026-12-06 15:40:01`.
fn when(rfc3339: &str) -> String {
    rfc3339.get(..19).unwrap_or(rfc3339).replacen('T', " ", 1)
}

fn short(commit: Option<&str>) -> String {
    commit.map_or_else(|| "-".into(), |c| c.chars().take(7).collect())
}

fn cost(usd: Option<f64>) -> String {
    usd.map_or_else(|| "-".into(), |c| format!("${c:.4}"))
}

fn seconds(ms: Option<f64>) -> String {
    ms.map_or_else(|| "-".into(), |ms| format!("{:.1}s", ms / 1000.0))
}

fn table(out: &mut impl std::io::Write, rows: &[Vec<String>]) -> std::io::Result<()> {
    let columns = rows.iter().map(Vec::len).max().unwrap_or(0);
    let widths: Vec<usize> = (0..columns)
        .map(|c| {
            rows.iter()
                .filter_map(|r| r.get(c))
                .map(|cell| cell.chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    for row in rows {
        let line: Vec<String> = row
            .iter()
            .zip(&widths)
            .map(|(cell, width)| format!("{cell:<width$}"))
            .collect();
        writeln!(out, "{}", line.join("  ").trim_end())?;
    }
    Ok(())
}

fn write_runs(out: &mut impl std::io::Write, runs: &[RunRow]) -> std::io::Result<()> {
    if runs.is_empty() {
        return writeln!(out, "no runs recorded yet");
    }
    let mut rows = vec![
        [
            "started",
            "commit",
            "target",
            "passed",
            "failed",
            "skipped",
            "pass rate",
            "cost",
            "duration",
            "run",
        ]
        .map(String::from)
        .to_vec(),
    ];
    for run in runs {
        let mut kind = Vec::new();
        if run.finished.is_none() {
            kind.push("unfinished".to_string());
        }
        if run.interrupted {
            kind.push("interrupted".into());
        }
        if let Some(filter) = &run.filter {
            kind.push(format!("filter: {filter}"));
        }
        if let Some(shard) = &run.shard {
            kind.push(format!("shard {shard}"));
        }
        if !run.merged_from.is_empty() {
            kind.push(format!("merged from {} shards", run.merged_from.len()));
        }
        rows.push(vec![
            when(&run.started),
            short(run.commit.as_deref()),
            run.target.clone(),
            run.passed.to_string(),
            run.failed.to_string(),
            run.skipped.to_string(),
            run.pass_rate
                .map_or_else(|| "-".into(), |r| format!("{r:.2}")),
            cost(run.cost_usd),
            seconds(run.duration_ms),
            if kind.is_empty() {
                run.run.clone()
            } else {
                format!("{} ({})", run.run, kind.join(", "))
            },
        ]);
    }
    table(out, &rows)
}

fn describe(mark: &Mark) -> String {
    let mut parts = Vec::new();
    if let Some(shift) = mark.pass_rate {
        let verb = if shift.change() < 0.0 { "fell" } else { "rose" };
        parts.push(format!(
            "pass rate {verb} {:.2} → {:.2} (Fisher p = {:.4})",
            shift.before,
            shift.after,
            shift.p_value.unwrap_or(f64::NAN)
        ));
    }
    if let Some(shift) = mark.score {
        let verb = if shift.change() < 0.0 { "fell" } else { "rose" };
        let p = shift
            .p_value
            .map(|p| format!(" (Welch p = {p:.4})"))
            .unwrap_or_default();
        parts.push(format!(
            "score {verb} {:.2} → {:.2}{p}",
            shift.before, shift.after
        ));
    }
    parts.join(", ")
}

fn write_trend(
    out: &mut impl std::io::Write,
    eval: &str,
    points: &[EvalPoint],
) -> std::io::Result<()> {
    writeln!(
        out,
        "{eval}: last {} run(s), oldest first (* a change beyond chance)",
        points.len()
    )?;
    let mut rows = vec![
        [
            "", "#", "started", "commit", "outcome", "passed", "score", "tokens", "cost",
            "duration",
        ]
        .map(String::from)
        .to_vec(),
    ];
    for (i, point) in points.iter().enumerate() {
        rows.push(vec![
            if point.significant.is_some() { "*" } else { "" }.into(),
            (i + 1).to_string(),
            when(&point.started),
            short(point.commit.as_deref()),
            point.outcome.clone(),
            format!("{}/{}", point.passed, point.counted),
            point
                .score
                .map_or_else(|| "-".into(), |s| format!("{s:.2}")),
            (point.input_tokens + point.output_tokens).to_string(),
            cost(point.cost_usd),
            seconds(Some(point.duration_ms)),
        ]);
    }
    table(out, &rows)?;
    let changes: Vec<(usize, &EvalPoint, &Mark)> = points
        .iter()
        .enumerate()
        .filter_map(|(i, p)| p.significant.as_ref().map(|m| (i + 1, p, m)))
        .collect();
    if changes.is_empty() {
        return writeln!(out, "no change beyond chance");
    }
    writeln!(out, "changes beyond chance:")?;
    for (n, point, mark) in changes {
        writeln!(
            out,
            "  #{n} at commit {} ({}, run {}): {}",
            short(point.commit.as_deref()),
            when(&point.started),
            point.run,
            describe(mark)
        )?;
    }
    Ok(())
}
