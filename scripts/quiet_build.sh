#!/usr/bin/env bash
# Builds CMake targets with the compiler's and make's output kept in a log:
# what the terminal shows is one progress line (updated in place on a
# terminal, one line per tenth otherwise), then any warnings, or, when the
# build fails, the errors and where the whole log is.
#   scripts/quiet_build.sh BUILD_DIR JOBS TARGET...
set -uo pipefail
build=$1 jobs=$2
shift 2
log="$build/build.log"
label="building ${*}"
start=$(date +%s)
last_shown=-1
show() {  # percent
  if [ -t 1 ]; then
    printf '\r%s: %3d%%' "$label" "$1"
  elif [ $(( $1 / 10 )) -gt "$last_shown" ]; then
    last_shown=$(( $1 / 10 ))
    printf '%s: %3d%%\n' "$label" "$1"
  fi
}
targets=()
for t in "$@"; do targets+=(--target "$t"); done
cmake --build "$build" -j "$jobs" "${targets[@]}" >"$log" 2>&1 &
builder=$!
# Follow the log for make's "[ 45%]" markers while the build runs.
while kill -0 "$builder" 2>/dev/null; do
  pct=$(grep -o '^\[ *[0-9]*%\]' "$log" 2>/dev/null | tail -1 | tr -dc '0-9')
  [ -n "$pct" ] && show "$pct"
  sleep 1
done
wait "$builder"
status=$?
[ -t 1 ] && printf '\n'
if [ "$status" -ne 0 ]; then
  echo "$label: FAILED after $(( $(date +%s) - start )) s; the errors (whole log: $log):"
  grep -E -A5 'error:|Error [0-9]|undefined reference' "$log" | head -60
  exit "$status"
fi
warnings=$(grep -c 'warning:' "$log")
echo "$label: done in $(( $(date +%s) - start )) s${warnings:+, $warnings warning line(s)}"
[ "$warnings" -gt 0 ] && grep -A3 'warning:' "$log" | head -40
exit 0
