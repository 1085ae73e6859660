//! AgentV's `*.eval.yaml` (filled in below).

use std::path::Path;

use super::{Suite, SuiteFileError};

/// Reads an AgentV eval file.
pub(crate) fn read(path: &Path, _text: &str) -> Result<Suite, SuiteFileError> {
    Err(SuiteFileError::File {
        file: path.display().to_string(),
        message: "AgentV files are not supported yet".into(),
    })
}
