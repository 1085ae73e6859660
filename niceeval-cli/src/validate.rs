//! `niceeval validate` (promptfoo's `validate`): each suite file read and checked as `niceeval
//! eval` would read it (`niceeval_suites::validate`), nothing run; exit 0 when every file is
//! fine, 2 with every problem listed.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use crate::cli::ValidateArgs;
use crate::env_file;

/// Checks the files of `args`.
pub fn validate(args: &ValidateArgs) -> ExitCode {
    if let Err(e) = env_file::load(&args.env_file) {
        eprintln!("error: {e}");
        return ExitCode::from(2);
    }
    // promptfoo's `validate config -c FILE` is `validate -c FILE`; its `validate target` calls
    // providers, which validating does not.
    let mut positional: &[PathBuf] = &args.files;
    if let Some(first) = positional.first().filter(|f| !f.exists()) {
        if first.as_os_str() == "config" {
            positional = &positional[1..];
        } else if first.as_os_str() == "target" {
            eprintln!(
                "error: niceeval validate does not call providers (promptfoo's `validate target`): `niceeval eval -n 1` runs the first test against every provider"
            );
            return ExitCode::from(2);
        }
    }
    let mut files: Vec<PathBuf> = args.config.iter().chain(positional).cloned().collect();
    if files.is_empty() {
        files.extend(
            ["promptfooconfig.yaml", "promptfooconfig.yml"]
                .into_iter()
                .map(PathBuf::from)
                .find(|p| p.is_file()),
        );
    }
    if files.is_empty() {
        eprintln!(
            "error: niceeval validate: no suite file (give -c promptfooconfig.yaml, or an AgentV EVAL.yaml or *.eval.yaml)"
        );
        return ExitCode::from(2);
    }
    let mut problems = 0;
    for file in &files {
        let checked = niceeval_suites::validate(file, Path::new("."));
        for notice in &checked.notices {
            eprintln!("note: {}: {notice}", file.display());
        }
        for problem in &checked.problems {
            eprintln!("error: {}: {problem}", file.display());
        }
        problems += checked.problems.len();
        if checked.is_ok() {
            println!("{}: ok, {} case(s)", file.display(), checked.cases);
        } else {
            println!("{}: {} problem(s)", file.display(), checked.problems.len());
        }
    }
    if problems == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(2)
    }
}
