"""Subagents (issue 27) through the real ``forge-policy hook`` process: Claude Code payloads
with ``agent_id``/``agent_type`` (a subagent's events carry its root session's ``session_id``)
for every outcome, escalation shared with the root session (``scope: session``) or climbed per
agent (``scope: agent``), the per-agent breakdown of ``status``, and the agent in the audit
records."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from helpers import behavior_yaml
from hookrun import CATALOG, SCRIPT, Project, contains

EXPLORE = {"agent_id": "a-explore-1", "agent_type": "Explore"}
REVIEW = {"agent_id": "a-review-2", "agent_type": "code-reviewer"}


def laddered(scope: str = "session") -> str:
    """nudge, then warning from the 2nd violation, soft_block from the 3rd."""
    text = behavior_yaml(
        "laddered",
        default_level="nudge",
        triggers=contains("ladder-me"),
        escalation="    escalation:\n      - {after: 2, level: warning}\n"
        "      - {after: 3, level: soft_block}\n",
        extra='rendering:\n  nudge_template: "laddered: {counter}"\n'
        '  warning_template: "laddered: warning {counter}"\n'
        '  block_reason: "laddered: refused"\n',
    )
    return text.replace("scope: session", f"scope: {scope}")


def cli(project: Project, *args: str) -> subprocess.CompletedProcess[str]:
    result = subprocess.run(
        [str(SCRIPT), *args], capture_output=True, text=True, env=project.env, cwd=project.dir
    )
    assert result.returncode == 0, result
    assert "Traceback" not in result.stderr
    return result


def status_json(project: Project) -> dict[str, Any]:
    report = json.loads(cli(project, "status", "--session", project.session, "--json").stdout)
    (session,) = report["sessions"]
    assert isinstance(session, dict)
    return session


def shown(out: dict[str, Any] | None) -> str:
    assert out is not None
    return str(out.get("systemMessage", ""))


def decision(out: dict[str, Any] | None) -> str:
    assert out is not None
    return str(out["hookSpecificOutput"].get("permissionDecision", ""))


@pytest.fixture
def shared(tmp_path: Path) -> Project:
    return Project(tmp_path, {"laddered": laddered()})


def test_a_subagents_violations_escalate_the_root_sessions_ladder(shared: Project) -> None:
    """The test issue 27 asks for (fails before it: no per-agent breakdown, no agent in the
    records). Two violations in an Explore subagent bring the session's ladder to warning; the
    root thread's first violation is then the session's third: a soft block."""
    out, _ = shared.run(shared.bash("echo ladder-me", **EXPLORE))
    assert shown(out) == "[laddered] laddered: 1"
    out, _ = shared.run(shared.bash("echo ladder-me 2", **EXPLORE))
    assert shown(out).startswith("[laddered] laddered: warning 2")
    out, _ = shared.run(shared.bash("echo ladder-me 3"))  # the root thread
    assert decision(out) == "deny"

    row = status_json(shared)["behaviors"]["laddered"]
    assert (row["counter"], row["level"], row["blocks"]) == (3, "soft_block", 1)
    assert row["agents"] == [
        {
            "agent_id": "",
            "type": "",
            "counter": 1,
            "level": "soft_block",
            "blocks": 1,
            "root": True,
        },
        {
            "agent_id": "a-explore-1",
            "type": "Explore",
            "counter": 2,
            "level": "warning",
            "blocks": 0,
            "root": False,
        },
    ]
    first, second, third = (r for r in shared.audit() if r["kind"] in ("violation", "block"))
    assert (first["agent_id"], first["agent"], first["counter"]) == ("a-explore-1", "Explore", 1)
    assert (second["agent_id"], second["counter"], second.get("agent_counter")) == (
        "a-explore-1",
        2,
        None,  # the agent's counter equals the session's: left out
    )
    assert "agent_id" not in third and third["counter"] == 3 and third["agent_counter"] == 1


def test_scope_agent_climbs_each_agents_own_ladder(tmp_path: Path) -> None:
    project = Project(tmp_path, {"laddered": laddered("agent")})
    for n in (1, 2):
        project.run(project.bash(f"echo ladder-me {n}", **EXPLORE))
    out, _ = project.run(project.bash("echo ladder-me root"))  # the root is an agent of its own
    assert shown(out) == "[laddered] laddered: 1"
    out, _ = project.run(project.bash("echo ladder-me r1", **REVIEW))
    assert shown(out) == "[laddered] laddered: 1"
    out, _ = project.run(project.bash("echo ladder-me 3", **EXPLORE))  # Explore's third
    assert decision(out) == "deny"
    row = status_json(project)["behaviors"]["laddered"]
    assert row["counter"] == 5  # the session total still counts every violation
    assert row["level"] == "soft_block"  # the highest any agent reached
    counts = {a["agent_id"]: (a["counter"], a["level"]) for a in row["agents"]}
    assert counts == {
        "": (1, "nudge"),
        "a-explore-1": (3, "soft_block"),
        "a-review-2": (1, "nudge"),
    }


def test_a_session_without_subagents_keeps_its_status_shape(shared: Project) -> None:
    shared.run(shared.bash("echo ladder-me"))
    session = status_json(shared)
    assert "agents" not in session and "agents" not in session["behaviors"]["laddered"]
    text = cli(shared, "status", "--session", shared.session).stdout
    assert "└" not in text


def test_status_text_groups_the_counters_by_agent(shared: Project) -> None:
    shared.run(shared.payload("SubagentStart", **REVIEW))
    shared.run(shared.bash("echo ladder-me", **EXPLORE))
    shared.run(shared.bash("echo ladder-me 2"))
    text = cli(shared, "status", "--session", shared.session).stdout
    lines = [line.strip() for line in text.splitlines()]
    at = next(i for i, line in enumerate(lines) if line.startswith("laddered"))
    assert lines[at + 1].split()[:4] == ["└", "root", "thread", "1"]
    assert lines[at + 2].split()[:5] == ["└", "agent", "a-explore-1", "(Explore)", "1"]
    # the announced reviewer did nothing: it has no share, the session still names it
    assert status_json(shared)["agents"] == {
        "a-explore-1": "Explore",
        "a-review-2": "code-reviewer",
    }


# -- every outcome with subagent payloads ------------------------------------------------------


@pytest.fixture
def project(tmp_path: Path) -> Project:
    return Project(tmp_path, CATALOG)


def test_a_subagents_call_that_passes_prints_nothing(project: Project) -> None:
    read = project.payload(tool_name="Read", tool_input={"file_path": "/a.py"}, **EXPLORE)
    assert project.run(read) == (None, "")


def test_nudge_and_warning_in_a_subagent(project: Project) -> None:
    assert shown(project.run(project.bash("echo nudge-me", **EXPLORE))[0]) == (
        "[nudger] nudger: Bash (1)"
    )
    assert shown(project.run(project.bash("echo warn-me", **EXPLORE))[0]).startswith(
        "[warner] warner: warning 1"
    )
    kinds = [(r["kind"], r["behavior_id"], r["agent_id"]) for r in project.audit()]
    assert kinds == [
        ("violation", "nudger", "a-explore-1"),
        ("violation", "warner", "a-explore-1"),
    ]


def test_a_soft_block_in_a_subagent_is_overridden_by_its_own_retry(project: Project) -> None:
    call = project.bash("echo soft-me", **EXPLORE)
    assert decision(project.run(call)[0]) == "deny"
    again = {**call, "tool_use_id": "toolu_retry"}
    out, _ = project.run(again)  # the same subagent's retry: the override
    assert shown(out) == "[softy] Let through by an override (retry); recorded in the audit log."
    (override,) = [r for r in project.audit() if r["kind"] == "override"]
    assert (override["mechanism"], override["agent_id"], override["agent"]) == (
        "retry",
        "a-explore-1",
        "Explore",
    )
    row = status_json(project)["behaviors"]["softy"]
    assert (row["counter"], row["overrides"], row["pending_block"]) == (1, 1, False)


@pytest.mark.parametrize("other", [REVIEW, {}], ids=["another-subagent", "the-root-thread"])
def test_the_same_call_from_another_agent_does_not_spend_the_block(
    project: Project, other: dict[str, str]
) -> None:
    """A retry is the same call *from the same agent*: another agent's identical call is a new
    violation (SPEC §4 counts one override per block, and the block was the subagent's)."""
    assert decision(project.run(project.bash("echo soft-me", **EXPLORE))[0]) == "deny"
    assert decision(project.run(project.bash("echo soft-me", **other))[0]) == "deny"
    assert [r["kind"] for r in project.audit()] == ["block", "block"]
    row = status_json(project)["behaviors"]["softy"]
    assert (row["counter"], row["overrides"]) == (2, 0)


def test_a_grant_bound_to_a_subagents_call_is_spent_only_by_that_subagent(
    project: Project,
) -> None:
    assert decision(project.run(project.bash("echo soft-me", **EXPLORE))[0]) == "deny"
    (call_id,) = project.call_ids
    cli(
        project,
        "override",
        "softy",
        "--session",
        project.session,
        "--call",
        call_id,
        "--reason",
        "ok",
    )
    # the root thread's identical call is another call: the bound grant does not let it through
    assert decision(project.run(project.bash("echo soft-me"))[0]) == "deny"
    out, _ = project.run(project.bash("echo soft-me", **EXPLORE))
    assert "Let through by an override (explicit)" in shown(out)
    spent = [r for r in project.audit() if r["kind"] == "override"]
    assert [(r["mechanism"], r.get("agent_id")) for r in spent] == [("explicit", "a-explore-1")]


def test_a_hard_block_in_a_subagent(project: Project) -> None:
    out, _ = project.run(project.bash("echo hard-me", **EXPLORE))
    assert decision(out) == "deny"
    assert project.run(project.bash("echo hard-me", **EXPLORE))[0] == out  # no override
    blocks = [r for r in project.audit() if r["kind"] == "block"]
    assert [(b["level"], b["agent_id"], b["counter"]) for b in blocks] == [
        ("hard_block", "a-explore-1", 1),
        ("hard_block", "a-explore-1", 2),
    ]


def test_the_seen_record_names_the_subagent(project: Project) -> None:
    project.run(project.payload(tool_name="Read", tool_input={"file_path": "/a"}, **EXPLORE))
    (seen,) = project.audit(seen=True)
    assert (seen["kind"], seen["agent_id"], seen["agent"]) == ("seen", "a-explore-1", "Explore")


# -- SubagentStart / SubagentStop --------------------------------------------------------------


def lifecycle(behavior_id: str, event: str, level: str) -> str:
    return behavior_yaml(behavior_id, default_level=level, triggers=f"    - event: {event}\n")


def test_subagent_start_is_remembered_and_never_blocks(tmp_path: Path) -> None:
    project = Project(
        tmp_path, {"start-rule": lifecycle("start-rule", "SubagentStart", "hard_block")}
    )
    out, _ = project.run(project.payload("SubagentStart", **EXPLORE))
    assert out is not None and "decision" not in out and "permissionDecision" not in json.dumps(out)
    assert out["hookSpecificOutput"]["hookEventName"] == "SubagentStart"  # advice only
    session = status_json(project)
    assert session["agents"] == {"a-explore-1": "Explore"}


def test_subagent_stop_blocks_as_stop_does(tmp_path: Path) -> None:
    project = Project(tmp_path, {"stop-rule": lifecycle("stop-rule", "SubagentStop", "soft_block")})
    payload = project.payload(
        "SubagentStop",
        stop_hook_active=False,
        agent_transcript_path="/t/agent.jsonl",
        last_assistant_message="done",
        **EXPLORE,
    )
    out, _ = project.run(payload)
    assert out is not None and out["decision"] == "block"
    (block,) = [r for r in project.audit() if r["kind"] == "block"]
    assert (block["event"], block["agent_id"]) == ("SubagentStop", "a-explore-1")


# -- applies_to.agents (SPEC §5): the subagent's type, else the harness name -------------------


def test_applies_to_agents_matches_the_subagent_type_and_the_root_harness(tmp_path: Path) -> None:
    only_explore = behavior_yaml(
        "explore-only",
        default_level="warning",
        triggers=contains("touch-me"),
        extra="applies_to:\n  agents: [Explore]\n",
    )
    only_root = behavior_yaml(
        "root-only",
        default_level="nudge",
        triggers=contains("touch-me"),
        extra="applies_to:\n  agents: [claude-code]\n",
    )
    project = Project(tmp_path, {"explore-only": only_explore, "root-only": only_root})
    assert shown(project.run(project.bash("echo touch-me", **EXPLORE))[0]).startswith(
        "[explore-only]"
    )
    assert project.run(project.bash("echo touch-me", **REVIEW)) == (None, "")
    assert shown(project.run(project.bash("echo touch-me"))[0]).startswith("[root-only]")
    # the main thread of a `claude --agent Explore` session: the type without an agent_id
    main = project.bash("echo touch-me", agent_type="Explore")
    assert shown(project.run(main)[0]).startswith("[explore-only]")
    fired = [(r["behavior_id"], r.get("agent_id", ""), r.get("agent")) for r in project.audit()]
    assert fired == [
        ("explore-only", "a-explore-1", "Explore"),
        ("root-only", "", None),
        ("explore-only", "", "Explore"),
    ]
