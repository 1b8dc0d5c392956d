#!/usr/bin/env bash
# Installs llama.cpp (llama-cpp-python, built from source) and gguf, the
# peer of tools/bench_llm_decode.py (tools/requirements-llm-peers.txt), into
# the project's virtual environment beside the pinned PyTorch 2.13 of
# tools/requirements.txt. Idempotent: reinstalls only when the requirements
# file or the CMake options below changed (their hash is kept in
# .venv/requirements-llm-peers.sha256).
#
# Building llama.cpp takes long (11 minutes with one job on a 2-core
# machine): set CMAKE_BUILD_PARALLEL_LEVEL to use more jobs (default 1, so a
# build beside other work does not take the machine).
#
# A failure is reported and the script exits 0, as scripts/setup-peers.sh
# does: the benchmark then shows llama.cpp as n/a with the import error.
set -uo pipefail
cd "$(dirname "$0")/.."

venv=${LATHE_VENV:-.venv}
req=tools/requirements-llm-peers.txt
stamp="$venv/requirements-llm-peers.sha256"

# llama.cpp's CPU backend as its own build chooses it for this machine, since
# the benchmark compares against llama.cpp at its best here:
# * GGML_NATIVE=ON: -march=native (AVX-512, VNNI, BF16 where the CPU has them).
#   It is llama.cpp's default already, but a SOURCE_DATE_EPOCH in the
#   environment (reproducible-build setups) silently turns it off.
# * GGML_BLAS=OFF: ggml's own kernels (its default on Linux); a decode step is
#   matrix-vector work, which BLAS would not speed up.
# * LLAVA_BUILD=OFF: llama-cpp-python's multimodal library (mtmd), which the
#   peer does not use (llama_cpp imports it only for vision chat formats),
#   not compiled.
# Everything else stays llama.cpp's default: OpenMP threads, the llamafile
# sgemm kernels, and the runtime repacking of Q4_0 weights into interleaved
# blocks for AVX2/AVX-512 (GGML_CPU_REPACK).
cmake_args="-DGGML_NATIVE=ON -DGGML_BLAS=OFF -DLLAVA_BUILD=OFF"

want=$( (cat "$req"; echo "$cmake_args") | sha256sum | cut -d' ' -f1)
if [ -x "$venv/bin/python" ] && [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
  exit 0
fi
# pip leaves an installed llama-cpp-python of the pinned version alone, so
# one built with other CMake options (or with options not recorded here) is
# rebuilt by force.
built="$venv/llama-cpp-python.cmake-args"
force=()
if "$venv/bin/python" -c "import llama_cpp" 2>/dev/null && [ "$(cat "$built" 2>/dev/null)" != "$cmake_args" ]; then
  force=(--force-reinstall)
fi
echo "setup-llm-peers: installing $req into $venv (compiles llama.cpp unless installed; CMAKE_ARGS=$cmake_args)"
start=$(date +%s)
# --no-deps with a fully pinned list, --no-build-isolation so the build uses
# the venv's pinned scikit-build-core and the machine's CMake instead of
# whatever pip would resolve into a build environment; --no-cache-dir so a
# changed CMAKE_ARGS is not answered with a wheel pip cached from another
# build. The build's (verbose) log goes to a file, shown on failure.
log=$(mktemp)
if ! CMAKE_ARGS="$cmake_args" CMAKE_BUILD_PARALLEL_LEVEL=${CMAKE_BUILD_PARALLEL_LEVEL:-1} \
    nice "$venv/bin/python" -m pip install --disable-pip-version-check --no-cache-dir \
    --no-deps --no-build-isolation "${force[@]}" -r "$req" >"$log" 2>&1; then
  tail -n 40 "$log"
  echo "setup-llm-peers: pip install failed (log: $log); the LLM benchmark will show n/a for llama.cpp"
  exit 0
fi
rm -f "$log"
if ! "$venv/bin/python" -c "import torch; assert torch.__version__.startswith('2.13.0'), torch.__version__"; then
  echo "setup-llm-peers: the venv's torch is no longer 2.13.0"
  exit 1
fi
if ! "$venv/bin/python" -c "import gguf, llama_cpp; llama_cpp.llama_backend_init()"; then
  echo "setup-llm-peers: llama_cpp was installed but does not load"
  exit 0
fi
echo "$cmake_args" > "$built"
echo "$want" > "$stamp"
echo "setup-llm-peers: done in $(( $(date +%s) - start )) s"
