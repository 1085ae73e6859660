//! The `niceeval` command-line tool: merges results files (one run, or the shards of a
//! partitioned CI run) and writes reports from them. It is the report mode of the suite runner
//! (`niceeval::__private::harness::run_report`); from a crate of your own, run that through your suite
//! binary instead: `cargo test --test evals -- --report --markdown summary.md`.
//!
//! ```text
//! niceeval report [--jsonl F] [--junit F] [--markdown F] [--html F] [--quiet] [--combine]
//!                 [--baseline FILE] [--save-baseline FILE] PATH...
//! niceeval merge [--allow-mismatch] [report options] PATH...   # the shards of one run
//! niceeval baseline save FILE [PATH...]      # = niceeval report --quiet --save-baseline FILE
//! niceeval compare BASELINE [PATH...] [...]  # = niceeval report --baseline BASELINE
//! ```
//! PATH is a JSONL file or a directory of them (default: target/niceeval/results).
//!
//! The command lives in this library (the binary `niceeval` calls [`main`]) so that a
//! workspace can depend on the package, as niceeval's own fixture workspace does to build the
//! command with the niceeval it already built.

use std::path::Path;
use std::process::ExitCode;

use niceeval::__private::harness::{Args, EXIT_FAILED, EXIT_OK, run_report};

const USAGE: &str =
    "usage: niceeval report [--jsonl FILE] [--junit FILE] [--markdown FILE] [--html FILE] [--quiet] [--combine]
                       [--baseline FILE] [--save-baseline FILE] [PATH...]
       niceeval merge [--allow-mismatch] [--jsonl FILE] [--junit FILE] [--markdown FILE] [--html FILE]
                      [--save-baseline FILE] [--baseline FILE] [--quiet] PATH...
       niceeval baseline save FILE [PATH...]
       niceeval compare BASELINE [--markdown FILE] [--html FILE] [...] [PATH...]

Reads eval reports (JSONL files, or directories of them; default target/niceeval/results),
keeps each eval's latest run (every record carries its run id and start time; evals from an
earlier run than their target's latest are named), or with --combine merges every record as
the shards of one run, recomputes pass rates and pass@k, prints a summary (one character per eval with --quiet) and writes the requested
reports. Exits 1 when any eval failed, 2 when the command line is wrong or there is nothing
to read.

--baseline FILE compares the results with a baseline file (fixed, broke, still failing, worse
or better; pass rates tested with Fisher's exact test) in every report, and exits 3 on a
regression that [compare] fail_on in niceeval.toml names. --save-baseline FILE (or `niceeval
baseline save FILE`) writes the baseline of the results: sorted, no durations or costs,
byte-identical when nothing changed; commit it. `niceeval compare BASELINE` is `niceeval report
--baseline BASELINE`.

`niceeval merge PATH...` combines the shards of one run spread over machines (each wrote its
own results directory, e.g. `cargo nextest run --partition hash:I/N`): it checks them against
the run manifests the suite runner wrote beside them — every expected eval reported exactly
once, one commit, one configuration, one niceeval version (--allow-mismatch merges other
commits or configurations anyway) — exits 2 naming what is missing, duplicated or different,
and otherwise recomputes pass rates, pass@k and intervals from every run's record, then writes
the reports asked for (--jsonl FILE writes the merged results file).

From a crate of your own, the suite binary does the same without installing this tool:
cargo test --test <suite> -- --report [PATH...] [--markdown FILE]";

/// Runs the command with the process's arguments; the exit code says how it went.
pub fn main() -> ExitCode {
    let mut args = std::env::args().skip(1);
    let mut prefix: Vec<String> = vec!["--report".to_string()];
    match args.next().as_deref() {
        Some("report") => {}
        Some("merge") => prefix.push("--merge".to_string()),
        Some("baseline") => match (args.next().as_deref(), args.next()) {
            (Some("save"), Some(file)) if !file.starts_with('-') => {
                prefix.extend(["--quiet".to_string(), "--save-baseline".to_string(), file]);
            }
            _ => {
                eprintln!("error: usage: niceeval baseline save FILE [PATH...]\n\n{USAGE}");
                return ExitCode::from(2);
            }
        },
        Some("compare") => match args.next() {
            Some(file) if !file.starts_with('-') => {
                prefix.extend(["--baseline".to_string(), file]);
            }
            _ => {
                eprintln!("error: usage: niceeval compare BASELINE [PATH...]\n\n{USAGE}");
                return ExitCode::from(2);
            }
        },
        Some("-h" | "--help") | None => {
            println!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        Some(other) => {
            eprintln!("error: unknown command {other:?}\n\n{USAGE}");
            return ExitCode::from(2);
        }
    }
    let parsed = Args::parse(prefix.into_iter().chain(args));
    let args = match parsed {
        Ok(Some(args)) => args,
        Ok(None) => {
            println!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        Err(e) => {
            eprintln!("error: {e}\n\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    match run_report(&args, Path::new("target/niceeval/results"), Vec::new()) {
        EXIT_OK => ExitCode::SUCCESS,
        EXIT_FAILED => ExitCode::FAILURE,
        code => ExitCode::from(u8::try_from(code).unwrap_or(2)),
    }
}
