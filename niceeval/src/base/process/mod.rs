//! The one place niceeval starts and ends processes: subprocess agents, workspace commands,
//! `run_tests`, script graders and inline code all go through it.
//!
//! A process starts in a process group of its own and carries a marker in its environment
//! ([`TREE_VAR`]), which its descendants inherit. Ending it ends the whole tree: every
//! descendant found by walking `/proc` from it, every process carrying its marker (a command
//! started in a session of its own — Claude Code runs its Bash tool with `setsid` — has left
//! the group but kept the environment), and the group itself. The tree is frozen (SIGSTOP)
//! before it is told to end, so no process of it reacts to another's end or forks past a scan;
//! it then gets SIGTERM and, after a short grace period, SIGKILL for what is left. Outside
//! Linux the process group stands for the tree.
//!
//! Every live tree is registered with one owner ([`owner`]) that ends it on each way out of
//! the process: the turn's end and an eval's timeout or panic (the tree is ended, or dropped
//! and ended on a thread of its own), the process's exit (an `atexit` hook), SIGINT and SIGTERM
//! (the front ends call [`end_all`] or [`end_all_and_die`]), and on Linux a SIGKILL of the
//! process (a [`watchdog`] that outlives it). A tree is frozen only under a lock the ways out
//! take, so the process never leaves a tree stopped.
//!
//! Also here: writing a child's stdin concurrently (a program that prints before it has read
//! everything must not deadlock), a bounded stderr tail, a program on `PATH` ([`which`]), and
//! the signal note of an exit status.

use std::io;
use std::path::{Path, PathBuf};
use std::process::{ExitStatus, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};
use tokio::process::{Child, Command};

mod owner;
#[cfg(target_os = "linux")]
mod watchdog;

pub(crate) use owner::end_all;
#[cfg(unix)]
pub(crate) use owner::end_all_and_die;

/// The environment variable marking every process of a tree niceeval started: a list of tree
/// ids separated by `:` (a niceeval run inside another adds its own).
pub(crate) const TREE_VAR: &str = "NICEEVAL_PROCESS_TREE";

/// How long a tree has between SIGTERM and SIGKILL.
pub(crate) const GRACE: Duration = Duration::from_secs(2);

/// How many scans of the process table in a row must find nothing before a tree counts as
/// ended: a process caught between `fork` and `exec`, its environment unreadable for that
/// moment, is missed by one scan and found by the next.
const EMPTY_SCANS: u32 = 3;

/// How long an error waits for the stderr of a failed program to reach its end.
pub(crate) const STDERR_WAIT: Duration = Duration::from_secs(2);

/// What becomes of the child's stderr.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Stderr {
    /// As the caller set it on the command.
    AsSet,
    /// Piped, and the last this many bytes kept ([`Spawned::stderr`]).
    Tail(usize),
}

/// A started process: the child, its tree, and the reader of its stderr tail.
#[derive(Debug)]
pub(crate) struct Spawned {
    /// The child (its stdout and stderr as the command set them, stdin taken).
    pub(crate) child: Child,
    /// The tree, ended when dropped.
    pub(crate) tree: Tree,
    /// The stderr tail, with [`Stderr::Tail`].
    pub(crate) stderr: Option<StderrTail>,
}

/// Starts `command` as the root of a tree of its own: its own process group, the tree's marker
/// in its environment, `stdin` written concurrently (null when `None`; a child that exits
/// without reading it is not an error).
pub(crate) fn spawn(
    command: &mut Command,
    stdin: Option<Vec<u8>>,
    stderr: Stderr,
) -> io::Result<Spawned> {
    let piped = stdin.is_some();
    start(command, piped, stdin, stderr)
}

/// Runs `command` as the root of a tree of its own to its end (stdin null, stdout and stderr
/// as the command set them) and gives its whole output; the tree is ended when the command
/// exits, and when the future is dropped.
pub async fn output(command: &mut Command) -> io::Result<std::process::Output> {
    let mut spawned = spawn(command, None, Stderr::AsSet)?;
    let stdout = read_head(spawned.child.stdout.take(), usize::MAX);
    let stderr = read_head(spawned.child.stderr.take(), usize::MAX);
    let (status, stdout, stderr) = tokio::join!(spawned.child.wait(), stdout, stderr);
    spawned.tree.end().await;
    Ok(std::process::Output {
        status: status?,
        stdout,
        stderr,
    })
}

/// As [`spawn`], with the child's stdin piped and left in `child.stdin` for the caller to
/// write over time (a worker's requests).
#[cfg(feature = "inline-code")]
pub(crate) fn spawn_open_stdin(command: &mut Command, stderr: Stderr) -> io::Result<Spawned> {
    start(command, true, None, stderr)
}

fn start(
    command: &mut Command,
    piped: bool,
    stdin: Option<Vec<u8>>,
    stderr: Stderr,
) -> io::Result<Spawned> {
    let mut tree = Tree::new();
    tree.prepare(command);
    command.stdin(if piped { Stdio::piped() } else { Stdio::null() });
    if let Stderr::Tail(_) = stderr {
        command.stderr(Stdio::piped());
    }
    // The tree ends the child (gracefully); dropping the handle alone must not SIGKILL it.
    command.kill_on_drop(false);
    owner::first_spawn();
    let mut child = {
        // Started and registered under the registry's lock: ending every tree never misses
        // one that was starting.
        let mut live = owner::live();
        if live.closed {
            return Err(io::Error::other(
                "the process is exiting and has ended its processes; nothing more is started",
            ));
        }
        let child = command.spawn()?;
        tree.started(child.id());
        live.add(&tree);
        child
    };
    if let Some(bytes) = stdin
        && let Some(mut pipe) = child.stdin.take()
    {
        tokio::spawn(async move {
            let _ = pipe.write_all(&bytes).await;
        });
    }
    let stderr = match stderr {
        Stderr::Tail(keep) => child
            .stderr
            .take()
            .map(|pipe| StderrTail::new(tokio::spawn(read_tail(pipe, keep)))),
        Stderr::AsSet => None,
    };
    Ok(Spawned {
        child,
        tree,
        stderr,
    })
}

impl Spawned {
    /// The stderr tail once the program is done with it, the tree ended: see [`finish`].
    #[cfg(test)]
    pub(crate) async fn stderr_tail(&mut self) -> String {
        finish(&mut self.tree, self.stderr.take(), true).await
    }
}

/// Ends `tree` and returns its stderr tail, read to its end (waiting at most [`STDERR_WAIT`]
/// each time). After a failure (`failed`), the program first gets the wait to finish writing
/// its stderr — an error built before would miss what it says — and the tree is ended after;
/// otherwise (success, timeout) the tree is ended first.
pub(crate) async fn finish(tree: &mut Tree, stderr: Option<StderrTail>, failed: bool) -> String {
    let Some(mut tail) = stderr else {
        tree.end().await;
        return String::new();
    };
    if failed && tail.wait(STDERR_WAIT).await {
        tree.end().await;
        return tail.take();
    }
    tree.end().await;
    tail.wait(STDERR_WAIT).await;
    tail.take()
}

/// The reader of a child's stderr, keeping its end.
#[derive(Debug)]
pub(crate) struct StderrTail {
    task: Option<tokio::task::JoinHandle<String>>,
    text: Option<String>,
}

impl StderrTail {
    fn new(task: tokio::task::JoinHandle<String>) -> StderrTail {
        StderrTail {
            task: Some(task),
            text: None,
        }
    }

    /// Waits at most `limit` for the end of file; whether it came.
    async fn wait(&mut self, limit: Duration) -> bool {
        let Some(task) = self.task.as_mut() else {
            return true;
        };
        match tokio::time::timeout(limit, task).await {
            Ok(text) => {
                self.text = Some(text.unwrap_or_default());
                self.task = None;
                true
            }
            Err(_) => false,
        }
    }

    /// What was read (empty while the reader still runs: it is stopped).
    fn take(&mut self) -> String {
        if let Some(task) = self.task.take() {
            task.abort();
        }
        self.text.take().unwrap_or_default()
    }
}

impl Drop for StderrTail {
    fn drop(&mut self) {
        if let Some(task) = self.task.take() {
            task.abort();
        }
    }
}

/// Reads `stream` to its end, keeping the last `keep` bytes (marked when more came before).
pub(crate) async fn read_tail(mut stream: impl AsyncRead + Unpin, keep: usize) -> String {
    let mut tail: Vec<u8> = Vec::new();
    let mut chunk = [0u8; 8192];
    let mut dropped = false;
    while let Ok(n) = stream.read(&mut chunk).await {
        if n == 0 {
            break;
        }
        tail.extend_from_slice(&chunk[..n]);
        if tail.len() > keep * 2 {
            let cut = tail.len() - keep;
            tail.drain(..cut);
            dropped = true;
        }
    }
    if tail.len() > keep {
        let cut = tail.len() - keep;
        tail.drain(..cut);
        dropped = true;
    }
    let text = String::from_utf8_lossy(&tail).into_owned();
    if dropped {
        format!("[…earlier stderr elided…]\n{text}")
    } else {
        text
    }
}

/// Reads `stream` to its end, keeping the first `keep` bytes (the rest is read and dropped).
pub(crate) async fn read_head(stream: Option<impl AsyncRead + Unpin>, keep: usize) -> Vec<u8> {
    let Some(mut stream) = stream else {
        return Vec::new();
    };
    let mut head = Vec::new();
    let mut chunk = [0u8; 64 * 1024];
    while let Ok(n) = stream.read(&mut chunk).await {
        if n == 0 {
            break;
        }
        let room = keep.saturating_sub(head.len());
        head.extend_from_slice(&chunk[..n.min(room)]);
    }
    head
}

/// A tree of processes started from one child; ended (SIGTERM, grace, SIGKILL) by
/// [`Tree::end`], or when dropped.
#[derive(Debug)]
pub(crate) struct Tree {
    /// This tree's id, in [`TREE_VAR`] of all its processes: the process's [`token`], `-`, and
    /// [`Tree::key`].
    id: String,
    /// This tree's key in the registry ([`owner`]).
    key: u64,
    /// The root: its pid and (Linux) its start time, so a reused pid is not taken for it.
    root: Option<(u32, u64)>,
    ended: bool,
}

impl Tree {
    fn new() -> Tree {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let key = NEXT.fetch_add(1, Ordering::Relaxed);
        Tree {
            id: format!("{}-{key}", token()),
            key,
            root: None,
            ended: false,
        }
    }

    /// Puts the command in a process group of its own and marks its environment.
    fn prepare(&self, command: &mut Command) {
        let inherited = command
            .as_std()
            .get_envs()
            .find(|(k, _)| *k == TREE_VAR)
            .and_then(|(_, v)| v.map(|v| v.to_string_lossy().into_owned()))
            .or_else(|| std::env::var(TREE_VAR).ok())
            .filter(|v| !v.is_empty());
        let marker = match inherited {
            Some(outer) => format!("{outer}:{}", self.id),
            None => self.id.clone(),
        };
        command.env(TREE_VAR, marker);
        #[cfg(unix)]
        command.process_group(0);
    }

    fn started(&mut self, pid: Option<u32>) {
        self.root = pid.map(|pid| (pid, linux::start_time(pid).unwrap_or(0)));
    }

    /// This tree's id.
    #[cfg(test)]
    pub(crate) fn id(&self) -> &str {
        &self.id
    }

    /// Ends every process of the tree: SIGTERM, then SIGKILL for whatever is still there after
    /// [`GRACE`]. Returns once [`EMPTY_SCANS`] scans in a row found nothing.
    pub(crate) async fn end(&mut self) {
        if self.ended {
            return;
        }
        self.ended = true;
        let mut members = self.terminate();
        let deadline = Instant::now() + GRACE;
        let mut pause = Duration::from_millis(5);
        let mut empty = 0;
        loop {
            empty = if self.sweep(&mut members) {
                0
            } else {
                empty + 1
            };
            if empty >= EMPTY_SCANS || Instant::now() >= deadline {
                break;
            }
            tokio::time::sleep(pause).await;
            pause = (pause * 2).min(Duration::from_millis(50));
        }
        self.kill(&members);
        owner::forget(self.key);
    }

    /// One look at the tree during the grace period: newcomers (forked since the last scan, or
    /// missed by it while their environment was unreadable in the middle of an `exec`) get
    /// SIGTERM and join `members`; those gone are forgotten. Whether anything is still running.
    fn sweep(&self, members: &mut Vec<Member>) -> bool {
        for member in self.members() {
            if !members.contains(&member) {
                #[cfg(unix)]
                signal(member.pid, libc::SIGTERM);
                members.push(member);
            }
        }
        self.alive(members)
    }

    /// Sends SIGTERM to the tree; the members it found.
    ///
    /// The tree is frozen first (SIGSTOP, which no process can catch, scanned again until no
    /// new process turns up), then sent SIGTERM, then SIGCONT. Signalling a live tree one
    /// process at a time races with it: a shell whose child was just terminated runs its next
    /// command before its own SIGTERM arrives (`sh -c 'sleep 2; touch x'` touches `x`), and a
    /// process forked between two scans is missed. A stopped process forks nothing and reacts
    /// to nothing; continued, it meets its pending SIGTERM before it runs another instruction.
    fn terminate(&self) -> Vec<Member> {
        let _frozen = owner::freezing();
        self.terminate_frozen()
    }

    /// [`Tree::terminate`], the caller holding [`owner::freezing`].
    fn terminate_frozen(&self) -> Vec<Member> {
        let mut members: Vec<Member> = Vec::new();
        #[cfg(unix)]
        {
            for _ in 0..10 {
                if let Some((root, _)) = self.root {
                    signal_group(root, libc::SIGSTOP);
                }
                let mut new = false;
                for member in self.members() {
                    if !members.contains(&member) {
                        signal(member.pid, libc::SIGSTOP);
                        members.push(member);
                        new = true;
                    }
                }
                if !new {
                    break;
                }
            }
            if let Some((root, _)) = self.root {
                signal_group(root, libc::SIGTERM);
            }
            for member in &members {
                signal(member.pid, libc::SIGTERM);
            }
            if let Some((root, _)) = self.root {
                signal_group(root, libc::SIGCONT);
            }
            for member in &members {
                signal(member.pid, libc::SIGCONT);
            }
        }
        members
    }

    /// Whether any member (or the group) is still running; forgets those that are gone.
    fn alive(&self, members: &mut Vec<Member>) -> bool {
        members.retain(Member::running);
        let group = self.root.is_some_and(|(root, _)| group_exists(root));
        !members.is_empty() || (group && !linux::AVAILABLE)
    }

    /// SIGKILL for the group, the members still there and anything new of the tree. The
    /// group goes first, so its processes stop forking; the tree is then scanned again until
    /// [`EMPTY_SCANS`] scans in a row find nothing running (a process forked during a scan, or
    /// in the middle of an `exec` when it was read, is found by a later one).
    fn kill(&self, members: &[Member]) {
        #[cfg(unix)]
        {
            if let Some((root, _)) = self.root {
                signal_group(root, libc::SIGKILL);
            }
            let mut targets: Vec<Member> = members.iter().copied().chain(self.members()).collect();
            let mut empty = 0;
            // Bounded: a tree that keeps forking faster than it is killed is left after this
            // many rounds rather than hanging the run.
            for _ in 0..50 {
                targets.retain(Member::running);
                if targets.is_empty() {
                    empty += 1;
                    if empty >= EMPTY_SCANS {
                        break;
                    }
                } else {
                    empty = 0;
                    for member in &targets {
                        signal(member.pid, libc::SIGKILL);
                    }
                }
                std::thread::sleep(Duration::from_millis(2));
                targets = self.members();
            }
        }
        #[cfg(not(unix))]
        let _ = members;
    }

    /// The processes of the tree now: the root and its descendants, and every process carrying
    /// the marker (Linux); nothing elsewhere (the group stands for the tree).
    fn members(&self) -> Vec<Member> {
        linux::members(self.root, &self.id)
    }
}

impl Drop for Tree {
    fn drop(&mut self) {
        if self.ended || self.root.is_none() {
            return;
        }
        self.ended = true;
        // Dropped in async code (a cancelled turn): SIGTERM now, SIGKILL after the grace period
        // on a thread of its own.
        let members = self.terminate();
        let tree = Tree {
            id: self.id.clone(),
            key: self.key,
            root: self.root,
            ended: true,
        };
        let _ = std::thread::Builder::new()
            .name("niceeval-tree-end".into())
            .spawn(move || {
                let mut members = members;
                let deadline = Instant::now() + GRACE;
                let mut empty = 0;
                loop {
                    empty = if tree.sweep(&mut members) {
                        0
                    } else {
                        empty + 1
                    };
                    if empty >= EMPTY_SCANS || Instant::now() >= deadline {
                        break;
                    }
                    std::thread::sleep(Duration::from_millis(20));
                }
                tree.kill(&members);
                owner::forget(tree.key);
            });
    }
}

/// What makes this process's tree ids its own: its pid and the time it first started a tree
/// (a pid is reused; the pair is not). The watchdog kills what carries `<token>-…`.
fn token() -> String {
    static TOKEN: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    TOKEN
        .get_or_init(|| {
            let nanos = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos());
            format!("{}x{nanos:x}", std::process::id())
        })
        .clone()
}

/// One process of a tree, as found in `/proc`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Member {
    pid: u32,
    /// Start time (clock ticks since boot), so a reused pid is never signalled.
    start: u64,
}

impl Member {
    /// Still this process, and not a zombie.
    fn running(&self) -> bool {
        linux::stat(self.pid).is_some_and(|s| s.start == self.start && s.state != 'Z')
    }
}

#[cfg(unix)]
fn signal(pid: u32, signal: i32) {
    if let Ok(pid) = i32::try_from(pid) {
        // SAFETY: kill(2) with a positive pid signals that process; no memory is involved.
        unsafe {
            libc::kill(pid, signal);
        }
    }
}

#[cfg(unix)]
fn signal_group(leader: u32, signal: i32) {
    if let Ok(pid) = i32::try_from(leader)
        && pid > 0
    {
        // SAFETY: kill(2) with a negative pid signals the process group created for the
        // tree's root (process_group(0) makes its pid the group id); no memory is involved.
        unsafe {
            libc::kill(-pid, signal);
        }
    }
}

fn group_exists(leader: u32) -> bool {
    #[cfg(unix)]
    {
        let Ok(pid) = i32::try_from(leader) else {
            return false;
        };
        // SAFETY: kill(2) with signal 0 only checks that the group exists.
        unsafe { libc::kill(-pid, 0) == 0 }
    }
    #[cfg(not(unix))]
    {
        let _ = leader;
        false
    }
}

/// Reading the process table from `/proc`.
#[cfg(target_os = "linux")]
mod linux {
    use std::collections::{HashMap, HashSet};

    use super::{Member, TREE_VAR};

    pub(super) const AVAILABLE: bool = true;

    /// What `/proc/PID/stat` says of a process.
    pub(super) struct Stat {
        pub(super) state: char,
        pub(super) parent: u32,
        pub(super) start: u64,
    }

    pub(super) fn stat(pid: u32) -> Option<Stat> {
        let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
        // `pid (comm) state ppid …`; comm may hold spaces and parentheses.
        let rest = &text[text.rfind(')')? + 1..];
        let fields: Vec<&str> = rest.split_whitespace().collect();
        Some(Stat {
            state: fields.first()?.chars().next()?,
            parent: fields.get(1)?.parse().ok()?,
            // Field 22 of the line; the 20th after the command name.
            start: fields.get(19)?.parse().ok()?,
        })
    }

    pub(super) fn start_time(pid: u32) -> Option<u64> {
        stat(pid).map(|s| s.start)
    }

    /// Whether the environment of `pid` holds `name` with a value `accepts` takes (false when
    /// it cannot be read: the process is gone, or is another user's).
    fn environ_has(pid: u32, name: &str, accepts: impl Fn(&[u8]) -> bool) -> bool {
        let Ok(environ) = std::fs::read(format!("/proc/{pid}/environ")) else {
            return false;
        };
        let prefix = format!("{name}=");
        environ
            .split(|b| *b == 0)
            .any(|entry| entry.strip_prefix(prefix.as_bytes()).is_some_and(&accepts))
    }

    /// Whether `pid` carries the marker of the tree `id` (one of the ids `TREE_VAR` lists).
    fn carries(pid: u32, id: &str) -> bool {
        environ_has(pid, TREE_VAR, |value| {
            value.split(|b| *b == b':').any(|t| t == id.as_bytes())
        })
    }

    /// The pids in `/proc`, this process's left out.
    fn pids() -> impl Iterator<Item = u32> {
        let me = std::process::id();
        std::fs::read_dir("/proc")
            .into_iter()
            .flatten()
            .flatten()
            .filter_map(|entry| entry.file_name().to_str()?.parse::<u32>().ok())
            .filter(move |pid| *pid != me)
    }

    /// See [`super::carrying`].
    pub(super) fn carrying(name: &str, value: &str) -> Vec<(u32, char)> {
        pids()
            .filter(|pid| environ_has(*pid, name, |v| v == value.as_bytes()))
            .filter_map(|pid| Some((pid, stat(pid)?.state)))
            .filter(|(_, state)| *state != 'Z')
            .collect()
    }

    pub(super) fn members(root: Option<(u32, u64)>, id: &str) -> Vec<Member> {
        let table: HashMap<u32, Stat> = pids().filter_map(|pid| Some((pid, stat(pid)?))).collect();
        let mut found: HashSet<u32> = HashSet::new();
        // The root and its descendants (the root only while it is still the root's pid).
        if let Some((root, start)) = root
            && table.get(&root).is_some_and(|s| s.start == start)
        {
            let mut children: HashMap<u32, Vec<u32>> = HashMap::new();
            for (pid, stat) in &table {
                children.entry(stat.parent).or_default().push(*pid);
            }
            let mut stack = vec![root];
            while let Some(pid) = stack.pop() {
                if found.insert(pid) {
                    stack.extend(children.get(&pid).into_iter().flatten());
                }
            }
        }
        // Whatever left the tree but kept the marker.
        for pid in table.keys() {
            if !found.contains(pid) && carries(*pid, id) {
                found.insert(*pid);
            }
        }
        found
            .into_iter()
            .filter_map(|pid| {
                let stat = &table[&pid];
                (stat.state != 'Z').then_some(Member {
                    pid,
                    start: stat.start,
                })
            })
            .collect()
    }
}

#[cfg(not(target_os = "linux"))]
mod linux {
    use super::Member;

    pub(super) const AVAILABLE: bool = false;

    pub(super) struct Stat {
        pub(super) state: char,
        pub(super) start: u64,
    }

    pub(super) fn stat(_pid: u32) -> Option<Stat> {
        None
    }

    pub(super) fn start_time(_pid: u32) -> Option<u64> {
        None
    }

    pub(super) fn members(_root: Option<(u32, u64)>, _id: &str) -> Vec<Member> {
        Vec::new()
    }
}

/// The processes whose environment holds `name=value` exactly, with their state (`R`, `S`,
/// `T` for stopped …), this process and zombies left out: how a test finds what is left of a
/// process tree it started with a variable of its own (Linux: read from `/proc`).
///
/// ```
/// # #[cfg(target_os = "linux")] {
/// let left = niceeval::__workspace::process::carrying("NICEEVAL_DOC_UNSET", "nothing");
/// assert!(left.is_empty());
/// # }
/// ```
#[cfg(target_os = "linux")]
pub fn carrying(name: &str, value: &str) -> Vec<(u32, char)> {
    linux::carrying(name, value)
}

/// ` by signal N` when a signal ended the process, else nothing.
pub(crate) fn signal_note(status: &ExitStatus) -> String {
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        status
            .signal()
            .map(|s| format!(" by signal {s}"))
            .unwrap_or_default()
    }
    #[cfg(not(unix))]
    {
        let _ = status;
        String::new()
    }
}

/// Finds `name` on `PATH` (a name with a folder in it: that file, if it exists), for a clear
/// "not installed" message before spawning.
pub(crate) fn which(name: &str) -> Option<PathBuf> {
    let path = Path::new(name);
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

/// Most bytes kept of a [`Job`]'s stdout or stderr; the rest is read and dropped.
pub(crate) const MAX_CAPTURE: usize = 16 * 1024 * 1024;

/// A program run to completion from synchronous code (script graders, inline code): stdin
/// in, stdout and stderr out, under a timeout.
///
/// Assertions are synchronous (`t.check` returns at once), so the job is waited for on the
/// calling thread: inside a multi-thread Tokio runtime (the one `#[eval]` bodies run on)
/// through `tokio::task::block_in_place`, which hands the worker's other tasks to another
/// thread first. The job itself runs on a small runtime of its own.
#[derive(Debug, Clone)]
pub(crate) struct Job {
    pub(crate) program: String,
    pub(crate) args: Vec<String>,
    pub(crate) stdin: Vec<u8>,
    pub(crate) cwd: Option<PathBuf>,
    pub(crate) env: Vec<(String, String)>,
    pub(crate) timeout: Duration,
}

/// How a [`Job`] ended.
#[derive(Debug, Clone)]
pub(crate) struct Finished {
    /// Exit code; `None` when killed by a signal or on timeout.
    pub(crate) code: Option<i32>,
    pub(crate) stdout: String,
    pub(crate) stderr: String,
    pub(crate) timed_out: bool,
}

impl Job {
    /// The command line as shown in reasons.
    pub(crate) fn display(&self) -> String {
        std::iter::once(self.program.as_str())
            .chain(self.args.iter().map(String::as_str))
            .collect::<Vec<_>>()
            .join(" ")
    }

    /// Runs the job to completion (or its timeout); its whole tree is ended afterwards.
    pub(crate) fn run(&self) -> io::Result<Finished> {
        let run = || {
            std::thread::scope(|scope| {
                scope
                    .spawn(|| {
                        tokio::runtime::Builder::new_current_thread()
                            .enable_all()
                            .build()?
                            .block_on(self.run_async())
                    })
                    .join()
                    .unwrap_or_else(|_| Err(io::Error::other("the job's thread panicked")))
            })
        };
        match tokio::runtime::Handle::try_current() {
            Ok(handle) if handle.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread => {
                tokio::task::block_in_place(run)
            }
            _ => run(),
        }
    }

    async fn run_async(&self) -> io::Result<Finished> {
        // A relative program path with a folder in it ("./graders/x.py") is taken from the
        // job's working directory, not from wherever the test runs.
        let program = match &self.cwd {
            Some(cwd) if self.program.contains('/') && Path::new(&self.program).is_relative() => {
                cwd.join(&self.program)
            }
            _ => PathBuf::from(&self.program),
        };
        let mut command = Command::new(program);
        command
            .args(&self.args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        if let Some(cwd) = &self.cwd {
            command.current_dir(cwd);
        }
        for (k, v) in &self.env {
            command.env(k, v);
        }
        let mut spawned = spawn(&mut command, Some(self.stdin.clone()), Stderr::AsSet)?;
        let stdout = tokio::spawn(read_head(spawned.child.stdout.take(), MAX_CAPTURE));
        let stderr = tokio::spawn(read_head(spawned.child.stderr.take(), MAX_CAPTURE));
        let (code, timed_out) = match tokio::time::timeout(self.timeout, spawned.child.wait()).await
        {
            Ok(status) => (status?.code(), false),
            Err(_) => {
                spawned.tree.end().await;
                (None, true)
            }
        };
        // The readers finish when every holder of the pipes is gone: stray descendants get a
        // moment, then the tree is ended (which closes the pipes they held).
        let (mut out, mut err) = (stdout, stderr);
        let grace = Instant::now() + Duration::from_millis(500);
        let early_out = collect(&mut out, grace).await;
        let early_err = collect(&mut err, grace).await;
        spawned.tree.end().await;
        let until = Instant::now() + Duration::from_millis(500);
        let stdout_bytes = match early_out {
            Some(bytes) => bytes,
            None => collect(&mut out, until).await.unwrap_or_default(),
        };
        let stderr_bytes = match early_err {
            Some(bytes) => bytes,
            None => collect(&mut err, until).await.unwrap_or_default(),
        };
        Ok(Finished {
            code,
            stdout: String::from_utf8_lossy(&stdout_bytes).into_owned(),
            stderr: String::from_utf8_lossy(&stderr_bytes).into_owned(),
            timed_out,
        })
    }
}

/// Waits for a reader until `until`; its bytes, or `None` (the reader keeps running).
async fn collect(task: &mut tokio::task::JoinHandle<Vec<u8>>, until: Instant) -> Option<Vec<u8>> {
    let left = until.saturating_duration_since(Instant::now());
    match tokio::time::timeout(left, task).await {
        Ok(bytes) => Some(bytes.unwrap_or_default()),
        Err(_) => None,
    }
}

#[cfg(test)]
mod tests;

/// Inline code's long-lived interpreters (feature `inline-code`, which is all that uses them).
#[cfg(feature = "inline-code")]
pub(crate) mod worker;
