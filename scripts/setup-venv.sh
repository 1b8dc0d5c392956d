#!/usr/bin/env bash
# Creates the project's virtual environment (.venv) with the pinned Python
# tools of tools/requirements.txt: PyTorch 2.13 (CPU) and numpy, used to
# export fixtures, compute reference numbers and check that PyTorch loads
# what Lathe writes. Idempotent: it reinstalls only when the requirements
# file changed (its hash is kept in .venv/requirements.sha256).
#
# PYTHON picks the interpreter (default: python3.11, then python3); the
# PyTorch wheel pinned here is built for CPython 3.11.
set -euo pipefail
cd "$(dirname "$0")/.."

venv=${LATHE_VENV:-.venv}
full_stamp="$venv/requirements.sha256"
full_hash=$(cat tools/requirements.txt tools/requirements-demo.txt | sha256sum | cut -d' ' -f1)
if [ "${1:-}" = demo ]; then
  req=tools/requirements-demo.txt
  stamp="$venv/requirements-demo.sha256"
  want=$(sha256sum "$req" | cut -d' ' -f1)
else
  req=tools/requirements.txt
  stamp=$full_stamp
  want=$full_hash
fi

current() { [ -x "$venv/bin/python" ] && [ -f "$1" ] && [ "$(cat "$1")" = "$2" ]; }
if current "$stamp" "$want" || current "$full_stamp" "$full_hash"; then
  exit 0
fi

python=${PYTHON:-}
if [ -z "$python" ]; then
  python=$(command -v python3.11 || command -v python3)
fi
echo "setup-venv: creating $venv with $("$python" --version 2>&1) and $req"
if [ ! -x "$venv/bin/python" ]; then
  "$python" -m venv "$venv"
fi
# --no-deps with a fully pinned file: pip installs exactly what is listed and
# never resolves anything else (an unpinned torch would be a CUDA build).
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-deps -r "$req"
"$venv/bin/python" -c "import torch, numpy; assert torch.__version__.startswith('2.13.0'), torch.__version__"
echo "$want" > "$stamp"
