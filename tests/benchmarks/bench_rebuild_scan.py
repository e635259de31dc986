"""The cost of rebuilding a session from the audit log: the first counted event of a session
with no state (issue 10: a state that is missing is rebuilt, never reset) reads the log's
records of the last TTL back to front.

Not collected by pytest. Run:

    .venv/bin/python tests/benchmarks/bench_rebuild_scan.py [--records 100000]

The JSONL log (fsync off) is filled with ``--records`` violations of 50 other sessions stamped
in the last hour; then five hard blocks of new sessions are timed (the minimum is printed),
and the two reads they could use side by side: ``records_since(TTL)`` (every record parsed) and
``session_records_since(session, TTL)`` (only the session's lines and the one that ends the scan).
"""

from __future__ import annotations

import argparse
import tempfile
import time
import uuid
from pathlib import Path

import forge_policy as fp
from forge_policy._time import iso
from forge_policy.audit.jsonl import JsonlAuditSink
from forge_policy.stores import FileStore


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--records", type=int, default=100_000)
    count = parser.parse_args().records
    root = Path(tempfile.mkdtemp(prefix="forge-rebuild-"))
    log = JsonlAuditSink(root / "audit" / "overrides.log", fsync=False)
    now = time.time()
    step = 3600 / max(count, 1)
    batch = 1000
    for start in range(0, count, batch):
        log.append_many(
            {
                "kind": "violation",
                "session_id": f"other-{i % 50}",
                "behavior_id": "search-first",
                "counter": i,
                "level": "nudge",
                "timestamp": iso(now - 3600 + i * step),
                "input_summary": "Write: /p/src/x.py",
            }
            for i in range(start, min(start + batch, count))
        )
    evaluator = fp.Evaluator(
        fp.builtin_catalog(), store=FileStore(str(root / "runtime" / "state.json")), audit=log
    )
    times = []
    for _ in range(5):
        event = fp.Event(
            "PreToolUse",
            str(uuid.uuid4()),
            tool_name="Bash",
            tool_input={"command": "git push --force"},
            cwd="/p",
        )
        start = time.perf_counter()
        evaluator.evaluate(event)
        times.append(time.perf_counter() - start)
    since = now - 86_400
    start = time.perf_counter()
    log.records_since(since)
    every = time.perf_counter() - start
    start = time.perf_counter()
    log.session_records_since("nobody", since)
    one = time.perf_counter() - start
    print(
        f"{count} records in the last hour: first hard block of a new session "
        f"{min(times) * 1000:.1f} ms (min of 5); records_since(TTL) {every * 1000:.0f} ms; "
        f"session_records_since(TTL) {one * 1000:.0f} ms"
    )


if __name__ == "__main__":
    main()
