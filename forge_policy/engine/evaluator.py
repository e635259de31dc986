"""The :class:`Evaluator`: one store transaction per event, the audit log written first.

What is decided lives in :func:`forge_policy.engine.decide.decide` (pure, SPEC §3) and
:mod:`forge_policy.engine.overrides` (SPEC §4); the evaluator loads the session state, brings it
up to the audit log when an override could consume something of it, decides once, appends the
audit records (fsynced: the source of truth), then applies the effects and writes the state. When
the state cannot be read or written it decides on the session rebuilt from the audit log, or, when
that cannot be read either, at each behavior's highest level below hard_block (SPEC §9).
"""

from __future__ import annotations

import os
import time
from collections.abc import Mapping

import attrs

from forge_policy.catalog.behavior import DEFAULT_PROFILE
from forge_policy.engine.decide import Outcome, could_override, decide
from forge_policy.engine.effects import CountViolation, apply_effects
from forge_policy.engine.inputs import (
    DEFAULT_TTL,
    DEFAULT_WINDOW,
    FactCache,
    Settings,
)
from forge_policy.engine.overrides import harness_auto_approval
from forge_policy.errors import AuditError, StoreError
from forge_policy.levels import Level
from forge_policy.model import Decision, Event
from forge_policy.state import Grant, SessionState
from forge_policy.stores.base import read_only

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from forge_policy.audit.base import AuditSink
    from forge_policy.catalog.behavior import Behavior
    from forge_policy.catalog.catalog import Catalog
    from forge_policy.engine.overrides import AutoApprove
    from forge_policy.engine.reports import ExplainReport, OverrideGrant, Status
    from forge_policy.stores.base import RuntimeStore

    FactProvider = Callable[[Event], object]

# settings, the fact cache and decide have their own modules (engine.inputs, engine.decide)
__all__ = ["RECONCILE_MARGIN", "Evaluator", "random_id"]

#: Seconds allowed between a decision and its audit append (lock waits), when reconciling.
RECONCILE_MARGIN = 30.0


def _highest_below_hard(behavior: Behavior) -> Level:
    """The level a behavior fails closed at: the highest its ladder reaches below hard_block
    (hard_block itself for a behavior that starts there)."""
    if behavior.default_level is Level.HARD_BLOCK:
        return Level.HARD_BLOCK
    below = [step.level for step in behavior.escalation if step.level < Level.HARD_BLOCK]
    return max([behavior.default_level, *below])


def _same(view: SessionState | None, current: SessionState | None) -> bool:
    """Whether the transaction read the state the read-only view showed."""
    if view is None or current is None:
        return view is current
    return view.data == current.data


def random_id() -> str:
    """16 random hex digits (the default ``random_id`` of an :class:`Evaluator`)."""
    return os.urandom(8).hex()


class Evaluator:
    """Evaluates events against a catalog, keeping per-session state in a store.

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
        facts: Mapping[str, FactProvider] | None = None,
        record_violations: bool = True,
        auto_approve: AutoApprove | None = harness_auto_approval,
        random_id: Callable[[], str] = random_id,
    ) -> None:
        """``clock`` and ``random_id`` (the ids of explicit grants) are injected so a run can
        be replayed; ``auto_approve`` is the harness rule that may let an ask through without
        asking (default: the event's harness's own, i.e. Claude Code's ``bypassPermissions``;
        None: always ask)."""
        if store is None:
            from forge_policy.stores.memory import MemoryStore

            store = MemoryStore()
        if audit is None:
            from forge_policy.audit.memory import MemoryAuditSink

            audit = MemoryAuditSink()
        self.catalog = catalog
        self.store = store
        self.audit = audit
        self.clock = clock
        self.random_id = random_id
        self.auto_approve = auto_approve
        self._primed: tuple[Event, FactCache] | None = None
        self.settings = Settings(
            ttl=ttl,
            override_window=override_window,
            profile=profile,
            record_violations=record_violations,
        )
        from forge_policy.facts import FactRegistry

        # the built-in providers (SPEC §6), overridden by name by the caller's own
        registry = FactRegistry.with_builtins()
        for name, provider in (facts or {}).items():
            registry.register(name, provider)
        self.facts: Mapping[str, FactProvider] = registry

    def _expired(self, state: SessionState, now: float) -> bool:
        return state.expired(now, self.settings.ttl)

    def _fresh_or_current(self, current: SessionState | None, now: float) -> SessionState:
        if current is None or self._expired(current, now):
            return SessionState.new(now)
        return current.copy()

    def evaluate(self, event: Event) -> Decision:
        """Decide one event and record its effects in one store transaction.

        Fact providers run at most once per event, even when the transaction is retried.
        """
        now = self.clock()
        facts = self._facts_for(event)
        early = self._decide_read_only(event, now, facts)
        if early is not None and early[2] is None:
            return early[1].decision  # the allow path: no lock, no copy, no write
        audited: list[Outcome] = []

        def apply(current: SessionState | None) -> tuple[Outcome, SessionState | None]:
            if early is not None and _same(early[0], current):
                outcome, state = early[1], early[2]  # decided on this very state already
            else:
                outcome, state = self._decide(event, current, now, facts)
            if state is None:
                return outcome, None  # the allow path writes nothing
            state.touch(now)
            if outcome.effects:
                records = outcome.audit
                if records:
                    self._audit_first(records, state, event.session_id, now)
                    audited.append(outcome)
            return outcome, state

        try:
            outcome = self.store.transact(event.session_id, apply)
        except (StoreError, AuditError, OSError) as exc:
            if audited:
                # the log already holds this decision; answering differently would contradict it
                decision = audited[-1].decision
                note = (
                    f"session state not written ({type(exc).__name__}: {exc}); the audit log "
                    "holds this decision and the state is reconciled from it"
                )
                return attrs.evolve(decision, diagnostics=(*decision.diagnostics, note))
            return self._stateless(event, now, exc, facts)
        return outcome.decision

    def _audit_first(
        self, records: list[dict[str, Any]], state: SessionState, session_id: str, now: float
    ) -> None:
        """Append a decision's records (the source of truth, before the state) and keep in
        the state where the log stood after them: its checkpoint. A log that holds fewer
        records than this session last saw lost some (truncated, or deleted with its anchor
        and started anew): that is appended as an ``integrity`` record, which keeps
        ``audit --verify`` failing, never repaired into a "recovery"."""
        from forge_policy.audit.base import checkpointed, write

        write(self.audit, records)
        sink = checkpointed(self.audit)
        appended = sink.last_append if sink is not None else None
        if sink is None or appended is None:
            return
        seen = state.audit_checkpoint
        if seen is not None and (appended.before < seen[0] or appended.origin != seen[2]):
            from forge_policy._time import iso
            from forge_policy.audit.verify import INTEGRITY

            note = (
                f"the audit log held {appended.before} records when session {session_id!r} "
                f"had seen it reach seq {seen[0]}"
                + ("" if appended.origin == seen[2] else ", and it starts with another record")
                + ": records were removed or the log was replaced"
            )
            write(
                self.audit,
                [
                    {
                        "kind": INTEGRITY,
                        "timestamp": iso(now),
                        "session_id": session_id,
                        "reason": note,
                        "checkpoint_seq": seen[0],
                        "log_seq": appended.before,
                    }
                ],
            )
            appended = sink.last_append or appended
        state.set_audit_checkpoint(appended.seq, appended.hash, appended.origin)

    def _decide_read_only(
        self, event: Event, now: float, facts: FactCache
    ) -> tuple[SessionState | None, Outcome, SessionState | None] | None:
        """Decide on a read-only view of the state (no lock, no copy): ``(view, outcome, state
        to write)``, the last None when the decision changes nothing — then it is final, since
        a lockless read of a committed state is one serial order of the transactions and a
        decision that writes nothing needs no other (SPEC §3.8 is about lost writes). The
        transaction reuses the outcome when it reads the same state. None: decide in the
        transaction only (the view could not be read, or an override may consume something:
        that decision reconciles with the audit log first)."""
        try:
            current = read_only(self.store, event.session_id)
        except (StoreError, OSError):
            return None  # the transaction meets it too, and decides statelessly
        fresh = current is None or self._expired(current, now)
        window = self.settings.override_window
        if current is not None and not fresh and could_override(current, event, now, window):
            return None
        outcome, state = self._decide(event, current, now, facts, fresh=fresh, consumable=False)
        return current, outcome, state

    def facts_for(self, event: Event) -> FactCache:
        """The fact cache the next :meth:`evaluate` of this very ``event`` object will use
        (once): a dry run before it (``FORGE_DISABLE`` bypass records) shares the facts it
        computed, so each provider runs at most once per event."""
        primed = self._primed
        if primed is not None and primed[0] is event:
            return primed[1]
        facts = FactCache(event, self.facts)
        self._primed = (event, facts)
        return facts

    def _facts_for(self, event: Event) -> FactCache:
        primed, self._primed = self._primed, None
        if primed is not None and primed[0] is event:
            return primed[1]
        return FactCache(event, self.facts)

    def _decide(
        self,
        event: Event,
        current: SessionState | None,
        now: float,
        facts: FactCache,
        *,
        fresh: bool | None = None,
        consumable: bool | None = None,
    ) -> tuple[Outcome, SessionState | None]:
        """Decide ``event`` against the stored ``current`` state; return the outcome and the
        state to write (its effects applied), or None when nothing changed and no touch is due.

        ``current`` is never changed. When it holds something an override could consume, it is
        first brought up to the audit log: a crash between an earlier audit write and its
        state write must not let one block be overridden twice. ``fresh`` (the state is missing
        or expired) and ``consumable`` (:func:`could_override`) are given when already known.
        """
        settings = self.settings
        if fresh is None:
            fresh = current is None or self._expired(current, now)
        base = SessionState.new(now) if current is None or fresh else current
        caught_up_since = float("inf")  # records from then on are in ``base``
        if current is not None and not fresh:
            window = settings.override_window
            if consumable is None:
                consumable = could_override(current, event, now, window)
            if consumable:
                reconciled = current.copy()
                # an override consumes a block or grant of the last window: only records of
                # that period can be missing from the state (with a margin for append delays)
                caught_up_since = now - window - RECONCILE_MARGIN
                self._reconcile(reconciled, event.session_id, caught_up_since)
                if reconciled.data != current.data:  # a lost override or block was replayed
                    base = reconciled
        outcome = decide(
            self.catalog, event, base, now, settings, facts, auto_approve=self.auto_approve
        )
        if current is not None and not fresh and _counts(outcome):
            # a count builds on every violation the log holds: one decided while the state
            # could not be written (a lock past its timeout, a broken store) or lost to a
            # crash before its state write was appended after the state's last write
            since = current.last_accessed_at - RECONCILE_MARGIN
            if since < caught_up_since:
                caught_up = base.copy()
                self._reconcile(caught_up, event.session_id, since)
                if caught_up.data != base.data:
                    base = caught_up
                    outcome = decide(
                        self.catalog,
                        event,
                        base,
                        now,
                        settings,
                        facts,
                        auto_approve=self.auto_approve,
                    )
        if current is None and outcome.effects:
            # no state at all (never seen, or lost: moved aside as corrupt, of another version,
            # deleted): what this event counts must build on what the log holds (SPEC §9: never
            # a silent reset); an expired state is a real reset and is not rebuilt
            rebuilt = self._rebuilt_if_logged(event.session_id, now)
            if rebuilt is not None:
                base = rebuilt
                outcome = decide(
                    self.catalog, event, base, now, settings, facts, auto_approve=self.auto_approve
                )
        if current is None or fresh:
            if not outcome.effects:
                return outcome, None
            apply_effects(base, outcome.effects)
            changed = bool(base.flags or base.totals or base.behavior_ids())
            return outcome, (base if changed else None)
        touch_due = now - current.last_accessed_at >= settings.touch_interval
        if base is current and not outcome.effects:  # the allow path: no copy, no compare
            return outcome, (current.copy() if touch_due else None)
        state = base if base is not current else current.copy()
        apply_effects(state, outcome.effects)
        return outcome, (state if touch_due or state.data != current.data else None)

    def _reconcile(
        self, state: SessionState, session_id: str, since: float | None = None
    ) -> list[str]:
        from forge_policy.audit.base import recent_records, session_records
        from forge_policy.engine.reconcile import reconcile_session

        if since is None:
            return reconcile_session(state, session_records(self.audit, session_id))
        return reconcile_session(state, recent_records(self.audit, session_id, since))

    def reconcile(self, session_id: str) -> list[str]:
        """Bring a session's state up to the audit log (SPEC §4 triple write); idempotent.

        Returns the override ids that were missing from the state.
        """

        def apply(current: SessionState | None) -> tuple[list[str], SessionState | None]:
            if current is None:
                return [], None
            state = current.copy()
            added = self._reconcile(state, session_id)
            return added, (state if state.data != current.data else None)

        return self.store.transact(session_id, apply)

    def _stateless(self, event: Event, now: float, error: Exception, facts: FactCache) -> Decision:
        """SPEC §9: the state cannot be read or written. The session is rebuilt from the audit
        log (the source of truth) and decided on that, written nowhere; when the log cannot be
        read either, every behavior decides at the highest level its ladder reaches below
        hard_block (fail closed). Either way every violation is audited, marked ``degraded``, so
        that no count is lost. Reuses the event's ``facts``: providers run once per event."""
        state, how, mark = self._rebuilt(event.session_id, now)
        facts.diagnostics.insert(
            0, f"session state unavailable ({type(error).__name__}: {error}); {how}"
        )
        settings = attrs.evolve(self.settings, record_violations=True)
        outcome = decide(
            self.catalog, event, state, now, settings, facts, auto_approve=self.auto_approve
        )
        records = [{**record, "degraded": mark} for record in outcome.audit]
        if records:
            from forge_policy.audit.base import write

            try:
                write(self.audit, records)
            except (AuditError, OSError) as exc:
                facts.diagnostics.append(f"not audited ({type(exc).__name__}: {exc})")
        return outcome.decision

    def _from_log(self, session_id: str, now: float) -> tuple[SessionState, int]:
        """The session as its audit records of the last TTL make it, with how many records
        counted (blocks, violations, overrides); raises what the sink raises when the log
        cannot be read."""
        from forge_policy.audit.base import recent_records
        from forge_policy.engine.reconcile import reconcile_session

        state = SessionState.new(now - self.settings.ttl)
        records = [
            record
            for record in recent_records(self.audit, session_id, state.created_at)
            if record.get("kind") in ("block", "violation", "override")
        ]
        reconcile_session(state, records)
        return state, len(records)

    def _rebuilt_if_logged(self, session_id: str, now: float) -> SessionState | None:
        """:meth:`_from_log`, or None when the log holds nothing of the session (a new one:
        the common case) or cannot be read (the transaction goes on from a new state)."""
        from forge_policy.errors import ForgePolicyError

        try:
            state, counted = self._from_log(session_id, now)
        except (ForgePolicyError, OSError):
            return None
        return state if counted else None

    def _rebuilt(self, session_id: str, now: float) -> tuple[SessionState, str, str]:
        """:meth:`_from_log`, or the fail-closed state when the log cannot be read; with the
        diagnostic and the ``degraded`` mark of the records decided on it."""
        from forge_policy.errors import ForgePolicyError

        try:
            state, counted = self._from_log(session_id, now)
        except (ForgePolicyError, OSError) as exc:
            state = SessionState.new(now)
            for behavior in self.catalog.behaviors:
                state.behavior(behavior.id).effective_level = _highest_below_hard(behavior)
            how = (
                f"the audit log cannot be read either ({type(exc).__name__}); decided statelessly "
                "at each behavior's highest level below hard_block (fail closed)"
            )
            return state, how, "fail_closed"
        how = f"decided statelessly on the session rebuilt from the audit log ({counted} records)"
        return state, how, "rebuilt"

    def explain(self, event: Event) -> ExplainReport:
        """A dry run: every behavior, trigger and condition with its result. Changes nothing.

        >>> import forge_policy as fp
        >>> ev = fp.Evaluator(fp.builtin_catalog())
        >>> report = ev.explain(fp.Event("PreToolUse", "s1", tool_name="Bash",
        ...                              tool_input={"command": "git reset --hard"}))
        >>> report.decision.outcome, ev.status("s1").exists
        ('hard_block', False)
        """
        from forge_policy.engine.reports import explain_report

        now = self.clock()
        facts = FactCache(event, self.facts)
        state = self._fresh_or_current(self.store.load(event.session_id), now)
        outcome = decide(
            self.catalog,
            event,
            state,
            now,
            self.settings,
            facts,
            explain=True,
            auto_approve=self.auto_approve,
        )
        return explain_report(self.catalog, outcome.decision, outcome.trace)

    def override(self, session_id: str, behavior_id: str, *, reason: str = "") -> OverrideGrant:
        """Grant a one-shot pass for the next soft-blocked call of a behavior (SPEC §4, explicit).

        The grant is valid for the override window. If a blocked call of this behavior is waiting
        for its retry, the grant is spent on that retry (one block, one pass); otherwise on the
        next call that would be soft-blocked. The override is recorded (audit first, then state)
        when the call goes through. Refused (``ValueError``) for a behavior that can never be
        overridden: one that hard-blocks by default, has reached hard_block in this session, or
        never reaches soft_block.

        >>> import forge_policy as fp
        >>> ev = fp.Evaluator(fp.builtin_catalog(), clock=lambda: 0.0)
        >>> grant = ev.override("s1", "search-first", reason="user approved")
        >>> grant.behavior_id, grant.valid_until
        ('search-first', '1970-01-01T00:01:00.000000+00:00')
        """
        from forge_policy._time import iso
        from forge_policy.secrets import redact

        self.check_overridable(behavior_id)
        now = self.clock()
        reason = redact(reason)  # stored in the state, then in the audit record of its use
        granted_at, grant_id = iso(now), self.random_id()
        grant = Grant(at=now, reason=reason, granted_at=granted_at, grant_id=grant_id)

        def apply(current: SessionState | None) -> tuple[None, SessionState]:
            state = self._fresh_or_current(current, now)
            bstate = state.behavior(behavior_id)
            if bstate.effective_level is Level.HARD_BLOCK:
                raise ValueError(
                    f"{behavior_id} has reached hard_block in session {session_id}: "
                    "it has no override"
                )
            bstate.grant = grant
            state.touch(now)
            return None, state

        self.store.transact(session_id, apply)
        from forge_policy.engine.reports import OverrideGrant

        return OverrideGrant(
            grant_id=grant_id,
            session_id=session_id,
            behavior_id=behavior_id,
            reason=reason,
            granted_at=granted_at,
            valid_until=iso(now + self.settings.override_window),
        )

    def check_overridable(self, behavior_id: str) -> None:
        """Raise ``KeyError`` for an unknown behavior, ``ValueError`` for one that can never be
        overridden in any session (hard_block by default, or never blocking)."""
        behavior = self.catalog.get(behavior_id)
        if behavior is None:
            raise KeyError(f"unknown behavior {behavior_id!r}")
        if behavior.default_level is Level.HARD_BLOCK:
            raise ValueError(f"{behavior_id} is a hard_block behavior: it has no override")
        reachable = max([behavior.default_level, *(s.level for s in behavior.escalation)])
        if reachable < Level.SOFT_BLOCK:
            raise ValueError(
                f"{behavior_id} never blocks (it reaches {reachable.label} at most): "
                "there is nothing to override"
            )

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
        from forge_policy.engine.reports import status_of

        state = self.store.load(session_id)
        if state is not None and self._expired(state, self.clock()):
            state = None
        return status_of(self.catalog, session_id, state, self.settings.profile)


def _counts(outcome: Outcome) -> bool:
    """Whether a decision counts a violation (and so must build on the log's counts)."""
    return any(isinstance(effect, CountViolation) for effect in outcome.effects)
