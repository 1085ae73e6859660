//! The `niceeval` command line as clap types: the subcommands, their options and help texts,
//! and what each report-mode subcommand hands the suite runner (its arguments, for
//! `niceeval::__workspace::harness::Args::parse`, which stays the one parser of the runner's
//! options).

use std::path::PathBuf;

use clap::{Args as ClapArgs, Parser, Subcommand};

/// Where results files are read from by default.
pub const RESULTS_DIR: &str = "target/niceeval/results";

/// `niceeval`: runs promptfoo and AgentV suite files, merges niceeval results files and writes
/// reports from them.
#[derive(Debug, Parser)]
#[command(
    name = "niceeval",
    version,
    about = "Runs promptfoo and AgentV suite files; merges niceeval results files and reports on them.",
    long_about = None,
    after_help = "PATH is a results file (JSONL) or a directory of them; default: target/niceeval/results.\n\
                  Exit codes: 0 passed, 1 (report) or 101 (eval) an eval failed, 2 bad command line or \
                  nothing to read, 3 regression against a baseline.\n\
                  Run `niceeval <COMMAND> --help` for a command's options.",
    subcommand_required = false,
    arg_required_else_help = false
)]
pub struct Cli {
    /// The subcommand; none prints the help.
    #[command(subcommand)]
    pub command: Option<Command>,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run a promptfoo config or AgentV eval file (promptfoo's `eval` flags work, or say what
    /// to use instead).
    Eval(Box<EvalArgs>),
    /// Check suite files without running them: exit 0, or 2 listing every problem.
    Validate(ValidateArgs),
    /// Summarize results files (each eval's latest run) and write reports.
    Report(ReportArgs),
    /// Merge the shards of one run (checked against their run manifests) and write reports.
    Merge(MergeArgs),
    /// Baselines: `niceeval baseline save FILE`.
    #[command(subcommand)]
    Baseline(BaselineCommand),
    /// Compare results with a baseline (`niceeval report --baseline BASELINE`).
    Compare(CompareArgs),
    /// Open the viewer: served live on 127.0.0.1, or one self-contained HTML page (`--out`).
    View(ViewArgs),
    /// The runs the history recorded, or one eval's trend across them.
    #[cfg(feature = "history")]
    History(crate::history::HistoryArgs),
    /// Print a shell's completion script: `source <(niceeval completions bash)`.
    Completions(CompletionsArgs),
    /// Add an eval suite to a crate (or make a new crate with one) and print the command that
    /// runs it.
    #[cfg(feature = "init")]
    Init(crate::init::InitArgs),
}

/// The reports every report-mode subcommand can write, and how the console shows them.
#[derive(Debug, Clone, Default, ClapArgs)]
pub struct ReportFiles {
    /// Write the results as JSONL (with `merge`: the merged results file).
    #[arg(long, value_name = "FILE")]
    pub jsonl: Option<PathBuf>,
    /// Write JUnit XML.
    #[arg(long, value_name = "FILE")]
    pub junit: Option<PathBuf>,
    /// Write a Markdown summary.
    #[arg(long, value_name = "FILE")]
    pub markdown: Option<PathBuf>,
    /// Write a self-contained HTML report.
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
    /// One character per eval on the console, then failures and the result line.
    #[arg(short, long)]
    pub quiet: bool,
    /// Print every eval's report, passing ones too.
    #[arg(long, visible_alias = "show-output")]
    pub nocapture: bool,
}

impl ReportFiles {
    fn push(&self, out: &mut Vec<String>) {
        push_path(out, "--jsonl", self.jsonl.as_ref());
        push_path(out, "--junit", self.junit.as_ref());
        push_path(out, "--markdown", self.markdown.as_ref());
        push_path(out, "--html", self.html.as_ref());
        push_flag(out, "--quiet", self.quiet);
        push_flag(out, "--nocapture", self.nocapture);
    }
}

/// `niceeval report`.
#[derive(Debug, Clone, ClapArgs)]
#[command(
    after_help = "Exits 1 when any eval failed, 2 when the command line is wrong or there is nothing to read, 3 on a regression ([compare] fail_on in niceeval.toml) with --baseline."
)]
pub struct ReportArgs {
    /// The reports to write.
    #[command(flatten)]
    pub files: ReportFiles,
    /// Merge every record as the shards of one run, not only each eval's latest run.
    #[arg(long)]
    pub combine: bool,
    /// Compare with a baseline file (fixed, broke, worse, better) in every report.
    #[arg(long, value_name = "FILE")]
    pub baseline: Option<PathBuf>,
    /// Write the results' baseline (sorted, byte-identical when nothing changed).
    #[arg(long, value_name = "FILE")]
    pub save_baseline: Option<PathBuf>,
    /// Results files or directories of them [default: target/niceeval/results].
    #[arg(value_name = "PATH")]
    pub paths: Vec<PathBuf>,
}

impl ReportArgs {
    /// The runner's arguments in report mode.
    pub fn runner_args(&self) -> Vec<String> {
        let mut out = vec!["--report".to_string()];
        self.files.push(&mut out);
        push_flag(&mut out, "--combine", self.combine);
        push_path(&mut out, "--baseline", self.baseline.as_ref());
        push_path(&mut out, "--save-baseline", self.save_baseline.as_ref());
        out.extend(self.paths.iter().map(|p| p.display().to_string()));
        out
    }
}

/// `niceeval merge`.
#[derive(Debug, Clone, ClapArgs)]
#[command(
    after_help = "Checks the shards against the run manifests beside them: every expected eval reported exactly once, one commit, one configuration, one niceeval version. Exits 2 naming what is missing, duplicated or different."
)]
pub struct MergeArgs {
    /// Merge shards of other commits, configurations or niceeval versions anyway.
    #[arg(long)]
    pub allow_mismatch: bool,
    /// The report options of `niceeval report`.
    #[command(flatten)]
    pub report: ReportArgs,
}

impl MergeArgs {
    /// The runner's arguments in report mode, merging.
    pub fn runner_args(&self) -> Vec<String> {
        let mut out = self.report.runner_args();
        out.insert(1, "--merge".to_string());
        push_flag(&mut out, "--allow-mismatch", self.allow_mismatch);
        out
    }
}

/// `niceeval baseline ...`.
#[derive(Debug, Subcommand)]
pub enum BaselineCommand {
    /// Write the baseline of the results to FILE (= `niceeval report --quiet --save-baseline
    /// FILE`); commit it.
    Save(BaselineSaveArgs),
}

/// `niceeval baseline save`.
#[derive(Debug, Clone, ClapArgs)]
pub struct BaselineSaveArgs {
    /// The baseline file to write.
    #[arg(value_name = "FILE")]
    pub file: PathBuf,
    /// Merge every record as the shards of one run.
    #[arg(long)]
    pub combine: bool,
    /// Results files or directories of them [default: target/niceeval/results].
    #[arg(value_name = "PATH")]
    pub paths: Vec<PathBuf>,
}

impl BaselineSaveArgs {
    /// The runner's arguments in report mode.
    pub fn runner_args(&self) -> Vec<String> {
        let mut out: Vec<String> = vec!["--report".to_string(), "--quiet".to_string()];
        push_path(&mut out, "--save-baseline", Some(&self.file));
        push_flag(&mut out, "--combine", self.combine);
        out.extend(self.paths.iter().map(|p| p.display().to_string()));
        out
    }
}

/// `niceeval compare`.
#[derive(Debug, Clone, ClapArgs)]
#[command(
    after_help = "Exits 3 on a regression that [compare] fail_on in niceeval.toml names, 1 when an eval failed."
)]
pub struct CompareArgs {
    /// The baseline file to compare with.
    #[arg(value_name = "BASELINE")]
    pub baseline: PathBuf,
    /// The reports to write.
    #[command(flatten)]
    pub files: ReportFiles,
    /// Merge every record as the shards of one run.
    #[arg(long)]
    pub combine: bool,
    /// Also write the results' baseline.
    #[arg(long, value_name = "FILE")]
    pub save_baseline: Option<PathBuf>,
    /// Results files or directories of them [default: target/niceeval/results].
    #[arg(value_name = "PATH")]
    pub paths: Vec<PathBuf>,
}

impl CompareArgs {
    /// The runner's arguments in report mode, with the baseline.
    pub fn runner_args(&self) -> Vec<String> {
        let report = ReportArgs {
            files: self.files.clone(),
            combine: self.combine,
            baseline: Some(self.baseline.clone()),
            save_baseline: self.save_baseline.clone(),
            paths: self.paths.clone(),
        };
        report.runner_args()
    }
}

/// `niceeval view`.
#[derive(Debug, Clone, ClapArgs)]
#[command(
    after_help = "Without --out (or --then): serves the viewer on 127.0.0.1 at a URL with a random token, live (evals show as a running suite writes them), until Ctrl-C. With --out: writes the one-file page. Opens the page with xdg-open (open on macOS) where there is a display; else, or with --no-open, prints its URL or path. Exits 0 when the page was written, whatever the evals' outcomes; 2 when it could not be."
)]
pub struct ViewArgs {
    /// Write the one-file page here instead of serving it.
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// The server's port on 127.0.0.1 (default: one the OS picks).
    #[arg(long, value_name = "N")]
    pub port: Option<u16>,
    /// Print the page's URL or path instead of opening it.
    #[arg(long)]
    pub no_open: bool,
    /// Results of an earlier run (files or directories): each eval's reply, score and
    /// assertions then and now side by side.
    #[arg(long, value_name = "PATH")]
    pub then: Vec<PathBuf>,
    /// Merge every record as the shards of one run.
    #[arg(long)]
    pub combine: bool,
    /// Compare with a baseline file on the page.
    #[arg(long, value_name = "FILE")]
    pub baseline: Option<PathBuf>,
    /// Results files or directories of them [default: target/niceeval/results].
    #[arg(value_name = "PATH")]
    pub paths: Vec<PathBuf>,
}

/// `niceeval completions`.
#[derive(Debug, Clone, ClapArgs)]
#[command(
    after_help = "bash: source <(niceeval completions bash)\nzsh: niceeval completions zsh > \"${fpath[1]}/_niceeval\"\nfish: niceeval completions fish > ~/.config/fish/completions/niceeval.fish\nPowerShell: niceeval completions powershell | Out-String | Invoke-Expression"
)]
pub struct CompletionsArgs {
    /// The shell.
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

/// `niceeval validate`.
#[derive(Debug, Clone, ClapArgs)]
#[command(
    after_help = "Reads each file as `niceeval eval` would (prompts, providers, tests and the files they name, every case made), runs nothing and calls no model. Exits 0 when every file is fine, 2 listing every problem (unknown keys included)."
)]
pub struct ValidateArgs {
    /// A suite file (promptfoo config or AgentV eval file) [default: promptfooconfig.yaml].
    #[arg(short, long = "config", value_name = "FILE")]
    pub config: Vec<PathBuf>,
    /// promptfoo's `--env-file`: environment variables to load first (repeatable, or
    /// comma-separated).
    #[arg(long, visible_alias = "env-path", value_name = "FILE")]
    pub env_file: Vec<String>,
    /// More suite files.
    #[arg(value_name = "FILE")]
    pub files: Vec<PathBuf>,
}

/// `niceeval eval`: the suite files, promptfoo's flags niceeval runs, and the runner's own
/// options (handed to the runner's parser).
#[derive(Debug, Clone, Default, ClapArgs)]
#[command(after_help = crate::promptfoo_flags::EVAL_AFTER_HELP)]
pub struct EvalArgs {
    /// A promptfoo config or AgentV eval file (repeatable) [default: promptfooconfig.yaml].
    #[arg(
        short,
        long = "config",
        value_name = "FILE",
        help_heading = "Suite files"
    )]
    pub config: Vec<PathBuf>,
    /// Name filters (substring of `<file stem>::<test>`), or suite files (.yaml/.yml/.json
    /// paths that exist).
    #[arg(value_name = "FILTER")]
    pub filters: Vec<String>,

    /// Write a report, by extension: .json (promptfoo's output file), .jsonl (niceeval's
    /// results records), .csv, .yaml/.yml, .html (the viewer's page), .xml (JUnit), .md.
    /// Repeatable.
    #[arg(
        short,
        long = "output",
        value_name = "FILE",
        help_heading = "promptfoo's flags"
    )]
    pub output: Vec<PathBuf>,
    /// Runs per case (promptfoo's --repeat; niceeval's --runs).
    #[arg(
        long,
        visible_alias = "repeat",
        value_name = "N",
        help_heading = "promptfoo's flags"
    )]
    pub runs: Option<String>,
    /// Cases at once [default: evaluateOptions.maxConcurrency, else 4].
    #[arg(
        short = 'j',
        long = "concurrency",
        visible_aliases = ["max-concurrency", "test-threads"],
        value_name = "N",
        help_heading = "promptfoo's flags"
    )]
    pub concurrency: Option<String>,
    /// Only the tests whose description matches this regular expression.
    #[arg(long, value_name = "REGEX", help_heading = "promptfoo's flags")]
    pub filter_pattern: Option<String>,
    /// Only the first N tests (each with every prompt and provider).
    #[arg(
        short = 'n',
        long,
        value_name = "N",
        help_heading = "promptfoo's flags"
    )]
    pub filter_first_n: Option<usize>,
    /// Only the tests whose zero-based index is in START:END (END excluded; either may be left
    /// out).
    #[arg(long, value_name = "START:END", help_heading = "promptfoo's flags")]
    pub filter_range: Option<String>,
    /// Only the prompts whose label matches this regular expression.
    #[arg(long, value_name = "REGEX", help_heading = "promptfoo's flags")]
    pub filter_prompts: Option<String>,
    /// Only the providers whose label or id matches this regular expression.
    #[arg(
        long,
        visible_alias = "filter-targets",
        value_name = "REGEX",
        help_heading = "promptfoo's flags"
    )]
    pub filter_providers: Option<String>,
    /// Only the cases that failed or errored in an output file (-o FILE.json, promptfoo's or
    /// niceeval's) or a results file (.jsonl).
    #[arg(long, value_name = "FILE", help_heading = "promptfoo's flags")]
    pub filter_failing: Option<PathBuf>,
    /// Only the cases whose assertions failed (not errors) in FILE.
    #[arg(long, value_name = "FILE", help_heading = "promptfoo's flags")]
    pub filter_failing_only: Option<PathBuf>,
    /// Only the cases that errored in FILE.
    #[arg(long, value_name = "FILE", help_heading = "promptfoo's flags")]
    pub filter_errors_only: Option<PathBuf>,
    /// Set a variable of every test (defaultTest's vars: a test's own vars win). Repeatable.
    #[arg(
        long = "var",
        value_name = "KEY=VALUE",
        help_heading = "promptfoo's flags"
    )]
    pub vars: Vec<String>,
    /// Load environment variables from a .env file first (repeatable, or comma-separated);
    /// variables already set are kept.
    #[arg(
        long,
        visible_alias = "env-path",
        value_name = "FILE",
        help_heading = "promptfoo's flags"
    )]
    pub env_file: Vec<String>,
    /// The grader of every model-graded item that names none (defaultTest's
    /// options.provider), e.g. openai:gpt-4.1.
    #[arg(long, value_name = "PROVIDER", help_heading = "promptfoo's flags")]
    pub grader: Option<String>,
    /// Read and write no cached judge answers (model calls are never cached).
    #[arg(long, help_heading = "promptfoo's flags")]
    pub no_cache: bool,
    /// Run again whenever the suite file or a file beside it changes.
    #[arg(short, long, help_heading = "promptfoo's flags")]
    pub watch: bool,
    /// Accepted: the console draws the matrix of cases (quiet it with -q).
    #[arg(long, help_heading = "promptfoo's flags")]
    pub table: bool,
    /// Accepted: niceeval shares nothing.
    #[arg(long, help_heading = "promptfoo's flags")]
    pub no_share: bool,
    /// Continue the last run (one that was killed); promptfoo's eval id is refused.
    #[arg(long, value_name = "EVAL_ID", num_args = 0..=1, default_missing_value = "", help_heading = "promptfoo's flags")]
    pub resume: Option<String>,
    /// Retry a run that ended in an execution error up to N times (without N: promptfoo's
    /// meaning, refused naming --rerun-failed).
    #[arg(long, value_name = "N", num_args = 0..=1, default_missing_value = "", help_heading = "promptfoo's flags")]
    pub retry_errors: Option<String>,

    /// Filters match whole names.
    #[arg(long, help_heading = "Runner options")]
    pub exact: bool,
    /// Skip the cases whose name contains FILTER (repeatable).
    #[arg(long, value_name = "FILTER", help_heading = "Runner options")]
    pub skip: Vec<String>,
    /// List the cases and exit.
    #[arg(long, help_heading = "Runner options")]
    pub list: bool,
    /// --list output: pretty or terse (names only).
    #[arg(long, value_name = "FORMAT", help_heading = "Runner options")]
    pub format: Option<String>,
    /// Print every case's report, passing ones too.
    #[arg(long, visible_aliases = ["show-output", "no-capture"], help_heading = "Runner options")]
    pub nocapture: bool,
    /// One character per case, then failures and the result line.
    #[arg(short, long, help_heading = "Runner options")]
    pub quiet: bool,
    /// Soft assertions below their threshold fail; unknown keys of the file are errors.
    #[arg(long, help_heading = "Runner options")]
    pub strict: bool,
    /// Only the cases tagged TAG (repeatable; promptfoo's --tag KEY=VALUE is refused).
    #[arg(long, value_name = "TAG", help_heading = "Runner options")]
    pub tag: Vec<String>,
    /// Timeout per run, e.g. 30s, 2m.
    #[arg(long, value_name = "DURATION", help_heading = "Runner options")]
    pub timeout: Option<String>,
    /// Only the first N cases of each file.
    #[arg(long, value_name = "N", help_heading = "Runner options")]
    pub limit: Option<String>,
    /// N cases of each file, drawn with --seed.
    #[arg(long, value_name = "N", help_heading = "Runner options")]
    pub sample: Option<String>,
    /// The seed of --sample.
    #[arg(long, value_name = "S", help_heading = "Runner options")]
    pub seed: Option<String>,
    /// Write one JSON line per finished case (niceeval's results records).
    #[arg(long, value_name = "FILE", help_heading = "Runner options")]
    pub jsonl: Option<PathBuf>,
    /// Write JUnit XML.
    #[arg(long, value_name = "FILE", help_heading = "Runner options")]
    pub junit: Option<PathBuf>,
    /// Write a Markdown summary.
    #[arg(long, value_name = "FILE", help_heading = "Runner options")]
    pub markdown: Option<PathBuf>,
    /// Write a self-contained HTML report.
    #[arg(long, value_name = "FILE", help_heading = "Runner options")]
    pub html: Option<PathBuf>,
    /// Compare with a baseline file; exit 3 on a regression ([compare] fail_on).
    #[arg(long, value_name = "FILE", help_heading = "Runner options")]
    pub baseline: Option<PathBuf>,
    /// Write this run's baseline to FILE.
    #[arg(long, value_name = "FILE", help_heading = "Runner options")]
    pub save_baseline: Option<PathBuf>,
    /// Run only the cases that failed in the last run.
    #[arg(long, help_heading = "Runner options")]
    pub rerun_failed: bool,
}

impl EvalArgs {
    /// The runner's own options, for `Args::parse` (promptfoo's flags are handled apart).
    #[cfg(feature = "eval")]
    pub fn runner_args(&self) -> Vec<String> {
        let mut out = Vec::new();
        let value = |out: &mut Vec<String>, flag: &str, v: Option<&String>| {
            if let Some(v) = v {
                out.push(flag.to_string());
                out.push(v.clone());
            }
        };
        value(&mut out, "--runs", self.runs.as_ref());
        value(&mut out, "--concurrency", self.concurrency.as_ref());
        push_flag(&mut out, "--exact", self.exact);
        for skip in &self.skip {
            out.extend(["--skip".to_string(), skip.clone()]);
        }
        push_flag(&mut out, "--list", self.list);
        value(&mut out, "--format", self.format.as_ref());
        push_flag(&mut out, "--nocapture", self.nocapture);
        push_flag(&mut out, "--quiet", self.quiet);
        push_flag(&mut out, "--strict", self.strict);
        for tag in &self.tag {
            out.extend(["--tag".to_string(), tag.clone()]);
        }
        value(&mut out, "--timeout", self.timeout.as_ref());
        value(&mut out, "--limit", self.limit.as_ref());
        value(&mut out, "--sample", self.sample.as_ref());
        value(&mut out, "--seed", self.seed.as_ref());
        push_path(&mut out, "--jsonl", self.jsonl.as_ref());
        push_path(&mut out, "--junit", self.junit.as_ref());
        push_path(&mut out, "--markdown", self.markdown.as_ref());
        push_path(&mut out, "--html", self.html.as_ref());
        push_path(&mut out, "--baseline", self.baseline.as_ref());
        push_path(&mut out, "--save-baseline", self.save_baseline.as_ref());
        push_flag(&mut out, "--rerun-failed", self.rerun_failed);
        if self.resume.as_deref() == Some("") {
            out.push("--resume".to_string());
        }
        if let Some(n) = self.retry_errors.as_ref().filter(|n| !n.is_empty()) {
            out.extend(["--retry-errors".to_string(), n.clone()]);
        }
        out
    }
}

fn push_flag(out: &mut Vec<String>, flag: &str, on: bool) {
    if on {
        out.push(flag.to_string());
    }
}

fn push_path(out: &mut Vec<String>, flag: &str, path: Option<&PathBuf>) {
    if let Some(path) = path {
        out.push(flag.to_string());
        out.push(path.display().to_string());
    }
}

/// The completion script of `shell` for the `niceeval` command, written to `out`.
pub fn completions(shell: clap_complete::Shell, out: &mut dyn std::io::Write) {
    let mut command = <Cli as clap::CommandFactory>::command();
    clap_complete::generate(shell, &mut command, "niceeval", out);
}
