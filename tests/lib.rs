//! Shared helpers of the integration tests: building the fixture crates under `fixtures/` once
//! per process ([`fixture`]), running their test binaries and `cargo test` itself as child
//! processes ([`child`]), reading what libtest printed ([`libtest`]), driving headless Chromium
//! ([`chromium`]), reading a viewer page's data ([`page`]), making synthetic reports for the
//! viewer at scale ([`synthetic`]) and skipping a test whose optional tool is missing
//! ([`available`]).

#![deny(missing_docs)]

pub mod child;
pub mod chromium;
pub mod fixture;
pub mod libtest;
pub mod page;
mod skip;
pub mod synthetic;

pub use skip::available;
