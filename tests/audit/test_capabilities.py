"""The optional capabilities of an audit sink (``forge_policy.audit.base``): which sink has which,
and the helpers that use a capability when present and fall back to ``records()`` otherwise."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from forge_policy._time import iso
from forge_policy.audit.base import (
    AuditSink,
    RecordsSince,
    SessionRecords,
    SyncsAfterAnswer,
    Verifiable,
    recent_records,
    session_records,
    verifier,
)
from forge_policy.audit.memory import MemoryAuditSink

from .conftest import BACKENDS, block, make_sink

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator
    from pathlib import Path

CAPABILITIES = {
    "memory": {"RecordsSince", "SessionRecords"},
    "jsonl": {"RecordsSince", "SyncsAfterAnswer", "Verifiable"},
    "lazy": {"RecordsSince", "SessionRecords", "SyncsAfterAnswer", "Verifiable"},
    "sqlite": {"RecordsSince", "SessionRecords", "Verifiable"},
}


def test_each_sink_has_the_capabilities_it_documents(sink: Any, backend: str) -> None:
    kinds = (RecordsSince, SessionRecords, SyncsAfterAnswer, Verifiable)
    found = {p.__name__ for p in kinds if isinstance(sink, p)}
    assert isinstance(sink, AuditSink)
    assert found == CAPABILITIES[backend]
    assert (verifier(sink) is sink) == ("Verifiable" in found)


class ThirdPartySink:
    """A sink written against the protocols only (no base class), with one capability; it
    counts how it is read, so a test can tell the capability from the fallback."""

    def __init__(self) -> None:
        self.inner = MemoryAuditSink()
        self.calls: list[str] = []

    def append_many(self, records: Iterable[dict[str, Any]]) -> None:
        self.inner.append_many(records)

    def records(self) -> Iterator[dict[str, Any]]:
        self.calls.append("records")
        return self.inner.records()

    def records_for_session(self, session_id: str) -> Iterator[dict[str, Any]]:
        self.calls.append("records_for_session")
        return (r for r in self.inner.records() if r.get("session_id") == session_id)

    def close(self) -> None:
        pass


def test_helpers_use_a_capability_structurally_and_fall_back_without_it() -> None:
    third = ThirdPartySink()
    third.append_many([block(1, session="a"), block(2, session="b")])
    assert isinstance(third, SessionRecords) and not isinstance(third, RecordsSince)
    assert [r["i"] for r in session_records(third, "b")] == [2]
    assert third.calls == ["records_for_session"]
    # without RecordsSince, the recent records are the session's records (a superset)
    assert [r["i"] for r in recent_records(third, "a", since=1e12)] == [1]
    assert third.calls == ["records_for_session"] * 2
    assert verifier(third) is None


TIMES = st.lists(st.integers(min_value=0, max_value=50), max_size=25).map(sorted)


@settings(max_examples=25, deadline=None)
@pytest.mark.parametrize("backend", BACKENDS)
@given(times=TIMES, sessions=st.data(), since=st.integers(min_value=-1, max_value=51))
def test_recent_records_keep_every_record_from_since_on(
    backend: str,
    tmp_path_factory: pytest.TempPathFactory,
    times: list[int],
    sessions: st.DataObject,
    since: int,
) -> None:
    """Whatever the sink, nothing stamped at or after ``since`` is missed (records are appended
    in time order, as the evaluator appends them), and nothing of another session is returned."""
    sink = make_sink(backend, tmp_path_factory.mktemp("sink"))
    owners = [sessions.draw(st.sampled_from(["a", "b"])) for _ in times]
    records = [
        {**block(i, session=owner), "timestamp": iso(1_000.0 + t)}
        for i, (t, owner) in enumerate(zip(times, owners, strict=True))
    ]
    sink.append_many(records)
    recent = [r["i"] for r in recent_records(sink, "a", since=1_000.0 + since)]
    wanted = [r["i"] for r in records if r["session_id"] == "a"]
    expected = [
        i for i, t in zip(range(len(times)), times, strict=True) if owners[i] == "a" and t >= since
    ]
    assert recent == sorted(recent) and set(recent) <= set(wanted)
    assert set(expected) <= set(recent)
    assert [r["i"] for r in session_records(sink, "a")] == wanted
    sink.close()


def test_sinks_without_a_file_read_nothing(tmp_path: Path, backend: str) -> None:
    sink = make_sink(backend, tmp_path)
    assert list(session_records(sink, "a")) == list(recent_records(sink, "a", 0.0)) == []
    sink.close()
