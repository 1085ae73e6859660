//! The guide's pages (`docs/book/src`) as doc-tests: every Rust block of the book compiles and
//! runs against this crate (`cargo test -p niceeval-examples --doc`). `tests/it/book.rs` checks
//! that every page `SUMMARY.md` lists is included here.

/// `docs/book/src/introduction.md`
#[doc = include_str!("../../docs/book/src/introduction.md")]
pub struct Introduction;

/// `docs/book/src/getting-started.md`
#[doc = include_str!("../../docs/book/src/getting-started.md")]
pub struct GettingStarted;

/// `docs/book/src/own-agent.md`
#[doc = include_str!("../../docs/book/src/own-agent.md")]
pub struct OwnAgent;

/// `docs/book/src/agents.md`
#[doc = include_str!("../../docs/book/src/agents.md")]
pub struct Agents;

/// `docs/book/src/assertions.md`
#[doc = include_str!("../../docs/book/src/assertions.md")]
pub struct Assertions;

/// `docs/book/src/scoped-checks.md`
#[doc = include_str!("../../docs/book/src/scoped-checks.md")]
pub struct ScopedChecks;

/// `docs/book/src/judges.md`
#[doc = include_str!("../../docs/book/src/judges.md")]
pub struct Judges;

/// `docs/book/src/datasets.md`
#[doc = include_str!("../../docs/book/src/datasets.md")]
pub struct Datasets;

/// `docs/book/src/workspaces.md`
#[doc = include_str!("../../docs/book/src/workspaces.md")]
pub struct Workspaces;

/// `docs/book/src/coding-agents.md`
#[doc = include_str!("../../docs/book/src/coding-agents.md")]
pub struct CodingAgents;

/// `docs/book/src/traces.md`
#[doc = include_str!("../../docs/book/src/traces.md")]
pub struct Traces;

/// `docs/book/src/suite-files.md`
#[doc = include_str!("../../docs/book/src/suite-files.md")]
pub struct SuiteFiles;

/// `docs/book/src/runs.md`
#[doc = include_str!("../../docs/book/src/runs.md")]
pub struct Runs;

/// `docs/book/src/comparison.md`
#[doc = include_str!("../../docs/book/src/comparison.md")]
pub struct Comparison;

/// `docs/book/src/snapshots.md`
#[doc = include_str!("../../docs/book/src/snapshots.md")]
pub struct Snapshots;

/// `docs/book/src/history.md`
#[doc = include_str!("../../docs/book/src/history.md")]
pub struct History;

/// `docs/book/src/ci.md`
#[doc = include_str!("../../docs/book/src/ci.md")]
pub struct Ci;

/// `docs/book/src/viewer.md`
#[doc = include_str!("../../docs/book/src/viewer.md")]
pub struct Viewer;

/// `docs/book/src/configuration.md`
#[doc = include_str!("../../docs/book/src/configuration.md")]
pub struct Configuration;

/// `docs/book/src/config-reference.md`
#[doc = include_str!("../../docs/book/src/config-reference.md")]
pub struct ConfigReference;

/// `docs/book/src/cargo-features.md`
#[doc = include_str!("../../docs/book/src/cargo-features.md")]
pub struct CargoFeatures;

/// `docs/book/src/performance.md`
#[doc = include_str!("../../docs/book/src/performance.md")]
pub struct Performance;

/// `docs/book/src/contributing.md`
#[doc = include_str!("../../docs/book/src/contributing.md")]
pub struct Contributing;
