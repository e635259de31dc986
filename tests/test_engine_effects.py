"""The effect-returning engine: ``decide`` only reads, its effects say what changes, fact
providers run once per event, and harness rules, time and randomness are injected."""

from __future__ import annotations

from typing import TYPE_CHECKING

import forge_policy as fp
from forge_policy.engine.decide import decide
from forge_policy.engine.effects import AddOverride, SetPendingBlock, apply_effects
from forge_policy.engine.inputs import FactCache, Settings
from forge_policy.model import AutoApproval
from forge_policy.state import SessionState, copy_json
from tests.helpers import Clock, CrashingStore, bash, behavior_yaml, write_catalog

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

PROBED = (
    "    - event: PreToolUse\n      matcher: Bash\n      conditions:\n"
    "        - field: facts.probe\n          operator: equals\n          value: 'yes'\n"
)


def user_rule(behavior_id: str) -> str:
    text = behavior_yaml(behavior_id, default_level="soft_block")
    return text.replace(
        "    default_level: soft_block", "    default_level: soft_block\n    override: user"
    )


def counting(calls: list[str]) -> Callable[[fp.Event], object]:
    def probe(event: fp.Event) -> object:
        calls.append(event.tool_name)
        return "yes"

    return probe


def test_an_override_replayed_from_the_log_decides_once(tmp_path: Path) -> None:
    """A stale pending block (its override audited, the state write lost) is reconciled away
    before deciding: the event is decided once, so its fact providers run once (the engine once
    decided, saw the override, reconciled and decided again with fresh facts)."""
    behaviors = {
        "warn": behavior_yaml("warn", default_level="warning", triggers=PROBED),
        "gate": behavior_yaml("gate", default_level="soft_block"),
    }
    calls: list[str] = []
    store = CrashingStore()
    sink = fp.MemoryAuditSink()
    clock = Clock()
    ev = fp.Evaluator(
        fp.load_catalog(write_catalog(tmp_path / "c", behaviors)),
        store=store,
        audit=sink,
        clock=clock,
        facts={"probe": counting(calls)},
    )
    assert ev.evaluate(bash("deploy")).blocked
    store.armed = True
    clock.advance(1)
    assert [o["mechanism"] for o in ev.evaluate(bash("deploy")).overrides] == ["retry"]
    calls.clear()
    clock.advance(1)
    third = ev.evaluate(bash("deploy"))  # the state still holds the spent pending block
    assert third.blocked and third.overrides == ()
    assert calls == ["Bash"]
    assert sum(r["kind"] == "override" for r in sink.records()) == 1


def test_a_bypass_dry_run_shares_the_events_facts(tmp_path: Path) -> None:
    behaviors = {
        "off": behavior_yaml("off", default_level="warning", triggers=PROBED),
        "on": behavior_yaml("on", default_level="warning", triggers=PROBED),
    }
    calls: list[str] = []
    catalog = fp.load_catalog(write_catalog(tmp_path / "c", behaviors))
    ev = fp.Evaluator(catalog, facts={"probe": counting(calls)}, disable={"off": "X"})
    event = bash("ls")
    decision = ev.evaluate(event)  # the bypass dry run and the decision: one fact cache
    assert [r["behavior_id"] for r in decision.bypasses] == ["off"]
    assert [v.behavior_id for v in decision.violations] == ["on"]
    assert calls == ["Bash"]
    assert [r["behavior_id"] for r in ev.audit.records() if r["kind"] == "bypass"] == ["off"]
    ev.evaluate(event)  # a later evaluation of the same event computes its facts again
    assert calls == ["Bash", "Bash"]


def test_decide_reads_and_drops_a_withdrawn_override(tmp_path: Path) -> None:
    """``first``'s pending block matches the retry, but ``second`` refuses the call: the
    outcome holds no override and does not clear the pending block; the state is unchanged
    until the effects are applied."""
    behaviors = {
        "first": behavior_yaml("first", default_level="soft_block"),
        "second": behavior_yaml("second", default_level="soft_block"),
    }
    catalog = fp.load_catalog(write_catalog(tmp_path / "c", behaviors))
    settings, event = Settings(), bash("make")
    state = SessionState.new(0.0)
    first = decide(catalog, event, state, 1.0, settings, FactCache(event, {}))
    assert state.behavior_ids() == []
    apply_effects(state, first.effects)
    snapshot = copy_json(state.data)
    second = decide(catalog, event, state, 2.0, settings, FactCache(event, {}))
    assert state.data == snapshot
    assert second.decision.blocking is not None
    assert second.decision.blocking.behavior_id == "second"
    assert not [e for e in second.effects if isinstance(e, AddOverride)]
    assert not [
        e for e in second.effects if isinstance(e, SetPendingBlock) and e.behavior_id == "first"
    ]


def test_the_grant_id_comes_from_the_injected_random_source(tmp_path: Path) -> None:
    behaviors = {"gate": behavior_yaml("gate", default_level="soft_block")}
    catalog = fp.load_catalog(write_catalog(tmp_path / "c", behaviors))
    ids = iter(["g1", "g2"])
    ev = fp.Evaluator(catalog, clock=Clock(), random_id=lambda: next(ids))
    assert ev.override("s1", "gate", reason="ok").grant_id == "g1"
    assert ev.override("s1", "gate", reason="ok").grant_id == "g2"
    again = fp.Evaluator(catalog, clock=Clock(), random_id=lambda: "g2")
    again.override("s1", "gate", reason="ok")
    # the same grant at the same time: the same override id, run after run
    assert (
        ev.evaluate(bash("x")).overrides[0]["override_id"]
        == (again.evaluate(bash("x")).overrides[0]["override_id"])
    )


def ask_event(harness: str = "claude-code") -> fp.Event:
    return fp.Event(
        "PreToolUse",
        "s1",
        tool_name="Bash",
        tool_input={"command": "install"},
        permission_mode="bypassPermissions",
        harness=harness,
    )


def test_bypass_permissions_is_claude_codes_rule_and_can_be_replaced(tmp_path: Path) -> None:
    catalog = fp.load_catalog(write_catalog(tmp_path / "c", {"asks": user_rule("asks")}))
    allowed = fp.Evaluator(catalog).evaluate(ask_event())
    assert not allowed.blocked and allowed.violations[0].overridden == "user"
    assert [o["reason"] for o in allowed.overrides] == ["permission_mode bypassPermissions"]
    # no rule: the user is asked, whatever the permission mode
    asked = fp.Evaluator(catalog, auto_approve=None).evaluate(ask_event())
    assert asked.blocking is not None and asked.blocking.override_mode == "user"
    # the rule belongs to Claude Code: another harness's event is asked
    assert fp.Evaluator(catalog).evaluate(ask_event("gemini")).blocked
    # an embedder's own rule, recorded with its reason
    seen: list[str] = []

    def approve(event: fp.Event, violation: fp.Violation) -> AutoApproval:
        seen.append(violation.override_mode)
        return AutoApproval("trusted runner", "(allowed by the runner)")

    own = fp.Evaluator(catalog, auto_approve=approve).evaluate(ask_event("gemini"))
    assert not own.blocked and [o["reason"] for o in own.overrides] == ["trusted runner"]
    assert own.messages[0].endswith("\n(allowed by the runner)") and seen == ["user"]


def test_the_rule_is_never_asked_about_a_deny(tmp_path: Path) -> None:
    behaviors = {"gate": behavior_yaml("gate", default_level="soft_block")}
    catalog = fp.load_catalog(write_catalog(tmp_path / "c", behaviors))

    def approve_everything(event: fp.Event, violation: fp.Violation) -> AutoApproval:
        raise AssertionError(f"asked about {violation}")

    decision = fp.Evaluator(catalog, auto_approve=approve_everything).evaluate(ask_event())
    assert decision.blocking is not None and decision.blocking.override_mode == "agent"


def test_a_derived_state_takes_every_effect_as_a_copy_and_never_changes_its_source() -> None:
    """``SessionState.derive`` (issue 28: the state of a block is copied where its effects
    write, not whole): every effect applied to it gives what it gives on a deep copy, and the
    state it was derived from, shared entries included, stays as it was."""
    from forge_policy.engine.effects import (
        AgentTally,
        CountAgent,
        CountBlock,
        CountViolation,
        NoteAgent,
        NoteBlockedCall,
        SetCounter,
        SetFlag,
        SetGrant,
        SetLevel,
        SetSessionDisabled,
        SetTotal,
    )
    from forge_policy.levels import Level
    from forge_policy.state import Grant, PendingBlock

    source = SessionState.new(0.0)
    for n, behavior_id in enumerate(("a", "b", "c")):
        tally = AgentTally("", "", n + 1, Level.WARNING)
        apply_effects(
            source,
            [
                CountViolation(behavior_id, n + 1, Level.WARNING, 1.0, "Bash", agent=tally),
                CountBlock(behavior_id, agent_id=""),
                AddOverride(behavior_id, {"kind": "override", "override_id": f"o{n}"}),
                NoteBlockedCall(behavior_id, "c1", "h1", "Bash: x", "Bash", 1.0),
            ],
        )
    apply_effects(source, [SetFlag("f", True), SetTotal("t", 3), NoteAgent("a1", "Explore")])
    source.data["x-future"] = {"kept": [1, {"deep": True}]}
    before = copy_json(source.data)
    effects = [
        CountViolation(
            "a", 9, Level.SOFT_BLOCK, 2.0, "Write", agent=AgentTally("s", "", 1, Level.SOFT_BLOCK)
        ),
        CountAgent("b", AgentTally("", "", 7, Level.HARD_BLOCK), blocked=True),
        SetCounter("c", 4),
        SetLevel("new", Level.NUDGE),
        SetPendingBlock("a", PendingBlock("h2", 2.0, 9)),
        SetGrant("b", Grant(at=2.0, reason="ok", grant_id="g")),
        NoteBlockedCall("a", "c2", "h2", "Write: y", "Write", 2.0),
        AddOverride("c", {"kind": "override", "override_id": "o9"}),
        SetFlag("f", False),
        SetFlag("g", True),
        SetTotal("t", None),
        NoteAgent("a1", "", stopped="T"),
        SetSessionDisabled(("b",)),
    ]
    for cut in range(len(effects) + 1):
        derived, copied = source.derive(), source.copy()
        apply_effects(derived, effects[:cut])
        apply_effects(copied, effects[:cut])
        derived.touch(5.0)
        copied.touch(5.0)
        derived.set_reconciled(3, 1.0, "o")
        copied.set_reconciled(3, 1.0, "o")
        assert derived.data == copied.data
        assert source.data == before  # the source, shared entries and all, untouched
        # a state derived from a derived one is as independent
        again = derived.derive()
        apply_effects(again, effects)
        assert source.data == before and derived.data == copied.data
