"""Sessions through the real Claude Code: escalation across the tool calls of a session and
across sessions, a subagent's calls reaching the hook, and the transcripts Claude Code writes
replayed to the decisions the hook made live."""

from __future__ import annotations

import json
import subprocess
from typing import Any

import pytest

from forge_policy.testing.models import Turn
from forge_policy.testing.real_client import forge_policy_program


@pytest.fixture
def claude(forge_real_client: Any) -> Any:
    return forge_real_client("claude-code")


def _push(refspec: str = "") -> Turn:
    return Turn.call("Bash", command=f"git push {refspec}".strip())


def test_escalation_across_calls_and_sessions(claude: Any) -> None:
    """verify-before-done: a push without a test run is a nudge, then a warning, then a soft
    block — counted per session: resuming the session keeps the count, a new session starts
    over."""
    first = claude.run([_push(), _push("origin"), _push("origin main"), Turn.say("done")])
    assert [c.id for c in first.denied] == [first.requested[2].id], first.describe()
    assert first.model_saw("Verify Before Push"), first.describe()  # the nudge reached it
    assert "[verify-before-done]" in first.result(2).text

    resumed = claude.run(
        [_push("origin HEAD"), Turn.say("done")], args=("--resume", first.session_id)
    )
    assert resumed.session_id == first.session_id
    assert resumed.denied, resumed.describe()

    fresh = claude.run([_push("origin HEAD"), Turn.say("done")])
    assert fresh.session_id != first.session_id
    assert fresh.ran and not fresh.denied, fresh.describe()


def test_a_subagents_calls_reach_the_hook(claude: Any) -> None:
    run = claude.run(
        [
            Turn.call(
                "Agent",
                description="push",
                prompt="Push the branch.",
                subagent_type="general-purpose",
            ),
            Turn.call("Bash", command="git push --force origin main"),  # the subagent's turn
            Turn.say("could not push"),  # the subagent's answer
            Turn.say("done"),
        ]
    )
    subagent_call = run.requested[1]
    assert run.results.get(subagent_call.id) is not None, run.describe()
    assert "[no-destructive-git]" in run.result(1).text
    blocks = [r for r in claude.audit_records() if r.get("kind") == "block"]
    assert [b["behavior_id"] for b in blocks] == ["no-destructive-git"], blocks


def _replayed_blocks(transcripts: list[str], project: Any) -> list[tuple[str, str, str]]:
    done = subprocess.run(
        [forge_policy_program(), "replay", "--json", *transcripts],
        cwd=project.project,
        env=project.base_environ(),
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    report = json.loads(done.stdout)
    return sorted(
        (d["session_id"], d["tool"], d["decision"]["blocking"])
        for d in report["decisions"]
        if d["decision"]["outcome"] in ("soft_block", "hard_block")
    )


def test_replay_of_real_transcripts_matches_the_live_decisions(claude: Any) -> None:
    root = claude.project
    runs = [
        claude.run(
            [
                Turn.call("Bash", command="git push --force origin main"),
                Turn.call("Read", file_path=f"{root}/README.md"),
                Turn.say("done"),
            ]
        ),
        claude.run(
            [
                Turn.call("Write", file_path=f"{root}/.forge/x.yaml", content="x\n"),
                Turn.call("Bash", command="echo fine"),
                Turn.say("done"),
            ]
        ),
    ]
    transcripts = [str(run.transcript) for run in runs]
    assert all(run.transcript is not None and run.transcript.is_file() for run in runs)
    live = sorted(
        (r["session_id"], r["tool_name"], r["behavior_id"])
        for r in claude.audit_records()
        if r.get("kind") == "block"
    )
    assert len(live) == 2, live
    assert _replayed_blocks(transcripts, claude) == live
