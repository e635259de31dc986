"""Answer first: work a warm answer need not wait for, run once the answer is out.

The warm worker answers a hook call over its socket, then the harness runs the tool. What the
decision still has to write once it is final (the session state's new version: temp file,
fsync, rename, folder fsync; the ``seen`` record) changes nothing in the answer, so the worker
runs the call in an :func:`answer_first` scope: a store or sink that may hand such work over
(:func:`defer`) does, still holding its locks, and the scope runs it, in order, when the answer
has been sent. Nothing the answer depends on is deferred: a decision's audit records (the
source of truth, SPEC §4) are appended before the answer — and fsynced before it, unless the
decision lets nothing run (a denial: below) — and a deferred state write
keeps the session's lock until it is done, so the session's next transaction (in this process or
any other) waits for it and reads it. What a crash between the answer and the write loses is the
transaction in flight, which SPEC §9 already allows and the audit log rebuilds; a reader that
takes no lock may, for that moment, read the version before it (one serial order).

A denial's records (a block no one can approve in the harness) are written before the answer,
so every reader sees them and a crash of the process loses nothing, but their fsync may follow
the answer (:class:`~forge_policy.audit.base.SyncsAfterAnswer`), still before the state write.
What a power cut in between can lose is then the denied call whole — its records and its state
— and a session without it is one the agent could have made by not making the call: nothing it
can do next is let through that would not have been. A call that runs (an allow with a counted
violation, an override, a grant) is on durable record before its answer, as SPEC §4 says.

Outside a scope (the cold hook, the library, the CLI) :func:`defer` declines and the caller does
the work at once, as before. Work that fails after the answer is reported to the scope's
``on_error`` (the worker logs it): there is no caller left to tell.

>>> done = []
>>> with answer_first(on_error=print):
...     defer(lambda: done.append("written"))
...     done.append("answered")
True
>>> done
['answered', 'written']
>>> defer(lambda: None)  # no scope: the caller does the work itself
False
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Callable, Iterator

#: The work waiting for the answer in this context; None outside an :func:`answer_first` scope.
_PENDING: contextvars.ContextVar[list[Callable[[], None]] | None] = contextvars.ContextVar(
    "forge_policy_answer_first", default=None
)


@contextlib.contextmanager
def answer_first(on_error: Callable[[str], None]) -> Iterator[None]:
    """Run the block, then every piece of work :func:`defer` handed over in it, in order, even
    when the block raised (deferred work may hold a lock that only it releases)."""
    pending: list[Callable[[], None]] = []
    token = _PENDING.set(pending)
    try:
        yield
    finally:
        _PENDING.reset(token)
        _run(pending, on_error)


def defer(work: Callable[[], None]) -> bool:
    """Hand ``work`` to the running scope (True), or decline outside one (False: do it now)."""
    pending = _PENDING.get()
    if pending is None:
        return False
    pending.append(work)
    return True


def running() -> bool:
    """Whether an :func:`answer_first` scope runs in this context (work handed over now waits
    for the answer).

    >>> running()
    False
    """
    return _PENDING.get() is not None


def settle() -> None:
    """Run the work handed over so far in this scope, now: before anything that could wait for
    what it holds (a second transaction of the same store in the same thread), and before a
    result is read back (tests). Errors propagate to the caller here."""
    pending = _PENDING.get()
    while pending:
        pending.pop(0)()


def _run(pending: list[Callable[[], None]], on_error: Callable[[str], None]) -> None:
    while pending:
        work = pending.pop(0)
        try:
            work()
        except Exception as exc:  # after the answer: nobody else to tell
            on_error(f"work after the answer failed: {type(exc).__name__}: {exc}")
