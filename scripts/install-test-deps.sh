#!/usr/bin/env bash
# Installs what niceeval's tests need beyond the Rust toolchain: the pinned Python packages
# they compute reference values with (NLTK's sentence_bleu for BLEU, Google's rouge-score for
# ROUGE-N), pytest (run_tests reads its JUnit XML), and Debian's bubblewrap (`bwrap`, the
# workspace isolation). Each step is a no-op when its tool is already there.
# Usage: scripts/install-test-deps.sh   (uses python3 -m pip; pass extra pip flags as arguments)
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=scripts/pyenv-unlock.sh
source "$here/pyenv-unlock.sh"
pyenv_unlock
python="${PYTHON:-python3}"

if ! command -v "$python" >/dev/null 2>&1; then
    echo "install-test-deps: $python not found; install Python 3 first" >&2
    exit 1
fi

if ! command -v bwrap >/dev/null 2>&1; then
    if command -v apt-get >/dev/null 2>&1; then
        sudo=""
        [ "$(id -u)" -ne 0 ] && sudo="sudo"
        $sudo apt-get update -qq
        $sudo apt-get install -y -qq bubblewrap >/dev/null
    else
        echo "install-test-deps: bwrap not found and no apt-get; install bubblewrap by hand" >&2
        exit 1
    fi
fi
echo "install-test-deps: $(bwrap --version)"

# pip only when a pinned version is missing: a no-op run must not touch the interpreter (pip's
# pyenv rehash hook takes a lock that a concurrent or killed run can leave behind).
if ! "$python" - "$here/test-requirements.txt" <<'PY'
import sys
from importlib.metadata import version, PackageNotFoundError
for line in open(sys.argv[1]):
    line = line.split("#")[0].strip()
    if not line:
        continue
    name, _, pinned = line.partition("==")
    try:
        if version(name) != pinned:
            sys.exit(1)
    except PackageNotFoundError:
        sys.exit(1)
PY
then
    "$python" -m pip install --disable-pip-version-check --quiet "$@" -r "$here/test-requirements.txt"
fi
"$python" - <<'PY'
import nltk, rouge_score, pytest
from nltk.translate.bleu_score import sentence_bleu, SmoothingFunction
from rouge_score import rouge_scorer
print("install-test-deps: nltk", nltk.__version__, ", rouge-score and pytest", pytest.__version__, "are ready")
PY
