//! The `niceeval` command's integration tests: `niceeval eval` on promptfoo suite files
//! against a loopback fake of the OpenAI API (`scripts/fake-openai.py`), and the conformance
//! corpora run with promptfoo 0.123.1, AgentV 4.42.4 and niceeval; `niceeval init`'s scaffolds
//! built and run as printed.

mod agentv_conformance;
mod command;
mod conformance;
mod eval;
mod footprint;
mod init;
mod prompt_forms;
mod promptfoo_flags;
mod serve;
mod support;
mod wild_forms;
mod wild_providers;
