#!/usr/bin/env bash
# On a GPU machine: the kernels of 2026-12-06 that no GPU has run yet, each against what it is
# meant to beat (verified and timed with tools/idea-eval.sh, eager PyTorch in the same call):
# - the wgmma convolution over a prepared image (conv_wgmma_image_bf16x3 strict,
#   conv_wgmma_image_fp16 loose) against the gathering 3xbf16 kernel, on the seed convolutions, a
#   3x3 convolution of 128 channels, and test problems with a bias added after ReLU, average and
#   padded max pooling;
# - gemm_mma_tf32x3's 32-column tile against the other products on a tall matrix times a narrow
#   one (131072x4096 @ 4096x32);
# - normalize_columns_held against normalize_columns on an RMSNorm over 64 channels (1 GB).
# Prints each table with the worst scaled error of each kernel; logs under $OUT/<part>.
#   OUT=$OUT bash tools/eval-2026-12-06.sh
set -uo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
out=${OUT:-$here/build-gpu/out}
p=$here/tests/builtin/data/problems
. "$here/tools/eval-run.sh"
mkdir -p "$out"
run seeds --points 4 --match 'conv_wgmma_image*' seed/conv2d seed/conv2d_relu_maxpool
run baseline --points 1 --match 'conv_wgmma_bf16x3' seed/conv2d seed/conv2d_relu_maxpool
run loose --points 4 --policies loose --match 'conv_wgmma_image_fp16' seed/conv2d seed/conv2d_relu_maxpool
run wide --points 2 --match 'conv_wgmma_image*' level1/conv2d_3x3
run shapes --points 1 --match 'conv_wgmma_image*' "$p/conv_relu_biasadd.toml" "$p/conv_relu_avgpool.toml" \
  "$p/conv_maxpool_padded.toml" level2/conv2d_bias_relu
run narrow --points 4 --match 'gemm_*' "$p/matmul_narrow.toml"
run held --points 2 --match 'normalize_columns*' "$p/rms_norm_channels.toml"
