#!/usr/bin/env bash
# On a GPU machine with PyTorch: builds KernelForge (tools/gpu-build.sh), imports KernelBench-style
# files with tools/kernelbench-import.py and runs `kernelforge-cli suite` on them, on every GPU,
# with a small budget per problem; prints the report.
#   tools/kernelbench-suite.sh [--budget SECONDS] [--files DIR] [--fresh] [suite options...]
# Default: tests/data/kernelbench, 20 s a problem. The import and the suite's state live in
# build-gpu/kernelbench, so running the script again (after a time-out, say) resumes the suite
# instead of starting over; --fresh starts over. Reports and logs are copied to $OUT.
# Fill .debs/ first on a Debian 12 machine: tools/fetch-debs.sh
set -uo pipefail
budget=20
files=""
fresh=0
extra=()
while [ $# -gt 0 ]; do
  case "$1" in
    --budget) budget=$2; shift ;;
    --files) files=$2; shift ;;
    --fresh) fresh=1 ;;
    *) extra+=("$1") ;;
  esac
  shift
done
KF_BUILD_TARGETS="kernelforge-cli kernelforge-worker"
. "$(dirname "$0")/gpu-build.sh"
files=${files:-$here/tests/data/kernelbench}
work=${KF_KERNELBENCH_DIR:-$here/build-gpu/kernelbench}
[ "$fresh" = 1 ] && rm -rf "$work"
mkdir -p "$work"

if [ ! -f "$work/imported" ]; then
  start=$(date +%s)
  python3 "$here/tools/kernelbench-import.py" "$files" -o "$work/problems" 2>&1 | tee "$out/import.log"
  echo "import: $(( $(date +%s) - start )) s"
  touch "$work/imported"
fi

gpus=$(nvidia-smi --query-gpu=index --format=csv,noheader | paste -sd, -)
start=$(date +%s)
"$cli" suite "$work/problems" --out "$work/suite" --budget-per-problem "$budget" --gpus "$gpus" "${extra[@]}" \
  2>&1 | tee "$out/suite.log"
status=${PIPESTATUS[0]}
echo "suite: exit $status after $(( $(date +%s) - start )) s"
cp "$work/suite/report.md" "$work/suite/report.json" "$work/suite/suite.json" "$out/" 2>/dev/null
cat "$work/suite/report.md" 2>/dev/null
exit "$status"
