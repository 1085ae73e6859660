#!/usr/bin/env bash
# Installs cargo-insta (the `cargo insta test` / `cargo insta review` / `cargo insta accept`
# commands) for the snapshot workflow test (tests/it/insta_workflow.rs), unless it is already on
# PATH. Builds from crates.io with the versions its lock file pins.
set -euo pipefail

if cargo insta --version >/dev/null 2>&1; then
    echo "cargo-insta: already installed ($(cargo insta --version))"
    exit 0
fi

cargo install cargo-insta --locked
cargo insta --version
