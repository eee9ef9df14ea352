#!/usr/bin/env bash
# One call for a short device window: the L2 set-aside experiment (the first part of
# tools/eval-2026-12-07i.sh), then issue 13's seed table at default settings (eval-2026-12-07h.sh).
# Should the call end first, search-bench-table.py tables the sessions it left under bench/.
#   OUT=$OUT bash tools/eval-2026-12-07j.sh        # carry .debs
set -uo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
out=${OUT:-$here/build-gpu/out}
KF_EVAL_SECONDS=0 OUT=$out bash "$here/tools/eval-2026-12-07i.sh" 2>&1 | grep -v "^\[" | head -12
OUT=$out bash "$here/tools/eval-2026-12-07h.sh"
