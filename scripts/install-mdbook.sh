#!/usr/bin/env bash
# Installs mdBook, pinned, to build the guide (`mdbook build docs/book`), unless that version is
# already on PATH. Builds from crates.io with the versions its lock file pins, without the
# `serve` and `watch` features (a web server and a file watcher the build does not use): 123
# crates, about 4.5 minutes of CPU (262 s measured on a 2-core machine).
set -euo pipefail

version="0.5.4"

if command -v mdbook >/dev/null 2>&1 && [ "$(mdbook --version)" = "mdbook v${version}" ]; then
    echo "mdbook: already installed ($(mdbook --version))"
    exit 0
fi

cargo install mdbook --version "$version" --locked --no-default-features --features search
mdbook --version
