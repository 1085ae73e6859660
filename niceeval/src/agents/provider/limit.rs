//! Limits on requests to one provider endpoint that hold across every process of the machine
//! sharing a Cargo target directory (under nextest each eval is a process of its own): a counting
//! semaphore of `max_concurrency` lock files, and a requests-per-minute pace kept in one more
//! file, all under `target/niceeval/limits/<endpoint>/`.
//!
//! A slot is held with `flock`, which the kernel releases when its file is closed — so also when
//! the process holding it dies, however it dies: a killed eval never keeps a slot. Waiting for a
//! slot polls (a few milliseconds apart, with jitter) rather than blocking a thread. The pace
//! spaces request starts at least `60 / requests_per_minute` seconds apart: the next allowed
//! start is read and moved on under an exclusive lock of the pace file. On platforms without
//! `flock` the limits hold within the process only.

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// The machine-wide limits of one endpoint.
#[derive(Debug, Clone)]
pub(crate) struct MachineLimit {
    dir: PathBuf,
    slots: usize,
    per_minute: Option<u32>,
}

/// Where the limits' files live when the caller names no folder: the Cargo target directory of
/// the crate under test (`CARGO_MANIFEST_DIR`), else the system's temporary directory, so a run
/// outside Cargo (`niceeval eval` in a suite's folder) writes nothing beside the suite and every
/// process on the machine still finds the same files.
pub(crate) fn default_dir() -> PathBuf {
    match std::env::var_os("CARGO_MANIFEST_DIR").filter(|d| !d.is_empty()) {
        Some(manifest) => crate::resources::cache::target_dir(Path::new(&manifest)),
        None => std::env::temp_dir(),
    }
}

/// A held slot, released when dropped (the file is closed).
#[derive(Debug)]
pub(crate) struct Slot {
    _file: Option<std::fs::File>,
}

/// Longest pause between two attempts to take a slot.
const MAX_POLL: Duration = Duration::from_millis(20);

impl MachineLimit {
    /// The limits of `endpoint` (any text naming it: provider and base URL), with their files
    /// under `target_dir`.
    pub(crate) fn new(
        target_dir: &Path,
        endpoint: &str,
        slots: usize,
        per_minute: Option<u32>,
    ) -> MachineLimit {
        use sha2::Digest;
        let digest = sha2::Sha256::digest(endpoint.as_bytes());
        let name: String = digest[..8].iter().map(|b| format!("{b:02x}")).collect();
        MachineLimit {
            dir: target_dir.join("niceeval").join("limits").join(name),
            slots: slots.max(1),
            per_minute: per_minute.filter(|&n| n > 0),
        }
    }

    /// Waits for the pace, then for a free slot; the slot is held until the returned value is
    /// dropped. A limit whose files cannot be created or locked limits nothing (and says so once
    /// on stderr): the in-process cap still holds.
    pub(crate) async fn acquire(&self) -> Slot {
        if let Some(per_minute) = self.per_minute {
            match self.next_start(per_minute) {
                Ok(wait) if !wait.is_zero() => tokio::time::sleep(wait).await,
                Ok(_) => {}
                Err(e) => warn_once(&self.dir, &e),
            }
        }
        let mut pause = Duration::from_millis(1);
        let start = fastrand::usize(..self.slots);
        loop {
            for i in 0..self.slots {
                match self.try_slot((start + i) % self.slots) {
                    Ok(Some(file)) => return Slot { _file: Some(file) },
                    Ok(None) => {}
                    Err(e) => {
                        warn_once(&self.dir, &e);
                        return Slot { _file: None };
                    }
                }
            }
            let jitter = Duration::from_micros(fastrand::u64(..=pause.as_micros() as u64 / 2));
            tokio::time::sleep(pause + jitter).await;
            pause = (pause * 2).min(MAX_POLL);
        }
    }

    fn open(&self, name: &str) -> std::io::Result<std::fs::File> {
        std::fs::create_dir_all(&self.dir)?;
        std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(self.dir.join(name))
    }

    /// Slot `i`, when no process holds it.
    fn try_slot(&self, i: usize) -> std::io::Result<Option<std::fs::File>> {
        let file = self.open(&format!("slot-{i}.lock"))?;
        Ok(lock(&file, false)?.then_some(file))
    }

    /// Books the next start under the pace and returns how long to wait for it.
    fn next_start(&self, per_minute: u32) -> std::io::Result<Duration> {
        use std::io::{Read, Seek, Write};
        let mut file = self.open("pace")?;
        lock(&file, true)?;
        let mut text = String::new();
        file.read_to_string(&mut text)?;
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap_or_default();
        // The earliest time (in nanoseconds since the epoch) the next request may start.
        let booked = Duration::from_nanos(text.trim().parse::<u64>().unwrap_or(0));
        let start = booked.max(now);
        let next = start + Duration::from_secs(60) / per_minute;
        file.set_len(0)?;
        file.rewind()?;
        file.write_all(next.as_nanos().to_string().as_bytes())?;
        // Closing the file releases the lock.
        Ok(start - now)
    }
}

/// Locks `file` exclusively: waiting when `wait`, else `Ok(false)` when another holds it.
#[cfg(unix)]
fn lock(file: &std::fs::File, wait: bool) -> std::io::Result<bool> {
    use std::os::fd::AsRawFd;
    let flags = if wait {
        libc::LOCK_EX
    } else {
        libc::LOCK_EX | libc::LOCK_NB
    };
    loop {
        // SAFETY: `file` is an open file for the whole call; flock reads no memory of ours.
        if unsafe { libc::flock(file.as_raw_fd(), flags) } == 0 {
            return Ok(true);
        }
        let error = std::io::Error::last_os_error();
        match error.raw_os_error() {
            Some(libc::EINTR) => continue,
            Some(libc::EWOULDBLOCK) if !wait => return Ok(false),
            _ => return Err(error),
        }
    }
}

#[cfg(not(unix))]
fn lock(_: &std::fs::File, _: bool) -> std::io::Result<bool> {
    Ok(true)
}

fn warn_once(dir: &Path, error: &std::io::Error) {
    static WARNED: std::sync::Once = std::sync::Once::new();
    WARNED.call_once(|| {
        eprintln!(
            "niceeval: the request limits in {} cannot be shared with other processes ({error}); \
             they hold within this process only",
            dir.display()
        );
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rt() -> tokio::runtime::Runtime {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap()
    }

    #[test]
    fn slots_are_exclusive_and_freed_when_dropped() {
        let dir = tempfile::tempdir().unwrap();
        let limit = MachineLimit::new(dir.path(), "openai http://x", 2, None);
        let rt = rt();
        let a = rt.block_on(limit.acquire());
        let b = rt.block_on(limit.acquire());
        // Both slots are held (a second open of a file in the same process conflicts too).
        assert!(limit.try_slot(0).unwrap().is_none());
        assert!(limit.try_slot(1).unwrap().is_none());
        drop(a);
        let c = rt.block_on(limit.acquire());
        drop((b, c));
        assert!(limit.try_slot(0).unwrap().is_some());
    }

    #[test]
    fn the_pace_books_starts_apart() {
        let dir = tempfile::tempdir().unwrap();
        let limit = MachineLimit::new(dir.path(), "openai http://y", 1, Some(600));
        // 600 per minute: starts 100 ms apart. Each wait is counted from its call, so the time
        // that passed between the calls (long on a loaded machine) is added back; 1 ms of slack
        // for the two clocks (the pace file's wall clock, the test's monotonic one).
        let before_first = std::time::Instant::now();
        let first = limit.next_start(600).unwrap();
        let before_second = std::time::Instant::now();
        let second = limit.next_start(600).unwrap();
        let second_gap = before_first.elapsed();
        let third = limit.next_start(600).unwrap();
        let third_gap = before_second.elapsed();
        assert_eq!(first, Duration::ZERO);
        assert!(
            second + second_gap >= Duration::from_millis(99),
            "{second:?} after {second_gap:?}"
        );
        assert!(
            third + third_gap >= second + Duration::from_millis(99),
            "{third:?} after {third_gap:?}, the second {second:?}"
        );
    }

    #[test]
    fn endpoints_have_directories_of_their_own() {
        let dir = Path::new("/t");
        let a = MachineLimit::new(dir, "openai http://a", 1, None);
        let b = MachineLimit::new(dir, "openai http://b", 1, None);
        assert_ne!(a.dir, b.dir);
        assert!(a.dir.starts_with("/t/niceeval/limits"));
    }
}
