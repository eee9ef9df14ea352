#!/usr/bin/env bash
# For a short GPU window: builds only the named test binaries (and the CLI and worker), then runs
# them in parallel streams on the one GPU, each stream's tests one after another, under one time
# limit. Timing-sensitive checks may see the other streams' load; say so when quoting a result.
#   KF_STREAMS='test_kernels_gpu,test_export_gpu test_search_gpu test_builtin_gpu=everyIdeaIsCorrect:problems/gemv' \
#     KF_STREAM_SECONDS=400 OUT=$OUT bash tools/gpu-streams.sh
# A stream is a comma-separated list; NAME=ARGS passes ARGS to the Qt Test binary, '+' between
# words. Output: one log per test under $OUT, a table last.
set -uo pipefail
streams=${KF_STREAMS:?set KF_STREAMS}
targets="kernelforge-cli kernelforge-worker"
for s in $streams; do
  IFS=, read -ra tests <<<"$s"
  for t in "${tests[@]}"; do targets="$targets ${t%%=*}"; done
done
export KF_BUILD_TARGETS=$(tr ' ' '\n' <<<"$targets" | sort -u | tr '\n' ' ')
export KF_GPU_GUI=OFF
. "$(dirname "$0")/gpu-build.sh"
export KERNELFORGE_CLI="$cli" QT_QPA_PLATFORM=offscreen

find_binary() { find "$build/tests" -type f -perm -u+x -name "$1" | head -1; }

run_stream() {
  local stream=$1 t name args bin began rc
  IFS=, read -ra tests <<<"$stream"
  for t in "${tests[@]}"; do
    name=${t%%=*}; args=; [ "$t" != "$name" ] && args=${t#*=} && args=${args//+/ }
    bin=$(find_binary "$name")
    log="$out/$name${args:+-$(tr -c 'A-Za-z0-9_-' _ <<<"$args" | cut -c1-60)-$RANDOM}.log"
    began=$(date +%s)
    # shellcheck disable=SC2086  # ARGS are words on purpose
    (cd "$(dirname "$bin")" && "$bin" $args) >"$log" 2>&1
    rc=$?
    echo "$t|$rc|$(( $(date +%s) - began ))|$log" >>"$out/streams.txt"
  done
}

: >"$out/streams.txt"
pids=()
for s in $streams; do
  run_stream "$s" &
  pids+=($!)
done
deadline=$(( $(date +%s) + ${KF_STREAM_SECONDS:-400} ))
while [ "$(jobs -rp | wc -l)" -gt 0 ] && [ "$(date +%s)" -lt "$deadline" ]; do sleep 2; done
if [ "$(jobs -rp | wc -l)" -gt 0 ]; then
  echo "time limit: stopping what still runs"
  pkill -TERM -P "$$" 2>/dev/null; sleep 1; pkill -KILL -f "$build/tests" 2>/dev/null
fi
wait 2>/dev/null

for log in "$out"/test_*.log; do
  echo "== $(basename "$log")"
  grep -E "^(FAIL|XPASS|SKIP)|QFATAL|Totals:" "$log" | cut -c1-300 | head -20
  grep -E "^QINFO" "$log" | sed -E 's/^QINFO *: *//' | cut -c1-200 | head -60
done
printf '\n%-60s %4s %6s\n' test exit sec
while IFS='|' read -r t rc sec _; do printf '%-60s %4s %6s\n' "$t" "$rc" "$sec"; done <"$out/streams.txt"
