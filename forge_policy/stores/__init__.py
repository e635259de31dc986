"""Runtime stores: interchangeable backends behind :class:`RuntimeStore`.

The durable stores load on first use (PEP 562), so a process that keeps state in memory never
imports :mod:`sqlite3`.
"""

from __future__ import annotations

from importlib import import_module

from forge_policy.stores.memory import MemoryStore

TYPE_CHECKING = False
if TYPE_CHECKING:
    from forge_policy.stores.file import FileStore
    from forge_policy.stores.sqlite import SQLiteStore

_LAZY = {"FileStore": "forge_policy.stores.file", "SQLiteStore": "forge_policy.stores.sqlite"}

__all__ = ["FileStore", "MemoryStore", "SQLiteStore"]


def __getattr__(name: str) -> object:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'forge_policy.stores' has no attribute {name!r}")
    value = getattr(import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])
