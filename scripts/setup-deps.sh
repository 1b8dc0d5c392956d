#!/usr/bin/env bash
# Installs the Debian packages Lathe needs (and any named on the command
# line), and only those that are missing.
# Idempotent: a second run with everything present does nothing and asks no
# registry. Debian packages only; nothing is downloaded from anywhere else.
set -euo pipefail

packages=(
  build-essential cmake pkg-config
  libgtest-dev libgmock-dev libbenchmark-dev
  nlohmann-json3-dev   # JSON writer (ordered objects, exact field order)
  libsimdjson-dev      # JSON reader (graph JSON decode speed)
  libcli11-dev         # command-line parsing for `lathe`
  zlib1g-dev           # inflate for deflated zip entries
  libdeflate-dev       # CRC-32 for zip entries (carry-less multiply: ~10x zlib's)
  libxnnpack-dev libpthreadpool-dev  # XNNPACK backend (src/lathe/backends); xnnpack.h includes pthreadpool.h
  libvulkan-dev glslc  # Vulkan backend: loader + headers, GLSL -> SPIR-V at build time
)
# Extra packages a target asks for, so that `make demo` installs only what
# building Lathe needs: `make test` adds Debian's torch 1.13, Chromium (the
# `lathe view` tests) and lavapipe (mesa-vulkan-drivers, a CPU Vulkan device
# for the Vulkan tests); `make fuzz` adds clang and libFuzzer's runtime.
# PyTorch for tests and fixtures lives in .venv instead.
packages+=("$@")

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

echo "setup-deps: installing ${missing[*]}"
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
