"""The floor through the claude-agent-sdk end to end: its bundled Claude Code CLI, driven by the
scripted model, runs a Bash call the adapter's PreToolUse callback allowed with ``updatedInput``
— under bubblewrap, so the script it runs cannot write ``.forge/`` while the rest of the call
works; with ``floor: off`` the same call runs as it was asked."""

from __future__ import annotations

import asyncio
import shutil
from typing import Any

import pytest

import forge_policy as fp
from forge_policy.integrations import claude_agent_sdk as adapter
from forge_policy.testing.models import Turn
from tests.helpers import behavior_yaml, write_catalog

sdk = pytest.importorskip("claude_agent_sdk", reason="claude-agent-sdk not installed")

#: The engine allows it (no rule sees into ``w.sh``, the built-in catalog's neither);
#: ``w.sh`` writes ``.forge/``.
COMMAND = "echo built > build.txt; sh ./w.sh; echo finished"


def run_agent(project: Any, **floor: Any) -> None:
    """One SDK session in the project: the model asks for :data:`COMMAND`, then stops. The
    catalog is one rule that does not match it: nothing at stake on a fact's time budget."""
    folder = write_catalog(project.folder / "catalog", {"test-rule": behavior_yaml()})
    evaluator = fp.Evaluator(fp.load_catalog(folder), audit=fp.MemoryAuditSink())
    project.model.script([Turn.call("Bash", command=COMMAND), Turn.say("done")])

    async def main() -> None:
        options = sdk.ClaudeAgentOptions(
            cwd=str(project.project),
            cli_path=project.program,
            env=project.base_environ() | project.driver.environ(project),
            setting_sources=["user", "project"],
            hooks=adapter.hooks(evaluator, **floor),
        )
        async with sdk.ClaudeSDKClient(options) as client:
            await client.query("Do the task.")
            async for _ in client.receive_response():
                pass

    asyncio.run(main())


@pytest.fixture
def project(forge_real_client: Any) -> Any:
    if shutil.which("bwrap") is None:  # .ci/run installs it: in CI this skip fails the run
        pytest.skip("bwrap not found on PATH")
    made = forge_real_client("claude-code", init=False)  # the SDK's callbacks, no hook command
    (made.project / ".forge").mkdir()
    made.write("w.sh", "echo owned > .forge/x.txt\n")
    return made


def test_the_cli_runs_the_rewritten_command_under_the_floor(project: Any) -> None:
    run_agent(project)
    assert (project.project / "build.txt").read_text() == "built\n"
    assert not (project.project / ".forge" / "x.txt").exists()
    [result] = [
        block
        for request in project.model.requests
        for message in request.body.get("messages", [])
        if isinstance(message.get("content"), list)
        for block in message["content"]
        if block.get("type") == "tool_result"
    ][:1]
    assert "Read-only file system" in str(result["content"]) and "finished" in str(result)


def test_with_the_floor_off_the_command_runs_as_asked(project: Any) -> None:
    run_agent(project, floor="off")
    assert (project.project / ".forge" / "x.txt").read_text() == "owned\n"
