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
    ``(result, new_state)``; ``new_state is None`` means "write nothing". A store must meet
    every requirement below; the store conformance suite
    (:class:`forge_policy.testing.conformance.RuntimeStoreSuite`, with
    :class:`~forge_policy.MemoryStore` as its oracle; subclass it for your own store) checks
    those it can without knowing the backend:

    - **One transaction per call.** Between the read that feeds ``apply`` and the write of its
      result, no other ``transact`` on that session, in any thread or process sharing the
      backend, reads or writes it (SPEC §3.8). ``apply`` is called exactly once per call: the
      evaluator appends to the audit log inside it, so a retrying backend must retry before
      calling it, never after.
    - **Abort on error.** An exception raised by ``apply`` propagates unchanged and nothing is
      written; returning ``None`` as the new state writes nothing either (not even the access
      time).
    - **Copies in, copies out.** ``apply`` may mutate the state it receives; :meth:`load` returns
      a state the caller may mutate without changing what is stored.
    - **Faithful documents.** A session round-trips as JSON, unknown keys included; a stored
      document that is not a session is moved aside and reported, never silently dropped.
    - **Expiry by last access.** :meth:`purge` removes exactly the sessions that
      :meth:`~forge_policy.state.SessionState.expired` says are expired, and returns how many.
    - **One error family, bounded waits.** Backend failures are raised as
      :class:`~forge_policy.StoreError` (``from`` the backend's exception); a lock or busy wait
      past its timeout (``FORGE_LOCK_TIMEOUT``) as :class:`~forge_policy.LockTimeout`, never a
      hang. The evaluator then decides statelessly, failing closed.

    >>> from forge_policy.stores import MemoryStore
    >>> isinstance(MemoryStore(), RuntimeStore)
    True
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


def read_only(store: RuntimeStore, session_id: str) -> SessionState | None:
    """The session's state for a read that writes nothing: the store's optional
    ``peek(session_id)`` when it has one, else :meth:`RuntimeStore.load`.

    ``peek`` is the allow path's read (the evaluator decides on it and, when the decision
    changes nothing, never opens a transaction). It returns the stored state *for reading
    only* — the caller must not mutate it, so a store may hand out its own copy, unlocked and
    uncopied — and it must return a state that some serial order of the store's transactions
    had (a committed version, never a torn or half-applied one). Anything that writes goes
    through :meth:`RuntimeStore.transact` as before.

    >>> from forge_policy.stores import MemoryStore
    >>> read_only(MemoryStore(), "s") is None
    True
    """
    peek = getattr(store, "peek", None)
    if peek is not None:
        state: SessionState | None = peek(session_id)
        return state
    return store.load(session_id)
