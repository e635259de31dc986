"""Runtime stores: interchangeable backends behind :class:`RuntimeStore`."""

from forge_policy.stores.memory import MemoryStore

__all__ = ["MemoryStore"]
