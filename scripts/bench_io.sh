#!/usr/bin/env bash
# `make bench`, archive I/O (issue 16): `lathe transform` as a user runs it,
# a whole process (load + addmm_mm_to_linear + remove_dead_code + verify +
# save), next to PyTorch 2.13 doing the same job on the same archive, with
# the physical limits beside Lathe's rates.
#
#   bash scripts/bench_io.sh BUILD [WORKDIR]
#
# LATHE_BENCH_MLP_LAYERS (10000): the MLP (t + addmm + relu per layer).
# LATHE_BENCH_BIG_LAYERS (333334, 1,000,002 nodes): the large program.
# LATHE_BENCH_TORCH_TIMEOUT (600 s): PyTorch's limit on the large program;
#   past it the comparison is made at LATHE_BENCH_FALLBACK_LAYERS (33334).
set -euo pipefail
build=${1:-build}
work=${2:-$(mktemp -d)}
[ -n "${2:-}" ] || trap 'rm -rf "$work"' EXIT
python=${PYTHON:-.venv/bin/python}
mlp_layers=${LATHE_BENCH_MLP_LAYERS:-10000}
big_layers=${LATHE_BENCH_BIG_LAYERS:-333334}
torch_timeout=${LATHE_BENCH_TORCH_TIMEOUT:-600}
fallback_layers=${LATHE_BENCH_FALLBACK_LAYERS:-33334}

rate() { awk -v who="$1" -v col="$2" '$1 == "RATE" && $2 == who { print $(2 + col) }'; }

# The median of three whole-process runs of `lathe transform IN -o OUT`,
# by wall clock (a fresh process each): "wall user sys peak_rss_kib".
median_transform() {
  local lines="" r
  for r in 1 2 3; do
    lines+="$("$build/lathe_bench_load" time "$build/lathe" transform "$1" -o "$2" | grep '^RATE time' | cut -d' ' -f3-)"$'\n'
  done
  sort -n <<<"$lines" | awk 'NF' | sed -n 2p
}

# The graph JSON record's size in bytes (models/*.json of the archive).
graph_json_bytes() {
  "$python" -c 'import sys, zipfile; print(sum(i.file_size for i in zipfile.ZipFile(sys.argv[1]).infolist() if "/models/" in i.filename and i.filename.endswith(".json")))' "$1"
}
weight_bytes() {
  "$python" -c 'import sys, zipfile; print(sum(i.file_size for i in zipfile.ZipFile(sys.argv[1]).infolist() if "/data/weights/weight_" in i.filename))' "$1"
}

# Whole-process transform of ARCHIVE: prints the figures, sets $lathe_wall.
report_transform() {
  local archive=$1 out=$2 label=$3
  read -r lathe_wall lathe_user lathe_sys lathe_rss < <(median_transform "$archive" "$out")
  local json weights
  json=$(graph_json_bytes "$archive")
  weights=$(weight_bytes "$archive")
  printf 'lathe transform (%s): %.3f s wall (CPU %.3f s user + %.3f s sys), median of 3 runs\n' \
    "$label" "$lathe_wall" "$lathe_user" "$lathe_sys"
  awk -v rss="$lathe_rss" -v json="$json" -v w="$weights" 'BEGIN {
    printf "  peak RSS %.1f MiB = %.2fx the graph JSON (%.1f MB; target <= 3x), %.1f%% of the weight bytes (%.1f MB)\n",
      rss / 1024, rss * 1024 / json, json / 1e6, 100 * rss * 1024 / w, w / 1e6 }'
}

echo "== io: lathe transform as a whole process (load + addmm_mm_to_linear + remove_dead_code + verify + save) =="
"$build/lathe_bench_load" generate "$work/mlp.pt2" "$mlp_layers" 32 mlp
report_transform "$work/mlp.pt2" "$work/mlp_lathe.pt2" "$((3 * mlp_layers)) nodes"
mlp_wall=$lathe_wall
if torch_out=$(timeout "$torch_timeout" "$python" tools/bench_torch_transform.py "$work/mlp.pt2" "$work/mlp_torch.pt2" 2>"$work/torch.err"); then
  grep -v '^RATE' <<<"$torch_out"
  fx=$(rate torch 2 <<<"$torch_out")
  awk -v l="$mlp_wall" -v fx="$fx" 'BEGIN {
    printf "the whole lathe transform %.3f s vs the torch.fx rewrite alone %.3f s on the same graph -> %.0fx (targets: <= 0.3 s, >= 50x)\n", l, fx, fx / l }'
else
  echo "(PyTorch unavailable: $(tail -1 "$work/torch.err"))"
fi

echo
echo "-- the same archive in-process: phases, graph JSON rates against memcpy, RSS --"
"$build/lathe_bench_load" load "$work/mlp.pt2" "$work/mlp_saved.pt2" | grep -v '^RATE'

echo
echo "-- write -> read -> write --"
mkdir -p "$work/a" "$work/b"
"$build/lathe" convert "$work/mlp_lathe.pt2" "$work/a/x.pt2" >/dev/null
"$build/lathe" convert "$work/a/x.pt2" "$work/b/x.pt2" >/dev/null
if cmp -s "$work/a/x.pt2" "$work/b/x.pt2"; then echo "byte-identical: yes"; else echo "byte-identical: NO"; fi
rm -rf "$work/a" "$work/b" "$work"/mlp*.pt2

echo
echo "== io: $((3 * big_layers)) nodes, lathe transform vs torch.export.load + torch.fx rewrite + torch.export.save =="
big=$big_layers
"$build/lathe_bench_load" generate "$work/big.pt2" "$big" 4 mlp
torch_out=""
if ! torch_out=$(timeout "$torch_timeout" "$python" tools/bench_torch_transform.py "$work/big.pt2" "$work/big_torch.pt2" 2>"$work/torch.err"); then
  echo "(PyTorch did not finish $((3 * big)) nodes within ${torch_timeout} s: $(tail -1 "$work/torch.err"); comparing at $((3 * fallback_layers)) nodes)"
  big=$fallback_layers
  rm -f "$work/big.pt2" "$work/big_torch.pt2"
  "$build/lathe_bench_load" generate "$work/big.pt2" "$big" 4 mlp
  torch_out=$(timeout "$torch_timeout" "$python" tools/bench_torch_transform.py "$work/big.pt2" "$work/big_torch.pt2" 2>"$work/torch.err") || torch_out=""
fi
report_transform "$work/big.pt2" "$work/big_lathe.pt2" "$((3 * big)) nodes"
if [ -n "$torch_out" ]; then
  grep -v '^RATE' <<<"$torch_out"
  total=$(rate torch 4 <<<"$torch_out")
  awk -v l="$lathe_wall" -v t="$total" 'BEGIN {
    printf "lathe %.2f s vs PyTorch %.1f s for the same job on the same archive -> %.0fx (target >= 100x)\n", l, t, t / l }'
else
  echo "(PyTorch unavailable: $(tail -1 "$work/torch.err"))"
fi
"$build/lathe_bench_load" load "$work/big.pt2" | grep -v '^RATE'
rm -f "$work"/big*.pt2
