#!/usr/bin/env bash
# On a GPU machine, one call of under ten minutes: norm_grid (a long row held across the GPU's
# SMs, read once) against the two-read kernels it would replace on the seed LayerNorm and a test
# GroupNorm (tools/idea-eval.sh: verified, every timed run checked, eager PyTorch in the same call);
# then the seed LayerNorm searched at default settings (tools/search-bench.sh, strict, 120 s budget,
# torch.compile in the same run) and the held-out 110_groupnorm as the suite searches it (30 s);
# then every idea of the test GroupNorm checked by test_builtin_gpu. Parts stop starting once
# KF_EVAL_SECONDS (default 560) less KF_TEST_SECONDS (here 110) has passed.
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
if [ "$(date +%s)" -lt "$KF_EVAL_UNTIL" ]; then
  OUT=$out/bench bash "$here/tools/search-bench.sh" --policies strict layernorm >"$out/bench-layernorm.log" 2>&1
  tail -3 "$out/bench-layernorm.log"
fi
if [ "$(date +%s)" -lt "$KF_EVAL_UNTIL" ]; then
  echo "== corpus: 110_groupnorm"
  OUT=$out/corpus timeout $(( KF_EVAL_UNTIL - $(date +%s) + 60 )) bash "$here/tools/kernelbench-suite.sh" --budget 30 \
    --stop-after $(( KF_EVAL_UNTIL - $(date +%s) + 50 )) --only 110_groupnorm >"$out/corpus.log" 2>&1
  grep -hE "^\| 110_" "$out/corpus/"*-report.md 2>/dev/null || tail -5 "$out/corpus.log"
fi
gpu_tests "test_builtin_gpu=everyIdeaIsCorrect:problems/group_norm"
