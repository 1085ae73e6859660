//! niceeval's integration tests, as one test binary (one link, one process): each module is a
//! theme, and its tests are named `module::test` (`cargo test -p niceeval --test it judge::`).
//!
//! `support` (a fake model provider on 127.0.0.1 and helpers to run an eval against a
//! niceeval.toml in a temporary directory) and `scripts_support` (script files and tool checks
//! for the subprocess tests) are shared by the modules.

mod scripts_support;
mod support;

mod claude_code;
mod code_assertions;
mod codex;
mod command_agent;
mod config;
mod custom_assertions;
mod doors;
mod efficiency;
mod errors;
mod judge;
mod layers;
mod providers;
mod reference_metrics;
mod scoped;
mod script_graders;
mod spec;
mod spec_promptfoo;
mod surface;
mod tool_skips;
mod traces;
mod usage;

mod workspace;
