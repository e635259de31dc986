"""The store double and the checks of the stateful machine (``test_stateful_invariants.py``):
each compares what the engine did with what :class:`tests.reference_model.Model` expects, or
checks a rule of SPEC §3 or §4 on the model itself (which the engine then matches).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from hypothesis import event

from forge_policy._time import parse_iso
from forge_policy.levels import Level
from forge_policy.state import RECENT_OVERRIDES, SessionState, copy_json
from forge_policy.stores.memory import MemoryStore
from tests.reference_model import (
    HARD,
    NUDGE,
    SOFT,
    TOUCH,
    TTL,
    WARNING,
    BehaviorModel,
    Expected,
    Model,
)
from tests.reference_rules import resolve, threshold

if TYPE_CHECKING:
    from forge_policy import Evaluator, Event
    from forge_policy.audit.memory import MemoryAuditSink
    from forge_policy.engine.decide import Outcome
    from forge_policy.engine.reports import BehaviorStatus, Status
    from forge_policy.model import Decision
    from tests.machine_strategies import Call


class CountingStore:
    """A MemoryStore that counts transactions and writes, and checks that ``apply`` never edits
    what it read."""

    def __init__(self) -> None:
        self.inner = MemoryStore()
        self.transactions = self.writes = 0
        self.peeked = None

    def _checked(self, apply):
        self.transactions += 1

        def checked(current):
            snapshot = copy_json(current.to_dict()) if current is not None else None
            result, new_state = apply(current)
            assert (current.to_dict() if current is not None else None) == snapshot
            assert new_state is None or new_state is not current  # never an alias of the read
            self.writes += new_state is not None
            return result, new_state

        return checked

    def transact(self, session_id, apply):
        return self.inner.transact(session_id, self._checked(apply))

    def transact_borrowed(self, session_id, apply):
        """The evaluator's transaction on the inner store's own, uncopied document: the same
        checks, so that a decision changing what it was lent fails here."""
        return self.inner.transact_borrowed(session_id, self._checked(apply))

    def data(self, session_id: str) -> dict | None:
        state = self.inner.load(session_id)
        return state.data if state is not None else None

    def load(self, session_id):
        return self.inner.load(session_id)

    def peek(self, session_id):
        """The inner store's uncopied view; kept, so a check can prove nobody changed it."""
        self.peeked = self.inner.peek(session_id)
        return self.peeked

    def session_ids(self):
        return self.inner.session_ids()

    def purge(self, now, ttl):
        raise AssertionError("the evaluator must not purge on its own")

    def close(self):
        pass


def record_statistics(expected: Expected) -> None:
    """Hypothesis ``event()``s, so that ``--hypothesis-show-statistics`` shows what was reached."""
    for _, level, _, shadow, overridden, _ in expected.violations:
        event(f"violation: {level.label}{' shadow' * shadow} {overridden}".strip())
    for bid, mechanism, _, _ in expected.overrides:
        how = "the retry of a pending block" if bid in expected.retried else "a violating call"
        event(f"override: {mechanism} on {how}")
    for how in expected.withdrawn:
        event(f"override withdrawn (a later behavior blocked): {how}")
    event(f"store: {expected.write or 'nothing'} written")
    if expected.since_write in (TOUCH - 1, TOUCH) and expected.write != "changed":
        event(f"store: {expected.write or 'nothing'} written at the touch interval edge")


def check_decision(decision: Decision, expected: Expected, levels_before: dict) -> None:
    """One decision: its violations and overrides in order, its outcome."""
    assert [
        (v.behavior_id, v.level, v.counter, v.shadow, v.overridden, v.trigger_index)
        for v in decision.violations
    ] == expected.violations
    assert [
        (o["behavior_id"], o["mechanism"], o["counter"], o["reason"]) for o in decision.overrides
    ] == expected.overrides
    # an override takes effect only when the call goes through; hard_block has none
    assert not (decision.blocked and decision.overrides)
    assert all(levels_before.get(o["behavior_id"]) is not HARD for o in decision.overrides)
    check_outcome(decision, expected)


def check_outcome(decision: Decision, expected: Expected) -> None:
    blocking = decision.blocking
    assert (blocking.behavior_id if blocking else None) == expected.blocking
    assert decision.blocked is (expected.blocking is not None)
    shown = [
        level
        for _, level, _, shadow, overridden, _ in expected.violations
        if not shadow and not overridden
    ]
    level = blocking.level if blocking else max(shown, default=Level.SILENT)
    assert decision.level is level
    assert decision.override_allowed is (blocking is not None and level is SOFT)
    if blocking is not None and len(expected.violations) > 1:
        event("block after other violations")


def check_audit(records: list[dict], expected: Expected) -> None:
    """The records one event appended, in order: (kind, behavior, level or mechanism, counter,
    overridden or reason, what an override released)."""
    assert [
        (
            r["kind"],
            r["behavior_id"],
            r.get("mechanism") or r.get("level"),
            r["counter"],
            r.get("overridden") or r.get("reason", ""),
            tuple(r.get("released", ())),
        )
        for r in records
    ] == expected.audit


def check_messages(model: Model, decision: Decision, expected: Expected, call: Call) -> None:
    order = ([expected.blocking] if expected.blocking else []) + expected.shown
    assert [m.split("\n")[0] for m in decision.messages] == [
        expected.first_lines[bid] for bid in order
    ]
    for bid, message in zip(order, decision.messages, strict=True):
        level = expected.levels[bid]
        lines = message.split("\n")
        if level is NUDGE:
            assert len(lines) == 1
            assert len(message) <= 120
        elif level is WARNING:
            assert 2 <= len(lines) <= 4
            assert lines[1] == f"Do instead: {model.spec(bid)['hint']}"
        elif level is SOFT:
            # SPEC §4: every soft block names its call by a short id, for ``--call``
            call_id = decision.blocking.call_id if decision.blocking is not None else ""
            assert len(call_id) == 8 and int(call_id, 16) >= 0
            assert (
                f"forge-policy override {bid} --session {call.session_id} --call {call_id} "
                in message
            )
        else:
            assert lines[-1] == "This block cannot be overridden."


def check_chain_cut(ids: list[str], blocker: str, old: dict | None, new: dict | None) -> None:
    """SPEC §3.6: the state of every behavior after the blocking one is untouched."""
    later = ids[ids.index(blocker) + 1 :]
    old_behaviors = old["behaviors"] if old is not None else {}
    new_behaviors = new["behaviors"] if new is not None else {}
    assert [new_behaviors.get(b) for b in later] == [old_behaviors.get(b) for b in later]


def check_triple_write(audit: MemoryAuditSink, sid: str, state: SessionState | None) -> None:
    """SPEC §4: override ids are unique; a live session's overrides[] and the log agree; a
    grant is audited when given and, at most once, when used (an ``explicit`` override naming
    it, after it, for its session and behavior)."""
    everything = list(audit.records())
    log = [r for r in everything if r["kind"] == "override"]
    ids = [r["override_id"] for r in log]
    assert len(set(ids)) == len(ids)
    given: dict[str, tuple[int, str, str]] = {}
    for at, record in enumerate(everything):
        if record["kind"] == "grant":
            given[record["grant_id"]] = (at, record["session_id"], record["behavior_id"])
        elif record["kind"] == "override" and "grant_id" in record:
            assert record["mechanism"] == "explicit"
            granted_at, session_id, behavior_id = given.pop(record["grant_id"])  # used once
            assert granted_at < at
            assert (session_id, behavior_id) == (record["session_id"], record["behavior_id"])
        elif record["kind"] == "override":
            assert record["mechanism"] != "explicit"
    if state is None:
        return
    live = [
        r for r in log if r["session_id"] == sid and parse_iso(r["timestamp"]) >= state.created_at
    ]
    for bid in state.behavior_ids():
        bstate = state.behavior(bid)
        mine = [r for r in live if r["behavior_id"] == bid]
        kept = [o["override_id"] for o in bstate.overrides]
        # the state is bounded: it keeps the latest records and counts them all; the log's
        # older ones are those up to its horizon
        horizon = bstate.override_horizon
        dropped = [
            r["override_id"]
            for r in mine
            if horizon is not None and parse_iso(r["timestamp"]) <= horizon
        ]
        assert len(kept) <= RECENT_OVERRIDES
        assert len(set(kept)) == len(kept)
        assert set(kept) | set(dropped) == {r["override_id"] for r in mine}
        assert bstate.override_count == len(mine)
    assert {r["behavior_id"] for r in live} <= set(state.behavior_ids())


def check_expiry(model: Model, sid: str, now: float) -> None:
    """SPEC §3.9 with the touch slack: alive until ttl after the real last access, expired once
    ttl + touch interval have passed since it."""
    session = model.sessions.get(sid)
    if session is None:
        return
    age, live = now - session.seen, model.live(sid, now) is not None
    assert live or age > TTL  # never early
    assert not live or age <= TTL + TOUCH  # at most the touch interval late
    if live and age > TTL:
        event("expiry: alive past the ttl, within the touch interval")


def check_status(model: Model, store: CountingStore, status: Status, now: float) -> None:
    """``status()`` of one session against the model."""
    sid = status.session_id
    check_expiry(model, sid, now)
    session = model.live(sid, now)
    assert status.exists is (session is not None)
    if session is None:
        assert (status.behaviors, status.flags, status.totals) == ({}, (), {})
        return
    stored = store.load(sid)
    assert stored is not None and stored.last_accessed_at == session.last_access
    # what status() does not show: a grant and a pending block left behind would be inert
    assert sorted(stored.behavior_ids()) == sorted(session.behaviors)
    for bid, b in session.behaviors.items():
        grant, pending = stored.behavior(bid).grant, stored.behavior(bid).pending_block
        assert ((grant.at, grant.reason, grant.bound) if grant else None) == (
            (b.grant[0], b.grant[1], b.grant[2] is not None) if b.grant else None
        )
        assert len(stored.behavior(bid).blocked_calls) == len(b.calls)
        assert (pending.at if pending else None) == (b.pending[1] if b.pending else None)
    assert status.flags == tuple(sorted(session.flags))
    assert status.totals == session.totals
    types: dict[str, str] = {}
    for b in session.behaviors.values():
        for aid, share in b.agents.items():
            if aid and not types.get(aid):
                types[aid] = share.type
    assert status.agents == types
    for spec in model.specs:
        b = session.behaviors.get(spec["id"]) or BehaviorModel()
        check_behavior(spec, b, status.behaviors[spec["id"]], types or None)


def check_behavior(
    spec: dict, b: BehaviorModel, row: BehaviorStatus, types: dict[str, str] | None = None
) -> None:
    """One behavior's row against the model; ``types``: each subagent's type, when a subagent
    took part in the session (status then breaks the counters down by agent)."""
    # SPEC §3.2: the counter is the number of counted violations, each in one agent's share
    assert row.counter == b.counter == len(b.history)
    assert sum(a.counter for a in b.agents.values()) == b.counter
    # SPEC §3.4: the effective level is the max of resolve() over the ladder's history,
    # starting from default_level and only rising; the ladder is the session's (scope:
    # session) or each agent's own (scope: agent, issue 27)
    ladders = [b] if spec["scope"] == "session" else list(b.agents.values())
    for ladder in ladders:
        if ladder.history:
            assert ladder.level == max(resolve(spec, c) for c in range(1, ladder.counter + 1))
            assert ladder.history[0] >= Level.parse(spec["default_level"])
            assert ladder.history == sorted(ladder.history)
    assert b.level == max((a.level for a in b.agents.values() if a.level is not None), default=None)
    assert row.level is b.level
    # status breaks the counters down by agent once a subagent took part in the session
    shares = {a.agent_id: (a.type, a.counter, a.level, a.blocks) for a in row.agents}
    if types is not None:  # a share's type, else the type the session knows the agent by
        modelled = {
            aid: (a.type or types.get(aid, ""), a.counter, a.level, a.blocks)
            for aid, a in b.agents.items()
        }
        assert shares == modelled, (shares, modelled)
    else:
        assert shares == {}
    assert row.next_threshold == threshold(spec, b.counter)
    assert row.pending_block is (b.pending is not None)
    if spec["scope"] == "session":  # hard_block leaves nothing to override
        assert b.pending is None or b.level is SOFT
    assert row.overrides == len(b.overrides) <= b.blocks  # one block, at most one pass
    assert row.blocks == b.blocks
    assert row.enabled is spec["enabled"]


def decide_alone(ev: Evaluator, event: Event, data: dict | None, now: float) -> Outcome:
    """``decide`` by itself on what the store holds (a new state if none is live), checking
    that it changes nothing it was given."""
    from forge_policy.engine.decide import decide
    from forge_policy.engine.inputs import FactCache

    state = SessionState(copy_json(data)) if data is not None else None
    if state is None or state.expired(now, ev.settings.ttl):
        state = SessionState.new(now)
    snapshot = copy_json(state.data)
    facts = FactCache(event, ev.facts)
    outcome = decide(
        ev.catalog, event, state, now, ev.settings, facts, auto_approve=ev.auto_approve
    )
    assert state.data == snapshot  # decide is pure: the effects say what changes
    return outcome


def check_effects(
    outcome: Outcome,
    decision: Decision,
    data_before: dict | None,
    data_after: dict | None,
    now: float,
    ttl: float,
) -> None:
    """The evaluator did exactly what ``decide`` said: the same decision, and the state it
    wrote is the state read with the effects applied (and touched)."""
    from forge_policy.engine.effects import apply_effects

    assert outcome.decision.to_dict() == decision.to_dict()
    if data_after is None or data_after == data_before:
        return
    state = SessionState(copy_json(data_before)) if data_before is not None else None
    if state is None or state.expired(now, ttl):
        state = SessionState.new(now)
    apply_effects(state, outcome.effects)
    state.touch(now)
    # where the log stood at the decision's catch-up (``reconciled``) is the log's bookkeeping,
    # kept beside the effects: every other key is exactly the effects applied
    assert _without_position(state.data) == _without_position(data_after)


def _without_position(data: dict) -> dict:
    from forge_policy.state import RECONCILED_KEY

    return {k: v for k, v in data.items() if k != RECONCILED_KEY}
