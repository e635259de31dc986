"""The candidate catalog: a second catalog evaluated beside the active one on every event, that
never changes a decision (issue 26, "live shadow"; the live counterpart of ``replay --against``).

Configured by ``candidate:`` in a configuration layer (relative to that layer's file) or
``FORGE_CANDIDATE_DIR`` (relative to the project; it wins), and wired by
:meth:`forge_policy.config.env.Config.build_evaluator`, so the in-process hook, the warm worker
and ``serve`` all compare. The candidate is decided under the same settings as the active
catalog (profile, layered per-behavior settings, ``FORGE_DISABLE``, exceptions): only the
catalog differs.

- **Its own counters.** The candidate has its own :class:`~forge_policy.Evaluator`, its own
  store (:func:`store_spec`: ``<root>/runtime/candidate/state.json`` or ``state.db``, or memory)
  and an audit sink that keeps nothing (:class:`Discard`): its escalations, pending blocks and
  overrides by retry are its own, and nothing it counts reaches the active state or the log the
  active state is rebuilt from.
- **What it leaves.** For every event where its verdict differs from the active one
  (:func:`forge_policy.engine.verdict.changes`), one ``shadow`` record in the project's audit log
  (:class:`forge_policy.audit.records.Shadow`); and a tally of the events compared, one byte
  appended per event to ``<root>/runtime/candidate/compared/<UTC day>`` (an ``O_APPEND`` write,
  no lock, no fsync: a denominator need not survive a crash, and a record per event would
  double the log), read back by :func:`compared_events`.
- **Fail open for the candidate, never for the decision.** A candidate that does not load,
  raises, or would start too close to the hook's deadline leaves the active decision as it is,
  with a diagnostic on stderr on every call and one ``diagnostic`` audit record per distinct
  problem (the last one reported is remembered in ``runtime/candidate/reported``; a cold hook
  is one process per call, and a record per call would flood the log with one fsync each).

>>> import forge_policy as fp
>>> from forge_policy.audit.memory import MemoryAuditSink
>>> from forge_policy.catalog.catalog import Catalog
>>> audit = MemoryAuditSink()
>>> active = fp.builtin_catalog()
>>> gone = ("no-destructive-git", "dangerous-commands")
>>> looser = Catalog([b for b in active.behaviors if b.id not in gone])
>>> ev = fp.Evaluator(active, audit=audit, clock=lambda: 1000.0,
...                   candidate=Candidate.of(looser, "looser"))
>>> d = ev.evaluate(fp.Event("PreToolUse", "s1", tool_name="Bash",
...                          tool_input={"command": "git push --force"}))
>>> d.outcome, [r["direction"] for r in audit.records() if r["kind"] == "shadow"]
('hard_block', ['would_unblock'])
>>> ev.candidate.compared
1
"""

from __future__ import annotations

import contextlib
import itertools
import os
import time

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterator
    from typing import Any

    from forge_policy.audit.base import AuditSink
    from forge_policy.catalog.catalog import Catalog
    from forge_policy.engine.evaluator import Evaluator
    from forge_policy.engine.inputs import FactCache
    from forge_policy.model import Decision, Event

#: The candidate's folder under ``<root>/runtime/``: its state, tally and last problem.
FOLDER = "candidate"
#: Seconds before the end of the hook's waits within which the candidate is not started: its
#: evaluation (and its store's lock) must not eat the answer's reserve.
MARGIN = 0.25


def runtime_folder(root: str) -> str:
    """``<root>/runtime/candidate``."""
    return os.path.join(root, "runtime", FOLDER)


def store_spec(active: str, root: str) -> str:
    """The candidate's store for the active store ``active`` (a ``FORGE_STORE`` value): its own
    file beside the active state, never the active one. A PostgreSQL store has no second
    table to give, so the candidate counts in a SQLite file of this machine (the candidate is
    advisory: per-host counters are what a shadow needs).

    >>> store_spec("memory", "/p/.forge"), store_spec("file", "/p/.forge")
    ('memory', 'file:/p/.forge/runtime/candidate/state.json')
    >>> store_spec("sqlite:/x/s.db", "/p/.forge") == store_spec("postgresql://h/db", "/p/.forge")
    True
    """
    folder = runtime_folder(root)
    if active == "memory":
        return "memory"
    if active == "file":
        return "file:" + os.path.join(folder, "state.json")
    return "sqlite:" + os.path.join(folder, "state.db")


def open_store(spec: str, *, lock_timeout: float, ttl: float, clock: Callable[[], float]) -> Any:
    """The store :func:`store_spec` names, without fsync (``synchronous = OFF``): the
    candidate's counters are advisory, and a durable write per event would double the cost of
    the active one's on the warm path (measured: ``tests/benchmarks/bench_candidate.py``). A
    write is still atomic (a rename, a transaction); a crash loses at most the last counts."""
    if spec == "memory":
        from forge_policy.stores.memory import MemoryStore

        return MemoryStore()
    if spec.startswith("file:"):
        from forge_policy.stores.file import FileStore

        return FileStore(
            spec[len("file:") :],
            lock_timeout=lock_timeout,
            fsync=False,
            ttl=ttl,
            clock=clock,
        )
    from forge_policy.stores.sqlite import SQLiteStore

    return SQLiteStore(
        spec[len("sqlite:") :],
        busy_timeout=lock_timeout,
        synchronous="OFF",
        ttl=ttl,
        clock=clock,
    )


class Discard:
    """The candidate's audit sink: keeps nothing. Its records (violations, blocks, overrides)
    must not reach the project's log, which the active sessions are rebuilt from; its counters
    live in its store alone."""

    def append_many(self, records: Any) -> None:
        pass

    def records(self) -> Iterator[dict[str, Any]]:
        return iter(())

    def close(self) -> None:
        pass


class Candidate:
    """A candidate catalog beside an evaluator: :meth:`observe` compares each decision.

    Build it with :meth:`~forge_policy.config.env.Config.load_candidate` (from a configuration)
    or :meth:`of` (a catalog in memory, kept in memory). ``problem``: why it cannot compare
    (then ``evaluator`` is None).
    """

    def __init__(
        self,
        folder: str,
        evaluator: Evaluator | None,
        *,
        problem: str = "",
        runtime: str | None = None,
        store_spec: str = "memory",
    ) -> None:
        self.folder = folder
        self.evaluator = evaluator
        self.problem = problem
        #: ``<root>/runtime/candidate`` (None: nothing kept on disk, a memory store)
        self.runtime = runtime
        self.store_spec = store_spec
        self._compared = itertools.count(1)  # next() is atomic: threads share a candidate
        self.compared = 0
        self._reported = ""

    @classmethod
    def of(cls, catalog: Catalog, name: str = "", **evaluator_options: Any) -> Candidate:
        """A candidate of ``catalog`` with a memory store (``evaluator_options``: as for
        :class:`~forge_policy.Evaluator`)."""
        from forge_policy.engine.evaluator import Evaluator

        options = {"store": None, **evaluator_options, "audit": Discard()}
        return cls(name or catalog.root or "(in memory)", Evaluator(catalog, **options))

    def forget_reported(self) -> None:
        """Forget the last problem reported (a candidate that loads again may report its
        next one)."""
        if self.runtime is not None:
            with contextlib.suppress(OSError):
                os.unlink(os.path.join(self.runtime, "reported"))

    def observe(
        self, event: Event, decision: Decision, facts: FactCache, audit: AuditSink
    ) -> Decision:
        """Decide ``event`` with the candidate (on its own counters, reusing the facts the
        active decision computed) and record a ``shadow`` in ``audit`` when it would have
        decided otherwise. Returns ``decision`` itself, or, on a problem, ``decision`` with a
        diagnostic: never another outcome, never an exception."""
        try:
            return self._observe(event, decision, facts, audit)
        except Exception as exc:  # a bug of the candidate's own: still not the decision's
            return self._trouble(decision, event, audit, f"raised {describe(exc)}")

    def _observe(
        self, event: Event, decision: Decision, facts: FactCache, audit: AuditSink
    ) -> Decision:
        if self.evaluator is None:
            return self._trouble(decision, event, audit, self.problem)
        from forge_policy._budget import DEADLINE

        end = DEADLINE.get()
        if end is not None and end - time.monotonic() < MARGIN:
            why = "not evaluated: the hook's deadline is near"
            return self._trouble(decision, event, audit, why)
        from forge_policy.engine.inputs import FactCache as Facts
        from forge_policy.engine.verdict import Verdict, changes, direction

        mine = Facts(event, self.evaluator.facts)
        mine.values.update(facts.values)  # facts depend on the event alone
        theirs = self.evaluator.evaluate(event, facts=mine)
        self._tally()
        active, candidate = Verdict.of(decision), Verdict.of(theirs)
        if active.key() == candidate.key():
            return decision
        from forge_policy._time import iso
        from forge_policy.audit import records
        from forge_policy.audit.base import write
        from forge_policy.secrets import summarize

        record = records.Shadow(
            timestamp=iso(self.evaluator.clock()),
            session_id=event.session_id,
            harness=event.harness,
            event=event.event_name,
            tool_name=event.tool_name,
            input_summary=summarize(event.tool_name, event.tool_input)
            if event.tool_name
            else summarize("", {"prompt": event.prompt}),
            catalog=self.folder,
            direction=direction(active, candidate),
            changes=tuple(change.to_dict() for change in changes(active, candidate)),
            active=active.to_dict(),
            candidate=candidate.to_dict(),
        )
        try:
            write(audit, [records.to_dict(record)])
        except Exception as exc:  # the decision stands; the record is reported, not lost
            import attrs

            note = f"candidate catalog: shadow record not written ({describe(exc)})"
            return attrs.evolve(decision, diagnostics=(*decision.diagnostics, note))
        return decision

    def _tally(self) -> None:
        """Count one compared event (in memory, and in today's tally file)."""
        self.compared = next(self._compared)
        if self.runtime is None:
            return
        folder = os.path.join(self.runtime, "compared")
        path = os.path.join(folder, time.strftime("%Y-%m-%d", time.gmtime()))
        flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_CLOEXEC", 0)
        try:
            fd = os.open(path, flags, 0o600)
        except FileNotFoundError:
            os.makedirs(folder, mode=0o700, exist_ok=True)
            fd = os.open(path, flags, 0o600)
        try:
            os.write(fd, b".")
        finally:
            os.close(fd)

    def _trouble(self, decision: Decision, event: Event, audit: AuditSink, why: str) -> Decision:
        """``decision`` with the candidate's problem as a diagnostic (every call), audited once
        per distinct problem."""
        import attrs

        text = f"candidate catalog {self.folder}: {why}; the active decision stands"
        notes = (*decision.diagnostics, text)
        try:
            if self._first_report(text):
                from forge_policy._time import iso
                from forge_policy.audit import records
                from forge_policy.audit.base import write

                entry = records.Diagnostic(
                    code="candidate",
                    timestamp=iso(time.time()),
                    session_id=event.session_id,
                    event=event.event_name,
                    message=text,
                )
                write(audit, [records.to_dict(entry)])
        except Exception as exc:  # told on stderr all the same
            notes = (*notes, f"candidate catalog: diagnostic not audited ({describe(exc)})")
        return attrs.evolve(decision, diagnostics=notes)

    def _first_report(self, text: str) -> bool:
        """Whether ``text`` was not the last problem reported (by this process, or, with a
        runtime folder, by any); remembers it."""
        if text == self._reported:
            return False
        self._reported = text
        if self.runtime is None:
            return True
        path = os.path.join(self.runtime, "reported")
        try:
            with open(path, encoding="utf-8") as handle:
                if handle.read() == text:
                    return False
        except (OSError, ValueError):
            pass
        os.makedirs(self.runtime, mode=0o700, exist_ok=True)
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(text)
        return True

    def close(self) -> None:
        """Close the candidate's store."""
        if self.evaluator is not None:
            close = getattr(self.evaluator.store, "close", None)
            if close is not None:
                close()


def describe(exc: BaseException) -> str:
    """One redacted line naming the problem (a catalog's first issue with its file:line)."""
    from forge_policy.errors import CatalogError
    from forge_policy.secrets import redact

    if isinstance(exc, CatalogError) and exc.issues:
        more = len(exc.issues) - 1
        text = f"does not load: {exc.issues[0]}" + (f" (and {more} more)" if more else "")
    else:
        text = f"{type(exc).__name__}: {exc}"
    text = " ".join(redact(text).split())
    return text if len(text) <= 400 else text[:399] + "…"


def compared_events(root: str, since: float | None = None) -> int | None:
    """How many events the candidate compared in the project of ``root`` (by UTC day: the days
    from that of ``since`` on), or None when no tally was kept there."""
    folder = os.path.join(runtime_folder(root), "compared")
    try:
        names = os.listdir(folder)
    except OSError:
        return None
    first = time.strftime("%Y-%m-%d", time.gmtime(since)) if since is not None else ""
    total = 0
    for name in names:
        if len(name) == 10 and name >= first:
            with contextlib.suppress(OSError):
                total += os.stat(os.path.join(folder, name)).st_size
    return total
