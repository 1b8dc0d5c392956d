#!/usr/bin/env bash
# `make bench`: every benchmark, one after the other, figures on stdout.
set -euo pipefail
build=${1:-build}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

echo "== load: generated program, >= 100,000 nodes and >= 1 GB of weights =="
"$build/lathe_bench_load" generate "$work/big.pt2" 50000 72
"$build/lathe_bench_load" load "$work/big.pt2"

# --- runtime: every fixture on the portable kernels vs PyTorch 1.13 eager ---
# Same inputs (the fixture's call_0 reference inputs), same thread count,
# same machine, one after the other. Each side warms up once, then reports
# the median and p90 of $repeat calls.
echo
echo "== run: lathe run (portable kernels) vs PyTorch 1.13 eager, fixtures/*.pt2 =="
threads=${LATHE_BENCH_THREADS:-1}
repeat=${LATHE_BENCH_REPEAT:-200}
eager="$work/eager.txt"
if ! /usr/bin/python3 tools/bench_eager.py --threads "$threads" --repeat "$repeat" >"$eager" 2>"$work/eager.err"; then
  echo "(PyTorch eager unavailable: $(tail -1 "$work/eager.err"))"
  : >"$eager"
fi
printf '%-24s %-7s %14s %14s %14s %14s %9s\n' fixture method "lathe med ms" "lathe p90 ms" "eager med ms" "eager p90 ms" "speedup"
for archive in fixtures/*.pt2; do
  name=$(basename "$archive" .pt2)
  for method in $(ls "fixtures/$name.ref"); do
    line=$("$build/lathe" run "$archive" --method "$method" --repeat "$repeat" --threads "$threads" | grep '^latency')
    lmed=$(sed -E 's/.*median ([0-9.]+) ms.*/\1/' <<<"$line")
    lp90=$(sed -E 's/.*p90 ([0-9.]+) ms.*/\1/' <<<"$line")
    read -r emed ep90 < <(awk -v n="$name" -v m="$method" '$1 == n && $2 == m { print $3, $4 }' "$eager")
    speedup=$(awk -v l="$lmed" -v e="${emed:-}" 'BEGIN { if (e == "" || l == 0) print "n/a"; else printf "%.2fx", e / l }')
    printf '%-24s %-7s %14s %14s %14s %14s %9s\n' "$name" "$method" "$lmed" "$lp90" "${emed:-n/a}" "${ep90:-n/a}" "$speedup"
  done
done
echo "(threads: $threads; speedup = eager median / lathe median; LATHE_BENCH_THREADS / LATHE_BENCH_REPEAT override)"
