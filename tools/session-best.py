#!/usr/bin/env python3
"""Prints `kernelforge-cli show SESSION NODE` for the fastest correct candidate of each session.

    tools/session-best.py CLI SESSION...

Used after a suite or a search to read the best kernel's trials (strict error, KernelBench's
check and by how much it missed) without opening the workbench.
"""
import json
import sqlite3
import subprocess
import sys

cli, sessions = sys.argv[1], sys.argv[2:]
for path in sessions:
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    best = None
    for node, rj in db.execute("select id, result_json from nodes where kind='candidate' and status='correct'"):
        ms = ((json.loads(rj) if rj else {}).get("timing") or {}).get("median_ms")
        if ms and (best is None or ms < best[1]):
            best = (node, ms)
    print(f"== {path}: " + (f"best #{best[0]} {best[1]:.4f} ms" if best else "no correct candidate"), flush=True)
    if best:
        subprocess.run([cli, "show", path, str(best[0])], check=False)
