//! Command-line arguments of the suite runner: libtest's (filters, `--exact`, `--skip`,
//! `--list`, `--ignored`, `--include-ignored`, `--test-threads`, ...) plus niceeval's own
//! (`--runs`, `--concurrency`, `--strict`, `--tag`, `--timeout`, report files), and report
//! mode (`--report`: merge results files instead of running evals).
//!
//! Parsed by hand, not with clap (which the `niceeval` command uses), measured for issue 42:
//! clap 4.6 with `derive` added to a crate that already builds `syn` and `serde` (as every
//! test binary of niceeval's does) cost 12.3 s and 12.6 s more CPU time in two clean debug
//! builds (15.9 → 28.1 s, 19.9 → 32.6 s user+sys, `cargo build -j2`), +16 to +25 s of wall
//! time on a loaded 2-core machine: every user's first `cargo test` would pay it, and the
//! runner's grammar is libtest's, which clap does not shorten (`--report` turning the
//! arguments after it into paths, `-Z unstable-options`, libtest's flags accepted and ignored,
//! `--name=value` and `--name value` alike). An unknown option names the closest known one.
//! The `niceeval` command declares these options in clap (its help, completions and
//! suggestions) and hands them to [`Args::parse`].

use std::path::PathBuf;
use std::time::Duration;

/// Parsed arguments.
#[derive(Debug, Clone, Default, PartialEq)]
#[non_exhaustive]
pub struct Args {
    /// Name filters (substring match, or exact with `--exact`).
    pub filters: Vec<String>,
    /// Filters must match the whole name.
    pub exact: bool,
    /// Names containing any of these are skipped.
    pub skip: Vec<String>,
    /// List evals instead of running them.
    pub list: bool,
    /// Run only `#[ignore]`d evals.
    pub ignored: bool,
    /// Run `#[ignore]`d evals too.
    pub include_ignored: bool,
    /// `--format` value (`pretty`, `terse`).
    pub format: Option<String>,
    /// Runs per eval.
    pub runs: Option<u32>,
    /// Evals at once.
    pub concurrency: Option<usize>,
    /// Strict mode.
    pub strict: bool,
    /// Only evals with any of these tags.
    pub tags: Vec<String>,
    /// Timeout per run.
    pub timeout: Option<Duration>,
    /// Write a JSONL report here.
    pub jsonl: Option<PathBuf>,
    /// Write a JUnit XML report here.
    pub junit: Option<PathBuf>,
    /// Write a Markdown summary here.
    pub markdown: Option<PathBuf>,
    /// Write an HTML report here.
    #[cfg(feature = "html")]
    #[cfg_attr(docsrs, doc(cfg(feature = "html")))]
    pub html: Option<PathBuf>,
    /// `--otlp-endpoint URL`: send each eval as an OpenTelemetry trace to this OTLP/HTTP
    /// endpoint (beats `[trace] export`).
    pub otlp_endpoint: Option<String>,
    /// Terse console output (libtest's `--quiet`).
    pub quiet: bool,
    /// `--nocapture` / `--show-output`: print every eval's report, passing ones too.
    pub show_output: bool,
    /// `--report`: run no eval; merge the results files at these paths (the arguments that
    /// are filters otherwise; empty for the crate's results directory) and write the reports.
    pub report: Option<Vec<PathBuf>>,
    /// `--combine` (report mode): combine every record as the shards of one run, instead of
    /// showing each eval's latest run.
    pub combine: bool,
    /// `--limit N`: only the first N cases of each dataset eval.
    pub limit: Option<usize>,
    /// `--sample N`: N cases of each dataset eval, drawn with `--seed`.
    pub sample: Option<usize>,
    /// `--seed S` for `--sample`; without it a seed is drawn and printed.
    pub seed: Option<u64>,
    /// `--baseline FILE`: compare this run (or, in report mode, the results) with a baseline
    /// file, show the comparison in every report, and exit 3 on a regression
    /// (`[compare] fail_on`).
    pub baseline: Option<PathBuf>,
    /// `--save-baseline FILE`: write the baseline of this run (or, in report mode, of the
    /// results) to FILE.
    pub save_baseline: Option<PathBuf>,
    /// `--rerun-failed`: run only the evals that failed in this suite's last run (read from
    /// its results file).
    pub rerun_failed: bool,
    /// `--resume`: continue this suite's last run (a killed one): the evals and dataset cases
    /// it finished keep their records, the rest run, and the run keeps its id.
    pub resume: bool,
    /// `--retry-errors N`: rerun a run that ended in an execution error (a timeout, the
    /// agent's or a judge's error such as a 5xx after the provider's own retries) up to N
    /// times; only the last attempt counts as a run for pass rates and pass@k.
    pub retry_errors: u32,
    /// `--merge` (report mode, `niceeval merge`): combine the shards of one run, checked
    /// against their run manifests (missing and duplicated evals, other commits or
    /// configurations).
    pub merge: bool,
    /// `--allow-mismatch` (with `--merge`): merge shards of different commits, configurations
    /// or niceeval versions anyway (missing and duplicated evals still fail).
    pub allow_mismatch: bool,
}

/// A bad command line.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ArgsError(String);

/// The help text, with the line of `--html` as given.
macro_rules! help {
    ($html:literal) => {
        concat!(
            "niceeval suite runner

USAGE: <test binary> [OPTIONS] [FILTERS...]

libtest options:
  --exact                 filters match whole eval names
  --skip FILTER           skip evals whose name contains FILTER (repeatable)
  --list                  list evals and exit
  --ignored               run only #[ignore]d evals
  --include-ignored       run #[ignore]d evals too
  --test-threads N        same as --concurrency
  --format pretty|terse   --list output (terse: names only)
  --nocapture, --show-output   print the report of every eval (passing ones too)
  --color WHEN, --report-time   accepted and ignored
  -q, --quiet             terse console: one character per eval, failures, result line

niceeval options:
  --runs N                runs per eval (beats NICEEVAL_RUNS, #[eval(runs)], niceeval.toml)
  --concurrency N         evals at once (default: [run] concurrency, else 4)
  --strict                soft assertions below threshold fail
  --tag TAG               only evals tagged TAG (repeatable: any of them)
  --timeout DURATION      timeout per run, e.g. 30s, 2m
  --limit N               only the first N cases of each dataset eval
  --sample N [--seed S]   N cases of each dataset eval, drawn with seed S: the same seed draws
                          the same cases (without --seed, one is drawn and printed)
  --jsonl PATH            write one JSON line per finished eval
  --junit PATH            write JUnit XML
  --markdown PATH         write a Markdown summary
  --otlp-endpoint URL     send each eval as an OpenTelemetry trace to this OTLP/HTTP endpoint
                          (beats [trace] export in niceeval.toml)
  --baseline FILE         compare with a baseline file: what was fixed, broke, got worse or
                          better (pass rates tested with Fisher's exact test), in every report;
                          exit 3 on a regression ([compare] fail_on in niceeval.toml)
  --save-baseline FILE    write this run's baseline (outcomes, pass rates, scores, metrics,
                          tokens; sorted, byte-identical when nothing changed) to FILE
  --rerun-failed          run only the evals that failed in the last run (from the results file)
  --resume                continue the last run (one that was killed): what it finished keeps
                          its records, the rest runs, under the same run id
  --retry-errors N        retry a run that ended in an execution error (timeout, agent or judge
                          error) up to N times; retries are not counted as runs for pass@k
",
            $html,
            "
report mode (runs no eval):
  --report [PATH...]      merge results files (JSONL files or directories of them; default:
                          target/niceeval/results, where `cargo test` and this runner write
                          them) and write the reports asked for (--jsonl, --junit, --markdown,
                          --html); PATHs are relative to the crate's directory under cargo test.
                          Each eval shows its latest run; evals from an earlier run than their
                          target's latest are named
  --combine               combine every record as the shards of one run (not only the latest)
  --merge                 --combine the shards of one run, checked against their run manifests:
                          missing or duplicated evals, and shards of other commits or
                          configurations, are errors (exit 2)
  --allow-mismatch        with --merge: merge shards of other commits or configurations anyway
  --baseline FILE, --save-baseline FILE   as above, for the results read
"
        )
    };
}

#[cfg(feature = "html")]
const HELP: &str = help!("  --html PATH             write a self-contained HTML report\n");
#[cfg(not(feature = "html"))]
const HELP: &str = help!("  --html PATH             (needs niceeval's `html` feature)\n");

/// Why `--html` is refused without the `html` feature.
#[cfg(not(feature = "html"))]
const HTML_NEEDS_FEATURE: &str =
    "--html needs niceeval's `html` feature; enable it in Cargo.toml (it is on by default)";

/// Every option [`Args::parse`] knows, for "did you mean".
const KNOWN: &[&str] = &[
    "--help",
    "--exact",
    "--skip",
    "--list",
    "--ignored",
    "--include-ignored",
    "--format",
    "--nocapture",
    "--show-output",
    "--no-capture",
    "--report-time",
    "--ensure-time",
    "--shuffle",
    "--force-run-in-process",
    "--exclude-should-panic",
    "--test",
    "--color",
    "--logfile",
    "--shuffle-seed",
    "--quiet",
    "--test-threads",
    "--concurrency",
    "--limit",
    "--sample",
    "--seed",
    "--runs",
    "--strict",
    "--tag",
    "--timeout",
    "--jsonl",
    "--junit",
    "--markdown",
    "--otlp-endpoint",
    "--html",
    "--combine",
    "--merge",
    "--allow-mismatch",
    "--baseline",
    "--save-baseline",
    "--rerun-failed",
    "--resume",
    "--retry-errors",
    "--report",
];

impl Args {
    /// The help text.
    pub fn help() -> &'static str {
        HELP
    }

    /// Parses arguments (without the program name). `Ok(None)` means `--help` was asked.
    ///
    /// ```
    /// use niceeval::__workspace::harness::Args;
    ///
    /// let args = Args::parse(["refund", "--exact", "--runs", "3", "--tag", "smoke"]).unwrap().unwrap();
    /// assert_eq!(args.filters, ["refund"]);
    /// assert!(args.exact);
    /// assert_eq!(args.runs, Some(3));
    /// assert!(Args::parse(["--bogus"]).unwrap_err().to_string().contains("--bogus"));
    /// ```
    pub fn parse<I, S>(args: I) -> Result<Option<Args>, ArgsError>
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        let mut out = Args::default();
        let mut iter = args.into_iter().map(Into::into);
        while let Some(arg) = iter.next() {
            let (flag, inline) = match arg.split_once('=') {
                Some((f, v)) if f.starts_with("--") => (f.to_string(), Some(v.to_string())),
                _ => (arg.clone(), None),
            };
            let mut value = |name: &str| -> Result<String, ArgsError> {
                inline
                    .clone()
                    .or_else(|| iter.next())
                    .ok_or_else(|| ArgsError(format!("{name} needs a value")))
            };
            match flag.as_str() {
                "-h" | "--help" => return Ok(None),
                "--exact" => out.exact = true,
                "--skip" => out.skip.push(value("--skip")?),
                "--list" => out.list = true,
                "--ignored" => out.ignored = true,
                "--include-ignored" => out.include_ignored = true,
                "--format" => {
                    let v = value("--format")?;
                    if !matches!(v.as_str(), "pretty" | "terse") {
                        return Err(ArgsError(format!(
                            "--format takes pretty or terse, got {v:?}"
                        )));
                    }
                    out.format = Some(v);
                }
                "--nocapture" | "--show-output" | "--no-capture" => out.show_output = true,
                "--report-time"
                | "--ensure-time"
                | "--shuffle"
                | "--force-run-in-process"
                | "--exclude-should-panic"
                | "--test" => {}
                "--color" | "--logfile" | "-Z" | "--shuffle-seed" => {
                    let _ = value(&flag)?;
                }
                "-q" | "--quiet" => out.quiet = true,
                "--test-threads" | "--concurrency" => {
                    let v = value(&flag)?;
                    let n = v.parse::<usize>().ok().filter(|n| *n > 0).ok_or_else(|| {
                        ArgsError(format!("{flag} takes a positive number, got {v:?}"))
                    })?;
                    out.concurrency = Some(n);
                }
                "--limit" | "--sample" => {
                    let v = value(&flag)?;
                    let n = v.parse::<usize>().ok().filter(|n| *n > 0).ok_or_else(|| {
                        ArgsError(format!(
                            "{flag} takes a positive number of cases, got {v:?}"
                        ))
                    })?;
                    if flag == "--limit" {
                        out.limit = Some(n);
                    } else {
                        out.sample = Some(n);
                    }
                }
                "--seed" => {
                    let v = value("--seed")?;
                    out.seed = Some(v.parse::<u64>().map_err(|_| {
                        ArgsError(format!("--seed takes a whole number, got {v:?}"))
                    })?);
                }
                "--runs" => {
                    let v = value("--runs")?;
                    out.runs = Some(v.parse::<u32>().ok().filter(|n| *n > 0).ok_or_else(|| {
                        ArgsError(format!("--runs takes a positive number, got {v:?}"))
                    })?);
                }
                "--strict" => out.strict = true,
                "--tag" => out.tags.push(value("--tag")?),
                "--timeout" => {
                    let v = value("--timeout")?;
                    out.timeout = Some(
                        crate::config::parse_duration(&v)
                            .map_err(|e| ArgsError(format!("--timeout: {e}")))?,
                    );
                }
                "--jsonl" => out.jsonl = Some(value("--jsonl")?.into()),
                "--junit" => out.junit = Some(value("--junit")?.into()),
                "--markdown" => out.markdown = Some(value("--markdown")?.into()),
                "--otlp-endpoint" => {
                    let url = value("--otlp-endpoint")?;
                    if !cfg!(feature = "otel") {
                        return Err(ArgsError(
                            "--otlp-endpoint needs niceeval's `otel` feature; enable it in Cargo.toml (it is on by default)".to_string(),
                        ));
                    }
                    if !(url.starts_with("http://") || url.starts_with("https://")) {
                        return Err(ArgsError(format!(
                            "--otlp-endpoint takes an http:// or https:// URL, got {url:?}"
                        )));
                    }
                    out.otlp_endpoint = Some(url);
                }
                #[cfg(feature = "html")]
                "--html" => out.html = Some(value("--html")?.into()),
                #[cfg(not(feature = "html"))]
                "--html" => return Err(ArgsError(HTML_NEEDS_FEATURE.to_string())),
                "--combine" => out.combine = true,
                "--merge" => {
                    out.merge = true;
                    out.combine = true;
                }
                "--allow-mismatch" => out.allow_mismatch = true,
                "--baseline" => out.baseline = Some(value("--baseline")?.into()),
                "--save-baseline" => out.save_baseline = Some(value("--save-baseline")?.into()),
                "--rerun-failed" => out.rerun_failed = true,
                "--resume" => out.resume = true,
                "--retry-errors" => {
                    let v = value("--retry-errors")?;
                    out.retry_errors = v.parse::<u32>().map_err(|_| {
                        ArgsError(format!(
                            "--retry-errors takes a whole number of retries (0 or more), got {v:?}"
                        ))
                    })?;
                }
                "--report" => {
                    if let Some(v) = inline {
                        out.filters.push(v);
                    }
                    out.report = Some(Vec::new());
                }
                other if other.starts_with('-') => {
                    let hint = crate::base::suggest::closest(other, KNOWN.iter().copied())
                        .map(|known| format!(" (did you mean {known}?)"))
                        .unwrap_or_default();
                    return Err(ArgsError(format!(
                        "unknown option {other}{hint}; run with --help to see the options"
                    )));
                }
                _ => out.filters.push(arg),
            }
        }
        if out.resume && out.rerun_failed {
            return Err(ArgsError(
                "--resume continues the last run, --rerun-failed starts a new one; give one of them"
                    .to_string(),
            ));
        }
        if out.limit.is_some() && out.sample.is_some() {
            return Err(ArgsError(
                "--limit and --sample both choose cases; give one of them".to_string(),
            ));
        }
        if let Some(paths) = &mut out.report {
            paths.extend(
                std::mem::take(&mut out.filters)
                    .into_iter()
                    .map(PathBuf::from),
            );
        }
        Ok(Some(out))
    }

    /// Whether `--format terse` was given.
    pub fn terse(&self) -> bool {
        self.format.as_deref() == Some("terse")
    }

    /// Whether an eval named `name` (libtest style, without the crate) with `tags` is selected
    /// by the filters, `--skip` and `--tag`.
    pub fn selects(&self, name: &str, tags: &[&str]) -> bool {
        let matches = |f: &String| {
            if self.exact {
                name == f
            } else {
                name.contains(f.as_str())
            }
        };
        (self.filters.is_empty() || self.filters.iter().any(matches))
            && !self.skip.iter().any(|s| {
                if self.exact {
                    name == s
                } else {
                    name.contains(s.as_str())
                }
            })
            && (self.tags.is_empty() || self.tags.iter().any(|t| tags.contains(&t.as_str())))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn libtest_and_niceeval_flags() {
        let a = Args::parse([
            "--skip",
            "slow",
            "--include-ignored",
            "--test-threads=3",
            "--format",
            "terse",
            "--list",
            "--strict",
            "--timeout",
            "2m",
            "--markdown",
            "r.md",
            "x",
            "y",
        ])
        .unwrap()
        .unwrap();
        assert_eq!(a.skip, ["slow"]);
        assert_eq!(a.concurrency, Some(3));
        assert_eq!(a.timeout, Some(Duration::from_secs(120)));
        assert_eq!(a.filters, ["x", "y"]);
        assert!(a.list && a.strict && a.include_ignored);
        assert_eq!(Args::parse(["--help"]).unwrap(), None);
    }

    #[cfg(feature = "html")]
    #[test]
    fn html() {
        let a = Args::parse(["--html", "r.html"]).unwrap().unwrap();
        assert_eq!(a.html, Some(PathBuf::from("r.html")));
    }

    #[cfg(not(feature = "html"))]
    #[test]
    fn html_without_the_feature_is_an_error_naming_it() {
        let e = Args::parse(["--html", "r.html"]).unwrap_err().to_string();
        assert!(e.contains("niceeval's `html` feature"), "{e}");
        assert!(Args::help().contains("--html PATH             (needs niceeval's `html` feature)"));
    }

    #[test]
    fn nocapture_and_show_output_show_every_report() {
        for flag in ["--nocapture", "--show-output", "--no-capture"] {
            let a = Args::parse([flag]).unwrap().unwrap();
            assert!(a.show_output, "{flag}");
        }
        assert!(!Args::parse(["x"]).unwrap().unwrap().show_output);
    }

    #[test]
    fn an_unknown_option_names_the_closest_known_one() {
        let e = Args::parse(["--exat"]).unwrap_err().to_string();
        assert!(
            e.contains("unknown option --exat (did you mean --exact?)"),
            "{e}"
        );
        let e = Args::parse(["--bogus"]).unwrap_err().to_string();
        assert!(
            e.starts_with("unknown option --bogus; run with --help"),
            "{e}"
        );
    }

    #[test]
    fn bad_values_are_errors() {
        assert!(Args::parse(["--runs", "0"]).is_err());
        assert!(
            Args::parse(["--runs"])
                .unwrap_err()
                .to_string()
                .contains("needs a value")
        );
        assert!(Args::parse(["--timeout", "soon"]).is_err());
    }

    #[test]
    fn report_mode_takes_the_other_arguments_as_paths() {
        let a = Args::parse(["a.jsonl", "--report", "dir", "--markdown", "out.md", "-q"])
            .unwrap()
            .unwrap();
        assert_eq!(
            a.report,
            Some(vec![PathBuf::from("a.jsonl"), PathBuf::from("dir")])
        );
        assert!(a.filters.is_empty());
        assert_eq!(a.markdown, Some(PathBuf::from("out.md")));
        assert!(a.quiet);
        let a = Args::parse(["--report=r.jsonl"]).unwrap().unwrap();
        assert_eq!(a.report, Some(vec![PathBuf::from("r.jsonl")]));
        let a = Args::parse(["--report"]).unwrap().unwrap();
        assert_eq!(a.report, Some(Vec::new()));
        assert_eq!(Args::parse(["x"]).unwrap().unwrap().report, None);
    }

    #[test]
    fn selection() {
        let a = Args::parse(["refund", "--skip", "slow", "--tag", "smoke"])
            .unwrap()
            .unwrap();
        assert!(a.selects("support::refund_flow", &["smoke"]));
        assert!(!a.selects("support::refund_flow", &[]));
        assert!(!a.selects("support::refund_slow", &["smoke"]));
        let exact = Args::parse(["a::b", "--exact"]).unwrap().unwrap();
        assert!(exact.selects("a::b", &[]));
        assert!(!exact.selects("a::bc", &[]));
    }

    #[test]
    fn baseline_flags() {
        let a = Args::parse([
            "--baseline",
            "ci/baseline.json",
            "--save-baseline=new.json",
            "--rerun-failed",
        ])
        .unwrap()
        .unwrap();
        assert_eq!(a.baseline, Some(PathBuf::from("ci/baseline.json")));
        assert_eq!(a.save_baseline, Some(PathBuf::from("new.json")));
        assert!(a.rerun_failed);
        assert!(
            Args::parse(["--baseline"])
                .unwrap_err()
                .to_string()
                .contains("needs a value")
        );
        let report = Args::parse(["--report", "dir", "--baseline", "b.json"])
            .unwrap()
            .unwrap();
        assert_eq!(report.report, Some(vec![PathBuf::from("dir")]));
        assert_eq!(report.baseline, Some(PathBuf::from("b.json")));
    }

    #[test]
    fn resume_and_retry_errors() {
        let a = Args::parse(["--resume", "--retry-errors", "2"])
            .unwrap()
            .unwrap();
        assert!(a.resume);
        assert_eq!(a.retry_errors, 2);
        assert_eq!(Args::parse(["x"]).unwrap().unwrap().retry_errors, 0);
        let bad = Args::parse(["--retry-errors", "-1"])
            .unwrap_err()
            .to_string();
        assert!(bad.contains("--retry-errors takes a whole number"), "{bad}");
        let both = Args::parse(["--resume", "--rerun-failed"])
            .unwrap_err()
            .to_string();
        assert!(both.contains("give one of them"), "{both}");
    }

    #[test]
    fn limit_sample_and_seed_choose_dataset_cases() {
        let a = Args::parse(["--limit", "5"]).unwrap().unwrap();
        assert_eq!((a.limit, a.sample, a.seed), (Some(5), None, None));
        let a = Args::parse(["--sample", "10", "--seed", "42"])
            .unwrap()
            .unwrap();
        assert_eq!((a.limit, a.sample, a.seed), (None, Some(10), Some(42)));
        let both = Args::parse(["--limit", "1", "--sample", "2"]).unwrap_err();
        assert!(both.to_string().contains("give one of them"), "{both}");
        let zero = Args::parse(["--limit", "0"]).unwrap_err();
        assert!(
            zero.to_string().contains("positive number of cases"),
            "{zero}"
        );
    }
}
