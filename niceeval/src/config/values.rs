//! The values of settings that several layers read: the response cache's mode, and how a
//! workspace isolates processes and keeps its working copy. Plain data; the layers that act on
//! them (the cache, the workspace) import them from here.

use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// Whether a call reads and/or writes the cache.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum CacheMode {
    /// Neither: every call goes to the model.
    Off,
    /// Answer from the cache when possible; never store.
    Read,
    /// Always call the model; store the answers.
    Write,
    /// Answer from the cache when possible, store new answers.
    ReadWrite,
}

impl CacheMode {
    /// Whether cached answers are used.
    pub fn reads(self) -> bool {
        matches!(self, CacheMode::Read | CacheMode::ReadWrite)
    }

    /// Whether new answers are stored.
    pub fn writes(self) -> bool {
        matches!(self, CacheMode::Write | CacheMode::ReadWrite)
    }

    /// `off`, `read`, `write` or `read-write`.
    pub fn as_str(self) -> &'static str {
        match self {
            CacheMode::Off => "off",
            CacheMode::Read => "read",
            CacheMode::Write => "write",
            CacheMode::ReadWrite => "read-write",
        }
    }
}

impl FromStr for CacheMode {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim().to_ascii_lowercase().replace('_', "-").as_str() {
            "off" | "none" => Ok(CacheMode::Off),
            "read" => Ok(CacheMode::Read),
            "write" => Ok(CacheMode::Write),
            "read-write" | "readwrite" | "on" => Ok(CacheMode::ReadWrite),
            _ => Err(format!(
                "{s:?} is not a cache mode; use \"off\", \"read\", \"write\" or \"read-write\""
            )),
        }
    }
}

/// How the agent's processes are isolated (`[workspace] isolation`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum Isolation {
    /// No isolation: processes run in the working copy (a temporary directory) as the user.
    #[default]
    Local,
    /// Debian's `bwrap` (package `bubblewrap`): the whole file system read-only but the working
    /// copy, a private `/tmp`, no network unless `network = true`, killed with the eval.
    Bubblewrap,
}

impl Isolation {
    /// The name written in `niceeval.toml`.
    pub fn as_str(self) -> &'static str {
        match self {
            Isolation::Local => "local",
            Isolation::Bubblewrap => "bubblewrap",
        }
    }
}

/// What becomes of a working copy after its run (`[workspace] keep`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum Keep {
    /// Kept when the run failed (its path is in the report), removed when it passed.
    #[default]
    Failed,
    /// Always kept.
    Always,
    /// Always removed.
    Never,
}

impl Keep {
    /// Whether a run that `passed` keeps its copy.
    pub fn keeps(self, passed: bool) -> bool {
        match self {
            Keep::Failed => !passed,
            Keep::Always => true,
            Keep::Never => false,
        }
    }
}

// The words a string setting may hold, checked at load (`validate.rs`) and named in its
// error.

/// Codex's sandbox modes (`[agent] sandbox`).
pub(crate) const CODEX_SANDBOX_MODES: &[&str] =
    &["read-only", "workspace-write", "danger-full-access"];
/// Codex's approval policies (`[agent] approval_policy`).
pub(crate) const CODEX_APPROVAL_POLICIES: &[&str] =
    &["untrusted", "on-failure", "on-request", "never"];
/// The command agent's input modes (`[agent] input`).
pub(crate) const INPUT_MODES: &[&str] = &["stdin", "json", "arg"];

/// The `output` modes of a command agent.
pub(crate) const OUTPUT_MODES: &[&str] = &["jsonl", "text"];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modes_parse() {
        assert_eq!("off".parse::<CacheMode>(), Ok(CacheMode::Off));
        assert_eq!("READ_WRITE".parse::<CacheMode>(), Ok(CacheMode::ReadWrite));
        assert!(
            "sometimes"
                .parse::<CacheMode>()
                .unwrap_err()
                .contains("read-write")
        );
        assert!(!CacheMode::Write.reads() && CacheMode::Write.writes());
    }
}
