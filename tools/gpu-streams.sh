#!/usr/bin/env bash
# For a short GPU window: builds only the named test binaries (and the CLI and worker), then runs
# them in parallel streams on the one GPU, each stream's tests one after another, under one time
# limit. Timing-sensitive checks may see the other streams' load; say so when quoting a result.
#   KF_STREAMS='test_kernels_gpu,test_export_gpu test_search_gpu test_builtin_gpu=everyIdeaIsCorrect:problems/gemv' \
#     KF_STREAM_SECONDS=400 OUT=$OUT bash tools/gpu-streams.sh
# A stream is a comma-separated list; NAME=ARGS passes ARGS to the Qt Test binary, '+' between
# words; ctest:NAME runs the CTest test of that name (a second run of a binary with its own
# screen and environment, such as test_screenshots_live). KF_GPU_GUI=ON builds the workbench too
# (for its gpu tests); KF_BEFORE_STREAMS is a command run after the build, alone on the GPU,
# before the streams start. Output: one log per test under $OUT, a table last.
set -uo pipefail
streams=${KF_STREAMS:?set KF_STREAMS}
targets="kernelforge-cli kernelforge-worker"
for s in $streams; do
  IFS=, read -ra tests <<<"$s"
  for t in "${tests[@]}"; do
    case "$t" in
      ctest:test_screenshots_live) targets="$targets test_screenshots kernelforge" ;;
      ctest:*) targets="$targets ${t#ctest:}" ;;
      *) targets="$targets ${t%%=*}" ;;
    esac
  done
done
export KF_BUILD_TARGETS=$(tr ' ' '\n' <<<"$targets" | sort -u | tr '\n' ' ')
export KF_GPU_GUI=${KF_GPU_GUI:-OFF}
. "$(dirname "$0")/gpu-build.sh"
export KERNELFORGE_CLI="$cli" QT_QPA_PLATFORM=offscreen

find_binary() { find "$build/tests" -type f -perm -u+x -name "$1" | head -1; }

run_stream() {
  local stream=$1 t name args bin began rc
  IFS=, read -ra tests <<<"$stream"
  for t in "${tests[@]}"; do
    began=$(date +%s)
    if [ "${t#ctest:}" != "$t" ]; then
      name=${t#ctest:}
      log="$out/$name.log"
      (cd "$build" && ctest -R "^$name\$" -V) >"$log" 2>&1
      rc=$?
    else
      name=${t%%=*}; args=; [ "$t" != "$name" ] && args=${t#*=} && args=${args//+/ }
      bin=$(find_binary "$name")
      log="$out/$name${args:+-$(tr -c 'A-Za-z0-9_-' _ <<<"$args" | cut -c1-60)-$RANDOM}.log"
      # shellcheck disable=SC2086  # ARGS are words on purpose
      (cd "$(dirname "$bin")" && "$bin" $args) >"$log" 2>&1
      rc=$?
    fi
    echo "$t|$rc|$(( $(date +%s) - began ))|$log" >>"$out/streams.txt"
  done
}

: >"$out/streams.txt"
if [ -n "${KF_BEFORE_STREAMS:-}" ]; then
  echo "== before the streams: $KF_BEFORE_STREAMS"
  bash -c "$KF_BEFORE_STREAMS" 2>&1 | tail -40
fi
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
  grep -E "(^|: )(FAIL|XPASS|SKIP)|QFATAL|Totals:" "$log" | cut -c1-300 | head -20
  grep -E "(^|: )QINFO" "$log" | sed -E 's/^([0-9]+: )?QINFO *: *//' | cut -c1-200 | head -60
done
# The table repeats each test's totals, so that a call's last lines say what ran even when the logs
# do not come back.
printf '\n%-60s %4s %6s  %s\n' test exit sec totals
while IFS='|' read -r t rc sec log; do
  totals=$(grep -hE "Totals:" "$log" 2>/dev/null | tail -1 | sed -E 's/.*Totals: *//; s/, [0-9]+ blacklisted//; s/, [0-9]+ms$//')
  printf '%-60s %4s %6s  %s\n' "$t" "$rc" "$sec" "${totals:-no totals in the log}"
done <"$out/streams.txt"
