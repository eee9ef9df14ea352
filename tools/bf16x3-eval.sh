#!/usr/bin/env bash
# On a GPU machine: the 3xbf16 products against 3xTF32 (verified and timed with tools/idea-eval.sh,
# eager PyTorch in the same call), on the seed matmul and convolutions, on products whose error a
# tail or a long K magnifies, and on a 3x3 convolution of 64 channels; then the order of
# reduce_grid's loads (INTERLEAVE 0 or 1) on a 2 GB sum, and the loose convolutions' first points
# (two K steps of the gather in flight) on pooled and transposed test problems. Prints each
# table; logs under $OUT/<part>.
#   OUT=$OUT bash tools/bf16x3-eval.sh
set -uo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
out=${OUT:-$here/build-gpu/out}
p=$here/tests/builtin/data/problems
. "$here/tools/eval-run.sh"
mkdir -p "$out"
run matmul --points 3 --match 'gemm_wgmma_*' seed/matmul
run conv --points 2 --match 'conv_wgmma*' seed/conv2d seed/conv2d_relu_maxpool level1/conv2d_3x3
run tails --points 1 --match 'gemm_wgmma_bf16x3*' "$p/matmul_large_k.toml" "$p/bmm_tanh_l2norm.toml" \
  "$p/matmul_two_products.toml" "$p/linear_sigmoid_sum.toml" "$p/matmul_mish_mish.toml"
run convs --points 1 --match 'conv_wgmma_bf16x3*' "$p/conv3d_relu.toml" "$p/conv1d_same.toml" \
  "$p/conv_groupnorm.toml" "$p/conv_relu_avgpool.toml" "$p/conv2d_dilated_strided.toml"
run reduce --points 4 --match 'reduce_grid*' "$p/sum_all.toml" "$p/mse_loss.toml"
run loose --points 2 --policies loose --match 'conv_wgmma_regs*' "$p/conv_maxpool_padded.toml" \
  "$p/conv_relu_avgpool.toml" "$p/conv_transpose2d_tanh.toml"
