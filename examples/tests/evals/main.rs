//! The example eval suite: one test binary, one module per theme. Every eval is an ordinary
//! test named `module::eval` (`cargo test -p niceeval-examples --test evals matchers::`).
//! The LLM-judge evals are a target of their own, `tests/judge.rs`, run by the suite runner.

mod behaviour;
mod coding_agents;
mod conversations;
mod custom_checks;
mod datasets;
mod first_steps;
mod matchers;
mod outcomes;
mod replay;
mod workspaces;
