#!/usr/bin/env bash
# On a GPU machine with PyTorch installed (and without Qt or toml++): builds KernelForge against
# PyTorch's libtorch, with the Debian packages it lacks unpacked from .debs/ into a prefix, runs the
# `gpu` tests, then prints a table of eager time, naive-kernel time and verdict per seed problem.
#   tools/gpu-check.sh [--skip-tests] [--problems "softmax matmul ..."]
# Fill .debs/ first on a Debian 12 machine: tools/fetch-debs.sh
# Output: the table last; logs under $OUT (or build-gpu/) when set.
set -uo pipefail
skip_tests=0
problems="matmul conv2d conv2d_relu_maxpool softmax layernorm"
while [ $# -gt 0 ]; do
  case "$1" in
    --skip-tests) skip_tests=1 ;;
    --problems) problems=$2; shift ;;
    *) echo "gpu-check.sh: unknown option $1" >&2; exit 2 ;;
  esac
  shift
done

# The workbench has a GPU test too, so the GUI is built here (offscreen).
export KF_GPU_GUI=${KF_GPU_GUI:-ON}
. "$(dirname "$0")/gpu-build.sh"

if [ $skip_tests = 0 ]; then
  (cd "$build" && timeout "${KF_GPU_TEST_SECONDS:-1800}" ctest -L gpu -V --timeout 1800) >"$out/ctest-gpu.log" 2>&1
  echo "gpu tests: exit $?"; grep -E "Totals:|tests passed|tests failed|Passed|Failed|\*\*\*|QSKIP|SKIP" "$out/ctest-gpu.log" | tail -25
  grep -E "QINFO" "$out/ctest-gpu.log" | sed -E 's/^[0-9]+: QINFO *: *//' | cut -c1-220
fi

printf '\n%-22s %10s %12s %9s %-9s %11s\n' problem eager_ms naive_ms speedup verdict max_scaled
for p in $problems; do
  tmp=$(mktemp -d)
  timeout 120 "$cli" eval "$p" "$here/tests/kernels/naive/$p.cu" --json --trials 5 --timing-trials 100 >"$tmp/eval.json" 2>"$tmp/eval.err"
  { echo "== $p"; cat "$tmp/eval.json"; } >>"$out/evals.json"
  { echo "== $p"; cat "$tmp/eval.err"; } >>"$out/evals.err"
  python3 - "$p" "$tmp/eval.json" <<'PY'
import json, sys
name, path = sys.argv[1], sys.argv[2]
try:
    j = json.load(open(path))
except Exception as e:
    print(f"{name:<22} (no result: {e})"); sys.exit()
r = j["result"]; t = r.get("timing") or {}; e = j.get("eager") or {}
print(f"{name:<22} {e.get('median_ms', float('nan')):10.4f} {t.get('median_ms', float('nan')):12.4f} "
      f"{j.get('speedup', float('nan')):9.3f} {r['verdict']:<9} {r.get('max_scaled_error', float('nan')):11.2e}")
PY
done
