#!/usr/bin/env bash
# Installs the peers of `make bench-peers` (tools/requirements-peers.txt:
# ExecuTorch 1.4 with XNNPACK, ONNX Runtime, their exporters) into the
# project's virtual environment, beside the pinned PyTorch 2.13 of
# tools/requirements.txt. Idempotent: reinstalls only when the requirements
# file changed (its hash is kept in .venv/requirements-peers.sha256).
#
# The peers only add packages (none of tools/requirements.txt's pins is
# touched) and register no torch entry points, so the test venv stays what
# `make test` expects; they are never imported by `make test`.
#
# A failure is reported and the script exits 0: tools/bench_peers.py then
# prints n/a with the import error for the peer that is missing.
set -uo pipefail
cd "$(dirname "$0")/.."

venv=${LATHE_VENV:-.venv}
req=tools/requirements-peers.txt
stamp="$venv/requirements-peers.sha256"
want=$(sha256sum "$req" | cut -d' ' -f1)

if [ -x "$venv/bin/python" ] && [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
  exit 0
fi
echo "setup-peers: installing $req into $venv"
# --no-deps with a fully pinned closure: pip installs exactly what is listed
# (an unpinned torch would be a multi-GB CUDA build).
if ! "$venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-deps -r "$req"; then
  echo "setup-peers: pip install failed; bench-peers will show n/a for the peers it could not install"
  exit 0
fi
if ! "$venv/bin/python" -c "import torch; assert torch.__version__.startswith('2.13.0'), torch.__version__"; then
  echo "setup-peers: the venv's torch is no longer 2.13.0"
  exit 1
fi
echo "$want" > "$stamp"
