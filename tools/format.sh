#!/usr/bin/env bash
# Formats the C++ sources of core/, ui/, app/ and tests/ with .clang-format (clang-format 14 or
# newer). --check changes nothing and lists the files that differ (exit 1 when any does).
# The kernel templates (.cu, .cuh) and test kernels are left as written: they hold {{NAME}}
# placeholders and layouts that line up with PTX.
set -euo pipefail
cd "$(dirname "$0")/.."
fmt=${CLANG_FORMAT:-clang-format}
command -v "$fmt" >/dev/null || { echo "format.sh: $fmt not found (apt install clang-format)" >&2; exit 2; }
mapfile -t files < <(git ls-files 'core/*.cpp' 'core/*.h' 'ui/*.cpp' 'ui/*.h' 'app/*.cpp' 'app/*.h' 'tests/*.cpp' 'tests/*.h')
if [ "${1:-}" = --check ]; then
  bad=0
  for f in "${files[@]}"; do
    if ! "$fmt" --style=file "$f" | cmp -s - "$f"; then echo "$f"; bad=1; fi
  done
  exit $bad
fi
"$fmt" -i --style=file "${files[@]}"
