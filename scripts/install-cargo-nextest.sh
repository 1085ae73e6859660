#!/usr/bin/env bash
# Installs cargo-nextest (the `cargo nextest archive` / `cargo nextest run --partition` commands)
# for the sharding test (tests/it/merge.rs: three partitions merged equal one unsharded run),
# unless `cargo nextest` already works. Builds from crates.io with the versions its lock file pins
# (several minutes on two cores).
set -euo pipefail

if cargo nextest --version >/dev/null 2>&1; then
    echo "cargo-nextest: already installed ($(cargo nextest --version | head -n 1))"
    exit 0
fi

cargo install cargo-nextest --locked
cargo nextest --version | head -n 1
