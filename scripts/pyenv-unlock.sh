#!/usr/bin/env bash
# Sourced by the install scripts before anything that can run `pyenv rehash` (pip's hook after
# `pip install`, or the scripts themselves). pyenv's rehash takes its lock by creating
# `$PYENV_ROOT/shims/.pyenv-shim`; a rehash killed while holding it (a timed-out or Ctrl-C'd
# install) leaves the file behind, and every later rehash on the machine waits 60 s and fails.
# A lock with no rehash running is stale: remove it. Without pyenv this does nothing.
pyenv_unlock() {
    command -v pyenv > /dev/null || return 0
    local lock
    lock="$(pyenv root)/shims/.pyenv-shim"
    [ -e "$lock" ] || return 0
    if pgrep -f 'libexec/pyenv-rehash' > /dev/null 2>&1; then
        return 0
    fi
    echo "pyenv-unlock: removing a stale rehash lock left by an interrupted rehash: $lock" >&2
    rm -f "$lock"
}
