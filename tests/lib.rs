//! Shared helpers of the integration tests: building the fixture crates under `fixtures/` once
//! per process ([`fixture`]), running their test binaries and `cargo test` itself as child
//! processes ([`child`]), reading what libtest printed ([`libtest`]), and loading HTML reports in
//! headless Chromium ([`chromium`]).

#![deny(missing_docs)]

pub mod child;
pub mod chromium;
pub mod fixture;
pub mod libtest;
