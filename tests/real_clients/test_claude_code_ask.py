"""An ``ask`` reaches a user: Claude Code driven through the claude-agent-sdk (its
``can_use_tool`` callback is the user answering the permission prompt), against the same
scripted model. The user's answer decides; an approval is recorded as the user's override."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from forge_policy.testing.models import Turn
from tests.real_clients.policy import ASK, ASK_MARK

sdk = pytest.importorskip("claude_agent_sdk", reason="claude-agent-sdk not installed")


def _run_with_user(project: Any, turns: list[Turn], approve: bool) -> list[tuple[str, Any]]:
    """Run one session whose user answers every permission prompt with ``approve``; what the
    user was asked about."""
    asked: list[tuple[str, Any]] = []

    async def user(name: str, tool_input: dict[str, Any], context: Any) -> Any:
        asked.append((name, tool_input))
        if approve:
            return sdk.PermissionResultAllow()
        return sdk.PermissionResultDeny(message="the user said no")

    async def main() -> None:
        project.model.script(turns)
        options = sdk.ClaudeAgentOptions(
            cwd=str(project.project),
            cli_path=project.program,
            env=project.base_environ() | project.driver.environ(project),
            setting_sources=["user", "project"],
            can_use_tool=user,
        )
        async with sdk.ClaudeSDKClient(options) as client:
            await client.query("Do the task.")
            async for _ in client.receive_response():
                pass

    asyncio.run(main())
    return asked


@pytest.fixture
def claude(forge_real_client: Any) -> Any:
    project = forge_real_client("claude-code", init_args=("--no-worker",))
    project.add_behavior(ASK)
    return project


@pytest.mark.parametrize("approve", [True, False], ids=["approved", "refused"])
def test_ask_goes_to_the_user_and_the_answer_decides(claude: Any, approve: bool) -> None:
    command = f"echo {ASK_MARK} > asked.txt"
    asked = _run_with_user(claude, [Turn.call("Bash", command=command), Turn.say("done")], approve)
    assert asked == [("Bash", {"command": command})]
    assert (claude.project / "asked.txt").exists() is approve
    overrides = [r for r in claude.audit_records() if r.get("kind") == "override"]
    if approve:
        assert [(o["behavior_id"], o["mechanism"]) for o in overrides] == [
            ("tripwire-ask", "user")
        ], claude.audit_records()
    else:
        assert overrides == []
