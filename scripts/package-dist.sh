#!/usr/bin/env bash
# Builds the release `niceeval` command for Linux x86_64 once, as the Python wheel (maturin's
# `bin` bindings, cross-linked by zig against glibc 2.17: the toolchain here has no musl target,
# which the release workflow uses), packs that same binary as the npm packages, installs each OFFLINE from the
# local files into a clean prefix / a clean virtualenv, and checks that `npx niceeval`,
# the wheel's `niceeval` and `uvx niceeval` run the example promptfoo suite with the same
# output and exit status as the release binary they carry, run directly. Prints the binary's
# size and start time.
#
#   scripts/package-dist.sh [OUT_DIR]     (default target/dist)
#
# Needs scripts/install-dist-tools.sh (ziglang, maturin, uv); Node and npm.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
out="${1:-target/dist}"
mkdir -p "$out"
out="$(cd "$out" && pwd)"
target=x86_64-unknown-linux-gnu
export CARGO_PROFILE_RELEASE_STRIP=true

echo "== build: the wheel (maturin --zig, release), whose binary the npm packages carry too"
rm -f "$out"/*.whl "$out"/*.tgz
(cd dist/python && maturin build --release --locked --zig --target "$target" --compatibility manylinux2014 --out "$out")
binary="target/$target/release/niceeval"
wheel="$(ls "$out"/niceeval-*.whl)"
echo "binary: $binary, $(($(stat -c %s "$binary") / 1024)) KiB; wheel: $(basename "$wheel"), $(($(stat -c %s "$wheel") / 1024)) KiB"
python3 - "$binary" <<'PY'
import subprocess, sys, time
runs = []
for _ in range(21):
    t = time.perf_counter()
    subprocess.run([sys.argv[1], "--version"], stdout=subprocess.DEVNULL, check=True)
    runs.append(time.perf_counter() - t)
runs.sort()
print(f"start time (niceeval --version, median of 21): {runs[10] * 1000:.1f} ms")
PY

echo "== npm packages"
scripts/build-npm.sh "$out" "linux-x64=$binary"
npm_prefix="$(mktemp -d)"
venv="$(mktemp -d)"
work="$(mktemp -d)"
trap 'rm -rf "$npm_prefix" "$venv" "$work"' EXIT
# Offline: both tarballs from disk, nothing from the registry (the other platforms'
# optional packages are skipped: their os/cpu do not match).
(cd "$npm_prefix" && npm init -y > /dev/null &&
    npm install --offline --no-audit --no-fund --silent "$out"/niceeval-cli-linux-x64-*.tgz "$out"/niceeval-[0-9]*.tgz)

echo "== the wheel in a clean virtualenv"
python3 -m venv "$venv"
"$venv/bin/pip" install --quiet --no-index --disable-pip-version-check "$wheel"

echo "== the example suite, four ways"
# The reference is the release binary itself (no second, debug build): the installs must add
# nothing to it and lose nothing (arguments, output, exit status).
reference="$root/$binary"
suite="$root/examples/promptfoo/promptfooconfig.yaml"
# One eval at a time, so lines come in one order; times and the run's duration normalized.
run() {
    local name="$1"
    shift
    local dir="$work/$name"
    mkdir -p "$dir"
    local status=0
    (cd "$dir" && "$@" eval -c "$suite" -j 1 > out.txt 2>&1) || status=$?
    sed -E 's/[0-9]+\.[0-9]+s/T/g' "$dir/out.txt" > "$dir/normalized.txt"
    echo "$status" > "$dir/status"
    echo "$name: exit $status, $(wc -l < "$dir/normalized.txt") lines"
}
run cargo "$reference"
run npx npm --prefix "$npm_prefix" exec --offline -- niceeval
run wheel "$venv/bin/niceeval"
run uvx uvx --quiet --offline --no-cache --from "$wheel" niceeval
failed=0
for name in npx wheel uvx; do
    if ! diff -u "$work/cargo/normalized.txt" "$work/$name/normalized.txt" ||
        ! diff "$work/cargo/status" "$work/$name/status" > /dev/null; then
        echo "error: $name differs from the binary run directly" >&2
        failed=1
    fi
done
if ! grep -q "test result:" "$work/cargo/normalized.txt"; then
    echo "error: the binary run directly did not run the suite:" >&2
    cat "$work/cargo/out.txt" >&2
    failed=1
fi
[ "$failed" = 0 ] && echo "npx, pip and uvx installs run the example suite as the binary run directly does"
exit "$failed"
