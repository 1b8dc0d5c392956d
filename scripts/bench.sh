#!/usr/bin/env bash
# `make bench`: every benchmark, one after the other, figures on stdout.
set -euo pipefail
build=${1:-build}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

echo "== load: generated program, >= 100,000 nodes and >= 1 GB of weights =="
"$build/lathe_bench_load" generate "$work/big.pt2" 50000 72
"$build/lathe_bench_load" load "$work/big.pt2"
rm -f "$work/big.pt2"

# --- transform: the whole `lathe transform` process (issue 16) -------------
# A user's job, start to exit: load + addmm_mm_to_linear + remove_dead_code
# + verify + save, on a generated nn.Sequential(Linear, ReLU)*N MLP (3 nodes
# per layer, 32x32 weights). Beside it, the same job in Python with PyTorch
# 2.13 (torch.export.load, the rewrite with torch.fx, torch.export.save;
# tools/bench_torch_transform.py), on the same archive, in the same run.
# Wall time, CPU time and peak RSS from wait4 (lathe_bench_load time).
# LATHE_BENCH_TRANSFORM_LAYERS: the large size (default 333,334 layers =
# 1,000,002 nodes; PyTorch's side is run there too unless it exceeds
# LATHE_BENCH_TORCH_LAYERS, default 33,334 = 100,002 nodes, where it
# finishes in minutes).
echo
echo "== transform: whole lathe transform process vs PyTorch 2.13 (load + torch.fx rewrite + save) =="
transform_job() {  # LAYERS: generate, time lathe, time torch if asked
  local layers=$1 with_torch=$2 archive="$work/mlp_$1.pt2"
  "$build/lathe_bench_load" generate "$archive" "$layers" 32 mlp >/dev/null
  local json_mb
  json_mb=$(unzip -lv "$archive" 2>/dev/null | awk '/models\/.*\.json$/ && !/weights_config|sample/ { s += $1 } END { printf "%.1f", s / 1e6 }')
  local t
  t=$("$build/lathe_bench_load" time "$build/lathe" transform "$archive" -o "$work/out_lathe.pt2" --quiet | grep '^RATE time')
  read -r _ _ wall user sys rss <<<"$t"
  printf 'lathe transform  %7d nodes  archive %6.1f MB (graph JSON %s MB)  wall %.3f s  CPU %.3f s  peak RSS %.1f MiB (%.2fx the graph JSON)\n' \
    "$((3 * layers))" "$(stat -c %s "$archive" | awk '{ print $1 / 1e6 }')" "$json_mb" "$wall" "$(awk -v u="$user" -v s="$sys" 'BEGIN { print u + s }')" \
    "$(awk -v r="$rss" 'BEGIN { print r / 1024 }')" "$(awk -v r="$rss" -v j="$json_mb" 'BEGIN { if (j > 0) print r * 1024 / (j * 1e6); else print 0 }')"
  if [ "$with_torch" = yes ]; then
    local py
    if py=$(.venv/bin/python tools/bench_torch_transform.py "$archive" "$work/out_torch.pt2" 2>"$work/torch_transform.err"); then
      grep -v '^RATE' <<<"$py" | sed 's/^/  /'
      read -r _ _ tload trewrite tsave ttotal _ < <(grep '^RATE torch' <<<"$py")
      awk -v l="$wall" -v r="$trewrite" -v t="$ttotal" -v n="$((3 * layers))" 'BEGIN {
        printf "at %d nodes: lathe whole process %.3f s; PyTorch rewrite alone %.3f s (%.0fx lathe), whole job %.3f s (%.0fx lathe)\n", n, l, r, r / l, t, t / l }'
    else
      echo "  (PyTorch side failed: $(tail -1 "$work/torch_transform.err"))"
    fi
  fi
  rm -f "$archive" "$work/out_lathe.pt2" "$work/out_torch.pt2"
}
transform_job 10000 yes
torch_layers=${LATHE_BENCH_TORCH_LAYERS:-33334}
transform_job "$torch_layers" yes
big_layers=${LATHE_BENCH_TRANSFORM_LAYERS:-333334}
transform_job "$big_layers" "$([ "$big_layers" -le "$torch_layers" ] && echo yes || echo no)"
echo "(targets: 10,000 layers <= 0.3 s and >= 50x the torch.fx rewrite alone; >= 100x PyTorch's whole job at the"
echo " largest size both finish; graph JSON read >= 400 MB/s, write >= 300 MB/s (load section); peak RSS <= 3x the graph JSON)"

# --- view: `lathe view` of 100,000 nodes (tiny weights, every node in a
# module group, blocks of 100 layers) in headless Chromium: HTML size, time
# to first paint, opening a group and panning (tests/view/bench_view.py).
echo
echo "== view: lathe view of a generated 100,000-node program, in headless Chromium =="
"$build/lathe_bench_load" generate "$work/view.pt2" 50000 4 modules
.venv/bin/python tests/view/bench_view.py "$build/lathe" "$work/view.pt2" "$work"
rm -f "$work/view.pt2" "$work/view.html"

# --- runtime: every fixture on the portable kernels vs PyTorch 2.13 eager ---
# Same inputs (the fixture's call_0 reference inputs), same thread count,
# same machine, one after the other. Each side warms up once, then reports
# the median and p90 of $repeat calls.
echo
echo "== run: lathe run (portable kernels) vs PyTorch 2.13 eager (.venv), fixtures/*.pt2 =="
threads=${LATHE_BENCH_THREADS:-1}
repeat=${LATHE_BENCH_REPEAT:-200}
eager="$work/eager.txt"
if ! .venv/bin/python tools/bench_eager.py --threads "$threads" --repeat "$repeat" >"$eager" 2>"$work/eager.err"; then
  echo "(PyTorch eager unavailable: $(tail -1 "$work/eager.err"))"
  : >"$eager"
fi
printf '%-24s %-7s %14s %14s %14s %14s %9s\n' fixture method "lathe med ms" "lathe p90 ms" "eager med ms" "eager p90 ms" "speedup"
for archive in fixtures/*.pt2; do
  name=$(basename "$archive" .pt2)
  for method in $(ls "fixtures/$name.ref"); do
    # (a fixture Lathe cannot run, such as a user's custom op, shows n/a)
    line=$("$build/lathe" run "$archive" --method "$method" --repeat "$repeat" --threads "$threads" 2>/dev/null | grep '^latency' || echo "latency median n/a ms, p90 n/a ms")
    lmed=$(sed -E 's/.*median ([0-9.]+|n\/a) ms.*/\1/' <<<"$line")
    lp90=$(sed -E 's/.*p90 ([0-9.]+|n\/a) ms.*/\1/' <<<"$line")
    read -r emed ep90 < <(awk -v n="$name" -v m="$method" '$1 == n && $2 == m { print $3, $4 }' "$eager")
    speedup=$(awk -v l="$lmed" -v e="${emed:-}" 'BEGIN { if (e == "" || l == 0 || l == "n/a") print "n/a"; else printf "%.2fx", e / l }')
    [ "$lmed" = "n/a" ] && speedup=n/a
    printf '%-24s %-7s %14s %14s %14s %14s %9s\n' "$name" "$method" "$lmed" "$lp90" "${emed:-n/a}" "${ep90:-n/a}" "$speedup"
  done
done
echo "(threads: $threads; speedup = eager median / lathe median; LATHE_BENCH_THREADS / LATHE_BENCH_REPEAT override)"

# --- xnnpack: portable vs XNNPACK-lowered vs PyTorch 2.13 eager, and a large linear ---
# Same inputs (call_0 reference inputs), same thread count, one after the
# other; eager figures are the ones measured above in this run. The
# XNNPACK column is `lathe run --backend xnnpack` (lowered in memory,
# prepacked at load; only calls are timed). Then a 256x1024x1024 fp32
# linear through Lathe (lowered, Executor::run; its fully-connected is
# Lathe's blocked GEMM) vs the 2022 XNNPACK's
# fully-connected operator called directly (bench/lathe_bench_xnnpack.cpp).
echo
echo "== xnnpack: lathe run portable vs XNNPACK-lowered vs PyTorch 2.13 eager, fixtures/*.pt2 =="
printf '%-26s %-7s %12s %12s %12s %13s %9s\n' fixture method "portable ms" "xnnpack ms" "eager ms" "xnnpack/eager" delegates
for archive in fixtures/*.pt2; do
  name=$(basename "$archive" .pt2)
  for method in $(ls "fixtures/$name.ref"); do
    port=$("$build/lathe" run "$archive" --method "$method" --repeat "$repeat" --threads "$threads" 2>/dev/null | grep '^latency' || echo "latency median n/a ms")
    xout=$("$build/lathe" run "$archive" --method "$method" --repeat "$repeat" --threads "$threads" --backend xnnpack 2>&1 || true)
    xnn=$(grep '^latency' <<<"$xout" || echo "latency median n/a ms")
    dels=$(sed -nE 's/^lowered to xnnpack: ([0-9]+) delegate.*holding ([0-9]+) node.*/\1 (\2 nodes)/p' <<<"$xout")
    pmed=$(sed -E 's/.*median ([0-9.]+|n\/a) ms.*/\1/' <<<"$port")
    xmed=$(sed -E 's/.*median ([0-9.]+|n\/a) ms.*/\1/' <<<"$xnn")
    read -r emed _ < <(awk -v n="$name" -v m="$method" '$1 == n && $2 == m { print $3, $4 }' "$eager")
    ratio=$(awk -v x="$xmed" -v e="${emed:-}" 'BEGIN { if (e == "" || e == 0 || x == "n/a") print "n/a"; else printf "%.2fx", x / e }')
    printf '%-26s %-7s %12s %12s %12s %13s %9s\n' "$name" "$method" "$pmed" "$xmed" "${emed:-n/a}" "$ratio" "${dels:-0}"
  done
done
echo "(threads: $threads; xnnpack/eager = XNNPACK-lowered median / eager median, lower is better;"
echo " targets at batch 1: <= 0.70x on mlp and transformer_block, <= 1.00x on convnet)"
echo
"$build/lathe_bench_xnnpack" 256 1024 1024 --threads "$threads" --repeat "${LATHE_BENCH_XNN_REPEAT:-50}" | grep -v '^RATE'
"$build/lathe_bench_xnnpack" 64 4096 4096 --threads "$threads" --repeat "${LATHE_BENCH_XNN_REPEAT:-20}" | grep -v '^RATE'

# --- vulkan: portable vs XNNPACK vs Vulkan on lavapipe (and any GPU), per fixture ---
echo
bash scripts/bench_vulkan.sh "$build"

# --- architectures: the 13 common networks at their real sizes ---
bash scripts/bench_architectures.sh "$build" "$work"

# --- rewrite: addmm_mm_to_linear + remove_dead_code vs the same rewrite in torch.fx ---
# Both sides rewrite a generated 1,000,000-node program of the same shape
# (500,000 x t + addmm): bench/lathe_bench_rewrite.cpp and
# tools/bench_fx_rewrite.py. Only the rewrite is timed, on both sides. Rates
# are nodes per second, wall clock and CPU time of the process (on a shared
# machine wall time also counts other people's work). fx takes about two
# minutes at this size; LATHE_BENCH_FX_LAYERS=50000 gives a quick run on a
# 100,000-node graph (fx is faster per node on a smaller graph, so that
# ratio is the lower one), and Lathe is then also run at that size.
echo
echo "== rewrite: addmm_mm_to_linear + remove_dead_code, Lathe vs torch.fx (nodes/s) =="
rate() { awk -v who="$1" -v col="$2" '$1 == "RATE" && $2 == who { print $(2 + col) }'; }
# Lathe's side takes well under a second, so one busy moment on a shared
# machine moves it a lot: run it three times (a fresh process each) and
# keep the median run.
lathe_median() {
  local runs=() r
  for r in 1 2 3; do runs+=("$("$build/lathe_bench_rewrite" "$1")"); done
  for r in "${runs[@]}"; do grep 'addmm_mm_to_linear' <<<"$r" | sed 's/^lathe:/lathe: run:/'; done
  local med
  med=$(for r in 0 1 2; do echo "$(rate lathe 1 <<<"${runs[$r]}") $r"; done | sort -n | awk 'NR == 2 { print $2 }')
  grep -v '^RATE' <<<"${runs[$med]}" | grep -v 'addmm_mm_to_linear'
  echo "lathe: median of 3 runs: $(grep 'addmm_mm_to_linear' <<<"${runs[$med]}" | sed 's/^lathe: //')"
  grep '^RATE' <<<"${runs[$med]}"
}
lathe_layers=500000
fx_layers=${LATHE_BENCH_FX_LAYERS:-$lathe_layers}
lathe_big=$(lathe_median "$lathe_layers")
grep -v '^RATE' <<<"$lathe_big"
lathe_same=$lathe_big
if [ "$fx_layers" != "$lathe_layers" ]; then
  lathe_same=$(lathe_median "$fx_layers")
  grep -v '^RATE' <<<"$lathe_same"
fi
if fx=$(${PYTHON:-.venv/bin/python} tools/bench_fx_rewrite.py --layers "$fx_layers" 2>"$work/fx.err"); then
  grep -v '^RATE' <<<"$fx"
  for col in 1 2; do
    what=$([ "$col" = 1 ] && echo "wall" || echo "CPU ")
    awk -v what="$what" -v same="$(rate lathe "$col" <<<"$lathe_same")" -v fx="$(rate fx "$col" <<<"$fx")" \
        -v n="$((2 * fx_layers))" 'BEGIN {
      printf "%s: lathe %.0f nodes/s, torch.fx %.0f nodes/s, both at %d nodes -> %.0fx\n", what, same, fx, n, same / fx }'
  done
  echo "(target: >= 100x torch.fx; fx is given explicit unique node names, its default naming is quadratic in torch 1.13)"
else
  echo "(torch.fx unavailable: $(tail -1 "$work/fx.err"))"
fi

# --- quantized linears (issues 8, 18): int8 / int4 vs Lathe's best fp32 ---
# One-node programs through Executor::run (quantized weights repacked once
# at load), 1 thread unless LATHE_BENCH_THREADS: fp32 portable and
# XNNPACK-lowered, int8 weight-only, int4 groupwise (g32, g128), as GB/s of
# weights streamed beside the streaming-read bandwidth at the same size
# (bench/lathe_bench_quantized_linear.cpp). Then PyTorch 2.13's own
# _weight_int8pack_mm / _weight_int4pack_mm_for_cpu on the same weights
# (bench/torch_quantized_linear.py). Targets at batch 1 (4096x4096,
# 11008x4096): int8 >= 1.8x and int4 >= 3x the best fp32, int8 faster than
# PyTorch's, GEMV >= 70% of the read bandwidth.
echo
echo "== quantized linear: int8 / int4 weight-only vs Lathe's best fp32, and PyTorch 2.13's kernels =="
mkdir -p "$work/quant"
"$build/lathe_bench_quantized_linear" --threads "${LATHE_BENCH_THREADS:-1}" --repeat "${LATHE_BENCH_QREPEAT:-30}" --dump "$work/quant"
.venv/bin/python bench/torch_quantized_linear.py "$work/quant" --repeat "${LATHE_BENCH_QREPEAT:-30}" \
  || echo "(PyTorch timing unavailable)"
rm -rf "$work/quant"

# --- Python: Program.run vs the C++ executor on the same inputs --------------
echo
echo "== python: Program.run (numpy in/out) vs lathe run (Executor::run), median per call =="
if [ -d "$build/python/lathe" ]; then
  PYTHONPATH="$build/python" .venv/bin/python bench/python_run_overhead.py "$build/lathe" mlp simple_linear tts_duration_predictor
  echo
  echo "== python: load + transform + save from Python vs lathe transform (less process start) =="
  "$build/lathe_bench_load" generate "$work/mlp10k.pt2" 10000 32 >/dev/null
  PYTHONPATH="$build/python" .venv/bin/python bench/python_transform_cost.py "$build/lathe" "$work/mlp10k.pt2" "$work"
else
  echo "(the Python package is not built in $build: configure with LATHE_PYTHON and pybind11 in .venv)"
fi
