#!/usr/bin/env bash
# Benchmarks a large dataset eval: a crate with niceeval as a path dependency and one suite
# target whose `#[eval(cases = ..)]` reads a JSONL file of N cases (default 10,000), against an
# instant in-process agent. Prints what the N-case file adds to a debug build of the target
# (against a 10-case file), and the suite runner's wall time and peak memory over the N cases,
# with results streamed to the results file. The figures are quoted in the guide's Performance
# page (docs/book/src/performance.md).
#
# The suite runs RUNS times (default 5) over the same results file: the first run starts with
# no earlier results, later ones read the previous run back (and compact the file to
# `[results] keep_runs`); each run's wall time and peak RSS are printed.
# BENCH_DIR keeps the crate and its target directory between invocations (else a temporary one,
# built from scratch: minutes). With MAX_MIB, the script fails when a run of the suite peaks at
# that many MiB or more: a guard on memory that stays flat as cases grow (1,000,000 cases peak
# under 200 MiB, so `RUNS=1 PLAIN=0 MAX_MIB=200 … 1000000` guards that).
#
# MERGE=1 then splits the last run's results file into 3 shards (by a hash of the eval id, each
# shard its own run id and run manifest, as 3 `cargo nextest run --partition hash:I/3` machines
# write them) and times the report mode over them: `--report --merge` (what `niceeval merge`
# runs) writing a merged JSONL file, a baseline, JUnit and Markdown, and `--report` (each eval's
# latest run) writing Markdown; wall time and peak RSS of each. The outputs are kept in
# $BENCH_DIR/merge-out (MERGE_OUT elsewhere), to compare two builds byte for byte; SHARDS=DIR
# merges the shards of an earlier invocation (a copy of its $BENCH_DIR/shards) instead of
# splitting this run's file, so two builds merge the same records.
#
#   bash scripts/bench-dataset.sh [N]
#   RUNS=5 BENCH_DIR=target/bench-dataset bash scripts/bench-dataset.sh 100000
#   RUNS=1 MERGE=1 PLAIN=0 BENCH_DIR=target/bench-dataset bash scripts/bench-dataset.sh 100000
#   RUNS=1 PLAIN=0 MAX_MIB=200 BENCH_DIR=target/bench-dataset bash scripts/bench-dataset.sh 1000000
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
n="${1:-10000}"
runs="${RUNS:-5}"
if [ -n "${BENCH_DIR:-}" ]; then
    mkdir -p "$BENCH_DIR"
    work="$(cd "$BENCH_DIR" && pwd)"
    rm -rf "$work/target/niceeval/results"
else
    work="$(mktemp -d)"
    trap 'rm -rf "$work"' EXIT
fi
export CARGO_TARGET_DIR="$work/target" CARGO_INCREMENTAL=0

mkdir -p "$work/crate/tests" "$work/crate/src"
cat >"$work/crate/Cargo.toml" <<EOF
[package]
name = "bench-dataset"
version = "0.1.0"
edition = "2021"
publish = false

[dependencies]
niceeval = { path = "$repo/niceeval" }
serde = { version = "1", features = ["derive"] }

[[test]]
name = "dataset"
path = "tests/dataset.rs"
harness = false

# The same eval under libtest: one #[test] per case, what the case count costs to compile.
[[test]]
name = "plain"
path = "tests/plain.rs"

# Not part of any workspace around BENCH_DIR.
[workspace]

[profile.dev]
debug = "line-tables-only"
[profile.dev.package."*"]
debug = false
EOF
echo "" >"$work/crate/src/lib.rs"
cat >"$work/crate/tests/dataset.rs" <<'EOF'
use niceeval::prelude::*;

#[derive(serde::Deserialize)]
struct Case {
    question: String,
    answer: String,
}

fn echo() -> impl Agent {
    agent_fn(|request: Request| async move {
        request.events.say(request.input.text.clone());
        Ok(())
    })
}

#[eval(agent = echo, cases = "cases.jsonl")]
async fn cases(t: &mut Eval, case: Case) -> niceeval::Result {
    t.send(&case.question).await?;
    t.check(t.reply(), includes(&case.answer));
    Ok(())
}

niceeval::main!();
EOF
sed '$d' "$work/crate/tests/dataset.rs" >"$work/crate/tests/plain.rs"
cases() {
    python3 - "$1" <<'PY'
import json, sys
for i in range(int(sys.argv[1])):
    print(json.dumps({"id": f"q{i}", "question": f"question {i}: say answer-{i}", "answer": f"answer-{i}"}))
PY
}

cd "$work/crate"
cases 10 >cases.jsonl
cargo build -q --test dataset 2>/dev/null || cargo build --test dataset
# The build with 10 cases is warm; the time of the rebuild with N cases is what N cases add
# (the test target only: niceeval and its dependencies are built).
cases "$n" >cases.jsonl
# PLAIN=0 leaves the libtest target out (its N #[test]s take minutes to compile at 100,000).
targets=(--tests)
[ "${PLAIN:-1}" = 0 ] && targets=(--test dataset)
/usr/bin/time -f '%e' -o "$work/build.time" cargo build -q "${targets[@]}"
# The newest: a BENCH_DIR used with two checkouts holds a binary of each.
binary="$(find "$CARGO_TARGET_DIR/debug/deps" -maxdepth 1 -type f -executable -name 'dataset-*' -printf '%T@ %p\n' | sort -rn | head -n 1 | cut -d' ' -f2-)"
read -r build <"$work/build.time"
echo "cases: $n"
echo "debug rebuild (${targets[*]}; --tests includes libtest's $n #[test]s) with $n cases instead of 10: ${build}s"
over=""
for run in $(seq 1 "$runs"); do
    /usr/bin/time -f '%e %M' -o "$work/run.time" "$binary" -q \
        >"$work/run.log" 2>&1 || { tail -n 20 "$work/run.log"; exit 1; }
    read -r wall rss <"$work/run.time"
    results="$(find "$CARGO_TARGET_DIR/niceeval/results" -name '*.jsonl' -exec cat {} + | wc -l)"
    size="$(du -sm "$CARGO_TARGET_DIR/niceeval/results" | cut -f1)"
    per_case="$(python3 -c "print(f'{$wall * 1e6 / $n:.0f}')")"
    echo "run $run: suite runner over $n cases: ${wall}s wall (${per_case} µs per case), $((rss / 1024)) MiB peak RSS; results file: $results records, ${size} MB"
    if [ -n "${MAX_MIB:-}" ] && [ "$((rss / 1024))" -ge "$MAX_MIB" ]; then
        over+="run $run over $n cases: $((rss / 1024)) MiB peak RSS, the limit is $MAX_MIB MiB"$'\n'
    fi
done
[ "$runs" = 0 ] || tail -n 2 "$work/run.log"
if [ -n "$over" ]; then
    printf 'bench-dataset: over MAX_MIB:\n%s' "$over" >&2
    exit 1
fi

[ "${MERGE:-0}" = 1 ] || exit 0
out="${MERGE_OUT:-$work/merge-out}"
rm -rf "$out"
mkdir -p "$out"
if [ -n "${SHARDS:-}" ]; then
    shards="$(cd "$SHARDS" && pwd)"
else
shards="$work/shards"
rm -rf "$shards"
mkdir -p "$shards"
python3 - "$CARGO_TARGET_DIR/niceeval/results" "$shards" <<'PY'
import glob, hashlib, json, os, sys
results, shards = sys.argv[1], sys.argv[2]
[source] = glob.glob(os.path.join(results, "*.jsonl"))
manifest = json.load(open(source[: -len(".jsonl")] + ".manifest.json"))
outs = []
for i in range(3):
    os.makedirs(os.path.join(shards, f"shard{i + 1}"))
    run = f"{manifest['run']}-shard{i + 1}"
    m = dict(manifest, run=run, shard=f"hash:{i + 1}/3")
    stem = os.path.join(shards, f"shard{i + 1}", os.path.basename(source)[: -len(".jsonl")])
    json.dump(m, open(stem + ".manifest.json", "w"), indent=2)
    outs.append((open(stem + ".jsonl", "w"), run))
for line in open(source):
    record = json.loads(line)
    shard = int(hashlib.sha256(record["id"].encode()).hexdigest(), 16) % 3
    f, run = outs[shard]
    record["run"]["id"] = run
    f.write(json.dumps(record, separators=(",", ":"), ensure_ascii=False) + "\n")
PY
fi
echo "shards: $(for s in "$shards"/shard*; do cat "$s"/*.jsonl | wc -l; done | paste -sd' '), $(du -sm "$shards" | cut -f1) MB"
timed() {
    local what="$1"; shift
    set +e
    /usr/bin/time -f '%e %M' -o "$work/merge.time" "$binary" "$@" >"$out/$what.stdout" 2>"$out/$what.stderr"
    local code=$?
    set -e
    read -r wall rss <"$work/merge.time"
    echo "$what over $n cases in 3 shards: ${wall}s wall, $((rss / 1024)) MiB peak RSS (exit $code)"
}
timed merge --report --merge -q --jsonl "$out/merged.jsonl" --save-baseline "$out/baseline.json" \
    --junit "$out/junit.xml" --markdown "$out/merge.md" "$shards"/shard1 "$shards"/shard2 "$shards"/shard3
timed report --report -q --markdown "$out/report.md" "$shards"/shard1 "$shards"/shard2 "$shards"/shard3
ls -l "$out" | tail -n +2 | awk '{print "  " $5 "\t" $9}'
