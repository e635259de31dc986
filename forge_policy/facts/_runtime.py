"""Time budgets and notes of fact providers: what every provider module may import.

A :class:`BudgetedProvider` sets a deadline and a list of notes for the duration of one call (in
context variables, so threads and asyncio tasks keep their own). Providers check the deadline
between units of work (:func:`check_deadline`), give :func:`remaining` to blocking calls as
``timeout=`` and report soft problems with :func:`note`. :func:`call_provider` runs any provider
and never raises. This module imports nothing of the package but :mod:`forge_policy.errors`.

>>> from forge_policy.model import Event
>>> provider = BudgetedProvider("answer", lambda event: 42, budget_ms=100, isolate=False)
>>> provider.evaluate(Event("Stop", "s"))
(42, [])
"""

from __future__ import annotations

import time
from contextvars import ContextVar

from forge_policy.errors import FactTimeout

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

    from forge_policy.model import Event

    FactProvider = Callable[[Event], object]

#: Budget of a provider registered without ``budget_ms``.
DEFAULT_BUDGET_MS = 1000.0

_DEADLINE: ContextVar[float | None] = ContextVar("forge_policy_fact_deadline", default=None)
_NOTES: ContextVar[list[str] | None] = ContextVar("forge_policy_fact_notes", default=None)


def check_deadline() -> None:
    """Raise :class:`FactTimeout` if the running provider's budget is spent (no-op outside one).

    >>> check_deadline()  # no provider is running: nothing to check
    """
    deadline = _DEADLINE.get()
    if deadline is not None and time.monotonic() > deadline:
        raise FactTimeout("time budget exhausted")


def remaining(default: float = 5.0) -> float:
    """The seconds left in the running provider's budget (at least 1 ms), else ``default``.

    Pass it as ``timeout=`` to blocking calls such as ``subprocess.run``.

    >>> remaining(2.5)
    2.5
    """
    deadline = _DEADLINE.get()
    if deadline is None:
        return default
    return max(0.001, deadline - time.monotonic())


def note(message: str) -> None:
    """Report a soft problem from inside a provider. The run's diagnostics collect it.

    Outside a :class:`BudgetedProvider` run, the note is dropped.

    >>> note("skipped /big.log: too large")
    """
    notes = _NOTES.get()
    if notes is not None and len(notes) < 20:
        notes.append(message)


class BudgetedProvider:
    """A provider with its name and time budget (what :class:`FactRegistry` stores).

    Calling it returns the value or raises. :meth:`evaluate` never raises: it returns
    ``(value, diagnostics)``.
    """

    __slots__ = ("budget_ms", "func", "isolate", "name")

    def __init__(self, name: str, func: FactProvider, budget_ms: float, isolate: bool) -> None:
        self.name = name
        self.func = func
        self.budget_ms = float(budget_ms)
        self.isolate = isolate

    def _run(self, event: Event, notes: list[str]) -> object:
        start = time.monotonic()
        deadline = start + self.budget_ms / 1000.0
        if self.isolate:
            value = _run_isolated(self.func, event, deadline, notes)
        else:
            tokens = (_DEADLINE.set(deadline), _NOTES.set(notes))
            try:
                value = self.func(event)
            finally:
                _NOTES.reset(tokens[1])
                _DEADLINE.reset(tokens[0])
        elapsed = (time.monotonic() - start) * 1000.0
        if elapsed > self.budget_ms:
            raise FactTimeout(f"took {elapsed:.0f} ms, over its budget of {self.budget_ms:g} ms")
        return value

    def __call__(self, event: Event) -> object:
        return self._run(event, [])

    def evaluate(self, event: Event) -> tuple[object, list[str]]:
        """The value (``""`` on failure or timeout) and the diagnostics of one run."""
        notes: list[str] = []
        try:
            value = self._run(event, notes)
        except Exception as exc:  # a provider must never break the hook
            return "", [*_prefixed(self.name, notes), _failure(self.name, exc)]
        return ("" if value is None else value), _prefixed(self.name, notes)

    def __repr__(self) -> str:
        return f"<BudgetedProvider {self.name} budget={self.budget_ms:g}ms>"


def _run_isolated(func: FactProvider, event: Event, deadline: float, notes: list[str]) -> object:
    import contextvars
    import threading

    box: list[object] = []
    errors: list[BaseException] = []

    def target() -> None:
        _DEADLINE.set(deadline)
        _NOTES.set(notes)
        try:
            box.append(func(event))
        except BaseException as exc:
            errors.append(exc)

    context = contextvars.copy_context()
    thread = threading.Thread(
        target=context.run, args=(target,), daemon=True, name="forge-policy-fact"
    )
    thread.start()
    thread.join(max(0.0, deadline - time.monotonic()))
    if thread.is_alive():
        raise FactTimeout("still running when its budget ran out (the thread is abandoned)")
    if errors:
        raise errors[0]
    return box[0] if box else None


def _prefixed(name: str, notes: list[str]) -> list[str]:
    return [f"fact {name!r}: {text}" for text in notes]


def _failure(name: str, exc: BaseException) -> str:
    if isinstance(exc, FactTimeout):
        return f"fact {name!r} timed out: {exc}; it is empty"
    return f"fact {name!r} failed: {type(exc).__name__}: {exc}"


def call_provider(name: str, provider: FactProvider, event: Event) -> tuple[object, list[str]]:
    """Run any provider and never raise: ``(value, diagnostics)``. ``""`` stands for failure.

    This is what the evaluator's ``FactCache`` should call. It also collects a
    :class:`BudgetedProvider`'s notes. A plain callable runs without a budget.

    >>> from forge_policy.model import Event
    >>> call_provider("boom", lambda event: 1 // 0, Event("Stop", "s"))
    ('', ["fact 'boom' failed: ZeroDivisionError: integer division or modulo by zero"])
    """
    if isinstance(provider, BudgetedProvider):
        return provider.evaluate(event)
    try:
        value = provider(event)
    except Exception as exc:
        return "", [_failure(name, exc)]
    return ("" if value is None else value), []
