//! Where the agent's processes run: the working copy as their directory, and the isolation of
//! `[workspace] isolation` around them — none (`local`) or Debian's `bwrap` (`bubblewrap`),
//! under which the working copy is the only writable place, `/tmp` is private and the network
//! is cut off unless `[workspace] network = true`.
//!
//! Agents build their processes with [`crate::agents::agent::Request::command`], which asks the run's
//! sandbox; the workspace's own commands (`run_command`, `run_tests`) go through it too, so the
//! eval's checks see the same machine the agent saw.
//!
//! Under bubblewrap a workspace's processes get a `HOME` and a `/tmp` of the run's own (kept
//! across its turns and commands, never shared with the host's): programs that keep state in
//! `~` — a coding agent's sessions — work, and nothing leaks into the user's home. API keys
//! come from the environment, which is passed through.

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};

use crate::config::Isolation;

/// The program `bubblewrap` isolation runs; `NICEEVAL_BWRAP` names another.
fn bwrap_program() -> OsString {
    std::env::var_os("NICEEVAL_BWRAP").unwrap_or_else(|| OsString::from("bwrap"))
}

/// Fails with a clear error when `bwrap` cannot create its namespaces here (not installed, or
/// the kernel forbids unprivileged user namespaces).
pub(crate) fn check_bwrap() -> Result<(), super::WorkspaceError> {
    let program = bwrap_program();
    let shown = program.to_string_lossy().into_owned();
    let out = std::process::Command::new(&program)
        .args(["--ro-bind", "/", "/", "--dev", "/dev", "--unshare-net", "--", "true"])
        .stdin(std::process::Stdio::null())
        .output()
        .map_err(|e| super::WorkspaceError::Spawn {
            program: shown.clone(),
            message: format!(
                "{e}; [workspace] isolation = \"bubblewrap\" needs bubblewrap (Debian/Ubuntu: apt-get install bubblewrap)"
            ),
        })?;
    if out.status.success() {
        Ok(())
    } else {
        Err(super::WorkspaceError::Spawn {
            program: shown,
            message: format!(
                "bubblewrap cannot create a sandbox here ({}): {}; the kernel may forbid unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone / apparmor_restrict_unprivileged_userns), or use isolation = \"local\"",
                out.status,
                String::from_utf8_lossy(&out.stderr).trim()
            ),
        })
    }
}

/// The place an agent's processes run in: the working copy and its isolation. Cheap to clone.
#[derive(Debug, Clone)]
pub struct Sandbox {
    root: PathBuf,
    isolation: Isolation,
    network: bool,
    /// The run's own directory holding `home/` and `tmp/` for isolated processes.
    private: Option<PathBuf>,
}

impl Sandbox {
    /// Processes in `root`, isolated as `isolation`; `network` lets bubblewrapped processes
    /// reach the network.
    pub fn new(root: impl Into<PathBuf>, isolation: Isolation, network: bool) -> Sandbox {
        Sandbox {
            root: root.into(),
            isolation,
            network,
            private: None,
        }
    }

    /// Gives isolated processes `dir/home` as `HOME` and `dir/tmp` as `/tmp`, both writable and
    /// kept for the run (so a coding agent finds its session files again on the next turn).
    /// Without it, `HOME` stays read-only and `/tmp` is a fresh empty one per process.
    pub fn with_private_dir(mut self, dir: impl Into<PathBuf>) -> Sandbox {
        self.private = Some(dir.into());
        self
    }

    /// The working copy.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The isolation in force.
    pub fn isolation(&self) -> Isolation {
        self.isolation
    }

    /// Whether isolated processes may use the network.
    pub fn network(&self) -> bool {
        self.network
    }

    /// The program and leading arguments that run `program` in `dir` (inside the working copy)
    /// under this isolation: `program` alone for `local`, `bwrap <options> -- program` for
    /// `bubblewrap`.
    pub fn argv(&self, program: &OsStr, dir: &Path) -> Vec<OsString> {
        match self.isolation {
            Isolation::Local => vec![program.to_os_string()],
            Isolation::Bubblewrap => {
                let root = self.root.as_os_str().to_os_string();
                let dir = dir.as_os_str().to_os_string();
                let mut argv: Vec<OsString> = vec![bwrap_program()];
                let mut push =
                    |items: &[&OsStr]| argv.extend(items.iter().map(|s| s.to_os_string()));
                // The whole system read-only, fresh /dev and /proc, a private /tmp; then the
                // working copy bound writable at its own path (after the /tmp mount, so a
                // working copy under /tmp shows through it).
                push(&[
                    OsStr::new("--ro-bind"),
                    OsStr::new("/"),
                    OsStr::new("/"),
                    OsStr::new("--dev"),
                    OsStr::new("/dev"),
                    OsStr::new("--proc"),
                    OsStr::new("/proc"),
                ]);
                match &self.private {
                    Some(dir) => {
                        let (home, tmp) = (dir.join("home"), dir.join("tmp"));
                        push(&[
                            OsStr::new("--bind"),
                            tmp.as_os_str(),
                            OsStr::new("/tmp"),
                            OsStr::new("--bind"),
                            home.as_os_str(),
                            home.as_os_str(),
                            OsStr::new("--setenv"),
                            OsStr::new("HOME"),
                            home.as_os_str(),
                        ]);
                        // Toolchains installed under the real home (rustup's `~/.rustup` and
                        // `~/.cargo`) stay where they are, readable, when nothing names them.
                        for (var, dir) in [("RUSTUP_HOME", ".rustup"), ("CARGO_HOME", ".cargo")] {
                            if std::env::var_os(var).is_some() {
                                continue;
                            }
                            if let Some(real) = std::env::var_os("HOME")
                                .map(|h| PathBuf::from(h).join(dir))
                                .filter(|p| p.is_dir())
                            {
                                push(&[OsStr::new("--setenv"), OsStr::new(var), real.as_os_str()]);
                            }
                        }
                    }
                    None => push(&[OsStr::new("--tmpfs"), OsStr::new("/tmp")]),
                }
                push(&[
                    OsStr::new("--bind"),
                    &root,
                    &root,
                    OsStr::new("--chdir"),
                    &dir,
                    OsStr::new("--die-with-parent"),
                    OsStr::new("--unshare-pid"),
                    OsStr::new("--unshare-ipc"),
                    OsStr::new("--unshare-uts"),
                ]);
                if !self.network {
                    push(&[OsStr::new("--unshare-net")]);
                }
                push(&[OsStr::new("--"), program]);
                argv
            }
        }
    }

    /// A Tokio command running `program` in the working copy under this isolation. Callers add
    /// arguments, environment and stdio.
    pub fn command(&self, program: impl AsRef<OsStr>) -> tokio::process::Command {
        self.command_in(program, &self.root)
    }

    /// A Tokio command running `program` in `dir`, a directory inside the working copy.
    pub fn command_in(&self, program: impl AsRef<OsStr>, dir: &Path) -> tokio::process::Command {
        let argv = self.argv(program.as_ref(), dir);
        let mut command = tokio::process::Command::new(&argv[0]);
        command.args(&argv[1..]).current_dir(dir);
        command
    }
}
