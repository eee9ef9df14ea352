#!/usr/bin/env python3
"""What one evaluation costs with two workers: the wall time of the worker's `evaluate` request
(verification and the timed runs), measured from outside over the protocol (docs/protocol.md).
Used to compare the checked timed runs with a worker from before them.

    tools/eval-cost.py WORKER_A WORKER_B SESSION...

For each session, its fastest correct kernel is evaluated by each worker in turn, three times
(strict, 5 trials, 100 timed runs), on the session's own problem; the table gives the median wall
seconds of the `evaluate` request for each worker and their ratio, and the medians each reported.
"""
import json
import statistics
import subprocess
import sys
import time

from kfsession import best_candidate

class Worker:
    def __init__(self, argv):
        self.p = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                  text=True, bufsize=1)
        self.id = 0
        self.ask({"op": "hello"})

    def ask(self, message):
        self.id += 1
        message["id"] = self.id
        self.p.stdin.write(json.dumps(message) + "\n")
        while True:
            line = self.p.stdout.readline()
            if not line:
                raise RuntimeError("the worker died")
            reply = json.loads(line)
            if reply.get("id") == self.id:
                if not reply.get("ok"):
                    raise RuntimeError(reply.get("error"))
                return reply

    def close(self):
        try:
            self.ask({"op": "quit"})
        except Exception:
            pass
        self.p.wait(timeout=30)


def main():
    workers, sessions = sys.argv[1:3], sys.argv[3:]
    rows = []
    for path in sessions:
        best, meta = best_candidate(path)
        name = path.rsplit("/", 1)[-1].removesuffix(".kfsession")
        if not best:
            continue
        walls, medians = [[], []], [[], []]
        ws = [Worker([w]) for w in workers]
        for w in ws:
            w.ask({"op": "load", "problem": meta["problem_text"], "path": name + ".toml",
                   "variant": meta.get("problem_variant", "")})
        for _ in range(3):
            for k, w in enumerate(ws):
                start = time.monotonic()
                r = w.ask({"op": "evaluate", "key": "k", "candidate": best[1], "policy": "strict", "trials": 5,
                           "timing_trials": 100})["result"]
                walls[k].append(time.monotonic() - start)
                medians[k].append((r.get("timing") or {}).get("median_ms", float("nan")))
                w.ask({"op": "release", "key": "k"})
        for w in ws:
            w.close()
        a, b = statistics.median(walls[0]), statistics.median(walls[1])
        rows.append(f"{name:<22} {a:8.3f} {b:8.3f} {b / a:6.2f}x {statistics.median(medians[0]):9.4f} "
                    f"{statistics.median(medians[1]):9.4f}")
        print(rows[-1], flush=True)
    print(f"\n{'session':<22} {'A_s':>8} {'B_s':>8} {'B/A':>7} {'A_ms':>9} {'B_ms':>9}")
    print("\n".join(rows))


if __name__ == "__main__":
    main()
