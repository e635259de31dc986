"""The :class:`Evaluator`: one store transaction per event, the audit log written first.

What is decided lives in :func:`forge_policy.engine.decide.decide` (pure, SPEC §3) and
:mod:`forge_policy.engine.overrides` (SPEC §4); the base state a decision is made on, brought up
to the audit log where it matters, in :mod:`forge_policy.engine.session`; status, explain and
the explicit override in :mod:`forge_policy.engine.queries`. The evaluator keeps the
transaction: it loads the session state, decides on its caught-up base, appends the audit
records (fsynced: the source of truth), then applies the effects and writes the state. When the
state cannot be read or written it decides on the session rebuilt from the audit log, or, when
that cannot be read either, at each behavior's highest level below hard_block (SPEC §9).

**Locks and the hook's deadline** (SPEC §9). Within a hook call every lock wait ends before the
hook's deadline (:func:`forge_policy._budget.lock_wait`). A call that is hard-blocked never waits
for a lock held past a moment (:data:`~forge_policy._budget.HARD_BLOCK_WAIT`, 2 s): its
transaction runs under :func:`~forge_policy._budget.no_wait`, so a state lock held elsewhere
sends it soon to the stateless decision, and an audit lock held elsewhere spools its
record (:mod:`forge_policy.audit.jsonl`). A state lock not had before the deadline (an agent
holding it, say) is decided statelessly on the session rebuilt from the audit log, its spool
included (so holding the locks hides no count and stops no escalation), and audited
``degraded``; when the log cannot be read either, at each behavior's highest level below
hard_block. Those records are the session's: the next transaction (and :meth:`status`) folds
them into the stored state, each as one more increment (its counter, read from the log, may
repeat one a transaction holding the lock counted at the same moment: SPEC §4, never lose one).

**The seen record.** With ``record_calls`` (the hook's evaluator, unless a configuration layer
says ``coverage: false``) every PreToolUse also appends a ``seen`` record after its decision,
the allow path included (which otherwise writes nothing): the trace that tells a call the hook
decided from one whose hook never ran (:mod:`forge_policy.ops.coverage`). It is written outside
the transaction, without an fsync, waiting at most :data:`SEEN_WAIT` for the audit lock, and a
failure to write it only adds a diagnostic.
"""

from __future__ import annotations

import os
import time
from collections.abc import Mapping, Sequence

import attrs

from forge_policy._budget import no_wait
from forge_policy._infra.answer_first import defer
from forge_policy._lazy import kept
from forge_policy._time import iso
from forge_policy.audit.base import write
from forge_policy.catalog.behavior import DEFAULT_PROFILE
from forge_policy.engine import session
from forge_policy.engine.decide import Outcome, decide
from forge_policy.engine.inputs import (
    DEFAULT_GRANT_SECONDS,
    DEFAULT_TTL,
    DEFAULT_WINDOW,
    FactCache,
    Settings,
)
from forge_policy.engine.overrides import harness_auto_approval
from forge_policy.engine.records import agent_fields, mcp_reading
from forge_policy.engine.session import RECONCILE_MARGIN, Base
from forge_policy.errors import AuditError, StoreError
from forge_policy.model import OVERRIDE_BY_USER, Decision, Event
from forge_policy.state import SessionState
from forge_policy.stores.base import read_only

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from forge_policy.audit.base import AuditSink
    from forge_policy.catalog.catalog import Catalog
    from forge_policy.engine.bypass import Bypass
    from forge_policy.engine.candidate import Candidate
    from forge_policy.engine.overrides import AutoApprove
    from forge_policy.engine.reports import ExplainReport, OverrideGrant, Status
    from forge_policy.stores.base import RuntimeStore

    FactProvider = Callable[[Event], object]
    #: Called with each decision :meth:`Evaluator.evaluate` made and the seconds it took.
    DecisionObserver = Callable[[Decision, float], object]

# settings, the fact cache and decide have their own modules (engine.inputs, engine.decide)
__all__ = ["RECONCILE_MARGIN", "Evaluator", "random_id"]

#: The longest wait (seconds) for the audit lock to append a ``seen`` record.
SEEN_WAIT = 0.1
#: The view of a state that cannot be read (decided in the transaction, or statelessly).
_UNREADABLE: Any = object()


def random_id() -> str:
    """16 random hex digits (the default ``random_id`` of an :class:`Evaluator`)."""
    return os.urandom(8).hex()


class Evaluator:
    """Evaluates events against a catalog, keeping per-session state in a store.

    **Thread-safe.** One evaluator may be shared by many threads (the warm worker and
    ``forge-policy serve`` do): it holds no per-call state (each :meth:`evaluate` has its own
    :class:`~forge_policy.engine.inputs.FactCache` and base state), its attributes are not
    changed after construction, and what an evaluation changes goes through the store's
    transaction, which serialises per session, and the audit sink, which appends under its own
    lock. Calls of one session from several threads are decided one after another, in the
    order their transactions run. (The store and sink must be thread-safe themselves: the
    built-in ones are; a custom fact provider must be too.)

    >>> import forge_policy as fp
    >>> ev = fp.Evaluator(fp.builtin_catalog(), clock=lambda: 1000.0)
    >>> d = ev.evaluate(fp.Event("PreToolUse", "s1", tool_name="Bash",
    ...                          tool_input={"command": "git push --force"}))
    >>> d.outcome, d.blocked, d.override_allowed
    ('hard_block', True, False)
    """

    def __init__(
        self,
        catalog: Catalog,
        *,
        store: RuntimeStore | None = None,
        audit: AuditSink | None = None,
        clock: Callable[[], float] = time.time,
        profile: str = DEFAULT_PROFILE,
        ttl: float = DEFAULT_TTL,
        override_window: float = DEFAULT_WINDOW,
        grant_seconds: float = DEFAULT_GRANT_SECONDS,
        facts: Mapping[str, FactProvider] | None = None,
        record_violations: bool = True,
        auto_approve: AutoApprove | None = harness_auto_approval,
        random_id: Callable[[], str] = random_id,
        disable: Mapping[str, str] | None = None,
        exceptions: Sequence[Any] = (),
        notices: Sequence[str] = (),
        notice_records: Callable[[Event], list[dict[str, Any]]] | None = None,
        candidate: Candidate | None = None,
        record_calls: bool = False,
        observers: Sequence[DecisionObserver] = (),
    ) -> None:
        """``grant_seconds``: how long an explicit grant lives (``FORGE_GRANT_SECONDS``).
        ``clock`` and ``random_id`` (the ids of explicit grants) are injected so a run can
        be replayed; ``auto_approve`` is the harness rule that may let an ask through without
        asking (default: the event's harness's own, i.e. Claude Code's ``bypassPermissions``;
        None: always ask). ``disable`` (behavior id -> the variable naming it, as
        ``FORGE_DISABLE`` gives) switches behaviors off for this evaluator: each event where a
        switched-off behavior would have fired is recorded as a ``bypass``
        (:mod:`forge_policy.engine.bypass`). ``exceptions`` (the configuration's
        :class:`~forge_policy.config.layers.ExceptionRule` values): an event one matches is
        allowed for that behavior, and each use is recorded as an ``exception``
        (:mod:`forge_policy.engine.exceptions`). ``notices``: what every decision tells the
        user about the engine itself (a last known good catalog or configuration enforcing,
        SPEC §10), and ``notice_records(event)`` the audit records that go with them, written
        beside the decision (it returns each distinct one once:
        :mod:`forge_policy.config.last_good`). ``candidate``: a candidate catalog decided beside
        every event, that never changes a decision (:mod:`forge_policy.engine.candidate`).
        ``record_calls``: append a ``seen`` record (:class:`forge_policy.audit.records.Seen`)
        for every PreToolUse, whatever its outcome, so that a call the hook decided can be told
        from one it never saw (:mod:`forge_policy.ops.coverage`); the hook's evaluator sets it
        unless a configuration layer says ``coverage: false``. ``observers``: called after each
        decision is made, with it and the seconds :meth:`evaluate` took (the OpenTelemetry
        spans and metrics of :mod:`forge_policy.telemetry`); they see the decision, never
        change it, and one that raises leaves it standing, with a diagnostic."""
        if store is None:
            from forge_policy.stores.memory import MemoryStore

            store = MemoryStore()
        if audit is None:
            from forge_policy.audit.memory import MemoryAuditSink

            audit = MemoryAuditSink()
        self.bypass: Bypass | None = None
        if disable:
            from forge_policy.engine.bypass import Bypass

            self.bypass = Bypass(catalog, disable)
            catalog = self.bypass.catalog
        self.catalog = catalog
        self.store = store
        self.audit = audit
        self.clock = clock
        self.random_id = random_id
        self.auto_approve = auto_approve
        self.settings = Settings(
            ttl=ttl,
            override_window=override_window,
            grant_seconds=grant_seconds,
            profile=profile,
            record_violations=record_violations,
            exceptions=tuple(exceptions),
        )
        from forge_policy.facts import FactRegistry

        # the built-in providers (SPEC §6), overridden by name by the caller's own
        registry = FactRegistry.with_builtins()
        for name, provider in (facts or {}).items():
            registry.register(name, provider)
        self.facts: Mapping[str, FactProvider] = registry
        self.notices = tuple(notices)
        self.notice_records = notice_records
        self.candidate = candidate
        self.record_calls = record_calls
        self.observers = tuple(observers)

    def evaluate(self, event: Event, *, facts: FactCache | None = None) -> Decision:
        """Decide one event and record its effects in one store transaction (and its
        ``bypass`` records, when a switched-off behavior would have fired).

        Fact providers run at most once per event, even when the transaction is retried.
        ``facts``: this event's fact cache, to share values already computed for it (a replay
        deciding one event under two catalogs); by default a new one, this call's own.
        """
        started = time.perf_counter()
        now = self.clock()
        if facts is None:
            facts = FactCache(event, self.facts)
        try:  # read without a lock
            view: SessionState | None = read_only(self.store, event.session_id)
        except (StoreError, OSError):
            view = _UNREADABLE
        bypassed = self._bypassed(event, view, now, facts)
        if self.settings.exceptions:
            bypassed += self._excepted(event, view, now, facts)
        decision = self._evaluate(event, view, now, facts)
        if self.notices:
            decision = self._noticed(decision, event)
        if bypassed:
            decision = _with_bypasses(self.audit, decision, bypassed)
        if self.candidate is not None:  # after the decision, which it never changes
            decision = self.candidate.observe(event, decision, facts, self.audit)
        if self.record_calls and event.event_name == "PreToolUse":
            decision = _with_seen(self.audit, decision, event, now)
        if self.observers:
            decision = self._observed(decision, time.perf_counter() - started)
        return decision

    def _observed(self, decision: Decision, seconds: float) -> Decision:
        """Hand ``decision`` to each observer; one that raises leaves it standing, with a
        diagnostic (an observer sees decisions, it never makes or blocks one)."""
        notes: tuple[str, ...] = ()
        for observer in self.observers:
            try:
                observer(decision, seconds)
            except Exception as exc:
                notes += (f"decision observer failed ({type(exc).__name__}: {exc})",)
        if not notes:
            return decision
        return attrs.evolve(decision, diagnostics=(*decision.diagnostics, *notes))

    def _noticed(self, decision: Decision, event: Event) -> Decision:
        """``decision`` with this evaluator's notices, their audit records written (a failure
        to write them leaves the decision, with a diagnostic)."""
        notes = decision.diagnostics
        if self.notice_records is not None:
            try:
                records = self.notice_records(event)
                if records:
                    write(self.audit, records)
            except (AuditError, OSError) as exc:
                notes = (*notes, f"audit record not written ({type(exc).__name__}: {exc})")
        return attrs.evolve(decision, notices=self.notices, diagnostics=notes)

    def _excepted(
        self, event: Event, view: SessionState | None, now: float, facts: FactCache
    ) -> list[dict[str, Any]]:
        """The ``exception`` records of ``event``: one per behavior an exception lets through
        (the behavior dry-run without it on the state before the event gives a violation)."""
        from forge_policy.engine.exceptions import excepted, records

        used = excepted(self.settings.exceptions, event, now)
        if not used:
            return []
        from forge_policy.catalog.catalog import Catalog

        stored = None if view is _UNREADABLE else view
        settings = attrs.evolve(self.settings, exceptions=())
        before = Base(self.audit, event.session_id, stored, now, settings).state
        found: list[dict[str, Any]] = []
        for behavior_id in used:
            behavior = self.catalog.get(behavior_id)
            if behavior is None or not behavior.enabled:
                continue
            dry = Catalog([behavior])
            rule = self.auto_approve
            outcome = decide(dry, event, before, now, settings, facts, auto_approve=rule)
            found += records(used, outcome.decision.violations, event, now)
        return found

    def _bypassed(
        self, event: Event, view: SessionState | None, now: float, facts: FactCache
    ) -> list[dict[str, Any]]:
        """The ``bypass`` records of ``event`` (dry runs on the state before it)."""
        if self.bypass is None:
            return []
        stored = None if view is _UNREADABLE else view
        before = Base(self.audit, event.session_id, stored, now, self.settings).state
        return self.bypass.records(event, before, now, self.settings, facts, self.auto_approve)

    def _evaluate(
        self, event: Event, view: SessionState | None, now: float, facts: FactCache
    ) -> Decision:
        early = None
        if view is not _UNREADABLE:
            try:
                early = self._decide_read_only(event, view, now, facts)
            except AuditError:  # no state and an unreadable log: the transaction fails closed
                early = None
            if early is not None and early[1] is None:
                return early[0].decision  # the allow path: no lock, no copy, no write
        hard = self._hard_blocked(event, early, now, facts)
        audited: list[Outcome] = []

        def apply(current: SessionState | None) -> tuple[Outcome, SessionState | None]:
            if early is not None and _same(view, current):
                outcome, state = early  # decided on this very state already
            else:
                outcome, state = self._decide(event, current, now, facts)
            if state is None:
                return outcome, None  # the allow path writes nothing
            state.touch(now)
            records = outcome.audit if outcome.effects else None
            if records:
                denial = _lets_nothing_run(outcome.decision)
                self._audit_first(records, state, event.session_id, now, denial=denial)
                audited.append(outcome)
            return outcome, state

        # ``apply`` never changes the state it is given (Base decides on it and changes a
        # copy): a store that can lend its own document uncopied is asked to. Asked of its
        # class: a wrapper forwarding attributes (``__getattr__``) keeps its own transact
        store = self.store
        lends = getattr(type(store), "transact_borrowed", None) is not None
        transact = getattr(store, "transact_borrowed") if lends else store.transact  # noqa: B009
        try:
            if hard:  # a hard block never waits for a lock (SPEC §9)
                with no_wait():
                    return transact(event.session_id, apply).decision
            return transact(event.session_id, apply).decision
        except (StoreError, AuditError, OSError) as exc:
            if audited:  # the log holds this decision: answering otherwise would contradict it
                return _logged_not_written(audited[-1].decision, exc)
            if hard:
                with no_wait():
                    return self._stateless(event, now, exc, facts)
            return self._stateless(event, now, exc, facts)

    def _hard_blocked(
        self,
        event: Event,
        early: tuple[Outcome, SessionState | None] | None,
        now: float,
        facts: FactCache,
    ) -> bool:
        """Whether the call is hard-blocked whatever the session holds: decided on the state
        read without a lock, else (unreadable, or an override could consume something) on a new
        session, where only a behavior that hard-blocks by default can hard-block. Only how
        long locks are waited for depends on it; the decision itself is the transaction's."""
        if early is not None:
            return early[0].decision.outcome == "hard_block"
        fresh = SessionState.new(now)
        outcome = decide(
            self.catalog, event, fresh, now, self.settings, facts, auto_approve=self.auto_approve
        )
        return outcome.decision.outcome == "hard_block"

    def _audit_first(
        self,
        records: list[dict[str, Any]],
        state: SessionState,
        session_id: str,
        now: float,
        *,
        denial: bool,
    ) -> None:
        """Append a decision's records (the source of truth, before the state) and keep in
        the state where the log stood after them: its checkpoint
        (:func:`~forge_policy.audit.integrity.append_checkpointed`). ``denial``: the decision
        lets nothing run, so a warm answer need not wait for the records' fsync
        (:mod:`forge_policy._infra.answer_first`)."""
        from forge_policy.audit.integrity import append_checkpointed

        seen = state.audit_checkpoint
        checkpoint = append_checkpointed(self.audit, records, seen, session_id, now, denial=denial)
        if checkpoint is not None:
            state.set_audit_checkpoint(*checkpoint)

    def _decide_read_only(
        self, event: Event, current: SessionState | None, now: float, facts: FactCache
    ) -> tuple[Outcome, SessionState | None] | None:
        """Decide on a read-only view of the state (no lock, no copy): ``(outcome, state to
        write)``, the last None when the decision changes nothing — then it is final, since a
        lockless read of a committed state is one serial order of the transactions and a
        decision that writes nothing needs no other (SPEC §3.8 is about lost writes). The
        transaction reuses the outcome when it reads the same state. None: decide in the
        transaction only (an override may consume something: that decision catches up with
        the audit log first)."""
        base = Base(self.audit, event.session_id, current, now, self.settings)
        if base.consumable(event, self.settings.override_window):
            return None
        return self._decide_on(event, base, facts)

    def _decide(
        self, event: Event, current: SessionState | None, now: float, facts: FactCache
    ) -> tuple[Outcome, SessionState | None]:
        """Decide ``event`` against the stored ``current`` state (never changed); return the
        outcome and the state to write (its effects applied), or None when nothing changed and
        no touch is due. When ``current`` holds something an override could consume, it is
        first brought up to the audit log: a crash between an earlier audit write and its
        state write must not let one block be overridden twice."""
        base = Base(self.audit, event.session_id, current, now, self.settings)
        window = self.settings.override_window
        if base.consumable(event, window):
            base.catch_up_window(window)
        return self._decide_on(event, base, facts)

    def _decide_on(
        self, event: Event, base: Base, facts: FactCache
    ) -> tuple[Outcome, SessionState | None]:
        """Decide on ``base``; when the decision depends on records the base has not seen
        (:meth:`~forge_policy.engine.session.Base.catch_up`), on the caught-up base."""
        outcome = self._run(event, base.state, base.now, facts)
        if base.catch_up(outcome.effects):
            outcome = self._run(event, base.state, base.now, facts)
        return outcome, base.written(outcome.effects, self.settings.touch_interval)

    def _run(self, event: Event, state: SessionState, now: float, facts: FactCache) -> Outcome:
        rule = self.auto_approve
        return decide(self.catalog, event, state, now, self.settings, facts, auto_approve=rule)

    def reconcile(self, session_id: str) -> list[str]:
        """Bring a session's state up to the audit log (SPEC §4 triple write); idempotent.

        Returns the override ids that were missing from the state.
        """

        def apply(current: SessionState | None) -> tuple[list[str], SessionState | None]:
            if current is None:
                return [], None
            state = current.copy()
            added = session.reconcile(self.audit, state, session_id)
            return added, (state if state.data != current.data else None)

        return self.store.transact(session_id, apply)

    def _stateless(self, event: Event, now: float, error: Exception, facts: FactCache) -> Decision:
        """SPEC §9: the state cannot be read or written. The session is rebuilt from the audit
        log (the source of truth) and decided on that, written nowhere; when the log cannot be
        read either, every behavior decides at the highest level its ladder reaches below
        hard_block (fail closed). Either way every violation is audited, marked ``degraded``, so
        that no count is lost. Reuses the event's ``facts``: providers run once per event."""
        ttl = self.settings.ttl
        state, how, mark = session.rebuilt(self.audit, self.catalog, event.session_id, now, ttl)
        facts.diagnostics.insert(
            0, f"session state unavailable ({type(error).__name__}: {error}); {how}"
        )
        settings = attrs.evolve(self.settings, record_violations=True)
        rule = self.auto_approve
        outcome = decide(self.catalog, event, state, now, settings, facts, auto_approve=rule)
        records = [{**record, "degraded": mark} for record in outcome.audit]
        if records:
            try:
                write(self.audit, records)
            except (AuditError, OSError) as exc:
                facts.diagnostics.append(f"not audited ({type(exc).__name__}: {exc})")
        return outcome.decision

    def explain(self, event: Event) -> ExplainReport:
        """A dry run: every behavior, trigger and condition with its result. Changes nothing.

        >>> import forge_policy as fp
        >>> ev = fp.Evaluator(fp.builtin_catalog())
        >>> report = ev.explain(fp.Event("PreToolUse", "s1", tool_name="Bash",
        ...                              tool_input={"command": "git reset --hard"}))
        >>> report.decision.outcome, ev.status("s1").exists
        ('hard_block', False)
        """
        from forge_policy.engine.queries import explain

        return explain(self, event)

    def override(
        self, session_id: str, behavior_id: str, *, reason: str = "", call: str = ""
    ) -> OverrideGrant:
        """Grant a one-shot pass for the next soft-blocked call of a behavior (SPEC §4, explicit).

        The grant lives ``grant_seconds`` (``FORGE_GRANT_SECONDS``, 600 s) and is audited when
        given (a ``grant`` record) and when used (an ``explicit`` override naming it). Without
        ``call`` it lets through the next call of the behavior that would be soft-blocked (a
        retry of a call blocked within the override window passes by retry and leaves it);
        with ``call``, the short id a soft block named its call by (``Violation.call_id``),
        only a retry of that exact call, whatever else is blocked in between. Refused
        (``ValueError``) for a behavior that can never be overridden (it hard-blocks by
        default, has reached hard_block in this session, or never reaches soft_block) and for
        a ``call`` that is not one of the behavior's recent soft-blocked calls (the message
        names those). Every refusal is a :class:`~forge_policy.errors.Refused` (a ``ValueError``
        too); an unknown behavior an :class:`~forge_policy.errors.UnknownBehavior` (a
        ``KeyError`` too): both are :class:`~forge_policy.ForgePolicyError`.

        >>> import forge_policy as fp
        >>> ev = fp.Evaluator(fp.builtin_catalog(), clock=lambda: 0.0)
        >>> grant = ev.override("s1", "search-first", reason="user approved")
        >>> grant.behavior_id, grant.valid_until, grant.call_id
        ('search-first', '1970-01-01T00:10:00.000000+00:00', '')
        """
        from forge_policy.engine.queries import override

        return override(self, session_id, behavior_id, reason, call)

    def check_overridable(self, behavior_id: str) -> None:
        """Raise :class:`~forge_policy.errors.UnknownBehavior` (a ``KeyError``) for an unknown
        behavior, :class:`~forge_policy.errors.Refused` (a ``ValueError``) for one that can never be
        overridden in any session (hard_block by default, or never blocking)."""
        from forge_policy.engine.queries import check_overridable

        check_overridable(self.catalog, behavior_id)

    def status(self, session_id: str) -> Status:
        """Counters, levels, next thresholds, pending blocks and overrides of one session
        (an expired session has no live state).

        >>> import forge_policy as fp
        >>> ev = fp.Evaluator(fp.builtin_catalog())
        >>> _ = ev.evaluate(fp.Event("PreToolUse", "s1", tool_name="Bash",
        ...                          tool_input={"command": "git push --force"}))
        >>> row = ev.status("s1").behaviors["no-destructive-git"]
        >>> row.counter, row.level.label, row.blocks
        (1, 'hard_block', 1)
        """
        from forge_policy.engine.queries import status

        return status(self, session_id)


def _same(view: SessionState | None, current: SessionState | None) -> bool:
    """Whether the transaction read the state the read-only view showed."""
    if view is None or current is None:
        return view is current
    return view.data is current.data or view.data == current.data


def _with_bypasses(audit: AuditSink, decision: Decision, records: list[dict[str, Any]]) -> Decision:
    """``decision`` with its ``bypass`` records, appended to the log after it (a failure to
    append them leaves the decision, with a diagnostic)."""
    notes = decision.diagnostics
    try:
        write(audit, records)
    except (AuditError, OSError) as exc:
        notes = (*notes, f"audit record not written ({type(exc).__name__}: {exc})")
    return attrs.evolve(decision, diagnostics=notes, bypasses=tuple(records))


def _with_seen(audit: AuditSink, decision: Decision, event: Event, now: float) -> Decision:
    """``decision`` after its ``seen`` record was appended (a record of its own, after the
    decision's: the allow path writes nothing else). It waits at most :data:`SEEN_WAIT` for
    the audit lock (an agent holding it must not slow every call; the JSONL log spools the
    record) and for no fsync (:class:`~forge_policy.audit.base.Unsynced`: a power cut may lose
    it, and the call then shows as a gap); a failure to write it leaves the decision, with a
    diagnostic: it only says that the hook ran. In a warm answer it is written once the answer
    is out (:mod:`forge_policy._infra.answer_first`), a failure then reported by the worker."""
    if defer(lambda: _append_seen(audit, decision, event, now)):
        return decision
    try:
        _append_seen(audit, decision, event, now)
    except (AuditError, OSError) as exc:
        note = f"seen record not written ({type(exc).__name__}: {exc})"
        return attrs.evolve(decision, diagnostics=(*decision.diagnostics, note))
    return decision


def _append_seen(audit: AuditSink, decision: Decision, event: Event, now: float) -> None:
    Seen, to_dict = _seen()
    record = Seen(
        timestamp=iso(now),
        session_id=event.session_id,
        harness=event.harness,
        tool_name=event.tool_name,
        tool_use_id=event.tool_use_id,
        digest=event.call_hash()[:16],
        outcome=decision.outcome,
        **agent_fields(event),
        reading=mcp_reading(event),  # an MCP tool's: what doctor reports
    )
    with no_wait(SEEN_WAIT):
        write(audit, [to_dict(record)], durable=False)  # no fsync on the allow path


@kept
def _seen() -> tuple[Any, Any]:
    from forge_policy.audit.records import Seen, to_dict

    return (Seen, to_dict)


def _lets_nothing_run(decision: Decision) -> bool:
    """Whether ``decision`` refuses its call with no one to approve it in the harness: a block
    whose override is not the user's (an ``ask`` prompt the user may approve lets it run)."""
    blocking = decision.blocking
    return blocking is not None and blocking.override_mode != OVERRIDE_BY_USER


def _logged_not_written(decision: Decision, exc: Exception) -> Decision:
    note = (
        f"session state not written ({type(exc).__name__}: {exc}); the audit log "
        "holds this decision and the state is reconciled from it"
    )
    return attrs.evolve(decision, diagnostics=(*decision.diagnostics, note))
