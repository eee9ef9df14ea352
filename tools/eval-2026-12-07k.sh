#!/usr/bin/env bash
# One call for a short device window: the L2 set-aside on the seed LayerNorm (tools/eval-2026-12-07g.sh),
# the seed LayerNorm searched at default settings (tools/search-bench.sh, strict, 120 s, gate on,
# torch.compile in the same call), then the trust tests for what is left of KF_EVAL_SECONDS (560).
#   OUT=$OUT bash tools/eval-2026-12-07k.sh        # carry .debs
set -uo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
out=${OUT:-$here/build-gpu/out}
mkdir -p "$out"
began=$(date +%s)
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,memory.total --format=csv,noheader
python3 - <<'PY'
import ctypes, glob
rt = ctypes.CDLL(sorted(glob.glob("/usr/local/cuda/lib64/libcudart.so*"))[0])
most = ctypes.c_int(0)
rt.cudaDeviceGetAttribute(ctypes.byref(most), 108, 0)  # cudaDevAttrMaxPersistingL2CacheSize
print(f"largest L2 set-aside for persisting accesses: {most.value} bytes")
PY
OUT=$out/l2 bash "$here/tools/eval-2026-12-07g.sh" 2>&1 | grep "^=="
OUT=$out/bench bash "$here/tools/search-bench.sh" --policies strict layernorm 2>&1 | grep -v "^\[" | tail -6
left=$(( began + ${KF_EVAL_SECONDS:-560} - $(date +%s) - 20 ))
[ "$left" -gt 60 ] && KF_STREAMS="test_kernels_gpu" KF_STREAM_SECONDS=$left OUT=$out/streams \
  bash "$here/tools/gpu-streams.sh" 2>&1 | tail -8
