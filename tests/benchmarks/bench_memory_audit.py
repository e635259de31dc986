"""Cost of a refused call in a new session as the in-memory audit sink fills up (embedding and
tests keep one evaluator with a ``MemoryAuditSink`` for many sessions).

Not collected by pytest. Each call is a force push in a session of its own, so the evaluator
rebuilds the new session from the log first; run it on two trees side by side::

    PYTHONPATH=TREE_A .venv-test/bin/python tests/benchmarks/bench_memory_audit.py
    PYTHONPATH=TREE_B .venv-test/bin/python tests/benchmarks/bench_memory_audit.py

Prints the mean wall time per refused call after 200, 2,000 and 5,000 sessions.
"""

from __future__ import annotations

import time

import forge_policy as fp
from forge_policy.audit.memory import MemoryAuditSink
from forge_policy.stores.memory import MemoryStore

SAMPLE = 200


def main() -> None:
    evaluator = fp.Evaluator(fp.builtin_catalog(), store=MemoryStore(), audit=MemoryAuditSink())

    def refused(session_id: str) -> None:
        command = {"command": "git push --force"}
        event = fp.Event("PreToolUse", session_id, tool_name="Bash", tool_input=command)
        assert evaluator.evaluate(event).blocked

    done = 0
    figures = []
    for sessions in (200, 2000, 5000):
        for i in range(sessions - SAMPLE - done):
            refused(f"fill-{sessions}-{i}")
        start = time.perf_counter()
        for i in range(SAMPLE):
            refused(f"sample-{sessions}-{i}")
        figures.append(f"{sessions} sessions {(time.perf_counter() - start) / SAMPLE * 1e3:.2f} ms")
        done = sessions
    print(f"forge_policy from {fp.__file__.rsplit('/', 2)[0]}: " + "; ".join(figures))


if __name__ == "__main__":
    main()
