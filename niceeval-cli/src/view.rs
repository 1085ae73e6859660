//! `niceeval view`: the results as one self-contained HTML page (the report mode with the
//! HTML page only, and the console's one character per eval), then the page opened in the
//! browser where there is a display.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use niceeval::__workspace::harness::{EXIT_USAGE, run_report};

use crate::cli::{RESULTS_DIR, ViewArgs};
use crate::report::runner_args;

/// Writes the page and opens it (or prints its path): 0 when it was written, 2 when not.
pub fn view(view: &ViewArgs) -> ExitCode {
    #[cfg(feature = "serve")]
    if view.out.is_none() && view.then.is_empty() {
        return crate::serve::serve(view);
    }
    let out = view
        .out
        .clone()
        .unwrap_or_else(|| PathBuf::from("target/niceeval/view.html"));
    let mut rest = vec!["--report".to_string(), "--quiet".to_string()];
    if view.combine {
        rest.push("--combine".to_string());
    }
    if let Some(baseline) = &view.baseline {
        rest.extend(["--baseline".to_string(), baseline.display().to_string()]);
    }
    rest.extend(view.paths.iter().map(|p| p.display().to_string()));
    let mut extra: Vec<Box<dyn niceeval::reporter::Reporter>> = Vec::new();
    if view.then.is_empty() {
        rest.push("--html".to_string());
        rest.push(out.display().to_string());
    } else {
        match earlier_page(&out, &view.then) {
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
    let code = run_report(&args, Path::new(RESULTS_DIR), extra);
    if code == EXIT_USAGE || !out.exists() {
        return ExitCode::from(2);
    }
    let shown = std::fs::canonicalize(&out).unwrap_or(out);
    if !view.no_open && show(&shown) {
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
    then: &[PathBuf],
) -> Result<Box<dyn niceeval::reporter::Reporter>, String> {
    use niceeval::__workspace::results::{latest, read_reports};
    let reports = latest(read_reports(then).map_err(|e| format!("--then: {e}"))?);
    niceeval::__workspace::reporter::with_earlier(out, reports)
        .map_err(|e| format!("cannot write {}: {e}", out.display()))
}
