//! The `niceeval` command-line tool: runs promptfoo and AgentV suite files (`niceeval eval`),
//! merges results files (one run, or the shards of a partitioned CI run) and writes reports
//! from them. It is the report mode of the suite runner
//! (`niceeval::__workspace::harness::run_report`); from a crate of your own, run that through your suite
//! binary instead: `cargo test --test evals -- --report --markdown summary.md`.
//!
//! ```text
//! niceeval report [--jsonl F] [--junit F] [--markdown F] [--html F] [--quiet] [--combine]
//!                 [--baseline FILE] [--save-baseline FILE] PATH...
//! niceeval merge [--allow-mismatch] [report options] PATH...   # the shards of one run
//! niceeval baseline save FILE [PATH...]      # = niceeval report --quiet --save-baseline FILE
//! niceeval compare BASELINE [PATH...] [...]  # = niceeval report --baseline BASELINE
//! niceeval view [--baseline FILE] [--then PATH] [--combine] [--out FILE] [--no-open] [PATH...]
//! niceeval eval -c promptfooconfig.yaml [-j N] [RUNNER OPTIONS...] [FILTER...]
//! niceeval eval path/to/x.eval.yaml [...]
//! niceeval init [DIR] [--agent rust|command|http|openai] [--path NICEEVAL_CHECKOUT]
//! ```
//! PATH is a JSONL file or a directory of them (default: target/niceeval/results).
//!
//! The command lives in this library (the binary `niceeval` calls [`main`]) so that a
//! workspace can depend on the package, as niceeval's own fixture workspace does to build the
//! command with the niceeval it already built.

mod init;

use std::path::Path;
use std::process::ExitCode;

use niceeval::__workspace::harness::{Args, EXIT_FAILED, EXIT_OK, run_report};

const USAGE: &str =
    "usage: niceeval report [--jsonl FILE] [--junit FILE] [--markdown FILE] [--html FILE] [--quiet] [--combine]
                       [--baseline FILE] [--save-baseline FILE] [PATH...]
       niceeval merge [--allow-mismatch] [--jsonl FILE] [--junit FILE] [--markdown FILE] [--html FILE]
                      [--save-baseline FILE] [--baseline FILE] [--quiet] PATH...
       niceeval baseline save FILE [PATH...]
       niceeval compare BASELINE [--markdown FILE] [--html FILE] [...] [PATH...]
       niceeval view [--baseline FILE] [--then PATH] [--combine] [--out FILE] [--no-open] [PATH...]
       niceeval eval -c FILE [-c FILE...] [-j N] [--runs N] [--jsonl F] [--junit F] [--markdown F]
                     [--html F] [--baseline F] [--save-baseline F] [...] [FILTER...]
       niceeval eval FILE.eval.yaml [...]
       niceeval init [DIR] [--agent rust|command|http|openai] [--name NAME] [--path DIR | --git URL]
       niceeval --version

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

`niceeval view` writes the results as one self-contained HTML page (default
target/niceeval/view.html; --out FILE elsewhere) and opens it in the browser (xdg-open, or open
on macOS) where there is a display; else, or with --no-open, it prints the page's path.
--then PATH (results files of an earlier run, or directories of them) shows each eval's reply,
score and assertions then and now side by side. Exits 0
when the page was written, whatever the evals' outcomes; 2 when it could not be.
`niceeval merge PATH...` combines the shards of one run spread over machines (each wrote its
own results directory, e.g. `cargo nextest run --partition hash:I/N`): it checks them against
the run manifests the suite runner wrote beside them — every expected eval reported exactly
once, one commit, one configuration, one niceeval version (--allow-mismatch merges other
commits or configurations anyway) — exits 2 naming what is missing, duplicated or different,
and otherwise recomputes pass rates, pass@k and intervals from every run's record, then writes
the reports asked for (--jsonl FILE writes the merged results file).

From a crate of your own, the suite binary does the same without installing this tool:
cargo test --test <suite> -- --report [PATH...] [--markdown FILE]

`niceeval eval` runs a promptfoo config (-c promptfooconfig.yaml) or an AgentV eval file
(EVAL.yaml, *.eval.yaml, or a file with AgentV's keys) with the suite runner: its tests x prompts x providers as evals named
<file stem>::<test>, -j N at once (default: evaluateOptions.maxConcurrency, else 4), the same
reports, baselines and exit codes as a suite of Rust evals (0 passed, 101 failed, 2 bad command
line or suite file, 3 regression). niceeval.toml and the results file are the current
directory's. Every runner option of `cargo test --test <suite> -- --help` applies.";

/// `niceeval eval`: suite files (`-c FILE`, `--config FILE`, or `.yaml` / `.yml` / `.json`
/// paths that exist) and the runner's options (`-j N` is `--concurrency N`).
#[cfg(feature = "eval")]
fn eval(args: Vec<String>) -> ExitCode {
    // The results file goes where `niceeval report` reads by default, under the current
    // directory, not beside wherever this binary was built.
    if std::env::var_os("NICEEVAL_RESULTS_DIR").is_none() {
        // SAFETY: nothing else runs yet: the runtime and its threads start later.
        unsafe { std::env::set_var("NICEEVAL_RESULTS_DIR", "target/niceeval/results") };
    }
    let mut files = Vec::new();
    let mut rest = Vec::new();
    let mut args = args.into_iter();
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "-c" | "--config" => match args.next() {
                Some(file) => files.push(std::path::PathBuf::from(file)),
                None => {
                    eprintln!("error: {arg} needs a suite file\n\n{USAGE}");
                    return ExitCode::from(2);
                }
            },
            "-j" => match args.next() {
                Some(n) => rest.extend(["--concurrency".to_string(), n]),
                None => {
                    eprintln!("error: -j needs a number\n\n{USAGE}");
                    return ExitCode::from(2);
                }
            },
            a if (a.ends_with(".yaml") || a.ends_with(".yml") || a.ends_with(".json"))
                && Path::new(a).is_file() =>
            {
                files.push(std::path::PathBuf::from(a));
            }
            _ => rest.push(arg),
        }
    }
    if files.is_empty() {
        for default in ["promptfooconfig.yaml", "promptfooconfig.yml"] {
            if Path::new(default).is_file() {
                files.push(std::path::PathBuf::from(default));
                break;
            }
        }
    }
    if files.is_empty() {
        eprintln!(
            "error: niceeval eval: no suite file (give -c promptfooconfig.yaml, or an AgentV EVAL.yaml or *.eval.yaml)\n\n{USAGE}"
        );
        return ExitCode::from(2);
    }
    let args = match runner_args(rest) {
        Ok(args) => args,
        Err(code) => return code,
    };
    // Each suite file's results stand until that file runs again: a results file (and run
    // target) of their own, not the one of the `niceeval` binary.
    niceeval::__workspace::results::name_after_suite_files(&files);
    let code = niceeval_suites::run_files(
        &files,
        "suite",
        Path::new("."),
        args,
        Vec::new(),
        Vec::new(),
    );
    exit(code)
}

/// The runner's options read from `rest`, or the exit code after printing the usage (asked
/// for) or the error and the usage.
fn runner_args(rest: Vec<String>) -> Result<Args, ExitCode> {
    match Args::parse(rest) {
        Ok(Some(args)) => Ok(args),
        Ok(None) => {
            println!("{USAGE}");
            Err(ExitCode::SUCCESS)
        }
        Err(e) => {
            eprintln!("error: {e}\n\n{USAGE}");
            Err(ExitCode::from(2))
        }
    }
}

#[cfg(feature = "eval")]
fn exit(code: i32) -> ExitCode {
    match code {
        EXIT_OK => ExitCode::SUCCESS,
        EXIT_FAILED => ExitCode::from(101),
        code => ExitCode::from(u8::try_from(code).unwrap_or(2)),
    }
}

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
        Some("view") => return view(args.collect()),
        Some("init") => return init::main(args.collect()),
        #[cfg(feature = "eval")]
        Some("eval") => return eval(args.collect()),
        #[cfg(not(feature = "eval"))]
        Some("eval") => {
            eprintln!(
                "error: this niceeval was installed without its `eval` feature (suite files, model \
                 providers); reinstall it with its default features: cargo install niceeval-cli"
            );
            return ExitCode::from(2);
        }
        Some("-V" | "--version") => {
            println!("niceeval {}", env!("CARGO_PKG_VERSION"));
            return ExitCode::SUCCESS;
        }
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

/// Where `niceeval view` writes its page by default.
const VIEW_PAGE: &str = "target/niceeval/view.html";

/// `niceeval view`: the report mode with the HTML page only (and the console's one character
/// per eval), then the page opened.
fn view(args: Vec<String>) -> ExitCode {
    let mut out = std::path::PathBuf::from(VIEW_PAGE);
    let mut open = true;
    let mut then: Vec<std::path::PathBuf> = Vec::new();
    let mut rest = vec!["--report".to_string(), "--quiet".to_string()];
    let mut args = args.into_iter();
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--out" => match args.next() {
                Some(file) => out = file.into(),
                None => {
                    eprintln!("error: --out needs a file\n\n{USAGE}");
                    return ExitCode::from(2);
                }
            },
            "--no-open" => open = false,
            "--then" => match args.next() {
                Some(path) => then.push(path.into()),
                None => {
                    eprintln!("error: --then needs a results file or directory\n\n{USAGE}");
                    return ExitCode::from(2);
                }
            },
            "-h" | "--help" => {
                println!("{USAGE}");
                return ExitCode::SUCCESS;
            }
            "--combine" => rest.push(arg),
            "--baseline" => match args.next() {
                Some(file) => rest.extend([arg, file]),
                None => {
                    eprintln!("error: --baseline needs a file\n\n{USAGE}");
                    return ExitCode::from(2);
                }
            },
            flag if flag.starts_with('-') => {
                eprintln!("error: niceeval view does not take {flag}\n\n{USAGE}");
                return ExitCode::from(2);
            }
            _ => rest.push(arg),
        }
    }
    let mut extra: Vec<Box<dyn niceeval::reporter::Reporter>> = Vec::new();
    if then.is_empty() {
        rest.push("--html".to_string());
        rest.push(out.display().to_string());
    } else {
        match earlier_page(&out, &then) {
            Ok(html) => extra.push(html),
            Err(message) => {
                eprintln!("error: {message}");
                return ExitCode::from(2);
            }
        }
    }
    let args = match runner_args(rest) {
        Ok(args) => args,
        Err(code) => return code,
    };
    let code = run_report(&args, Path::new("target/niceeval/results"), extra);
    if code == niceeval::__workspace::harness::EXIT_USAGE || !out.exists() {
        return ExitCode::from(2);
    }
    let shown = std::fs::canonicalize(&out).unwrap_or(out);
    if open && show(&shown) {
        println!("opened {}", shown.display());
    } else {
        println!("wrote {}", shown.display());
    }
    ExitCode::SUCCESS
}

/// Opens `page` in the browser where there is a display to show it on; whether it did.
fn show(page: &Path) -> bool {
    let opener = if cfg!(target_os = "macos") {
        "open"
    } else if std::env::var_os("DISPLAY").is_some() || std::env::var_os("WAYLAND_DISPLAY").is_some()
    {
        "xdg-open"
    } else {
        return false;
    };
    std::process::Command::new(opener)
        .arg(page)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// The page's reporter at `out`, holding the latest report of each eval of the earlier run's
/// results `then`.
fn earlier_page(
    out: &Path,
    then: &[std::path::PathBuf],
) -> Result<Box<dyn niceeval::reporter::Reporter>, String> {
    use niceeval::__workspace::results::{latest, read_reports};
    let reports = latest(read_reports(then).map_err(|e| format!("--then: {e}"))?);
    niceeval::__workspace::reporter::with_earlier(out, reports)
        .map_err(|e| format!("cannot write {}: {e}", out.display()))
}
