#!/usr/bin/env bash
# Runs each libFuzzer harness for a fixed time and summarises what it did.
#   fuzz/run.sh BUILD_DIR SECONDS HARNESS...
# Seeds: fuzz/corpus/<harness>/ (committed, read only). What a run adds goes
# to BUILD_DIR/corpus/<harness>/, kept between runs; crashes, leaks, timeouts
# and out-of-memory inputs go to BUILD_DIR/artifacts/. FUZZ_PARALLEL=1 runs
# the harnesses side by side (one core each) instead of one after another.
# Exit status: non-zero if any harness found something.
set -uo pipefail
build=$1 seconds=$2
shift 2
root="$(cd "$(dirname "$0")/.." && pwd)"
mkdir -p "$build/artifacts" "$build/logs"

declare -A max_len=([zip_reader]=65536 [program_json]=131072 [unpickle]=16384 [load_pt2]=65536
                   [program_structure]=131072 [runtime]=512)
declare -A dict=([program_json]=fuzz/program_json.dict [load_pt2]=fuzz/program_json.dict [unpickle]=fuzz/pickle.dict
                 [program_structure]=fuzz/program_json.dict)

run_one() {
  local h=$1 log="$build/logs/$1.log"
  local args=(-max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1
              -max_len="${max_len[$h]:-65536}" -artifact_prefix="$build/artifacts/$h-")
  [ -n "${dict[$h]:-}" ] && args+=(-dict="$root/${dict[$h]}")
  mkdir -p "$build/corpus/$h"
  "$build/fuzz/fuzz_$h" "${args[@]}" "$build/corpus/$h" "$root/fuzz/corpus/$h" >"$log" 2>&1
}

start=$(date +%s)
status=0
if [ "${FUZZ_PARALLEL:-0}" = 1 ]; then
  pids=()
  for h in "$@"; do run_one "$h" & pids+=($!); done
  for i in "${!pids[@]}"; do wait "${pids[$i]}" || status=1; done
else
  for h in "$@"; do run_one "$h" || status=1; done
fi

printf '%-17s %10s %8s %8s %9s %7s  %s\n' harness execs exec/s cov ft corpus result
for h in "$@"; do
  log="$build/logs/$h.log"
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
  last=$(grep -E '^#[0-9]+' "$log" | tail -1)
  cov=$(sed -n 's/.* cov: \([0-9]*\).*/\1/p' <<<"$last")
  ft=$(sed -n 's/.* ft: \([0-9]*\).*/\1/p' <<<"$last")
  corp=$(sed -n 's/.* corp: \([0-9]*\/[0-9a-zA-Z]*\).*/\1/p' <<<"$last")
  if grep -qE '^==[0-9]+==ERROR|^SUMMARY: |FUZZ INVARIANT BROKEN|runtime error:|ERROR: libFuzzer' "$log"; then
    result="FOUND: $(grep -m1 -E 'SUMMARY: |FUZZ INVARIANT BROKEN|ERROR: libFuzzer' "$log") (see $log)"
    status=1
  else
    result=ok
  fi
  printf '%-17s %10s %8s %8s %9s %7s  %s\n' "$h" "${execs:-?}" "${rate:-?}" "${cov:-?}" "${ft:-?}" "${corp:-?}" "$result"
done
echo "fuzz: $# harness(es), ${seconds} s each, $(( $(date +%s) - start )) s in all"
exit $status
