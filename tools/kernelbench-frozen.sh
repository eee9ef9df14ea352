#!/usr/bin/env bash
# On a GPU machine: tools/kernelbench-suite.sh run from the source of one fixed commit, so that a
# corpus longer than one session's device time is searched at that commit over several sessions
# while the tree moves on. The commit travels as .state/src.tar.gz (carry .state and .debs):
#   git archive --format=tar.gz -o .state/src.tar.gz COMMIT && echo COMMIT > .state/COMMIT
# The script unpacks it once per machine (a warm machine keeps its build and import), runs the
# suite with --state .state plus the options given here, and leaves in $OUT the suite's reports
# and PART-suite.json states and results.tgz (every file the suite wrote); the states also while it
# runs, so a call cut off early still returns them. Copy the returned PART-suite.json files into
# .state/ before the next call: it resumes from them. Give --stop-after at most the device time
# left less a minute, so the call ends with its reports.
#   OUT=$OUT bash tools/kernelbench-frozen.sh --budget 30 --stop-after 540
set -uo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
state=$here/.state
out=${OUT:?set OUT}
[ -f "$state/src.tar.gz" ] || { echo "kernelbench-frozen: no $state/src.tar.gz (see the header)" >&2; exit 2; }
commit=$(cat "$state/COMMIT" 2>/dev/null || echo unknown)
src=/tmp/kernelforge-$commit
if [ ! -f "$src/.unpacked" ]; then
  rm -rf "$src" && mkdir -p "$src" && tar -xzf "$state/src.tar.gz" -C "$src" || exit 1
  [ -d "$here/.debs" ] && ln -s "$here/.debs" "$src/.debs"
  touch "$src/.unpacked"
fi
echo "kernelbench-frozen: commit $commit"
work=/tmp/kernelbench-frozen-out
mkdir -p "$work"
# The suite saves its state after every problem. A copy in $OUT every 15 s comes back even when
# the call is cut off (the device's time running out before --stop-after), so little is searched
# twice; the suite writes its state by renaming a whole file, so no copy is half written.
(
  while sleep 15; do
    for p in tuned heldout; do
      # kernelbench-only holds the suites of a run with --only.
      for f in "$src"/build-gpu/kernelbench{,-only}/suite-$p/suite.json; do
        [ -f "$f" ] && cp "$f" "$out/$p-suite.json.partial" && mv "$out/$p-suite.json.partial" "$out/$p-suite.json"
      done
    done
  done
) &
saver=$!
OUT=$work bash "$src/tools/kernelbench-suite.sh" --state "$state" "$@"
rc=$?
kill "$saver" 2>/dev/null
(cd "$work" && tar -czf "$out/results.tgz" .)
cp "$work"/*-suite.json "$work"/*-report.md "$work"/*-report.json "$out/" 2>/dev/null
exit $rc
