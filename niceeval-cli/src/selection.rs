//! promptfoo's test filters on `niceeval eval` (`--filter-first-n`, `--filter-pattern`,
//! `--filter-range`, `--filter-prompts`, `--filter-providers`, `--filter-failing`,
//! `--filter-failing-only`, `--filter-errors-only`): the suite files' cases are read (not run),
//! the ones every filter keeps are chosen, and the runner is handed their exact names.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use niceeval::__workspace::harness::Args;
use regex::Regex;
use serde_json::Value;

use crate::cli::EvalArgs;

/// A filter that cannot be applied.
#[derive(Debug, thiserror::Error)]
pub enum SelectionError {
    /// Not a regular expression.
    #[error("{flag} {pattern:?} is not a regular expression: {source}")]
    Pattern {
        /// The flag.
        flag: &'static str,
        /// What was given.
        pattern: String,
        /// Why.
        source: Box<regex::Error>,
    },
    /// `--filter-range` not as START:END.
    #[error("--filter-range takes START:END (zero-based, END excluded; 0:10, 10:, :10), got {0:?}")]
    Range(String),
    /// The failures file could not be read.
    #[error("{flag} {path}: {message}")]
    Failures {
        /// The flag.
        flag: &'static str,
        /// The file.
        path: PathBuf,
        /// Why.
        message: String,
    },
    /// Nothing is left.
    #[error("no case of the suite file(s) is left by {0}; run with --list to see the cases")]
    Empty(String),
}

/// Which failures `--filter-failing*` keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// Failed assertions and errors.
    Failing,
    /// Failed assertions only.
    FailingOnly,
    /// Errors only.
    ErrorsOnly,
}

/// A failure read from an output or results file: the niceeval id, or where the case sits.
#[derive(Debug, Default)]
struct Failures {
    ids: HashSet<String>,
    /// (zero-based test index, 1-based prompt position, provider label), from promptfoo's
    /// own files.
    cells: HashSet<(usize, usize, String)>,
}

/// promptfoo's test filters, as given.
#[derive(Debug, Default)]
pub struct TestFilters {
    first_n: Option<usize>,
    pattern: Option<Regex>,
    range: Option<(usize, Option<usize>)>,
    prompts: Option<Regex>,
    providers: Option<Regex>,
    failures: Option<Failures>,
    /// The flags given, for the message when nothing is left.
    given: Vec<&'static str>,
}

fn regex(flag: &'static str, pattern: &Option<String>) -> Result<Option<Regex>, SelectionError> {
    pattern
        .as_deref()
        .map(|p| {
            Regex::new(p).map_err(|source| SelectionError::Pattern {
                flag,
                pattern: p.to_string(),
                source: Box::new(source),
            })
        })
        .transpose()
}

fn range(text: &str) -> Result<(usize, Option<usize>), SelectionError> {
    let bad = || SelectionError::Range(text.to_string());
    let (start, end) = text.split_once(':').ok_or_else(bad)?;
    let start = match start.trim() {
        "" => 0,
        s => s.parse().map_err(|_| bad())?,
    };
    let end = match end.trim() {
        "" => None,
        e => Some(e.parse().map_err(|_| bad())?),
    };
    Ok((start, end))
}

impl TestFilters {
    /// The filters of `args`; `None` when none was given.
    pub fn of(args: &EvalArgs) -> Result<Option<TestFilters>, SelectionError> {
        let mut f = TestFilters {
            first_n: args.filter_first_n,
            pattern: regex("--filter-pattern", &args.filter_pattern)?,
            range: args.filter_range.as_deref().map(range).transpose()?,
            prompts: regex("--filter-prompts", &args.filter_prompts)?,
            providers: regex("--filter-providers", &args.filter_providers)?,
            ..TestFilters::default()
        };
        for (flag, path, kind) in [
            ("--filter-failing", &args.filter_failing, Kind::Failing),
            (
                "--filter-failing-only",
                &args.filter_failing_only,
                Kind::FailingOnly,
            ),
            (
                "--filter-errors-only",
                &args.filter_errors_only,
                Kind::ErrorsOnly,
            ),
        ] {
            if let Some(path) = path {
                let read = read_failures(flag, path, kind)?;
                let all = f.failures.get_or_insert_with(Failures::default);
                all.ids.extend(read.ids);
                all.cells.extend(read.cells);
                f.given.push(flag);
            }
        }
        for (flag, on) in [
            ("--filter-first-n", f.first_n.is_some()),
            ("--filter-pattern", f.pattern.is_some()),
            ("--filter-range", f.range.is_some()),
            ("--filter-prompts", f.prompts.is_some()),
            ("--filter-providers", f.providers.is_some()),
        ] {
            if on {
                f.given.push(flag);
            }
        }
        Ok((!f.given.is_empty()).then_some(f))
    }

    /// Whether the case `id` at `cell` is kept.
    fn keeps(&self, id: &str, cell: &niceeval::reporter::MatrixCell) -> bool {
        let index = cell.test.saturating_sub(1);
        self.first_n.is_none_or(|n| index < n)
            && self
                .pattern
                .as_ref()
                .is_none_or(|p| p.is_match(&cell.description))
            && self
                .range
                .is_none_or(|(start, end)| index >= start && end.is_none_or(|e| index < e))
            && self
                .prompts
                .as_ref()
                .is_none_or(|p| p.is_match(&cell.prompt_label))
            && self
                .providers
                .as_ref()
                .is_none_or(|p| p.is_match(&cell.provider_label))
            && self.failures.as_ref().is_none_or(|f| {
                f.ids.contains(id)
                    || f.cells
                        .contains(&(index, cell.prompt, cell.provider_label.clone()))
            })
    }

    /// Chooses the cases of `files` these filters (and `args`' own filters, `--skip` and
    /// `--tag`) keep, and hands the runner their exact names. A file that cannot be read is
    /// left to the run, which names the problem.
    pub fn apply(&self, files: &[PathBuf], args: &mut Args) -> Result<(), SelectionError> {
        let mut names = Vec::new();
        for file in files {
            let Ok(cases) = niceeval_suites::cells(file, "suite", Path::new(".")) else {
                return Ok(());
            };
            for case in cases {
                // The runner's filters see names without the crate (`suite::`).
                let name = case
                    .id
                    .strip_prefix("suite::")
                    .unwrap_or(&case.id)
                    .to_string();
                if args.selects(&name, &[]) && self.keeps(&case.id, &case.cell) {
                    names.push(name);
                }
            }
        }
        if names.is_empty() {
            return Err(SelectionError::Empty(self.given.join(", ")));
        }
        args.filters = names;
        args.exact = true;
        args.skip.clear();
        Ok(())
    }
}

/// The failures of an output file (`.json`, promptfoo's or niceeval's `-o`) or a results file
/// (`.jsonl`).
fn read_failures(flag: &'static str, path: &Path, kind: Kind) -> Result<Failures, SelectionError> {
    let fail = |message: String| SelectionError::Failures {
        flag,
        path: path.to_path_buf(),
        message,
    };
    let text = std::fs::read_to_string(path).map_err(|e| {
        fail(format!(
            "cannot read it ({e}); give an output file of an earlier run (-o results.json) or a results file (.jsonl). promptfoo's eval ids have no niceeval equivalent: --rerun-failed reruns the last run's failures"
        ))
    })?;
    let mut failures = Failures::default();
    let wanted = |failed: bool, errored: bool| match kind {
        Kind::Failing => failed || errored,
        Kind::FailingOnly => failed && !errored,
        Kind::ErrorsOnly => errored,
    };
    if path.extension().is_some_and(|e| e == "jsonl") {
        for (n, line) in text
            .lines()
            .enumerate()
            .filter(|(_, l)| !l.trim().is_empty())
        {
            let record: Value = serde_json::from_str(line)
                .map_err(|e| fail(format!("line {}: not JSON: {e}", n + 1)))?;
            let (Some(id), Some(outcome)) = (
                record.get("id").and_then(Value::as_str),
                record.get("outcome").and_then(Value::as_str),
            ) else {
                continue;
            };
            let errored = record.get("error").is_some_and(|e| !e.is_null());
            if wanted(outcome == "failed" && !errored, errored) {
                failures.ids.insert(id.to_string());
            }
        }
        return Ok(failures);
    }
    let doc: Value = serde_json::from_str(&text).map_err(|e| fail(format!("not JSON: {e}")))?;
    let summary = doc.get("results").unwrap_or(&doc);
    let results = summary
        .get("results")
        .and_then(Value::as_array)
        .ok_or_else(|| fail("no `results.results` list: not an output file of promptfoo or niceeval (-o FILE.json)".to_string()))?;
    let prompts = summary
        .get("prompts")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    for result in results {
        let reason = result.get("failureReason").and_then(Value::as_u64);
        let success = result
            .get("success")
            .and_then(Value::as_bool)
            .unwrap_or(true);
        let errored = reason == Some(2);
        if !wanted(!success && !errored, errored) {
            continue;
        }
        if let Some(id) = result
            .pointer("/metadata/niceevalId")
            .and_then(Value::as_str)
        {
            failures.ids.insert(id.to_string());
            continue;
        }
        let test = result.get("testIdx").and_then(Value::as_u64).unwrap_or(0) as usize;
        let index = result.get("promptIdx").and_then(Value::as_u64).unwrap_or(0) as usize;
        // promptfoo lists each prompt once per provider: the prompt's position is its place
        // among the entries of its provider.
        let provider = |p: &Value| {
            p.get("provider")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string()
        };
        let Some(entry) = prompts.get(index) else {
            continue;
        };
        let position = prompts[..index]
            .iter()
            .filter(|p| provider(p) == provider(entry))
            .count()
            + 1;
        failures.cells.insert((test, position, provider(entry)));
    }
    Ok(failures)
}
