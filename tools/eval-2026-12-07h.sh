#!/usr/bin/env bash
# On an H200: issue 13's table in one call: tools/search-bench.sh at default settings (the five
# seeds, strict then loose, 120 s budget each, sanitizer gate on, torch.compile once a problem).
#   OUT=$OUT bash tools/eval-2026-12-07h.sh        # carry .debs
set -uo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
out=${OUT:-$here/build-gpu/out}
mkdir -p "$out"
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,memory.total --format=csv,noheader
OUT=$out/bench bash "$here/tools/search-bench.sh" 2>&1 | grep -v "^\[" | tail -40
