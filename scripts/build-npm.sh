#!/usr/bin/env bash
# Packs the npm packages of the `niceeval` command: the launcher package `niceeval`
# (dist/npm/niceeval) and one package per platform binary, `@niceeval/cli-<os>-<cpu>`, whose
# `os` and `cpu` fields make npm install only the one that fits (the pattern of esbuild and
# Biome: optional dependencies, no download at install time).
#
#   scripts/build-npm.sh OUT_DIR OS-CPU=BINARY [OS-CPU=BINARY...]
#
# OS-CPU is Node's `process.platform`-`process.arch` (linux-x64, linux-arm64, darwin-x64,
# darwin-arm64, win32-x64). Writes OUT_DIR/*.tgz (npm pack) and prints their paths.
set -euo pipefail

if [ "$#" -lt 2 ]; then
    echo "usage: $0 OUT_DIR OS-CPU=BINARY [OS-CPU=BINARY...]" >&2
    exit 2
fi
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
out="$(mkdir -p "$1" && cd "$1" && pwd)"
shift
version="$(node -p "require('$root/dist/npm/niceeval/package.json').version")"
stage="$(mktemp -d)"
trap 'rm -rf "$stage"' EXIT

for spec in "$@"; do
    platform="${spec%%=*}"
    binary="${spec#*=}"
    os="${platform%-*}"
    cpu="${platform#*-}"
    if [ ! -f "$binary" ]; then
        echo "error: $binary (for $platform) does not exist" >&2
        exit 2
    fi
    exe=niceeval
    [ "$os" = win32 ] && exe=niceeval.exe
    dir="$stage/cli-$platform"
    mkdir -p "$dir/bin"
    cp "$binary" "$dir/bin/$exe"
    chmod 755 "$dir/bin/$exe"
    cat > "$dir/package.json" <<JSON
{
  "name": "@niceeval/cli-$platform",
  "version": "$version",
  "description": "The niceeval command for $platform (installed by the npm package niceeval).",
  "license": "MIT OR Apache-2.0",
  "repository": { "type": "git", "url": "git+https://github.com/niceeval/niceeval-rs.git" },
  "os": ["$os"],
  "cpu": ["$cpu"],
  "files": ["bin/$exe"],
  "preferUnplugged": true
}
JSON
    (cd "$out" && npm pack --silent "$dir")
done

mkdir -p "$stage/niceeval"
cp -R "$root/dist/npm/niceeval/." "$stage/niceeval/"
(cd "$out" && npm pack --silent "$stage/niceeval")
