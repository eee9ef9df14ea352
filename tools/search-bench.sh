#!/usr/bin/env bash
# On a GPU machine with PyTorch: builds KernelForge (tools/gpu-build.sh), runs the built-in search
# at default settings with a time budget on each problem under each tolerance policy, times
# torch.compile once per problem, and ends with one table: eager, torch.compile and best times,
# x eager, x compile, % of the roofline floor, precision, max scaled error, the search's wall time
# and its budget split (setup/compiling/verifying/timing/gate/idle, seconds), and the sanitizer
# gate's result for the best.
#   tools/search-bench.sh [--budget SECONDS] [--policies "strict loose"] [--variant V] [PROBLEM ...]
# Default: the five seed problems, 120 s each, strict then loose. Sessions and logs go under $OUT.
# KF_SKIP_COMPILE=1 leaves torch.compile out (it takes tens of seconds a problem to compile).
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

python3 - "$out" "$budget" "${runs[@]}" <<'PY'
import json, sqlite3, sys
out, budget, runs = sys.argv[1], float(sys.argv[2]), sys.argv[3:]
nan = float("nan")

def load(path, default):
    try:
        with open(path) as f:
            return json.load(f)
    except Exception:
        return default

print(f"\nbudget {budget:.0f} s a search; split = setup/compiling/verifying/timing/gate/idle in seconds")
head = (f"{'problem':<20}{'policy':<7}{'eager':>8}{'compile':>8}{'best':>8}{'x eager':>8}{'x comp':>7}{'%floor':>7} "
        f"{'prec':<7}{'max err':>8}{'wall':>6}  {'split':<24}gate")
print(head)
for name in runs:
    problem, policy = name.rsplit("-", 1)
    try:
        db = sqlite3.connect(f"file:{out}/{name}.kfsession?mode=ro", uri=True)
        meta = dict(db.execute("select key, value from meta"))
    except Exception as e:
        print(f"{problem:<20}{policy:<7} no session: {e}")
        continue
    base = json.loads(meta.get("baseline") or "{}")
    eager = (base.get("timing") or base).get("median_ms", nan)
    b = json.loads(meta.get("budget") or "{}")
    comp = load(f"{out}/compile-{problem}.json", {}).get("compile_ms", nan)
    try:
        wall = float(open(f"{out}/seconds-{name}").read())
    except Exception:
        wall = nan
    parts = [b.get(k, nan) for k in ("setup_s", "compiling_s", "verifying_s", "timing_s", "gate_s", "idle_s")]
    split = "/".join(f"{x:.{0 if budget >= 30 else 1}f}" for x in parts) if b else "-"
    gate = b.get("best_gate") or "-"
    if gate != "clean" and b.get("best_gate_note"):
        gate += f" ({b['best_gate_note'][:60]})"
    if b.get("gate_findings"):
        gate += f", {b['gate_findings']} demoted"
    row = None
    if b.get("best_node"):
        row = db.execute("select result_json from nodes where id = ?", (b["best_node"],)).fetchone()
    r = json.loads(row[0]) if row and row[0] else None
    ms = ((r or {}).get("timing") or {}).get("median_ms")
    if not ms:
        cands = db.execute("select count(*) from nodes where kind = 'candidate'").fetchone()[0]
        print(f"{problem:<20}{policy:<7}{eager:8.4f}{comp:8.4f}{'-':>8}  no correct kernel of {cands} "
              f"{wall:6.0f}  {split:<24}{gate}")
        continue
    floor = r.get("floor_ms", 0) or nan
    print(f"{problem:<20}{policy:<7}{eager:8.4f}{comp:8.4f}{ms:8.4f}{eager / ms:8.2f}{comp / ms:7.2f}"
          f"{100 * floor / ms:7.1f} {r.get('precision', '?'):<7}{r.get('max_scaled_error', nan):8.1e}"
          f"{wall:6.0f}  {split:<24}{gate}")
PY
