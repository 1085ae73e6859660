//! promptfoo's `eval` flags (promptfoo 0.123.1, `promptfoo eval --help`) on `niceeval eval`:
//! the table of every one, saying whether niceeval does the same or refuses it, and the
//! refusals, each naming what to use instead.

#[cfg(feature = "eval")]
use crate::cli::EvalArgs;

/// What `niceeval eval` does with one of promptfoo's flags.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Support {
    /// niceeval does the same; the text says how (its own flag, when it has another name).
    Works(&'static str),
    /// Refused: the text names what to use instead (or says there is nothing like it).
    Refused(&'static str),
}

/// One of promptfoo's `eval` flags.
#[derive(Debug, Clone, Copy)]
pub struct PromptfooFlag {
    /// Its names, long first (`--filter-first-n`, `-n`).
    pub names: &'static [&'static str],
    /// What niceeval does with it.
    pub support: Support,
}

const fn works(names: &'static [&'static str], how: &'static str) -> PromptfooFlag {
    PromptfooFlag {
        names,
        support: Support::Works(how),
    }
}

const fn refused(names: &'static [&'static str], instead: &'static str) -> PromptfooFlag {
    PromptfooFlag {
        names,
        support: Support::Refused(instead),
    }
}

/// Every flag of `promptfoo eval --help` (0.123.1), in its order, and `--verbose`.
pub const PROMPTFOO_FLAGS: &[PromptfooFlag] = &[
    works(&["--config", "-c"], "the suite file (repeatable)"),
    refused(
        &["--assertions", "-a"],
        "put the assertions in the config: `defaultTest: {assert: [...]}` or a test's `assert:`",
    ),
    refused(
        &["--prompts", "-p"],
        "list the prompts under `prompts:` in the config (file:// paths work); --filter-prompts REGEX picks among them",
    ),
    refused(
        &["--providers", "-r"],
        "list the providers under `providers:` in the config; --filter-providers REGEX picks among them",
    ),
    refused(
        &["--tests", "-t"],
        "name the tests file in the config: `tests: file://tests.csv`",
    ),
    refused(
        &["--vars", "-v"],
        "name the tests file in the config: `tests: file://tests.csv`; --var KEY=VALUE sets one variable",
    ),
    refused(
        &["--model-outputs"],
        "niceeval grades what a provider answers: put a provider in the config that gives those outputs",
    ),
    refused(
        &["--prompt-prefix"],
        "write the prefix into the prompts of the config",
    ),
    refused(
        &["--prompt-suffix"],
        "write the suffix into the prompts of the config",
    ),
    works(&["--var"], "defaultTest's vars: a test's own vars win"),
    works(
        &["--tag"],
        "niceeval's --tag TAG selects tagged cases; promptfoo's --tag KEY=VALUE (a label on the run) is refused",
    ),
    works(&["--max-concurrency", "-j"], "--concurrency N"),
    works(&["--repeat"], "--runs N"),
    refused(
        &["--delay"],
        "niceeval waits between no calls; -j 1 runs one case at a time",
    ),
    works(
        &["--no-cache"],
        "no cached judge answers (NICEEVAL_JUDGE_CACHE=off); model calls are never cached",
    ),
    refused(
        &["--remote"],
        "niceeval has no remote inference (red teaming is not part of it)",
    ),
    works(&["--filter-first-n", "-n"], "the first N tests"),
    works(&["--filter-pattern"], "tests whose description matches"),
    works(
        &["--filter-range"],
        "tests whose zero-based index is in START:END",
    ),
    works(&["--filter-prompts"], "prompts whose label matches"),
    works(
        &["--filter-providers", "--filter-targets"],
        "providers whose label or id matches",
    ),
    refused(
        &["--filter-sample"],
        "--sample N --seed S draws N cases (test × prompt × provider), the same ones for the same seed",
    ),
    refused(&["--filter-sample-seed"], "--seed S, with --sample N"),
    works(
        &["--filter-failing"],
        "the cases that failed or errored in an output file (.json) or results file (.jsonl); --rerun-failed reruns the last run's",
    ),
    works(
        &["--filter-failing-only"],
        "the cases whose assertions failed in FILE",
    ),
    works(&["--filter-errors-only"], "the cases that errored in FILE"),
    refused(
        &["--filter-metadata"],
        "--filter-pattern REGEX on the tests' descriptions, or --tag TAG",
    ),
    works(
        &["--output", "-o"],
        "by extension: .json .jsonl .csv .yaml .yml .html .xml .md (repeatable); .txt is refused",
    ),
    works(&["--table"], "the console draws the matrix of cases"),
    refused(
        &["--no-table"],
        "-q / --quiet: one character per case, then failures and the result line",
    ),
    refused(
        &["--table-cell-max-length"],
        "niceeval's matrix fits the console's width (COLUMNS sets it when not on a terminal)",
    ),
    refused(
        &["--share"],
        "niceeval shares nothing: -o report.html writes a self-contained page (or `niceeval view`)",
    ),
    works(&["--no-share"], "niceeval shares nothing"),
    works(
        &["--resume"],
        "continues the last run; promptfoo's --resume EVAL_ID is refused (niceeval resumes the last run only)",
    ),
    works(
        &["--retry-errors"],
        "niceeval's --retry-errors N retries errored runs N times; promptfoo's --retry-errors (no N) is refused naming --rerun-failed",
    ),
    refused(
        &["--no-write"],
        "niceeval always writes its results file; NICEEVAL_RESULTS_DIR=DIR sets where",
    ),
    works(&["--grader"], "defaultTest's options.provider"),
    refused(
        &["--suggest-prompts"],
        "niceeval writes no prompts; edit the config's `prompts:`",
    ),
    works(
        &["--watch", "-w"],
        "runs again when the config or a file beside it changes",
    ),
    refused(
        &["--extension", "-x"],
        "niceeval has no extension hooks; run commands before or after `niceeval eval` (its exit code says how it went)",
    ),
    refused(
        &["--description"],
        "the config's `description:` names the suite; a run has no description of its own",
    ),
    refused(
        &["--no-progress-bar"],
        "the status line shows only when stdout is a terminal: `niceeval eval ... | cat` goes without it",
    ),
    works(
        &["--env-file", "--env-path"],
        "variables already set are kept",
    ),
    refused(
        &["--verbose"],
        "--nocapture prints every case's report, passing ones too",
    ),
    works(&["--help", "-h"], "this help"),
];

/// What `niceeval eval --help` says after the options.
pub const EVAL_AFTER_HELP: &str = "\
promptfoo's other flags (-a, -p, -r, -t, -v, --delay, --share, --no-table, --filter-sample, \
--filter-metadata, ...) are refused, each naming what to use instead.
Exit codes: 0 passed, 101 a case failed, 2 bad command line or suite file, 3 regression \
against --baseline. niceeval.toml and the results file are the current directory's.";

/// The refusal of the first refused flag among `args` (`niceeval eval`'s arguments, before
/// `--`), naming what to use instead.
pub fn refusal(args: &[String]) -> Option<String> {
    for arg in args.iter().take_while(|a| *a != "--") {
        let flag = arg.split_once('=').map_or(arg.as_str(), |(f, _)| f);
        if !flag.starts_with('-') {
            continue;
        }
        let refused = PROMPTFOO_FLAGS.iter().find_map(|f| match f.support {
            Support::Refused(instead) if f.names.contains(&flag) => Some(instead),
            _ => None,
        });
        if let Some(instead) = refused {
            return Some(format!(
                "niceeval eval does not take promptfoo's {flag}: {instead}"
            ));
        }
    }
    None
}

/// The refusal of a flag niceeval takes in its own meaning but promptfoo's form of which it
/// does not: `--tag KEY=VALUE`, `--resume EVAL_ID`, `--retry-errors` without a number,
/// `-o FILE.txt`.
#[cfg(feature = "eval")]
pub fn refusal_of_forms(args: &EvalArgs) -> Option<String> {
    if let Some(tag) = args.tag.iter().find(|t| t.contains('=')) {
        return Some(format!(
            "niceeval eval does not take promptfoo's --tag {tag}: a run has no labels; niceeval's --tag TAG selects the cases tagged TAG"
        ));
    }
    if let Some(id) = args.resume.as_deref().filter(|id| !id.is_empty()) {
        return Some(format!(
            "niceeval eval does not take promptfoo's --resume {id}: --resume (without an id) continues the last run"
        ));
    }
    if args.retry_errors.as_deref() == Some("") {
        return Some(
            "niceeval eval does not take promptfoo's --retry-errors without a number: --rerun-failed reruns the cases that failed or errored in the last run; --retry-errors N retries a run that ends in an error up to N times".to_string(),
        );
    }
    if let Some(txt) = args
        .output
        .iter()
        .find(|p| p.extension().is_some_and(|e| e == "txt"))
    {
        return Some(format!(
            "niceeval eval does not write promptfoo's text table ({}): -o FILE.md writes a Markdown summary, -o FILE.csv a table",
            txt.display()
        ));
    }
    None
}
