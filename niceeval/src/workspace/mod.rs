//! Workspaces: evals of agents that change files. Each run of an eval with
//! `#[eval(workspace = "dir")]` gets a fresh working copy of the template in a temporary
//! directory, with a baseline recorded by git in a directory of its own outside the copy; the
//! agent works in the copy, and the eval reads what changed, runs commands and test suites
//! there.

mod sandbox;

pub use sandbox::{Isolation, Sandbox};
