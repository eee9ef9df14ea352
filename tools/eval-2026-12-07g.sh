#!/usr/bin/env bash
# On a GPU machine: does the L2 set-aside for persisting accesses keep the seed LayerNorm's
# row-sized weight and bias in L2 for norm_grid (whose loads of them are marked evict-last)? Its
# first point and the two-read split kernel's (no such loads: the control), each evaluated with the
# set-aside turned off (KF_L2_SET_ASIDE=0) and as the worker times them by default
# (kernelforge-cli eval: verified, every timed run checked, eager PyTorch in the same call).
#   OUT=$OUT bash tools/eval-2026-12-07g.sh        # carry .debs
set -uo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
out=${OUT:-$here/build-gpu/out}
mkdir -p "$out"
export KF_BUILD_TARGETS="kernelforge-cli kernelforge-worker"
. "$here/tools/gpu-build.sh"
r=$out/render
"$cli" coverage "$here/problems/seed/layernorm.toml" --render "$r" --points 1 >/dev/null 2>&1
for k in norm_grid norm_split_row; do
  for aside in 0 default; do
    log="$out/eval-$k-$aside.log"
    if [ "$aside" = 0 ]; then
      KF_L2_SET_ASIDE=0 "$cli" eval "$here/problems/seed/layernorm.toml" "$r/layernorm/$k.cu" >"$log" 2>&1
    else
      "$cli" eval "$here/problems/seed/layernorm.toml" "$r/layernorm/$k.cu" >"$log" 2>&1
    fi
    echo "== $k, set-aside $aside: $(grep -E '^verdict' "$log" | head -1) | $(grep -E '^time' "$log" | head -1)"
  done
done
