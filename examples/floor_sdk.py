"""An SDK agent's shell tool under forge_policy's floor (SPEC §13), with each adapter.

In a throwaway project, the "agent" asks to run ``echo built > build.txt; sh ./w.sh``. The engine
allows it: no rule can see that ``w.sh`` writes ``.forge/``, forge_policy's governance folder.
The adapter rewrites the command to run under bubblewrap, so the build works and the write to
``.forge/`` fails with "Read-only file system". The engine decides (and the audit log records)
the original command; only the command that runs is rewritten.

- claude-agent-sdk: the PreToolUse callback, called as the SDK calls it, answers with
  ``updatedInput``; the script runs the rewritten command as Claude Code's Bash tool would.
- LangChain: a ``create_agent`` graph with LangChain's own ``ShellToolMiddleware`` (a real bash
  session) behind ``ForgePolicyMiddleware``; a scripted fake chat model asks for the call.
- OpenAI Agents: ``Runner.run`` with a shell function tool protected by a ``Guard``; a scripted
  model asks for the call.

The project's ``floor:`` in ``.forge/config.yaml`` chooses (``harness``, the default, means
forge_policy's own for an SDK; ``off`` turns it off); ``floor="own"|"off"`` on the adapter
overrides it. Needs bubblewrap (Debian: ``apt-get install bubblewrap``) and the extras
``claude-agent-sdk``, ``langchain`` and ``openai-agents``. Run:

    python examples/floor_sdk.py
"""

from __future__ import annotations

import asyncio
import subprocess
import tempfile
from pathlib import Path
from typing import Any

import forge_policy as fp

COMMAND = "echo built > build.txt; sh ./w.sh; echo finished"


def fresh_project(base: Path, name: str) -> Path:
    """A project with a ``.forge/`` and a script that writes into it."""
    project = base / name
    (project / ".forge").mkdir(parents=True)
    (project / "w.sh").write_text("echo owned > .forge/x.txt\n", encoding="utf-8")
    return project


def report(project: Path, output: str) -> None:
    print("    | " + "\n    | ".join(output.strip().splitlines()))
    built, owned = (project / "build.txt").is_file(), (project / ".forge/x.txt").exists()
    print(f"    build.txt written: {built}; .forge/x.txt written: {owned}")


def bash(command: str, project: Path) -> str:
    done = subprocess.run(["bash", "-c", command], cwd=project, capture_output=True, text=True)
    return done.stdout + done.stderr


def evaluator() -> fp.Evaluator:
    return fp.Evaluator(fp.builtin_catalog(), audit=fp.MemoryAuditSink())


def claude_agent_sdk(project: Path) -> None:
    from forge_policy.integrations.claude_agent_sdk import hooks

    callback = hooks(evaluator())["PreToolUse"][0].hooks[0]
    payload = {
        "session_id": "sdk-demo",
        "transcript_path": "",
        "cwd": str(project),
        "hook_event_name": "PreToolUse",
        "tool_name": "Bash",
        "tool_input": {"command": COMMAND},
        "tool_use_id": "toolu_1",
    }
    answer: Any = asyncio.run(callback(payload, "toolu_1", {"signal": None}))
    rewritten = answer["hookSpecificOutput"]["updatedInput"]["command"]
    print(f"  updatedInput.command: {rewritten[:60]}… -- /bin/bash -c '{COMMAND}'")
    report(project, bash(rewritten, project))


def langchain(project: Path) -> None:
    from collections.abc import Sequence

    from langchain.agents import create_agent
    from langchain.agents.middleware import ShellToolMiddleware
    from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
    from langchain_core.messages import AIMessage, ToolMessage
    from langgraph.checkpoint.memory import InMemorySaver

    from forge_policy.integrations.langchain import ForgePolicyMiddleware

    class ScriptedModel(GenericFakeChatModel):
        def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> Any:
            return self

    call = {"name": "shell", "args": {"command": COMMAND}, "id": "call_1"}
    model = ScriptedModel(messages=iter([AIMessage("", tool_calls=[call]), AIMessage("done")]))
    shell = ShellToolMiddleware(workspace_root=project)
    policy = ForgePolicyMiddleware(evaluator(), tools={"shell": "Bash"}, project=str(project))
    agent = create_agent(model, [], middleware=[policy, shell], checkpointer=InMemorySaver())
    result = agent.invoke({"messages": [("user", "build")]}, {"configurable": {"thread_id": "t"}})
    [message] = [m for m in result["messages"] if isinstance(m, ToolMessage)]
    report(project, str(message.content))


def openai_agents(project: Path) -> None:
    from agents import Agent, ModelResponse, RunConfig, Runner, Usage, function_tool
    from agents.models.interface import Model
    from agents.testing import assistant_message, function_call

    from forge_policy.integrations.openai_agents import guard

    class ScriptedModel(Model):
        def __init__(self) -> None:
            self.turn = 0

        async def get_response(self, *args: Any, **kwargs: Any) -> ModelResponse:
            self.turn += 1
            if self.turn > 1:
                return ModelResponse(
                    output=[assistant_message("done")], usage=Usage(), response_id=None
                )
            call = function_call("run_shell", {"cmd": COMMAND}, call_id="call_1")
            return ModelResponse(output=[call], usage=Usage(), response_id=None)

        def stream_response(self, *args: Any, **kwargs: Any) -> Any:
            raise NotImplementedError

    outputs: list[str] = []

    @function_tool
    def run_shell(cmd: str) -> str:
        """Run a shell command in the project."""
        outputs.append(bash(cmd, project))
        return outputs[-1]

    policy = guard(evaluator(), tools={"run_shell": ("Bash", {"cmd": "command"})}, cwd=str(project))
    agent = Agent(name="coder", model=ScriptedModel(), tools=[policy.protect(run_shell)])
    asyncio.run(Runner.run(agent, "build", run_config=RunConfig(tracing_disabled=True)))
    report(project, "".join(outputs))


def main() -> None:
    with tempfile.TemporaryDirectory() as folder:
        for name, run in [
            ("claude-agent-sdk", claude_agent_sdk),
            ("langchain", langchain),
            ("openai-agents", openai_agents),
        ]:
            print(f"{name}: Bash({COMMAND})")
            run(fresh_project(Path(folder), name))


if __name__ == "__main__":
    main()
