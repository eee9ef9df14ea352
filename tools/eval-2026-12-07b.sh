#!/usr/bin/env bash
# On a GPU machine, one call of under ten minutes: norm_grid (a long row held across the GPU's
# SMs, read once) against the two-read kernels it would replace on the seed LayerNorm and a test
# GroupNorm (tools/idea-eval.sh: verified, every timed run checked, eager PyTorch in the same call);
# then the seed LayerNorm and softmax searched at default settings (tools/search-bench.sh, strict,
# 120 s budgets, torch.compile in the same run); then every GroupNorm idea checked by
# test_builtin_gpu. Parts stop starting once KF_EVAL_SECONDS (default 560) less KF_TEST_SECONDS
# (here 110) has passed.
#   OUT=$OUT bash tools/eval-2026-12-07b.sh     # carry .debs
set -uo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
out=${OUT:-$here/build-gpu/out}
p=$here/tests/builtin/data/problems
. "$here/tools/eval-run.sh"
mkdir -p "$out"
KF_TEST_SECONDS=${KF_TEST_SECONDS:-110}
deadline
run norm --points 2 --match 'norm_[gs]*' seed/layernorm "$p/group_norm.toml"
for seed in layernorm softmax; do
  [ "$(date +%s)" -lt "$KF_EVAL_UNTIL" ] || { echo "== search-bench $seed: skipped (KF_EVAL_UNTIL passed)"; continue; }
  OUT=$out/bench bash "$here/tools/search-bench.sh" --policies strict $seed >"$out/bench-$seed.log" 2>&1
  tail -3 "$out/bench-$seed.log"
done
gpu_tests "test_builtin_gpu=everyIdeaIsCorrect:problems/group_norm"
