#!/usr/bin/env bash
# On a GPU machine with PyTorch: builds KernelForge (tools/gpu-build.sh), runs the built-in search
# on each problem with a time budget, and prints eager / torch.compile / best times, speedups,
# % of the roofline floor, precision and policy, candidates tried, and the seconds the sanitizer
# gate ran compute-sanitizer (with the kernels it demoted).
#   tools/search-bench.sh [--budget SECONDS] [--policy strict|loose] [PROBLEM ...]
# Default: the five seed problems, 120 s each, strict. Sessions and logs go under $OUT.
# KF_SKIP_COMPILE=1 skips the torch.compile baseline.
set -uo pipefail
budget=120
policy=strict
problems=()
while [ $# -gt 0 ]; do
  case "$1" in
    --budget) budget=$2; shift ;;
    --policy) policy=$2; shift ;;
    -*) echo "search-bench.sh: unknown option $1" >&2; exit 2 ;;
    *) problems+=("$1") ;;
  esac
  shift
done
[ ${#problems[@]} -eq 0 ] && problems=(matmul conv2d conv2d_relu_maxpool softmax layernorm)
KF_BUILD_TARGETS="kernelforge-cli kernelforge-worker"
. "$(dirname "$0")/gpu-build.sh"

rows=()
for p in "${problems[@]}"; do
  session="$out/$p.kfsession"
  rm -f "$session" "$session"-wal "$session"-shm
  start=$(date +%s)
  timeout $((budget + 300)) "$cli" search "$p" --budget "$budget" --rounds 100 --policy "$policy" \
    --session "$session" >"$out/search-$p.log" 2>&1
  rc=$?
  echo $(( $(date +%s) - start )) >"$out/seconds-$p"
  echo "search $p: exit $rc after $(cat "$out/seconds-$p") s"
  tail -3 "$out/search-$p.log"
  "$cli" report "$session" >"$out/report-$p.txt" 2>&1 && cat "$out/report-$p.txt"
  file=$("$cli" problems --json | python3 -c "import json,sys; print(next(x['path'] for x in json.load(sys.stdin) if x['name']=='$p'))")
  # torch.compile takes tens of seconds a problem to compile; KF_SKIP_COMPILE=1 leaves it out.
  [ "${KF_SKIP_COMPILE:-0}" = 1 ] || timeout 300 python3 "$here/tools/compile-baseline.py" "$file" --json \
    >"$out/compile-$p.json" 2>"$out/compile-$p.err" || true
  rows+=("$p")
done

python3 - "$out" "${rows[@]}" <<'PY'
import json, sqlite3, sys
out, names = sys.argv[1], sys.argv[2:]
print(f"\n{'problem':<22}{'eager':>9}{'compile':>9}{'best':>9}{'x eager':>9}{'x comp':>8}{'%floor':>8} {'prec':<7}{'policy':<7}{'max err':>9}{'cands':>6}{'min':>6}{'san s':>7}{'demoted':>8}")
for n in names:
    try:
        db = sqlite3.connect(f"file:{out}/{n}.kfsession?mode=ro", uri=True)
        meta = dict(db.execute("select key, value from meta"))
        base = json.loads(meta.get("baseline", "{}") or "{}")
        eager = (base.get("timing") or base).get("median_ms", float("nan"))
        best, cands = None, 0
        san_s, demoted = 0.0, 0
        for status, rj in db.execute("select status, result_json from nodes where kind='candidate'"):
            cands += 1
            san = (json.loads(rj).get("sanitizer") or {}) if rj else {}
            if not san.get("same_as"):
                san_s += san.get("seconds", 0.0)
                demoted += san.get("outcome") == "finding"
            if status == "correct" and rj:
                r = json.loads(rj)
                ms = (r.get("timing") or {}).get("median_ms")
                if ms and (best is None or ms < best[0]):
                    best = (ms, r)
        try:
            comp = json.load(open(f"{out}/compile-{n}.json")).get("compile_ms", float("nan"))
        except Exception:
            comp = float("nan")
        try:
            minutes = int(open(f"{out}/seconds-{n}").read()) / 60
        except Exception:
            minutes = float("nan")
        if best:
            ms, r = best
            print(f"{n:<22}{eager:9.4f}{comp:9.4f}{ms:9.4f}{eager/ms:9.2f}{comp/ms:8.2f}{100*r.get('floor_ms',0)/ms:8.1f} "
                  f"{r.get('precision','?'):<7}{r.get('policy','?'):<7}{r.get('max_scaled_error',float('nan')):9.1e}"
                  f"{cands:6d}{minutes:6.1f}{san_s:7.0f}{demoted:8d}")
        else:
            print(f"{n:<22}{eager:9.4f}{comp:9.4f}{'-':>9}  (no correct candidate of {cands})")
    except Exception as e:
        print(f"{n:<22} no session: {e}")
PY
