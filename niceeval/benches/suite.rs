//! Throughput and memory of the suite runner (`harness::run_suite`), with no reporter attached:
//!
//! 1. 1,000 evals against an agent that waits 20 ms, at concurrency 16: the ideal is
//!    1000 / 16 × 20 ms = 1.25 s; the runner must finish within 1.25 × that (1.5625 s).
//! 2. 10,000 evals against an agent that answers at once: the runner's cost per eval (handle,
//!    record, spawn, timeout, fold, report, summary) must stay under 0.2 ms.
//! 3. Peak heap during a run of 1,000 and of 10,000 instant evals, measured by a counting
//!    global allocator: the growth per extra eval must stay within what its summary takes
//!    (the suite keeps one `EvalSummary` per eval, never the full reports).
//!
//! Run with `cargo bench -p niceeval --bench suite`. Prints the figures and exits non-zero
//! when a bound is missed. A custom timing binary rather than criterion: each measurement is
//! one whole suite, seconds long, and the bounds are absolute.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use niceeval::__private::{BoxFuture, EvalDefinition};
use niceeval::__workspace::harness::{Args, run_suite};
use niceeval::prelude::*;

#[path = "support/counting.rs"]
mod counting;

use counting::{LIVE, PEAK};

fn sleepy() -> Arc<dyn Agent> {
    Arc::new(agent_fn(|request: Request| async move {
        tokio::time::sleep(Duration::from_millis(20)).await;
        request.events.say("ok, done");
        Ok(())
    }))
}

fn instant() -> Arc<dyn Agent> {
    Arc::new(agent_fn(|request: Request| async move {
        request.events.say("ok, done");
        Ok(())
    }))
}

fn body(t: &mut Eval) -> BoxFuture<'_, niceeval::Result> {
    Box::pin(async move {
        t.send("hello").await?;
        t.check(t.reply(), includes("ok"));
        Ok(())
    })
}

/// A directory with an empty niceeval.toml, so no configuration from elsewhere applies.
fn manifest_dir() -> &'static str {
    let dir = std::env::temp_dir().join(format!("niceeval-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a temporary directory");
    std::fs::write(dir.join("niceeval.toml"), "# bench\n").expect("writable temp dir");
    Box::leak(dir.display().to_string().into_boxed_str())
}

/// `count` leaked definitions, as `#[eval]` would build them.
fn evals(
    count: usize,
    agent: fn() -> Arc<dyn Agent>,
    dir: &'static str,
) -> Vec<&'static EvalDefinition> {
    (0..count)
        .map(|i| {
            let name: &'static str = Box::leak(format!("eval_{i:05}").into_boxed_str());
            let def = EvalDefinition::new(name, "bench::suite", file!(), line!(), dir, body)
                .with_agent(agent);
            &*Box::leak(Box::new(def))
        })
        .collect()
}

struct Measured {
    elapsed: Duration,
    peak_growth: usize,
    passed: usize,
}

fn run(runtime: &tokio::runtime::Runtime, defs: Vec<&'static EvalDefinition>) -> Measured {
    let args = Args::parse(["--concurrency", "16", "--quiet"])
        .expect("valid arguments")
        .expect("not --help");
    let count = defs.len();
    let baseline = LIVE.load(Ordering::Relaxed);
    PEAK.store(baseline, Ordering::Relaxed);
    let started = Instant::now();
    let suite = runtime.block_on(run_suite(&args, defs, &mut []));
    let elapsed = started.elapsed();
    let peak_growth = PEAK.load(Ordering::Relaxed).saturating_sub(baseline);
    assert_eq!(suite.passed, count, "every eval passes: {suite:?}");
    Measured {
        elapsed,
        peak_growth,
        passed: suite.passed,
    }
}

fn main() {
    // `cargo test --benches` runs benches with `--test`-style arguments; only `cargo bench`
    // (which passes `--bench`) measures.
    if !std::env::args().any(|a| a == "--bench") {
        println!("suite bench: run with `cargo bench -p niceeval --bench suite`");
        return;
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(
            std::thread::available_parallelism()
                .map_or(2, |n| n.get())
                .max(2),
        )
        .enable_all()
        .build()
        .expect("a Tokio runtime");
    let dir = manifest_dir();
    let mut ok = true;

    // Warm-up: configuration cache, runtime threads, allocator pools.
    run(&runtime, evals(200, instant, dir));

    // 1. Waiting agents.
    let bound = Duration::from_secs_f64(1.25 * 1.25);
    let waiting = run(&runtime, evals(1_000, sleepy, dir));
    let verdict = waiting.elapsed <= bound;
    ok &= verdict;
    println!(
        "1,000 evals × 20 ms agent, concurrency 16: {:.3} s (ideal 1.250 s, bound {:.4} s) {}",
        waiting.elapsed.as_secs_f64(),
        bound.as_secs_f64(),
        if verdict { "ok" } else { "TOO SLOW" }
    );

    // 2. Instant agents: the runner's own cost.
    let n = 10_000;
    let fast = run(&runtime, evals(n, instant, dir));
    let per_eval = fast.elapsed.as_secs_f64() * 1000.0 / n as f64;
    let verdict = per_eval < 0.2;
    ok &= verdict;
    println!(
        "{n} evals × instant agent, concurrency 16: {:.3} s, {per_eval:.4} ms per eval (bound 0.2 ms) {}",
        fast.elapsed.as_secs_f64(),
        if verdict { "ok" } else { "TOO SLOW" }
    );

    // 3. Peak memory: 1,000 against 10,000 evals.
    let small = run(&runtime, evals(1_000, instant, dir));
    let large = run(&runtime, evals(10_000, instant, dir));
    let per_extra = (large.peak_growth as f64 - small.peak_growth as f64) / 9_000.0;
    // What one summary holds: the struct, its id, pass@k and pass^k (one run each), and the
    // id the suite start lists; a quarter more for allocator and vector slack.
    let summary = std::mem::size_of::<niceeval::reporter::EvalSummary>()
        + "bench::suite::eval_00000".len() * 2
        + 2 * std::mem::size_of::<f64>()
        + std::mem::size_of::<String>();
    let allowed = 1.25 * summary as f64;
    let verdict = per_extra <= allowed;
    ok &= verdict;
    println!(
        "peak heap during the run: {:.1} KiB for 1,000 evals, {:.1} KiB for 10,000: {per_extra:.0} B per extra eval (a summary: ~{summary} B, bound {allowed:.0} B) {}",
        small.peak_growth as f64 / 1024.0,
        large.peak_growth as f64 / 1024.0,
        if verdict { "ok" } else { "GROWS" }
    );
    let _ = (small.passed, large.passed, fast.passed, waiting.passed);
    if !ok {
        std::process::exit(1);
    }
}
