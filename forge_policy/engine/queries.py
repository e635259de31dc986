"""What an :class:`~forge_policy.engine.evaluator.Evaluator` answers besides a decision: a
session's status, an explanation of one event (a dry run), and the explicit override grant
(SPEC §4) with the check of whether a behavior can be overridden at all.

The evaluator's methods of the same names delegate here, so ``ev.status(...)`` and the others
are unchanged; each function takes the evaluator whose catalog, store, clock and settings it
reads. Only :func:`override` writes, through its store transaction and
:func:`~forge_policy.engine.effects.apply_effects`.

>>> import forge_policy as fp
>>> ev = fp.Evaluator(fp.builtin_catalog())
>>> status(ev, "s1").exists
False
"""

from __future__ import annotations

from forge_policy.errors import Refused, UnknownBehavior
from forge_policy.levels import Level

TYPE_CHECKING = False
if TYPE_CHECKING:
    from forge_policy.catalog.catalog import Catalog
    from forge_policy.engine.evaluator import Evaluator
    from forge_policy.engine.reports import ExplainReport, OverrideGrant, Status
    from forge_policy.model import Event
    from forge_policy.state import BehaviorState, SessionState


def live_state(evaluator: Evaluator, current: SessionState | None, now: float) -> SessionState:
    """A copy of ``current`` to change, or a new state when it is missing or expired."""
    from forge_policy.state import SessionState

    if current is None or current.expired(now, evaluator.settings.ttl):
        return SessionState.new(now)
    return current.copy()


def status(evaluator: Evaluator, session_id: str) -> Status:
    """:meth:`Evaluator.status <forge_policy.engine.evaluator.Evaluator.status>`."""
    from forge_policy.engine.reports import status_of

    state = evaluator.store.load(session_id)
    now, ttl = evaluator.clock(), evaluator.settings.ttl
    if state is not None and state.expired(now, ttl):
        state = None
    if state is not None:  # with what was decided while the state could not be written
        state = _caught_up(evaluator, state, session_id)
    else:  # never written (a crash, a warm answer's write still in flight): the log's
        state = _rebuilt(evaluator, session_id, now - ttl)
    return status_of(evaluator.catalog, session_id, state, evaluator.settings.profile)


def _rebuilt(evaluator: Evaluator, session_id: str, born: float) -> SessionState | None:
    """The session as its audit records since ``born`` make it (SPEC §9: a missing state is
    rebuilt from the log), None when the log holds none of it or cannot be read."""
    from forge_policy.engine import session
    from forge_policy.errors import ForgePolicyError

    try:
        return session.rebuilt_if_logged(evaluator.audit, session_id, born)
    except (ForgePolicyError, OSError):
        return None


def _caught_up(evaluator: Evaluator, state: SessionState, session_id: str) -> SessionState:
    """``state`` with the session's records it has not seen (decided statelessly while its
    lock was held: a hard block waits for none), read as the next transaction will; the state
    itself when the log cannot be read."""
    from forge_policy.engine import session
    from forge_policy.errors import ForgePolicyError

    caught = state.copy()
    since = state.last_accessed_at - session.RECONCILE_MARGIN
    try:
        session.reconcile(evaluator.audit, caught, session_id, since)
    except (ForgePolicyError, OSError):
        return state
    return caught


def explain(evaluator: Evaluator, event: Event) -> ExplainReport:
    """:meth:`Evaluator.explain <forge_policy.engine.evaluator.Evaluator.explain>`."""
    from forge_policy.engine.decide import decide
    from forge_policy.engine.inputs import FactCache
    from forge_policy.engine.reports import explain_report

    now = evaluator.clock()
    facts = FactCache(event, evaluator.facts)
    state = live_state(evaluator, evaluator.store.load(event.session_id), now)
    outcome = decide(
        evaluator.catalog,
        event,
        state,
        now,
        evaluator.settings,
        facts,
        explain=True,
        auto_approve=evaluator.auto_approve,
    )
    return explain_report(evaluator.catalog, outcome.decision, outcome.trace)


def override(
    evaluator: Evaluator, session_id: str, behavior_id: str, reason: str, call: str = ""
) -> OverrideGrant:
    """:meth:`Evaluator.override <forge_policy.engine.evaluator.Evaluator.override>`: the grant
    is audited (a ``grant`` record, appended before the state is written) and kept in the
    behavior's state until a call spends it or ``FORGE_GRANT_SECONDS`` pass. ``call``: the
    short id a soft block named its call by; the grant is then bound to that call."""
    from forge_policy._time import iso
    from forge_policy.engine.effects import SetGrant, apply_effects
    from forge_policy.engine.records import grant_record
    from forge_policy.engine.reports import OverrideGrant
    from forge_policy.secrets import redact
    from forge_policy.state import Grant

    check_overridable(evaluator.catalog, behavior_id)
    now = evaluator.clock()
    reason = redact(reason)  # stored in the state, then in the audit record of its use
    call = call.strip()
    granted_at, grant_id = iso(now), evaluator.random_id()
    until = now + evaluator.settings.grant_seconds
    bound: dict[str, str] = {}

    def apply(current: SessionState | None) -> tuple[None, SessionState]:
        state = live_state(evaluator, current, now)
        bstate = state.find(behavior_id)
        if bstate is not None and bstate.effective_level is Level.HARD_BLOCK:
            raise Refused(
                f"{behavior_id} has reached hard_block in session {session_id}: it has no override"
            )
        bound.clear()
        if call:
            bound.update(blocked_call(bstate, behavior_id, session_id, call))
        grant = Grant(
            at=now,
            reason=reason,
            granted_at=granted_at,
            grant_id=grant_id,
            call_hash=bound.get("call_hash", ""),
            call_id=bound.get("call_id", ""),
            summary=bound.get("summary", ""),
        )
        record = grant_record(
            session_id,
            behavior_id,
            grant_id,
            reason,
            now,
            until,
            call_id=grant.call_id,
            call_hash=grant.call_hash,
            input_summary=grant.summary,
        )
        evaluator._audit_first([record], state, session_id, now, denial=False)  # SPEC §4
        apply_effects(state, [SetGrant(behavior_id, grant)])
        state.touch(now)
        return None, state

    evaluator.store.transact(session_id, apply)
    return OverrideGrant(
        grant_id=grant_id,
        session_id=session_id,
        behavior_id=behavior_id,
        reason=reason,
        granted_at=granted_at,
        valid_until=iso(until),
        call_id=bound.get("call_id", ""),
        input_summary=bound.get("summary", ""),
    )


def blocked_call(
    bstate: BehaviorState | None, behavior_id: str, session_id: str, call: str
) -> dict[str, str]:
    """The soft-blocked call of ``behavior_id`` whose short id is ``call`` (its ``call_id``,
    ``call_hash`` and ``summary``); ``ValueError`` naming the known recent ones otherwise.

    >>> blocked_call(None, "b", "s1", "0123abcd")
    Traceback (most recent call last):
    ...
    forge_policy.errors.Refused: no soft-blocked call 0123abcd of b in session s1 (none of b lately)
    """
    calls = bstate.blocked_calls if bstate is not None else []
    for entry in reversed(calls):
        if entry.get("call_id") == call and isinstance(entry.get("call_hash"), str):
            summary = entry.get("summary")
            return {
                "call_id": call,
                "call_hash": str(entry["call_hash"]),
                "summary": summary if isinstance(summary, str) else "",
            }
    known = [
        f"{entry.get('call_id')} ({entry.get('summary') or entry.get('tool_name') or '?'})"
        for entry in reversed(calls)
    ]
    listed = (
        f"recent soft-blocked calls: {', '.join(known)}"
        if known
        else f"none of {behavior_id} lately"
    )
    raise Refused(
        f"no soft-blocked call {call} of {behavior_id} in session {session_id} ({listed})"
    )


def check_overridable(catalog: Catalog, behavior_id: str) -> None:
    """Raise :class:`~forge_policy.errors.UnknownBehavior` (a ``KeyError`` too) for an unknown
    behavior, :class:`~forge_policy.errors.Refused` (a ``ValueError`` too) for one that can
    never be overridden in any session (hard_block by default, or never blocking).

    >>> import forge_policy as fp
    >>> check_overridable(fp.builtin_catalog(), "no-destructive-git")
    Traceback (most recent call last):
    ...
    forge_policy.errors.Refused: no-destructive-git is a hard_block behavior: it has no override
    >>> try:
    ...     check_overridable(fp.builtin_catalog(), "search-frist")
    ... except KeyError as exc:
    ...     print(exc)
    unknown behavior 'search-frist' (did you mean 'search-first'?)
    """
    behavior = catalog.get(behavior_id)
    if behavior is None:
        import difflib

        close = difflib.get_close_matches(behavior_id, [b.id for b in catalog.behaviors], n=3)
        hint = f" (did you mean {' or '.join(repr(c) for c in close)}?)" if close else ""
        raise UnknownBehavior(f"unknown behavior {behavior_id!r}{hint}")
    if behavior.default_level is Level.HARD_BLOCK:
        raise Refused(f"{behavior_id} is a hard_block behavior: it has no override")
    reachable = max([behavior.default_level, *(s.level for s in behavior.escalation)])
    if reachable < Level.SOFT_BLOCK:
        raise Refused(
            f"{behavior_id} never blocks (it reaches {reachable.label} at most): "
            "there is nothing to override"
        )
