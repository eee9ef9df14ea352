#!/usr/bin/env python3
"""Merges the per-problem tables of several suite reports (report.md) of one corpus run into one
summary, counted as the suite counts it (core/suite/suite_report.cpp): fast_p is the fraction of
the problems with a correct kernel more than p times faster than the baseline, the geometric mean
is over the correct ones, and torch.compile counts only the problems where it was timed. A run
longer than one session's device time comes back as several reports (tools/kernelbench-frozen.sh,
--only); a problem in several reports counts once, from the last.
  tools/suite-merge.py PART1.md PART2.md ... [--rows]
"""
import math
import sys


def rows(path):
    """The problem rows of a report's per-problem table, as dicts by column name."""
    header = None
    for line in open(path, encoding="utf-8"):
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if cells and cells[0] == "problem":
            header = cells
            continue
        if header is None or not line.startswith("|") or set(cells[0]) <= set("-: "):
            continue
        if len(cells) >= len(header) - 1:
            yield dict(zip(header, cells))


def number(s):
    try:
        return float(s)
    except ValueError:
        return 0.0


def fast_p(speedups, over):
    correct = [s for s in speedups if s > 0]
    geo = math.exp(sum(map(math.log, correct)) / len(correct)) if correct else 0
    pc = lambda n: f"{100 * n / over:.1f} % ({n})" if over else "-"
    return (f"| {over} | {pc(len(correct))} | {pc(sum(s > 1 for s in correct))} | "
            f"{pc(sum(s > 2 for s in correct))} | {geo:.2f}x over {len(correct)} |")


def main(argv):
    paths = [a for a in argv if not a.startswith("--")]
    if not paths:
        sys.exit(__doc__)
    problems = {}
    for p in paths:
        for r in rows(p):
            problems[r["problem"]] = r
    eager, compiled = [], []
    for r in problems.values():
        best = number(r["best ms"]) if r["status"] == "correct" else 0
        e, c = number(r["eager ms"]), number(r["torch.compile ms"])
        eager.append(e / best if best > 0 and e > 0 else 0)
        if c > 0:
            compiled.append(c / best if best > 0 else 0)
    print("| against | problems | fast_0 (correct) | fast_1 (faster) | fast_2 (2x faster) | geomean speedup |")
    print("| --- | ---: | ---: | ---: | ---: | ---: |")
    print("| eager PyTorch " + fast_p(eager, len(eager)))
    print("| torch.compile " + fast_p(compiled, len(compiled)))
    if "--rows" in argv:
        for name, r in problems.items():
            print(f"{name}\t{r['status']}\t{r['eager ms']}\t{r['best ms']}\t{r['torch.compile ms']}")


if __name__ == "__main__":
    main(sys.argv[1:])
