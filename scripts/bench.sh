#!/usr/bin/env bash
# `make bench`: every benchmark, one after the other, figures on stdout.
set -euo pipefail
build=${1:-build}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

echo "== load: generated program, >= 100,000 nodes and >= 1 GB of weights =="
"$build/lathe_bench_load" generate "$work/big.pt2" 50000 72
"$build/lathe_bench_load" load "$work/big.pt2"
