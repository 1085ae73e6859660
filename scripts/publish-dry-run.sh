#!/usr/bin/env bash
# `cargo publish --workspace --dry-run --locked`: every published crate packaged and built from
# its own tarball, in dependency order, as crates.io would receive it (nothing is uploaded).
#
# cargo verifies a crate against the tarballs of the workspace crates it depends on through a
# local registry overlay. Two things it keeps from an earlier dry run of the same version (an
# older commit, another checkout on the same machine) are then used as they are, because a
# registry package of a given version is taken never to change:
# - the tarball unpacked into $CARGO_HOME/registry/src/<overlay>/<name>-<version> (unpacked only
#   when that directory is missing);
# - the build of that package in the target directory (its fingerprint names the package and
#   version, not its files).
# Either way a crate calling a function its sibling made public since then fails to verify (CI,
# 2026-11-29: "function `yaml_item_lines` is private"). So both are removed for the workspace's
# own packages first, and cargo unpacks and builds the tarballs it has just made.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."

cargo_home="${CARGO_HOME:-$HOME/.cargo}"

# The target directory, then the name and version of every package this workspace publishes
# (`publish = false` ones are skipped), one per line.
mapfile -t lines < <(
    cargo metadata --no-deps --format-version 1 --locked |
        python3 -c '
import json, sys
metadata = json.load(sys.stdin)
print(metadata["target_directory"])
for p in metadata["packages"]:
    if p.get("publish") != []:
        print(p["name"] + " " + p["version"])
'
)
target="${lines[0]:-}"
packages=("${lines[@]:1}")

# (A failure inside `< <(...)` does not stop the script, so an empty list does.)
if [ "${#packages[@]}" -eq 0 ]; then
    echo "publish-dry-run.sh: cargo metadata listed no published package" >&2
    exit 1
fi

shopt -s nullglob
for package in "${packages[@]}"; do
    name="${package% *}"
    version="${package#* }"
    for stale in "$cargo_home"/registry/src/*/"$name-$version"; do
        echo "removing an earlier unpacked copy: $stale"
        rm -rf -- "$stale"
    done
    # The package's fingerprints (workspace and overlay builds alike): each is rebuilt.
    rm -rf -- "$target"/debug/.fingerprint/"$name"-????????????????
done

# exec: the pid a user stops or kills is cargo itself, not a shell that would leave it running.
exec cargo publish --workspace --dry-run --locked "$@"
