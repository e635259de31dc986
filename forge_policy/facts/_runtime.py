"""Time budgets and notes of fact providers: what every provider imports.

A :class:`BudgetedProvider` sets a budget and a list of notes for the duration of one call (in
a context variable, so threads and asyncio tasks keep their own). Providers check the budget
between units of work (:func:`check_deadline`), give :func:`remaining` to blocking calls as
``timeout=``, report soft problems with :func:`note` and say that a value is incomplete with
:func:`truncated` (these live in :mod:`forge_policy._budget`, below the command analyser
too). :func:`call_provider` runs any provider and never raises. The undetermined values they
produce are the public types of :mod:`forge_policy.values`, re-exported here.

**The budget** is CPU time of the thread that computes the fact, so that a machine under load
(dozens of hooks on two cores) does not make an ordinary command look too big to inspect; the
wall clock is bounded too, at :data:`WALL_FACTOR` times the budget, for providers that wait
(a subprocess, a slow mount, a sleeping third-party provider). Time spent in garbage collection
extends both (:func:`~forge_policy._budget.gc_seconds`): it is the process's, not the
provider's.

**A fact that fails is undetermined, not empty.** A provider that raises, runs out of budget or
was cut by a size cap yields an :class:`Unknown` (the empty string, with the reason) or, for a
list that was cut, a :class:`Partial` (the items found, with the reason). The condition language
(:mod:`forge_policy.catalog.dsl`) reads them with three-valued logic: a blocking behavior
decides as if its condition matched (fail closed), a nudge or a warning as if it did not.

>>> from forge_policy.model import Event
>>> provider = BudgetedProvider("answer", lambda event: 42, budget_ms=100, isolate=False)
>>> provider.evaluate(Event("Stop", "s"))
(42, [])
>>> value, notes = call_provider("boom", lambda event: 1 // 0, Event("Stop", "s"))
>>> value == "", undetermined(value)
(True, "fact 'boom' failed: ZeroDivisionError: integer division or modulo by zero")
"""

from __future__ import annotations

import time
from contextvars import ContextVar

from forge_policy._budget import CURRENT, Run
from forge_policy._budget import WALL_FACTOR as WALL_FACTOR
from forge_policy._budget import check_deadline as check_deadline
from forge_policy._budget import note as note
from forge_policy._budget import remaining as remaining
from forge_policy._budget import truncated as truncated
from forge_policy.errors import FactTimeout
from forge_policy.values import Partial as Partial
from forge_policy.values import Unknown as Unknown
from forge_policy.values import undetermined as undetermined

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any, TypeVar

    from forge_policy.model import Event

    T = TypeVar("T")

    FactProvider = Callable[[Event], object]

#: Budget of a provider registered without ``budget_ms``.
DEFAULT_BUDGET_MS = 1000.0


class BudgetedProvider:
    """A provider with its name and time budget (what :class:`FactRegistry` stores).

    Calling it returns the value or raises. :meth:`evaluate` never raises: it returns
    ``(value, diagnostics)``, the value an :class:`Unknown` or :class:`Partial` when the
    provider failed, ran out of budget or was cut.
    """

    __slots__ = ("budget_ms", "commands_only", "func", "isolate", "name")

    def __init__(self, name: str, func: FactProvider, budget_ms: float, isolate: bool) -> None:
        self.name = name
        self.func = func
        self.budget_ms = float(budget_ms)
        self.isolate = isolate
        #: a built-in command fact: ``[]`` for an event whose ``tool_input`` has neither
        #: ``command`` nor ``commands`` (its value is read from them alone), so its cache
        #: answers that without a run (:class:`~forge_policy.engine.inputs.FactCache`)
        self.commands_only = False

    def _run(self, event: Event, run: Run) -> object:
        if self.isolate:
            return _run_isolated(self.func, event, run)
        token = CURRENT.set(run)
        try:
            value = self.func(event)
            late = run.spent()
        finally:
            CURRENT.reset(token)
        # a provider that says its value is incomplete has already stopped at its budget
        if late is not None and not run.cuts:
            raise FactTimeout(late)
        return value

    def __call__(self, event: Event) -> object:
        return self._run(event, Run(self.budget_ms, []))

    def evaluate(
        self, event: Event, shared: dict[str, Any] | None = None
    ) -> tuple[object, list[str]]:
        """The value and the diagnostics of one run; never raises. ``shared``: the work the
        providers of this event share (:func:`shared`)."""
        notes: list[str] = []
        run = Run(self.budget_ms, notes, shared)
        try:
            value = self._run(event, run)
        except Exception as exc:  # a provider must never break the hook
            failure = _failure(self.name, exc)
            return Unknown(failure), [*_prefixed(self.name, notes), failure]
        diagnostics = _prefixed(self.name, notes) if notes else []
        if run.cuts:
            reason = f"fact {self.name!r} is incomplete: {'; '.join(run.cuts)}"
            diagnostics.append(reason)
            return (Partial(value, reason) if isinstance(value, list) else Unknown(reason)), (
                diagnostics
            )
        return ("" if value is None else value), diagnostics

    def __repr__(self) -> str:
        return f"<BudgetedProvider {self.name} budget={self.budget_ms:g}ms>"


def _run_isolated(func: FactProvider, event: Event, run: Run) -> object:
    import contextvars
    import threading

    box: list[object] = []
    errors: list[BaseException] = []
    late: list[str] = []

    def target() -> None:
        run.start()  # this thread's CPU clock
        CURRENT.set(run)
        try:
            box.append(func(event))
            reason = run.spent()
            if reason is not None:
                late.append(reason)
        except BaseException as exc:
            errors.append(exc)

    context = contextvars.copy_context()
    thread = threading.Thread(
        target=context.run, args=(target,), daemon=True, name="forge-policy-fact"
    )
    thread.start()
    while thread.is_alive():  # a garbage collection meanwhile moves the end (Run.end)
        left = run.end() - time.monotonic()
        if left <= 0.0:
            break
        thread.join(left)
    if thread.is_alive():
        raise FactTimeout("still running when its budget ran out (the thread is abandoned)")
    if errors:
        raise errors[0]
    if late and not run.cuts:
        raise FactTimeout(late[0])
    return box[0] if box else None


def _prefixed(name: str, notes: list[str]) -> list[str]:
    return [f"fact {name!r}: {text}" for text in notes]


def _failure(name: str, exc: BaseException) -> str:
    if isinstance(exc, FactTimeout):
        return f"fact {name!r} timed out: {exc}"
    return f"fact {name!r} failed: {type(exc).__name__}: {exc}"


#: The work the providers of one event share (:func:`shared`): set by :func:`call_provider`
#: around a plain callable it runs (one dict per event), unset elsewhere; a
#: :class:`BudgetedProvider`'s run carries the dict itself (``Run.shared``).
SHARED: ContextVar[dict[str, tuple[Any, Any, tuple[str, ...], tuple[str, ...]]] | None] = (
    ContextVar("forge_policy_shared_facts", default=None)
)


def shared(name: str, event: Event, compute: Callable[[], T]) -> T:
    """``compute()``, done once per event for all the providers of one fact cache that ask for
    ``name`` (the files a Bash call names are read by four facts): a later provider of the
    same event gets the same value, and the cuts and notes its first computation reported
    are reported for it too (so its fact is as incomplete as the first one's). A computation
    that raised (its budget ran out) is not kept. Outside a fact cache it just computes.

    >>> from forge_policy.model import Event
    >>> ev, calls = Event("Stop", "s"), []
    >>> token = SHARED.set({})
    >>> shared("n", ev, lambda: calls.append(1) or 7), shared("n", ev, lambda: 8), calls
    (7, 7, [1])
    >>> SHARED.reset(token)
    """
    run = CURRENT.get()
    memo = run.shared if run is not None and run.shared is not None else SHARED.get()
    if memo is None:
        return compute()
    held = memo.get(name)
    if held is not None and held[0] is event:
        for reason in held[2]:
            truncated(reason)
        for message in held[3]:
            note(message)
        return held[1]  # type: ignore[no-any-return]
    if run is None:
        value = compute()
        memo[name] = (event, value, (), ())
        return value
    cuts, notes = run.cuts, run.notes
    run.cuts, run.notes = [], []  # what this computation reports, kept to report again
    try:
        value = compute()
    finally:
        mine_cuts, mine_notes = run.cuts, run.notes
        run.cuts, run.notes = cuts, notes
        for reason in mine_cuts:
            truncated(reason)
        for message in mine_notes:
            note(message)
    memo[name] = (event, value, tuple(mine_cuts), tuple(mine_notes))
    return value


def call_provider(
    name: str, provider: FactProvider, event: Event, shared: dict[str, Any] | None = None
) -> tuple[object, list[str]]:
    """Run any provider and never raise: ``(value, diagnostics)``. An :class:`Unknown` (equal
    to ``""``) stands for failure, a :class:`Partial` for a list that was cut. ``shared``: the
    work the providers of this event share (:func:`shared`), one dict
    per event (the evaluator's fact cache passes its own).

    This is what the evaluator's ``FactCache`` calls. It also collects a
    :class:`BudgetedProvider`'s notes. A plain callable runs without a budget.

    >>> from forge_policy.model import Event
    >>> call_provider("boom", lambda event: 1 // 0, Event("Stop", "s"))
    ('', ["fact 'boom' failed: ZeroDivisionError: integer division or modulo by zero"])
    """
    if isinstance(provider, BudgetedProvider):  # its run carries ``shared``
        return provider.evaluate(event, shared)
    token = SHARED.set(shared) if shared is not None else None
    try:
        value = provider(event)
    except Exception as exc:
        failure = _failure(name, exc)
        return Unknown(failure), [failure]
    finally:
        if token is not None:
            SHARED.reset(token)
    return ("" if value is None else value), []
