#!/usr/bin/env python3
"""The last table of tools/search-bench.sh, from the sessions, seconds and torch.compile figures it
left in a folder; run again over a folder that merges several calls' outputs:
  python3 tools/search-bench-table.py OUT BUDGET matmul-strict conv2d-loose ...
With no run names, every NAME-POLICY.kfsession in OUT, in the order of the seed list."""
import glob, json, os, sys

from kfsession import open_session

out, budget, runs = sys.argv[1], float(sys.argv[2]), sys.argv[3:]
if not runs:
    seeds = ["matmul", "conv2d", "conv2d_relu_maxpool", "softmax", "layernorm"]
    names = [os.path.basename(p)[:-len(".kfsession")] for p in glob.glob(f"{out}/*.kfsession")]
    rank = lambda n: (seeds.index(n.rsplit("-", 1)[0]) if n.rsplit("-", 1)[0] in seeds else 99, n)
    runs = sorted(names, key=rank)
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
        db, meta = open_session(f"{out}/{name}.kfsession")
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
