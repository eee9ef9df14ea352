#!/usr/bin/env bash
# On a GPU machine: the wgmma GEMMs that read A as fp32 and round it in registers
# (gemm_wgmma_tf32x3_regs, gemm_wgmma_bf16x3_regs, gemm_wgmma_fp16_regs) against the re-laid forms
# (gemm_wgmma_tf32x3, gemm_wgmma_bf16x3, gemm_wgmma_fp16) on the seed matmul, strict and loose, and on test GEMMs with a tail or a batch,
# verified and timed with tools/idea-eval.sh (eager PyTorch in the same call); then, in the same
# build, the GPU tests of the chosen points (ragged sizes among them), the loose GEMM ideas and the
# strict ones on two test GEMMs.
#   OUT=$OUT bash tools/eval-aregs.sh        # carry .debs
set -uo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
out=${OUT:-$here/build-gpu/out}
p=$here/tests/builtin/data/problems
. "$here/tools/eval-run.sh"
mkdir -p "$out"
deadline
run seed-strict --points 2 --match 'gemm_wgmma_*3*' seed/matmul
run seed-loose --policies loose --points 4 --match 'gemm_wgmma_fp16*' seed/matmul
run tests-strict --points 1 --match 'gemm_wgmma_*3*' "$p/linear_sigmoid_sum.toml" "$p/bmm_tanh_l2norm.toml" \
  "$p/matmul_two_products.toml"
gpu_tests "test_builtin_gpu=chosenPointsAreCorrect test_builtin_gpu=looseIdeasAreCorrect \
test_builtin_gpu=everyIdeaIsCorrect:problems/matmul_large_k+everyIdeaIsCorrect:problems/linear_small_batch"
tar -czf "$out/eval-aregs.tgz" -C "$out" --exclude eval-aregs.tgz . 2>/dev/null
