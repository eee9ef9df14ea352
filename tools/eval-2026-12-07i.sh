#!/usr/bin/env bash
# On a GPU machine: the L2 set-aside experiment on the seed LayerNorm (tools/eval-2026-12-07g.sh:
# norm_grid and the two-read split kernel, each without and with KF_L2_SET_ASIDE=max), then the
# trust tests and the search tests in two streams for what is left of KF_EVAL_SECONDS (default 560).
#   OUT=$OUT bash tools/eval-2026-12-07i.sh        # carry .debs
set -uo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
out=${OUT:-$here/build-gpu/out}
mkdir -p "$out"
began=$(date +%s)
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,memory.total --format=csv,noheader
OUT=$out/l2 bash "$here/tools/eval-2026-12-07g.sh" 2>&1 | grep "^==" 
# What the set-aside can be on this GPU, and whether a process may set it (the worker does the same).
python3 - <<'PY'
import ctypes, glob
rt = ctypes.CDLL(sorted(glob.glob("/usr/local/cuda/lib64/libcudart.so*"))[0])
most, got = ctypes.c_int(0), ctypes.c_size_t(0)
rt.cudaDeviceGetAttribute(ctypes.byref(most), 108, 0)  # cudaDevAttrMaxPersistingL2CacheSize
e = rt.cudaDeviceSetLimit(6, ctypes.c_size_t(most.value))  # cudaLimitPersistingL2CacheSize
rt.cudaDeviceGetLimit(ctypes.byref(got), 6)
print(f"persisting L2 set-aside: at most {most.value} bytes; set -> error {e}, now {got.value} bytes")
PY
left=$(( began + ${KF_EVAL_SECONDS:-560} - $(date +%s) - 20 ))
[ "$left" -gt 60 ] && KF_STREAMS="test_kernels_gpu test_search_gpu" KF_STREAM_SECONDS=$left OUT=$out/streams \
  bash "$here/tools/gpu-streams.sh" 2>&1 | tail -20
