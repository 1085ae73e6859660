//! Running a child process (a fixture's test binary, or cargo) to completion under a deadline,
//! with an environment that does not leak the outer test run's settings into it.

use std::io::Read;
use std::process::{Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

use crate::libtest::Libtest;

/// What a finished child printed, and how it exited.
#[derive(Debug)]
pub struct Output {
    /// The command line, for messages.
    pub command: String,
    /// How it exited.
    pub status: ExitStatus,
    /// Everything written to stdout.
    pub stdout: String,
    /// Everything written to stderr.
    pub stderr: String,
}

impl Output {
    /// The exit code (`None` when killed by a signal).
    pub fn code(&self) -> Option<i32> {
        self.status.code()
    }

    /// libtest's view of stdout.
    pub fn libtest(&self) -> Libtest<'_> {
        Libtest::new(&self.stdout)
    }

    /// The whole output, for assertion messages.
    pub fn dump(&self) -> String {
        format!(
            "command: {}\nstatus: {}\n--- stdout ---\n{}\n--- stderr ---\n{}",
            self.command, self.status, self.stdout, self.stderr
        )
    }
}

/// Removes from `command`'s environment what the person running the outer tests may have set
/// and would change the child's behaviour: every `NICEEVAL_*` override, libtest's own
/// variables and cargo-nextest's (under `cargo nextest run` the outer test carries
/// `NEXTEST_RUN_ID`, which would make the child a nextest run with its results kept per run). Backtraces are turned off so panic messages are stable.
pub fn clean_env(command: &mut Command) -> &mut Command {
    for (name, _) in std::env::vars_os() {
        let Some(name) = name.to_str() else { continue };
        if name.starts_with("NICEEVAL_")
            || name.starts_with("RUST_TEST_")
            || name.starts_with("NEXTEST")
        {
            command.env_remove(name);
        }
    }
    command.env("RUST_BACKTRACE", "0")
}

/// Runs `command` to completion with stdin closed and output captured. Past `deadline` the child
/// is killed and this panics with what it printed so far.
pub fn run(command: &mut Command, deadline: Duration) -> Output {
    spawn(command).wait(deadline)
}

/// Reads a pipe to its end on a thread, so a child filling one pipe never blocks on it.
fn drain(pipe: Option<impl Read + Send + 'static>) -> mpsc::Receiver<String> {
    let (tx, rx) = mpsc::channel();
    if let Some(mut pipe) = pipe {
        thread::spawn(move || {
            let mut bytes = Vec::new();
            let _ = pipe.read_to_end(&mut bytes);
            let _ = tx.send(String::from_utf8_lossy(&bytes).into_owned());
        });
    }
    rx
}

/// What a pipe delivered; a grandchild still holding the pipe open must not hang the tests.
fn collect(rx: &mpsc::Receiver<String>) -> String {
    rx.recv_timeout(Duration::from_secs(30))
        .unwrap_or_else(|_| "<pipe still open or not captured>".to_string())
}

/// A child started with [`spawn`], still running: its output is drained on threads while the
/// test watches files it writes, then signals or kills it.
#[derive(Debug)]
pub struct Running {
    description: String,
    child: std::process::Child,
    stdout: mpsc::Receiver<String>,
    stderr: mpsc::Receiver<String>,
}

/// Starts `command` with stdin closed and output captured, without waiting for it.
pub fn spawn(command: &mut Command) -> Running {
    let description = format!("{command:?}");
    let mut child = command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {description}: {e}"));
    let stdout = drain(child.stdout.take());
    let stderr = drain(child.stderr.take());
    Running {
        description,
        child,
        stdout,
        stderr,
    }
}

impl Running {
    /// The child's process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Whether the child has exited already.
    pub fn exited(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(Some(_)))
    }

    /// Sends `signal` (e.g. `libc::SIGINT`) to the child.
    #[cfg(unix)]
    pub fn signal(&self, signal: i32) {
        let pid = i32::try_from(self.pid()).expect("a pid fits in pid_t");
        // SAFETY: kill(2) with a pid we own and a valid signal number has no memory effects.
        let result = unsafe { libc::kill(pid, signal) };
        assert_eq!(
            result,
            0,
            "kill({pid}, {signal}) failed: {}",
            std::io::Error::last_os_error()
        );
    }

    /// SIGKILLs the child and waits for it.
    pub fn kill(mut self) -> Output {
        let _ = self.child.kill();
        self.wait(Duration::from_secs(30))
    }

    /// Waits for the child to exit; past `deadline` kills it and panics with its output.
    pub fn wait(mut self, deadline: Duration) -> Output {
        let started = Instant::now();
        let status = loop {
            match self.child.try_wait() {
                Ok(Some(status)) => break status,
                Ok(None) if started.elapsed() > deadline => {
                    let _ = self.child.kill();
                    let _ = self.child.wait();
                    panic!(
                        "{} did not finish within {deadline:?}; killed it\n--- stdout ---\n{}\n--- stderr ---\n{}",
                        self.description,
                        collect(&self.stdout),
                        collect(&self.stderr)
                    );
                }
                Ok(None) => thread::sleep(Duration::from_millis(10)),
                Err(e) => panic!("cannot wait for {}: {e}", self.description),
            }
        };
        Output {
            command: self.description,
            status,
            stdout: collect(&self.stdout),
            stderr: collect(&self.stderr),
        }
    }
}

impl Running {
    /// Waits like [`Running::wait`], and returns with the output the child's peak resident set
    /// size in bytes: its own `ru_maxrss` as `wait4(2)` reports it, whatever else this process
    /// runs at the same time (unlike `RUSAGE_CHILDREN`, which mixes in every child reaped,
    /// cargo and rustc included).
    #[cfg(unix)]
    pub fn wait_with_peak_rss(mut self, deadline: Duration) -> (Output, u64) {
        use std::os::unix::process::ExitStatusExt;
        let pid = i32::try_from(self.pid()).expect("a pid fits in pid_t");
        let started = Instant::now();
        let (status, usage) = loop {
            let mut status = 0;
            // SAFETY: rusage is plain integers; all zeroes is a valid value.
            let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
            // SAFETY: `pid` is our child, not reaped yet (std's `Child` has not waited for it and
            // will not: it is not waited for on drop); both pointers are valid for the call.
            let reaped = unsafe { libc::wait4(pid, &mut status, libc::WNOHANG, &mut usage) };
            if reaped == pid {
                break (status, usage);
            }
            if reaped < 0 {
                let error = std::io::Error::last_os_error();
                if error.kind() == std::io::ErrorKind::Interrupted {
                    continue;
                }
                panic!("cannot wait for {}: {error}", self.description);
            }
            if started.elapsed() > deadline {
                let _ = self.child.kill();
                panic!(
                    "{} did not finish within {deadline:?}; killed it\n--- stdout ---\n{}\n--- stderr ---\n{}",
                    self.description,
                    collect(&self.stdout),
                    collect(&self.stderr)
                );
            }
            thread::sleep(Duration::from_millis(10));
        };
        // Linux reports kilobytes, macOS bytes.
        let unit = if cfg!(target_os = "macos") { 1 } else { 1024 };
        let peak = u64::try_from(usage.ru_maxrss).unwrap_or(0) * unit;
        let output = Output {
            command: self.description,
            status: ExitStatus::from_raw(status),
            stdout: collect(&self.stdout),
            stderr: collect(&self.stderr),
        };
        (output, peak)
    }
}

/// Polls `condition` every 10 ms until it holds; panics with `what` after `deadline`.
pub fn wait_until(deadline: Duration, what: &str, mut condition: impl FnMut() -> bool) {
    let started = Instant::now();
    while !condition() {
        assert!(
            started.elapsed() < deadline,
            "timed out after {deadline:?} waiting until {what}"
        );
        thread::sleep(Duration::from_millis(10));
    }
}
