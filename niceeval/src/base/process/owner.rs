//! The one owner of every live tree: a process-wide registry that ends whatever is left on
//! each way out of the process.
//!
//! A tree is registered when its root starts (under the registry's lock, so a tree is either
//! registered or never started) and forgotten once it has been ended. [`end_all`] ends every
//! registered tree at once and closes the registry: what would start afterwards is refused,
//! since the process is on its way out. Who calls it:
//!
//! - the process's exit (`exit(3)`: the end of `main`, `std::process::exit`, libtest's end),
//!   through an `atexit` handler registered at the first spawn;
//! - the front ends on SIGINT and SIGTERM: the suite runner before it writes its reports,
//!   plain `cargo test` (and nextest, whose test processes are libtest's) from
//!   [`end_all_and_die`], which then dies of the signal as it would have;
//! - nothing can run in a process killed with SIGKILL: the [`super::watchdog`] outlives it
//!   and kills what carries the process's marker.
//!
//! Freezing a tree (SIGSTOP … SIGCONT, see [`super::Tree::terminate`]) happens under one lock,
//! [`freezing`], which the exit and signal paths take and keep: the process never leaves while
//! a tree is frozen, so no process is ever left stopped.

use std::collections::BTreeMap;
use std::sync::{Mutex, MutexGuard, Once};
use std::time::{Duration, Instant};

use super::{EMPTY_SCANS, GRACE, Member, Tree};

/// The live trees, and whether the process has started ending them all.
#[derive(Debug, Default)]
pub(super) struct Live {
    /// Set by [`end_all`]: no tree starts afterwards.
    pub(super) closed: bool,
    /// By key: each tree's id and root.
    trees: BTreeMap<u64, (String, Option<(u32, u64)>)>,
}

impl Live {
    /// Whether the tree of `key` is registered.
    #[cfg(test)]
    pub(super) fn has(&self, key: u64) -> bool {
        self.trees.contains_key(&key)
    }

    /// Registers a started tree.
    pub(super) fn add(&mut self, tree: &Tree) {
        self.trees.insert(tree.key, (tree.id.clone(), tree.root));
    }
}

static LIVE: Mutex<Live> = Mutex::new(Live {
    closed: false,
    trees: BTreeMap::new(),
});

/// Held while a tree is frozen; kept forever once the process is leaving.
static FREEZING: Mutex<()> = Mutex::new(());

/// The registry, locked (a poisoned lock is taken as it is: the map stays consistent).
pub(super) fn live() -> MutexGuard<'static, Live> {
    LIVE.lock().unwrap_or_else(|p| p.into_inner())
}

/// The lock under which a tree is frozen and continued.
pub(super) fn freezing() -> MutexGuard<'static, ()> {
    FREEZING.lock().unwrap_or_else(|p| p.into_inner())
}

/// Forgets an ended tree.
pub(super) fn forget(key: u64) {
    live().trees.remove(&key);
}

/// What the first spawn of the process sets up: the exit hook, and (Linux) the watchdog.
pub(super) fn first_spawn() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        #[cfg(unix)]
        {
            extern "C" fn at_exit() {
                end_all();
                // Other threads keep running until the process is gone: none may freeze a
                // tree from here on.
                std::mem::forget(freezing());
            }
            // SAFETY: `at_exit` is a plain `extern "C" fn()` that lives for the whole
            // program; `atexit` only stores the pointer. A non-zero return (no room left)
            // leaves the watchdog and the front ends' signal paths.
            unsafe {
                libc::atexit(at_exit);
            }
        }
        #[cfg(target_os = "linux")]
        super::watchdog::start();
    });
}

/// Ends every live tree — all at once: each is frozen, sent SIGTERM and continued, then what
/// is left after [`GRACE`] gets SIGKILL — and closes the registry, so nothing starts after.
/// Blocks until done (at most the grace period and a few scans).
pub(crate) fn end_all() {
    let trees: Vec<Tree> = {
        let mut live = live();
        live.closed = true;
        std::mem::take(&mut live.trees)
            .into_iter()
            .map(|(key, (id, root))| Tree {
                id,
                key,
                root,
                ended: true,
            })
            .collect()
    };
    if trees.is_empty() {
        // A tree being frozen by another thread is continued before this returns.
        drop(freezing());
        return;
    }
    let mut members: Vec<Vec<Member>> = {
        let _frozen = freezing();
        trees.iter().map(Tree::terminate_frozen).collect()
    };
    let deadline = Instant::now() + GRACE;
    let mut empty = 0;
    loop {
        let mut running = false;
        for (tree, members) in trees.iter().zip(members.iter_mut()) {
            running |= tree.sweep(members);
        }
        empty = if running { 0 } else { empty + 1 };
        if empty >= EMPTY_SCANS || Instant::now() >= deadline {
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    for (tree, members) in trees.iter().zip(&members) {
        tree.kill(members);
    }
}

/// Ends every live tree ([`end_all`]), then dies of `signal` as if it had not been caught (the
/// default action restored and the signal raised again), so the exit status is what the user
/// expects of SIGINT or SIGTERM. The front ends' signal owner on Unix.
#[cfg(unix)]
pub(crate) fn end_all_and_die(signal: i32) -> ! {
    end_all();
    let _frozen = freezing();
    // SAFETY: restoring the default action and raising the signal involve no memory; with
    // the default action of SIGINT or SIGTERM the process ends here.
    unsafe {
        libc::signal(signal, libc::SIG_DFL);
        libc::raise(signal);
    }
    // A signal whose default action does not end the process (never SIGINT or SIGTERM).
    std::process::exit(128 + signal)
}
