#!/usr/bin/env bash
# On a GPU machine with PyTorch: builds KernelForge (tools/gpu-build.sh), runs the built-in search
# at default settings with a time budget on each problem under each tolerance policy, times
# torch.compile once per problem, and ends with one table: eager, torch.compile and best times,
# x eager, x compile, % of the roofline floor, precision, max scaled error, the search's wall time
# and its budget split (setup/compiling/verifying/timing/gate/idle, seconds), and the sanitizer
# gate's result for the best.
#   tools/search-bench.sh [--budget SECONDS] [--policies "strict loose"] [--variant V] [PROBLEM ...]
# Default: the five seed problems, 120 s each, strict then loose. Sessions and logs go under $OUT,
# and all of them again in $OUT/search-bench.tgz.
# KF_SKIP_COMPILE=1 leaves torch.compile out (it takes tens of seconds a problem to compile).
# All ten searches, torch.compile and the build took about 560 s on an H100 (2026-12-07), close to
# a device call's 600: there, run one call a policy and merge with search-bench-table.py.
# Without a GPU, to check the script: KF_BENCH_CLI=path/to/kernelforge-cli and KF_BENCH_WORKER="a
# worker command" (the fake worker of tests/eval, with KF_SANITIZER set to the fake sanitizer)
# skip the build and run the searches there.
set -uo pipefail
budget=120
policies="strict loose"
variant=
problems=()
while [ $# -gt 0 ]; do
  case "$1" in
    --budget) budget=$2; shift ;;
    --policies) policies=$2; shift ;;
    --policy) policies=$2; shift ;;
    --variant) variant=$2; shift ;;
    -*) echo "search-bench.sh: unknown option $1" >&2; exit 2 ;;
    *) problems+=("$1") ;;
  esac
  shift
done
[ ${#problems[@]} -eq 0 ] && problems=(matmul conv2d conv2d_relu_maxpool softmax layernorm)
for p in $policies; do
  case "$p" in strict|loose) ;; *) echo "search-bench.sh: a policy is strict or loose, not $p" >&2; exit 2 ;; esac
done

worker_args=()
if [ -n "${KF_BENCH_CLI:-}" ]; then
  here=$(cd "$(dirname "$0")/.." && pwd)
  out=${OUT:-$here/build-gpu/out}
  mkdir -p "$out"
  cli=$KF_BENCH_CLI
  export KERNELFORGE_PROBLEMS=${KERNELFORGE_PROBLEMS:-$here/problems}
  export KERNELFORGE_TEMPLATES=${KERNELFORGE_TEMPLATES:-$here/resources/templates}
  [ -n "${KF_BENCH_WORKER:-}" ] && worker_args=(--worker "$KF_BENCH_WORKER" --compiler "$KF_BENCH_WORKER")
else
  KF_BUILD_TARGETS="kernelforge-cli kernelforge-worker"
  . "$(dirname "$0")/gpu-build.sh"
fi
variant_args=()
[ -n "$variant" ] && variant_args=(--variant "$variant")

runs=()
for p in "${problems[@]}"; do
  for policy in $policies; do
    name="$p-$policy"
    session="$out/$name.kfsession"
    rm -f "$session" "$session"-wal "$session"-shm
    start=$(date +%s.%N)
    # Default settings but for the budget and the policy; --rounds 100 lets the budget decide.
    timeout $((budget + 300)) "$cli" search "$p" --budget "$budget" --rounds 100 --policy "$policy" \
      "${variant_args[@]}" "${worker_args[@]}" --session "$session" >"$out/search-$name.log" 2>&1
    rc=$?
    python3 -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.1f}')" "$start" "$(date +%s.%N)" \
      >"$out/seconds-$name"
    echo "search $p ($policy): exit $rc after $(cat "$out/seconds-$name") s"
    tail -1 "$out/search-$name.log"
    "$cli" report "$session" >"$out/report-$name.txt" 2>&1
    runs+=("$name")
  done
  # torch.compile once per problem: the policy does not change what PyTorch computes.
  if [ "${KF_SKIP_COMPILE:-0}" != 1 ]; then
    file=$("$cli" problems --json | python3 -c "import json,sys; print(next(x['path'] for x in json.load(sys.stdin) if x['name']=='$p'))")
    timeout 300 python3 "$here/tools/compile-baseline.py" "$file" --json >"$out/compile-$p.json" 2>"$out/compile-$p.err" || true
  fi
done

python3 "$(dirname "$0")/search-bench-table.py" "$out" "$budget" "${runs[@]}"
# The device returns only a few files a call: everything above, sessions included, also travels as
# one archive (built elsewhere first, so tar does not read the archive it writes).
archive=$(mktemp --suffix .tgz)
tar -czf "$archive" -C "$out" --exclude search-bench.tgz . && mv "$archive" "$out/search-bench.tgz"
