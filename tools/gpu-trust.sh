#!/usr/bin/env bash
# On a GPU machine: the checks behind "every timed run is a verified run" (docs/verification.md).
# Builds the CLI, the worker and the worker's gpu tests (no GUI), runs test_kernels_gpu (every test
# kernel at the seed size and the small variant, the cost of checked timing, a memorised-answers
# kernel, a 6.4 GB input), then re-evaluates the shipped sessions' best kernels with checked timing
# and prints a table of recorded and new times and what the checks cost.
#   tools/gpu-trust.sh [--skip-tests] [SESSION...]
set -uo pipefail
skip_tests=0
if [ "${1:-}" = "--skip-tests" ]; then skip_tests=1; shift; fi
export KF_GPU_GUI=OFF
export KF_BUILD_TARGETS=${KF_BUILD_TARGETS:-"kernelforge-cli kernelforge-worker test_kernels_gpu"}
. "$(dirname "$0")/gpu-build.sh"
sessions=("$@")
if [ ${#sessions[@]} -eq 0 ]; then
  for p in matmul conv2d conv2d_relu_maxpool softmax layernorm; do sessions+=("$here/resources/examples/$p.kfsession"); done
fi
if [ $skip_tests = 0 ]; then
  (cd "$build" && timeout "${KF_GPU_TEST_SECONDS:-1800}" ctest -R "^test_kernels_gpu$" -V --timeout 1800) >"$out/kernels-gpu.log" 2>&1
  echo "test_kernels_gpu: exit $?"
  grep -E "^[0-9]+: (PASS|FAIL|SKIP|QINFO|XFAIL)|Totals:" "$out/kernels-gpu.log" | sed -E 's/^[0-9]+: //' | cut -c1-260
fi
python3 "$here/tools/trust-check.py" "$cli" "${sessions[@]}"
