//! Checking a suite file without running it (`niceeval validate`, promptfoo's `validate`): the
//! file read as `niceeval eval` reads it (prompts, providers, tests and the files they name),
//! every case made, and every problem found listed: what stops the reading, unknown keys, and
//! cases that could not run (a prompt that cannot be rendered with a test's vars, an item of
//! an unknown type). No provider is called and nothing runs.

use std::path::Path;

use niceeval::data_eval::Deferred as _;

/// What checking one suite file found.
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct Validation {
    /// How many cases (test × prompt × provider) the file has.
    pub cases: usize,
    /// Every problem, one line each: the file would not run, or not as written.
    pub problems: Vec<String>,
    /// Keys accepted without being acted on, each with what niceeval does instead.
    pub notices: Vec<String>,
}

impl Validation {
    /// Whether the file has no problem.
    pub fn is_ok(&self) -> bool {
        self.problems.is_empty()
    }
}

/// Checks the suite file at `path`; `dir` is the directory `niceeval.toml` and the results
/// belong to (the current directory for `niceeval validate`).
pub fn validate(path: &Path, dir: &Path) -> Validation {
    let mut validation = Validation::default();
    let (cases, summary) = match crate::file_cases::read(path, "suite", dir) {
        Ok(read) => read,
        Err(e) => {
            validation.problems.push(e.to_string());
            return validation;
        }
    };
    validation.notices = summary.notices;
    validation.problems.extend(
        summary
            .ignored_keys
            .into_iter()
            .map(|key| format!("unknown key: {key}")),
    );
    validation.cases = cases.len();
    for index in 0..cases.len() {
        let name = cases.name(index).into_owned();
        match cases.case(index) {
            None => validation
                .problems
                .push(format!("case {}: it cannot be read back", index + 1)),
            Some(case) => {
                if let Some(error) = &case.load_error {
                    validation.problems.push(format!("{name}: {error}"));
                }
            }
        }
        if let Err(e) = cases.make(index) {
            validation.problems.push(format!("{name}: {e}"));
        }
    }
    validation
}
