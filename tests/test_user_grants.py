"""A user's override where the harness cannot ask (Codex, Cursor) lasts as long as a grant
(``FORGE_GRANT_SECONDS``), not the retry window (issue 25, item 9's last point).

Claude Code asks the user at once; Codex cannot ask, and Cursor only for shell commands, so the
user approves with ``forge-policy override … --call ID`` from another terminal and the agent
retries. Before, that retry passed only within ``FORGE_OVERRIDE_WINDOW_SECONDS`` (60) of the
block: after it, the retry was counted as a new violation, which for a behavior that escalates
reached hard_block and refused the call the user had approved.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from helpers import Clock, behavior_yaml, write_catalog
from hookrun import SCRIPT, Project

import forge_policy as fp
from forge_policy.config.env import Config

#: Every Bash call asks the user; the second violation of the session is a hard block.
ASKER = behavior_yaml(
    "asker",
    default_level="soft_block",
    escalation="    escalation:\n      - {after: 2, level: hard_block}\n    override: user\n",
)


def bash(harness: str, command: str = "make release") -> fp.Event:
    return fp.Event(
        "PreToolUse", "s1", tool_name="Bash", tool_input={"command": command}, harness=harness
    )


def evaluator(tmp_path: Path, clock: Clock) -> fp.Evaluator:
    write_catalog(tmp_path / ".forge" / "behaviors", {"asker": ASKER})
    config = Config(root=str(tmp_path / ".forge"), store="file", audit="file")
    return config.build_evaluator(clock=clock)


@pytest.mark.parametrize("harness", ["codex", "cursor", "claude-code"])
@pytest.mark.parametrize("wait", [5, 61, 300, 600])
def test_a_users_bound_grant_lasts_the_grant_seconds(
    tmp_path: Path, harness: str, wait: float
) -> None:
    clock = Clock()
    ev = evaluator(tmp_path, clock)
    first = ev.evaluate(bash(harness))
    assert first.outcome == "soft_block" and first.blocking is not None
    clock.advance(wait - 1)  # the user reads the refusal, opens a terminal
    ev.override("s1", "asker", reason="release approved", call=first.blocking.call_id)
    clock.advance(1)
    retry = ev.evaluate(bash(harness))
    assert retry.outcome == "allow", (wait, retry.outcome)
    assert [(o["mechanism"], o["reason"]) for o in retry.overrides] == [
        ("explicit", "release approved")
    ]
    assert ev.status("s1").behaviors["asker"].counter == 1  # an override is no violation
    assert ev.audit.verify().ok


def test_past_the_grant_or_without_one_the_retry_is_refused(tmp_path: Path) -> None:
    clock = Clock()
    ev = evaluator(tmp_path, clock)
    first = ev.evaluate(bash("codex"))
    assert first.blocking is not None
    ev.override("s1", "asker", reason="late", call=first.blocking.call_id)
    clock.advance(601)  # past FORGE_GRANT_SECONDS (600)
    assert ev.evaluate(bash("codex")).outcome == "hard_block"
    other = tmp_path / "other"
    other.mkdir()
    ev = evaluator(other, clock)
    ev.evaluate(bash("codex"))
    clock.advance(5)  # within the window, no grant: a user block is never passed by a retry
    assert ev.evaluate(bash("codex")).outcome == "hard_block"


def test_an_agent_override_still_lasts_only_the_window(tmp_path: Path) -> None:
    """An unbound grant of an ``override: agent`` behavior waits for the next blocked call: the
    pending block past its window is not passed by retry because a grant exists."""
    gate = behavior_yaml("gate", default_level="soft_block")
    write_catalog(tmp_path / ".forge" / "behaviors", {"gate": gate})
    clock = Clock()
    ev = Config(root=str(tmp_path / ".forge"), store="file", audit="file").build_evaluator(
        clock=clock
    )
    ev.evaluate(bash("codex"))
    ev.override("s1", "gate", reason="next one")
    clock.advance(61)
    retry = ev.evaluate(bash("codex"))
    assert [(o["mechanism"], o["reason"]) for o in retry.overrides] == [("explicit", "next one")]
    clock.advance(61)
    assert ev.evaluate(bash("codex")).blocked  # the retry window is over: a new block


def test_through_the_codex_hook_and_the_cli_after_the_window(tmp_path: Path) -> None:
    """The real ``forge-policy hook --harness codex`` process and ``forge-policy override``,
    with a 1 s window standing in for 60 s."""
    project = Project(tmp_path, catalog={"asker": ASKER})
    env = {**project.env, "FORGE_OVERRIDE_WINDOW_SECONDS": "1", "FORGE_WORKER": "off"}
    payload = json.dumps(
        {
            "session_id": project.session,
            "hook_event_name": "PreToolUse",
            "tool_name": "Bash",
            "tool_input": {"command": "make release"},
            "cwd": str(project.dir),
            "tool_use_id": "t1",
        }
    )

    def hook() -> dict[str, object]:
        out = subprocess.run(
            [str(SCRIPT), "hook", "--harness", "codex"],
            input=payload,
            capture_output=True,
            text=True,
            env=env,
            cwd=project.dir,
            check=True,
        ).stdout
        return json.loads(out) if out.strip() else {}

    first = hook()
    reason = first["hookSpecificOutput"]["permissionDecisionReason"]  # type: ignore[index]
    assert "OpenAI Codex CLI cannot ask" in reason and "--call " in reason
    call = reason.split("--call ", 1)[1].split()[0]
    import time

    time.sleep(1.5)  # past the window
    granted = subprocess.run(
        [
            "script",
            "-qec",
            f"{SCRIPT} override asker --session {project.session} --call {call} --reason approved",
            "/dev/null",
        ],
        capture_output=True,
        text=True,
        env=env,
        cwd=project.dir,
    )
    assert "override granted: only call " in granted.stdout, granted
    second = hook()
    assert second.get("hookSpecificOutput", {}).get("permissionDecision") != "deny", second  # type: ignore[union-attr]
    assert "[asker] Let through by an override (explicit)" in json.dumps(second)
