#!/usr/bin/env bash
# On a GPU machine: what the sanitizer gate costs on large problems. Three files with GB-sized
# tensors searched as the suite searches them (30 s, strict, gate on): 109_skinny_k_matmul (1 GB
# output), 20_l2_norm (4.3 GB input), 26_sum_all (4 GB input); then each session's gate runs and
# budget split (tools/gate-times.py) and the suite's log lines about the gate and the stop.
#   OUT=$OUT bash tools/eval-2026-12-07f.sh        # carry .debs
set -uo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
out=${OUT:-$here/build-gpu/out}
mkdir -p "$out"
files=109_skinny_k_matmul,20_l2_norm,26_sum_all
OUT=$out/corpus bash "$here/tools/kernelbench-suite.sh" --budget 30 --stop-after 420 --only "$files" >"$out/corpus.log" 2>&1
grep -hE "^\| (109|20|26)_" "$out/corpus/"*-report.md 2>/dev/null || tail -5 "$out/corpus.log"
grep -hE "sanitiz|stopped|beyond" "$out"/corpus/suite-*.log 2>/dev/null | cut -c1-300 | tail -30
find "$here/build-gpu/kernelbench-only" -name "*.kfsession" -print0 | xargs -0 python3 "$here/tools/gate-times.py"
