//! The errors of suite files: [`SuiteFileError`], why a file cannot be run (every refusal of a
//! file at once), and [`CaseError`], why one case could not be prepared or run — each reaching
//! niceeval as the run's [`niceeval::Error::Data`] with its cause kept.

use std::sync::Arc;

use crate::agents::SendingError;
use crate::node::SnippetError;
use crate::prompt::PromptError;
use crate::select_best::SelectBestError;
use crate::template::TemplateError;

/// Why a suite file cannot be run.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum SuiteFileError {
    /// Something at a known place of a file.
    #[error("{file}:{line}:{column}: {message}")]
    At {
        /// The file.
        file: String,
        /// 1-based line.
        line: usize,
        /// 1-based column.
        column: usize,
        /// What is wrong and what is supported.
        message: String,
    },
    /// Something about a file as a whole.
    #[error("{file}: {message}")]
    File {
        /// The file.
        file: String,
        /// What is wrong.
        message: String,
    },
    /// Every refusal of a file, reported together (one a line).
    #[error("{}", several(.0))]
    Several(Vec<SuiteFileError>),
}

fn several(errors: &[SuiteFileError]) -> String {
    errors
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join("\nerror: ")
}

/// Why one case of a suite file could not be prepared or run: its run's execution error.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub(crate) enum CaseError {
    /// promptfoo's prompt function failed.
    #[error(transparent)]
    Prompt(#[from] PromptError),
    /// What the file's reading found the case cannot run with (a prompt that cannot be
    /// rendered, an item of an unknown type); the message says which and where.
    #[error("{0}")]
    Load(String),
    /// The prompt cannot be sent to the provider as written.
    #[error(transparent)]
    Sending(#[from] SendingError),
    /// The answers a `select-best` item compares could not be had.
    #[error(transparent)]
    SelectBest(Arc<SelectBestError>),
    /// `options.transform` failed.
    #[error("options.transform: {0}")]
    Transform(#[source] SnippetError),
    /// The provider's `transform` failed.
    #[error("the provider's transform: {0}")]
    ProviderTransform(#[source] SnippetError),
    /// `options.transform` made nothing (promptfoo's words).
    #[error("options.transform: Transform function did not return a value")]
    NoTransformValue,
    /// An item's own `transform` failed or made nothing: the test errors, as in promptfoo.
    #[error("the transform of `{kind}` failed: {why}")]
    ItemTransform {
        /// The item's type.
        kind: String,
        /// What went wrong.
        #[source]
        why: TransformFailure,
    },
    /// A `rubricPrompt` cannot be rendered.
    #[error("rubricPrompt: {0}")]
    RubricPrompt(#[source] TemplateError),
    /// A retrieval or conversation metric cannot be set up (no context, a failed
    /// `contextTransform`, a missing `query` var): the test errors, as in promptfoo.
    #[error("`{kind}`: {why}")]
    Metric {
        /// The item's type.
        kind: &'static str,
        /// What is missing or failed.
        #[source]
        why: crate::rag::RagError,
    },
    /// A case's vars or items, kept as JSON text, did not read back.
    #[error("a suite case's packed data: {0}")]
    Packed(#[source] serde_json::Error),
    /// A case kept deflated from when its file was read did not read back (a bug in
    /// niceeval).
    #[error("case {0} of the suite file, kept since the file was read, did not read back")]
    Unreadable(usize),
}

/// How an item's own `transform` went wrong.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub(crate) enum TransformFailure {
    /// It made `null` or `undefined` (promptfoo's words).
    #[error("Transform function did not return a value")]
    NoValue,
    /// It threw, or could not run.
    #[error(transparent)]
    Failed(SnippetError),
}

impl From<CaseError> for niceeval::Error {
    fn from(error: CaseError) -> Self {
        niceeval::Error::Data(Box::new(error))
    }
}
