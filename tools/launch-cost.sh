#!/usr/bin/env bash
# What one launch of a candidate costs inside the timed loop: each candidate file is evaluated as
# it is and with its launch of KERNEL made twice (the @launch line repeated); the difference of the
# two medians is that launch's time among the others, warm or cold as the timed runs leave it
# (a profiler times a kernel alone). Prints a table last.
#   tools/launch-cost.sh PROBLEM KERNEL CANDIDATE.cu... [-- eval options, e.g. --policy loose]
# Needs a built CLI and worker (tools/gpu-build.sh sets $cli; else KF_CLI); the doubled files go
# to $OUT (or /tmp).
set -uo pipefail
problem=${1:?usage: tools/launch-cost.sh PROBLEM KERNEL CANDIDATE.cu... [-- eval options]}
kernel=${2:?}
shift 2
files=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do files+=("$1"); shift; done
[ "${1:-}" = "--" ] && shift
cli=${KF_CLI:-${cli:?build first (tools/gpu-build.sh) or set KF_CLI}}
out=${OUT:-/tmp}
median() { "$cli" eval "$problem" "$1" --json "${@:2}" 2>/dev/null |
  python3 -c 'import json,sys; r=json.load(sys.stdin)["result"]; t=r.get("timing"); print("%.4f" % t["median_ms"] if t else r.get("verdict","?"))' 2>/dev/null || echo "?"; }
rows=()
for f in "${files[@]}"; do
  twice="$out/twice-$(basename "$f")"
  awk -v k="$kernel" '{print} $0 ~ "^// @launch " k " " {print}' "$f" >"$twice"
  once_ms=$(median "$f" "$@") twice_ms=$(median "$twice" "$@")
  launch=$(python3 -c "import sys; a,b=sys.argv[1:]; print(f'{float(b)-float(a):.4f}')" "$once_ms" "$twice_ms" 2>/dev/null || echo "?")
  rows+=("$(printf '%-40s %10s %10s %10s' "$(basename "$f")" "$once_ms" "$twice_ms" "$launch")")
done
printf '%-40s %10s %10s %10s\n' candidate "ms" "ms, twice" "$kernel"
printf '%s\n' "${rows[@]}"
