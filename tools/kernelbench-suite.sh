#!/usr/bin/env bash
# On a GPU machine with PyTorch: builds KernelForge (tools/gpu-build.sh), imports KernelBench-style
# files with tools/kernelbench-import.py and runs `kernelforge-cli suite` on them, on every GPU,
# with a small budget per problem; prints the report.
#   tools/kernelbench-suite.sh [--budget SECONDS] [--files DIR] [--stop-after SECONDS] [--fresh]
#                              [suite options, e.g. --torch-compile off]
# Default: tests/data/kernelbench, 20 s a problem. The import and the suite's state live in
# build-gpu/kernelbench, so running the script again resumes the suite instead of starting over;
# --fresh starts over. --stop-after stops the suite as Ctrl-C would after that many seconds (under
# a limit on the command's time, so that the reports are still written and copied); the next run
# goes on from there. Reports and logs are copied to $OUT.
# Fill .debs/ first on a Debian 12 machine: tools/fetch-debs.sh
set -uo pipefail
budget=20
files=""
fresh=0
stop_after=0
extra=()
while [ $# -gt 0 ]; do
  case "$1" in
    --budget) budget=$2; shift ;;
    --files) files=$2; shift ;;
    --fresh) fresh=1 ;;
    --stop-after) stop_after=$2; shift ;;
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
  [ -n "$(find "$work/problems" -name '*.toml' 2>/dev/null | head -1)" ] && touch "$work/imported"
fi

gpus=$(nvidia-smi --query-gpu=index --format=csv,noheader | paste -sd, -)
start=$(date +%s)
limit=()
[ "$stop_after" -gt 0 ] && limit=(timeout --preserve-status -s TERM "$stop_after")
"${limit[@]}" "$cli" suite "$work/problems" --out "$work/suite" --budget-per-problem "$budget" --gpus "$gpus" "${extra[@]}" \
  2>&1 | tee "$out/suite.log"
status=${PIPESTATUS[0]}
echo "suite: exit $status after $(( $(date +%s) - start )) s"
[ "$status" = 130 ] && echo "stopped before the end: run the same command again to go on"
cp "$work/suite/report.md" "$work/suite/report.json" "$work/suite/suite.json" "$out/" 2>/dev/null
cat "$work/suite/report.md" 2>/dev/null
exit "$status"
