#!/usr/bin/env bash
# On a GPU machine with PyTorch: builds KernelForge (tools/gpu-build.sh), imports KernelBench-style
# files with tools/kernelbench-import.py and runs `kernelforge-cli suite` on them, on every GPU,
# strict, with torch.compile timed in the same run; prints fast_0, fast_1, fast_2 and the geometric
# mean over eager PyTorch, fast_1 over torch.compile and the mean time a problem took beyond its
# budget, for each part.
#   tools/kernelbench-suite.sh [--budget SECONDS] [--files DIR] [--part tuned|heldout|all]
#                              [--only NAME,NAME...] [--stop-after SECONDS] [--fresh] [--state DIR]
#                              [suite options, e.g. --no-sanitize]
# Default: tests/data/kernelbench, 30 s a problem. A folder's `heldout/` subfolder is the held-out
# part, searched after the rest (the tuned part) and reported on its own; --part runs one of them.
# --only takes the files of those names (without .py, e.g. 27_conv_transpose2d) from the folder,
# in their subfolders, and keeps their import and states apart (build-gpu/kernelbench-only, made
# afresh when the list changes).
# The import and the suites' states live in build-gpu/kernelbench, so running the script again
# resumes where it stopped; --fresh starts over. The whole call ends within --stop-after seconds
# (default 540, 0 for no limit): the suite is stopped as Ctrl-C would stop it, in time for its
# reports, and the next call goes on from there. Reports, states and logs are copied to $OUT
# (tuned-report.md, tuned-suite.json, ...). On a fresh machine, --state DIR takes the
# PART-suite.json files an earlier call left in $OUT: the problems they list as done are not
# searched again (an interrupted one starts a new session with what is left of its budget).
# Fill .debs/ first on a Debian 12 machine: tools/fetch-debs.sh
set -uo pipefail
called=$(date +%s)
budget=30
files=""
part=all
fresh=0
stop_after=540
state=""
only=""
extra=()
while [ $# -gt 0 ]; do
  case "$1" in
    --budget) budget=$2; shift ;;
    --files) files=$2; shift ;;
    --part) part=$2; shift ;;
    --fresh) fresh=1 ;;
    --stop-after) stop_after=$2; shift ;;
    --state) state=$2; shift ;;
    --only) only=$2; shift ;;
    *) extra+=("$1") ;;
  esac
  shift
done
case "$part" in tuned|heldout|all) ;; *) echo "--part is tuned, heldout or all, not '$part'" >&2; exit 2 ;; esac
KF_BUILD_TARGETS="kernelforge-cli kernelforge-worker"
. "$(dirname "$0")/gpu-build.sh"
files=${files:-$here/tests/data/kernelbench}
work=${KF_KERNELBENCH_DIR:-$here/build-gpu/kernelbench}${only:+-only}
[ "$fresh" = 1 ] && rm -rf "$work"
if [ -n "$only" ]; then
  [ "$(cat "$work/only" 2>/dev/null)" = "$only" ] || rm -rf "$work"
  mkdir -p "$work/source"
  echo "$only" >"$work/only"
  for name in ${only//,/ }; do
    found=$(cd "$files" && find . -name "$name.py" | head -1)
    [ -n "$found" ] || { echo "--only: no $name.py under $files" >&2; exit 2; }
    mkdir -p "$work/source/$(dirname "$found")" && cp "$files/$found" "$work/source/$found"
  done
  files=$work/source
fi
mkdir -p "$work"

# One import of the whole folder (its names must differ across the parts), then the held-out part
# moves to a folder of its own.
if [ ! -f "$work/imported" ]; then
  start=$(date +%s)
  rm -rf "$work/import" "$work/tuned" "$work/heldout"
  python3 "$here/tools/kernelbench-import.py" "$files" -o "$work/import" --jobs 4 2>&1 | tee "$out/import.log"
  echo "import: $(( $(date +%s) - start )) s"
  [ -d "$work/import/heldout" ] && mv "$work/import/heldout" "$work/heldout"
  mv "$work/import" "$work/tuned"
  [ -n "$(find "$work/tuned" "$work/heldout" -name '*.toml' 2>/dev/null | head -1)" ] && touch "$work/imported"
fi

for p in tuned heldout; do
  if [ -n "$state" ] && [ -f "$state/$p-suite.json" ] && [ ! -f "$work/suite-$p/suite.json" ]; then
    mkdir -p "$work/suite-$p" && cp "$state/$p-suite.json" "$work/suite-$p/suite.json"
  fi
done

gpus=$(nvidia-smi --query-gpu=index --format=csv,noheader | paste -sd, -)
parts=()
[ "$part" != heldout ] && parts+=(tuned)
[ "$part" != tuned ] && [ -d "$work/heldout" ] && parts+=(heldout)
status=0
for p in "${parts[@]}"; do
  [ -n "$(find "$work/$p" -name '*.toml' 2>/dev/null | head -1)" ] || continue
  limit=()
  if [ "$stop_after" -gt 0 ]; then
    # 30 s of the call are kept for stopping the searches and writing the reports.
    left=$(( stop_after - ($(date +%s) - called) - 30 ))
    if [ "$left" -le 0 ]; then
      echo "$p: not started (no time left in this call); run the same command again to go on"
      status=130
      continue
    fi
    limit=(timeout --preserve-status -s TERM "$left")
  fi
  start=$(date +%s)
  "${limit[@]}" "$cli" suite "$work/$p" --out "$work/suite-$p" --budget-per-problem "$budget" --policy strict \
    --gpus "$gpus" "${extra[@]}" 2>&1 | tee "$out/suite-$p.log"
  s=${PIPESTATUS[0]}
  echo "$p: suite exit $s after $(( $(date +%s) - start )) s"
  [ "$s" != 0 ] && status=$s
  for f in report.md report.json suite.json; do
    cp "$work/suite-$p/$f" "$out/$p-$f" 2>/dev/null
  done
done
[ "$status" = 130 ] && echo "stopped before the end: run the same command again to go on"

# The figures of each part, from its report.json.
for p in tuned heldout; do
  [ -f "$work/suite-$p/report.json" ] || continue
  python3 - "$p" "$work/suite-$p/report.json" <<'EOF'
import json, sys
part, path = sys.argv[1], sys.argv[2]
r = json.load(open(path))
e, c = r["eager"], r["torch_compile"]
unfinished = sum(1 for p in r["problems"] if p.get("report_status") == "not finished")
pc = lambda v: f"{100 * v:.1f} %"
print(f"{part}: {e['problems']} problems ({unfinished} not finished); against eager: fast_0 {pc(e['fast_0'])}, "
      f"fast_1 {pc(e['fast_1'])}, fast_2 {pc(e['fast_2'])}, geomean {e['geomean_speedup']:.2f}x over {e['correct']}; "
      f"against torch.compile ({c['problems']} timed): fast_1 {pc(c['fast_1'])}; "
      f"{r.get('overhead_s_mean', 0):.1f} s a problem beyond its budget")
EOF
done
exit "$status"
