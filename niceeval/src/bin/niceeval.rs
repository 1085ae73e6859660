//! The `niceeval` command-line tool: merges results files (one run, or the shards of a
//! partitioned CI run) and writes reports from them.
//!
//! ```text
//! niceeval report [--jsonl F] [--junit F] [--markdown F] [--html F] [--quiet] PATH...
//! ```
//! PATH is a JSONL file or a directory of them (default: target/niceeval/results).

use std::path::PathBuf;
use std::process::ExitCode;

use niceeval::merge::{merge, read_reports, replay};
use niceeval::reporter::{Console, Jsonl, Junit, Markdown, Reporter};

const USAGE: &str =
    "usage: niceeval report [--jsonl FILE] [--junit FILE] [--markdown FILE] [--html FILE] [--quiet] [PATH...]

Reads eval reports (JSONL files, or directories of them; default target/niceeval/results),
merges the runs of evals that appear in several files (shards), recomputes pass rates and
pass@k, prints a summary and writes the requested reports. Exits 1 when any eval failed,
2 when the command line is wrong or there is nothing to read.";

fn main() -> ExitCode {
    let mut args = std::env::args().skip(1);
    match args.next().as_deref() {
        Some("report") => {}
        Some("-h" | "--help") | None => {
            println!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        Some(other) => {
            eprintln!("error: unknown command {other:?}\n\n{USAGE}");
            return ExitCode::from(2);
        }
    }
    let mut paths = Vec::new();
    let mut reporters: Vec<Box<dyn Reporter>> = Vec::new();
    let mut quiet = false;
    while let Some(arg) = args.next() {
        let mut file = |flag: &str| -> Result<PathBuf, String> {
            args.next()
                .map(PathBuf::from)
                .ok_or_else(|| format!("{flag} needs a file"))
        };
        let made: Result<Option<Box<dyn Reporter>>, String> = match arg.as_str() {
            "--jsonl" => file("--jsonl").and_then(|p| {
                Jsonl::create(&p)
                    .map(|r| Some(Box::new(r) as Box<dyn Reporter>))
                    .map_err(|e| format!("cannot write {}: {e}", p.display()))
            }),
            "--junit" => file("--junit").and_then(|p| {
                Junit::create(&p)
                    .map(|r| Some(Box::new(r) as Box<dyn Reporter>))
                    .map_err(|e| format!("cannot write {}: {e}", p.display()))
            }),
            "--markdown" => file("--markdown").and_then(|p| {
                Markdown::create(&p)
                    .map(|r| Some(Box::new(r) as Box<dyn Reporter>))
                    .map_err(|e| format!("cannot write {}: {e}", p.display()))
            }),
            #[cfg(feature = "html")]
            "--html" => file("--html").and_then(|p| {
                niceeval::reporter::Html::create(&p)
                    .map(|r| Some(Box::new(r) as Box<dyn Reporter>))
                    .map_err(|e| format!("cannot write {}: {e}", p.display()))
            }),
            #[cfg(not(feature = "html"))]
            "--html" => Err(
                "--html needs niceeval's `html` feature; enable it in Cargo.toml (it is on by default)"
                    .to_string(),
            ),
            "--quiet" | "-q" => {
                quiet = true;
                Ok(None)
            }
            flag if flag.starts_with('-') => Err(format!("unknown option {flag}")),
            path => {
                paths.push(PathBuf::from(path));
                Ok(None)
            }
        };
        match made {
            Ok(Some(r)) => reporters.push(r),
            Ok(None) => {}
            Err(e) => {
                eprintln!("error: {e}\n\n{USAGE}");
                return ExitCode::from(2);
            }
        }
    }
    if paths.is_empty() {
        paths.push(PathBuf::from("target/niceeval/results"));
    }
    if !quiet {
        reporters.insert(0, Box::new(Console::new(std::io::stdout(), false)));
    }
    let reports = match read_reports(&paths) {
        Ok(r) if r.is_empty() => {
            eprintln!(
                "error: no eval reports in {}; run the evals first (cargo test writes them to target/niceeval/results)",
                paths
                    .iter()
                    .map(|p| p.display().to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            );
            return ExitCode::from(2);
        }
        Ok(r) => merge(r),
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    let suite = replay(&reports, &mut reporters);
    if suite.success() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
