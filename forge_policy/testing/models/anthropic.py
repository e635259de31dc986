"""A scripted Anthropic Messages API (``POST /v1/messages``, streaming SSE or one JSON body),
what Claude Code talks to when ``ANTHROPIC_BASE_URL`` names it.

The stream follows the documented event order — ``message_start``, per content block
``content_block_start`` / ``content_block_delta`` (``text_delta`` or ``input_json_delta``) /
``content_block_stop``, then ``message_delta`` (``stop_reason``) and ``message_stop``
(https://docs.anthropic.com/en/api/messages-streaming). A request with tools is the client's main
loop and takes the next turn; one without (a title, a command-prefix probe) gets a short text.

>>> from forge_policy.testing.models import Turn
>>> with AnthropicModel([Turn.call("Bash", command="ls")]) as model:
...     model.url.startswith("http://127.0.0.1:")
True
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from typing import Any

from forge_policy.testing.models._server import (
    Request,
    ScriptedModel,
    ToolCall,
    ToolResult,
    Turn,
    json_reply,
    sse,
)

#: What a side request (no tools offered) is answered.
SIDE_TEXT = "none"


class AnthropicModel(ScriptedModel):
    """The Messages API from a script of :class:`~forge_policy.testing.models.Turn`."""

    api = "anthropic-messages"

    def respond(self, request: Request) -> tuple[int, Mapping[str, str], Iterator[bytes]]:
        path = request.path.split("?", 1)[0]
        body = request.body if isinstance(request.body, dict) else {}
        if request.method != "POST" or not path.endswith("/messages"):
            if path.endswith("/count_tokens"):
                return json_reply({"input_tokens": 1})
            return json_reply({})
        turn = self.next_turn() if body.get("tools") else Turn.say(SIDE_TEXT)
        content = _content(turn)
        stop = "tool_use" if turn.tool_calls else "end_turn"
        model = str(body.get("model", "scripted"))
        if body.get("stream"):
            return sse(_events(content, stop, model))
        return json_reply(_message(content, stop, model))

    def wire_id(self, call: ToolCall) -> str:
        return f"toolu_{call.id}"

    def tool_results(self) -> dict[str, ToolResult]:
        """Every ``tool_result`` block the client sent back, by ``tool_use_id``: what the model
        saw of each call."""
        found: dict[str, ToolResult] = {}
        for request in self.requests:
            body = request.body if isinstance(request.body, dict) else {}
            for message in body.get("messages") or ():
                content = message.get("content")
                if message.get("role") != "user" or not isinstance(content, list):
                    continue
                for block in content:
                    if isinstance(block, dict) and block.get("type") == "tool_result":
                        found[str(block.get("tool_use_id"))] = ToolResult(
                            _text_of(block.get("content")), bool(block.get("is_error"))
                        )
        return found


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    return "" if content is None else str(content)


def _content(turn: Turn) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = []
    if turn.text:
        blocks.append({"type": "text", "text": turn.text})
    for call in turn.tool_calls:
        blocks.append(
            {
                "type": "tool_use",
                "id": f"toolu_{call.id}",
                "name": call.name,
                "input": dict(call.input),
            }
        )
    return blocks


def _usage() -> dict[str, int]:
    return {
        "input_tokens": 1,
        "output_tokens": 1,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 0,
    }


def _message(content: list[dict[str, Any]], stop: str, model: str) -> dict[str, Any]:
    return {
        "id": "msg_scripted",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": content,
        "stop_reason": stop,
        "stop_sequence": None,
        "usage": _usage(),
    }


def _events(content: list[dict[str, Any]], stop: str, model: str) -> list[tuple[str, Any]]:
    start = _message([], stop, model) | {"stop_reason": None}
    events: list[tuple[str, Any]] = [("message_start", {"type": "message_start", "message": start})]
    for index, block in enumerate(content):
        if block["type"] == "text":
            opening: dict[str, Any] = {"type": "text", "text": ""}
            delta = {"type": "text_delta", "text": block["text"]}
        else:
            opening = {"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}
            delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
        events += [
            (
                "content_block_start",
                {"type": "content_block_start", "index": index, "content_block": opening},
            ),
            (
                "content_block_delta",
                {"type": "content_block_delta", "index": index, "delta": delta},
            ),
            ("content_block_stop", {"type": "content_block_stop", "index": index}),
        ]
    events += [
        (
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": stop, "stop_sequence": None},
                "usage": {"output_tokens": 1},
            },
        ),
        ("message_stop", {"type": "message_stop"}),
    ]
    return events
