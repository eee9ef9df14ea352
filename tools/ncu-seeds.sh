#!/usr/bin/env bash
# Profiles candidate kernels of the seed problems with Nsight Compute (tools/ncu-candidate.sh: the
# third launch, as the worker launches it) and prints one line a kernel: its time and its
# throughput against the hardware's peaks (SM, memory, DRAM, L1, L2), how often a scheduler had a
# warp to issue, registers. Used to say what limits a search's best kernel.
#   tools/ncu-seeds.sh DIR
# DIR holds PROBLEM-POLICY.cu files (PROBLEM a seed problem, problems/seed/PROBLEM.toml; POLICY
# strict or loose), e.g. the best candidates of tools/search-bench.sh's sessions. The set-up
# kernels (operand re-layout, weight tiles, the pooling fill) are left out. Needs a built CLI and
# worker (tools/gpu-build.sh); the full reports land in $OUT (or /tmp).
set -uo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
dir=${1:?usage: tools/ncu-seeds.sh DIR}
out=${OUT:-/tmp}
# A metric's value from an ncu text report: "    Name    unit    value".
metric() { grep -E "^ +$2 +" "$1" | head -1 | awk '{print $NF}'; }
printf '%-28s %-16s %12s %6s %6s %6s %6s %6s %7s %5s\n' candidate kernel time SM% mem% DRAM% L1% L2% issue% regs
for f in "$dir"/*.cu; do
  name=$(basename "$f" .cu)
  problem=${name%-*} policy=${name##*-}
  for kernel in $(grep -oE '^// @launch [A-Za-z_0-9]+' "$f" | awk '{print $3}'); do
    case "$kernel" in split_tiles | conv_prepare | pool_fill) continue ;; esac
    KF_EVAL_ARGS="--policy $policy" OUT=$out bash "$here/tools/ncu-candidate.sh" \
      "$here/problems/seed/$problem.toml" "$f" "$kernel" >/dev/null 2>&1
    r="$out/ncu-$name-$kernel.txt"
    duration=$(grep -E '^ +Duration +' "$r" | head -1 | awk '{print $(NF) " " $(NF-1)}')
    printf '%-28s %-16s %12s %6s %6s %6s %6s %6s %7s %5s\n' "$name" "$kernel" "${duration:-?}" \
      "$(metric "$r" 'Compute \(SM\) Throughput')" "$(metric "$r" 'Memory Throughput')" \
      "$(metric "$r" 'DRAM Throughput')" "$(metric "$r" 'L1/TEX Cache Throughput')" \
      "$(metric "$r" 'L2 Cache Throughput')" "$(metric "$r" 'One or More Eligible')" \
      "$(metric "$r" 'Registers Per Thread')"
  done
done
