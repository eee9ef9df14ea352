#!/usr/bin/env bash
# On a GPU machine, one call of under ten minutes: what 2026-12-07 left untimed (tools/idea-eval.sh:
# verified, every timed run checked, eager PyTorch in the same call):
# - norm_grid with the row's shift and evict-last affine loads, against the two-read kernels, on the
#   seed LayerNorm and the test GroupNorm;
# - normalize_rows_cluster against normalize_rows and normalize_split on the test L2 and L1 norms;
# - the corpus's 20_l2_norm searched as the suite searches it (30 s);
# - then, in the same build, every idea of those four problems checked by test_builtin_gpu, and
#   test_kernels_gpu. Parts stop starting once KF_EVAL_SECONDS (default 560) less KF_TEST_SECONDS
#   (170) has passed.
#   OUT=$OUT bash tools/eval-2026-12-07c.sh        # carry .debs
set -uo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
. "$here/tools/eval-run.sh" # sets out and p
deadline
run norm --points 2 --match 'norm_[gs]*' seed/layernorm "$p/group_norm.toml"
run normalize --points 2 --match 'normalize_*' "$p/l2_norm.toml" "$p/l1_norm.toml"
if [ "$(date +%s)" -lt "$KF_EVAL_UNTIL" ]; then
  echo "== corpus: 20_l2_norm"
  OUT=$out/corpus timeout $(( KF_EVAL_UNTIL - $(date +%s) + 60 )) bash "$here/tools/kernelbench-suite.sh" --budget 30 \
    --stop-after $(( KF_EVAL_UNTIL - $(date +%s) + 50 )) --only 20_l2_norm >"$out/corpus.log" 2>&1
  grep -hE "^\| 20_" "$out/corpus/"*-report.md 2>/dev/null || tail -5 "$out/corpus.log"
fi
a=everyIdeaIsCorrect:problems
gpu_tests "test_kernels_gpu test_builtin_gpu=$a/group_norm+$a/l2_norm+$a/l1_norm"
