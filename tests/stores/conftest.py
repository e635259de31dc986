"""The ``store`` fixture: every conformance test runs against every backend (cattrs' pattern).

``MemoryStore`` is the oracle; a durable store must be indistinguishable from it through the
:class:`~forge_policy.RuntimeStore` protocol.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from forge_policy.stores import FileStore, MemoryStore, SQLiteStore

KINDS = ("memory", "file", "sqlite")


class Backend:
    """A store kind over one folder: opens (and reopens) stores and fingerprints what is on disk."""

    def __init__(self, kind: str, folder: Path) -> None:
        self.kind = kind
        self.folder = folder
        self.opened: list[Any] = []
        self._memory: MemoryStore | None = None

    @property
    def path(self) -> Path:
        return self.folder / ("state.json" if self.kind == "file" else "state.db")

    def open(self, **options: Any) -> Any:
        if self.kind == "memory":
            # one process, one dict: "reopening" a memory store returns the same one
            self._memory = self._memory or MemoryStore()
            return self._memory
        store = (FileStore if self.kind == "file" else SQLiteStore)(self.path, **options)
        self.opened.append(store)
        return store

    def fingerprint(self) -> object:
        """Everything a write would change: file bytes and mtimes (not the lock file's)."""
        if self.kind == "memory":
            assert self._memory is not None
            return repr(self._memory._sessions)
        return {
            p.name: (p.read_bytes(), p.stat().st_mtime_ns)
            for p in sorted(self.folder.iterdir())
            if not p.name.endswith(".lock") and not p.name.endswith("-shm")
        }

    def close(self) -> None:
        for store in self.opened:
            store.close()


@pytest.fixture(params=KINDS)
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Backend]:
    result = Backend(request.param, tmp_path / "runtime")
    yield result
    result.close()


@pytest.fixture
def store(backend: Backend) -> Any:
    """A fresh store of each kind (memory, file, sqlite)."""
    return backend.open()


@pytest.fixture
def make_backend(tmp_path: Path) -> Iterator[Callable[[str], Backend]]:
    """A factory of backends in fresh folders, for tests that pick their own kinds."""
    made: list[Backend] = []

    def make(kind: str) -> Backend:
        made.append(Backend(kind, tmp_path / f"{kind}-{len(made)}"))
        return made[-1]

    yield make
    for item in made:
        item.close()
