//! The `niceeval` command-line tool: runs promptfoo and AgentV suite files (`niceeval eval`,
//! with promptfoo's `eval` flags), checks them (`niceeval validate`), merges results files (one
//! run, or the shards of a partitioned CI run) and writes reports from them. Its report mode is
//! the suite runner's (`niceeval::__workspace::harness::run_report`); from a crate of your own,
//! run that through your suite binary instead: `cargo test --test evals -- --report --markdown
//! summary.md`.
//!
//! ```text
//! niceeval eval -c promptfooconfig.yaml [-o results.json] [-j N] [--repeat N] [FILTER...]
//! niceeval validate -c promptfooconfig.yaml
//! niceeval report [--jsonl F] [--junit F] [--markdown F] [--html F] [--quiet] [--combine]
//!                 [--baseline FILE] [--save-baseline FILE] [PATH...]
//! niceeval merge [--allow-mismatch] [report options] PATH...   # the shards of one run
//! niceeval baseline save FILE [PATH...]      # = niceeval report --quiet --save-baseline FILE
//! niceeval compare BASELINE [PATH...] [...]  # = niceeval report --baseline BASELINE
//! niceeval view [--baseline FILE] [--then PATH] [--combine] [--out FILE] [--port N] [--no-open] [PATH...]
//! niceeval init [DIR] [--agent rust|command|http|openai] [--path NICEEVAL_CHECKOUT]
//! niceeval completions bash|zsh|fish|powershell|elvish
//! ```
//! `niceeval <command> --help` lists a command's options. PATH is a JSONL file or a directory
//! of them (default: target/niceeval/results).
//!
//! The command lives in this library (the binary `niceeval` calls [`main`]) so that a
//! workspace can depend on the package, as niceeval's own fixture workspace does to build the
//! command with the niceeval it already built.

use std::process::ExitCode;

use clap::Parser as _;

mod cli;
#[cfg(feature = "eval")]
mod env_file;
#[cfg(feature = "eval")]
mod eval;
#[cfg(feature = "history")]
mod history;
#[cfg(feature = "init")]
mod init;
#[cfg(feature = "eval")]
mod output_files;
mod promptfoo_flags;
#[cfg(feature = "eval")]
mod promptfoo_output;
mod report;
#[cfg(feature = "eval")]
mod selection;
#[cfg(feature = "serve")]
mod serve;
#[cfg(feature = "eval")]
mod validate;
mod view;
#[cfg(feature = "eval")]
mod watch;

use cli::{BaselineCommand, Cli, Command};

/// Runs the command with the process's arguments; the exit code says how it went.
pub fn main() -> ExitCode {
    let argv: Vec<String> = std::env::args().collect();
    // promptfoo's flags niceeval does not take are refused before parsing, naming what to use
    // instead (clap would only say they are unknown).
    if argv.get(1).is_some_and(|a| a == "eval")
        && let Some(message) = promptfoo_flags::refusal(&argv[2..])
    {
        eprintln!("error: {message}");
        return ExitCode::from(2);
    }
    // Usage lines say `niceeval`, whatever the binary's file is called (npx and uvx run a copy).
    let named = std::iter::once("niceeval").chain(argv.iter().skip(1).map(String::as_str));
    let cli = match Cli::try_parse_from(named) {
        Ok(cli) => cli,
        // Help and version print to stdout and exit 0; errors (with clap's "did you mean")
        // exit 2.
        Err(e) => {
            let _ = e.print();
            return ExitCode::from(u8::try_from(e.exit_code()).unwrap_or(2));
        }
    };
    match cli.command {
        None => {
            let mut command = <Cli as clap::CommandFactory>::command();
            let _ = command.print_help();
            ExitCode::SUCCESS
        }
        Some(Command::Report(args)) => report::report(args.runner_args()),
        Some(Command::Merge(args)) => report::report(args.runner_args()),
        Some(Command::Compare(args)) => report::report(args.runner_args()),
        Some(Command::Baseline(BaselineCommand::Save(args))) => report::report(args.runner_args()),
        Some(Command::View(args)) => view::view(&args),
        #[cfg(feature = "history")]
        Some(Command::History(args)) => history::history(&args),
        #[cfg(feature = "init")]
        Some(Command::Init(args)) => init::init(&args),
        Some(Command::Completions(args)) => {
            cli::completions(args.shell, &mut std::io::stdout());
            ExitCode::SUCCESS
        }
        #[cfg(feature = "eval")]
        Some(Command::Eval(args)) => eval::eval(*args, &argv[2..]),
        #[cfg(feature = "eval")]
        Some(Command::Validate(args)) => validate::validate(&args),
        #[cfg(not(feature = "eval"))]
        Some(Command::Eval(_) | Command::Validate(_)) => {
            eprintln!(
                "error: this niceeval was installed without its `eval` feature (suite files, model \
                 providers); reinstall it with its default features: cargo install niceeval-cli"
            );
            ExitCode::from(2)
        }
    }
}
