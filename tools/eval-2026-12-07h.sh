#!/usr/bin/env bash
# On an H200: the L2 set-aside experiment on the seed LayerNorm (tools/eval-2026-12-07g.sh), then
# the strict half of issue 13's table at default settings (tools/search-bench.sh, 120 s budget, gate
# on) for the seeds that do not wait on that experiment. The loose half and LayerNorm run in the
# next call; tools/search-bench-table.py tables the merged folders as one.
#   OUT=$OUT bash tools/eval-2026-12-07h.sh        # carry .debs
set -uo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
out=${OUT:-$here/build-gpu/out}
mkdir -p "$out"
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,memory.total --format=csv,noheader
OUT=$out/l2 bash "$here/tools/eval-2026-12-07g.sh" 2>&1 | tail -8
grep -h "KF_L2_SET_ASIDE" "$out"/l2/*.log | sort -u | head -3
OUT=$out/bench bash "$here/tools/search-bench.sh" --policies strict matmul conv2d conv2d_relu_maxpool softmax 2>&1 \
  | grep -v "^\[" | tail -30
