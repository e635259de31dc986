"""Subagents (issue 27) in the engine: the per-agent breakdown is rebuilt from the audit log
exactly and idempotently, old records read as the root thread's, the chain verifies with the
new fields, and the adapters carry ``agent_id``."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import behavior_yaml, write_catalog

import forge_policy as fp
from forge_policy.audit.jsonl import JsonlAuditSink
from forge_policy.engine import session
from forge_policy.engine.reconcile import reconcile_session
from forge_policy.state import SessionState

T0 = 1_800_000_000.0
EXPLORE = {"agent_id": "a-1", "agent": "Explore"}
REVIEW = {"agent_id": "a-2", "agent": "code-reviewer"}


def catalog(tmp_path: Path, scope: str) -> fp.Catalog:
    text = behavior_yaml(
        "laddered",
        default_level="nudge",
        triggers="    - event: PreToolUse\n      matcher: Bash\n",
        escalation="    escalation:\n      - {after: 2, level: warning}\n"
        "      - {after: 4, level: soft_block}\n",
    ).replace("scope: session", f"scope: {scope}")
    return fp.load_catalog(write_catalog(tmp_path / f"catalog-{scope}", {"laddered": text}))


def bash(command: str, **agent: str) -> fp.Event:
    return fp.Event("PreToolUse", "s1", tool_name="Bash", tool_input={"command": command}, **agent)


def breakdown(state: SessionState) -> dict[str, tuple[str, int, str | None, int]]:
    bstate = state.behavior("laddered")
    shares = {aid: bstate.find_agent(aid) for aid in bstate.agent_ids()}
    return {
        aid: (s.type, s.counter, s.effective_level.label if s.effective_level else None, s.blocks)
        for aid, s in shares.items()
        if s is not None
    }


@pytest.mark.parametrize("scope", ["session", "agent"])
def test_the_breakdown_is_rebuilt_from_the_log_exactly_and_idempotently(
    tmp_path: Path, scope: str
) -> None:
    audit = JsonlAuditSink(tmp_path / "audit.log", fsync=False)
    clock = [T0]
    ev = fp.Evaluator(catalog(tmp_path, scope), audit=audit, clock=lambda: clock[0])
    for n, agent in enumerate([EXPLORE, {}, EXPLORE, REVIEW, EXPLORE, {}, EXPLORE, EXPLORE]):
        clock[0] += 1
        ev.evaluate(bash(f"make {n}", **agent))
    stored = ev.store.load("s1")
    assert stored is not None
    rebuilt, _ = session.from_log(audit, "s1", T0)
    assert breakdown(rebuilt) == breakdown(stored)
    bstate = rebuilt.behavior("laddered")
    assert (bstate.counter, bstate.blocks) == (8, stored.behavior("laddered").blocks)
    before = rebuilt.copy().data
    reconcile_session(rebuilt, list(audit.records()))  # a second catch-up changes nothing
    assert rebuilt.data == before
    assert audit.verify().ok  # the chain holds with the new fields


def test_scope_agent_levels_in_the_rebuilt_state(tmp_path: Path) -> None:
    ev = fp.Evaluator(catalog(tmp_path, "agent"), clock=lambda: T0)
    outcomes = [ev.evaluate(bash("make", **a)).outcome for a in (EXPLORE, EXPLORE, {}, REVIEW)]
    assert outcomes == ["nudge", "warning", "nudge", "nudge"]
    rebuilt, _ = session.from_log(ev.audit, "s1", T0 - 1)
    assert breakdown(rebuilt) == {
        "a-1": ("Explore", 2, "warning", 0),
        "": ("", 1, "nudge", 0),
        "a-2": ("code-reviewer", 1, "nudge", 0),
    }
    assert rebuilt.behavior("laddered").effective_level is fp.Level.WARNING


def test_records_before_agents_read_as_the_root_threads() -> None:
    state = SessionState.new(T0)
    old = {
        "kind": "block",
        "timestamp": "2027-01-15T08:00:01+00:00",
        "session_id": "s1",
        "behavior_id": "laddered",
        "level": "soft_block",
        "counter": 4,
        "tool_name": "Bash",
        "event": "PreToolUse",
        "call_hash": "h",
        "override_mode": "agent",
    }
    reconcile_session(state, [old])
    assert breakdown(state) == {"": ("", 4, "soft_block", 1)}


def test_a_degraded_subagent_record_folds_into_its_agents_share_once() -> None:
    state = SessionState.new(T0)
    degraded = {
        "kind": "violation",
        "timestamp": "2027-01-15T08:00:02+00:00",
        "session_id": "s1",
        "behavior_id": "laddered",
        "level": "nudge",
        "counter": 1,
        "agent_id": "a-1",
        "agent": "Explore",
        "degraded": "rebuilt",
    }
    for _ in range(2):
        reconcile_session(
            state,
            [
                {**degraded, "counter": 1},
                {**degraded, "counter": 1, "timestamp": "2027-01-15T08:00:03+00:00"},
            ],
        )
    assert breakdown(state) == {"a-1": ("Explore", 2, "nudge", 0)}
    assert state.behavior("laddered").counter == 2


def test_a_fail_closed_state_is_a_floor_for_every_agent(tmp_path: Path) -> None:
    """SPEC §9's fail-closed session sets levels with no counted violation: a ``scope: agent``
    behavior starts every agent from it, never from nothing."""
    cat = catalog(tmp_path, "agent")
    state, _how, _mark = session.failed_closed(cat, T0, "test")
    from forge_policy.engine.decide import decide
    from forge_policy.engine.inputs import FactCache, Settings

    event = bash("make", **EXPLORE)
    outcome = decide(cat, event, state, T0, Settings(), FactCache(event, fp.builtin_facts()))
    assert outcome.decision.outcome == "soft_block"


def test_the_claude_code_payload_carries_the_agent() -> None:
    payload = {
        "session_id": "root-session",
        "hook_event_name": "PreToolUse",
        "tool_name": "Bash",
        "tool_input": {"command": "ls"},
        "agent_id": "a-1",
        "agent_type": "Explore",
    }
    event = fp.Event.from_claude_code(payload)
    assert (event.session_id, event.agent_id, event.agent) == ("root-session", "a-1", "Explore")
    assert event.top_level("agent_id") == "a-1"
    with pytest.raises(fp.EventError, match="event: agent_id: expected a string, got a number"):
        fp.Event.from_claude_code({**payload, "agent_id": 7})


def test_codex_hook_inputs_carry_the_subagent(tmp_path: Path) -> None:
    """Codex (openai/codex#22882): inside a thread-spawned subagent every hook input has
    ``agent_id`` (the child thread id) and ``agent_type``; SubagentStart/Stop always do."""
    from forge_policy.harness.registry import get

    to_event = get("codex").adapter.to_event
    event = to_event(
        {
            "session_id": "s",
            "hook_event_name": "PreToolUse",
            "turn_id": "t",
            "tool_name": "Bash",
            "tool_use_id": "c1",
            "tool_input": {"command": "ls"},
            "agent_id": "thread-7",
            "agent_type": "explorer",
        }
    )
    assert (event.agent_id, event.agent, event.harness) == ("thread-7", "explorer", "codex")
    start = to_event(
        {
            "session_id": "s",
            "hook_event_name": "SubagentStart",
            "agent_id": "thread-7",
            "agent_type": "explorer",
            "turn_id": "t",
        }
    )
    assert (start.event_name, start.agent_id) == ("SubagentStart", "thread-7")


def test_a_retry_after_another_agents_violation_releases_its_block_in_the_rebuilt_state(
    tmp_path: Path,
) -> None:
    """``scope: agent``: another agent counts between a subagent's block and its retry; the
    override names the block's counter, so a rebuild from the log releases that block (else a
    crash between the log and the state could let it be overridden twice)."""
    clock = [T0]
    ev = fp.Evaluator(catalog(tmp_path, "agent"), clock=lambda: clock[0])
    outcomes = []
    for agent in (EXPLORE, EXPLORE, EXPLORE, EXPLORE, REVIEW, EXPLORE):
        clock[0] += 1
        outcomes.append(ev.evaluate(bash("make", **agent)).outcome)
    assert outcomes == ["nudge", "warning", "warning", "soft_block", "nudge", "allow"]
    (override,) = [r for r in ev.audit.records() if r["kind"] == "override"]
    assert (override["counter"], override["agent_id"]) == (4, "a-1")
    rebuilt, _ = session.from_log(ev.audit, "s1", T0)
    assert rebuilt.behavior("laddered").pending_block is None
    assert rebuilt.behavior("laddered").override_ids() == {override["override_id"]}
