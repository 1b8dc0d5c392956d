#!/usr/bin/env bash
# `make bench`, architectures part (also runnable alone):
#   scripts/bench_architectures.sh [BUILD] [WORKDIR]
set -euo pipefail
build=${1:-build}
work=${2:-$(mktemp -d)}
threads=${LATHE_BENCH_THREADS:-1}

# --- architectures: the 13 common networks at their real sizes (224x224...) ---
# Exported here with PyTorch 2.13 (tools/export_architectures.py --full:
# ~0.5 GB, so nothing is committed), then per model: portable kernels,
# XNNPACK-lowered (lowered in memory, prepacked at load, only calls timed)
# and PyTorch 2.13 eager running the same exported program
# (tools/bench_eager.py --archives), call_0 inputs, same thread count.
# LATHE_BENCH_ARCH_DIR=DIR reuses an earlier export; LATHE_BENCH_ARCH=small
# measures the committed reduced-size fixtures instead.
echo "== architectures: portable vs XNNPACK-lowered vs PyTorch 2.13 eager (same exported program) =="
arch_repeat=${LATHE_BENCH_ARCH_REPEAT:-10}
if [ "${LATHE_BENCH_ARCH:-full}" = small ]; then
  arch_dir=fixtures/architectures
elif [ -n "${LATHE_BENCH_ARCH_DIR:-}" ]; then
  arch_dir=$LATHE_BENCH_ARCH_DIR
else
  arch_dir="$work/arch"
  .venv/bin/python tools/export_architectures.py --full --out "$arch_dir" >"$work/arch.log" 2>&1 ||
    { echo "(export failed: $(tail -1 "$work/arch.log"))"; arch_dir=""; }
fi
if [ -n "$arch_dir" ]; then
  .venv/bin/python tools/bench_eager.py --archives "$arch_dir" --threads "$threads" --repeat "$arch_repeat" >"$work/arch_eager.txt" 2>"$work/arch_eager.err" ||
    echo "(PyTorch eager unavailable: $(tail -1 "$work/arch_eager.err"))"
  printf '%-26s %12s %12s %12s %10s %13s %s\n' model "portable ms" "xnnpack ms" "eager ms" "xnn/port" "xnnpack/eager" delegates
  for archive in "$arch_dir"/*.pt2; do
    name=$(basename "$archive" .pt2)
    port=$("$build/lathe" run "$archive" --repeat "$arch_repeat" --threads "$threads" 2>/dev/null | grep '^latency' || echo "latency median n/a ms")
    xout=$("$build/lathe" run "$archive" --repeat "$arch_repeat" --threads "$threads" --backend xnnpack 2>&1 || true)
    xnn=$(grep '^latency' <<<"$xout" || echo "latency median n/a ms")
    dels=$(sed -nE 's/^lowered to xnnpack: ([0-9]+) delegate.*holding ([0-9]+) node.*/\1 (\2 nodes)/p' <<<"$xout")
    pmed=$(sed -E 's/.*median ([0-9.]+|n\/a) ms.*/\1/' <<<"$port")
    xmed=$(sed -E 's/.*median ([0-9.]+|n\/a) ms.*/\1/' <<<"$xnn")
    read -r emed _ < <(awk -v n="$name" '$1 == n { print $3, $4 }' "$work/arch_eager.txt")
    xp=$(awk -v x="$xmed" -v p="$pmed" 'BEGIN { if (p == "n/a" || x == "n/a" || p == 0) print "n/a"; else printf "%.2fx", x / p }')
    xe=$(awk -v x="$xmed" -v e="${emed:-}" 'BEGIN { if (e == "" || e == 0 || x == "n/a") print "n/a"; else printf "%.2fx", x / e }')
    printf '%-26s %12s %12s %12s %10s %13s %s\n' "$name" "$pmed" "$xmed" "${emed:-n/a}" "$xp" "$xe" "${dels:-0}"
  done
  echo "(threads: $threads; medians of $arch_repeat calls; xnn/port and xnnpack/eager: lower is better)"
fi

