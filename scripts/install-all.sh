#!/usr/bin/env bash
# Installs every optional tool the tests use, so that no test skips: the Python packages,
# pytest and bubblewrap (install-test-deps.sh), headless Chromium, cargo-insta, cargo-nextest,
# the pinned Claude Code and Codex CLIs, promptfoo and AgentV. Each script is a no-op when its
# tool is there. Needs Python 3 with pip, Node with npm, root or sudo for apt, and the network
# for the package registries only. Without these tools `cargo test --workspace` still passes:
# the tests that need one skip with a notice (and fail under CI).
# Usage: bash scripts/install-all.sh
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

for script in \
    install-test-deps.sh \
    install-chromium.sh \
    install-cargo-insta.sh \
    install-cargo-nextest.sh \
    install-claude-code.sh \
    install-codex.sh \
    install-promptfoo.sh \
    install-agentv.sh; do
    echo "== $script"
    bash "$here/$script"
done
