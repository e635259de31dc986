"""Focused tests of what the stateful machine (``test_stateful_invariants.py``) found or pins:
engine bugs it found (now fixed), and the override and expiry semantics its model encodes
(SPEC §3.9, §4), each in its smallest form.
"""

from __future__ import annotations

from forge_policy import Evaluator
from forge_policy.audit.memory import MemoryAuditSink
from forge_policy.catalog.behavior import Behavior
from forge_policy.catalog.catalog import Catalog
from tests.helpers import Clock
from tests.machine_strategies import Call
from tests.reference_model import TTL, WINDOW


def plain_spec(default: str, escalation: tuple = (), triggers: tuple = (), **kw: str) -> dict:
    """A minimal normalised spec: by default, any call to tool A violates behavior alpha."""
    behavior_id = kw.get("behavior_id", "alpha")
    return {
        "source": "<test>",
        "id": behavior_id,
        "name": f"Rule {behavior_id}",
        "description": "d",
        "category": "core",
        "scope": "session",
        "enabled": True,
        "triggers": list(triggers)
        or [
            {
                "event": "PreToolUse",
                "matcher": "A",
                "conditions": [],
                "logic": "all",
                "action": "evaluate",
            }
        ],
        "default_level": default,
        "escalation": [list(step) for step in escalation],
        "override": "agent",
        "mode": "enforce",
        "bypass": "allowed",
        "hint": "Fix it.",
        "suggested_tool": "",
        "suggested_action": "",
        "templates": {},
        "applies_to": {"tools": [], "agents": [], "profiles": []},
    }


def evaluator(*specs: dict, audit: MemoryAuditSink | None = None) -> tuple[Evaluator, Clock]:
    clock = Clock()
    catalog = Catalog([Behavior(spec) for spec in specs])
    return Evaluator(catalog, audit=audit, clock=clock, ttl=TTL, override_window=WINDOW), clock


def tool_call(tool: str, x: str = "a") -> Call:
    return Call("PreToolUse", "s1", tool_name=tool, tool_input=(("x", x),))


def two_soft_blocks() -> tuple[Evaluator, Clock, MemoryAuditSink]:
    """alpha then bravo, both soft_block on every call to tool A."""
    audit = MemoryAuditSink()
    ev, clock = evaluator(
        plain_spec("soft_block"), plain_spec("soft_block", behavior_id="bravo"), audit=audit
    )
    return ev, clock, audit


def kinds(audit: MemoryAuditSink, since: int) -> list[tuple]:
    return [
        (r["kind"], r["behavior_id"], r.get("mechanism") or r.get("overridden", ""))
        for r in list(audit.records())[since:]
    ]


# --- engine bugs the machine found, now fixed ------------------------------------------------


def test_status_reports_a_silent_level_reached() -> None:
    """``status()`` reports a behavior violated at silent as level ``"silent"`` (it once tested
    ``if level`` on an IntEnum whose SILENT member is 0, and showed None)."""
    ev, _ = evaluator(plain_spec("silent"))
    ev.evaluate(tool_call("A").event())
    row = ev.status("s1").behaviors["alpha"]
    assert (row.counter, row.level.label) == (1, "silent")


def test_escalation_to_hard_block_leaves_nothing_to_override() -> None:
    """Escalating to hard_block clears the behavior's pending block and grant, so retrying an
    older soft-blocked call is denied (SPEC §4: hard_block has no override and no pending
    block); it once passed as an override."""
    ev, clock = evaluator(plain_spec("soft_block", [(2, "hard_block")]))
    assert ev.evaluate(tool_call("A", "a").event()).outcome == "soft_block"
    ev.override("s1", "alpha", reason="granted before the escalation")
    clock.now += 1
    assert ev.evaluate(tool_call("A", "b").event()).outcome == "hard_block"
    state = ev.store.load("s1")
    assert state is not None
    assert (state.behavior("alpha").pending_block, state.behavior("alpha").grant) == (None, None)
    clock.now += 1
    retry = ev.evaluate(tool_call("A", "a").event())
    assert (retry.outcome, retry.overrides) == ("hard_block", ())


def test_session_expires_ttl_after_its_last_access_even_without_a_write() -> None:
    """The allow path refreshes ``last_accessed_at`` only every ``touch_interval``; expiry
    therefore allows that slack, so a session never expires early (at most that much late).
    It once expired ttl after the last write, up to 300 s before the last access."""
    ev, clock = evaluator(plain_spec("nudge"))
    slack = ev.settings.touch_interval
    assert ev.evaluate(tool_call("A").event()).violations[0].counter == 1
    clock.now += 10
    assert ev.evaluate(tool_call("B").event()).violations == ()  # an access that changes nothing
    clock.now += TTL  # exactly ttl after the last access: not expired yet (inclusive)
    assert ev.evaluate(tool_call("A").event()).violations[0].counter == 2
    clock.now += TTL + slack + 0.001  # past ttl + slack after the last access: expired
    assert ev.evaluate(tool_call("A").event()).violations[0].counter == 1


def test_status_of_an_expired_session_shows_no_flags_or_totals() -> None:
    """``status()`` of an expired session shows it as new: no behaviors, flags or totals (SPEC
    §3.9); it once still listed the old flags and totals."""
    triggers = (
        {
            "event": "PreToolUse",
            "matcher": "B",
            "conditions": [],
            "logic": "all",
            "action": "set_flag",
            "flag": "f1",
        },
    )
    ev, clock = evaluator(plain_spec("nudge", triggers=triggers))
    ev.evaluate(tool_call("B").event())
    assert ev.status("s1").flags == ("f1",)
    clock.now += TTL + ev.settings.touch_interval + 1
    status = ev.status("s1")
    assert (status.exists, status.flags, status.totals) == (False, (), {})


def test_two_explicit_overrides_at_one_clock_reading_have_distinct_ids() -> None:
    """Each grant carries a random ``grant_id`` that its override id derives from, so two
    explicit passes at one clock reading (a frozen or coarse clock) have distinct ids; they once
    shared one, and everything keyed by id (reconciliation, insights) saw a single override."""
    ev, _ = evaluator(plain_spec("soft_block"))
    ids = []
    for x in ("a", "b"):
        ev.override("s1", "alpha", reason=f"approved {x}")
        decision = ev.evaluate(tool_call("A", x).event())
        assert [o["mechanism"] for o in decision.overrides] == ["explicit"]
        ids.append(decision.overrides[0]["override_id"])
    assert ev.status("s1").behaviors["alpha"].overrides == 2
    assert ids[0] != ids[1]


# --- the semantics the model encodes ---------------------------------------------------------


def test_a_withdrawn_explicit_pass_leaves_no_trace() -> None:
    """A grant spent on a call that a later behavior blocks is withdrawn whole: no override, no
    ``block`` record overridden ``explicit``, no violation, no block counted; the grant is kept
    for the next attempt."""
    ev, _, audit = two_soft_blocks()
    ev.override("s1", "alpha", reason="approved")
    first = ev.evaluate(tool_call("A").event())
    assert first.blocking is not None and first.blocking.behavior_id == "bravo"
    assert ([v.behavior_id for v in first.violations], first.overrides) == (["bravo"], ())
    assert kinds(audit, 0) == [("grant", "alpha", ""), ("block", "bravo", "")]
    alpha = ev.status("s1").behaviors["alpha"]
    assert (alpha.counter, alpha.blocks, alpha.overrides) == (0, 0, 0)
    again = ev.evaluate(tool_call("A").event())  # the grant passes alpha, the retry bravo
    assert not again.blocked
    assert [(o["behavior_id"], o["mechanism"], o["reason"]) for o in again.overrides] == [
        ("alpha", "explicit", "approved"),
        ("bravo", "retry", ""),
    ]
    assert kinds(audit, 2) == [
        ("block", "alpha", "explicit"),
        ("override", "alpha", "explicit"),
        ("override", "bravo", "retry"),
    ]


def test_a_withdrawn_retry_keeps_its_pending_block_and_grant() -> None:
    """A retry that spends a grant, withdrawn because a later behavior blocks the call, leaves
    both the pending block and the grant: the next retry passes, as ``explicit``."""
    ev, clock, audit = two_soft_blocks()
    blocked = ev.evaluate(tool_call("A").event()).blocking
    assert blocked is not None and blocked.behavior_id == "alpha"
    # bound to the blocked call (``--call``): only then does its retry spend the grant
    ev.override("s1", "alpha", reason="approved", call=blocked.call_id)
    clock.now += 1
    retry = ev.evaluate(tool_call("A").event())
    assert retry.blocking is not None and retry.blocking.behavior_id == "bravo"
    assert retry.overrides == ()
    assert ev.status("s1").behaviors["alpha"].pending_block is True
    clock.now += 1
    again = ev.evaluate(tool_call("A").event())
    assert [(o["behavior_id"], o["mechanism"]) for o in again.overrides] == [
        ("alpha", "explicit"),
        ("bravo", "retry"),
    ]
    assert sum(r["kind"] == "override" for r in audit.records()) == 2


def test_the_allow_path_writes_only_every_touch_interval() -> None:
    """An event that changes nothing writes nothing, unless the recorded last access is
    ``touch_interval`` old: then it writes the new last access (and nothing else)."""
    ev, clock = evaluator(plain_spec("nudge"))
    ev.evaluate(tool_call("A").event())
    written = ev.store.load("s1")
    assert written is not None
    for step in (1, ev.settings.touch_interval - 2):
        clock.now += step
        ev.evaluate(tool_call("B").event())
        assert ev.store.load("s1").data == written.data  # type: ignore[union-attr]
    clock.now += 1  # touch_interval after the write
    ev.evaluate(tool_call("B").event())
    touched = ev.store.load("s1")
    assert touched is not None and touched.last_accessed_at == clock.now
    assert {**touched.data, "last_accessed_at": None} == {**written.data, "last_accessed_at": None}


def test_a_long_session_keeps_a_bounded_state_and_counts_every_override() -> None:
    """Issue 9: history lives in the audit log. After 200 overrides the state keeps only the
    latest few records (its document no larger than after 20), ``status`` still counts all 200,
    and replaying the whole log adds nothing (the dropped ones are behind the horizon)."""
    import json

    from forge_policy.state import RECENT_OVERRIDES

    audit = MemoryAuditSink()
    ev, clock = evaluator(plain_spec("soft_block"), audit=audit)
    sizes = {}
    for n in range(200):
        call = tool_call("A", str(n)).event()
        assert ev.evaluate(call).blocked
        clock.now += 1
        assert not ev.evaluate(call).blocked  # the retry: an override
        clock.now += 1
        if n + 1 in (20, 200):
            state = ev.store.load("s1")
            assert state is not None
            sizes[n + 1] = len(json.dumps(state.to_dict()))
    state = ev.store.load("s1")
    assert state is not None
    bstate = state.behavior("alpha")
    assert len(bstate.overrides) == RECENT_OVERRIDES
    assert bstate.override_count == 200 == ev.status("s1").behaviors["alpha"].overrides
    assert sizes[200] <= sizes[20] + 40  # a digit more in counters and call inputs, no more
    assert ev.reconcile("s1") == []
    logged = [r for r in audit.records() if r["kind"] == "override"]
    assert len(logged) == 200
    assert [o["override_id"] for o in bstate.overrides] == [
        r["override_id"] for r in logged[-RECENT_OVERRIDES:]
    ]


def test_a_users_no_is_never_undone_by_a_retry() -> None:
    """Issue 10 route 3, SPEC §4: after ``ask`` the user declines (no PostToolUse arrives); the
    identical call is asked again, every time, and never recorded as approved. Only the
    PostToolUse of an asked call (same ``tool_use_id``) records the user's approval."""
    import forge_policy as fp

    spec = plain_spec("soft_block")
    spec["override"] = "user"
    audit = MemoryAuditSink()
    ev, clock = evaluator(spec, audit=audit)

    def call(use_id: str) -> fp.Event:
        return fp.Event(
            "PreToolUse", "s1", tool_name="A", tool_input={"x": "a"}, tool_use_id=use_id
        )

    for n in range(3):  # asked, declined, retried 5 s later: asked again
        decision = ev.evaluate(call(f"t{n}"))
        assert decision.blocked and decision.blocking is not None
        assert decision.blocking.override_mode == "user" and decision.overrides == ()
        clock.now += 5
    assert [r["kind"] for r in audit.records()] == ["block"] * 3
    approved = ev.evaluate(
        fp.Event("PostToolUse", "s1", tool_name="A", tool_input={"x": "a"}, tool_use_id="t2")
    )
    assert [o["mechanism"] for o in approved.overrides] == ["user"]
    assert [r["kind"] for r in audit.records()][-1] == "override"
    assert ev.status("s1").behaviors["alpha"].overrides == 1


def test_a_grant_is_spent_on_the_next_blocked_call_and_never_on_a_retry() -> None:
    """Issue 23, SPEC §4: block A, grant, block B, retry A were all denied (the grant waited for
    a retry that the next block replaced). Without ``--call`` the grant is a one-shot pass for
    the next *blocked* call of the behavior: B, a different call that would be blocked, passes
    by it (``explicit``); A's retry within the window is an override by retry already and
    leaves the grant alone. Issue 15's worry (one block, two passes) does not arise: each pass
    overrides its own counted block."""
    audit = MemoryAuditSink()
    ev, clock = evaluator(plain_spec("soft_block"), audit=audit)
    assert ev.evaluate(tool_call("A", "first").event()).blocked
    ev.override("s1", "alpha", reason="approved")
    clock.now += 1
    other = ev.evaluate(tool_call("A", "other").event())
    assert not other.blocked
    assert [(o["mechanism"], o["reason"]) for o in other.overrides] == [("explicit", "approved")]
    clock.now += 1
    retry = ev.evaluate(tool_call("A", "first").event())  # within the window: a retry
    assert not retry.blocked
    assert [(o["mechanism"], o["reason"]) for o in retry.overrides] == [("retry", "")]
    row = ev.status("s1").behaviors["alpha"]
    assert (row.blocks, row.overrides, row.override_granted) == (2, 2, None)
    clock.now += 1
    assert ev.evaluate(tool_call("A", "third").event()).blocked  # one-shot
