"""Govern an OpenAI Agents SDK agent with forge_policy (extra: ``forge-policy[openai-agents]``).

A scripted ``Model`` stands in for the LLM (no network, no API key): it makes one tool call a
turn and prints what the SDK hands back. Each function tool goes through the guard's input
guardrail, approval check and output guardrail, exactly as in a real run: an allowed call runs, a
soft block comes back to the model as the engine's message, the identical retry passes as an
audited override, a read of ``.env`` stops the run for the user's approval (approved here), and a
force push stops the run for good. Run:

    python examples/openai_agents_guardrail.py
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from agents import (
    Agent,
    ModelResponse,
    RunConfig,
    Runner,
    ToolInputGuardrailTripwireTriggered,
    Usage,
    function_tool,
)
from agents.models.interface import Model
from agents.testing import assistant_message, function_call

import forge_policy as fp
from forge_policy.integrations.openai_agents import guard
from forge_policy.testing import FakeClock

SESSION = "agents-demo-session"

# what the scripted model asks for: (seconds since the previous call, tool, arguments)
SCRIPT: list[tuple[float, str, dict[str, Any]]] = [
    (0, "grep", {"pattern": "def parse_config", "path": "/repo/src/"}),
    (4, "read_file", {"path": "/repo/src/config.py"}),
    (3, "write_file", {"path": "/repo/lib/util.py", "content": "def helper(): ..."}),
    (5, "write_file", {"path": "/repo/lib/extra.py", "content": "X = 1"}),
    (5, "write_file", {"path": "/repo/lib/more.py", "content": "Y = 2"}),
    (5, "write_file", {"path": "/repo/lib/again.py", "content": "Z = 3"}),
    (5, "write_file", {"path": "/repo/lib/last.py", "content": "W = 4"}),
    (20, "write_file", {"path": "/repo/lib/last.py", "content": "W = 4"}),  # identical retry
    (5, "read_file", {"path": "/repo/.env"}),
    (7, "run_shell", {"cmd": "git push --force origin main"}),
]

# which function tool is which catalog tool, and how its arguments are called there
TOOLS = {
    "grep": "Grep",
    "read_file": ("Read", {"path": "file_path"}),
    "write_file": ("Write", {"path": "file_path"}),
    "run_shell": ("Bash", {"cmd": "command"}),
}


class ScriptedModel(Model):
    """Plays SCRIPT, one call a turn, and prints the output the SDK returns for each call."""

    def __init__(self, clock: FakeClock) -> None:
        self.clock, self.step, self.shown = clock, 0, 0

    async def get_response(
        self,
        system_instructions: str | None,
        input: str | list[Any],
        *args: Any,
        **kwargs: Any,
    ) -> ModelResponse:
        items = input if isinstance(input, list) else []
        outputs = [
            i for i in items if isinstance(i, dict) and i.get("type") == "function_call_output"
        ]
        for item in outputs[self.shown :]:  # the output, and the first line of any advice
            for part in str(item["output"]).split("\n\n")[:2]:
                print(f"    | {part.splitlines()[0]}")
        self.shown = len(outputs)
        if self.step == len(SCRIPT):
            return ModelResponse(
                output=[assistant_message("done")], usage=Usage(), response_id=None
            )
        delay, name, arguments = SCRIPT[self.step]
        self.step += 1
        self.clock.advance(delay)
        print(f"{self.step:2d}. {name}({json.dumps(arguments)[:60]})")
        call = function_call(name, arguments, call_id=f"call_{self.step:02d}")
        return ModelResponse(output=[call], usage=Usage(), response_id=None)

    def stream_response(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError


@function_tool
def grep(pattern: str, path: str) -> str:
    """Search files for a pattern."""
    return f"{path}config.py:12: {pattern}(text):"


@function_tool
def read_file(path: str) -> str:
    """Read a file."""
    return f"(the text of {path})"


@function_tool
def write_file(path: str, content: str) -> str:
    """Write a file."""
    return f"wrote {len(content)} bytes to {path}"


@function_tool
def run_shell(cmd: str) -> str:
    """Run a shell command."""
    return f"ran {cmd}"


async def main() -> None:
    clock = FakeClock()  # seconds advance by hand, so the run reads the same every time
    audit = fp.MemoryAuditSink()
    evaluator = fp.Evaluator(fp.builtin_catalog(), clock=clock, audit=audit)
    forge = guard(evaluator, session_id=SESSION, tools=TOOLS)
    tools = [forge.protect(t) for t in (grep, read_file, write_file, run_shell)]
    agent = Agent(
        name="coder", instructions="Fix the bug.", model=ScriptedModel(clock), tools=tools
    )
    config = RunConfig(tracing_disabled=True)  # nothing leaves the machine
    print(f"OpenAI Agents SDK demo: {len(SCRIPT)} tool calls in session {SESSION!r}\n")
    run: Any = "Fix the config parser."
    try:
        while True:
            result = await Runner.run(agent, run, run_config=config)
            if not result.interruptions:
                break
            run = result.to_state()
            for item in result.interruptions:  # the SDK's human approval: a person says yes
                print(f"    ? ASK THE USER: {(forge.reason(item) or '').splitlines()[0]}")
                print("    ? the user approves")
                run.approve(item)
    except ToolInputGuardrailTripwireTriggered as stop:
        messages = stop.output.output_info["messages"]
        print(f"    | STOPPED THE RUN: {messages[0].splitlines()[0]}")
    overrides = [r["mechanism"] for r in audit.records() if r["kind"] == "override"]
    print(f"\nAudited overrides: {overrides}")


if __name__ == "__main__":
    asyncio.run(main())
