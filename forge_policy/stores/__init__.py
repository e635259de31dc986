"""Runtime stores: interchangeable backends behind :class:`RuntimeStore`.

The durable stores load on first use (PEP 562), so a process that keeps state in memory never
imports :mod:`sqlite3`.
"""

from __future__ import annotations

from forge_policy._lazy import lazy_exports
from forge_policy.stores.memory import MemoryStore

TYPE_CHECKING = False
if TYPE_CHECKING:
    from forge_policy.stores.file import FileStore
    from forge_policy.stores.postgres import PostgresStore
    from forge_policy.stores.sqlite import SQLiteStore

_LAZY = {
    "FileStore": "forge_policy.stores.file",
    "PostgresStore": "forge_policy.stores.postgres",
    "SQLiteStore": "forge_policy.stores.sqlite",
}

__all__ = ["FileStore", "MemoryStore", "PostgresStore", "SQLiteStore"]

__getattr__, __dir__ = lazy_exports("forge_policy.stores", _LAZY, __all__, globals())
