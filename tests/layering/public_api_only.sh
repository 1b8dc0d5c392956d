#!/usr/bin/env bash
# Layering.CliAndPythonOnPublicApi: the `lathe` command (src/lathe/cli) and
# the Python package (python/src) are built on the public headers alone -
# lathe/lathe.h, lathe/extend.h, lathe/tools.h - as any tool of a user's
# own would be; nothing below them. And the CLI links only the facade.
#   public_api_only.sh SOURCE_DIR
set -euo pipefail
src=$1
allowed='^#include "lathe/(lathe|extend|tools)\.h"|^#include "lathe/cli/|^#include "lathe/view/view_template\.h"'
status=0
for f in "$src"/src/lathe/cli/*.cpp "$src"/src/lathe/cli/*.h "$src"/python/src/*.cpp "$src"/python/src/*.h; do
  bad=$(grep -E '^#include "lathe/' "$f" | grep -vE "$allowed" || true)
  if [ -n "$bad" ]; then
    echo "${f#"$src"/} includes below the public API:"
    echo "$bad" | sed 's/^/  /'
    status=1
  fi
done
if ! grep -qE '^lathe_module\(cli DEPS lathe_api\)$' "$src/CMakeLists.txt"; then
  echo "CMakeLists.txt: lathe_cli must link only lathe_api"
  status=1
fi
[ $status -eq 0 ] && echo "Layering.CliAndPythonOnPublicApi: src/lathe/cli and python/src include only lathe.h, extend.h, tools.h"
exit $status
