"""One expiry rule for the evaluator and every store's purge (SPEC §3.9).

The bug this pins: the evaluator allowed the allow path's touch slack, the stores' purge did
not, so a session the evaluator still counted as alive could be purged and lose its counters.
"""

from __future__ import annotations

from typing import Any

import forge_policy as fp
from forge_policy.state import SessionState, is_expired, touch_interval

T0 = 1_800_000_000.0
TTL = 86_400.0


class Clock:
    def __init__(self, now: float) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def test_purge_keeps_a_session_the_evaluator_still_counts(store: Any) -> None:
    clock = Clock(T0)
    ev = fp.Evaluator(fp.builtin_catalog(), store=store, clock=clock, ttl=TTL)
    push = fp.Event("PreToolUse", "s1", tool_name="Bash", tool_input={"command": "git push -f"})
    assert ev.evaluate(push).blocked
    before = _counters(ev.status("s1"))
    assert any(before.values())
    # past the TTL but inside the touch slack: the evaluator still counts this session
    clock.now = T0 + TTL + touch_interval(TTL) / 2
    assert not store.load("s1").expired(clock.now, TTL)
    assert store.purge(clock.now, TTL) == 0
    assert _counters(ev.status("s1")) == before
    # past the slack too: expired for the evaluator and for purge alike
    clock.now = T0 + TTL + touch_interval(TTL) + 1
    assert store.load("s1").expired(clock.now, TTL)
    assert store.purge(clock.now, TTL) == 1
    assert store.load("s1") is None


def _counters(status: Any) -> dict[str, int]:
    return {bid: entry.counter for bid, entry in status.behaviors.items()}


def test_the_rule_is_the_same_for_state_and_function() -> None:
    state = SessionState.new(T0)
    for delta in (0.0, TTL, TTL + touch_interval(TTL), TTL + touch_interval(TTL) + 0.001):
        assert state.expired(T0 + delta, TTL) is is_expired(T0, T0 + delta, TTL)
