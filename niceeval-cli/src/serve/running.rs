//! What is running now, as the suite runners writing the results say: the
//! `<stem>.running.json` each writes beside its results file while it runs (niceeval's
//! `ResultsFile`: the evals running at its last progress tick, about once a second, and since
//! when; how many evals the run will run and how many finished), read when the page asks for
//! the status. A file not rewritten for [`STALE`] was left by a run that was killed: its evals
//! are not shown as running.

use std::path::Path;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::Deserialize;

/// How old a running file may be before its run is taken for dead (the runner rewrites it
/// every second while evals run).
pub(super) const STALE: Duration = Duration::from_secs(5);

/// The part of a running file the page shows.
#[derive(Deserialize)]
struct File {
    #[serde(default)]
    updated_ms: u64,
    #[serde(default)]
    total: usize,
    #[serde(default)]
    finished: usize,
    #[serde(default)]
    running: Vec<Eval>,
}

#[derive(Deserialize)]
struct Eval {
    id: String,
    #[serde(default)]
    since_ms: u64,
}

/// The runs in progress over the results files, together.
#[derive(Debug, Default, PartialEq)]
pub(super) struct Live {
    /// Evals the runs will run, and how many of them finished.
    pub total: usize,
    pub finished: usize,
    /// The evals running, each with how long it has run (milliseconds), longest first.
    pub running: Vec<(String, u64)>,
    /// How many runs are in progress.
    pub runs: usize,
}

/// What the running files beside `results` (results files) say now.
pub(super) fn read<'a>(results: impl Iterator<Item = &'a Path>) -> Live {
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64);
    let mut live = Live::default();
    for path in results {
        let Ok(bytes) = std::fs::read(path.with_extension("running.json")) else {
            continue;
        };
        let Ok(file) = serde_json::from_slice::<File>(&bytes) else {
            continue;
        };
        if now.saturating_sub(file.updated_ms) > STALE.as_millis() as u64 {
            continue;
        }
        live.runs += 1;
        live.total += file.total;
        live.finished += file.finished;
        live.running.extend(
            file.running
                .into_iter()
                .map(|e| (e.id, now.saturating_sub(e.since_ms))),
        );
    }
    live.running
        .sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    live
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fresh_running_file_counts_and_a_stale_one_does_not() {
        let dir = tempfile::tempdir().expect("a directory");
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .expect("after 1970")
            .as_millis() as u64;
        let fresh = dir.path().join("a.jsonl");
        std::fs::write(
            dir.path().join("a.running.json"),
            serde_json::json!({"schema": 1, "updated_ms": now, "total": 12, "finished": 3,
                "running": [{"id": "evals::slow", "since_ms": now - 1500}, {"id": "evals::b", "since_ms": now - 10}]})
            .to_string(),
        )
        .expect("written");
        let stale = dir.path().join("b.jsonl");
        std::fs::write(
            dir.path().join("b.running.json"),
            serde_json::json!({"updated_ms": now - 60_000, "total": 5, "finished": 0,
                "running": [{"id": "evals::killed", "since_ms": now - 61_000}]})
            .to_string(),
        )
        .expect("written");
        let live = read([fresh.as_path(), stale.as_path()].into_iter());
        assert_eq!((live.runs, live.total, live.finished), (1, 12, 3));
        assert_eq!(live.running.len(), 2);
        assert_eq!(live.running[0].0, "evals::slow");
        assert!((1500..3000).contains(&live.running[0].1), "{live:?}");
    }
}
