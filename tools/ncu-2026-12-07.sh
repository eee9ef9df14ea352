#!/usr/bin/env bash
# On a GPU machine: what holds two kernels back, by Nsight Compute (tools/ncu-candidate.sh, the
# third launch as the worker makes it, clocks left alone), with DRAM bytes and L2 hit rates:
# - norm_grid on the seed LayerNorm (0.428 ms where its DRAM traffic alone would take 0.17 ms:
#   do the row-sized weight and bias come from L2 or from DRAM each row?);
# - split_tiles, the GEMM operand pass, on the seed matmul, fp16 (loose) and 3xTF32 (strict)
#   (2.3 and 2.8 TB/s against the 3.35 of the copy floor).
#   OUT=$OUT bash tools/ncu-2026-12-07.sh        # carry .debs
set -uo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
out=${OUT:-$here/build-gpu/out}
mkdir -p "$out"
export KF_BUILD_TARGETS="kernelforge-cli kernelforge-worker"
. "$here/tools/gpu-build.sh"
r=$out/render
"$cli" coverage "$here/problems/seed/layernorm.toml" --render "$r/strict" --points 1 >/dev/null 2>&1
"$cli" coverage "$here/problems/seed/matmul.toml" --render "$r/strict" --points 1 >/dev/null 2>&1
"$cli" coverage "$here/problems/seed/matmul.toml" --policy loose --render "$r/loose" --points 1 >/dev/null 2>&1
metrics=--metrics=dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sector_hit_rate.pct,lts__t_sector_op_read_hit_rate.pct,gpu__time_duration.sum
profile() { # NAME PROBLEM CANDIDATE KERNEL [eval args]
  local name=$1 problem=$2 cand=$3 kernel=$4
  OUT=$out KF_EVAL_ARGS=${5:-} bash "$here/tools/ncu-candidate.sh" "$here/problems/$problem.toml" "$cand" "$kernel" "$metrics" >/dev/null 2>&1
  echo "== $name"
  grep -E "dram__|lts__t_sector|gpu__time_duration|DRAM Throughput|Memory Throughput|L2 Hit|Compute \(SM\)" \
    "$out/ncu-$(basename "$cand" .cu)-$kernel.txt" | sed 's/  */ /g' | head -12
}
profile "norm_grid, seed LayerNorm" seed/layernorm "$r/strict/layernorm/norm_grid.cu" norm_grid
profile "split_tiles fp16, seed matmul" seed/matmul "$r/loose/matmul/gemm_wgmma_fp16.cu" split_tiles "--policy loose"
profile "split_tiles 3xTF32, seed matmul" seed/matmul "$r/strict/matmul/gemm_wgmma_tf32x3.cu" split_tiles
