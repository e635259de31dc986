"""The budget of the running computation: its deadline, notes and cuts (in a context variable).

A fact provider runs under a budget (:class:`forge_policy.facts.BudgetedProvider` sets one for
the duration of a call, so threads and asyncio tasks keep their own); the code it calls, down to
the command analyser (:mod:`forge_policy.commands`), checks it between units of work
(:func:`check_deadline`), gives :func:`remaining` to blocking calls as ``timeout=``, reports soft
problems with :func:`note` and says that a value is incomplete with :func:`truncated`. Outside a
run each of them is a no-op. :func:`read_bounded` reads a file no larger than a limit, noting why
it did not. This module sits below ``facts`` and ``commands`` so that both can read the one
budget; it imports nothing of the package but :mod:`forge_policy.errors`.

**The budget** is CPU time of the thread that computes the fact, so that a machine under load
(dozens of hooks on two cores) does not make an ordinary command look too big to inspect; the
wall clock is bounded too, at :data:`WALL_FACTOR` times the budget, for providers that wait
(a subprocess, a slow mount, a sleeping third-party provider). **Garbage collection is not the
provider's**: a collection stops every thread, and a full one costs in proportion to the whole
process's heap, not to the provider's work (a second of wall-clock time for a long-lived process
on a loaded machine). Both clocks are extended by the collections that ran during the provider
(:func:`gc_seconds`), so that a pause does not turn a fact into a timeout, which a blocking
behavior reads as a match (a spurious hard block). The hook's deadline is never extended.

**The hook's deadline** (SPEC §9, ``FORGE_HOOK_DEADLINE``) bounds everything a hook call waits
for: :func:`hook_deadline` sets it (a :func:`time.monotonic` instant, per context: the warm
worker's threads keep their own) for the duration of one call; :func:`lock_wait` bounds a lock
wait by the time left before it (less the reserve the answer still needs, :data:`ANSWER_SHARE`)
and a fact's run ends there too. :func:`no_wait` cuts every lock wait to a moment
(:data:`HARD_BLOCK_WAIT`): a hard block never waits for a lock held past it.

>>> run = Run(100.0, [])
>>> token = CURRENT.set(run)
>>> note("skipped /big.log: too large"); truncated("more than 10 commands"); check_deadline()
>>> CURRENT.reset(token)
>>> run.notes, run.cuts
(['skipped /big.log: too large'], ['more than 10 commands'])
"""

from __future__ import annotations

import contextlib
import gc
import os
import stat
import time
from collections.abc import Iterator
from contextvars import ContextVar

from forge_policy.errors import FactTimeout

#: A provider may take this many times its budget in wall-clock time (waiting, or starved of
#: CPU on a loaded machine) before it is stopped; its CPU time is held to the budget itself.
WALL_FACTOR = 4.0
#: :attr:`Run.hook_end` outside a hook call (a constant: ``float("inf")`` parses a string)
_NO_DEADLINE = float("inf")
_MAX_NOTES = 20


class Run:
    """One provider call: its budget (CPU and wall clock), notes and cuts. Within a hook call
    the wall clock also ends where the hook's deadline leaves the answer its reserve. Time spent
    in garbage collection during the call (:func:`gc_seconds`) extends the budget's clocks."""

    __slots__ = ("budget", "cpu_end", "cuts", "gc_start", "hook_end", "notes", "soft_end",
                 "wall_end")  # fmt: skip

    def __init__(self, budget_ms: float, notes: list[str]) -> None:
        self.budget = budget_ms / 1000.0
        self.notes = notes
        self.cuts: list[str] = []
        deadline = DEADLINE.get()  # read here: the provider may run in another thread
        self.hook_end = _NO_DEADLINE if deadline is None else deadline
        # start()'s clocks and gc_seconds(), inline (ten providers run per tool call)
        now = time.monotonic()
        total, since = _GC_STATE[0]
        self.gc_start = total if since is None else total + now - since
        self.wall_end = now + self.budget * WALL_FACTOR
        self.soft_end = now + self.budget
        self.cpu_end = time.thread_time() + self.budget

    def start(self) -> None:
        """Start the clocks (again) in the thread that runs the provider."""
        now = time.monotonic()
        self.gc_start = gc_seconds()
        self.wall_end = now + self.budget * WALL_FACTOR
        self.soft_end = now + self.budget
        self.cpu_end = time.thread_time() + self.budget

    def end(self) -> float:
        """The :func:`time.monotonic` instant at which the wall clock runs out now: the
        allowance, extended by the garbage collections so far, bounded by the hook's deadline."""
        return min(self.wall_end + gc_seconds() - self.gc_start, self.hook_end)

    def spent(self) -> str | None:
        """Why the budget is spent, or None (CPU time is read only past the soft deadline:
        a thread never has more CPU time than wall time)."""
        now = time.monotonic()
        if now <= self.soft_end and now <= self.hook_end:
            return None
        paused = gc_seconds() - self.gc_start
        if now > self.hook_end:
            return "ran into the hook's deadline (FORGE_HOOK_DEADLINE)"
        if now - paused <= self.soft_end:
            return None
        ms = self.budget * 1000.0
        if now - paused > self.wall_end:
            return (
                f"ran over {ms * WALL_FACTOR:g} ms of wall-clock time ({WALL_FACTOR:g}x its budget)"
            )
        # a collection that ran in this thread counted as its CPU time: at most its wall time
        cpu = time.thread_time() - paused
        if cpu > self.cpu_end:
            used = (cpu - self.cpu_end) * 1000.0 + ms
            return f"used {used:.0f} ms of CPU, over its budget of {ms:g} ms"
        return None


#: ``[(seconds, since)]``: the wall-clock time this process has spent in garbage collection and
#: the instant the one under way began (None: none is). One tuple, replaced whole, so that a
#: thread switch inside the callback (it is Python code) never shows half an update.
_GC_STATE: list[tuple[float, float | None]] = [(0.0, None)]


def _on_gc(phase: str, info: dict[str, int]) -> None:
    total, since = _GC_STATE[0]
    if phase == "start":
        _GC_STATE[0] = (total, time.monotonic())
    elif since is not None:
        _GC_STATE[0] = (total + time.monotonic() - since, None)


if _on_gc not in gc.callbacks:
    gc.callbacks.append(_on_gc)


def gc_seconds() -> float:
    """The wall-clock seconds this process has spent in garbage collection since the budget
    module was imported, the one under way included (every thread waits during a collection).
    A provider's run does not count them against its budget.

    >>> before = gc_seconds(); _ = gc.collect(); gc_seconds() > before
    True
    """
    total, since = _GC_STATE[0]
    return total if since is None else total + time.monotonic() - since


#: The run of the provider executing in this context, if any.
CURRENT: ContextVar[Run | None] = ContextVar("forge_policy_fact_run", default=None)


#: The share of the hook's deadline kept for the answer (at least :data:`MIN_RESERVE` seconds):
#: lock waits and facts stop that long before it, so that the answer (a stateless decision, its
#: audit record spooled, the harness's reply) is still given in time on a loaded machine.
ANSWER_SHARE = 0.3
MIN_RESERVE = 1.0

#: The instant (:func:`time.monotonic`) at which the running hook call's waits end, if any: its
#: deadline less the answer's reserve.
DEADLINE: ContextVar[float | None] = ContextVar("forge_policy_hook_deadline", default=None)
#: Seconds a hard block's lock waits may last (:func:`no_wait`): a moment for the hooks of other
#: calls of the session that hold the lock for milliseconds (their counts would otherwise be
#: decided statelessly, and a stateless count that races a committed one is lost to the state),
#: never the hook's deadline that an agent holding the lock would make it wait for.
HARD_BLOCK_WAIT = 2.0
#: Whether lock waits are cut to :data:`HARD_BLOCK_WAIT` in this context (a hard block).
NO_WAIT: ContextVar[bool] = ContextVar("forge_policy_no_wait", default=False)
#: The longest lock wait under :func:`no_wait` in this context.
_WAIT_CAP: ContextVar[float] = ContextVar("forge_policy_wait_cap", default=HARD_BLOCK_WAIT)


@contextlib.contextmanager
def hook_deadline(deadline: float | None, seconds: float | None = None) -> Iterator[None]:
    """Run the block under the hook's ``deadline`` (a :func:`time.monotonic` instant; None:
    keep the one in force), ``seconds`` long (default: the time left now): its waits end
    :data:`ANSWER_SHARE` of it (at least :data:`MIN_RESERVE`) before. An earlier end already in
    force wins.

    >>> with hook_deadline(time.monotonic() + 10.0, 10.0):
    ...     6.0 < lock_wait(60.0) <= 7.0
    True
    >>> lock_wait(60.0)  # outside a hook call: the lock's own timeout
    60.0
    """
    current = DEADLINE.get()
    if deadline is not None:
        length = deadline - time.monotonic() if seconds is None else seconds
        deadline -= max(MIN_RESERVE, ANSWER_SHARE * length)
    if deadline is None or (current is not None and current <= deadline):
        yield
        return
    token = DEADLINE.set(deadline)
    try:
        yield
    finally:
        DEADLINE.reset(token)


@contextlib.contextmanager
def no_wait(cap: float = HARD_BLOCK_WAIT) -> Iterator[None]:
    """Every lock wait in the block lasts at most ``cap`` seconds (:data:`HARD_BLOCK_WAIT`: a
    hard block; less: a record that must never hold up an answer, such as a ``seen`` record).

    >>> with no_wait():
    ...     lock_wait(15.0)
    2.0
    """
    token = NO_WAIT.set(True)
    capped = _WAIT_CAP.set(min(cap, _WAIT_CAP.get()) if NO_WAIT.get() else cap)
    try:
        yield
    finally:
        _WAIT_CAP.reset(capped)
        NO_WAIT.reset(token)


def lock_wait(timeout: float) -> float:
    """The seconds a lock may be waited for: ``timeout``, bounded by the end of the hook's
    waits (never below 0: one attempt), and by :data:`HARD_BLOCK_WAIT` under :func:`no_wait`."""
    if NO_WAIT.get():
        timeout = min(timeout, _WAIT_CAP.get())
    deadline = DEADLINE.get()
    if deadline is None:
        return timeout
    return max(0.0, min(timeout, deadline - time.monotonic()))


def in_hook_call() -> bool:
    """Whether a hook deadline (or :func:`no_wait`) is in force: a lock not taken in time then
    ends the wait instead of the call (the audit log spools its records)."""
    return NO_WAIT.get() or DEADLINE.get() is not None


def restart() -> None:
    """Start the running provider's clocks again (no-op outside one): what it did so far was a
    one-time cost of the process, not of the event (the first import of a built-in provider's
    module). The hook's deadline stays where it was.

    >>> restart()
    """
    run = CURRENT.get()
    if run is not None:
        run.start()


def check_deadline() -> None:
    """Raise :class:`FactTimeout` if the running provider's budget is spent (no-op outside one).

    Costs one clock read while the provider is within its wall-clock budget.

    >>> check_deadline()  # no provider is running: nothing to check
    """
    run = CURRENT.get()
    if run is not None:
        reason = run.spent()
        if reason is not None:
            raise FactTimeout(reason)


def remaining(default: float = 5.0) -> float:
    """The wall-clock seconds the running provider may still wait (at least 1 ms), else
    ``default``. Pass it as ``timeout=`` to blocking calls such as ``subprocess.run``.

    >>> remaining(2.5)
    2.5
    """
    run = CURRENT.get()
    if run is None:
        return default
    return max(0.001, run.end() - time.monotonic())


def note(message: str) -> None:
    """Report a soft problem from inside a provider. The run's diagnostics collect it.

    Outside a provider's run, the note is dropped.

    >>> note("skipped /big.log: too large")
    """
    run = CURRENT.get()
    if run is not None and len(run.notes) < _MAX_NOTES:
        run.notes.append(message)


def truncated(reason: str) -> None:
    """Say that the running provider's value is incomplete (it stopped at a size or depth cap,
    or at its budget, and returns what it found). The value becomes a ``Partial`` (a list)
    or an ``Unknown`` (anything else), and the reason a diagnostic.

    Outside a provider's run, nothing is recorded.

    >>> truncated("more than 10000 commands")
    """
    run = CURRENT.get()
    if run is not None and reason not in run.cuts:
        run.cuts.append(reason)


def read_bounded(path: str, limit: int) -> bytes | None:
    """A regular file's bytes if it holds at most ``limit`` of them, else ``None`` and a note.

    The file is opened non-blocking and checked after opening, so a FIFO or device swapped in
    after a ``stat`` cannot hang the hook.

    >>> read_bounded("/nonexistent/x", 10) is None
    True
    """
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0)
    try:
        fd = os.open(path, flags | getattr(os, "O_CLOEXEC", 0))
    except (OSError, ValueError) as exc:
        note(f"skipped {path}: unreadable ({getattr(exc, 'strerror', None) or exc})")
        return None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            note(f"skipped {path}: not a regular file")
            return None
        chunks: list[bytes] = []
        size = 0
        while size <= limit:
            chunk = os.read(fd, min(1 << 20, limit + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        if size > limit:
            note(f"skipped {path}: too large ({max(size, info.st_size)} bytes, limit {limit})")
            return None
        return b"".join(chunks)
    except OSError as exc:
        note(f"skipped {path}: unreadable ({exc.strerror or exc})")
        return None
    finally:
        os.close(fd)
