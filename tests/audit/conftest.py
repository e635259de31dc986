"""Fixtures of the audit suite: a sink over every backend, a fake clock, record builders."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

from forge_policy.audit.jsonl import JsonlAuditSink
from forge_policy.audit.lazy import LazyJsonlSink
from forge_policy.audit.memory import MemoryAuditSink
from forge_policy.audit.sqlite import SQLiteAuditSink

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

BACKENDS = ("memory", "jsonl", "lazy", "sqlite")


def make_sink(backend: str, root: Path) -> Any:
    """A sink of ``backend`` storing under ``root`` (memory ignores it)."""
    if backend == "memory":
        return MemoryAuditSink()
    if backend == "jsonl":
        return JsonlAuditSink(root / "audit" / "overrides.log")
    if backend == "lazy":  # what the hook and the CLI use
        return LazyJsonlSink(str(root / "audit" / "overrides.log"))
    if backend == "indexed":  # what the warm worker and serve use
        return LazyJsonlSink(str(root / "audit" / "overrides.log"), session_index=True)
    return SQLiteAuditSink(root / "audit" / "audit.db")


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def sink(backend: str, tmp_path: Path) -> Iterator[Any]:
    s = make_sink(backend, tmp_path)
    yield s
    s.close()


class FakeClock:
    """A clock tests move by hand."""

    def __init__(self, now: float = 1_800_000_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


def block(i: int, session: str = "s1", behavior: str = "search-first") -> dict[str, Any]:
    """A block record, numbered by ``i``."""
    return {"kind": "block", "session_id": session, "behavior_id": behavior, "counter": i, "i": i}


def override(
    oid: str,
    session: str = "s1",
    behavior: str = "search-first",
    counter: int = 5,
    mechanism: str = "retry",
) -> dict[str, Any]:
    """An override record with id ``oid``."""
    return {
        "kind": "override",
        "override_id": oid,
        "session_id": session,
        "behavior_id": behavior,
        "counter": counter,
        "mechanism": mechanism,
        "reason": "",
    }
