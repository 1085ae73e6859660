#!/usr/bin/env bash
# The tools that build and check niceeval's release packages, from PyPI, pinned: cargo-zigbuild
# and ziglang (a Linux binary that runs on glibc 2.17 and later), maturin (the Python wheel),
# and uv (runs the wheel as `uvx niceeval`). Each is
# skipped when the pinned version is there.
set -euo pipefail

want=(cargo-zigbuild==0.24.1 ziglang==0.17.1 maturin==1.16.0 uv==0.13.8)
missing=()
for pin in "${want[@]}"; do
    name="${pin%%==*}"
    version="${pin#*==}"
    have="$(python3 -m pip show "$name" 2>/dev/null | sed -n 's/^Version: //p' || true)"
    [ "$have" = "$version" ] || missing+=("$pin")
done
if [ "${#missing[@]}" -gt 0 ]; then
    python3 -m pip install --quiet --disable-pip-version-check "${missing[@]}"
fi
