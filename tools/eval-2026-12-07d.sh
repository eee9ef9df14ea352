#!/usr/bin/env bash
# On a GPU machine, one call of under ten minutes: the wgmma products with the operand pass inside
# the product kernel (OVERLAP=1) on the seed matmul, strict and loose (tools/idea-eval.sh: verified,
# every timed run checked, eager PyTorch in the same call), beside the same products with the pass
# as a launch of its own (OVERLAP=0), rendered before the call into eval-inputs/ as
# POLICY-NAME.cu; then the gpu tests of every GEMM idea on the GEMM test problems (the first points
# have the pass inside; chosenPointsAreCorrect runs it as a launch of its own).
# Parts stop starting once KF_EVAL_SECONDS (default 560) less KF_TEST_SECONDS (170) has passed.
#   OUT=$OUT bash tools/eval-2026-12-07d.sh        # carry .debs
set -uo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
out=${OUT:-$here/build-gpu/out}
. "$here/tools/eval-run.sh"
mkdir -p "$out"
deadline
run gemm --points 2 --policies "strict loose" --match 'gemm_wgmma_*' seed/matmul
for f in "$here"/eval-inputs/*.cu; do
  [ -f "$f" ] || continue
  [ "$(date +%s)" -lt "$KF_EVAL_UNTIL" ] || break
  name=$(basename "$f" .cu)
  "$here/build-gpu/app/cli/kernelforge-cli" eval seed/matmul "$f" --policy "${name%%-*}" >"$out/eval-$name.log" 2>&1
  echo "== $name ($(sed -n 2p "$f" | sed 's/.*: //'))"
  grep -E "^(verdict|time)" "$out/eval-$name.log" || tail -3 "$out/eval-$name.log"
done
p=everyIdeaIsCorrect:problems
l=looseIdeasAreCorrect
gpu_tests "test_builtin_gpu=$p/matmul_transposed_a+$p/bmm_transposed_both+$p/matmul_large_k+$p/linear_small_batch+$p/einsum_tensor_matrix test_builtin_gpu=$l+chosenPointsAreCorrect"
