//! Where each case of a suite file sits, read without making or running any: its eval id and
//! its cell of the file's tests × prompts × providers. `niceeval eval`'s promptfoo filters
//! (`--filter-pattern`, `--filter-first-n`, `--filter-failing`, ...) choose among them.

use std::path::Path;

use niceeval::data_eval::Deferred as _;
use niceeval::reporter::MatrixCell;

use crate::SuiteFileError;

/// One case of a suite file.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct CaseCell {
    /// Its eval id, `<module>::<file stem>::<case>` (as its report's `id`).
    pub id: String,
    /// Its test (1-based position and description), prompt and provider.
    pub cell: MatrixCell,
}

/// The cases of the suite file at `path`, named under `module` as [`crate::run_files`] names
/// them; `dir` is the directory the results and `niceeval.toml` belong to.
pub fn cells(path: &Path, module: &str, dir: &Path) -> Result<Vec<CaseCell>, SuiteFileError> {
    let (cases, _) = crate::file_cases::read(path, module, dir)?;
    Ok((0..cases.len())
        .filter_map(|index| {
            let case = cases.case(index)?;
            Some(CaseCell {
                id: format!("{}::{}", cases.module(), case.name),
                cell: case.matrix,
            })
        })
        .collect())
}
