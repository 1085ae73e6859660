#!/usr/bin/env bash
# Installs the pinned Python packages niceeval's tests use to compute reference values:
# NLTK (sentence_bleu, for BLEU) and Google's rouge-score (for ROUGE-N).
# Usage: scripts/install-test-deps.sh   (uses python3 -m pip; pass extra pip flags as arguments)
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
python="${PYTHON:-python3}"

if ! command -v "$python" >/dev/null 2>&1; then
    echo "install-test-deps: $python not found; install Python 3 first" >&2
    exit 1
fi

"$python" -m pip install --disable-pip-version-check --quiet "$@" -r "$here/test-requirements.txt"
"$python" - <<'PY'
import nltk, rouge_score
from nltk.translate.bleu_score import sentence_bleu, SmoothingFunction
from rouge_score import rouge_scorer
print("install-test-deps: nltk", nltk.__version__, "and rouge-score are ready")
PY
