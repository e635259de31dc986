"""One suite over every audit sink: memory (the oracle), JSONL (direct and lazy) and SQLite,
through exactly the public suite a third party runs (``forge_policy.testing.conformance``)."""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from forge_policy.audit.base import Checkpointed, Verifiable
from forge_policy.testing.conformance import AuditSinkSuite

from .conftest import block, make_sink


class _ProjectSink(AuditSinkSuite):
    """One of the project's backends, storing under ``tmp_path / "audit"``."""

    backend = ""
    verifiable = True

    @pytest.fixture
    def make_sink(self, tmp_path: Path) -> Callable[[], Any]:
        if self.backend == "memory":
            shared = make_sink("memory", tmp_path)  # one process, one list: reopening is a no-op
            return lambda: shared
        return lambda: make_sink(self.backend, tmp_path)

    def test_claims_verifiable_exactly_when_it_keeps_a_chain(self, sink: Any) -> None:
        assert isinstance(sink, Verifiable) == self.verifiable

    def test_checkpoints_the_log_does_not_hold_fail_verify(
        self, open_sink: Callable[[], Any], tmp_path: Path
    ) -> None:
        sink = open_sink()
        if not isinstance(sink, Checkpointed):
            pytest.skip(f"{sink!r} keeps no checkpoints (an optional capability)")
        sink.append_many([block(i) for i in range(3)])
        seen = sink.last_append
        assert seen is not None
        sink.close()
        for path in (tmp_path / "audit").iterdir():  # the log and its anchor, deleted together
            path.unlink()
        sink = open_sink()
        assert sink.verify().ok  # alone, an empty log is a fine log...
        ahead = sink.verify([("s1", seen.seq, seen.hash)])
        assert not ahead.ok and "saw it reach seq 3" in ahead.problems[0]  # ...but s1 saw 3
        sink.append_many([block(i) for i in range(10, 15)])  # a new chain past it: another log
        replaced = sink.verify([("s1", 1, seen.origin), ("s1", seen.seq, seen.hash)])
        assert len(replaced.problems) == 2
        assert all("not the record session 's1' saw written" in p for p in replaced.problems)


class TestMemoryAuditSink(_ProjectSink):
    backend = "memory"
    verifiable = False


class TestJsonlAuditSink(_ProjectSink):
    backend = "jsonl"


class TestLazyJsonlSink(_ProjectSink):
    backend = "lazy"  # what the hook and the CLI use


class TestIndexedJsonlSink(_ProjectSink):
    backend = "indexed"  # what the warm worker and serve use (a session index)


class TestSQLiteAuditSink(_ProjectSink):
    backend = "sqlite"


class ListSink:
    """The third-party path: a tiny sink over a shared list, redacting with the one cleaning
    function and serialising appends with one lock."""

    def __init__(self, stored: list[str], lock: Any) -> None:
        self.stored = stored
        self.lock = lock

    def append_many(self, records: Any) -> None:
        import json

        from forge_policy.audit.verify import clean

        lines = [json.dumps(clean(r)) for r in records]
        with self.lock:
            self.stored.extend(lines)

    def records(self) -> Any:
        import json

        with self.lock:
            return iter([json.loads(line) for line in self.stored])

    def close(self) -> None:
        pass


class TestACustomSinkPassesBySubclassingAlone(AuditSinkSuite):
    @pytest.fixture
    def make_sink(self) -> Callable[[], ListSink]:
        stored: list[str] = []
        lock = threading.Lock()
        return lambda: ListSink(stored, lock)
