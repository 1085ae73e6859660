#!/usr/bin/env bash
# The tools scripts/package-dist.sh builds and checks niceeval's release packages with, from
# PyPI, pinned: maturin (the Python wheel and the binary in it), ziglang (maturin --zig links
# against glibc 2.17, so the binary runs on any Linux since) and uv (runs the wheel as
# `uvx niceeval`). Each is skipped when the pinned version is there.
set -euo pipefail

# shellcheck source=scripts/pyenv-unlock.sh
source "$(dirname "${BASH_SOURCE[0]}")/pyenv-unlock.sh"
pyenv_unlock

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
# Under pyenv the commands reach PATH through shims that `pyenv rehash` writes; pip's hook runs
# it after an install, but an install whose rehash failed (a lock left by an interrupted one)
# leaves the tools installed and unreachable, and the no-op above would never repair it.
if command -v pyenv > /dev/null; then
    pyenv rehash
fi
for tool in maturin uv uvx; do
    command -v "$tool" > /dev/null || { echo "install-dist-tools: $tool is installed but not on PATH" >&2; exit 1; }
done
