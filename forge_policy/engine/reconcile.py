"""Bring a session's state up to its audit records (SPEC §4 triple write), idempotently.

The evaluator appends audit records (fsynced) *before* it writes the session state, so a crash in
between leaves records the state has not seen. :func:`reconcile_session` replays them:

- an ``override`` whose ``override_id`` the state does not hold, made after the behavior's
  ``override_horizon`` (older records were applied and then dropped from the bounded state), is
  added to that behavior's ``overrides[]``, and the pending block (or explicit grant) it
  consumed is cleared;
- a ``block`` or ``violation`` whose ``counter`` is above the state's counter raises the counter
  and the effective level (a block also counts in ``blocks``); with a ``call_hash`` in the record,
  the latest soft block is restored as the pending block.

Records older than the session's creation (an expired, restarted session) are ignored. Running
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
from forge_policy.engine.effects import (
    AddOverride,
    CountBlock,
    SetCounter,
    SetGrant,
    SetLevel,
    SetPendingBlock,
    apply_effects,
)
from forge_policy.levels import Level
from forge_policy.state import PendingBlock

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
    born = state.created_at
    known = {
        override_id
        for behavior_id in state.behavior_ids()
        for override_id in state.behavior(behavior_id).override_ids()
    }
    added: list[str] = []
    for record in records:
        behavior_id = record.get("behavior_id")
        at = parse_iso(record.get("timestamp"), default=-1.0)
        if not isinstance(behavior_id, str) or at < born:
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
        elif (
            kind in ("block", "violation")
            and not record.get("shadow")
            # decided on a made-up fail-closed state: its counter and level are not the session's
            and record.get("degraded") != "fail_closed"
        ):
            effects = _violation_effects(behavior_id, state.find(behavior_id), record, at)
        apply_effects(state, effects)
    return added


def _override_effects(
    behavior_id: str, bstate: BehaviorState | None, record: dict[str, Any], at: float
) -> list[Effect]:
    effects: list[Effect] = [AddOverride(behavior_id, record)]
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
        effects.append(SetPendingBlock(behavior_id, None))
    grant = bstate.grant if bstate is not None else None
    if frees_grant and grant is not None and grant.at <= at:
        effects.append(SetGrant(behavior_id, None))
    return effects


def _violation_effects(
    behavior_id: str, bstate: BehaviorState | None, record: dict[str, Any], at: float
) -> list[Effect]:
    counter = record.get("counter")
    known = bstate.counter if bstate is not None else 0
    if not isinstance(counter, int) or isinstance(counter, bool) or counter <= known:
        return []  # already in the state (the counter is the natural key within a session)
    effects: list[Effect] = [SetCounter(behavior_id, counter)]
    try:
        level = Level.parse(str(record.get("level")))
    except ValueError:
        return effects
    current = bstate.effective_level if bstate is not None else None
    reached = level if current is None else max(current, level)
    effects.append(SetLevel(behavior_id, reached))
    if record.get("kind") != "block":
        return effects
    effects.append(CountBlock(behavior_id))
    if reached is Level.HARD_BLOCK:  # as the evaluator: nothing left to override
        return [*effects, SetPendingBlock(behavior_id, None), SetGrant(behavior_id, None)]
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
        effects.append(SetPendingBlock(behavior_id, pending))
    return effects
