"""Several processes appending to one log (or database) keep one linear, complete chain."""

from __future__ import annotations

import multiprocessing
import sys
from typing import TYPE_CHECKING

import pytest

from forge_policy.audit.base import write
from forge_policy.audit.jsonl import JsonlAuditSink
from forge_policy.audit.sqlite import SQLiteAuditSink

if TYPE_CHECKING:
    from pathlib import Path

WORKERS = 8


def _append(kind: str, path: str, worker: int, count: int) -> None:
    # a generous lock timeout: 8 tight loops on 2 busy cores can starve one appender for more
    # than FORGE_LOCK_TIMEOUT's 2 s, and what this checks is the chain, not the wait
    sink = JsonlAuditSink(path, lock_timeout=60.0) if kind == "jsonl" else SQLiteAuditSink(path)
    for i in range(count):
        write(  # as every writer does: redacted on the way in
            sink,
            [
                {
                    "kind": "block",
                    "session_id": f"w{worker}",
                    "worker": worker,
                    "i": i,
                    "note": "password='hunter22'",
                }
            ],
        )
    sink.close()


def _run(kind: str, path: Path, count: int) -> None:
    method = "fork" if sys.platform.startswith("linux") else "spawn"
    ctx = multiprocessing.get_context(method)
    procs = [ctx.Process(target=_append, args=(kind, str(path), w, count)) for w in range(WORKERS)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
    assert [p.exitcode for p in procs] == [0] * WORKERS


@pytest.mark.parametrize(("kind", "count"), [("jsonl", 200), ("sqlite", 50)])
def test_concurrent_appends_keep_one_valid_chain(kind: str, count: int, tmp_path: Path) -> None:
    path = tmp_path / ("overrides.log" if kind == "jsonl" else "audit.db")
    _run(kind, path, count)
    sink = JsonlAuditSink(path) if kind == "jsonl" else SQLiteAuditSink(path)
    report = sink.verify()
    assert report.ok, report.problems[:5]
    assert report.records == WORKERS * count
    records = list(sink.records())
    assert [r["seq"] for r in records] == list(range(1, WORKERS * count + 1))
    for worker in range(WORKERS):  # each process's records in its own order, none lost
        assert [r["i"] for r in records if r["worker"] == worker] == list(range(count))
    assert all(r["note"] == "password='[REDACTED]'" for r in records)
    sink.close()
