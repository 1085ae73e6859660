//! The loopback fake (`scripts/fake-openai.py`, started on an ephemeral port and killed when
//! dropped) and the `niceeval` binary.

use std::io::BufRead as _;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

/// The workspace's root.
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("niceeval-cli sits in the workspace")
        .to_path_buf()
}

/// The fake OpenAI API, stopped when dropped.
pub struct Fake {
    child: Child,
    /// `http://127.0.0.1:<port>/v1`.
    pub url: String,
}

impl Fake {
    pub fn start() -> Fake {
        Fake::spawn(&[])
    }

    /// The fake with more arguments (`--record FILE`, `--answers FILE`).
    pub fn start_with(args: &[&str]) -> Fake {
        let args: Vec<&std::ffi::OsStr> = args.iter().map(|a| a.as_ref()).collect();
        Fake::spawn(&args)
    }

    /// The fake with canned answers (`--answers FILE`: `[{"match": …, "answer": …}]`).
    pub fn with_answers(file: &Path) -> Fake {
        Fake::spawn(&["--answers".as_ref(), file.as_os_str()])
    }

    fn spawn(args: &[&std::ffi::OsStr]) -> Fake {
        let mut child = Command::new("python3")
            .arg(root().join("scripts/fake-openai.py"))
            .arg("0")
            .args(args)
            .stdout(Stdio::piped())
            .spawn()
            .expect("python3 runs scripts/fake-openai.py");
        let mut line = String::new();
        std::io::BufReader::new(child.stdout.take().expect("piped"))
            .read_line(&mut line)
            .expect("the fake prints its port");
        let port = line
            .trim()
            .strip_prefix("PORT ")
            .unwrap_or_else(|| panic!("the fake printed {line:?}"));
        Fake {
            child,
            url: format!("http://127.0.0.1:{port}/v1"),
        }
    }
}

impl Drop for Fake {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `niceeval eval ARGS` in `dir` against `fake`.
pub fn niceeval(dir: &Path, fake: &Fake, args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_niceeval"))
        .arg("eval")
        .args(args)
        .current_dir(dir)
        .env("OPENAI_BASE_URL", &fake.url)
        .env("OPENAI_API_KEY", "sk-fake")
        .env("NO_COLOR", "1")
        .output()
        .expect("the niceeval binary runs")
}

/// The home of a peer tool a comparison needs (`$<env>`, else `~/.cache/niceeval/<dir>`), when
/// `<home>/node_modules/.bin/<bin>` is there. When it is not: under CI the test fails naming
/// `install`; elsewhere it is skipped with a notice (`None`).
pub fn peer_tool(env: &str, dir: &str, bin: &str, install: &str) -> Option<PathBuf> {
    let home = std::env::var(env).unwrap_or_else(|_| {
        format!(
            "{}/.cache/niceeval/{dir}",
            std::env::var("HOME").unwrap_or_default()
        )
    });
    if Path::new(&home)
        .join("node_modules/.bin")
        .join(bin)
        .exists()
    {
        return Some(PathBuf::from(home));
    }
    available(
        false,
        &format!("{bin} (in {home})"),
        &format!("run `bash {install}`"),
    );
    None
}

/// Whether `python3` imports every one of `modules` (what a corpus's Python providers and
/// assertions import: the promptfoo corpus's `provider.py` uses the `openai` package). Missing,
/// the test skips with a notice naming them and the install script (fails under CI):
/// promptfoo waits forever on a Python provider whose worker cannot start, so a comparison run
/// without them would not fail, it would hang.
pub fn python_modules(modules: &[&str]) -> bool {
    let missing: Vec<&str> = modules
        .iter()
        .copied()
        .filter(|m| {
            !Command::new("python3")
                .args(["-c", &format!("import {m}")])
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::null())
                .status()
                .is_ok_and(|s| s.success())
        })
        .collect();
    available(
        missing.is_empty(),
        &format!("the Python packages {missing:?}"),
        "run `bash scripts/install-test-deps.sh`",
    )
}

// The workspace's one skip helper (`tests/skip.rs`), shared by every crate's tests.
#[path = "../../../tests/skip.rs"]
mod skip;
pub use skip::available;

/// Runs a comparison script (`scripts/<script>`) with this build's `niceeval`, prints its
/// output (the agreement figures also uncaptured) and returns it; fails the test when
/// the script fails.
pub fn run_comparison(script: &str) -> String {
    let out = Command::new("python3")
        .arg(root().join("scripts").join(script))
        .args(["--niceeval", env!("CARGO_BIN_EXE_niceeval")])
        .output()
        .expect("python3 runs the comparison");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    println!("{stdout}");
    // The agreement figures also go straight to stderr, past the harness's capture: CI's log
    // shows them.
    for line in stdout.lines().filter(|l| l.starts_with("agreement")) {
        let _ = std::io::Write::write_fmt(&mut std::io::stderr(), format_args!("{line}\n"));
    }
    assert!(
        out.status.success(),
        "{script} failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}
