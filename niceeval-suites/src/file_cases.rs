//! A suite file's cases as the suite runner takes them: data evals made one at a time, each
//! when its turn to run comes ([`niceeval::data_eval::Deferred`]), named
//! `<module>::<file stem>::<case>`, with the file's `repeat` and workspace. A promptfoo file's
//! cases wait as deflated records ([`crate::promptfoo::StoredCases`]); an AgentV file's, few,
//! as they were built.

use std::borrow::Cow;
use std::path::Path;

use niceeval::Error;
use niceeval::data_eval::{Deferred, Made, Place};
use niceeval::reporter::MatrixCell;

use crate::errors::CaseError;
use crate::{SuiteCase, SuiteFileError, SuiteSummary, promptfoo};

/// The cases of one suite file.
pub(crate) struct FileCases {
    /// `<module>::<file stem>`.
    module: String,
    /// The file as reports show it: relative to `dir` when it is under it.
    shown: String,
    dir: String,
    workspace: Option<String>,
    repeat: Option<u32>,
    cases: Cases,
}

enum Cases {
    Built(Vec<SuiteCase>),
    Stored(Box<promptfoo::StoredCases>),
}

/// Reads the suite file at `path` (AgentV or promptfoo, see [`crate::load`]) into its cases;
/// `dir` is the directory the results and `niceeval.toml` belong to.
pub(crate) fn read(
    path: &Path,
    module: &str,
    dir: &Path,
) -> Result<(FileCases, SuiteSummary), SuiteFileError> {
    let absolute = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    let suite = crate::load(&absolute)?;
    // Named as a Rust eval's file is: relative, here to `dir` (which the engine joins it to
    // again), when the file is under it.
    let base = std::path::absolute(dir).unwrap_or_else(|_| dir.to_path_buf());
    let shown = absolute
        .strip_prefix(&base)
        .unwrap_or(path)
        .display()
        .to_string();
    let cases = FileCases {
        module: format!("{module}::{}", crate::stem(path).replace('-', "_")),
        shown,
        dir: dir.display().to_string(),
        workspace: suite.workspace.as_ref().map(|w| w.display().to_string()),
        repeat: suite.repeat,
        cases: match suite.stored {
            Some(stored) => Cases::Stored(Box::new(stored)),
            None => Cases::Built(suite.cases),
        },
    };
    let summary = SuiteSummary {
        concurrency: suite.concurrency,
        output_paths: suite.output_paths,
        notices: suite.notices,
        ignored_keys: suite.ignored_keys,
    };
    Ok((cases, summary))
}

impl FileCases {
    /// The case at `index`, as read (`niceeval validate` looks at it without running it).
    pub(crate) fn case(&self, index: usize) -> Option<SuiteCase> {
        match &self.cases {
            Cases::Built(cases) => cases.get(index).cloned(),
            Cases::Stored(cases) => cases.case(index),
        }
    }
}

impl Deferred for FileCases {
    fn len(&self) -> usize {
        match &self.cases {
            Cases::Built(cases) => cases.len(),
            Cases::Stored(cases) => cases.len(),
        }
    }

    fn module(&self) -> &str {
        &self.module
    }

    fn dir(&self) -> &str {
        &self.dir
    }

    fn name(&self, index: usize) -> Cow<'_, str> {
        Cow::Borrowed(match &self.cases {
            Cases::Built(cases) => cases.get(index).map_or("", |c| c.name.as_str()),
            Cases::Stored(cases) => cases.name(index),
        })
    }

    fn make(&self, index: usize) -> Result<Made, Error> {
        let case = match &self.cases {
            Cases::Built(cases) => cases.get(index).cloned(),
            Cases::Stored(cases) => cases.case(index),
        };
        let mut case = case.ok_or(CaseError::Unreadable(index))?;
        // What the definition keeps of the case (its matrix cell, its description) moves there.
        let empty = || (0, String::new());
        let matrix = std::mem::replace(
            &mut case.matrix,
            MatrixCell::new(0, String::new(), empty(), empty()),
        );
        let description = std::mem::take(&mut case.position);
        let place = Place::new(
            case.name.clone(),
            self.module.clone(),
            self.shown.clone(),
            u32::try_from(case.line).unwrap_or(u32::MAX),
            self.dir.clone(),
        )
        .description(description)
        .runs(self.repeat)
        .workspace(self.workspace.clone())
        .matrix(matrix);
        Ok(Made::new(place, case))
    }
}
