//! The SQLite file itself: opening it (WAL, busy timeout, the schema brought up to date by the
//! migrations in [`MIGRATIONS`], versioned with `PRAGMA user_version`) and the two upserts a
//! recorder makes, a run's row and an eval's row.

use std::path::{Path, PathBuf};
use std::time::Duration;

use rusqlite::{Connection, params};

/// The schema version this niceeval writes (`PRAGMA user_version`): the number of
/// the migrations in code.
pub const SCHEMA: u32 = MIGRATIONS.len() as u32;

/// Each migration brings the file from version `i` to `i + 1`; a file of version 0 (new, or
/// empty) gets them all. A released migration is never edited: a change is a new one.
const MIGRATIONS: &[&str] = &[
    // 1: runs and evals.
    "CREATE TABLE runs (
        run TEXT NOT NULL,
        target TEXT NOT NULL,
        started TEXT NOT NULL,
        finished TEXT,
        duration_ms REAL,
        commit_sha TEXT,
        config_hash TEXT,
        shard TEXT,
        filter TEXT,
        niceeval TEXT NOT NULL,
        merged_from TEXT,
        merged_into TEXT,
        interrupted INTEGER NOT NULL DEFAULT 0,
        PRIMARY KEY (run, target)
    );
    CREATE TABLE evals (
        run TEXT NOT NULL,
        target TEXT NOT NULL,
        eval TEXT NOT NULL,
        outcome TEXT NOT NULL,
        runs INTEGER NOT NULL,
        passed INTEGER NOT NULL,
        counted INTEGER NOT NULL,
        pass_rate REAL NOT NULL,
        score REAL,
        metrics TEXT,
        input_tokens INTEGER NOT NULL,
        output_tokens INTEGER NOT NULL,
        cost_usd REAL,
        duration_ms REAL NOT NULL,
        finished TEXT NOT NULL,
        PRIMARY KEY (run, target, eval),
        FOREIGN KEY (run, target) REFERENCES runs (run, target) ON DELETE CASCADE
    );
    CREATE INDEX evals_by_eval ON evals (eval, finished);
    CREATE INDEX runs_by_start ON runs (started);",
];

/// How long a writer waits for another process's transaction before giving up.
const BUSY_TIMEOUT: Duration = Duration::from_secs(30);

/// Why the history could not be opened, read or written.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum HistoryError {
    /// SQLite refused (a locked, corrupt or unreadable file, a full disk).
    #[error("history {}: {source}", path.display())]
    Sqlite {
        /// The store's file.
        path: PathBuf,
        /// What SQLite said.
        #[source]
        source: rusqlite::Error,
    },
    /// The file's schema is newer than this niceeval knows.
    #[error(
        "history {}: written by a newer niceeval (schema {found}; this one knows up to {SCHEMA})",
        path.display()
    )]
    Newer {
        /// The store's file.
        path: PathBuf,
        /// Its `user_version`.
        found: u32,
    },
    /// Its directory could not be created.
    #[error("history {}: {source}", path.display())]
    Io {
        /// The store's file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
}

/// An open history file.
#[derive(Debug)]
pub struct History {
    pub(super) connection: Connection,
    path: PathBuf,
}

/// A run's row as a recorder writes it (totals are counted from its evals' rows).
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct RunFacts {
    pub run: String,
    pub target: String,
    pub started: String,
    pub commit: Option<String>,
    pub config_hash: Option<String>,
    pub shard: Option<String>,
    pub filter: Option<String>,
    pub merged_from: Option<String>,
}

/// An eval's row.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct EvalFacts {
    pub eval: String,
    pub outcome: String,
    pub runs: u64,
    pub passed: u64,
    pub counted: u64,
    pub pass_rate: f64,
    pub score: Option<f64>,
    pub metrics: Option<String>,
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub cost_usd: Option<f64>,
    pub duration_ms: f64,
    pub finished: String,
}

impl History {
    /// Opens (creating it and its directory when missing) the history at `path`, brought up to
    /// the current schema.
    pub fn open(path: &Path) -> Result<History, HistoryError> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|source| HistoryError::Io {
                path: path.to_path_buf(),
                source,
            })?;
        }
        let sqlite = |source| HistoryError::Sqlite {
            path: path.to_path_buf(),
            source,
        };
        let connection = Connection::open(path).map_err(sqlite)?;
        connection.busy_timeout(BUSY_TIMEOUT).map_err(sqlite)?;
        // WAL: readers never block the writer, and a commit is an append to the log. With
        // `synchronous = NORMAL` a commit does not wait for the disk; a killed process loses
        // nothing committed (the log is in the OS's cache), a power cut may lose the last
        // commits but never corrupts the file.
        connection
            .pragma_update(None, "journal_mode", "WAL")
            .map_err(sqlite)?;
        connection
            .pragma_update(None, "synchronous", "NORMAL")
            .map_err(sqlite)?;
        connection
            .pragma_update(None, "foreign_keys", "ON")
            .map_err(sqlite)?;
        let mut history = History {
            connection,
            path: path.to_path_buf(),
        };
        history.migrate()?;
        Ok(history)
    }

    /// The file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    pub(super) fn sqlite(&self, source: rusqlite::Error) -> HistoryError {
        HistoryError::Sqlite {
            path: self.path.clone(),
            source,
        }
    }

    /// Applies the migrations the file lacks, in one write transaction (two processes opening
    /// a new file at once: the second waits, then finds it done).
    fn migrate(&mut self) -> Result<(), HistoryError> {
        let path = self.path.clone();
        let sqlite = |source| HistoryError::Sqlite {
            path: path.clone(),
            source,
        };
        let version = |c: &Connection| -> rusqlite::Result<u32> {
            c.query_row("PRAGMA user_version", [], |row| row.get(0))
        };
        if version(&self.connection).map_err(sqlite)? == SCHEMA {
            return Ok(());
        }
        let tx = self
            .connection
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
            .map_err(sqlite)?;
        let found = version(&tx).map_err(sqlite)?;
        if found > SCHEMA {
            return Err(HistoryError::Newer { path, found });
        }
        for migration in &MIGRATIONS[found as usize..] {
            tx.execute_batch(migration).map_err(sqlite)?;
        }
        tx.pragma_update(None, "user_version", SCHEMA)
            .map_err(sqlite)?;
        tx.commit().map_err(sqlite)
    }

    /// Adds a run's row, or updates what it knows (a later process of the same run, the
    /// run's end) keeping what an earlier writer set.
    pub(crate) fn upsert_run(&self, run: &RunFacts) -> Result<(), HistoryError> {
        self.connection
            .execute(
                "INSERT INTO runs (run, target, started, commit_sha, config_hash, shard, filter,
                                   niceeval, merged_from)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)
                 ON CONFLICT (run, target) DO UPDATE SET
                   started = min(started, excluded.started),
                   commit_sha = coalesce(commit_sha, excluded.commit_sha),
                   config_hash = coalesce(config_hash, excluded.config_hash),
                   shard = coalesce(shard, excluded.shard),
                   filter = coalesce(filter, excluded.filter),
                   merged_from = coalesce(excluded.merged_from, merged_from)",
                params![
                    run.run,
                    run.target,
                    run.started,
                    run.commit,
                    run.config_hash,
                    run.shard,
                    run.filter,
                    env!("CARGO_PKG_VERSION"),
                    run.merged_from,
                ],
            )
            .map(drop)
            .map_err(|e| self.sqlite(e))
    }

    /// Marks a run finished at `finished` (RFC 3339), `duration_ms` after its start.
    pub(crate) fn finish_run(
        &self,
        run: &str,
        target: &str,
        finished: &str,
        duration_ms: f64,
        interrupted: bool,
    ) -> Result<(), HistoryError> {
        self.connection
            .execute(
                "UPDATE runs SET finished = max(coalesce(finished, ''), ?3),
                   duration_ms = max(coalesce(duration_ms, 0), ?4),
                   interrupted = interrupted OR ?5
                 WHERE run = ?1 AND target = ?2",
                params![run, target, finished, duration_ms, interrupted],
            )
            .map(drop)
            .map_err(|e| self.sqlite(e))
    }

    /// Adds (or replaces: a rerun of the same run) an eval's row of a run whose row exists.
    pub(crate) fn upsert_eval(
        &self,
        run: &str,
        target: &str,
        eval: &EvalFacts,
    ) -> Result<(), HistoryError> {
        self.connection
            .prepare_cached(
                "INSERT OR REPLACE INTO evals (run, target, eval, outcome, runs, passed, counted,
                   pass_rate, score, metrics, input_tokens, output_tokens, cost_usd, duration_ms,
                   finished)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15)",
            )
            .and_then(|mut statement| {
                statement.execute(params![
                    run,
                    target,
                    eval.eval,
                    eval.outcome,
                    eval.runs as i64,
                    eval.passed as i64,
                    eval.counted as i64,
                    eval.pass_rate,
                    eval.score,
                    eval.metrics,
                    eval.input_tokens as i64,
                    eval.output_tokens as i64,
                    eval.cost_usd,
                    eval.duration_ms,
                    eval.finished,
                ])
            })
            .map(drop)
            .map_err(|e| self.sqlite(e))
    }

    /// Marks the runs `shards` of `target` as merged into `merged`: they leave the lists and
    /// trends, the merged run stands for them.
    pub(crate) fn merged_into(
        &self,
        shards: &[String],
        target: &str,
        merged: &str,
    ) -> Result<(), HistoryError> {
        for shard in shards {
            self.connection
                .execute(
                    "UPDATE runs SET merged_into = ?3 WHERE run = ?1 AND target = ?2",
                    params![shard, target, merged],
                )
                .map_err(|e| self.sqlite(e))?;
        }
        Ok(())
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;

    pub(crate) fn run(id: &str) -> RunFacts {
        RunFacts {
            run: id.into(),
            target: "evals".into(),
            started: format!("2026-01-01T00:00:{id:0>2}.000Z"),
            commit: Some(format!("c{id}")),
            ..RunFacts::default()
        }
    }

    pub(crate) fn eval(id: &str, passed: bool) -> EvalFacts {
        EvalFacts {
            eval: id.into(),
            outcome: if passed { "passed" } else { "failed" }.into(),
            runs: 1,
            passed: u64::from(passed),
            counted: 1,
            pass_rate: if passed { 1.0 } else { 0.0 },
            score: Some(if passed { 1.0 } else { 0.0 }),
            duration_ms: 10.0,
            finished: "2026-01-01T00:01:00.000Z".into(),
            ..EvalFacts::default()
        }
    }

    #[test]
    fn a_new_file_is_migrated_to_the_current_schema_and_reopens() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("deep/history.sqlite");
        let history = History::open(&path).unwrap();
        let version: u32 = history
            .connection
            .query_row("PRAGMA user_version", [], |r| r.get(0))
            .unwrap();
        assert_eq!(version, SCHEMA);
        drop(history);
        // An empty file (created by hand, or by a process killed before its first write).
        let empty = dir.path().join("empty.sqlite");
        std::fs::write(&empty, b"").unwrap();
        History::open(&empty).unwrap();
        History::open(&path).unwrap();
    }

    #[test]
    fn a_newer_schema_is_refused_naming_both_versions() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("h.sqlite");
        let history = History::open(&path).unwrap();
        history
            .connection
            .pragma_update(None, "user_version", SCHEMA + 1)
            .unwrap();
        drop(history);
        let error = History::open(&path).unwrap_err().to_string();
        assert!(error.contains("newer niceeval"), "{error}");
    }

    #[test]
    fn rows_round_trip_and_an_eval_rerun_in_the_same_run_replaces_its_row() {
        let dir = tempfile::tempdir().unwrap();
        let history = History::open(&dir.path().join("h.sqlite")).unwrap();
        history.upsert_run(&run("1")).unwrap();
        history
            .upsert_eval("1", "evals", &eval("a", false))
            .unwrap();
        history.upsert_eval("1", "evals", &eval("a", true)).unwrap();
        history
            .finish_run("1", "evals", "2026-01-01T00:02:00.000Z", 5.0, false)
            .unwrap();
        let runs = history.runs(10, None).unwrap();
        assert_eq!(runs.len(), 1);
        assert_eq!((runs[0].passed, runs[0].failed), (1, 0));
        assert_eq!(runs[0].commit.as_deref(), Some("c1"));
        assert_eq!(
            runs[0].finished.as_deref(),
            Some("2026-01-01T00:02:00.000Z")
        );
    }

    #[test]
    fn a_commit_per_eval_is_cheap() {
        // Measured on a busy 2-core machine, debug build: about 60 µs an eval, each its own
        // transaction.
        let dir = tempfile::tempdir().unwrap();
        let history = History::open(&dir.path().join("h.sqlite")).unwrap();
        history.upsert_run(&run("1")).unwrap();
        let start = std::time::Instant::now();
        for i in 0..2000 {
            history
                .upsert_eval("1", "evals", &eval(&format!("e{i}"), true))
                .unwrap();
        }
        let each = start.elapsed() / 2000;
        eprintln!("one eval's row, committed: {each:?}");
        assert!(each < std::time::Duration::from_millis(5), "{each:?}");
    }

    #[test]
    fn two_processes_writing_one_run_at_once_lose_no_row() {
        // nextest: one process per eval, all of one run. Threads with connections of their
        // own are as separate as processes to SQLite's locks.
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("h.sqlite");
        let writers: Vec<_> = (0..4)
            .map(|w| {
                let path = path.clone();
                std::thread::spawn(move || {
                    let history = History::open(&path).unwrap();
                    history.upsert_run(&run("7")).unwrap();
                    for i in 0..50 {
                        history
                            .upsert_eval("7", "evals", &eval(&format!("w{w}::e{i}"), i % 2 == 0))
                            .unwrap();
                    }
                })
            })
            .collect();
        for writer in writers {
            writer.join().unwrap();
        }
        let history = History::open(&path).unwrap();
        let runs = history.runs(10, None).unwrap();
        assert_eq!(runs.len(), 1);
        assert_eq!(runs[0].evals, 200);
        assert_eq!((runs[0].passed, runs[0].failed), (100, 100));
    }
}
