#!/usr/bin/env bash
# `make demo`: Lathe's main job on a bundled example, narrated.
#
# The example is fixtures/tts_duration_predictor.pt2, a program exported from
# PyTorch that has exactly the shape of the bug Lathe exists to prevent: two
# linear layers with parameter weights, and one matmul whose weight is
# computed at run time (linear-rewrite.md §2).
set -euo pipefail
lathe=${1:-build/lathe}
example=fixtures/tts_duration_predictor.pt2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

say() { printf '\n\033[1m== %s\033[0m\n' "$*"; }
has() { "$lathe" --help 2>/dev/null | grep -qE "^ +$1( |$)"; }

say "1. Load $example and show what it holds (lathe inspect)"
echo "   Methods, the signature (what each input and output is), the ops, the weights."
"$lathe" inspect "$example"

if has transform; then
  say "2. Rewrite addmm/mm -> linear, only where the weight is a compile-time constant (lathe transform --explain)"
  echo "   The two parameter matmuls become linear; the matmul against a runtime matrix must stay mm."
  "$lathe" transform "$example" -o "$work/rewritten.pt2" --explain --verify
  say "3. The rewritten archive: its user output is now produced by a linear (the value keeps its name addmm_1), and the signature still agrees with the graph"
  "$lathe" inspect "$work/rewritten.pt2"
  if [ -x .venv/bin/python ]; then
    say "3b. PyTorch 2.13 loads the rewritten archive with its own loader (torch.export) and gets its own numbers back"
    .venv/bin/python tools/torch_load_check.py "$work/rewritten.pt2" "${example%.pt2}.ref" 2> >(grep -v -i warn >&2)
  fi
fi

if has run; then
  say "4. Run it on the portable kernels and compare with PyTorch's own outputs (lathe run --check)"
  "$lathe" run "$example" --check
  if [ -f "$work/rewritten.pt2" ]; then
    echo "   The rewritten copy, against the same PyTorch outputs:"
    "$lathe" run "$work/rewritten.pt2" --check --reference "${example%.pt2}.ref"
  fi
fi

if has lower; then
  say "5. Lower to XNNPACK (lathe lower --explain): constant-weight linears are claimed and prepacked, the runtime mm is not"
  "$lathe" lower "$example" -o "$work/xnnpack.pt2" --backend xnnpack --explain
  say "6. Run the lowered archive (weights prepacked at load) and compare with PyTorch"
  "$lathe" run "$work/xnnpack.pt2" --check --reference "${example%.pt2}.ref"
fi

say "Done. See README.md for every command."
