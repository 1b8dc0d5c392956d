#!/usr/bin/env bash
# `make demo`'s set-up: the demo's Python (.venv with PyTorch, for the step
# that has PyTorch load what Lathe wrote) is installed while the `lathe`
# binary compiles, and only the binary is built; the log shows one progress
# line (scripts/quiet_build.sh) instead of the compiler's output.
#   scripts/demo_build.sh BUILD_DIR JOBS
set -euo pipefail
cd "$(dirname "$0")/.."
build=$1 jobs=$2
mkdir -p "$build"
bash scripts/setup-venv.sh demo >"$build/venv.log" 2>&1 &
venv=$!
if [ ! -f "$build/CMakeCache.txt" ]; then
  # No test Python here (LATHE_PYTHON): `make build`/`make test` add it when
  # they configure the same folder.
  cmake -S . -B "$build" ${CMAKE_FLAGS:-} >"$build/configure.log" 2>&1 || {
    cat "$build/configure.log"
    exit 1
  }
fi
bash scripts/quiet_build.sh "$build" "$jobs" lathe
if ! wait "$venv"; then
  echo "demo: could not set up .venv (PyTorch for step 3b); its log:"
  cat "$build/venv.log"
  exit 1
fi
