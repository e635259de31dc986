"""The memory sink's catch-up from a position (issue 28: a block reads what was appended since
the last catch-up, not the session's history) decides exactly as the read by time it replaces.

The reference is the same evaluator over a sink without positions (every capability of the
memory sink but ``session_records_after``), which reads the records of the last minutes at
each catch-up, as every in-memory evaluator did before: a long session, with state writes lost
after their audit append and calls decided statelessly, must give the same decisions, the same
audit records and the same session state (where the log stood aside).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import forge_policy as fp
from forge_policy.audit.base import SessionRecordsAfter
from forge_policy.audit.memory import MemoryAuditSink
from forge_policy.errors import LockTimeout
from forge_policy.state import RECONCILED_KEY
from tests.helpers import CrashingStore, bash

from .conftest import FakeClock

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator


class TimeOnlySink:
    """The memory sink read by time only: the catch-up of every sink without positions."""

    def __init__(self) -> None:
        self.inner = MemoryAuditSink()

    def append_many(self, records: Iterable[dict[str, Any]]) -> None:
        self.inner.append_many(records)

    def records(self) -> Iterator[dict[str, Any]]:
        return self.inner.records()

    def records_for_session(self, session_id: str) -> list[dict[str, Any]]:
        return self.inner.records_for_session(session_id)

    def records_since(self, since: float) -> list[dict[str, Any]]:
        return self.inner.records_since(since)

    def session_records_since(self, session_id: str, since: float) -> list[dict[str, Any]]:
        return self.inner.session_records_since(session_id, since)

    def close(self) -> None:
        pass


class FlakyStore(CrashingStore):
    """A store that loses the state write after the audit append (``armed``, once) or cannot
    be had at all (``held``: the call is decided statelessly, SPEC §9)."""

    held = False

    def transact(self, session_id: str, apply: Callable[..., Any]) -> Any:
        if self.held:
            raise LockTimeout("held by another process")
        return super().transact(session_id, apply)


def write(i: int) -> fp.Event:
    return fp.Event("PreToolUse", "s1", tool_name="Write", tool_input={"file_path": f"/r/f{i}.py"})


def calls() -> Iterator[tuple[fp.Event, float, str]]:
    """A long session: soft blocks and their retries (overrides), hard blocks, lost state
    writes and stateless decisions, at steps from a millisecond to a minute."""
    for i in range(240):
        if i % 9 == 4:
            event = bash("git push --force")  # a hard block
        elif i % 5 == 3:
            event = write(i - 1)  # a retry of the call before: an override when it was blocked
        else:
            event = write(i % 13)
        fault = "crash" if i % 17 == 6 else "held" if i % 23 == 11 else ""
        yield event, (0.001, 1.0, 7.0, 45.0)[i % 4 if i % 31 else 3], fault


def run(sink: Any) -> tuple[list[dict[str, Any]], list[dict[str, Any]], dict[str, Any]]:
    clock = FakeClock()
    store = FlakyStore()
    ev = fp.Evaluator(fp.builtin_catalog(), store=store, audit=sink, clock=clock)
    decisions = []
    for event, step, fault in calls():
        clock.advance(step)
        store.armed, store.held = fault == "crash", fault == "held"
        decisions.append(ev.evaluate(event).to_dict())
    store.held = False
    state = store.load("s1")
    assert state is not None
    data = {k: v for k, v in state.data.items() if k != RECONCILED_KEY}
    return decisions, list(sink.records()), data


def test_a_catch_up_from_positions_decides_as_the_read_by_time() -> None:
    memory = MemoryAuditSink()
    assert isinstance(memory, SessionRecordsAfter)
    assert not isinstance(TimeOnlySink(), SessionRecordsAfter)
    decisions, records, state = run(memory)
    assert (decisions, records, state) == run(TimeOnlySink())
    # the session went through everything the catch-up is for
    kinds = {r["kind"] for r in records}
    assert {"block", "override"} <= kinds
    assert any(r.get("degraded") for r in records)
    assert any(d["outcome"] == "hard_block" for d in decisions)
    assert any(d["outcome"] == "soft_block" for d in decisions)
    assert state["behaviors"]["no-destructive-git"]["blocks"] > 10


def test_a_position_of_another_memory_sink_is_read_by_time() -> None:
    """A state caught up against one memory sink and decided with another (another evaluator
    over the same store): the position is not this log's, so the log is read by time."""
    clock = FakeClock()
    store = fp.MemoryStore()
    first = fp.Evaluator(fp.builtin_catalog(), store=store, clock=clock)
    for _ in range(3):
        clock.advance(1)
        assert first.evaluate(bash("git push --force")).blocked
    state = store.load("s1")
    assert state is not None and state.reconciled is not None
    second_sink = MemoryAuditSink()
    degraded = dict(next(r for r in first.audit.records() if r["kind"] == "block"))
    degraded.update(counter=9, degraded="rebuilt")
    # a stateless count only the second log holds, at a place before the state's position,
    # and the log longer than it: read from the position, it would be missed
    second_sink.append_many([degraded])
    second_sink.append_many([{"kind": "note", "session_id": "x"}] * 50)
    second = fp.Evaluator(fp.builtin_catalog(), store=store, audit=second_sink, clock=clock)
    clock.advance(1)
    d = second.evaluate(bash("git push --force"))
    assert d.blocked and d.violations[0].counter == 10  # the stateless 9, then this one
