#!/bin/sh
# Stands in for a Python with PyTorch and a GPU in the suite's tests (KERNELFORGE_PYTHON): the
# suite's probe (`-c ...`) succeeds, and `compile-baseline.py --serve` answers each problem path
# with a torch.compile time of 1.5 ms. KF_FAKE_PYTHON_START_MS and KF_FAKE_PYTHON_MS are how long
# it takes to start and to answer; KF_FAKE_PYTHON_LOG gets "start PID" and "problem PID PATH".
[ "$1" = "-c" ] && exit 0
log=${KF_FAKE_PYTHON_LOG:-/dev/null}
ms() { sleep "$(awk "BEGIN { print ${1:-0} / 1000 }")"; }
echo "start $$" >> "$log"
ms "${KF_FAKE_PYTHON_START_MS:-0}"
while IFS= read -r path; do
  echo "problem $$ $path" >> "$log"
  ms "${KF_FAKE_PYTHON_MS:-0}"
  echo '{"problem": "fake", "compile_ms": 1.5}'
done
