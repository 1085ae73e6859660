//! Run manifests: what a run (or one shard of it) was asked to run, written once next to its
//! results file (`<results file stem>.manifest.json`), so that merging the shards of a run
//! spread over many machines can tell what is missing, what ran twice, and whether the shards
//! ran the same code with the same configuration (`niceeval merge`).
//!
//! A manifest holds every eval and dataset case id the test binary defines (not only those its
//! shard selected: every shard of one run writes the same list), a hash of the configuration
//! (`niceeval.toml` and the `NICEEVAL_*` variables that change it), the git commit
//! (`GITHUB_SHA`, `CI_COMMIT_SHA`, else `git rev-parse HEAD`), niceeval's version and the
//! shard spec (`NICEEVAL_SHARD`, e.g. `hash:2/3`, the `--partition` given to nextest). Under
//! nextest, where every eval is a process of its own, the first process of the run writes it
//! and the others find it there.

use std::collections::{BTreeMap, BTreeSet};
use std::io::Write as _;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// What a run was asked to run, and with what.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Manifest {
    /// The manifest format's version.
    pub schema: u32,
    /// The niceeval version that ran.
    pub niceeval: String,
    /// The test target (`evals`).
    pub target: String,
    /// The run's id (`NEXTEST_RUN_ID` under nextest).
    pub run: String,
    /// The git commit the run was built from, when known.
    pub commit: Option<String>,
    /// SHA-256 of the configuration: `niceeval.toml` and the `NICEEVAL_*` variables that change
    /// it.
    pub config_hash: String,
    /// The shard this run is (`NICEEVAL_SHARD`, e.g. `hash:2/3`), when it is one.
    pub shard: Option<String>,
    /// The filter the run selected its evals with, when it had one: `NICEEVAL_FILTER`, else
    /// under nextest the `-E` expressions of the `cargo nextest run` (read from its command
    /// line: nextest does not tell the test binary), else the suite runner's selection
    /// (`--skip bad:: --tag smoke`). Shards with the same
    /// filter merge, the evals it left out counted as not selected.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub filter: Option<String>,
    /// Every eval and dataset case id the test binary defines, but the `#[ignore]`d ones.
    pub evals: Vec<String>,
    /// The `#[ignore]`d evals: run only when asked (`--run-ignored`), so not expected.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ignored: Vec<String>,
}

/// The manifest format's version.
const SCHEMA: u32 = 1;

/// The variables that change a run's configuration (beside `niceeval.toml`).
const CONFIG_VARIABLES: &[&str] = &[
    "NICEEVAL_STRICT",
    "NICEEVAL_RUNS",
    "NICEEVAL_JUDGE_MODEL",
    "NICEEVAL_JUDGE_BASE_URL",
];

/// The manifest file of the results file at `results`: same directory, same stem.
pub(crate) fn path_of(results: &Path) -> PathBuf {
    results.with_extension("manifest.json")
}

/// SHA-256 (hex) of the configuration of a crate whose `niceeval.toml` is `source` (none:
/// the defaults), with the `NICEEVAL_*` variables that change it.
pub(crate) fn config_hash(source: Option<&Path>) -> String {
    let mut hasher = Sha256::new();
    match source.and_then(|p| std::fs::read(p).ok()) {
        Some(text) => hasher.update(&text),
        None => hasher.update(b"(no niceeval.toml)"),
    }
    for name in CONFIG_VARIABLES {
        if let Ok(value) = std::env::var(name) {
            hasher.update(format!("\n{name}={value}").as_bytes());
        }
    }
    hasher
        .finalize()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// The commit the run was built from: what CI says (`GITHUB_SHA`, `CI_COMMIT_SHA`), else
/// `git rev-parse HEAD` in `dir`.
pub(crate) fn commit(dir: &Path) -> Option<String> {
    for name in ["NICEEVAL_COMMIT", "GITHUB_SHA", "CI_COMMIT_SHA"] {
        if let Ok(sha) = std::env::var(name)
            && !sha.trim().is_empty()
        {
            return Some(sha.trim().to_string());
        }
    }
    let out = std::process::Command::new("git")
        .args(["rev-parse", "HEAD"])
        .current_dir(dir)
        .stderr(std::process::Stdio::null())
        .output()
        .ok()?;
    let sha = String::from_utf8(out.stdout).ok()?;
    (out.status.success() && !sha.trim().is_empty()).then(|| sha.trim().to_string())
}

/// Writes the manifest of the run writing `results`: under nextest only when the run's first
/// process has not yet (it is never rewritten), otherwise every run (a temporary file renamed
/// into place). `evals` yields every id the binary defines, each with whether it is
/// `#[ignore]`d; it is called once per list the manifest writes, and the ids are written as
/// they come (a million dataset cases are never held as a list). `config_source` is the
/// crate's `niceeval.toml`. Errors are returned, not raised: a missing manifest fails no eval.
pub(crate) fn write<I: Iterator<Item = (String, bool)>>(
    results: &Path,
    manifest_dir: &Path,
    config_source: Option<&Path>,
    evals: impl Fn() -> I,
    filter: Option<String>,
    once: bool,
) -> std::io::Result<()> {
    let path = path_of(results);
    if once && path.exists() {
        return Ok(());
    }
    let run = super::this_run();
    let manifest = Streamed {
        schema: SCHEMA,
        niceeval: env!("CARGO_PKG_VERSION"),
        target: &run.target,
        run: &run.id,
        commit: commit(manifest_dir),
        config_hash: config_hash(config_source),
        shard: std::env::var("NICEEVAL_SHARD")
            .ok()
            .filter(|s| !s.trim().is_empty()),
        filter,
        evals: Ids {
            evals: &evals,
            ignored: false,
        },
        ignored: evals().any(|(_, ignored)| ignored).then_some(Ids {
            evals: &evals,
            ignored: true,
        }),
    };
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir)?;
    let mut temp = tempfile::NamedTempFile::new_in(dir)?;
    serde_json::to_writer_pretty(std::io::BufWriter::new(&mut temp), &manifest)
        .map_err(std::io::Error::other)?;
    temp.write_all(b"\n")?;
    if once {
        // Another process of the run may have written it meanwhile: theirs stays.
        match temp.persist_noclobber(&path) {
            Ok(_) => Ok(()),
            Err(e) if e.error.kind() == std::io::ErrorKind::AlreadyExists => Ok(()),
            Err(e) => Err(e.error),
        }
    } else {
        temp.persist(&path).map(|_| ()).map_err(|e| e.error)
    }
}

/// A [`Manifest`] as [`write`] writes it: the same fields in the same order, its lists of ids
/// written from an iterator rather than held.
#[derive(Serialize)]
#[serde(bound = "Ids<'a, F>: Serialize")]
struct Streamed<'a, F> {
    schema: u32,
    niceeval: &'a str,
    target: &'a str,
    run: &'a str,
    commit: Option<String>,
    config_hash: String,
    shard: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    filter: Option<String>,
    evals: Ids<'a, F>,
    #[serde(skip_serializing_if = "Option::is_none")]
    ignored: Option<Ids<'a, F>>,
}

/// The ids `evals` yields that are `#[ignore]`d (`ignored`) or not.
struct Ids<'a, F> {
    evals: &'a F,
    ignored: bool,
}

impl<F, I> Serialize for Ids<'_, F>
where
    F: Fn() -> I,
    I: Iterator<Item = (String, bool)>,
{
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(
            (self.evals)()
                .filter(|(_, ignored)| *ignored == self.ignored)
                .map(|(id, _)| id),
        )
    }
}

/// Why the run manifests could not be read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub(crate) enum ManifestError {
    /// A directory could not be listed.
    #[error(transparent)]
    List(#[from] super::ReadError),
    /// A manifest file could not be read.
    #[error("cannot read {}: {source}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// A file is no manifest.
    #[error("{}: not a niceeval run manifest: {source}", path.display())]
    Parse {
        /// The file.
        path: PathBuf,
        /// What serde said.
        #[source]
        source: serde_json::Error,
    },
}

/// The manifests among `paths` (files named `*.manifest.json`, those beside a results file,
/// and those in directories and their subdirectories one level down), each with its file.
pub(crate) fn read_all(paths: &[PathBuf]) -> Result<Vec<(PathBuf, Manifest)>, ManifestError> {
    let mut files = Vec::new();
    for path in paths {
        if path.is_dir() {
            files.extend(super::read::in_dir(path, "manifest.json")?);
        } else if is_manifest(path) {
            files.push(path.clone());
        } else {
            let manifest = path_of(path);
            if manifest.exists() {
                files.push(manifest);
            }
        }
    }
    files
        .into_iter()
        .map(|file| {
            let text = match std::fs::read_to_string(&file) {
                Ok(text) => text,
                Err(source) => return Err(ManifestError::Read { path: file, source }),
            };
            let manifest: Manifest = match serde_json::from_str(&text) {
                Ok(manifest) => manifest,
                Err(source) => return Err(ManifestError::Parse { path: file, source }),
            };
            Ok((file, manifest))
        })
        .collect()
}

/// Every eval and dataset case id the test binaries of `manifests` define (the `#[ignore]`d
/// ones too), from the newest manifest (by modification time) of each target — of `target`
/// only, when given; `None` when there is no such manifest.
pub(crate) fn defined(
    manifests: &[(PathBuf, Manifest)],
    target: Option<&str>,
) -> Option<BTreeSet<String>> {
    let modified = |path: &Path| std::fs::metadata(path).and_then(|m| m.modified()).ok();
    let mut newest: BTreeMap<&str, (Option<std::time::SystemTime>, &Manifest)> = BTreeMap::new();
    for (path, manifest) in manifests {
        if target.is_some_and(|t| t != manifest.target) {
            continue;
        }
        let time = modified(path);
        let entry = newest.entry(&manifest.target).or_insert((time, manifest));
        if time > entry.0 {
            *entry = (time, manifest);
        }
    }
    if newest.is_empty() {
        return None;
    }
    Some(
        newest
            .values()
            .flat_map(|(_, m)| m.evals.iter().chain(&m.ignored).cloned())
            .collect(),
    )
}

fn is_manifest(path: &Path) -> bool {
    path.file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| n.ends_with(".manifest.json"))
}

/// What checking shards against their manifests found.
#[derive(Debug, Default, PartialEq)]
pub(crate) struct Findings {
    /// Evals the manifests expect that no shard reported.
    pub(crate) missing: Vec<String>,
    /// Evals that more than one shard reported, with the shards (run ids) that did.
    pub(crate) duplicated: Vec<(String, Vec<String>)>,
    /// Where the shards disagree: commits, configurations, niceeval versions, eval lists.
    pub(crate) mismatches: Vec<String>,
    /// Evals the manifests list that the shards' common filter left out (not run, not
    /// missing), with that filter.
    pub(crate) not_selected: Vec<(String, String)>,
    /// What to do about the missing evals, when a filter may explain them.
    pub(crate) hints: Vec<String>,
}

impl Findings {
    /// Whether merging may go on: nothing missing or duplicated, and the shards agree (or
    /// `allow_mismatch` says their disagreement is expected).
    pub(crate) fn ok(&self, allow_mismatch: bool) -> bool {
        self.missing.is_empty()
            && self.duplicated.is_empty()
            && (allow_mismatch || self.mismatches.is_empty())
    }

    /// The findings, one per line, for stderr.
    pub(crate) fn describe(&self) -> Vec<String> {
        let mut lines = Vec::new();
        for mismatch in &self.mismatches {
            lines.push(format!("mismatch: {mismatch}"));
        }
        if !self.not_selected.is_empty() {
            let mut filters: Vec<&str> =
                self.not_selected.iter().map(|(_, f)| f.as_str()).collect();
            filters.dedup();
            lines.push(format!(
                "{} eval(s) left out by the shards' filter {} (not run, not missing)",
                self.not_selected.len(),
                filters
                    .iter()
                    .map(|f| format!("`{f}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
        if !self.missing.is_empty() {
            lines.push(format!(
                "{} eval(s) expected by the run manifest were reported by no shard:",
                self.missing.len()
            ));
            lines.extend(self.missing.iter().map(|id| format!("    missing: {id}")));
        }
        lines.extend(self.hints.iter().cloned());
        if !self.duplicated.is_empty() {
            lines.push(format!(
                "{} eval(s) were reported by more than one shard:",
                self.duplicated.len()
            ));
            lines.extend(
                self.duplicated
                    .iter()
                    .map(|(id, runs)| format!("    duplicated: {id} (runs {})", runs.join(", "))),
            );
        }
        lines
    }
}

/// Checks the shards' records against their manifests: `reported` says whether a shard
/// reported an eval, `duplicated` names the evals more than one shard (run) reported, with
/// those runs. Shards of one target must share the commit, the configuration hash, niceeval's
/// version and the list of evals.
pub(crate) fn check(
    manifests: &[(PathBuf, Manifest)],
    reported: impl Fn(&str) -> bool,
    duplicated: Vec<(String, Vec<String>)>,
) -> Findings {
    let mut findings = Findings::default();
    let mut by_target: BTreeMap<&str, Vec<&(PathBuf, Manifest)>> = BTreeMap::new();
    for entry in manifests {
        by_target.entry(&entry.1.target).or_default().push(entry);
    }
    for (target, shards) in &by_target {
        let first = &shards[0];
        for other in &shards[1..] {
            let differs = |what: &str, a: &dyn std::fmt::Debug, b: &dyn std::fmt::Debug| {
                format!(
                    "target `{target}`: {} has {what} {a:?}, {} has {b:?}",
                    first.0.display(),
                    other.0.display()
                )
            };
            if other.1.commit != first.1.commit {
                findings
                    .mismatches
                    .push(differs("commit", &first.1.commit, &other.1.commit));
            }
            if other.1.config_hash != first.1.config_hash {
                findings.mismatches.push(differs(
                    "configuration hash",
                    &first.1.config_hash,
                    &other.1.config_hash,
                ));
            }
            if other.1.niceeval != first.1.niceeval {
                findings.mismatches.push(differs(
                    "niceeval version",
                    &first.1.niceeval,
                    &other.1.niceeval,
                ));
            }
            if other.1.evals != first.1.evals {
                findings.mismatches.push(format!(
                    "target `{target}`: {} and {} list different evals (built from different code?)",
                    first.0.display(),
                    other.0.display()
                ));
            }
        }
        let expected: BTreeSet<&str> = shards
            .iter()
            .flat_map(|shard| shard.1.evals.iter().map(String::as_str))
            .collect();
        let missing: Vec<String> = expected
            .iter()
            .filter(|id| !reported(id))
            .map(|id| id.to_string())
            .collect();
        if missing.is_empty() {
            continue;
        }
        // A filter every shard was made with explains what none reported.
        let filters: BTreeSet<Option<&str>> =
            shards.iter().map(|s| s.1.filter.as_deref()).collect();
        match filters.iter().collect::<Vec<_>>().as_slice() {
            [Some(filter)] => findings
                .not_selected
                .extend(missing.into_iter().map(|id| (id, filter.to_string()))),
            [None] => {
                findings.missing.extend(missing);
                findings.hints.push(format!(
                    "target `{target}`: the manifests record no filter. If the shards were made with one the manifests could not record (a nextest name filter, a -E outside Linux), set NICEEVAL_FILTER to that filter on every shard (NICEEVAL_FILTER='not test(/^bad::/)'): shards made with the same filter merge, the evals it leaves out counted as not selected"
                ));
            }
            _ => {
                findings.missing.extend(missing);
                let each: Vec<String> = shards
                    .iter()
                    .map(|s| match &s.1.filter {
                        Some(f) => format!("{} has filter `{f}`", s.0.display()),
                        None => format!("{} has none", s.0.display()),
                    })
                    .collect();
                findings.hints.push(format!(
                    "target `{target}`: the shards were made with different filters ({}); only shards made with the same filter merge with evals left out: run every shard with the same `-E` (and the same NICEEVAL_FILTER, if set), or merge only the shards of one filter",
                    each.join(", ")
                ));
            }
        }
    }
    findings.duplicated = duplicated;
    findings
}

#[cfg(test)]
mod tests {
    use super::*;

    fn manifest(run: &str, commit: &str, evals: &[&str]) -> (PathBuf, Manifest) {
        (
            PathBuf::from(format!("{run}/suite.manifest.json")),
            Manifest {
                schema: SCHEMA,
                niceeval: "0.1.0".into(),
                target: "suite".into(),
                run: run.into(),
                commit: Some(commit.into()),
                config_hash: "abc".into(),
                shard: None,
                filter: None,
                evals: evals.iter().map(|e| e.to_string()).collect(),
                ignored: Vec::new(),
            },
        )
    }

    /// Checks `manifests` against the shards' records, given as (eval, run) pairs.
    fn check_pairs(manifests: &[(PathBuf, Manifest)], pairs: &[(&str, &str)]) -> Findings {
        let mut map: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for (id, run) in pairs {
            map.entry(id.to_string())
                .or_default()
                .insert(run.to_string());
        }
        let duplicated = map
            .iter()
            .filter(|(_, runs)| runs.len() > 1)
            .map(|(id, runs)| (id.clone(), runs.iter().cloned().collect()))
            .collect();
        check(manifests, |id| map.contains_key(id), duplicated)
    }

    #[test]
    fn missing_and_duplicated_evals_are_named() {
        let evals = ["suite::a", "suite::b", "suite::c"];
        let manifests = [manifest("r1", "c0", &evals), manifest("r2", "c0", &evals)];
        let findings = check_pairs(
            &manifests,
            &[("suite::a", "r1"), ("suite::a", "r2"), ("suite::b", "r2")],
        );
        assert_eq!(findings.missing, ["suite::c"]);
        assert_eq!(
            findings.duplicated,
            [(
                "suite::a".to_string(),
                vec!["r1".to_string(), "r2".to_string()]
            )]
        );
        assert!(findings.mismatches.is_empty());
        assert!(!findings.ok(true));
        let text = findings.describe().join("\n");
        assert!(text.contains("missing: suite::c"), "{text}");
        assert!(
            text.contains("duplicated: suite::a (runs r1, r2)"),
            "{text}"
        );
    }

    #[test]
    fn shards_made_with_the_same_filter_merge_and_others_say_what_to_pass() {
        let evals = ["suite::a", "suite::b", "bad::c"];
        let filtered = |run: &str, filter: Option<&str>| {
            let mut m = manifest(run, "c0", &evals);
            m.1.filter = filter.map(str::to_string);
            m
        };
        let reported = [("suite::a", "r1"), ("suite::b", "r2")];
        let same = "not test(/^bad::/)";
        let findings = check_pairs(
            &[filtered("r1", Some(same)), filtered("r2", Some(same))],
            &reported,
        );
        assert!(findings.ok(false), "{:?}", findings.describe());
        assert_eq!(
            findings.not_selected,
            [("bad::c".to_string(), same.to_string())]
        );
        let text = findings.describe().join("\n");
        assert!(
            text.contains("1 eval(s) left out by the shards' filter `not test(/^bad::/)`"),
            "{text}"
        );

        // No filter recorded: missing, and the message says what to set.
        let findings = check_pairs(&[filtered("r1", None), filtered("r2", None)], &reported);
        assert!(!findings.ok(true));
        let text = findings.describe().join("\n");
        assert!(text.contains("missing: bad::c"), "{text}");
        assert!(
            text.contains("set NICEEVAL_FILTER to that filter on every shard"),
            "{text}"
        );

        // Different filters: missing, each shard's named.
        let findings = check_pairs(
            &[filtered("r1", Some(same)), filtered("r2", None)],
            &reported,
        );
        assert!(!findings.ok(true));
        let text = findings.describe().join("\n");
        assert!(
            text.contains("r1/suite.manifest.json has filter `not test(/^bad::/)`, r2/suite.manifest.json has none"),
            "{text}"
        );
    }

    #[test]
    fn shards_of_other_commits_or_configurations_are_refused_unless_allowed() {
        let mut other = manifest("r2", "c1", &["suite::a"]);
        other.1.config_hash = "def".into();
        let findings = check_pairs(
            &[manifest("r1", "c0", &["suite::a"]), other],
            &[("suite::a", "r1")],
        );
        assert_eq!(findings.mismatches.len(), 2, "{:?}", findings.mismatches);
        assert!(findings.mismatches[0].contains("commit"));
        assert!(findings.mismatches[1].contains("configuration hash"));
        assert!(!findings.ok(false));
        assert!(findings.ok(true));
    }

    #[test]
    fn the_configuration_hash_follows_the_file_and_the_variables() {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let file = dir.path().join("niceeval.toml");
        std::fs::write(&file, "[run]\nruns = 2\n").expect("writable");
        let one = config_hash(Some(&file));
        assert_eq!(one, config_hash(Some(&file)));
        assert_eq!(one.len(), 64);
        std::fs::write(&file, "[run]\nruns = 3\n").expect("writable");
        assert_ne!(one, config_hash(Some(&file)));
        assert_ne!(config_hash(None), one);
    }

    #[test]
    fn a_streamed_manifest_is_the_manifest_as_written_before() {
        for (evals, filter) in [
            (
                vec![("suite::a", false), ("suite::b", true), ("suite::c", false)],
                Some("x"),
            ),
            (vec![("suite::a", false)], None),
            (vec![], None),
        ] {
            let ids = || evals.iter().map(|(id, ignored)| (id.to_string(), *ignored));
            let whole = Manifest {
                schema: SCHEMA,
                niceeval: "0.1.0".into(),
                target: "suite".into(),
                run: "r1".into(),
                commit: None,
                config_hash: "abc".into(),
                shard: Some("hash:1/2".into()),
                filter: filter.map(str::to_string),
                evals: ids().filter(|e| !e.1).map(|e| e.0).collect(),
                ignored: ids().filter(|e| e.1).map(|e| e.0).collect(),
            };
            let streamed = Streamed {
                schema: SCHEMA,
                niceeval: "0.1.0",
                target: "suite",
                run: "r1",
                commit: None,
                config_hash: "abc".into(),
                shard: Some("hash:1/2".into()),
                filter: filter.map(str::to_string),
                evals: Ids {
                    evals: &ids,
                    ignored: false,
                },
                ignored: ids().any(|e| e.1).then_some(Ids {
                    evals: &ids,
                    ignored: true,
                }),
            };
            assert_eq!(
                serde_json::to_string_pretty(&streamed).expect("JSON"),
                serde_json::to_string_pretty(&whole).expect("JSON")
            );
        }
    }
}
