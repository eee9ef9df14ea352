#!/usr/bin/env python3
"""Prints the sanitizer gate's runs of each session: every candidate checked under
compute-sanitizer (node, outcome, tools, seconds under the tool, note), then the run's budget split
as the search recorded it when it stopped. Used to see what the gate costs on large problems.

    tools/gate-times.py SESSION...
"""
import json
import sqlite3
import sys

for path in sys.argv[1:]:
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    print(f"== {path}")
    for node, rj in db.execute("select id, result_json from nodes where kind='candidate' order by id"):
        gate = (json.loads(rj) if rj else {}).get("sanitizer")
        if gate:
            print(f"  #{node:<4} {gate.get('outcome', '?'):<10} {','.join(gate.get('tools', [])):<20} "
                  f"{gate.get('seconds', 0):6.1f} s  {gate.get('note', '')[:90]}")
    tables = {r[0] for r in db.execute("select name from sqlite_master where type='table'")}
    if "events" in tables:
        for kind, data in db.execute("select kind, json from events order by rowid"):
            if kind == "stopped":
                d = json.loads(data)
                print(f"  stopped: {d.get('reason')} ({d.get('detail')}); budget {json.dumps(d.get('budget'))[:300]}")
