"""Stateful property tests of SPEC §3 (counting, escalation) and §4 (overrides).

:class:`EngineMachine` drives an :class:`~forge_policy.Evaluator` (a fake clock, a
:class:`MemoryStore` behind a wrapper that counts transactions and writes) with a random catalog
and random events, retries, explicit overrides and clock jumps, and compares every decision,
every audit record, every store write and ``status()`` with :class:`tests.reference_model.Model`,
a small reference written from the spec that shares no code with the evaluator.

The store double and the checks are in :mod:`tests.stateful_checks`; the focused tests of what
this machine found are in ``test_override_and_expiry.py``.
"""

from __future__ import annotations

from dataclasses import replace

import pytest
from hypothesis import event, note, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule

from forge_policy import Evaluator
from forge_policy.audit.memory import MemoryAuditSink
from forge_policy.catalog.behavior import Behavior
from forge_policy.catalog.catalog import Catalog
from forge_policy.model import Decision
from tests.machine_strategies import Call, calls, catalogs
from tests.reference_model import (
    GRANT,
    REFUSALS,
    SOFT,
    T0,
    TOUCH,
    TTL,
    WINDOW,
    Expected,
    Model,
    call_key,
)
from tests.reference_rules import identity
from tests.stateful_checks import (
    CountingStore,
    check_audit,
    check_chain_cut,
    check_decision,
    check_effects,
    check_messages,
    check_status,
    check_triple_write,
    decide_alone,
    record_statistics,
)
from tests.strategies import MATCHERS, PROFILES, SESSIONS

#: seconds to wait before a step; a jump to the end of an override window, or to the touch
#: interval after a session's recorded last access, or one second around either; or a wait past
#: every session's expiry (rare: it wipes the escalation reached)
WAITS = st.sampled_from(
    [0] * 20
    + [1, 2, 10, 59, 60, 61, 301] * 2
    + ["window-1", "window", "window", "window+1"] * 3
    + ["touch-1", "touch", "touch+1", "end"]
)


#: a blocked call: the call, the behavior that blocked it, when
Blocked = tuple[Call, str, float]


class EngineMachine(RuleBasedStateMachine):
    @initialize(specs=catalogs(), profile=st.sampled_from(PROFILES))
    def build(self, specs: list[dict], profile: str) -> None:
        self.specs = specs
        self.model = Model(specs, profile)
        self.store = CountingStore()
        self.audit = MemoryAuditSink()
        self.now = T0
        self.ev = Evaluator(
            Catalog([Behavior(s) for s in specs]),
            store=self.store,
            audit=self.audit,
            clock=lambda: self.now,
            profile=profile,
            ttl=TTL,
            override_window=WINDOW,
            grant_seconds=GRANT,
        )
        assert self.ev.settings.touch_interval == TOUCH
        self.last_blocked: Blocked | None = None
        self.last_soft_block: Blocked | None = None
        self.just_retried: tuple[Call, str] | None = None  # a retry override just passed
        self.recent: list[Call] = []
        self.delivered = 0  # numbers the tool_use_ids of repeated calls
        self.grant_ids: set[str] = set()
        self.last_granted: tuple[str, str] | None = None  # session, behavior
        #: (session, behavior, call key) -> the call id its soft blocks named (always the same)
        self.call_ids: dict[tuple, str] = {}

    # events; each may come after a short wait, so that most steps deliver one

    @rule(call=calls(), wait=WAITS)
    def send(self, call: Call, wait: int | str) -> None:
        self.wait(wait)
        self.deliver(call)
        self.recent = [call, *self.recent[:7]]

    @rule(data=st.data(), granted=st.booleans(), wait=WAITS)
    def send_to_a_trigger(self, data: st.DataObject, granted: bool, wait: int | str) -> None:
        """A call aimed at one trigger of the catalog (its event, matcher and applies_to tools),
        so that behaviors fire often whatever catalog was drawn; or aimed at the behavior granted
        an override last, in its session, so that the grant is spent on a violating call."""
        target = self.last_granted if granted else None
        specs = [self.model.spec(target[1])] if target else self.specs
        spec = data.draw(st.sampled_from(specs), label="behavior")
        trigger = data.draw(st.sampled_from(spec["triggers"]), label="trigger")
        tools = MATCHERS[trigger["matcher"]] & set(spec["applies_to"]["tools"] or MATCHERS["*"])
        call = data.draw(calls(trigger["event"], tuple(sorted(tools)) or ("A",)), label="call")
        self.send(replace(call, session_id=target[0]) if target else call, wait)

    # Rules with nothing to do yet send their fallback call instead of carrying a precondition:
    # a step where every drawn rule is disabled makes Hypothesis give the whole run up, and a
    # no-op step is a wasted one.

    @rule(fallback=calls(), pick=st.integers(0, 7), rotate=st.integers(0, 2), wait=WAITS)
    def repeat(self, fallback: Call, pick: int, rotate: int, wait: int | str) -> None:
        """A recent call again, so that counters climb their escalation lists."""
        if not self.recent:
            return self.send(fallback, wait)
        self.wait(wait)
        call = self.recent[pick % len(self.recent)]
        self.deliver(call.again(f"toolu_again_{self.delivered}", rotate))

    @rule(
        fallback=calls(),
        rotate=st.integers(0, 2),
        when=st.sampled_from([0, 0, 0, "edge-1", "edge", "edge+1"]),
        variant=st.sampled_from([False, False, True]),
    )
    def retry_last_blocked(
        self, fallback: Call, rotate: int, when: int | str, variant: bool
    ) -> None:
        """The last blocked call again, at once or at the end of its override window
        (inclusive) or one second around it; or a variant of it."""
        if self.last_blocked is None:
            return self.send(fallback, 0)
        if isinstance(when, str):
            offset = {"edge-1": -1, "edge": 0, "edge+1": 1}[when]
            self.now = max(self.now, self.last_blocked[2] + WINDOW + offset)
        self.retry(self.last_blocked, rotate, variant)

    def retry(self, blocked: Blocked, rotate: int, variant: bool) -> None:
        """A blocked call again (new tool_use_id, input keys in another order); or a
        variant of it (one input key more or less: not a retry, but it violates the same
        behaviors, so that an explicit grant is spent on it while a later behavior may block
        it)."""
        call, bid, _ = blocked
        if variant:
            inputs = tuple(item for item in call.tool_input if item[0] != "y")
            extra = (("y", 1),) if inputs == call.tool_input else ()
            return self.send(replace(call, tool_input=inputs + extra), 0)
        call = call.again(f"toolu_retry_{self.delivered}", rotate)
        session = self.model.live(call.session_id, self.now)
        b = session.behaviors.get(bid) if session else None
        # the counter the behavior's ladder climbs for this call's agent (its scope), and the
        # session's counter at the block a retry releases
        counter_before = b.ladder(self.model.spec(bid), call.agent_id)[0] if b else 0
        blocked_at = b.pending[2] if b and b.pending else None
        third_call = (
            self.just_retried is not None
            and self.just_retried[1] == bid
            and (identity(self.just_retried[0]) == identity(call))
        )
        decision, expected = self.deliver(call)
        if bid in expected.retried:  # the override passes this one call, the counter stays
            (retried,) = [o for o in decision.overrides if o["behavior_id"] == bid]
            assert retried["counter"] == blocked_at
            assert not [v for v in decision.violations if v.behavior_id == bid]
            self.just_retried = (call, bid)
        if third_call:  # a third identical call is a new violation, never a second override
            event("third identical call")
            assert bid not in expected.retried
            for v in decision.violations:
                if v.behavior_id == bid:
                    assert v.counter == counter_before + (0 if v.overridden else 1)

    @rule(
        which=st.sampled_from(["last soft block"] * 4 + [0, 1, 2, 3]),
        sid=st.sampled_from(SESSIONS),
        wait=WAITS,
        then=st.sampled_from(["", "retry", "variant"]),
        bind=st.sampled_from(["", "", "call", "call", "unknown"]),
    )
    def grant_override(
        self, which: int | str, sid: str, wait: int | str, then: str, bind: str
    ) -> None:
        """``Evaluator.override``: a one-shot pass for the next soft-blocked call of a behavior
        (mostly the one that soft-blocked last, in its session), or bound to that call
        (``call=`` its id; or an id no block named), or a refusal; then, mostly, that blocked
        call is retried, or a variant of it sent."""
        self.wait(wait)
        blocked = self.last_soft_block if which == "last soft block" else None
        key: tuple[str, ...] | None = None
        call_id = ""
        if blocked is not None:
            call, bid, _ = blocked
            sid, spec = call.session_id, self.model.spec(bid)
            if bind == "call":
                key = call_key(call)
                call_id = self.call_ids[(sid, bid, key)]
        else:
            spec = self.specs[(which if isinstance(which, int) else 0) % len(self.specs)]
        if bind == "unknown":
            key, call_id = ("<no such call>",), "zz000000"
        bid, reason = spec["id"], f"grant {len(self.grant_ids)}"
        refusal = self.model.refusal(sid, bid, self.now, key)
        data_before = self.store.data(sid)
        records_before = len(list(self.audit.records()))
        self.store.transactions = self.store.writes = 0
        if refusal is not None:
            event(f"override refused: {refusal}")
            with pytest.raises(ValueError, match=REFUSALS[refusal]):
                self.ev.override(sid, bid, reason=reason, call=call_id)
            assert len(list(self.audit.records())) == records_before  # nothing granted
            # the session's level is checked inside the transaction, which then writes nothing
            inside = refusal in ("hard_block reached", "unknown call")
            assert self.store.transactions == inside
            assert self.store.writes == 0
            assert self.store.data(sid) == data_before
            return
        event(f"override granted{' bound to a call' if call_id else ''}")
        grant = self.ev.override(sid, bid, reason=reason, call=call_id)
        stored = self.store.data(sid)["behaviors"][bid]["grant"]
        assert (stored["at"], stored["reason"], grant.reason) == (self.now, reason, reason)
        assert grant.session_id == sid
        assert (grant.grant_id, grant.behavior_id) == (stored["grant_id"], bid)
        assert grant.call_id == stored.get("call_id", "") == call_id
        assert grant.grant_id not in self.grant_ids
        self.grant_ids.add(grant.grant_id)
        assert (self.store.transactions, self.store.writes) == (1, 1)
        # SPEC §4: audited when given
        [given] = list(self.audit.records())[records_before:]
        assert (given["kind"], given["grant_id"], given["behavior_id"]) == (
            "grant",
            grant.grant_id,
            bid,
        )
        assert (given["reason"], given.get("call_id", "")) == (reason, call_id)
        self.model.grant(sid, bid, self.now, reason, key)
        self.last_granted = (sid, bid)
        if then and blocked is not None:
            self.retry(blocked, 0, then == "variant")

    # the clock

    def wait(self, wait: int | str) -> None:
        """Let time pass before a step: a few seconds around the override window or the touch
        interval; to exactly the end of a pending block's or a grant's window, or the touch
        interval after a recorded last access, or one second around either; or past every
        session's expiry (whatever the engine last wrote)."""
        if wait == "end":
            event("clock: past every expiry")
            self.now += TTL + TOUCH + 1
        elif isinstance(wait, str):
            kind = wait.rstrip("+-1")  # "window" or "touch", then "", "-1" or "+1"
            offset = int(wait[len(kind) :] or 0)
            sessions = self.model.sessions.values()
            if kind == "touch":  # the allow path writes again from here
                edges = [s.last_access + TOUCH + offset for s in sessions]
            else:
                edges = [
                    at + offset
                    for session in sessions
                    for b in session.behaviors.values()
                    for at in ([b.pending[1] + WINDOW] if b.pending else [])
                    + ([b.grant[0] + GRANT] if b.grant else [])
                ]
            self.now = min([at for at in edges if at >= self.now], default=self.now)
        else:
            self.now += wait

    @rule(
        sid=st.sampled_from(SESSIONS),
        edge=st.sampled_from(["ttl after the access", "expiry of the record"]),
        offset=st.sampled_from([-1, 0, 1]),
    )
    def to_ttl_edge(self, sid: str, edge: str, offset: int) -> None:
        """Jump to a session's expiry edges: ttl after its real last access (it must be alive
        there), or the engine's edge, ttl + touch interval after the recorded last access."""
        session = self.model.sessions.get(sid)
        if session is None:
            return
        at = session.seen + TTL if edge.startswith("ttl") else session.last_access + TTL + TOUCH
        if at + offset >= self.now:
            event(f"clock: {edge} {offset:+d}")
            self.now = at + offset

    # checks

    def deliver(self, call: Call) -> tuple[Decision, Expected]:
        """Send one event to the engine and the model; compare everything it produced."""
        sid = call.session_id
        live = self.model.live(sid, self.now)
        if live is None and sid in self.model.sessions:
            event("event on an expired session")
        data_before = self.store.data(sid)
        # the level each behavior's ladder reached for this call's agent (its scope)
        levels_before = (
            {
                bid: b.ladder(self.model.spec(bid), call.agent_id)[1]
                for bid, b in live.behaviors.items()
            }
            if live
            else {}
        )
        records_before = len(list(self.audit.records()))
        self.store.transactions = self.store.writes = 0
        alone = decide_alone(self.ev, call.event(), data_before, self.now)
        decision = self.ev.evaluate(call.event())
        # SPEC §3.8: at most one transaction per event (the allow path reads without one)
        assert self.store.transactions <= 1
        peeked = self.store.peeked
        assert (peeked.data if peeked is not None else None) == data_before  # read, never changed
        check_effects(alone, decision, data_before, self.store.data(sid), self.now, TTL)
        self.delivered += 1
        expected = self.model.event(call, self.now)
        self.just_retried = None
        note(
            f"+{self.now - T0:g}s {sid} {call.event_name} {call.tool_name or call.prompt} "
            f"{call.inputs}: {expected.violations} {expected.overrides} {expected.write}"
        )
        record_statistics(expected)
        # the allow path writes nothing, unless the recorded last access is touch_interval old
        assert self.store.writes == bool(expected.write) <= self.store.transactions
        if not expected.write:
            assert self.store.data(sid) == data_before
        check_decision(decision, expected, levels_before)
        check_audit(list(self.audit.records())[records_before:], expected)
        live_after = self.model.live(sid, self.now) is not None
        check_triple_write(self.audit, sid, self.store.load(sid) if live_after else None)
        check_messages(self.model, decision, expected, call)
        if decision.blocking is not None:
            self.last_blocked = (call, decision.blocking.behavior_id, self.now)
            if decision.blocking.level is SOFT:
                self.last_soft_block = self.last_blocked
                # the same call is always named by the same id, in the message and the record
                key = (sid, decision.blocking.behavior_id, call_key(call))
                call_id = self.call_ids.setdefault(key, decision.blocking.call_id)
                assert decision.blocking.call_id == call_id
                [block] = [r for r in self.audit.records() if r["kind"] == "block"][-1:]
                assert block.get("call_id") == call_id
            ids = [spec["id"] for spec in self.specs]
            old = data_before if live is not None else None
            check_chain_cut(ids, decision.blocking.behavior_id, old, self.store.data(sid))
        return decision, expected

    @invariant()
    def status_matches_model(self) -> None:
        for sid in SESSIONS:
            check_status(self.model, self.store, self.ev.status(sid), self.now)


TestEngineMatchesModel = EngineMachine.TestCase
# longer runs than the default 50 steps reach the ends of escalation lists and override windows,
# and withdrawals (a block, a grant, a retry that a later behavior blocks) several times as
# often; max_examples still comes from the loaded profile (dev 50, ci 100)
TestEngineMatchesModel.settings = settings(stateful_step_count=150)
