//! Layer 2, what a run reads and spends besides its agent: working copies of a template
//! (`workspace`), the model answers kept on disk (`cache`) and prices (`price`).
//!
//! Invariant: nothing here sees an agent, an assertion or a run; a working copy reaches the
//! checks only as a `workspace.changed` event.

pub(crate) mod cache;
pub(crate) mod price;
pub mod workspace;
