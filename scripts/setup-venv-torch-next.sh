#!/usr/bin/env bash
# Creates the second virtual environment, .venv-torch214, with the pinned
# PyTorch 2.14.1 of tools/requirements-torch214.txt, for `make
# test-torch-next` (the interop tests and the Python suites again, against
# the current PyTorch release). Never used by the library or `make test`.
#
# PyPI's torch 2.14.1 for x86_64 Linux is a CUDA 13 build with its CUDA
# libraries (about 5.5 GB in the venv); it runs on the CPU. Idempotent: it
# reinstalls only when the requirements file changed (its hash is kept in
# the venv's requirements.sha256), and checks the torch it installed is the
# one the file pins.
#
# LATHE_VENV_NEXT names the folder; PYTHON the interpreter (default:
# python3.11, then python3; the wheels pinned are built for CPython 3.11).
set -euo pipefail
cd "$(dirname "$0")/.."

venv=${LATHE_VENV_NEXT:-.venv-torch214}
req=tools/requirements-torch214.txt
stamp="$venv/requirements.sha256"
want=$(sha256sum "$req" | cut -d' ' -f1)
pin=$(sed -n 's/^torch==\([0-9.]*\)$/\1/p' "$req")

if [ -x "$venv/bin/python" ] && [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
  exit 0
fi

python=${PYTHON:-}
if [ -z "$python" ]; then
  python=$(command -v python3.11 || command -v python3)
fi
start=$(date +%s)
echo "setup-venv-torch-next: creating $venv with $("$python" --version 2>&1) and $req (torch $pin, about 5.5 GB)"
if [ ! -x "$venv/bin/python" ]; then
  "$python" -m venv "$venv"
fi
echo '*' > "$venv/.gitignore"  # git leaves the whole venv alone (Python 3.13's venv writes the same)
# --no-deps with a fully pinned file: pip installs exactly what is listed.
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-deps -r "$req"
"$venv/bin/python" - "$pin" <<'PY'
import sys
import numpy, pytest, torch  # noqa: F401  (the CUDA build imports without a GPU, or fails here)
if torch.__version__.split("+")[0] != sys.argv[1]:
    sys.exit("setup-venv-torch-next: installed torch %s, the file pins %s" % (torch.__version__, sys.argv[1]))
PY
echo "$want" > "$stamp"
echo "setup-venv-torch-next: torch $pin in $venv ($(( $(date +%s) - start )) s)"
