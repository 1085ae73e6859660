//! OpenTelemetry ingestion: 100,000 spans (GenAI chat and `execute_tool` spans, as instrumented
//! agents send them) in OTLP/HTTP protobuf batches of 512, spread over 20 runs:
//!
//! 1. decoded and attributed to their runs in process (`ingest`, the receiver's own path);
//! 2. POSTed to the real receiver on 127.0.0.1 and attributed (HTTP, keep-alive connection);
//! 3. then normalized into events (what each turn's checks read);
//! 4. memory: the live heap after ingesting into 20 runs, and into one run, whose cap
//!    (`MAX_SPANS_PER_RUN`) bounds what it keeps: the excess is counted as dropped.
//!
//! Bound: steps 1 and 2 each under 1 s. Run with `cargo bench -p niceeval --bench traces`
//! (prints the figures; exits non-zero when a bound is missed).

use std::io::{BufRead, BufReader, Read, Write};
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use niceeval::__workspace::trace::{
    MAX_SPANS_PER_RUN, Run, counts, endpoint, ingest, protobuf_batch,
};

#[path = "support/counting.rs"]
mod counting;

use counting::{LIVE, PEAK};

const SPANS: usize = 100_000;
const BATCH: usize = 512;
const RUNS: usize = 20;

fn batches(runs: &[Run]) -> Vec<Vec<u8>> {
    let ids: Vec<String> = runs.iter().map(Run::trace_id).collect();
    (0..SPANS)
        .step_by(BATCH)
        .map(|start| protobuf_batch(&ids, BATCH.min(SPANS - start)))
        .collect()
}

fn mib(bytes: usize) -> f64 {
    bytes as f64 / (1024.0 * 1024.0)
}

/// POSTs every body over one keep-alive connection; returns when all were answered 200.
fn post_all(bodies: &[Vec<u8>]) {
    let address = endpoint()
        .expect("the receiver")
        .trim_start_matches("http://")
        .to_string();
    let stream = std::net::TcpStream::connect(address).expect("connect");
    stream.set_nodelay(true).ok();
    let mut writer = stream.try_clone().expect("clone");
    let mut reader = BufReader::new(stream);
    for body in bodies {
        write!(
            writer,
            "POST /v1/traces HTTP/1.1\r\nHost: bench\r\nContent-Type: application/x-protobuf\r\nContent-Length: {}\r\n\r\n",
            body.len()
        )
        .expect("write");
        writer.write_all(body).expect("write");
        let mut status = String::new();
        reader.read_line(&mut status).expect("status");
        assert!(status.contains(" 200 "), "{status}");
        let mut length = 0usize;
        loop {
            let mut line = String::new();
            reader.read_line(&mut line).expect("header");
            if line == "\r\n" {
                break;
            }
            if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                length = v.trim().parse().unwrap_or(0);
            }
        }
        let mut rest = vec![0u8; length];
        reader.read_exact(&mut rest).expect("body");
    }
}

fn main() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let mut ok = true;

    // 1. In process.
    let runs: Vec<Run> = (0..RUNS).map(|_| Run::start()).collect();
    let bodies = batches(&runs);
    let bytes: usize = bodies.iter().map(Vec::len).sum();
    let base = LIVE.load(Ordering::Relaxed);
    PEAK.store(base, Ordering::Relaxed);
    let started = Instant::now();
    let mut placed = 0;
    for body in &bodies {
        placed +=
            ingest(false, "application/x-protobuf", None, body.clone()).expect("a valid body");
    }
    let direct = started.elapsed();
    assert_eq!(placed, SPANS);
    let kept = LIVE.load(Ordering::Relaxed).saturating_sub(base);
    println!(
        "ingest (decode + attribute), {SPANS} spans in {} batches of {BATCH} ({:.1} MiB protobuf) over {RUNS} runs: {:.0} ms, {:.0} spans/s; heap kept {:.1} MiB ({} B/span)",
        bodies.len(),
        mib(bytes),
        direct.as_secs_f64() * 1000.0,
        SPANS as f64 / direct.as_secs_f64(),
        mib(kept),
        kept / SPANS
    );
    ok &= direct < Duration::from_secs(1);

    // 3. Normalized into events.
    let started = Instant::now();
    let events: usize = runs
        .iter()
        .map(|run| runtime.block_on(run.events()).len())
        .sum();
    println!(
        "normalize {SPANS} spans into {events} events: {:.0} ms",
        started.elapsed().as_secs_f64() * 1000.0
    );
    drop(runs);

    // 2. Over HTTP to the real receiver.
    let runs: Vec<Run> = (0..RUNS).map(|_| Run::start()).collect();
    let bodies = batches(&runs);
    endpoint().expect("the receiver");
    let started = Instant::now();
    post_all(&bodies);
    let http = started.elapsed();
    let received: usize = runs
        .iter()
        .map(|run| runtime.block_on(run.take()).len())
        .sum();
    assert_eq!(received, SPANS);
    println!(
        "over HTTP to 127.0.0.1 (one keep-alive connection): {:.0} ms, {:.0} spans/s",
        http.as_secs_f64() * 1000.0,
        SPANS as f64 / http.as_secs_f64()
    );
    ok &= http < Duration::from_secs(1);
    drop(runs);

    // 4. One run receives all: the cap bounds what it keeps.
    let run = Run::start();
    let bodies = batches(std::slice::from_ref(&run));
    let dropped_before = counts().2;
    let base = LIVE.load(Ordering::Relaxed);
    for body in &bodies {
        ingest(false, "application/x-protobuf", None, body.clone()).expect("a valid body");
    }
    let kept = LIVE.load(Ordering::Relaxed).saturating_sub(base);
    let dropped = counts().2 - dropped_before;
    println!(
        "one run receiving {SPANS} spans keeps {MAX_SPANS_PER_RUN} ({:.1} MiB), drops {dropped}",
        mib(kept)
    );
    ok &= dropped as usize == SPANS - MAX_SPANS_PER_RUN;

    if !ok {
        eprintln!("a bound was missed");
        std::process::exit(1);
    }
}
