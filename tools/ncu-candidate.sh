#!/usr/bin/env bash
# Profiles one kernel of a candidate file with Nsight Compute on the GPU machine, launched the way
# the worker launches it (kernelforge-cli eval): throughput against the hardware's peaks, where
# warps stall, the memory hierarchy's traffic. Needs a built CLI and worker (tools/gpu-build.sh).
#   tools/ncu-candidate.sh PROBLEM.toml CANDIDATE.cu KERNEL [extra ncu options]
# KF_EVAL_ARGS adds options to the evaluation (--policy loose for a loose kernel).
# It skips the kernel's first two launches (the verification's) and profiles the third. Clocks are
# left alone (--clock-control none); the report lands in $OUT (or /tmp) as text.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
[ $# -ge 3 ] || { echo "usage: $0 PROBLEM.toml CANDIDATE.cu KERNEL [ncu options]" >&2; exit 2; }
problem=$1 candidate=$2 kernel=$3; shift 3
build=${KF_BUILD_DIR:-$here/build-gpu}
export KERNELFORGE_WORKER=${KERNELFORGE_WORKER:-$build/app/worker/kernelforge-worker}
out=${OUT:-/tmp}
report="$out/ncu-$(basename "$candidate" .cu)-$kernel.txt"
ncu --target-processes all --clock-control none -k "regex:^$kernel\$" -s 2 -c 1 \
    --section SpeedOfLight --section WarpStateStats --section SchedulerStats \
    --section MemoryWorkloadAnalysis --section Occupancy --section LaunchStats "$@" \
    "$build/app/cli/kernelforge-cli" eval "$problem" "$candidate" --trials 1 --timing-trials 3 ${KF_EVAL_ARGS:-} >"$report" 2>&1 || true
# The metrics, without the evaluation's own output.
grep -E '^ +[A-Z][A-Za-z /%().-]+ +[A-Za-z/%]* +[0-9.,]+$|Stall|stall|Section:' "$report" | head -90
echo "full report: $report"
