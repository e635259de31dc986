"""The RuntimeStore contract, run against memory, file and SQLite stores alike (SPEC §9),
through exactly the public suite a third party runs (``forge_policy.testing.conformance``)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

import forge_policy as fp
from forge_policy.state import SessionState
from forge_policy.testing.conformance import RuntimeStoreSuite

from .conftest import Backend


class _ProjectStore(RuntimeStoreSuite):
    """One of the project's backends: reopened through :class:`Backend`, whose fingerprint
    sees file bytes and mtimes (stricter than the suite's read-back)."""

    kind = ""

    @pytest.fixture
    def backend(self, tmp_path: Path) -> Iterator[Backend]:
        made = Backend(self.kind, tmp_path / "runtime")
        yield made
        made.close()

    @pytest.fixture
    def make_store(self, backend: Backend) -> Callable[[], Any]:
        return backend.open

    @pytest.fixture
    def fingerprint(self, backend: Backend) -> Callable[[], object]:
        return backend.fingerprint

    def test_is_a_context_manager(self, store: Any) -> None:
        with store as entered:
            assert entered is store
        assert isinstance(store, fp.RuntimeStore)


class TestMemoryStore(_ProjectStore):
    kind = "memory"


class TestFileStore(_ProjectStore):
    kind = "file"

    def test_the_allow_path_does_not_even_create_the_file(
        self, store: Any, backend: Backend
    ) -> None:
        assert store.transact("new", lambda current: ("read", None)) == "read"
        assert not backend.path.exists()


class TestSQLiteStore(_ProjectStore):
    kind = "sqlite"


class DictStore:
    """The third-party path: a tiny store over a shared dict, meeting the contract by
    serialising every transaction with one lock and keeping JSON text (copies in and out)."""

    def __init__(self, data: dict[str, str], lock: Any) -> None:
        self.data = data
        self.lock = lock

    def transact(self, session_id: str, apply: Any) -> Any:
        import json

        with self.lock:
            text = self.data.get(session_id)
            result, new = apply(None if text is None else SessionState(json.loads(text)))
            if new is not None:
                self.data[session_id] = json.dumps(new.to_dict())
            return result

    def load(self, session_id: str) -> SessionState | None:
        import json

        text = self.data.get(session_id)
        return None if text is None else SessionState(json.loads(text))

    def session_ids(self) -> list[str]:
        return sorted(self.data)

    def purge(self, now: float, ttl: float) -> int:
        with self.lock:
            gone = [sid for sid in self.data if self.load(sid).expired(now, ttl)]  # type: ignore[union-attr]
            for sid in gone:
                del self.data[sid]
            return len(gone)

    def close(self) -> None:
        pass


class TestACustomStorePassesBySubclassingAlone(RuntimeStoreSuite):
    @pytest.fixture
    def make_store(self) -> Callable[[], DictStore]:
        import threading

        data: dict[str, str] = {}
        lock = threading.RLock()
        return lambda: DictStore(data, lock)
