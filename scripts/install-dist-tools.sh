#!/usr/bin/env bash
# The tools scripts/package-dist.sh builds and checks niceeval's release packages with, from
# PyPI, pinned: maturin (the Python wheel and the binary in it), ziglang (maturin --zig links
# against glibc 2.17, so the binary runs on any Linux since) and uv (runs the wheel as
# `uvx niceeval`). Each is skipped when the pinned version is there.
set -euo pipefail

want=(ziglang==0.17.1 maturin==1.16.0 uv==0.13.8)
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
