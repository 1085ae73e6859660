#!/usr/bin/env bash
# Runs the process-tree scenarios of tests/it/trees.rs (an agent that ignores SIGTERM, ended
# by the eval's timeout, SIGINT, SIGTERM, SIGKILL of the test process and a panic in the body,
# under libtest, the suite runner and nextest) REPS times (default 50) under load: two
# `yes > /dev/null` busy loops for the whole run. Not a timed test: it reports, it does not
# gate.
#
# After each repetition it counts the survivors itself: processes whose environment carries
# a `PROCS_DIR=` of the tests (the agent's tree), running or stopped (state T); and the
# scenarios that failed (each test fails when its own tree left anything 2 s after the runner
# ended). Logs of failed repetitions go to $OUT (default target/stress-process-trees).
#
#   bash scripts/stress-process-trees.sh [REPS] [FILTER]
#   bash scripts/stress-process-trees.sh 50 trees::suite_
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
reps="${1:-50}"
filter="${2:-trees::}"
out="${OUT:-$repo/target/stress-process-trees}"
mkdir -p "$out"
cd "$repo"

bin=$(cargo test -p niceeval-tests --test it --no-run --message-format=json 2>/dev/null |
    sed -n 's/.*"executable":"\([^"]*\)".*/\1/p' | tail -1)
[ -x "$bin" ] || { echo "could not build the tests/it binary" >&2; exit 1; }

yes > /dev/null & load1=$!
yes > /dev/null & load2=$!
trap 'kill "$load1" "$load2" 2>/dev/null' EXIT

# Processes carrying PROCS_DIR=…, as "pid state".
survivors() {
    for environ in /proc/[0-9]*/environ; do
        pid=${environ#/proc/}
        pid=${pid%/environ}
        if { tr '\0' '\n' < "$environ"; } 2>/dev/null | grep -q '^PROCS_DIR='; then
            state=$(sed 's/.*) \(.\).*/\1/' "/proc/$pid/stat" 2>/dev/null || true)
            [ -n "$state" ] && [ "$state" != Z ] && echo "$pid $state"
        fi
    done
    return 0
}

total_survivors=0
stopped=0
failed_runs=0
started=$(date +%s)
for rep in $(seq 1 "$reps"); do
    log="$out/rep-$rep.log"
    if "$bin" "$filter" --test-threads 2 > "$log" 2>&1; then
        rm -f "$log"
    else
        failed_runs=$((failed_runs + 1))
    fi
    left=$(survivors)
    count=$(printf '%s' "$left" | grep -c . || true)
    t=$(printf '%s' "$left" | grep -c ' T$' || true)
    total_survivors=$((total_survivors + count))
    stopped=$((stopped + t))
    echo "rep $rep/$reps: $( [ -f "$log" ] && echo "FAILED (log $log)" || echo ok ), survivors $count (stopped $t)"
    if [ "$count" -gt 0 ]; then
        echo "$left" | while read -r pid _; do kill -KILL "$pid" 2>/dev/null || true; done
    fi
done
echo "$reps repetitions of '$filter' under load in $(( $(date +%s) - started )) s:" \
    "$failed_runs failed, $total_survivors surviving processes ($stopped stopped)"
[ "$failed_runs" -eq 0 ] && [ "$total_survivors" -eq 0 ]
