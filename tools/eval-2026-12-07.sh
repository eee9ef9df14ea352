#!/usr/bin/env bash
# On a GPU machine: what 2026-12-06 left untimed, each against what it is meant to beat (verified
# and timed with tools/idea-eval.sh, eager PyTorch in the same call):
# - the wgmma convolution over a prepared image (conv_wgmma_image_bf16x3 strict,
#   conv_wgmma_image_fp16 loose), since its producer keeps STAGES - 2 steps in flight (STAGES - 1
#   deadlocked), against the gathering 3xbf16 kernel, on the seed convolutions, a 3x3 convolution
#   of 128 channels, and test problems with a bias added after ReLU, average and padded max pooling;
# - pool_row_span (a window row's span in registers) against pool2d_window on the corpus's
#   stride-1 average pooling (4 GB of traffic), a stride-1 3x3 max pooling, and strided ones;
# - conv_transpose_phased (fp32, a warp's outputs in one phase) against the tensor-core and direct
#   kernels on a 3-D and a 2-D transposed convolution;
# - norm_cluster (a row held across a thread-block cluster) against the one-block norms on an
#   instance norm over maps of 65536 (2 GB read and written).
# Parts run most wanted first, so a call cut off at its limit still returns the first ones.
# Prints each table with the worst scaled error of each kernel; logs under $OUT/<part>.
# Then, in the same build, the gpu tests that cover the new ideas and the harness (tools/gpu-streams.sh,
# two streams) for what is left of KF_EVAL_SECONDS (default 560) after the parts, which stop
# starting once KF_EVAL_SECONDS less KF_TEST_SECONDS (default 170) has passed.
#   OUT=$OUT bash tools/eval-2026-12-07.sh
set -uo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
out=${OUT:-$here/build-gpu/out}
p=$here/tests/builtin/data/problems
. "$here/tools/eval-run.sh"
mkdir -p "$out"
deadline
run seeds --points 3 --match 'conv_wgmma_image*' seed/conv2d seed/conv2d_relu_maxpool
run baseline --points 1 --match 'conv_wgmma_bf16x3' seed/conv2d seed/conv2d_relu_maxpool
run loose --points 3 --policies loose --match 'conv_wgmma_image_fp16' seed/conv2d seed/conv2d_relu_maxpool
run transposed --points 2 --match 'conv_*' "$p/conv_transpose3d_scale_relu.toml" "$p/conv_transpose2d_tanh.toml"
run norms --points 2 --match 'norm_*' "$p/instance_norm.toml"
run pools --points 2 --match 'pool*' "$p/avgpool1d_stride1.toml" "$p/maxpool_stride1_padded.toml" \
  "$p/relu_maxpool.toml" "$p/avgpool_padded.toml"
run shapes --points 1 --match 'conv_wgmma_image*' "$p/conv_relu_biasadd.toml" "$p/conv_relu_avgpool.toml" \
  "$p/conv_maxpool_padded.toml" level2/conv2d_bias_relu
run wide --points 2 --match 'conv_wgmma_image*' level1/conv2d_3x3
a=everyIdeaIsCorrect:problems
gpu_tests "test_kernels_gpu,test_search_gpu \
  test_builtin_gpu=$a/avgpool1d_stride1+$a/maxpool_stride1_padded+$a/instance_norm+$a/conv_transpose2d_tanh"
