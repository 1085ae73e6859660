//! Running a grader subprocess: stdin in, stdout and stderr out, under a timeout, without
//! starving the async runtime. Shared by script graders, custom assertions and code assertions.
//!
//! Assertions are synchronous (`t.check` returns at once), so a subprocess is waited for on the
//! calling thread. Inside a multi-thread Tokio runtime (the one `#[eval]` bodies run on) the wait
//! goes through `tokio::task::block_in_place`, which hands the worker's other tasks to another
//! thread first; on a current-thread runtime or outside Tokio it simply blocks.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Most bytes kept of a grader's stdout or stderr; the rest is read and dropped.
pub(crate) const MAX_CAPTURE: usize = 16 * 1024 * 1024;

/// A subprocess to run.
#[derive(Debug, Clone)]
pub(crate) struct Job {
    pub program: String,
    pub args: Vec<String>,
    pub stdin: Vec<u8>,
    pub cwd: Option<PathBuf>,
    pub env: Vec<(String, String)>,
    pub timeout: Duration,
}

/// How a subprocess ended.
#[derive(Debug, Clone)]
pub(crate) struct Finished {
    /// Exit code; `None` when killed by a signal or on timeout.
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
    pub timed_out: bool,
}

impl Job {
    /// The command line as shown in reasons.
    pub fn display(&self) -> String {
        std::iter::once(self.program.as_str())
            .chain(self.args.iter().map(String::as_str))
            .collect::<Vec<_>>()
            .join(" ")
    }

    /// Runs the job to completion (or timeout).
    pub fn run(&self) -> std::io::Result<Finished> {
        match tokio::runtime::Handle::try_current() {
            Ok(handle) if handle.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread => {
                tokio::task::block_in_place(|| self.run_blocking())
            }
            _ => self.run_blocking(),
        }
    }

    fn run_blocking(&self) -> std::io::Result<Finished> {
        // A relative program path with a folder in it ("./graders/x.py") is taken from the
        // grader's working directory, not from wherever the test runs.
        let program = match &self.cwd {
            Some(cwd) if self.program.contains('/') && Path::new(&self.program).is_relative() => {
                cwd.join(&self.program)
            }
            _ => PathBuf::from(&self.program),
        };
        let mut command = Command::new(program);
        command
            .args(&self.args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        if let Some(cwd) = &self.cwd {
            command.current_dir(cwd);
        }
        for (k, v) in &self.env {
            command.env(k, v);
        }
        #[cfg(unix)]
        {
            use std::os::unix::process::CommandExt;
            // Own process group, so a timeout kills the grader's children too.
            command.process_group(0);
        }
        let mut child = command.spawn()?;
        let pid = child.id();
        let stdout = capture(child.stdout.take());
        let stderr = capture(child.stderr.take());
        if let Some(mut stdin) = child.stdin.take() {
            let input = self.stdin.clone();
            // A grader may exit without reading its input: a broken pipe is not an error.
            std::thread::spawn(move || {
                let _ = stdin.write_all(&input);
            });
        }
        let deadline = Instant::now() + self.timeout;
        let mut pause = Duration::from_millis(1);
        let (code, timed_out) = loop {
            if let Some(status) = child.try_wait()? {
                break (status.code(), false);
            }
            let now = Instant::now();
            if now >= deadline {
                kill_group(pid);
                let _ = child.kill();
                let _ = child.wait();
                break (None, true);
            }
            std::thread::sleep(pause.min(deadline - now));
            pause = (pause * 2).min(Duration::from_millis(20));
        };
        // Readers finish when every holder of the pipes exits; don't wait long for stray
        // grandchildren, then clean them up.
        let grace = Instant::now() + Duration::from_millis(500);
        let out = stdout.finish(grace);
        let err = stderr.finish(grace);
        kill_group(pid);
        Ok(Finished {
            code,
            stdout: out,
            stderr: err,
            timed_out,
        })
    }
}

#[cfg(unix)]
fn kill_group(pid: u32) {
    if let Ok(pid) = i32::try_from(pid) {
        // SAFETY: kill(2) with a negative pid signals the process group we created for the
        // child (process_group(0) makes its id the group id); it touches no memory.
        unsafe {
            libc::kill(-pid, libc::SIGKILL);
        }
    }
}

#[cfg(not(unix))]
fn kill_group(_pid: u32) {}

/// A pipe being read on its own thread into a bounded buffer.
struct Capture {
    buffer: Arc<Mutex<Vec<u8>>>,
    done: std::sync::mpsc::Receiver<()>,
}

fn capture<R: Read + Send + 'static>(pipe: Option<R>) -> Capture {
    let buffer = Arc::new(Mutex::new(Vec::new()));
    let (tx, done) = std::sync::mpsc::channel();
    if let Some(mut pipe) = pipe {
        let buffer = buffer.clone();
        std::thread::spawn(move || {
            let mut chunk = [0u8; 64 * 1024];
            loop {
                match pipe.read(&mut chunk) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => {
                        let mut b = buffer.lock().unwrap_or_else(|p| p.into_inner());
                        let room = MAX_CAPTURE.saturating_sub(b.len());
                        b.extend_from_slice(&chunk[..n.min(room)]);
                    }
                }
            }
            let _ = tx.send(());
        });
    } else {
        let _ = tx.send(());
    }
    Capture { buffer, done }
}

impl Capture {
    fn finish(self, until: Instant) -> String {
        let _ = self
            .done
            .recv_timeout(until.saturating_duration_since(Instant::now()));
        let bytes = std::mem::take(&mut *self.buffer.lock().unwrap_or_else(|p| p.into_inner()));
        String::from_utf8_lossy(&bytes).into_owned()
    }
}

/// Finds `name` on `PATH` (for a clear "not installed" message before spawning).
pub(crate) fn which(name: &str) -> Option<PathBuf> {
    let path = std::path::Path::new(name);
    if path.components().count() > 1 {
        return path.exists().then(|| path.to_path_buf());
    }
    std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|dir| dir.join(name))
            .find(|candidate| candidate.is_file())
    })
}

/// The last `max` characters of `text`, trimmed, marked when cut.
pub(crate) fn tail(text: &str, max: usize) -> String {
    let text = text.trim();
    let count = text.chars().count();
    if count <= max {
        return text.to_string();
    }
    let cut: String = text.chars().skip(count - max).collect();
    format!("…(last {max} chars) {cut}")
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    fn sh(script: &str, timeout_ms: u64) -> Finished {
        Job {
            program: "sh".into(),
            args: vec!["-c".into(), script.into()],
            stdin: b"hello".to_vec(),
            cwd: None,
            env: vec![],
            timeout: Duration::from_millis(timeout_ms),
        }
        .run()
        .unwrap()
    }

    #[test]
    fn captures_stdin_stdout_stderr_and_code() {
        let f = sh("cat; echo oops >&2; exit 3", 5000);
        assert_eq!(f.stdout, "hello");
        assert_eq!(f.stderr.trim(), "oops");
        assert_eq!(f.code, Some(3));
        assert!(!f.timed_out);
    }

    #[test]
    fn timeout_kills_the_whole_group() {
        let started = Instant::now();
        let f = sh("sleep 30 & sleep 30", 200);
        assert!(f.timed_out);
        assert!(started.elapsed() < Duration::from_secs(5));
    }

    #[test]
    fn background_children_do_not_hold_the_result() {
        let started = Instant::now();
        let f = sh("(sleep 30 &) ; echo done", 10_000);
        assert_eq!(f.stdout.trim(), "done");
        assert!(started.elapsed() < Duration::from_secs(5));
    }

    #[test]
    fn huge_output_is_bounded() {
        let f = sh("head -c 20000000 /dev/zero | tr '\\0' 'a'", 20_000);
        assert_eq!(f.stdout.len(), MAX_CAPTURE);
        assert_eq!(f.code, Some(0));
    }

    #[test]
    fn works_inside_a_multi_thread_runtime() {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .build()
            .unwrap();
        let f = rt.block_on(async { tokio::spawn(async { sh("echo hi", 5000) }).await.unwrap() });
        assert_eq!(f.stdout.trim(), "hi");
    }
}
