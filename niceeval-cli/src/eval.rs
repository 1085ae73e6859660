//! `niceeval eval`: the suite files found on the command line (`-c FILE`, or `.yaml` / `.yml` /
//! `.json` paths that exist; else `promptfooconfig.yaml`), promptfoo's flags applied (env
//! files, `--var`, `--grader`, `--no-cache`, the test filters, `-o`, `--watch`), and the
//! cases run with the suite runner, its options parsed by the runner's own parser.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use niceeval::__workspace::harness::{EXIT_FAILED, EXIT_OK};

use crate::cli::EvalArgs;
use crate::output_files::Outputs;
use crate::selection::TestFilters;
use crate::{env_file, promptfoo_flags, report, watch};

/// A bad `niceeval eval` command line, found before anything runs.
#[derive(Debug, thiserror::Error)]
pub enum EvalError {
    /// No suite file given and none by default.
    #[error(
        "niceeval eval: no suite file (give -c promptfooconfig.yaml, or an AgentV EVAL.yaml or *.eval.yaml)"
    )]
    NoSuiteFile,
    /// `--var` without `=`.
    #[error("--var takes KEY=VALUE, got {0:?}")]
    Var(String),
    /// One of promptfoo's flags niceeval refuses.
    #[error("{0}")]
    Refused(String),
    /// `--env-file`.
    #[error(transparent)]
    EnvFile(#[from] env_file::EnvFileError),
    /// A test filter.
    #[error(transparent)]
    Selection(#[from] crate::selection::SelectionError),
    /// `-o`.
    #[error(transparent)]
    Output(#[from] crate::output_files::OutputError),
}

/// The suite files of `args` and what is left of its positional arguments (the filters).
fn suite_files(args: &EvalArgs) -> (Vec<PathBuf>, Vec<String>) {
    let mut files = args.config.clone();
    let mut filters = Vec::new();
    for arg in &args.filters {
        if (arg.ends_with(".yaml") || arg.ends_with(".yml") || arg.ends_with(".json"))
            && Path::new(arg).is_file()
        {
            files.push(PathBuf::from(arg));
        } else {
            filters.push(arg.clone());
        }
    }
    if files.is_empty() {
        for default in ["promptfooconfig.yaml", "promptfooconfig.yml"] {
            if Path::new(default).is_file() {
                files.push(PathBuf::from(default));
                break;
            }
        }
    }
    (files, filters)
}

/// `--var KEY=VALUE` pairs.
fn vars(args: &EvalArgs) -> Result<Vec<(String, String)>, EvalError> {
    args.vars
        .iter()
        .map(|v| match v.split_once('=') {
            Some((k, value)) if !k.trim().is_empty() => {
                Ok((k.trim().to_string(), value.to_string()))
            }
            _ => Err(EvalError::Var(v.clone())),
        })
        .collect()
}

/// Runs `niceeval eval`; `raw` is its arguments as given (for `--watch`'s reruns).
pub fn eval(args: EvalArgs, raw: &[String]) -> ExitCode {
    match run(args, raw) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(2)
        }
    }
}

fn run(args: EvalArgs, raw: &[String]) -> Result<ExitCode, EvalError> {
    if let Some(message) = promptfoo_flags::refusal_of_forms(&args) {
        return Err(EvalError::Refused(message));
    }
    env_file::load(&args.env_file)?;
    // The results file goes where `niceeval report` reads by default, under the current
    // directory, not beside wherever this binary was built.
    if std::env::var_os("NICEEVAL_RESULTS_DIR").is_none() {
        // SAFETY: nothing else runs yet: the runtime and its threads start later.
        unsafe { std::env::set_var("NICEEVAL_RESULTS_DIR", crate::cli::RESULTS_DIR) };
    }
    if args.no_cache {
        // SAFETY: as above.
        unsafe { std::env::set_var("NICEEVAL_JUDGE_CACHE", "off") };
    }
    let (files, filters) = suite_files(&args);
    if files.is_empty() {
        return Err(EvalError::NoSuiteFile);
    }
    // Each suite file's results stand until that file runs again: a results file (and run
    // target) of their own, not the one of the `niceeval` binary.
    niceeval::__workspace::results::name_after_suite_files(&files);
    let vars = vars(&args)?;
    if args.watch {
        let mut outputs = args.output.clone();
        outputs.extend(
            [
                &args.jsonl,
                &args.junit,
                &args.markdown,
                &args.html,
                &args.save_baseline,
            ]
            .into_iter()
            .flatten()
            .cloned(),
        );
        return Ok(watch::watch(raw, &files, &outputs));
    }
    let mut runner = args.runner_args();
    runner.extend(filters);
    let mut runner = match report::runner_args(runner) {
        Ok(runner) => runner,
        Err(code) => return Ok(code),
    };
    niceeval_suites::set_overrides(niceeval_suites::Overrides::new(vars, args.grader.clone()));
    if let Some(test_filters) = TestFilters::of(&args)? {
        test_filters.apply(&files, &mut runner)?;
    }
    let outputs = Outputs::plan(&args.output, &mut runner)?;
    let extra = outputs
        .reporter(files.first().map(PathBuf::as_path))
        .into_iter()
        .collect();
    let code =
        niceeval_suites::run_files(&files, "suite", Path::new("."), runner, Vec::new(), extra);
    outputs.finish()?;
    Ok(match code {
        EXIT_OK => ExitCode::SUCCESS,
        EXIT_FAILED => ExitCode::from(101),
        code => ExitCode::from(u8::try_from(code).unwrap_or(2)),
    })
}
