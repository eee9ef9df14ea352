#!/usr/bin/env bash
# On a GPU machine: what holds the slab convolution back (conv_wgmma_slab, 0.238 ms strict and
# 0.174 ms loose on the seed conv2d where the tensor cores alone need about 0.08 and 0.03), by
# Nsight Compute (tools/ncu-candidate.sh: the third launch as the worker makes it, clocks left
# alone): throughput, warp stall reasons, instruction mix, shared-memory bank conflicts.
#   OUT=$OUT bash tools/ncu-slab.sh        # carry .debs
set -uo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
out=${OUT:-$here/build-gpu/out}
mkdir -p "$out"
export KF_BUILD_TARGETS="kernelforge-cli kernelforge-worker"
. "$here/tools/gpu-build.sh"
r=$out/render
"$cli" coverage "$here/problems/seed/conv2d.toml" --render "$r/strict" --points 1 >/dev/null 2>&1
"$cli" coverage "$here/problems/seed/conv2d.toml" --policy loose --render "$r/loose" --points 1 >/dev/null 2>&1
metrics=--metrics=l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum,sm__ops_path_tensor_src_bf16_dst_fp32.sum,sm__ops_path_tensor_src_fp16_dst_fp32.sum,gpu__time_duration.sum
profile() { # NAME CANDIDATE [eval args]
  local name=$1 cand=$2
  OUT=$out KF_EVAL_ARGS=${3:-} bash "$here/tools/ncu-candidate.sh" "$here/problems/seed/conv2d.toml" "$cand" conv_wgmma_slab \
    --section InstructionStats "$metrics" >"$out/$name.txt" 2>&1
  # A metric this ncu does not know fails the whole profile: then without the extra metrics.
  grep -q '==ERROR==' "$out/ncu-$(basename "$cand" .cu)-conv_wgmma_slab.txt" &&
    OUT=$out KF_EVAL_ARGS=${3:-} bash "$here/tools/ncu-candidate.sh" "$here/problems/seed/conv2d.toml" "$cand" conv_wgmma_slab \
      --section InstructionStats >"$out/$name.txt" 2>&1
  echo "== $name"
  grep -iE "duration|Throughput|Pipe|Stall|stall|bank|wavefronts|ops_path|Issued|Eligible|Active Warps|ERROR" "$out/ncu-$(basename "$cand" .cu)-conv_wgmma_slab.txt" \
    | sed 's/  */ /g' | head -45
}
profile "slab strict WGS=2" "$r/strict/conv2d/conv_wgmma_slab_bf16x3.cu"
profile "slab loose WGS=2 SLABS=2" "$r/loose/conv2d/conv_wgmma_slab_fp16.cu" "--policy loose"
tar -czf "$out/ncu-slab.tgz" -C "$out" --exclude ncu-slab.tgz . 2>/dev/null
