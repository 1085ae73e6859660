//! `niceeval report`, `merge`, `compare` and `baseline save`: the suite runner's report mode
//! with the arguments `cli` made of each command line.

use std::path::Path;
use std::process::ExitCode;

use niceeval::__workspace::harness::{Args, EXIT_FAILED, EXIT_OK, run_report};

use crate::cli::RESULTS_DIR;

/// The runner's options read from `args`, or the exit code after printing why not.
pub fn runner_args(args: Vec<String>) -> Result<Args, ExitCode> {
    match Args::parse(args) {
        Ok(Some(args)) => Ok(args),
        Ok(None) => {
            println!("{}", Args::help());
            Err(ExitCode::SUCCESS)
        }
        Err(e) => {
            eprintln!("error: {e}");
            Err(ExitCode::from(2))
        }
    }
}

/// Runs the report mode with `args` (`--report` first): 0 all passed, 1 an eval failed, 2 bad
/// command line or nothing to read, 3 regression.
pub fn report(args: Vec<String>) -> ExitCode {
    let args = match runner_args(args) {
        Ok(args) => args,
        Err(code) => return code,
    };
    match run_report(&args, Path::new(RESULTS_DIR), Vec::new()) {
        EXIT_OK => ExitCode::SUCCESS,
        EXIT_FAILED => ExitCode::FAILURE,
        code => ExitCode::from(u8::try_from(code).unwrap_or(2)),
    }
}
