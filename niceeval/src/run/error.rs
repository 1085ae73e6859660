//! The crate's error type: what can stop an eval body, fail a turn, or break configuration.

/// Everything that can go wrong in an eval body (and so be propagated with `?`).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The agent under test failed the turn.
    #[error("agent {agent} failed: {message}")]
    Agent {
        /// The agent's name.
        agent: String,
        /// What it said.
        message: String,
    },
    /// `t.send` was called but the eval has no agent.
    #[error(
        "eval {eval} has no agent: add `#[eval(agent = my_agent)]` (a `fn() -> impl Agent`) or an `[agent]` section in niceeval.toml"
    )]
    NoAgent {
        /// The eval's id.
        eval: String,
    },
    /// `t.respond` was called while no turn was waiting for input.
    #[error(
        "t.respond was called but the last turn is not waiting for input (no `input.requested` event); send a message with t.send instead"
    )]
    NotParked,
    /// A `t.require` assertion did not pass; the body stops here. Not an execution error: the
    /// failed assertion decides the outcome.
    #[error("required assertion {name} did not pass: {reason}")]
    Required {
        /// The assertion's name.
        name: String,
        /// Why it did not pass.
        reason: String,
    },
    /// `t.skip` was called; the body stops here and the eval is skipped.
    #[error("skipped: {0}")]
    Skipped(String),
    /// `niceeval.toml` or an environment override is invalid.
    #[error(transparent)]
    Config(#[from] crate::config::ConfigError),
    /// An invalid regular expression.
    #[error("invalid regular expression: {0}")]
    Regex(#[from] regex::Error),
    /// JSON (de)serialization failed.
    #[error("JSON error: {0}")]
    Json(#[from] serde_json::Error),
    /// An I/O error.
    #[error("I/O error: {0}")]
    Io(#[from] std::io::Error),
    /// An error of the body's own, with its message ([`Error::msg`]).
    #[error("{0}")]
    Message(String),
    /// An agent called by the body (not through `t.send`) failed; the agent's error is kept.
    #[error("the agent failed: {0}")]
    AgentFailed(#[from] crate::agents::agent::AgentError),
    /// Assertions as data could not be loaded or evaluated; the error is kept.
    #[error(transparent)]
    Spec(#[from] crate::checks::spec::SpecError),
    /// A dataset case whose record does not fit the eval's case type
    /// (`#[eval(cases = "..")]`).
    #[error("{0}")]
    Case(String),
    /// A case of an eval defined from data ([`crate::run::data_eval`]: a suite file's prompt,
    /// provider or transform) could not be prepared or run; the case's own error is kept.
    #[error(transparent)]
    Data(Box<dyn std::error::Error + Send + Sync>),
    /// The dataset of an eval (`#[eval(cases = "..")]`) cannot be read; the reader's error is
    /// kept.
    #[error("the dataset of {eval} cannot be used: {source}")]
    Dataset {
        /// The eval's id.
        eval: String,
        /// Why the file cannot be read.
        #[source]
        source: std::sync::Arc<niceeval_dataset::DatasetError>,
    },
    /// A workspace operation failed (copying, git, a command, reading test results).
    #[error("workspace: {0}")]
    Workspace(#[from] crate::resources::workspace::WorkspaceError),
    /// Any other error type.
    #[error(transparent)]
    Other(#[from] Box<dyn std::error::Error + Send + Sync>),
}

impl Error {
    /// An error with a message.
    ///
    /// ```
    /// fn body() -> niceeval::Result {
    ///     Err(niceeval::Error::msg("fixture missing"))
    /// }
    /// assert_eq!(body().unwrap_err().to_string(), "fixture missing");
    /// ```
    pub fn msg(message: impl std::fmt::Display) -> Self {
        Error::Message(message.to_string())
    }

    /// The kind of run error this becomes when it ends a body.
    pub fn run_error_kind(&self) -> crate::base::outcome::RunErrorKind {
        use crate::base::outcome::RunErrorKind;
        match self {
            Error::Agent { .. }
            | Error::AgentFailed(_)
            | Error::NoAgent { .. }
            | Error::NotParked => RunErrorKind::Agent,
            Error::Config(_) => RunErrorKind::Config,
            Error::Case(_) | Error::Data(_) | Error::Dataset { .. } => RunErrorKind::Setup,
            _ => RunErrorKind::Body,
        }
    }

    /// Whether this error is an execution error (as opposed to a `require` stop or a skip).
    pub fn is_execution_error(&self) -> bool {
        !matches!(self, Error::Required { .. } | Error::Skipped(_))
    }
}

/// `Result<T, niceeval::Error>`; `niceeval::Result` alone is the return type of an eval body.
pub type Result<T = (), E = Error> = std::result::Result<T, E>;
