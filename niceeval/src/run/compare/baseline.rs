//! The baseline file: what a run of evals is compared with, meant to be committed.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::base::outcome::Outcome;

/// The version of the baseline format this niceeval writes and reads.
pub const BASELINE_VERSION: u32 = 1;

/// A baseline: one [`BaselineEval`] per eval (dataset cases each on their own), sorted by id.
///
/// Saved as pretty JSON with a fixed key order and numbers rounded to 6 decimals, holding only
/// what stays put when nothing changed — ids, outcomes, run and pass counts, pass rates, mean
/// scores, named metrics, tokens — so that saving the baseline of an unchanged suite gives the
/// same bytes, and a diff of the file in a pull request shows what changed. Durations and costs
/// vary from run to run; they are kept only when `[compare] baseline_include` asks for them.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Baseline {
    /// The format's version ([`BASELINE_VERSION`]).
    pub niceeval_baseline: u32,
    /// One entry per eval, sorted by id.
    pub evals: Vec<BaselineEval>,
}

/// What a baseline keeps of one eval.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct BaselineEval {
    /// The eval's id (`evals::refund`, or `evals::capitals::paris` for a dataset case).
    pub id: String,
    /// For a dataset case, the dataset eval's id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dataset: Option<String>,
    /// The test target (`evals`) that ran it, when known: a suite binary compares only the
    /// baseline's evals of its own target.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<String>,
    /// The eval's outcome over its runs.
    pub outcome: Outcome,
    /// Runs that counted (skipped runs excluded).
    pub runs: u64,
    /// Runs that passed.
    pub passed: u64,
    /// `passed / runs` (1 when no run counted).
    pub pass_rate: f64,
    /// Mean over the runs of each run's weighted mean score.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub score: Option<f64>,
    /// The standard deviation of the runs' scores (with 2 runs or more): what tells a real
    /// change of the mean from noise (Welch's t-test).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub score_sd: Option<f64>,
    /// Mean over the runs of each named metric.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub metrics: BTreeMap<String, f64>,
    /// The standard deviation over the runs of each named metric (with 2 runs or more).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub metrics_sd: BTreeMap<String, f64>,
    /// The agent's tokens over every run (left out of the file when none were reported).
    #[serde(default, skip_serializing_if = "Tokens::is_zero")]
    pub tokens: Tokens,
    /// The agent's cost in USD over every run, when known (in a saved baseline only with
    /// `baseline_include = ["cost"]`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_usd: Option<f64>,
    /// Mean wall time of one run, in milliseconds (in a saved baseline only with
    /// `baseline_include = ["duration"]`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mean_run_ms: Option<f64>,
}

/// Token counts of a baseline entry.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Tokens {
    /// Input tokens.
    pub input: u64,
    /// Output tokens.
    pub output: u64,
    /// Input tokens served from the provider's cache.
    #[serde(default)]
    pub cache_read: u64,
}

impl Tokens {
    /// Whether no token was counted.
    pub fn is_zero(&self) -> bool {
        *self == Tokens::default()
    }

    /// Input plus output tokens (cache reads are part of the input).
    pub fn total(&self) -> u64 {
        self.input + self.output
    }
}

/// Why a baseline could not be read or written.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum BaselineError {
    /// The file could not be read or written.
    #[error("cannot {action} the baseline {path}: {source}")]
    Io {
        /// `read` or `write`.
        action: &'static str,
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The file is not a baseline.
    #[error("{path}:{line}:{column}: not a niceeval baseline ({message})")]
    Parse {
        /// The file.
        path: String,
        /// 1-based line.
        line: usize,
        /// 1-based column.
        column: usize,
        /// What is wrong.
        message: String,
    },
    /// No eval of the baseline belongs to a test target compared: the baseline of another
    /// suite, with which every eval would be new and nothing a regression.
    #[error(
        "{path}: the baseline of another suite: its evals belong to {held}, none to {running}; pass this suite's baseline (save one with --save-baseline FILE)",
        held = targets_text(.targets),
        running = names_text(.running, "or")
    )]
    OtherSuite {
        /// The file.
        path: String,
        /// The test targets the baseline holds evals of.
        targets: Vec<String>,
        /// The test targets compared (the suite running, or the results' targets).
        running: Vec<String>,
    },
    /// `[compare] fail_on` names `cost-rise`, but the baseline records no cost.
    #[error(
        "{path}: [compare] fail_on names \"cost-rise\", but the baseline records no cost, so no rise can be seen; save it with [compare] baseline_include = [\"cost\"] (and prices for the agents' models), or drop \"cost-rise\""
    )]
    NoCost {
        /// The file.
        path: String,
    },
    /// The file is from a newer niceeval.
    #[error(
        "{path}: baseline format {version} is newer than the {BASELINE_VERSION} this niceeval reads; save it again with this version, or upgrade"
    )]
    Newer {
        /// The file.
        path: String,
        /// Its version.
        version: u32,
    },
}

/// `` `a`, `b` or `c` ``.
fn names_text(names: &[String], last: &str) -> String {
    let quoted: Vec<String> = names.iter().map(|n| format!("`{n}`")).collect();
    match quoted.split_last() {
        None => String::new(),
        Some((only, [])) => only.clone(),
        Some((tail, init)) => format!("{} {last} {tail}", init.join(", ")),
    }
}

/// `` the test target `a` ``, `` the test targets `a` and `b` ``.
fn targets_text(names: &[String]) -> String {
    let plural = if names.len() == 1 { "" } else { "s" };
    format!("the test target{plural} {}", names_text(names, "and"))
}

/// The mean, when there are values.
pub(crate) fn mean(values: &[f64]) -> Option<f64> {
    (!values.is_empty()).then(|| values.iter().sum::<f64>() / values.len() as f64)
}

/// The sample standard deviation, with 2 values or more.
pub(crate) fn sd(values: &[f64]) -> Option<f64> {
    let m = mean(values)?;
    (values.len() >= 2).then(|| {
        (values.iter().map(|v| (v - m).powi(2)).sum::<f64>() / (values.len() - 1) as f64).sqrt()
    })
}

/// Rounds to 6 decimals: far below what reports show, and enough for the same runs to write
/// the same digits whatever order their floating-point sums were taken in.
pub(crate) fn round6(x: f64) -> f64 {
    let r = (x * 1e6).round() / 1e6;
    if r == 0.0 { 0.0 } else { r }
}

impl BaselineEval {
    /// Whether the runs disagree: some passed and some failed (`0 < passed < runs`).
    pub fn flaky(&self) -> bool {
        self.passed > 0 && self.passed < self.runs
    }

    /// Mean tokens (input + output) per counted run, when any run counted.
    pub fn tokens_per_run(&self) -> Option<f64> {
        (self.runs > 0).then(|| self.tokens.total() as f64 / self.runs as f64)
    }

    /// Mean cost per counted run, when known.
    pub fn cost_per_run(&self) -> Option<f64> {
        (self.runs > 0)
            .then_some(self.cost_usd)
            .flatten()
            .map(|c| c / self.runs as f64)
    }

    fn rounded(mut self, cost: bool, duration: bool) -> Self {
        self.pass_rate = round6(self.pass_rate);
        self.score = self.score.map(round6);
        self.score_sd = self.score_sd.map(round6);
        for value in self
            .metrics
            .values_mut()
            .chain(self.metrics_sd.values_mut())
        {
            *value = round6(*value);
        }
        self.cost_usd = self.cost_usd.filter(|_| cost).map(round6);
        self.mean_run_ms = self.mean_run_ms.filter(|_| duration).map(|d| d.round());
        self
    }
}

impl Baseline {
    /// A baseline of `evals`: sorted by id, numbers rounded, cost and mean run time kept only
    /// when `cost` and `duration` say so.
    pub fn new(evals: impl IntoIterator<Item = BaselineEval>, cost: bool, duration: bool) -> Self {
        let mut evals: Vec<BaselineEval> = evals
            .into_iter()
            .map(|e| e.rounded(cost, duration))
            .collect();
        evals.sort_by(|a, b| a.id.cmp(&b.id));
        evals.dedup_by(|a, b| a.id == b.id);
        Baseline {
            niceeval_baseline: BASELINE_VERSION,
            evals,
        }
    }

    /// The file's text: pretty JSON, two-space indent, a final newline.
    pub fn to_json(&self) -> String {
        let mut text = serde_json::to_string_pretty(self).unwrap_or_else(|_| "{}".to_string());
        text.push('\n');
        text
    }

    /// Parses a baseline's text; `name` is used in errors.
    pub fn parse(text: &str, name: &str) -> Result<Baseline, BaselineError> {
        #[derive(Deserialize)]
        struct Version {
            niceeval_baseline: u32,
        }
        let parse_error = |e: serde_json::Error| BaselineError::Parse {
            path: name.to_string(),
            line: e.line(),
            column: e.column(),
            message: e.to_string(),
        };
        let version: Version = serde_json::from_str(text).map_err(parse_error)?;
        if version.niceeval_baseline > BASELINE_VERSION {
            return Err(BaselineError::Newer {
                path: name.to_string(),
                version: version.niceeval_baseline,
            });
        }
        serde_json::from_str(text).map_err(parse_error)
    }

    /// The test targets the baseline's evals name.
    pub fn targets(&self) -> BTreeSet<&str> {
        self.evals
            .iter()
            .filter_map(|e| e.target.as_deref())
            .collect()
    }

    /// Checks that the baseline `name` can be compared with evals of the test targets
    /// `running` under `config`: some eval of it belongs to one of them (an eval that names no
    /// target belongs to any; an empty baseline, or no target known, passes), and a policy
    /// failing on `cost-rise` has costs to compare with.
    pub(crate) fn check(
        &self,
        name: &str,
        running: &BTreeSet<String>,
        config: &crate::config::CompareConfig,
    ) -> Result<(), BaselineError> {
        let belongs = |e: &&BaselineEval| {
            e.target
                .as_ref()
                .is_none_or(|target| running.is_empty() || running.contains(target))
        };
        let mine: Vec<&BaselineEval> = self.evals.iter().filter(belongs).collect();
        if !self.evals.is_empty() && mine.is_empty() {
            return Err(BaselineError::OtherSuite {
                path: name.to_string(),
                targets: self.targets().into_iter().map(String::from).collect(),
                running: running.iter().cloned().collect(),
            });
        }
        if config.fails_on("cost-rise")
            && !mine.is_empty()
            && mine.iter().all(|e| e.cost_usd.is_none())
        {
            return Err(BaselineError::NoCost {
                path: name.to_string(),
            });
        }
        Ok(())
    }

    /// Reads a baseline file.
    pub fn load(path: &Path) -> Result<Baseline, BaselineError> {
        let text = std::fs::read_to_string(path).map_err(|source| BaselineError::Io {
            action: "read",
            path: path.to_path_buf(),
            source,
        })?;
        Baseline::parse(&text, &path.display().to_string())
    }

    /// Writes the baseline to `path` (parent directories created), whole or not at all: a
    /// temporary file beside it renamed into place. An unchanged file is not rewritten. The
    /// text ([`Baseline::to_json`]) is written as it is made, never held whole.
    pub fn save(&self, path: &Path) -> Result<(), BaselineError> {
        let io = |source| BaselineError::Io {
            action: "write",
            path: path.to_path_buf(),
            source,
        };
        let dir = match path.parent().filter(|p| !p.as_os_str().is_empty()) {
            Some(parent) => {
                std::fs::create_dir_all(parent).map_err(io)?;
                parent.to_path_buf()
            }
            None => PathBuf::from("."),
        };
        let mut builder = tempfile::Builder::new();
        builder.prefix(".baseline.").suffix(".tmp");
        // As readable as any file the user creates (the umask applies), not owner-only.
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            builder.permissions(std::fs::Permissions::from_mode(0o666));
        }
        let mut file = builder.tempfile_in(&dir).map_err(io)?;
        {
            let mut out = std::io::BufWriter::new(&mut file);
            serde_json::to_writer_pretty(&mut out, self).map_err(|e| io(e.into()))?;
            std::io::Write::write_all(&mut out, b"\n").map_err(io)?;
            std::io::Write::flush(&mut out).map_err(io)?;
        }
        if same_bytes(file.path(), path) {
            // Unchanged: the temporary file goes, the file keeps its time.
            return Ok(());
        }
        file.persist(path).map_err(|e| io(e.error))?;
        Ok(())
    }
}

/// Whether the files `a` and `b` hold the same bytes (false when one cannot be read), read a
/// piece at a time.
fn same_bytes(a: &Path, b: &Path) -> bool {
    use std::io::BufRead as _;
    let (Ok(fa), Ok(fb)) = (std::fs::File::open(a), std::fs::File::open(b)) else {
        return false;
    };
    match (fa.metadata(), fb.metadata()) {
        (Ok(ma), Ok(mb)) if ma.len() == mb.len() => {}
        _ => return false,
    }
    let (mut ra, mut rb) = (std::io::BufReader::new(fa), std::io::BufReader::new(fb));
    loop {
        let (Ok(ba), Ok(bb)) = (ra.fill_buf(), rb.fill_buf()) else {
            return false;
        };
        if ba.is_empty() || bb.is_empty() {
            return ba.is_empty() && bb.is_empty();
        }
        let n = ba.len().min(bb.len());
        if ba[..n] != bb[..n] {
            return false;
        }
        ra.consume(n);
        rb.consume(n);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn eval(id: &str, runs: u64, passed: u64) -> BaselineEval {
        BaselineEval {
            id: id.to_string(),
            dataset: None,
            target: None,
            outcome: if passed == runs {
                Outcome::Passed
            } else {
                Outcome::Failed
            },
            runs,
            passed,
            pass_rate: passed as f64 / runs as f64,
            score: Some(0.1 + 0.2),
            score_sd: None,
            metrics: BTreeMap::from([("accuracy".to_string(), 2.0 / 3.0)]),
            metrics_sd: BTreeMap::new(),
            tokens: Tokens {
                input: 10,
                output: 5,
                cache_read: 0,
            },
            cost_usd: Some(0.001_234_567),
            mean_run_ms: Some(12.345),
        }
    }

    #[test]
    fn saved_text_is_sorted_rounded_and_has_no_cost_or_time_unless_asked() {
        let baseline = Baseline::new([eval("b::two", 3, 2), eval("a::one", 1, 1)], false, false);
        let text = baseline.to_json();
        assert!(text.find("a::one") < text.find("b::two"), "{text}");
        assert!(text.contains("\"score\": 0.3,"), "{text}");
        assert!(text.contains("\"accuracy\": 0.666667"), "{text}");
        assert!(text.contains("\"pass_rate\": 0.666667"), "{text}");
        assert!(!text.contains("cost") && !text.contains("_ms"), "{text}");
        let with = Baseline::new([eval("a::one", 1, 1)], true, true).to_json();
        assert!(with.contains("\"cost_usd\": 0.001235"), "{with}");
        assert!(with.contains("\"mean_run_ms\": 12.0"), "{with}");
        // Round trip.
        let back = Baseline::parse(&text, "b.json").unwrap();
        assert_eq!(back, baseline);
        assert_eq!(back.to_json(), text);
    }

    #[test]
    fn bad_files_are_errors_naming_the_place() {
        let error = Baseline::parse(
            "{\n  \"niceeval_baseline\": 1,\n  \"evals\": 3\n}",
            "b.json",
        )
        .unwrap_err()
        .to_string();
        assert!(error.starts_with("b.json:3:"), "{error}");
        let newer = Baseline::parse("{\"niceeval_baseline\": 9, \"evals\": []}", "b.json")
            .unwrap_err()
            .to_string();
        assert!(newer.contains("format 9 is newer"), "{newer}");
        let missing = Baseline::load(Path::new("/nonexistent/b.json")).unwrap_err();
        assert!(
            missing
                .to_string()
                .starts_with("cannot read the baseline /nonexistent/b.json"),
            "{missing}"
        );
    }

    #[test]
    fn saving_an_unchanged_baseline_keeps_the_bytes() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("ci/baseline.json");
        let baseline = Baseline::new([eval("a::one", 1, 1)], false, false);
        baseline.save(&path).unwrap();
        let first = std::fs::read(&path).unwrap();
        assert_eq!(
            first,
            baseline.to_json().as_bytes(),
            "written as to_json makes it"
        );
        #[cfg(unix)]
        let inode = |p: &std::path::Path| {
            use std::os::unix::fs::MetadataExt;
            std::fs::metadata(p).unwrap().ino()
        };
        #[cfg(unix)]
        let before = inode(&path);
        baseline.save(&path).unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), first);
        #[cfg(unix)]
        assert_eq!(inode(&path), before, "an unchanged file is not replaced");
        let files = std::fs::read_dir(dir.path().join("ci")).unwrap().count();
        assert_eq!(files, 1, "no temporary file is left");
        assert_eq!(Baseline::load(&path).unwrap(), baseline);
        // A changed baseline replaces it.
        let other = Baseline::new([eval("a::one", 2, 1)], false, false);
        other.save(&path).unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), other.to_json().as_bytes());
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&path).unwrap().permissions().mode();
            assert_ne!(
                mode & 0o044,
                0,
                "readable by others (umask permitting): {mode:o}"
            );
        }
    }
}

#[cfg(test)]
mod doc_examples {
    //! The examples that were this file's doc tests while its items were public.

    #[test]
    fn example_1() -> Result<(), Box<dyn std::error::Error>> {
        use crate::run::compare::Baseline;

        let text = r#"{
          "niceeval_baseline": 1,
          "evals": [
            { "id": "evals::refund", "outcome": "passed", "runs": 1, "passed": 1, "pass_rate": 1.0,
              "score": 0.9 }
          ]
        }"#;
        let baseline = Baseline::parse(text, "baseline.json")?;
        assert_eq!(baseline.evals[0].id, "evals::refund");
        assert!(
            baseline
                .to_json()
                .starts_with("{\n  \"niceeval_baseline\": 1,\n  \"evals\": [")
        );
        Ok(())
    }
}
