//! # niceeval
//!
//! Evals for LLM apps and agents, written as Rust tests. `#[eval]` turns an
//! `async fn(t: &mut Eval)` into a test that `cargo test` runs; the handle `t` sends input to the
//! agent under test and records assertions; every assertion folds into one outcome — passed,
//! failed or skipped — and a failed eval's message is its assertion report.
//!
//! ```
//! use niceeval::prelude::*;
//!
//! fn support_bot() -> impl Agent {
//!     agent_fn(|request: Request| async move {
//!         request.events.tool_call("lookup_order", json!({ "id": "123" }), json!({ "status": "paid" }));
//!         request.events.say("Your refund for order #123 is on its way.");
//!         Ok(())
//!     })
//! }
//!
//! #[eval(agent = support_bot)]
//! async fn refund_flow(t: &mut Eval) -> niceeval::Result {
//!     t.send("I want a refund for order #123").await?;
//!     t.check(t.reply(), includes("refund"));
//!     t.check(t.reply(), includes(Regex::new(r"order #\d+")?));
//!     t.check(t.reply(), similarity("Your refund for order #123 is on its way").at_least(0.8));
//!     Ok(())
//! }
//! # fn main() {}
//! ```
//!
//! The contract: value assertions ([`Eval::check`], [`Eval::require`]) run in place; scoped
//! assertions run over the event stream after the body; matchers are gates unless they say
//! otherwise; `.at_least(x)` makes any assertion soft with a threshold and `.gate()` makes it a
//! gate again. See [`Outcome`] for how results fold into one.

#![deny(missing_docs)]
#![cfg_attr(docsrs, feature(doc_cfg))]

// The layers, bottom first (ARCHITECTURE.md): each folder imports only itself and the
// folders above it in this list.
mod agents;
mod base;
mod checks;
mod config;
mod front;
mod output;
mod resources;
mod run;

// The public modules, each at one path.
pub use agents::agent;
#[cfg(feature = "otel")]
#[cfg_attr(docsrs, doc(cfg(feature = "otel")))]
pub use agents::trace;
pub use base::grader;
pub use checks::{expect, scope, spec};
pub use output::reporter;
pub use resources::workspace;
pub use run::{compare, data_eval};

#[doc(no_inline)]
pub use async_trait::async_trait;
pub use base::assertion::{
    Assertion, AssertionKind, AssertionResult, Chain, CheckContext, Checkable, Configured, Grade,
    Settings, Severity, Subject, WorkingCopy,
};
pub use base::event::{ActionKind, ActionStatus, Change, Event, FileChange, Role, Text, Usage};
pub use base::outcome::{Outcome, RunError, RunErrorKind};
pub use run::error::{Error, Result};
pub use run::eval::{Eval, RunTests};
#[cfg(feature = "providers")]
#[cfg_attr(docsrs, doc(cfg(feature = "providers")))]
pub use run::judge::{Judge, JudgeError};
pub use run::report::{EvalReport, RunSummary};
pub use run::turn::{Turn, TurnStatus};

pub use niceeval_macros::eval;

#[doc(no_inline)]
pub use regex::Regex;
#[doc(no_inline)]
pub use serde_json::{Value, json};

/// Defines `main` for a `harness = false` test target: runs every `#[eval]` of the target
/// with the suite runner — libtest-style arguments, bounded concurrency, Ctrl-C
/// handling — and hands every result to the built-in reporters plus any given.
///
/// ```toml
/// # Cargo.toml
/// [[test]]
/// name = "evals"
/// harness = false
/// ```
///
/// ```no_run
/// // tests/evals.rs
/// use niceeval::prelude::*;
///
/// #[eval(tags = ["smoke"])]
/// async fn smoke(t: &mut Eval) {
///     t.check("ok", includes("ok"));
/// }
///
/// niceeval::main!();
/// ```
///
/// `cargo test --test evals -- smoke --concurrency 8 --junit target/junit.xml` runs the evals
/// whose name contains `smoke`, eight at a time, and also writes JUnit XML; `--help` lists
/// every option. The process exits with 0 when nothing failed, 101 when an eval failed, 2 for a
/// bad command line and 130 when interrupted. With `--report [PATH...]` it runs no eval and
/// merges results files instead (`target/niceeval/results/` by default, written by plain
/// `cargo test` and by this runner) into the reports asked for.
///
/// With reporters of your own (anything implementing [`reporter::Reporter`]):
///
/// ```no_run
/// use niceeval::reporter::Reporter;
/// use niceeval::EvalReport;
///
/// #[derive(Default)]
/// struct CountFailures(usize);
///
/// impl Reporter for CountFailures {
///     fn on_eval_complete(&mut self, report: &EvalReport) -> std::io::Result<()> {
///         if report.outcome == niceeval::Outcome::Failed {
///             self.0 += 1;
///         }
///         Ok(())
///     }
/// }
///
/// niceeval::main!(reporters = [CountFailures::default()]);
/// ```
///
/// Suite files of promptfoo and AgentV run beside the Rust evals through the
/// `niceeval-suites` crate: `niceeval_suites::main!(suites = ["evals/promptfooconfig.yaml"])`
/// instead of this macro. `main!(suites = [..])` here is an error saying so.
#[macro_export]
macro_rules! main {
    () => {
        $crate::main!(reporters = []);
    };
    (suites = $($rest:tt)*) => {
        ::core::compile_error!(
            "suite files run through the `niceeval-suites` crate: add it as a dev-dependency \
             and write `niceeval_suites::main!(suites = [..]);` instead of `niceeval::main!`"
        );
        fn main() {}
    };
    (reporters = [$($reporter:expr),* $(,)?] $(,)?) => {
        fn main() {
            let reporters: ::std::vec::Vec<::std::boxed::Box<dyn $crate::__private::Reporter>> =
                ::std::vec![$(::std::boxed::Box::new($reporter)),*];
            ::std::process::exit($crate::__private::main_with(reporters))
        }
    };
}

/// Everything an eval file needs: `use niceeval::prelude::*;`.
///
/// It holds what eval bodies write: the matcher constructors, the traits whose methods they
/// call (`Assertion`, `Chain`, `Checkable`), the handle and agent types, and
/// `json!`, `Regex`, `Value`. Matcher types, helpers and constants stay in their modules
/// ([`expect`], [`scope`]).
pub mod prelude {
    pub use crate::agent::replay::replay;
    pub use crate::agent::{Agent, AgentError, Input, Request, agent_fn};
    #[cfg(feature = "json-schema")]
    pub use crate::checks::expect::matches_schema;
    pub use crate::checks::expect::{
        all_of, bleu, command_succeeded, contains_all, contains_any, contains_json, cost, custom,
        ends_with, equals, excludes, icontains, icontains_all, icontains_any, includes, is_json,
        json_path, latency, levenshtein, make_assertion, matches, not, regex, rouge_n, satisfies,
        script, similarity, starts_with, word_count,
    };
    #[cfg(feature = "inline-code")]
    pub use crate::checks::expect::{javascript, python};
    pub use crate::checks::scope::InputMatch;
    pub use crate::{
        ActionStatus, Assertion, Chain, Checkable, Eval, Event, Outcome, Regex, Result, Severity,
        Turn, TurnStatus, Value, async_trait, eval, json,
    };
}

/// The door for generated code (`#[eval]`, `main!`, `assert_report_snapshot!`): what the code
/// they expand to names, and nothing else. Not public API: may change in any release.
#[doc(hidden)]
pub mod __private {
    pub use crate::agent::Agent;
    pub use crate::assert_report_snapshot;
    pub use crate::front::harness::main_with;
    pub use crate::front::libtest::{
        finish_case, finish_test, run_case, run_case_report, run_test, run_test_report,
    };
    pub use crate::output::reporter::Reporter;
    pub use crate::output::snapshot::{
        applies as snapshot_applies, name as snapshot_name, settings as snapshot_settings,
        text_in as snapshot_text,
    };
    pub use crate::run::dataset::from_record as case_from_record;
    pub use crate::run::definition::{BoxFuture, Case, EvalDefinition, Registration};
    pub use crate::run::report::EvalReport;
    pub use crate::{Error, Eval};
    pub use insta;
    pub use inventory;
    pub use std::sync::Arc;

    /// What an eval body may return: `()` or `Result<(), E>` with `E: Into<niceeval::Error>`.
    #[diagnostic::on_unimplemented(
        message = "an `#[eval]` function must return `()` or `niceeval::Result`, not `{Self}`",
        label = "unsupported return type",
        note = "return nothing, or `niceeval::Result` and end the body with `Ok(())`; a `Result<(), E>` works when `E: Into<niceeval::Error>`"
    )]
    pub trait IntoBodyResult {
        /// Converts to the runner's result.
        fn into_body_result(self) -> Result<(), crate::Error>;
    }

    impl IntoBodyResult for () {
        fn into_body_result(self) -> Result<(), crate::Error> {
            Ok(())
        }
    }

    impl<E: Into<crate::Error>> IntoBodyResult for Result<(), E> {
        fn into_body_result(self) -> Result<(), crate::Error> {
            self.map_err(Into::into)
        }
    }

    /// The type an eval body's future outputs; generated code passes it spanned over the
    /// function's return type, so an unsupported return type is reported there.
    pub struct BodyOutput<O>(std::marker::PhantomData<fn() -> O>);

    impl<O> BodyOutput<O> {
        /// The witness; `O` is inferred from the body's future.
        #[allow(clippy::new_without_default)]
        pub const fn new() -> Self {
            BodyOutput(std::marker::PhantomData)
        }
    }

    /// Boxes the future of an eval body (spanned at the function's name by generated code, so
    /// a future that is not `Send` is reported there) and converts its output.
    pub fn body<'a, F, O>(
        future: F,
        _output: BodyOutput<O>,
    ) -> BoxFuture<'a, Result<(), crate::Error>>
    where
        F: std::future::Future<Output = O> + Send + 'a,
        O: IntoBodyResult,
    {
        Box::pin(async move { future.await.into_body_result() })
    }

    /// What `agent = path` (called) or `agent = expression` may give: any `Agent`. A trait of
    /// its own so a wrong type is reported in the words of `#[eval]`.
    #[diagnostic::on_unimplemented(
        message = "`agent = ..` must give an `Agent` (a `fn() -> impl Agent`, or an expression such as `bot(\"x\")`), but this one gives `{Self}`, which is not an `Agent`",
        label = "gives `{Self}`",
        note = "implement `niceeval::agent::Agent` for `{Self}`, or return `agent_fn(|request: Request| async move {{ .. }})`"
    )]
    pub trait IntoAgent {
        /// Boxes the agent.
        fn into_agent(self) -> Arc<dyn crate::agent::Agent>;
    }

    #[diagnostic::do_not_recommend]
    impl<A: crate::agent::Agent + 'static> IntoAgent for A {
        fn into_agent(self) -> Arc<dyn crate::agent::Agent> {
            Arc::new(self)
        }
    }

    /// Boxes the agent given by `agent = ..`.
    pub fn make_agent<A: IntoAgent>(agent: A) -> Arc<dyn crate::agent::Agent> {
        agent.into_agent()
    }
}

/// The door for the workspace's own crates: `niceeval-suites`, the `niceeval` command
/// (`niceeval-cli`), the benchmarks and the integration tests. Each module names, one by one,
/// the internal items of the niceeval module of the same name they use
/// (`niceeval/tests/it/surface.rs` counts them against a budget of their own). Not public API:
/// may change in any release.
#[doc(hidden)]
pub mod __workspace {
    /// Running evals and their definitions (the suite runner takes data evals' definitions).
    pub use crate::run::definition::{EvalDefinition, registered};
    pub use crate::run::engine::{RunOptions, run_eval, run_eval_async};
    /// The run a results record came from (hidden: `EvalReport::run` names it).
    pub use crate::run::report::RunInfo;

    // Internals that benchmarks and the crate's own integration tests measure directly.
    pub use crate::base::outcome::{Folded, fold, mean_score, metric_scores};
    /// "Did you mean": the known name closest to a misspelled one (suite files' keys).
    pub use crate::base::suggest::closest;
    pub use crate::checks::expect::bleu::bleu_score;
    pub use crate::checks::expect::rouge::rouge_n_score;
    pub use crate::checks::expect::similarity::{levenshtein_distance, normalized_similarity};
    pub use crate::run::report::{SCHEMA_VERSION, fold_runs};

    // The internal items the `niceeval` command, the benchmarks and the crate's own
    // integration tests use, named one by one (`niceeval/tests/it/surface.rs` counts them
    // against a budget of their own): a new use adds its name here.
    /// `niceeval.toml`.
    pub mod config {
        pub use crate::config::{
            AgentConfig, CacheMode, ChatConfig, ClaudeCodeConfig, CodexConfig, CommandConfig,
            CompareConfig, Config, ConfigError, DEFAULT_TIMEOUT, DurationSetting, FILE_NAME,
            HistoryConfig, JudgeConfig, PriceConfig, ProviderConfig, ReplayConfig, ReportConfig,
            ResultsConfig, RunConfig, TraceConfig, WorkspaceConfig, fields, find,
        };
    }
    /// The on-disk response cache.
    #[cfg(feature = "providers")]
    pub mod cache {
        pub use crate::resources::cache::ResponseCache;
    }
    /// Prices and cost estimates.
    pub mod price {
        pub use crate::resources::price::{Price, PriceSource, PriceTable, estimate_cost};
    }
    /// Model providers.
    #[cfg(feature = "providers")]
    pub mod provider {
        pub use crate::agents::provider::http::HttpRequest;
        pub use crate::agents::provider::{
            ApiKey, ChatMessage, ChatRequest, ClientOptions, DEFAULT_TIMEOUT, ModelClient,
            ModelName, ProviderError, RetryPolicy, ToolSpec, resolve_key,
        };
    }
    /// The suite runner.
    pub mod harness {
        pub use crate::front::harness::{
            Args, EXIT_FAILED, EXIT_OK, EXIT_USAGE, process_args, run_report, run_report_of,
            run_suite, run_with_args, run_with_deferred,
        };
    }
    /// The processes niceeval starts (the process-tree tests find what is left of a tree;
    /// suite files' script providers start theirs here) and the code worker.
    pub mod process {
        #[cfg(target_os = "linux")]
        pub use crate::base::process::carrying;
        pub use crate::base::process::output;
        /// Long-lived helper programs spoken to in lines of JSON (suite files' `transformVars`).
        #[cfg(feature = "inline-code")]
        pub use crate::base::process::worker::{WorkerError, WorkerSpec, request_blocking};
    }
    /// The history of runs: the results files, written, read and merged.
    pub mod results {
        pub use crate::output::results::{
            ReadError, ResultsFile, from_earlier_runs, latest, latest_records, merge,
            name_after_suite_files, read_reports, replay, results_dir, suite_files_name,
            target_dir, this_run, this_target,
        };
    }
    /// The run history (`niceeval history`, the viewer's trends).
    #[cfg(feature = "history")]
    pub mod history {
        pub use crate::output::history::{
            EvalPoint, History, HistoryError, Mark, MarkRule, Place, Point, RunRow, SCHEMA, Shift,
            SuitePoint, mark, store_path,
        };
    }
    /// Statistics.
    pub mod stats {
        pub use crate::base::stats::Reliability;
    }
    /// Excerpts inside reasons.
    pub mod excerpt {
        pub use crate::base::excerpt::{elide, quote, quote_width};
    }
    /// Datasets.
    pub mod dataset {
        pub use crate::run::dataset::{Cases, cases, expand};
    }
    /// Snapshots.
    pub mod snapshot {
        pub use crate::output::snapshot::{text, text_without_reasons};
    }
    /// The scoped checks' types (the benchmarks build them directly).
    pub mod scope {
        pub use crate::checks::scope::deferred::{
            BoxFuture, Check, Defer, Deferred, Graded, register, start,
        };
        pub use crate::checks::scope::{
            actions::{CalledSubagent, LoadedSkill, NoFailedActions, ToolOrder, UsedNoTools},
            events::{EventCheck, EventOrder, EventsSatisfy, NoEvent},
            run_checks::{MessageIncludes, Parked, Succeeded},
            tools::ToolCheck,
        };
    }
    /// How working copies are made, and the test-output parsers.
    pub mod workspace {
        pub use crate::config::{Isolation, Keep};
        pub use crate::resources::workspace::command::CommandRecord;
        pub use crate::resources::workspace::copy::Limits;
        pub use crate::resources::workspace::sandbox::Sandbox;
        pub use crate::resources::workspace::settings::Settings;
        pub use crate::resources::workspace::test_report::{parse_junit, parse_libtest};
    }
    /// The built-in reporters.
    pub mod reporter {
        pub use crate::output::reporter::console::{Console, progress_line, summary_table};
        #[cfg(feature = "html")]
        pub use crate::output::reporter::html::{Html, with_earlier};
        pub use crate::output::reporter::jsonl::Jsonl;
        pub use crate::output::reporter::junit::Junit;
        pub use crate::output::reporter::markdown::Markdown;
    }
    /// Baselines.
    pub mod compare {
        /// A baseline's tokens (hidden: `BaselineEval::tokens` names it).
        pub use crate::run::compare::baseline::Tokens;
        pub use crate::run::compare::baseline::{BASELINE_VERSION, Baseline, BaselineError};
    }
    /// OpenTelemetry internals: the receiver, runs, ingestion.
    #[cfg(feature = "otel")]
    pub mod trace {
        pub use crate::agents::trace::internals::{
            MAX_SPANS_PER_RUN, Run, counts, endpoint, ingest, last_rejection, protobuf_batch,
        };
    }
    /// Assertion internals, and the code worker's calls (inline JavaScript and Python).
    pub mod expect {
        #[cfg(feature = "inline-code")]
        pub use crate::checks::expect::code::Language as CodeLanguage;
        #[cfg(feature = "inline-code")]
        pub use crate::checks::expect::code::runner as code_runner;
        pub use crate::checks::expect::custom_dir::{CUSTOM_ASSERTIONS_DIR, CustomAssertions};
        pub use crate::checks::expect::type_names::{canonical_names, is_builtin_type};
    }
    /// The closest name to a typo.
    pub mod suggest {
        pub use crate::base::suggest::closest;
    }
    /// Agents over any HTTP target.
    #[cfg(feature = "providers")]
    pub mod agent {
        pub use crate::agent::http::{HttpAgent, HttpTarget};
        /// The name of the event a chat agent emits with its model's finish reason.
        pub const FINISH_EVENT: &str = crate::agents::agent::chat::FINISH_EVENT;
        /// The name of the event an agent emits with the duration it measured of its turn.
        pub const DURATION_EVENT: &str = crate::agents::agent::DURATION_EVENT;
    }
    /// What a data eval's body registers its checks on.
    pub mod eval {
        pub use crate::run::eval::{checks_of, workspace_path};
    }
}
