#!/usr/bin/env bash
# Installs the pinned OpenAI Codex CLI (`@openai/codex`, whose npm package carries the native
# binary) with npm, for the Codex adapter's integration tests (niceeval/tests/it/codex.rs),
# unless that version is already the `codex` on PATH. Global install: needs write access to
# npm's global prefix (CI runs as root). Override the version with CODEX_VERSION=x.y.z.
#
#   bash scripts/install-codex.sh
set -euo pipefail

# The version niceeval's Codex adapter is tested with (the guide's Coding agents page says which).
version="${CODEX_VERSION:-0.169.0}"

if command -v codex >/dev/null 2>&1; then
    installed="$(codex --version 2>/dev/null | awk '{print $NF}')"
    if [ "$installed" = "$version" ]; then
        echo "codex: $version already installed ($(command -v codex))"
        exit 0
    fi
    echo "codex: found ${installed:-an unknown version}, installing $version"
fi

if ! command -v npm >/dev/null 2>&1; then
    echo "install-codex: npm not found; install Node.js (>= 16) and npm first" >&2
    exit 1
fi

npm install --global --no-fund --no-audit "@openai/codex@$version"
codex --version
