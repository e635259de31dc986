"""Bring a session's state up to its audit records (SPEC §4 triple write), idempotently.

The evaluator appends audit records (fsynced) *before* it writes the session state, so a crash in
between leaves records the state has not seen. :func:`reconcile_session` replays them:

- an ``override`` whose ``override_id`` the state does not hold, made after the behavior's
  ``override_horizon`` (older records were applied and then dropped from the bounded state), is
  added to that behavior's ``overrides[]``, and the pending block (or explicit grant) it
  consumed is cleared;
- a ``block`` or ``violation`` whose ``counter`` is above the state's counter raises the counter
  and the effective level (a block also counts in ``blocks``; one decided statelessly, marked
  ``degraded``, counts one more than the state holds, once: its counter may repeat one that a
  transaction counted at the same time); with a ``call_hash`` in the record,
  the latest soft block is restored as the pending block (and, with a ``call_id``, remembered
  for ``override --call``); apart from it, the share of the agent it names (``agent_id``,
  absent: the root thread) rises to its ``agent_counter`` (absent: its ``counter``) when that
  is above the share's counter, so the per-agent breakdown is rebuilt exactly;
- a ``grant`` (an explicit override given) that the state lacks, that was neither spent (no
  override names its ``grant_id``) nor replaced by a newer grant, newer than the state's grant
  and not behind the horizon, becomes the behavior's grant again.

Records older than the session's creation (an expired, restarted session) are ignored, except a
violation decided statelessly up to :data:`RECONCILE_MARGIN` before it (its hook decided while
the transaction that created the state held the lock). Running
it twice changes nothing the second time.

>>> from forge_policy.state import SessionState
>>> state = SessionState.new(0.0)
>>> records = [{"kind": "override", "override_id": "o1", "session_id": "s1",
...             "behavior_id": "search-first", "counter": 5, "mechanism": "retry",
...             "timestamp": "1970-01-01T00:01:00+00:00"}]
>>> reconcile_session(state, records)
['o1']
>>> reconcile_session(state, records)
[]
"""

from __future__ import annotations

from forge_policy._time import parse_iso
from forge_policy.engine import effects as fx  # its classes load on first use
from forge_policy.engine.effects import apply_effects
from forge_policy.levels import Level
from forge_policy.state import Grant, PendingBlock

#: Seconds allowed between a decision and its audit append (lock waits), when reconciling; a
#: violation decided statelessly counts this long before the session's state was created.
RECONCILE_MARGIN = 30.0

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable
    from typing import Any

    from forge_policy.engine.effects import Effect
    from forge_policy.state import BehaviorState, SessionState


def reconcile_session(state: SessionState, records: Iterable[dict[str, Any]]) -> list[str]:
    """Apply the audit records of one session (oldest first) that ``state`` is missing; return
    the override ids added. Mutates ``state`` through :func:`~forge_policy.engine.effects.
    apply_effects` (each record becomes the effects it had); the caller writes it in its store
    transaction.
    """
    records = list(records)
    if not records:
        return []
    born = state.created_at
    if not any(r.get("kind") in ("override", "grant") for r in records):
        # the sets below are read by overrides and grants only: a catch-up over blocks (one
        # per block since its position) skips them; a malformed entry is still mended (an
        # empty behavior, an empty ``overrides[]``), as reading them does
        behaviors = state.data.get("behaviors")
        if isinstance(behaviors, dict) and not all(
            isinstance(v, dict) and isinstance(v.get("overrides"), list) for v in behaviors.values()
        ):
            for behavior_id in state.behavior_ids():
                _ = state.behavior(behavior_id).overrides
        return _apply_records(state, records, born, set(), set())
    known = {
        override_id
        for behavior_id in state.behavior_ids()
        for override_id in state.behavior(behavior_id).override_ids()
    }
    spent = {
        str(override.get("grant_id"))
        for behavior_id in state.behavior_ids()
        for override in state.behavior(behavior_id).overrides
        if isinstance(override, dict) and override.get("grant_id")
    }
    spent.update(
        str(r.get("grant_id")) for r in records if r.get("kind") == "override" and r.get("grant_id")
    )
    # a grant replaced by a newer one of its behavior is gone for good, whatever happened next
    latest: dict[str, str] = {}
    for record in records:
        if record.get("kind") == "grant" and isinstance(record.get("behavior_id"), str):
            latest[record["behavior_id"]] = str(record.get("grant_id") or "")
    spent.update(
        str(r.get("grant_id"))
        for r in records
        if r.get("kind") == "grant" and latest.get(str(r.get("behavior_id"))) != r.get("grant_id")
    )
    return _apply_records(state, records, born, known, spent)


def _apply_records(
    state: SessionState,
    records: list[dict[str, Any]],
    born: float,
    known: set[str],
    spent: set[str],
) -> list[str]:
    """Apply ``records`` in order (``known``: the override ids the state holds, ``spent``: the
    grants gone for good); return the override ids added."""
    added: list[str] = []
    for record in records:
        behavior_id = record.get("behavior_id")
        at = parse_iso(record.get("timestamp"), default=-1.0)
        # a violation decided statelessly may be stamped before the state that folds it was
        # created: its hook decided while the first transaction of the session held the lock
        earliest = born - RECONCILE_MARGIN if record.get("degraded") else born
        if not isinstance(behavior_id, str) or at < earliest:
            continue
        kind = record.get("kind")
        effects: list[Effect] = []
        if kind == "override":
            override_id = str(record.get("override_id") or "")
            seen = state.find(behavior_id)
            horizon = seen.override_horizon if seen is not None else None
            if override_id and override_id not in known and (horizon is None or at > horizon):
                known.add(override_id)
                added.append(override_id)
                effects = _override_effects(behavior_id, seen, record, at)
        elif kind == "grant":
            effects = _grant_effects(behavior_id, state.find(behavior_id), record, at, spent)
        elif (
            kind in ("block", "violation")
            and not record.get("shadow")
            # decided on a made-up fail-closed state: its counter and level are not the session's
            and record.get("degraded") != "fail_closed"
        ):
            counted = _stateless_increment(state, behavior_id, record)
            if counted is None:
                continue
            bstate = state.find(behavior_id)
            effects = _violation_effects(behavior_id, bstate, counted, at)
            effects += _agent_effects(behavior_id, bstate, counted)
        apply_effects(state, effects)
    return added


def _stateless_increment(
    state: SessionState, behavior_id: str, record: dict[str, Any]
) -> dict[str, Any] | None:
    """A violation decided statelessly (the state lock not had in time, SPEC §9), as the
    increment it is: its counter was computed from the log while another transaction may have
    counted the same number from the state, so it counts one more than the state holds (never
    fewer than it says); None when this state counted it already (its key is remembered, so a
    second catch-up changes nothing). Any other record is returned as it is."""
    if not record.get("degraded"):
        return record
    key = "|".join(
        str(record.get(field) or "")
        for field in ("timestamp", "behavior_id", "counter", "call_hash", "kind")
    )
    if state.folded(key):
        return None
    state.fold(key)
    bstate = state.find(behavior_id)
    known = bstate.counter if bstate is not None else 0
    counter = record.get("counter")
    if not isinstance(counter, int) or isinstance(counter, bool):
        return record
    share = bstate.find_agent(_agent_of(record)) if bstate is not None else None
    own = _agent_counter(record)
    folded = {**record, "counter": max(counter, known + 1)}
    if own is not None:  # the agent's share counts one more too
        folded["agent_counter"] = max(own, (share.counter if share is not None else 0) + 1)
    return folded


def _agent_of(record: dict[str, Any]) -> str:
    """The agent a record names (``""``: the root thread, and every record before agents)."""
    agent_id = record.get("agent_id")
    return agent_id if isinstance(agent_id, str) else ""


def _agent_counter(record: dict[str, Any]) -> int | None:
    """The agent's own counter a violation record gives (absent: its ``counter``)."""
    value = record.get("agent_counter", record.get("counter"))
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _agent_effects(
    behavior_id: str, bstate: BehaviorState | None, record: dict[str, Any]
) -> list[Effect]:
    """The agent's share of a violation the state is missing: its counter rises to the
    record's, its level to the record's level, a block counts in its ``blocks``."""
    counter = _agent_counter(record)
    agent_id = _agent_of(record)
    share = bstate.find_agent(agent_id) if bstate is not None else None
    known = share.counter if share is not None else 0
    if counter is None or counter <= known:
        return []  # already in the state (the agent's counter is its natural key)
    try:
        level = Level.parse(str(record.get("level")))
    except ValueError:
        return []
    current = share.effective_level if share is not None else None
    reached = level if current is None else max(current, level)
    agent_type = record.get("agent")
    tally = fx.AgentTally(
        agent_id, agent_type if isinstance(agent_type, str) else "", counter, reached
    )
    from forge_policy.engine._more_effects import CountAgent  # a subagent's: built on first use

    return [CountAgent(behavior_id, tally, blocked=record.get("kind") == "block")]


def _override_effects(
    behavior_id: str, bstate: BehaviorState | None, record: dict[str, Any], at: float
) -> list[Effect]:
    effects: list[Effect] = [fx.AddOverride(behavior_id, record)]
    mechanism = record.get("mechanism")
    released = record.get("released")
    if isinstance(released, list):  # the evaluator says what the override consumed
        frees_pending, frees_grant = "pending" in released, "grant" in released
    else:  # older records: infer from the mechanism
        frees_pending, frees_grant = mechanism in ("retry", "user"), mechanism == "explicit"
    pending = bstate.pending_block if bstate is not None else None
    if (
        frees_pending
        and pending is not None
        and pending.at <= at
        and pending.counter == record.get("counter")
    ):
        effects.append(fx.SetPendingBlock(behavior_id, None))
    grant = bstate.grant if bstate is not None else None
    if frees_grant and grant is not None and grant.at <= at:
        effects.append(fx.SetGrant(behavior_id, None))
    return effects


def _grant_effects(
    behavior_id: str,
    bstate: BehaviorState | None,
    record: dict[str, Any],
    at: float,
    spent: set[str],
) -> list[Effect]:
    """A grant the state lost (a crash between its audit append and its state write)."""
    grant_id = record.get("grant_id")
    if not isinstance(grant_id, str) or not grant_id or grant_id in spent:
        return []
    if bstate is not None:
        held = bstate.grant
        horizon = bstate.override_horizon
        if held is not None and (held.grant_id == grant_id or held.at >= at):
            return []  # already there, or replaced by a newer grant
        if horizon is not None and at <= horizon:
            return []  # older than overrides already dropped from the state: long settled
        if bstate.effective_level is Level.HARD_BLOCK:
            return []  # nothing left to override
    grant = Grant(
        at=at,
        reason=str(record.get("reason") or ""),
        granted_at=str(record.get("timestamp") or ""),
        grant_id=grant_id,
        call_hash=str(record.get("call_hash") or ""),
        call_id=str(record.get("call_id") or ""),
        summary=str(record.get("input_summary") or ""),
    )
    return [fx.SetGrant(behavior_id, grant)]


def _violation_effects(
    behavior_id: str, bstate: BehaviorState | None, record: dict[str, Any], at: float
) -> list[Effect]:
    counter = record.get("counter")
    known = bstate.counter if bstate is not None else 0
    if not isinstance(counter, int) or isinstance(counter, bool) or counter <= known:
        return []  # already in the state (the counter is the natural key within a session)
    effects: list[Effect] = [fx.SetCounter(behavior_id, counter)]
    try:
        level = Level.parse(str(record.get("level")))
    except ValueError:
        return effects
    current = bstate.effective_level if bstate is not None else None
    reached = level if current is None else max(current, level)
    effects.append(fx.SetLevel(behavior_id, reached))
    if record.get("kind") != "block":
        return effects
    effects.append(fx.CountBlock(behavior_id))
    if reached is Level.HARD_BLOCK:  # as the evaluator: nothing left to override
        return [*effects, fx.SetPendingBlock(behavior_id, None), fx.SetGrant(behavior_id, None)]
    call_hash = record.get("call_hash")
    if level is Level.SOFT_BLOCK and isinstance(call_hash, str) and not record.get("overridden"):
        pending = PendingBlock.from_dict(
            {
                "call_hash": call_hash,
                "at": at,
                "event": record.get("event", ""),
                "tool_name": record.get("tool_name", ""),
                "tool_use_id": record.get("tool_use_id", ""),
                "counter": counter,
                "mode": record.get("override_mode", "agent"),
            }
        )
        effects.append(fx.SetPendingBlock(behavior_id, pending))
        call_id = record.get("call_id")
        if isinstance(call_id, str) and call_id:
            summary, tool = record.get("input_summary"), record.get("tool_name")
            effects.append(
                fx.NoteBlockedCall(
                    behavior_id,
                    call_id,
                    call_hash,
                    summary if isinstance(summary, str) else "",
                    tool if isinstance(tool, str) else "",
                    at,
                )
            )
    return effects
