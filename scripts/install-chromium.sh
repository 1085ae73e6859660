#!/usr/bin/env bash
# Installs headless Chromium (Debian's `chromium` package) for the HTML report test
# (tests/it/html.rs), unless /usr/bin/chromium is already there. Needs root (CI runs as root).
set -euo pipefail

if [ -x /usr/bin/chromium ]; then
    echo "chromium: already installed ($(/usr/bin/chromium --version 2>/dev/null || echo unknown version))"
    exit 0
fi

export DEBIAN_FRONTEND=noninteractive
apt-get update
apt-get install -y --no-install-recommends chromium
/usr/bin/chromium --version
