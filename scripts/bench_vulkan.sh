#!/usr/bin/env bash
# `make bench`, Vulkan part (also runnable alone):
#   scripts/bench_vulkan.sh [BUILD]
# Per fixture (fixtures/*.pt2 and the reduced-size fixtures/architectures/):
# the portable kernels, XNNPACK-lowered and Vulkan-lowered on lavapipe, each
# `lathe run --repeat` on the fixture's call_0 inputs (lowered in memory,
# prepacked at load, only calls timed), one after the other.
#
# Lavapipe is Mesa's Vulkan implementation on the CPU: its column measures
# what running through Vulkan costs on these cores (shaders JIT-compiled by
# LLVM, one command buffer submitted and waited for per delegate call), that
# is the price of checking the Vulkan path's correctness here — not GPU
# speed. Every Vulkan device that is not a CPU gets a column of its own.
set -euo pipefail
build=${1:-build}
threads=${LATHE_BENCH_THREADS:-1}
repeat=${LATHE_BENCH_VULKAN_REPEAT:-20}

echo "== vulkan: portable vs XNNPACK vs Vulkan on lavapipe (a CPU Vulkan), fixtures/*.pt2 and fixtures/architectures/ =="
devices=$("$build/lathe_vulkan_devices" 2>&1 || true)
cpu=$(awk '$2 == "cpu" { print $1; exit }' <<<"$devices")
if [ -z "$cpu" ]; then
  echo "(no CPU Vulkan device (lavapipe): ${devices:-none found}; bash scripts/setup-deps.sh installs mesa-vulkan-drivers)"
  exit 0
fi
gpus=$(awk '$2 != "cpu" && NF >= 3 { print $1 }' <<<"$devices")
echo "devices:"
sed 's/^/  /' <<<"$devices"

median() { grep '^latency' <<<"$1" | sed -E 's/.*median ([0-9.]+) ms.*/\1/' || true; }
header="$(printf '%-26s %-7s %12s %12s %14s %10s' fixture method "portable ms" "xnnpack ms" "lavapipe ms" "lvp/port")"
for g in $gpus; do header+="$(printf ' %14s' "vulkan#$g ms")"; done
echo "$header delegates"
for archive in fixtures/*.pt2 fixtures/architectures/*.pt2; do
  name=$(basename "$archive" .pt2)
  ref="${archive%.pt2}.ref"
  for method in $(ls "$ref"); do
    run=("$build/lathe" run "$archive" --method "$method" --repeat "$repeat" --threads "$threads")
    port=$(median "$("${run[@]}" 2>/dev/null || true)")
    xnn=$(median "$("${run[@]}" --backend xnnpack 2>/dev/null || true)")
    vout=$(LATHE_VULKAN_DEVICE=$cpu "${run[@]}" --backend vulkan 2>&1 || true)
    lvp=$(median "$vout")
    dels=$(sed -nE 's/^lowered to vulkan: ([0-9]+) delegate.*holding ([0-9]+) node.*/\1 (\2 nodes)/p' <<<"$vout")
    ratio=$(awk -v v="${lvp:-}" -v p="${port:-}" 'BEGIN { if (v == "" || p == "" || p == 0) print "n/a"; else printf "%.2fx", v / p }')
    line="$(printf '%-26s %-7s %12s %12s %14s %10s' "$name" "$method" "${port:-n/a}" "${xnn:-n/a}" "${lvp:-n/a}" "$ratio")"
    for g in $gpus; do
      gpu=$(median "$(LATHE_VULKAN_DEVICE=$g "${run[@]}" --backend vulkan 2>/dev/null || true)")
      line+="$(printf ' %14s' "${gpu:-n/a}")"
    done
    echo "$line ${dels:-0 (nothing claimed)}"
  done
done
echo "(threads: $threads for portable and XNNPACK; lavapipe uses its own threads on the same cores; medians of $repeat calls;"
echo " lvp/port = lavapipe median / portable median. A fixture with 0 delegates runs wholly on the portable kernels.)"
