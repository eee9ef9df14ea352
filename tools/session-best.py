#!/usr/bin/env python3
"""Prints `kernelforge-cli show SESSION NODE` for the fastest correct candidate of each session.

    tools/session-best.py CLI SESSION...

Used after a suite or a search to read the best kernel's trials (strict error, KernelBench's
check and by how much it missed) without opening the workbench.
"""
import subprocess
import sys

from kfsession import best_candidate

cli, sessions = sys.argv[1], sys.argv[2:]
for path in sessions:
    best, _ = best_candidate(path)
    print(f"== {path}: " + (f"best #{best[0]} {best[2]:.4f} ms" if best else "no correct candidate"), flush=True)
    if best:
        subprocess.run([cli, "show", path, str(best[0])], check=False)
