#!/usr/bin/env bash
# Profiles one kernel of one template-bench parameter point with Nsight Compute on the GPU machine:
# throughput against the hardware's peaks, where warps stall, the memory hierarchy's traffic.
#   tools/ncu-template.sh PROBLEM LABEL KERNEL [extra ncu options]
#   tools/ncu-template.sh conv2d "x3 64x96 s2 p16 P2" conv_wgmma
# Clocks are left alone (--clock-control none); the report lands in $OUT (or /tmp) as text.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
[ $# -ge 3 ] || { echo "usage: $0 PROBLEM LABEL KERNEL [ncu options]" >&2; exit 2; }
problem=$1 label=$2 kernel=$3; shift 3
out=${OUT:-/tmp}
report="$out/ncu-$(echo "$problem-$label-$kernel" | tr -c 'A-Za-z0-9_\n-' '_').txt"
ncu --clock-control none -k "regex:^$kernel\$" -s 2 -c 1 \
    --section SpeedOfLight --section WarpStateStats --section SchedulerStats \
    --section MemoryWorkloadAnalysis --section Occupancy --section LaunchStats \
    --section ComputeWorkloadAnalysis "$@" \
    python3 "$here/tools/template-bench.py" --only "$problem" --label "$label" --runs 3 >"$report" 2>&1 || true
# The metrics, without the benchmark's own output.
sed -n '/^  [a-z_]*(/,$p' "$report" | grep -v '^==PROF==' | head -220
echo "full report: $report"
