#!/usr/bin/env bash
# Installs the Claude Code CLI (`claude`) at the version niceeval's integration tests are pinned
# to, from the npm registry. A no-op when that version is already on PATH.
# Usage: scripts/install-claude-code.sh   (extra arguments go to `npm install`, e.g. --prefix DIR)
#
# The package ships a native binary per platform (an optional dependency); its postinstall step
# copies it over bin/claude.exe. Node.js and npm are needed only to install it.
set -euo pipefail

version="2.1.331"
package="@anthropic-ai/claude-code"

if command -v claude >/dev/null 2>&1; then
    installed="$(claude --version 2>/dev/null | awk '{print $1}')"
    if [ "$installed" = "$version" ]; then
        echo "install-claude-code: claude $version is already installed ($(command -v claude))"
        exit 0
    fi
fi

if ! command -v npm >/dev/null 2>&1; then
    echo "install-claude-code: npm not found; install Node.js (with npm) first" >&2
    exit 1
fi

npm install --global --no-fund --no-audit "$@" "$package@$version"

if ! installed="$(claude --version 2>/dev/null | awk '{print $1}')" || [ "$installed" != "$version" ]; then
    echo "install-claude-code: installed $package@$version, but \`claude --version\` says \"${installed:-nothing}\";" \
         "check that npm's global bin directory ($(npm prefix --global)/bin) is on PATH" >&2
    exit 1
fi
echo "install-claude-code: claude $version is ready ($(command -v claude))"
