//! Commands run in a working copy: [`RunCommand`] (what `t.workspace().run_command(..)`
//! returns), run under the workspace's sandbox as a process tree of their own (see `crate::base::process`),
//! ended whole on timeout and when they finish, and logged ([`CommandRecord`]) so `no_failed_shell_commands()` sees them.

use std::future::{Future, IntoFuture};
use std::path::PathBuf;
use std::pin::Pin;
use std::process::{Output, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use super::{Sandbox, WorkspaceError};

/// Default time a workspace command may run.
pub const DEFAULT_COMMAND_TIMEOUT: Duration = Duration::from_secs(600);

/// One command run through the workspace, as `no_failed_shell_commands()` reads it.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct CommandRecord {
    /// The command line, as shown in reports.
    pub command: String,
    /// Its exit code; `None` when a signal ended it.
    pub exit_code: Option<i32>,
    /// It exited with code 0.
    pub success: bool,
}

/// A command to run in the working copy; `.await` it for its [`Output`]. See
/// [`super::Workspace::run_command`].
#[must_use = "a command does nothing until it is awaited"]
pub struct RunCommand {
    sandbox: Sandbox,
    program: String,
    args: Vec<String>,
    cwd: Option<PathBuf>,
    env: Vec<(String, String)>,
    timeout: Duration,
    log: Arc<Mutex<Vec<CommandRecord>>>,
    logged: bool,
}

impl std::fmt::Debug for RunCommand {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RunCommand")
            .field("command", &self.display())
            .field("cwd", &self.cwd)
            .field("timeout", &self.timeout)
            .finish_non_exhaustive()
    }
}

impl RunCommand {
    pub(crate) fn new(
        sandbox: Sandbox,
        program: String,
        args: Vec<String>,
        log: Arc<Mutex<Vec<CommandRecord>>>,
    ) -> RunCommand {
        RunCommand {
            sandbox,
            program,
            args,
            cwd: None,
            env: Vec::new(),
            timeout: DEFAULT_COMMAND_TIMEOUT,
            log,
            logged: true,
        }
    }

    /// Leaves the command out of the log `no_failed_shell_commands()` reads (test runs, whose
    /// failures are their test cases' gates).
    pub(crate) fn unlogged(mut self) -> Self {
        self.logged = false;
        self
    }

    /// Runs in `dir`, relative to the working copy (default: the copy itself).
    pub fn cwd(mut self, dir: impl Into<PathBuf>) -> Self {
        self.cwd = Some(dir.into());
        self
    }

    /// Sets an environment variable for the command.
    pub fn env(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.env.push((key.into(), value.into()));
        self
    }

    /// Kills the command (and everything it started) after `timeout` (default 10 minutes); the
    /// await then returns [`WorkspaceError::Timeout`].
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// The directory it runs in: the working copy, or `.cwd(..)` inside it.
    pub(crate) fn directory(&self) -> PathBuf {
        match &self.cwd {
            Some(dir) => self.sandbox.root().join(dir),
            None => self.sandbox.root().to_path_buf(),
        }
    }

    /// The command line, as reports show it.
    pub fn display(&self) -> String {
        std::iter::once(self.program.as_str())
            .chain(self.args.iter().map(String::as_str))
            .collect::<Vec<_>>()
            .join(" ")
    }

    /// Runs it, with stdout and stderr apart (`merged`: both into stdout, in the order they
    /// were written, and stderr empty).
    pub(crate) async fn run(self, merged: bool) -> Result<Output, WorkspaceError> {
        let shown = self.display();
        if let Some(cwd) = self.cwd.as_ref().filter(|d| d.is_absolute()) {
            return Err(WorkspaceError::OutsideCopy(cwd.display().to_string()));
        }
        let dir = self.directory();
        if dir
            .components()
            .any(|c| c == std::path::Component::ParentDir)
        {
            return Err(WorkspaceError::OutsideCopy(dir.display().to_string()));
        }
        if !dir.is_dir() {
            return Err(WorkspaceError::Spawn {
                program: self.program.clone(),
                message: format!("its directory {} does not exist", dir.display()),
            });
        }
        if crate::base::process::which(&self.program).is_none()
            && !dir.join(&self.program).is_file()
        {
            return Err(WorkspaceError::Spawn {
                program: self.program.clone(),
                message:
                    "program not found (not on PATH and no such file); install it or give its path"
                        .to_string(),
            });
        }
        let mut command = self.sandbox.command_in(&self.program, &dir);
        command.args(&self.args);
        for (key, value) in &self.env {
            command.env(key, value);
        }
        let reader = if merged {
            Some(
                merge_streams(&mut command).map_err(|e| WorkspaceError::Spawn {
                    program: self.program.clone(),
                    message: format!("cannot create a pipe: {e}"),
                })?,
            )
        } else {
            command.stdout(Stdio::piped()).stderr(Stdio::piped());
            None
        };
        let spawned =
            crate::base::process::spawn(&mut command, None, crate::base::process::Stderr::AsSet);
        // The write ends now belong to the child only, so the reader sees end of file.
        drop(command);
        let mut spawned = spawned.map_err(|e| WorkspaceError::Spawn {
            program: self.program.clone(),
            message: e.to_string(),
        })?;
        let read = reader.map(tokio::task::spawn_blocking);
        let waited = tokio::time::timeout(self.timeout, output(&mut spawned.child)).await;
        // Whatever the command left running goes with it (and closes the pipe for the reader).
        spawned.tree.end().await;
        let mut output = match waited {
            Err(_) => {
                return Err(WorkspaceError::Timeout {
                    command: shown,
                    after: self.timeout,
                });
            }
            Ok(result) => result.map_err(|e| WorkspaceError::Spawn {
                program: self.program.clone(),
                message: e.to_string(),
            })?,
        };
        if let Some(read) = read {
            output.stdout = tokio::time::timeout(Duration::from_secs(10), read)
                .await
                .ok()
                .and_then(Result::ok)
                .unwrap_or_default();
        }
        if !self.logged {
            return Ok(output);
        }
        self.log
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(CommandRecord {
                command: shown,
                exit_code: output.status.code(),
                success: output.status.success(),
            });
        Ok(output)
    }
}

impl IntoFuture for RunCommand {
    type Output = Result<Output, WorkspaceError>;
    type IntoFuture = Pin<Box<dyn Future<Output = Self::Output> + Send>>;

    fn into_future(self) -> Self::IntoFuture {
        Box::pin(self.run(false))
    }
}

/// Points the command's stdout and stderr at one pipe and returns the reader of its other end
/// (to run on a blocking thread). A hand-made pipe: `std::io::pipe` needs Rust 1.87, above this
/// crate's minimum.
#[cfg(unix)]
fn merge_streams(
    command: &mut tokio::process::Command,
) -> std::io::Result<impl FnOnce() -> Vec<u8> + Send + 'static> {
    use std::io::Read;
    use std::os::fd::{FromRawFd, OwnedFd};
    let mut fds = [0; 2];
    // SAFETY: pipe(2) writes two new descriptors into the array we own; we take ownership of
    // each exactly once below.
    if unsafe { libc::pipe(fds.as_mut_ptr()) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: both descriptors were just created by pipe(2) and are owned by nobody else.
    let (read, write) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
    for fd in [fds[0], fds[1]] {
        // SAFETY: fcntl on descriptors we own; close-on-exec keeps them out of other children.
        unsafe {
            libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC);
        }
    }
    let write2 = write.try_clone()?;
    command
        .stdout(Stdio::from(write))
        .stderr(Stdio::from(write2));
    Ok(move || {
        let mut file = std::fs::File::from(read);
        let mut out = Vec::new();
        let _ = file.read_to_end(&mut out);
        out
    })
}

#[cfg(not(unix))]
fn merge_streams(
    command: &mut tokio::process::Command,
) -> std::io::Result<impl FnOnce() -> Vec<u8> + Send + 'static> {
    command.stdout(Stdio::piped()).stderr(Stdio::inherit());
    Ok(Vec::new)
}

/// Waits for the child, reading its piped stdout and stderr to their ends meanwhile.
async fn output(child: &mut tokio::process::Child) -> std::io::Result<Output> {
    let stdout = crate::base::process::read_head(child.stdout.take(), usize::MAX);
    let stderr = crate::base::process::read_head(child.stderr.take(), usize::MAX);
    let (status, stdout, stderr) = tokio::join!(child.wait(), stdout, stderr);
    Ok(Output {
        status: status?,
        stdout,
        stderr,
    })
}
