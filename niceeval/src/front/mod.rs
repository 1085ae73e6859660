//! Layer 7, the front ends: the `main!()` suite runner (`harness`) and the `cargo test`
//! adapter with its exit notice (`libtest`).
//!
//! Invariant: the only code that prints to the terminal, reads process arguments or sets the
//! exit status.

pub(crate) mod harness;
pub(crate) mod libtest;
