#!/usr/bin/env python3
"""Re-evaluates the fastest correct kernel of each session with checked timing, and prints how its
time compares with the one the session recorded and what the checks cost.

    tools/trust-check.py CLI SESSION...

For each session: `kernelforge-cli eval SESSION NODE --json` on its best node (the timed runs are
checked, the module is loaded afresh, a fresh seed where the session recorded none). The table
gives the recorded and the new median, their difference, the verdict, the timed runs checked and
the input sets they cycled through, and the cost of the checks: the timing step's wall time over
the same without the poisoning and comparing that the checks add (measured by CUDA events).
"""
import json
import subprocess
import sys

from kfsession import best_candidate


def main():
    cli, sessions = sys.argv[1], sys.argv[2:]
    rows = []
    for path in sessions:
        name = path.rsplit("/", 1)[-1].removesuffix(".kfsession")
        best, _ = best_candidate(path)
        if not best:
            rows.append(f"{name:<22} no correct candidate")
            continue
        node, _, recorded = best
        run = subprocess.run([cli, "eval", path, str(node), "--json"], capture_output=True, text=True, timeout=600)
        try:
            r = json.loads(run.stdout)["result"]
        except Exception:
            err = (run.stderr.strip().splitlines() or ["no output"])[-1]
            rows.append(f"{name:<22} #{node:<5} {recorded:9.4f} (eval failed: {err[:80]})")
            continue
        ms = (r.get("timing") or {}).get("median_ms")
        c = r.get("timing_check") or {}
        wall, check = c.get("wall_seconds", 0), c.get("check_seconds", 0)
        cost = wall / (wall - check) if wall > check > 0 else float("nan")
        now = f"{ms:9.4f}" if ms else f"{'—':>9}"
        delta = f"{100 * (ms / recorded - 1):+6.1f}%" if ms else f"{'':>7}"
        rows.append(f"{name:<22} #{node:<5} {recorded:9.4f} {now} {delta} {r['verdict']:<12} "
                    f"{c.get('runs', 0):4d} {c.get('input_sets', 0):4d} {wall:7.3f} {check:7.3f} {cost:5.2f}x")
        print(f"{name}: {r['verdict']} {r.get('reason', '')}", flush=True)
    print(f"\n{'session':<22} {'node':<6} {'recorded':>9} {'now':>9} {'diff':>7} {'verdict':<12} "
          f"{'runs':>4} {'sets':>4} {'wall_s':>7} {'check_s':>7} {'cost':>6}")
    print("\n".join(rows))


if __name__ == "__main__":
    main()
