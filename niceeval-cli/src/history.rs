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

/// What `niceeval history` was asked.
#[derive(Debug, Clone, PartialEq, Default)]
pub(crate) struct HistoryOptions {
    /// An eval's id: its trend instead of the runs.
    pub eval: Option<String>,
    /// How many runs (default 30).
    pub last: usize,
    /// Only this test target's runs.
    pub target: Option<String>,
    /// The history file (default: the crate's).
    pub file: Option<PathBuf>,
    /// JSON instead of a table.
    pub json: bool,
}

const USAGE: &str =
    "usage: niceeval history [EVAL_ID] [--last N] [--target NAME] [--file PATH] [--json]";

/// Runs with the runs shown by default.
const DEFAULT_LAST: usize = 30;

/// Parses the arguments after `history` (by hand until the command line is clap's).
pub(crate) fn parse(args: &[String]) -> Result<Option<HistoryOptions>, String> {
    let mut options = HistoryOptions {
        last: DEFAULT_LAST,
        ..HistoryOptions::default()
    };
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        let (flag, inline) = match arg.split_once('=') {
            Some((f, v)) if f.starts_with("--") => (f, Some(v.to_string())),
            _ => (arg.as_str(), None),
        };
        let mut value = |name: &str| {
            inline
                .clone()
                .or_else(|| args.next().cloned())
                .ok_or(format!("{name} needs a value"))
        };
        match flag {
            "-h" | "--help" => return Ok(None),
            "--json" => options.json = true,
            "--last" | "-n" => {
                let v = value("--last")?;
                options.last = v.parse().ok().filter(|n| *n > 0).ok_or(format!(
                    "--last takes a number of runs (1 or more), not `{v}`"
                ))?;
            }
            "--target" => options.target = Some(value("--target")?),
            "--file" => options.file = Some(PathBuf::from(value("--file")?)),
            other if other.starts_with('-') => {
                return Err(format!("unknown option `{other}`"));
            }
            id => {
                if options.eval.replace(id.to_string()).is_some() {
                    return Err("one EVAL_ID at a time".into());
                }
            }
        }
    }
    Ok(Some(options))
}

/// `niceeval history ARGS…` (the wiring of the hand-parsed command line).
pub(crate) fn main(args: Vec<String>) -> ExitCode {
    match parse(&args) {
        Ok(Some(options)) => run(&options),
        Ok(None) => {
            println!(
                "{USAGE}\n\nThe runs the history recorded, newest first; with EVAL_ID, that eval's trend\nover its last runs, oldest first, with the changes beyond chance marked (*)."
            );
            ExitCode::SUCCESS
        }
        Err(message) => {
            eprintln!("error: {message}\n{USAGE}");
            ExitCode::from(2)
        }
    }
}

/// Shows what `options` ask.
pub(crate) fn run(options: &HistoryOptions) -> ExitCode {
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
        None => match history.runs(options.last, options.target.as_deref()) {
            Ok(runs) if options.json => json(&mut out, &runs),
            Ok(runs) => write_runs(&mut out, &runs),
            Err(e) => return failed(e),
        },
        Some(eval) => match history.trend(eval, options.last, &rule) {
            Ok(points) if points.is_empty() => {
                eprintln!("error: no run of `{eval}` in {}", path.display());
                return ExitCode::from(2);
            }
            Ok(points) if options.json => json(&mut out, &points),
            Ok(points) => write_trend(&mut out, eval, &points),
            Err(e) => return failed(e),
        },
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
    serde_json::to_writer_pretty(&mut *out, value).map_err(std::io::Error::other)?;
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

#[cfg(test)]
mod tests {
    use super::*;

    fn args(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn flags_parse_and_mistakes_are_named() {
        let options = parse(&args(&["evals::refund", "--last", "20", "--json"]))
            .unwrap()
            .unwrap();
        assert_eq!(options.eval.as_deref(), Some("evals::refund"));
        assert_eq!((options.last, options.json), (20, true));
        let options = parse(&args(&["--last=5", "--file", "h.sqlite"]))
            .unwrap()
            .unwrap();
        assert_eq!(options.last, 5);
        assert_eq!(options.file, Some(PathBuf::from("h.sqlite")));
        assert_eq!(parse(&args(&[])).unwrap().unwrap().last, DEFAULT_LAST);
        assert!(parse(&args(&["--help"])).unwrap().is_none());
        assert!(
            parse(&args(&["--last", "0"]))
                .unwrap_err()
                .contains("--last")
        );
        assert!(parse(&args(&["--bogus"])).unwrap_err().contains("--bogus"));
        assert!(
            parse(&args(&["a", "b"]))
                .unwrap_err()
                .contains("one EVAL_ID")
        );
    }
}
