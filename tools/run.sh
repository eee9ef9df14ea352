#!/usr/bin/env bash
# Sets everything up, then runs the main job: evaluates the naive softmax kernel against the seed
# softmax problem on this machine's GPU (or says plainly that it needs an NVIDIA GPU).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
"$here/tools/setup.sh" "$@"
build=${KF_BUILD_DIR:-$here/build}
"$build/app/cli/kernelforge-cli" problems
exec "$build/app/cli/kernelforge-cli" eval softmax "$here/tests/kernels/naive/softmax.cu"
