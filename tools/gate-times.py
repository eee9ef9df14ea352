#!/usr/bin/env python3
"""Prints the sanitizer gate's runs of each session: every candidate checked under
compute-sanitizer (node, outcome, tools, seconds under the tool, note), then the last run's budget
split and gate result as the search recorded them. Used to see what the gate costs on large problems.

    tools/gate-times.py SESSION...
"""
import json
import sys

from kfsession import open_session

for path in sys.argv[1:]:
    db, meta = open_session(path)
    print(f"== {path}")
    for node, rj in db.execute("select id, result_json from nodes where kind='candidate' order by id"):
        gate = (json.loads(rj) if rj else {}).get("sanitizer")
        if gate:
            print(f"  #{node:<4} {gate.get('outcome', '?'):<10} {','.join(gate.get('tools', [])):<20} "
                  f"{gate.get('seconds', 0):6.1f} s  {gate.get('note', '')[:90]}")
    print(f"  budget: {(meta.get('budget') or '-')[:400]}")
