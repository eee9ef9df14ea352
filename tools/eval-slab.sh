#!/usr/bin/env bash
# On a GPU machine: the wgmma convolution over a slab of the input in shared memory
# (conv_wgmma_slab_bf16x3, conv_wgmma_slab_fp16) on the seed
# convolutions, strict and loose, and on test convolutions of other shapes (1-D, dilated, padded
# pooling, odd widths), verified and timed with tools/idea-eval.sh (eager PyTorch in the same call);
# then, in the same build, the GPU tests of the chosen points (slab rows among them) and the kernels.
#   OUT=$OUT bash tools/eval-slab.sh        # carry .debs
set -uo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
out=${OUT:-$here/build-gpu/out}
p=$here/tests/builtin/data/problems
. "$here/tools/eval-run.sh"
mkdir -p "$out"
deadline
run seed-strict --points 3 --match 'conv_wgmma_slab*' seed/conv2d seed/conv2d_relu_maxpool
run seed-loose --policies loose --points 5 --match 'conv_wgmma_slab_fp16*' seed/conv2d seed/conv2d_relu_maxpool
run shapes --policies "strict loose" --points 1 --match 'conv_wgmma_slab*' "$p/conv1d_dilated_relu.toml" \
  "$p/conv_maxpool_padded.toml" "$p/conv_avgpool_sigmoid_sum.toml" "$p/conv1d_same.toml"
gpu_tests "test_builtin_gpu=chosenPointsAreCorrect test_kernels_gpu"
tar -czf "$out/eval-slab.tgz" -C "$out" --exclude eval-slab.tgz . 2>/dev/null
