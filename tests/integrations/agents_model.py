"""A scripted ``agents.models.interface.Model`` for the OpenAI Agents SDK tests: each turn is the
tool calls the "model" makes (or its final text), and it keeps every tool output the SDK sends
back, so a test reads exactly what the model was shown. No network."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable
from typing import Any

import pytest

pytest.importorskip("agents")  # also under --doctest-modules, which imports every module

from agents import Agent, FunctionTool, ModelResponse, RunConfig, Usage, function_tool
from agents.models.interface import Model
from agents.testing import assistant_message, function_call

#: One turn: the calls ``(tool, arguments)`` made together, or the final answer.
Turn = list[tuple[str, dict[str, Any]]] | str

#: Tracing off: nothing is exported (there is no API key, and no network).
QUIET = RunConfig(tracing_disabled=True)


class TurnModel(Model):
    """Plays ``turns`` in order; call ids are ``call_1``, ``call_2`` … across its life."""

    def __init__(self, turns: Iterable[Turn] = ()) -> None:
        self.turns: list[Turn] = list(turns)
        self.outputs: dict[str, Any] = {}  # call id -> the tool output the model was shown
        self.calls = 0

    def play(self, *turns: Turn) -> TurnModel:
        self.turns.extend(turns)
        return self

    async def get_response(
        self,
        system_instructions: str | None,
        input: str | list[Any],
        model_settings: Any,
        tools: list[Any],
        output_schema: Any,
        handoffs: list[Any],
        tracing: Any,
        *,
        previous_response_id: str | None,
        conversation_id: str | None,
        prompt: Any,
    ) -> ModelResponse:
        for item in input if isinstance(input, list) else []:
            if isinstance(item, dict) and item.get("type") == "function_call_output":
                self.outputs[item["call_id"]] = item["output"]
        turn = self.turns.pop(0) if self.turns else "done"
        if isinstance(turn, str):
            return ModelResponse(output=[assistant_message(turn)], usage=Usage(), response_id=None)
        items = []
        for name, arguments in turn:
            self.calls += 1
            items.append(function_call(name, arguments, call_id=f"call_{self.calls}"))
        return ModelResponse(output=items, usage=Usage(), response_id=None)

    def stream_response(self, *args: Any, **kwargs: Any) -> AsyncIterator[Any]:
        raise NotImplementedError("the tests run Runner.run, not run_streamed")


def shell_tool(ran: list[str]) -> FunctionTool:
    """``run_shell(cmd)``: records the command instead of running it."""

    @function_tool
    def run_shell(cmd: str) -> str:
        """Run a shell command in the repository."""
        ran.append(cmd)
        return f"ran: {cmd}"

    return run_shell


def read_tool() -> FunctionTool:
    """``read_file(path)``: the file's text."""

    @function_tool
    def read_file(path: str) -> str:
        """Read a file."""
        with open(path, encoding="utf-8") as handle:
            return handle.read()

    return read_file


def agent(model: TurnModel, *tools: FunctionTool) -> Agent[Any]:
    return Agent(name="coder", instructions="Fix the bug.", model=model, tools=list(tools))
