"""A stand-in for the Claude Code CLI on the SDK's control protocol: the SDK client connects
to it as to the real process, and a test sends the control requests the CLI would send
(``hook_callback``, ``can_use_tool``) and reads the SDK's answers off the wire."""

from __future__ import annotations

import itertools
import json
from collections.abc import AsyncIterator
from typing import Any

import pytest

pytest.importorskip("claude_agent_sdk")  # collected for doctests without the extra too

import anyio
from claude_agent_sdk import ClaudeAgentOptions, ClaudeSDKClient
from claude_agent_sdk._internal.transport import Transport


class FakeCLI(Transport):
    """Answers ``initialize``; records the hook registration and every control response."""

    def __init__(self) -> None:
        self._send, self._receive = anyio.create_memory_object_stream[dict[str, Any]](100)
        self.hooks: dict[str, Any] = {}
        self._answers: dict[str, dict[str, Any]] = {}
        self._arrived: dict[str, anyio.Event] = {}
        self._ids = itertools.count()

    async def connect(self) -> None:
        pass

    async def write(self, data: str) -> None:
        message = json.loads(data)
        if message.get("type") == "control_request":
            request = message["request"]
            if request.get("subtype") == "initialize":
                self.hooks = request.get("hooks") or {}
            await self._send.send(
                {
                    "type": "control_response",
                    "response": {
                        "subtype": "success",
                        "request_id": message["request_id"],
                        "response": {},
                    },
                }
            )
        elif message.get("type") == "control_response":
            response = message["response"]
            self._answers[response["request_id"]] = response
            self._arrived.setdefault(response["request_id"], anyio.Event()).set()

    async def read_messages(self) -> AsyncIterator[dict[str, Any]]:  # type: ignore[override]
        async for message in self._receive:
            yield message

    async def close(self) -> None:
        self._send.close()
        self._receive.close()

    def is_ready(self) -> bool:
        return True

    async def end_input(self) -> None:
        pass

    async def request(self, request: dict[str, Any]) -> dict[str, Any]:
        """Send one control request as the CLI does; the SDK's response (``subtype``
        ``success`` with ``response``, or ``error``)."""
        request_id = f"req_{next(self._ids)}"
        arrived = self._arrived.setdefault(request_id, anyio.Event())
        await self._send.send(
            {"type": "control_request", "request_id": request_id, "request": request}
        )
        with anyio.fail_after(10):
            await arrived.wait()
        return self._answers[request_id]

    async def hook(self, input_data: dict[str, Any]) -> dict[str, Any]:
        """Call the callback registered for the input's event; its answer as the CLI reads it."""
        name = input_data["hook_event_name"]
        callback_id = self.hooks[name][0]["hookCallbackIds"][0]
        answer = await self.request(
            {
                "subtype": "hook_callback",
                "callback_id": callback_id,
                "input": input_data,
                "tool_use_id": input_data.get("tool_use_id"),
            }
        )
        assert answer["subtype"] == "success", answer
        response: dict[str, Any] = answer["response"]
        return response

    async def can_use_tool(
        self, tool_name: str, tool_input: dict[str, Any], tool_use_id: str
    ) -> dict[str, Any]:
        answer = await self.request(
            {
                "subtype": "can_use_tool",
                "tool_name": tool_name,
                "input": tool_input,
                "tool_use_id": tool_use_id,
                "permission_suggestions": None,
            }
        )
        assert answer["subtype"] == "success", answer
        response: dict[str, Any] = answer["response"]
        return response


def client(options: ClaudeAgentOptions) -> tuple[ClaudeSDKClient, FakeCLI]:
    cli = FakeCLI()
    return ClaudeSDKClient(options, transport=cli), cli
