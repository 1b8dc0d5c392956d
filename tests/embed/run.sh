#!/usr/bin/env bash
# Embed.FindPackageExample: install this build of Lathe into a temporary
# prefix, build examples/embed against it with find_package(Lathe) and run it
# on a fixture. Reuses the build's compiled libraries (cmake --install).
#   run.sh BUILD_DIR SOURCE_DIR CMAKE CXX
set -euo pipefail
build=$1 src=$2 cmake=$3 cxx=$4
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$cmake" --install "$build" --prefix "$tmp/prefix" > "$tmp/install.log"
test -f "$tmp/prefix/include/lathe/lathe.h"
# The tests' helpers are not installed (several include GoogleTest).
if grep -rl "gtest/gtest.h" "$tmp/prefix/include"; then echo "installed headers include GoogleTest"; exit 1; fi
# The public headers' include closure holds none of Lathe's internals: no
# object pools, name or entry indexes, memory maps, large-block allocators.
for header in lathe/lathe.h lathe/extend.h lathe/tools.h; do
  closure=$(echo "#include <$header>" | "$cxx" -std=c++20 -I"$tmp/prefix/include" -x c++ - -M -MT x | tr ' \\' '\n\n' | grep "/lathe/" | sort -u)
  echo "$header: $(wc -l <<< "$closure") Lathe headers in its include closure"
  if grep -E "/(object_pool|name_index|entry_index|mapped_file|large_block)\.h$" <<< "$closure"; then
    echo "$header pulls in the internal headers above"; exit 1
  fi
done
# Nothing but the public headers and their closure is installed.
installed=$(cd "$tmp/prefix/include" && find lathe -name '*.h' | sort)
closure=$(for header in lathe/lathe.h lathe/extend.h lathe/tools.h; do echo "#include <$header>"; done |
  "$cxx" -std=c++20 -I"$tmp/prefix/include" -x c++ - -M -MT x | tr ' \\' '\n\n' | sed -n "s#^$tmp/prefix/include/##p" | sort -u)
if [ "$installed" != "$closure" ]; then
  echo "installed headers outside the public headers' closure:"; comm -23 <(echo "$installed") <(echo "$closure"); exit 1
fi
echo "installed: $(wc -l <<< "$installed") headers, the public headers' closure"
# The C++ examples are written on lathe.h and extend.h alone.
if grep -h "#include <lathe/" "$src"/examples/*/*.cpp | grep -vE "<lathe/(lathe|extend)\.h>"; then
  echo "an example includes a header below the public API"; exit 1
fi
test -f "$tmp/prefix/lib/cmake/Lathe/LatheConfig.cmake" || test -f "$tmp/prefix/lib64/cmake/Lathe/LatheConfig.cmake"
launcher=()
if command -v ccache > /dev/null; then launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache); fi
"$cmake" -S "$src/examples/embed" -B "$tmp/build" -DCMAKE_PREFIX_PATH="$tmp/prefix" \
  -DCMAKE_CXX_COMPILER="$cxx" -DCMAKE_BUILD_TYPE=Release "${launcher[@]}" > "$tmp/configure.log"
"$cmake" --build "$tmp/build" > "$tmp/build.log" 2>&1 || { cat "$tmp/build.log"; exit 1; }
out=$("$tmp/build/embed" "$src/fixtures/tts_duration_predictor.pt2" "$tmp/out.pt2")
echo "$out"
grep -q "model: mm 'mm' kept: weight 'permute_1' is computed at run time by 'squeeze_1'" <<< "$out"
grep -q "^output 0 '[a-z_0-9]*': float32 \[64, 1\]" <<< "$out"
grep -q "^wrote " <<< "$out"
test -s "$tmp/out.pt2"

# A pass and a backend of your own, each its own CMake project on the same install.
for example in cpp_pass cpp_backend; do
  "$cmake" -S "$src/examples/$example" -B "$tmp/$example" -DCMAKE_PREFIX_PATH="$tmp/prefix" \
    -DCMAKE_CXX_COMPILER="$cxx" -DCMAKE_BUILD_TYPE=Release "${launcher[@]}" > "$tmp/configure.log"
  "$cmake" --build "$tmp/$example" > "$tmp/build.log" 2>&1 || { cat "$tmp/build.log"; exit 1; }
done
out=$("$tmp/cpp_pass/cpp_pass" "$src/fixtures/simple_linear.pt2" "$tmp/pass.pt2")
echo "$out"
grep -qF "my_addmm_to_linear: addmm rewritten into linear of parameter 'linear.weight'" <<< "$out"
grep -qF "method model: 2 -> 1 nodes" <<< "$out"
out=$("$tmp/cpp_pass/cpp_pass" "$src/fixtures/computed_weight.pt2" "$tmp/pass.pt2")
echo "$out"
grep -qF "my_addmm_to_linear: addmm 'addmm' kept: weight 'mm' is computed at run time by 'mm'" <<< "$out"
out=$("$tmp/cpp_backend/cpp_backend" "$src/fixtures/tts_duration_predictor.pt2" "$tmp/backend.pt2")
echo "$out"
grep -qF "aten.mm.default 'mm' not claimed: weight 'permute_1' is computed at run time by 'permute_1'" <<< "$out"
grep -q "claimed (delegate 0): tiny_matmul, weight '.*' prepacked" <<< "$out"
grep -q "loaded and run through tiny_matmul: max |difference| " <<< "$out"
echo "Embed.FindPackageExample: ok"
