#!/usr/bin/env bash
# On a GPU machine: what 2026-12-07 left untimed, against what it is meant to beat (verified and
# timed with tools/idea-eval.sh, eager PyTorch in the same call):
# - normalize_rows_cluster (a row held across a thread-block cluster, read once) against
#   normalize_rows and normalize_split on the test L2 and L1 norms (1 GB each);
# - the corpus's 20_l2_norm (rows of 512 KB, 4.3 GB; lost to torch.compile by 2 % at 7e1383e) and
#   26_sum_all and 35_scale_by_scalar (torch.compile not timed at 7e1383e: out of memory beside a
#   warm worker, and a number among the inputs), searched as the suite searches them;
# - then, in the same build, the gpu tests of the new idea and the harness (tools/gpu-streams.sh).
# Parts stop starting once KF_EVAL_SECONDS (default 560) less KF_TEST_SECONDS (170) has passed.
#   OUT=$OUT bash tools/eval-2026-12-08.sh        # carry .debs
set -uo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
out=${OUT:-$here/build-gpu/out}
p=$here/tests/builtin/data/problems
. "$here/tools/eval-run.sh"
mkdir -p "$out"
deadline
run normalize --points 2 --match 'normalize_*' "$p/l2_norm.toml" "$p/l1_norm.toml"
if [ "$(date +%s)" -lt "$KF_EVAL_UNTIL" ]; then
  echo "== corpus: 20_l2_norm, 26_sum_all, 35_scale_by_scalar"
  OUT=$out/corpus timeout $(( KF_EVAL_UNTIL - $(date +%s) + 60 )) bash "$here/tools/kernelbench-suite.sh" --budget 30 \
    --stop-after $(( KF_EVAL_UNTIL - $(date +%s) + 50 )) --only 20_l2_norm,26_sum_all,35_scale_by_scalar >"$out/corpus.log" 2>&1
  grep -E "^\| (20|26|35)_" "$out/corpus/tuned-report.md" 2>/dev/null || tail -5 "$out/corpus.log"
fi
a=everyIdeaIsCorrect:problems
gpu_tests "test_kernels_gpu test_builtin_gpu=$a/l2_norm+$a/l1_norm"
