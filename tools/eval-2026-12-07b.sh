#!/usr/bin/env bash
# On a GPU machine, in two calls of under ten minutes: the seed table of issue 13 at default
# settings (tools/search-bench.sh: five seeds, strict and loose, 120 s budgets, torch.compile in the
# same run), with norm_grid (a long row held across the GPU's SMs, read once) measured first
# against the two-read kernels it would replace on LayerNorm and GroupNorm.
#   OUT=$OUT bash tools/eval-2026-12-07b.sh 1    # norm_grid, then matmul and conv2d   (carry .debs)
#   OUT=$OUT bash tools/eval-2026-12-07b.sh 2    # conv2d + ReLU + max-pool, softmax, layernorm
# Merge the two calls' returned folders into one and print the table again with
#   python3 tools/search-bench-table.py MERGED 120
set -uo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
out=${OUT:-$here/build-gpu/out}
p=$here/tests/builtin/data/problems
. "$here/tools/eval-run.sh"
mkdir -p "$out"
case "${1:-}" in
  1)
    run norm --points 2 --match 'norm_[gs]*' seed/layernorm "$p/group_norm.toml"
    OUT=$out/bench bash "$here/tools/search-bench.sh" matmul conv2d 2>&1 | tail -12 ;;
  2)
    OUT=$out/bench bash "$here/tools/search-bench.sh" conv2d_relu_maxpool softmax layernorm 2>&1 | tail -14 ;;
  *) echo "usage: eval-2026-12-07b.sh 1|2" >&2; exit 2 ;;
esac
