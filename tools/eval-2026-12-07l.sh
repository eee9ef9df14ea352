#!/usr/bin/env bash
# On a GPU machine: norm_grid on the seed LayerNorm with only a fraction of its evict-last lines
# marked (createpolicy.fractional 0.5 and 0.9 instead of 1.0), so that what is marked fits the L2
# set-aside (31.25 MB on an H100 against 33.5 MB of weight and bias), timed with the set-aside.
#   OUT=$OUT bash tools/eval-2026-12-07l.sh        # carry .debs
set -uo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
out=${OUT:-$here/build-gpu/out}
mkdir -p "$out"
export KF_BUILD_TARGETS="kernelforge-cli kernelforge-worker"
. "$here/tools/gpu-build.sh"
r=$out/render
"$cli" coverage "$here/problems/seed/layernorm.toml" --render "$r" --points 1 >/dev/null 2>&1
for f in 0.5 0.9; do
  sed "s/evict_last.b64 policy, 1.0/evict_last.b64 policy, $f/" "$r/layernorm/norm_grid.cu" >"$r/layernorm/norm_grid_$f.cu"
  log="$out/eval-norm_grid-$f.log"
  "$cli" eval "$here/problems/seed/layernorm.toml" "$r/layernorm/norm_grid_$f.cu" >"$log" 2>&1
  echo "== norm_grid, fraction $f, set-aside: $(grep -E '^verdict' "$log" | head -1) | $(grep -E '^time' "$log" | head -1)"
done
