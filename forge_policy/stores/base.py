"""The runtime store interface (SPEC §9): one required method, ``transact``.

A store keeps one JSON document per session. ``transact(session_id, apply)`` reads the session,
calls ``apply(current)`` and, if it returns a new state, writes it — all inside one atomic
transaction (a lock, ``BEGIN IMMEDIATE``, ``SELECT … FOR UPDATE``), so that concurrent hooks of
one session never lose an increment (SPEC §3.8). The evaluator never sees the backend.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol, TypeVar, runtime_checkable

if TYPE_CHECKING:
    from collections.abc import Callable

    from forge_policy.state import SessionState

T = TypeVar("T")


@runtime_checkable
class RuntimeStore(Protocol):
    """Where session state lives. Implement this to plug in a new backend.

    ``apply`` receives the stored state (``None`` when the session is unknown) and returns
    ``(result, new_state)``; ``new_state is None`` means "write nothing". Exceptions raised by
    ``apply`` abort the transaction without writing. Backend failures are raised as
    :class:`~forge_policy.StoreError` (or :class:`~forge_policy.LockTimeout`).
    """

    def transact(
        self,
        session_id: str,
        apply: Callable[[SessionState | None], tuple[T, SessionState | None]],
    ) -> T:
        """Read, apply and write one session atomically; return ``apply``'s result."""
        ...

    def load(self, session_id: str) -> SessionState | None:
        """The session's state, read-only (None when unknown)."""
        ...

    def session_ids(self) -> list[str]:
        """Every stored session id."""
        ...

    def purge(self, now: float, ttl: float) -> int:
        """Delete sessions whose last access is more than ``ttl`` seconds before ``now``."""
        ...

    def close(self) -> None:
        """Release the backend's resources."""
        ...
