//! Working copies of a large template (issue 12's targets, on a 2-core machine):
//!
//! 1. a template of 5,000 files and 50 MB: copy plus git baseline under 1.5 s;
//! 2. after 100 files changed in the copy: the diff (snapshot, changed paths, unified text)
//!    under 0.5 s.
//!
//! Run with `cargo bench -p niceeval --bench workspace`. Prints the median and the slowest of
//! several rounds and exits non-zero when a median misses its bound. A timing binary rather than
//! criterion: each measurement is a whole operation on disk with an absolute bound.

use std::path::Path;
use std::time::{Duration, Instant};

use niceeval::__workspace::workspace::Settings;
use niceeval::workspace::Workspace;

const FILES: usize = 5_000;
const BYTES: usize = 50 * 1024 * 1024;
const CHANGED: usize = 100;
const ROUNDS: usize = 5;

/// A template of `FILES` text files totalling `BYTES`, spread over 50 directories, with
/// contents that do not compress to nothing (git's object writes are part of the cost).
fn template(dir: &Path) {
    let per_file = BYTES / FILES;
    let mut seed = 0x2545_f491_4f6c_dd1du64;
    for i in 0..FILES {
        let sub = dir.join(format!("src/module_{:02}", i % 50));
        std::fs::create_dir_all(&sub).unwrap();
        let mut text = String::with_capacity(per_file + 64);
        while text.len() < per_file {
            // xorshift: cheap, deterministic, varied text.
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            text.push_str(&format!("let value_{seed:016x} = {};\n", seed % 1000));
        }
        std::fs::write(sub.join(format!("file_{i:04}.rs")), text).unwrap();
    }
}

fn median(mut times: Vec<Duration>) -> (Duration, Duration) {
    times.sort();
    (times[times.len() / 2], times[times.len() - 1])
}

fn main() {
    let dir = tempfile::tempdir().unwrap();
    template(dir.path());
    let settings = Settings::default();

    let mut create = Vec::new();
    let mut diff = Vec::new();
    for round in 0..ROUNDS {
        let started = Instant::now();
        let ws = Workspace::create(dir.path(), &settings).unwrap();
        create.push(started.elapsed());
        for i in 0..CHANGED {
            let n = i * 7 + round;
            let path = format!("src/module_{:02}/file_{n:04}.rs", n % 50);
            let mut text = ws.read_text(&path).unwrap();
            text.push_str("// changed by the agent\n");
            ws.write_text(&path, text).unwrap();
        }
        let started = Instant::now();
        let changes = ws.diff();
        diff.push(started.elapsed());
        assert_eq!(changes.files().len(), CHANGED);
        assert!(changes.text().contains("+// changed by the agent"));
    }
    let (create_median, create_max) = median(create);
    let (diff_median, diff_max) = median(diff);
    println!(
        "template: {FILES} files, {} MB; {ROUNDS} rounds",
        BYTES / (1024 * 1024)
    );
    println!(
        "copy + baseline: median {:.0} ms, slowest {:.0} ms (bound 1500 ms)",
        create_median.as_secs_f64() * 1000.0,
        create_max.as_secs_f64() * 1000.0
    );
    println!(
        "diff after {CHANGED} changed files: median {:.0} ms, slowest {:.0} ms (bound 500 ms)",
        diff_median.as_secs_f64() * 1000.0,
        diff_max.as_secs_f64() * 1000.0
    );
    let ok =
        create_median <= Duration::from_millis(1500) && diff_median <= Duration::from_millis(500);
    if !ok {
        eprintln!("a bound was missed");
        std::process::exit(1);
    }
}
