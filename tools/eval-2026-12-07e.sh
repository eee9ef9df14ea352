#!/usr/bin/env bash
# On a GPU machine, one call of under ten minutes: the held-out GEMM-like files at the tip, searched
# as the suite searches them (30 s, strict, torch.compile in the same run: 109_skinny_k_matmul,
# 111_linear_sigmoid_scale_sum, 112_conv_relu_avgpool, 113_bmm_tanh_l2norm); then every GEMM idea's
# first points on 109 (a rank-32 product writing 1 GB: its best kernel ran at 68 % of the write
# floor), verified and timed with tools/idea-eval.sh, to see which product reaches the floor.
# Parts stop starting once KF_EVAL_SECONDS (default 560) less KF_TEST_SECONDS (here 0) has passed.
#   OUT=$OUT bash tools/eval-2026-12-07e.sh        # carry .debs
set -uo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
. "$here/tools/eval-run.sh" # sets out
KF_TEST_SECONDS=${KF_TEST_SECONDS:-0}
deadline
files=109_skinny_k_matmul,111_linear_sigmoid_scale_sum,112_conv_relu_avgpool,113_bmm_tanh_l2norm
echo "== corpus: $files"
OUT=$out/corpus timeout $(( KF_EVAL_UNTIL - $(date +%s) - 60 )) bash "$here/tools/kernelbench-suite.sh" --budget 30 \
  --stop-after $(( KF_EVAL_UNTIL - $(date +%s) - 70 )) --only "$files" >"$out/corpus.log" 2>&1
grep -hE "^\| 1[01][0-9]_" "$out/corpus/"*-report.md 2>/dev/null || tail -5 "$out/corpus.log"
skinny=$(find "$here/build-gpu/kernelbench-only" -name 109_skinny_k_matmul.toml | head -1)
[ -n "$skinny" ] && run skinny --points 3 "$skinny"
