"""What every in-process framework adapter shares: one evaluation at a time per evaluator (an
evaluator is thread-safe, but an agent's calls are decided in the order it made them; adapters
run it in worker threads so that store I/O and lock waits never block an event loop), the
session id a caller supplies, and the fail-closed text for a call that could not be decided."""

from __future__ import annotations

import contextlib
import threading
import weakref

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from typing import Any

    from forge_policy.engine.evaluator import Evaluator
    from forge_policy.model import Decision, Event

    #: A fixed session id, or a function of what the framework hands the adapter.
    SessionId = str | Callable[[Any], str] | None

_locks: weakref.WeakKeyDictionary[Evaluator, threading.Lock] = weakref.WeakKeyDictionary()
_locks_guard = threading.Lock()


def evaluate(
    evaluator: Evaluator, event: Event, notes: list[dict[str, Any]] | None = None
) -> Decision:
    """The decision, under the evaluator's lock; ``notes`` (audit records such as a derived
    session id) are appended after it, and a failure to append them leaves the decision."""
    with _locks_guard:
        lock = _locks.setdefault(evaluator, threading.Lock())
    with lock:
        decision = evaluator.evaluate(event)
        if notes:
            from forge_policy.audit.base import write

            with contextlib.suppress(Exception):  # the decision stands without its note
                write(evaluator.audit, notes)
        return decision


def session(session_id: SessionId, source: Mapping[str, Any] | object) -> str:
    """The caller's session id for ``source``; :class:`~forge_policy.EventError` unless it is
    a non-empty string."""
    value = session_id(source) if callable(session_id) else session_id
    if not isinstance(value, str) or not value:
        from forge_policy.errors import EventError

        raise EventError(f"session_id: expected a non-empty string, got {value!r}")
    return value


def could_not_decide(exc: BaseException, *, refused: bool = True) -> str:
    """The one line a framework shows for an event the engine could not decide."""
    from forge_policy.secrets import redact

    problem = " ".join(redact(f"{type(exc).__name__}: {exc}").split())[:400]
    if refused:
        return f"forge-policy could not evaluate this call, so it is refused: {problem}"
    return f"forge-policy could not evaluate this event and let it through: {problem}"
