"""The in-memory store: the reference implementation and the conformance suite's oracle."""

from __future__ import annotations

import threading

from forge_policy.secrets import redact_json, redact_json_over
from forge_policy.state import SessionState, copy_json

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any, TypeVar

    T = TypeVar("T")


class MemoryStore:
    """Session state in a dict, one lock for the whole store (thread-safe, not shared across
    processes).

    >>> store = MemoryStore()
    >>> store.transact("s", lambda cur: (cur is None, SessionState.new(0.0)))
    True
    >>> store.session_ids()
    ['s']
    """

    def __init__(self) -> None:
        self._sessions: dict[str, dict[str, Any]] = {}
        self._lock = threading.RLock()

    def transact(
        self,
        session_id: str,
        apply: Callable[[SessionState | None], tuple[T, SessionState | None]],
    ) -> T:
        with self._lock:
            data = self._sessions.get(session_id)
            current = SessionState(copy_json(data)) if data is not None else None
            result, new_state = apply(current)
            if new_state is not None:
                self._sessions[session_id] = redact_json(new_state.to_dict())
            return result

    def transact_borrowed(
        self,
        session_id: str,
        apply: Callable[[SessionState | None], tuple[T, SessionState | None]],
    ) -> T:
        """:meth:`transact` for an ``apply`` that only reads the state it receives: it gets
        the stored document itself, uncopied, as :meth:`peek` gives it, and must not change it
        (the evaluator's decision: :class:`~forge_policy.engine.session.Base` changes a copy,
        never the state it decides on). The state written is redacted as by :meth:`transact`;
        a value of it that is the very object the stored document held (a behavior the
        decision did not touch, shared by :meth:`~forge_policy.state.SessionState.derive`) is
        kept as it is: it was redacted when it was written, and a stored document is never
        changed in place. A subclass with a :meth:`transact` of its own (a wrapper, a fault
        injected by a test) gets that instead: what it does is never skipped."""
        if type(self).transact is not MemoryStore.transact:
            return self.transact(session_id, apply)
        with self._lock:
            data = self._sessions.get(session_id)
            result, new_state = apply(SessionState(data) if data is not None else None)
            if new_state is not None:
                self._sessions[session_id] = redact_json_over(new_state.to_dict(), data)
            return result

    def load(self, session_id: str) -> SessionState | None:
        with self._lock:
            data = self._sessions.get(session_id)
            return SessionState(copy_json(data)) if data is not None else None

    def peek(self, session_id: str) -> SessionState | None:
        """The session for reading only, not copied (see
        :func:`~forge_policy.stores.base.read_only`): a write replaces a session's document,
        never changes it in place, so what a reader holds stays as it was."""
        with self._lock:
            data = self._sessions.get(session_id)
        return SessionState(data) if data is not None else None

    def session_ids(self) -> list[str]:
        with self._lock:
            return sorted(self._sessions)

    def purge(self, now: float, ttl: float) -> int:
        with self._lock:
            expired = [
                sid for sid, data in self._sessions.items() if SessionState(data).expired(now, ttl)
            ]
            for sid in expired:
                del self._sessions[sid]
            return len(expired)

    def close(self) -> None:
        pass

    def __enter__(self) -> MemoryStore:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()
