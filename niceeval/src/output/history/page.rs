//! What the viewer's page gets of the history: the trends of the suites (targets) and evals it
//! shows over their last runs, with their marks, in one compact, bounded JSON value — embedded
//! in the one-file page (`--html`, `niceeval view --out`) and answered by the server's
//! `/api/history`. Bounded: at most [`PAGE_EVALS`] evals' trends (a larger page embeds the
//! suites' trends only, and says how many it left out), each of at most `last` runs.
//!
//! The value:
//!
//! ```text
//! { "last": N,
//!   "runs":   [[run, started, commit, filter], …],            oldest first
//!   "suites": { target: [[run#, passed, failed, skipped, mean score, cost, tokens, ms, mark], …] },
//!   "evals":  { id: [[run#, outcome 0|1|2, passed, counted, score, tokens, cost, ms, mark], …] },
//!   "omitted": evals left out }
//! ```
//!
//! `run#` is a position in `runs`; a mark is the query's [`Mark`] (`null` where nothing moved
//! beyond chance).

use std::collections::BTreeMap;

use serde_json::{Value, json};

use super::marks::{Mark, MarkRule};
use super::store::{History, HistoryError};

/// The most evals whose trends a page embeds.
pub const PAGE_EVALS: usize = 1000;

/// A run as the page orders them: (started, run, target).
type RunKey = (String, String, String);

/// The runs a page's points refer to, by (run, target), numbered once all are known.
#[derive(Default)]
struct Runs {
    /// Each run's commit and filter.
    seen: BTreeMap<RunKey, (Option<String>, Option<String>)>,
}

impl Runs {
    fn add(
        &mut self,
        started: &str,
        run: &str,
        target: &str,
        commit: &Option<String>,
        filter: &Option<String>,
    ) {
        self.seen
            .entry((started.to_string(), run.to_string(), target.to_string()))
            .or_insert_with(|| (commit.clone(), filter.clone()));
    }
}

fn mark(mark: &Option<Mark>) -> Value {
    mark.as_ref()
        .and_then(|m| serde_json::to_value(m).ok())
        .unwrap_or(Value::Null)
}

impl History {
    /// The trends of the page that shows `evals` (ids) over their latest `last` runs (see the
    /// module's text): each target some id belongs to (`target::…`) and, when they are
    /// [`PAGE_EVALS`] or fewer, each eval.
    pub fn for_page(
        &self,
        evals: &[&str],
        last: usize,
        rule: &MarkRule,
    ) -> Result<Value, HistoryError> {
        // The targets the page's evals were recorded under (of its first PAGE_EVALS evals),
        // and those its ids name (`target::…`; `niceeval eval` records its suite files' cases
        // under a target of its own).
        let mut recorded = std::collections::BTreeSet::new();
        {
            let mut statement = self
                .connection
                .prepare("SELECT DISTINCT target FROM evals WHERE eval = ?1")
                .map_err(|e| self.sqlite(e))?;
            for id in evals.iter().take(PAGE_EVALS) {
                let found = statement
                    .query_map([id], |row| row.get::<_, String>(0))
                    .and_then(|rows| rows.collect::<rusqlite::Result<Vec<_>>>())
                    .map_err(|e| self.sqlite(e))?;
                recorded.extend(found);
            }
        }
        let targets: Vec<String> = self
            .targets()?
            .into_iter()
            .filter(|t| {
                let prefix = format!("{t}::");
                recorded.contains(t) || evals.iter().any(|id| id.starts_with(&prefix))
            })
            .collect();
        let embedded = if evals.len() <= PAGE_EVALS {
            evals
        } else {
            &[]
        };
        self.page_value(&targets, embedded, evals.len() - embedded.len(), last, rule)
    }

    /// The trends of every target recorded (no eval's): a served page's suite trends.
    pub fn for_suites(&self, last: usize, rule: &MarkRule) -> Result<Value, HistoryError> {
        let targets = self.targets()?;
        self.page_value(&targets, &[], 0, last, rule)
    }

    fn page_value(
        &self,
        targets: &[String],
        evals: &[&str],
        omitted: usize,
        last: usize,
        rule: &MarkRule,
    ) -> Result<Value, HistoryError> {
        let mut runs = Runs::default();
        let mut suites = Vec::new();
        for target in targets {
            let points = self.suite_trend(target, last, rule)?;
            for p in &points {
                runs.add(
                    &p.run.started,
                    &p.run.run,
                    &p.run.target,
                    &p.run.commit,
                    &p.run.filter,
                );
            }
            suites.push((target.clone(), points));
        }
        let mut trends = Vec::new();
        for id in evals {
            let points = self.trend(id, last, rule)?;
            if points.is_empty() {
                continue;
            }
            for p in &points {
                runs.add(&p.started, &p.run, &p.target, &p.commit, &p.filter);
            }
            trends.push((id.to_string(), points));
        }
        let index: BTreeMap<(&str, &str), usize> = runs
            .seen
            .keys()
            .enumerate()
            .map(|(i, (_, run, target))| ((run.as_str(), target.as_str()), i))
            .collect();
        let at = |run: &str, target: &str| index.get(&(run, target)).copied();
        let suites: serde_json::Map<String, Value> = suites
            .iter()
            .map(|(target, points)| {
                let rows: Vec<Value> = points
                    .iter()
                    .map(|p| {
                        let r = &p.run;
                        json!([
                            at(&r.run, &r.target),
                            r.passed,
                            r.failed,
                            r.skipped,
                            p.mean_score,
                            r.cost_usd,
                            r.input_tokens + r.output_tokens,
                            r.duration_ms,
                            mark(&p.significant),
                        ])
                    })
                    .collect();
                (target.clone(), rows.into())
            })
            .collect();
        let evals: serde_json::Map<String, Value> = trends
            .iter()
            .map(|(id, points)| {
                let rows: Vec<Value> = points
                    .iter()
                    .map(|p| {
                        let outcome = match p.outcome.as_str() {
                            "passed" => 0,
                            "failed" => 1,
                            _ => 2,
                        };
                        json!([
                            at(&p.run, &p.target),
                            outcome,
                            p.passed,
                            p.counted,
                            p.score,
                            p.input_tokens + p.output_tokens,
                            p.cost_usd,
                            p.duration_ms,
                            mark(&p.significant),
                        ])
                    })
                    .collect();
                (id.clone(), rows.into())
            })
            .collect();
        let runs: Vec<Value> = runs
            .seen
            .into_iter()
            .map(|((started, run, _), (commit, filter))| json!([run, started, commit, filter]))
            .collect();
        Ok(json!({
            "last": last,
            "alpha": rule.alpha,
            "runs": runs,
            "suites": suites,
            "evals": evals,
            "omitted": omitted,
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::super::store::tests::{eval, run};
    use super::*;

    #[test]
    fn a_page_gets_its_targets_and_evals_trends_with_runs_numbered_once() {
        let dir = tempfile::tempdir().unwrap();
        let history = History::open(&dir.path().join("h.sqlite")).unwrap();
        for n in 1..=20 {
            let mut facts = run(&format!("r{n:02}"));
            facts.started = format!("2026-01-01T00:{n:02}:00.000Z");
            facts.commit = Some(format!("c{n:02}"));
            history.upsert_run(&facts).unwrap();
            history
                .upsert_eval(&facts.run, &facts.target, &eval("evals::refund", n < 12))
                .unwrap();
            history
                .upsert_eval(&facts.run, &facts.target, &eval("evals::steady", true))
                .unwrap();
        }
        let rule = MarkRule::default();
        let page = history
            .for_page(&["evals::refund", "evals::steady", "other::x"], 30, &rule)
            .unwrap();
        assert_eq!(page["runs"].as_array().map(Vec::len), Some(20));
        assert_eq!(page["runs"][11][2], "c12");
        let refund = page["evals"]["evals::refund"].as_array().unwrap();
        assert_eq!(refund.len(), 20);
        let marked: Vec<u64> = refund
            .iter()
            .filter(|p| !p[8].is_null())
            .map(|p| p[0].as_u64().unwrap())
            .collect();
        assert_eq!(marked, vec![11]);
        assert_eq!(refund[11][1], 1, "failed");
        assert!(page["evals"].get("other::x").is_none(), "no runs: no trend");
        let suite = page["suites"]["evals"].as_array().unwrap();
        assert_eq!(suite.len(), 20);
        assert_eq!(suite[0][1], 2, "both passed");
        // An eval recorded under a target its id does not name (`niceeval eval`'s cases):
        // that target's trend comes with it.
        history
            .upsert_eval("r20", "evals", &eval("suite::case", true))
            .unwrap();
        let page = history.for_page(&["suite::case"], 30, &rule).unwrap();
        assert_eq!(page["suites"]["evals"].as_array().map(Vec::len), Some(20));
        assert_eq!(
            page["evals"]["suite::case"].as_array().map(Vec::len),
            Some(1)
        );
        // Fewer runs asked: the last ones.
        let page = history.for_page(&["evals::refund"], 5, &rule).unwrap();
        assert_eq!(
            page["evals"]["evals::refund"].as_array().map(Vec::len),
            Some(5)
        );
        // More evals than a page embeds: the suites' trends only.
        let many: Vec<String> = (0..=PAGE_EVALS).map(|i| format!("evals::e{i}")).collect();
        let many: Vec<&str> = many.iter().map(String::as_str).collect();
        let page = history.for_page(&many, 30, &rule).unwrap();
        assert_eq!(page["omitted"], PAGE_EVALS + 1);
        assert_eq!(page["evals"], json!({}));
        assert_eq!(page["suites"]["evals"].as_array().map(Vec::len), Some(20));
    }
}
