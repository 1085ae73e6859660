//! Layer 4, agents and models: the model providers' wire formats and their connection pool
//! (`provider`), OpenTelemetry spans turned into events (`trace`), and the agents under test
//! (`agent`: the trait and its adapters).
//!
//! Invariant: nothing here sees an assertion; an agent only emits events, and runs its
//! processes through `Request::command` and `process`.

pub mod agent;
#[cfg(feature = "providers")]
pub(crate) mod provider;
#[cfg(feature = "otel")]
pub mod trace;
