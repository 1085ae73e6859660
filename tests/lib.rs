//! Shared helpers of the integration tests: building the fixture crates under `fixtures/` once
//! per process ([`fixture`]), running their test binaries and `cargo test` itself as child
//! processes ([`child`]), and reading what libtest printed ([`libtest`]).

#![deny(missing_docs)]

pub mod child;
pub mod fixture;
pub mod libtest;
