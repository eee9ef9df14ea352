"""Reading a session file (docs/session-format.md) from the tools' Python scripts."""
import json
import sqlite3


def open_session(path):
    """A session opened read-only, and its meta table as a dict (`budget` holds the last run's
    split and gate result, as JSON)."""
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    return db, dict(db.execute("select key, value from meta"))


def best_candidate(path):
    """The fastest correct candidate of a session as (node, source, median_ms), or None; and the
    session's meta table as a dict."""
    db, meta = open_session(path)
    best = None
    for node, text, rj in db.execute(
            "select id, text, result_json from nodes where kind='candidate' and status='correct'"):
        ms = ((json.loads(rj) if rj else {}).get("timing") or {}).get("median_ms")
        if ms and (best is None or ms < best[2]):
            best = (node, text, ms)
    return best, meta
