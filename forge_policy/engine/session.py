"""Catch up: the one base state an event is decided on.

The evaluator appends audit records (fsynced: the source of truth) *before* it writes the session
state (SPEC §4 triple write), so a stored state can be behind its log: a crash between the two
writes, a decision made while the state could not be written (SPEC §9), a state that was lost
(moved aside as corrupt, of another version, deleted). :class:`Base` is where a stored state is
brought up to date from the log, in one place, before the decision that is written:

- a state missing or past its TTL is fresh (an expired session is a real reset, never rebuilt);
- a state holding a pending block or grant an override could consume is first caught up with
  the records of the last window (one block must not be overridden twice);
- when the decision counts a violation (or, for a missing state, changes anything), it must
  build on every count the log holds: :meth:`Base.catch_up` reads the records since the state
  was last written (the whole TTL for a missing state) and says whether the base changed.

Reading the log costs a read per event, so it is read only when a decision depends on it: the
evaluator decides (purely) on the stored state, and decides again only on a base that
:meth:`Base.catch_up` changed. When the state cannot be read at all, :func:`rebuilt` gives the
session as the log makes it, or the fail-closed state when the log cannot be read either.

>>> from forge_policy.audit.memory import MemoryAuditSink
>>> from forge_policy.engine.inputs import Settings
>>> base = Base(MemoryAuditSink(), "s1", None, 100.0, Settings())
>>> base.fresh, base.state.created_at, base.catch_up(())
(True, 100.0, False)
"""

from __future__ import annotations

from forge_policy.engine import effects as fx  # its classes load on first use
from forge_policy.engine.decide import could_override
from forge_policy.engine.effects import apply_effects
from forge_policy.engine.reconcile import RECONCILE_MARGIN as RECONCILE_MARGIN
from forge_policy.levels import Level
from forge_policy.state import RECONCILED_KEY, SessionState, is_expired

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence

    from forge_policy.audit.base import AuditSink
    from forge_policy.catalog.behavior import Behavior
    from forge_policy.catalog.catalog import Catalog
    from forge_policy.engine.effects import Effect
    from forge_policy.engine.inputs import Settings
    from forge_policy.model import Event


class Base:
    """The state one event is decided on: ``state`` (``current`` itself, never changed, until
    a catch-up replaces it with a copy), ``fresh`` (the stored one is missing or expired)."""

    __slots__ = (
        "_audit",
        "_caught_up_since",
        "_grant_seconds",
        "_last",
        "_ttl",
        "current",
        "fresh",
        "now",
        "session_id",
        "state",
    )

    def __init__(
        self,
        audit: AuditSink,
        session_id: str,
        current: SessionState | None,
        now: float,
        settings: Settings,
    ) -> None:
        self._audit = audit
        self._ttl = settings.ttl
        self._grant_seconds = settings.grant_seconds
        self.session_id = session_id
        self.current = current
        self.now = now
        # read once: ``current`` never changes, and the allow path asks for it twice
        self._last = current.last_accessed_at if current is not None else 0.0
        self.fresh = current is None or is_expired(self._last, now, settings.ttl)
        self.state = SessionState.new(now) if current is None or self.fresh else current
        self._caught_up_since = float("inf")  # records from then on are in ``state``

    def consumable(self, event: Event, window: float) -> bool:
        """Whether an override could consume something of the stored state
        (:func:`~forge_policy.engine.decide.could_override`)."""
        current = self.current
        return (
            current is not None
            and not self.fresh
            and could_override(current, event, self.now, window, self._grant_seconds)
        )

    def catch_up_window(self, window: float) -> None:
        """Bring the state up to the records of the last override ``window``: an override
        consumes a block or grant of that period, so only those records can be missing (with a
        margin for append delays); a grant lives longer (``FORGE_GRANT_SECONDS``), so its
        records are read back that far. Called when :meth:`consumable`."""
        reach = max(window, self._grant_seconds)
        self._catch_up_since(self.now - reach - RECONCILE_MARGIN)

    def catch_up(self, effects: Sequence[Effect]) -> bool:
        """After a decision with these ``effects``: bring the base up to the log where the
        decision depends on it, and say whether the base changed (then decide again on it).

        A count builds on every violation the log holds: one decided while the state could not
        be written (a lock past its timeout, a broken store) or lost to a crash before its
        state write was appended after the state's last write. With no state at all (never
        seen, or lost) what the event changes builds on the log of the last TTL (SPEC §9:
        never a silent reset)."""
        current = self.current
        if current is None:
            if not effects:
                return False
            rebuilt = rebuilt_if_logged(self._audit, self.session_id, self.now - self._ttl)
            if rebuilt is None:
                return False
            self.state = rebuilt
            return True
        if self.fresh or not any(isinstance(effect, fx._Counted) for effect in effects):
            return False
        since = self._last - RECONCILE_MARGIN
        return since < self._caught_up_since and self._catch_up_since(since)

    def _catch_up_since(self, since: float) -> bool:
        caught_up = self.state.derive()
        position = catch_up(self._audit, caught_up, self.session_id, since)
        self._caught_up_since = min(self._caught_up_since, since)
        changed = caught_up.data != self.state.data
        if position is not None:  # kept in the state written: the next catch-up starts there
            caught_up.set_reconciled(*position)
            self.state = caught_up
        elif changed:
            self.state = caught_up
        return changed

    def written(self, effects: Sequence[Effect], touch_interval: float) -> SessionState | None:
        """The state to write after a decision with these ``effects`` (applied to a copy, never
        to ``current``), or None when nothing changed and no touch is due."""
        current, state = self.current, self.state
        if current is None or self.fresh:
            if not effects:
                return None
            apply_effects(state, effects)
            changed = bool(state.flags or state.totals or state.behavior_ids() or state.agents)
            return state if changed else None
        touch_due = self.now - self._last >= touch_interval
        if state is current and not effects:  # the allow path: no copy, no compare
            return current.derive() if touch_due else None
        state = state if state is not current else current.derive()
        apply_effects(state, effects)
        return state if touch_due or _changed(state, current) else None


def _changed(state: SessionState, current: SessionState) -> bool:
    """Whether ``state`` differs from ``current`` in more than its catch-up position: a
    position alone is not worth a write (the next catch-up reads from the older one)."""
    new, old = state.data, current.data
    if new == old:
        return False
    if new.get(RECONCILED_KEY) == old.get(RECONCILED_KEY):
        return True
    return {k: v for k, v in new.items() if k != RECONCILED_KEY} != {
        k: v for k, v in old.items() if k != RECONCILED_KEY
    }


def reconcile(
    audit: AuditSink, state: SessionState, session_id: str, since: float | None = None
) -> list[str]:
    """Apply to ``state`` the session's records it is missing (all of them, or those from
    ``since`` on); return the override ids added (:func:`~forge_policy.engine.reconcile.
    reconcile_session`)."""
    from forge_policy.audit.base import recent_records, session_records
    from forge_policy.engine.reconcile import reconcile_session

    if since is None:
        return reconcile_session(state, session_records(audit, session_id))
    return reconcile_session(state, recent_records(audit, session_id, since))


def catch_up(
    audit: AuditSink, state: SessionState, session_id: str, since: float
) -> tuple[int, float, str] | None:
    """Apply to ``state`` the session's records from ``since`` on that it is missing, reading
    only those appended after the state's :attr:`~forge_policy.state.SessionState.reconciled`
    position when it has one that covers ``since`` (:func:`~forge_policy.audit.base.
    records_after`); return the position to keep in the state (None: the sink keeps none).
    """
    from forge_policy.audit.base import records_after
    from forge_policy.engine.reconcile import reconcile_session

    known = state.reconciled
    if known is not None and known[1] <= since:
        records, position = records_after(audit, session_id, known[1], (known[0], known[2]))
        start = known[1]
    else:
        records, position = records_after(audit, session_id, since)
        start = since
    reconcile_session(state, records)
    return (position[0], start, position[1]) if position is not None else None


def from_log(audit: AuditSink, session_id: str, born: float) -> tuple[SessionState, int]:
    """The session as its audit records since ``born`` make it, with how many records counted
    (blocks, violations, overrides); raises what the sink raises when the log cannot be read."""
    from forge_policy.audit.base import recent_records
    from forge_policy.engine.reconcile import reconcile_session

    state = SessionState.new(born)
    records = [
        record
        for record in recent_records(audit, session_id, born)
        if record.get("kind") in ("block", "violation", "override", "grant")
    ]
    reconcile_session(state, records)
    return state, len(records)


def rebuilt_if_logged(audit: AuditSink, session_id: str, born: float) -> SessionState | None:
    """:func:`from_log` (the records since ``born``), or None when the log holds nothing
    of the session (a new one: the common case). A log that cannot be read raises
    :class:`~forge_policy.errors.AuditError`: with no state either, a new session and one whose
    state was deleted look the same, so the call is decided as SPEC §9 says for neither being
    readable (fail closed), never on a new state."""
    from forge_policy.errors import AuditError, ForgePolicyError

    try:
        state, counted = from_log(audit, session_id, born)
    except AuditError:
        raise
    except (ForgePolicyError, OSError) as exc:
        raise AuditError(f"the audit log cannot be read ({type(exc).__name__}: {exc})") from exc
    return state if counted else None


def rebuilt(
    audit: AuditSink, catalog: Catalog, session_id: str, now: float, ttl: float
) -> tuple[SessionState, str, str]:
    """SPEC §9, the state cannot be read or written: the session as the log of the last TTL
    makes it, or the fail-closed state (each behavior at :func:`highest_below_hard`) when the
    log cannot be read either; with the diagnostic and the ``degraded`` mark of the records
    decided on it."""
    from forge_policy.errors import ForgePolicyError

    try:
        state, counted = from_log(audit, session_id, now - ttl)
    except (ForgePolicyError, OSError) as exc:
        return failed_closed(
            catalog, now, f"the audit log cannot be read either ({type(exc).__name__})"
        )
    how = f"decided statelessly on the session rebuilt from the audit log ({counted} records)"
    return state, how, "rebuilt"


def failed_closed(catalog: Catalog, now: float, why: str) -> tuple[SessionState, str, str]:
    """The fail-closed session (each behavior at :func:`highest_below_hard`), with its
    diagnostic (``why`` first) and the ``degraded`` mark ``fail_closed``."""
    state = SessionState.new(now)
    apply_effects(state, [fx.SetLevel(b.id, highest_below_hard(b)) for b in catalog.behaviors])
    how = (
        f"{why}; decided statelessly at each behavior's highest level below hard_block "
        "(fail closed)"
    )
    return state, how, "fail_closed"


def highest_below_hard(behavior: Behavior) -> Level:
    """The level a behavior fails closed at: the highest its ladder reaches below hard_block
    (hard_block itself for a behavior that starts there)."""
    if behavior.default_level is Level.HARD_BLOCK:
        return Level.HARD_BLOCK
    below = [step.level for step in behavior.escalation if step.level < Level.HARD_BLOCK]
    return max([behavior.default_level, *below])
