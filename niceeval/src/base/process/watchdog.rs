//! The watchdog (Linux): a small process, started at a process's first spawn, that outlives it
//! and kills, once it is gone, every process still carrying its marker — the way out no code of
//! the process can see (SIGKILL, an abort, a crash).
//!
//! It holds the read end of a pipe whose write end only this process holds (close-on-exec, so
//! no child inherits it): when this process ends, however it ends, the kernel closes the write
//! end and the watchdog reads end of file. It then sends SIGKILL — which also ends a stopped
//! process — to every process whose [`TREE_VAR`](super::TREE_VAR) names a tree of this
//! process (`<token>-<n>`, see [`super::token`]), scanning until nothing carries it: descendants
//! that left the process group or the session included. After a normal exit the hook of
//! [`super::owner`] has already ended everything, and the scan finds nothing.
//!
//! `PR_SET_PDEATHSIG` would not do: it covers the direct child alone (not its descendants, nor
//! a command started with `setsid`), and it fires when the *thread* that forked the child ends
//! — a Tokio worker thread, in the middle of a run.
//!
//! The watchdog runs in a process group of its own (Ctrl-C in the terminal, or nextest ending
//! a test's group, does not end it first), with stdin the pipe, stdout and stderr null (a
//! runner reading the test's output waits for no one), and an environment of `PATH` alone.

use std::io;
use std::os::fd::{FromRawFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};
use std::sync::Mutex;

use super::TREE_VAR;

/// The watchdog's script: `$1` is the token of the process it watches, `$2` the marker's
/// variable.
///
/// Hand-written shell rather than a Rust program: the watchdog must be a process of its own
/// that outlives the test binary, and a test binary (libtest's `main`, or the user's
/// `main!()`) cannot be re-entered as another program; `/bin/sh`, `grep` and `kill` are on
/// every Linux system. `grep -z` reads each `/proc/PID/environ` as NUL-separated entries and
/// `-l` names the files that match, in one process for the whole table.
const SCRIPT: &str = r#"
read -r _ignored
i=0
while [ "$i" -lt 50 ]; do
    found=
    for file in $(grep -lzE "^$2=(.*:)?$1-" /proc/[0-9]*/environ 2>/dev/null); do
        pid=${file#/proc/}
        pid=${pid%/environ}
        [ "$pid" = "$$" ] && continue
        kill -KILL "$pid" 2>/dev/null && found=1
    done
    [ -z "$found" ] && break
    i=$((i + 1))
done
"#;

/// The write end of the watchdog's pipe, held for the life of the process.
static WRITE_END: Mutex<Option<OwnedFd>> = Mutex::new(None);

/// Starts the watchdog of this process (once, from [`super::owner::first_spawn`]). A
/// watchdog that cannot start is said once on stderr; the exit hook and the signal paths
/// still end every tree.
pub(super) fn start() {
    match Watchdog::start(&super::token()) {
        Ok(watchdog) => {
            *WRITE_END.lock().unwrap_or_else(|p| p.into_inner()) = Some(watchdog.write_end);
        }
        Err(e) => eprintln!(
            "niceeval: cannot start the watchdog that ends agents if this process is killed: {e}"
        ),
    }
}

/// A started watchdog; dropping it (closing the write end) is what the end of the watched
/// process looks like to it.
#[derive(Debug)]
pub(super) struct Watchdog {
    write_end: OwnedFd,
}

impl Watchdog {
    /// Starts a watchdog for the trees whose ids start with `token-`.
    pub(super) fn start(token: &str) -> io::Result<Watchdog> {
        let mut fds = [0; 2];
        // SAFETY: `fds` is a valid array of two ints for pipe2 to fill.
        if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: pipe2 succeeded: both descriptors are open and owned by nobody else.
        let (read_end, write_end) =
            unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
        let mut command = Command::new("/bin/sh");
        command
            .args(["-c", SCRIPT, "niceeval-watchdog", token, TREE_VAR])
            .env_clear()
            .stdin(Stdio::from(read_end))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .process_group(0);
        if let Some(path) = std::env::var_os("PATH") {
            command.env("PATH", path);
        }
        // The child is never waited for: it outlives this process (and `read_end`, moved into
        // the command, is closed here once the child has it).
        command.spawn()?;
        Ok(Watchdog { write_end })
    }
}
